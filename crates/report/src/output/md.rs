//! `summary.md`: the table and the spikes.

use super::{Rendered, Renderer};

/// Markdown.
pub(crate) struct Md;

impl Renderer for Md {
    fn files(&self, r: &Rendered) -> anyhow::Result<Vec<(String, Vec<u8>)>> {
        let md = r.table.to_markdown(r.title) + &crate::spikes::markdown(r.runs);
        Ok(vec![("summary.md".into(), md.into_bytes())])
    }
}
