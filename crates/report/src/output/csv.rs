//! `summary.csv`: the table.

use super::{Rendered, Renderer};

/// CSV.
pub(crate) struct Csv;

impl Renderer for Csv {
    fn files(&self, r: &Rendered) -> anyhow::Result<Vec<(String, Vec<u8>)>> {
        Ok(vec![("summary.csv".into(), r.table.to_csv().into_bytes())])
    }
}
