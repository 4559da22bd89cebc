//! `latency.png`, `percentiles.png` and the timeline pictures.

use super::{Rendered, Renderer};
use crate::plot;

/// PNG pictures.
pub(crate) struct Png;

impl Renderer for Png {
    fn files(&self, r: &Rendered) -> anyhow::Result<Vec<(String, Vec<u8>)>> {
        let mut out = vec![
            (
                "latency.png".into(),
                plot::latency_png(r.series, r.title, r.x_max)?,
            ),
            (
                "percentiles.png".into(),
                plot::percentile_png(r.series, &r.tail_title())?,
            ),
        ];
        out.extend(r.timelines.iter().map(|t| (t.file.clone(), t.png.clone())));
        Ok(out)
    }
}
