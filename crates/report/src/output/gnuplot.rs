//! `plot.gp`, `timeline.gp` and their data files (the scripts:
//! `crate::gnuplot`).

use super::{Rendered, Renderer};

/// gnuplot scripts and data.
pub(crate) struct Gnuplot;

impl Renderer for Gnuplot {
    fn files(&self, r: &Rendered) -> anyhow::Result<Vec<(String, Vec<u8>)>> {
        Ok(crate::gnuplot::files(r.runs, r.series, r.title, r.x_max)
            .into_iter()
            .map(|(n, c)| (n, c.into_bytes()))
            .collect())
    }
}
