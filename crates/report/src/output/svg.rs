//! `latency.svg` and `percentiles.svg`.

use super::{Rendered, Renderer};
use crate::plot;

/// SVG pictures.
pub(crate) struct Svg;

impl Renderer for Svg {
    fn files(&self, r: &Rendered) -> anyhow::Result<Vec<(String, Vec<u8>)>> {
        Ok(vec![
            (
                "latency.svg".into(),
                plot::latency_svg(r.series, r.title, r.x_max)?.into_bytes(),
            ),
            (
                "percentiles.svg".into(),
                plot::percentile_svg(r.series, &r.tail_title())?.into_bytes(),
            ),
        ])
    }
}
