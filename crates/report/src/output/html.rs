//! `report.html` (the page itself: `crate::html`).

use super::{Rendered, Renderer};
use crate::plot;

/// The self-contained HTML page.
pub(crate) struct Html;

impl Renderer for Html {
    fn files(&self, r: &Rendered) -> anyhow::Result<Vec<(String, Vec<u8>)>> {
        let pics: Vec<(String, Vec<u8>)> = r
            .timelines
            .iter()
            .map(|t| (t.caption.clone(), t.png.clone()))
            .collect();
        let tail = plot::percentile_png(r.series, &r.tail_title())?;
        let page = crate::html::render(&crate::html::Inputs {
            percentiles: &tail,
            title: r.title,
            runs: r.runs,
            series: r.series,
            table: r.table,
            timelines: &pics,
            x_max: r.x_max,
        });
        Ok(vec![("report.html".into(), page.into_bytes())])
    }
}
