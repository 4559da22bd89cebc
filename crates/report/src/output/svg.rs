//! `latency.svg` and `percentiles.svg`.

use super::{Rendered, Renderer};
use crate::plot;
use rtshield_text::markup::xml_chars;

/// SVG pictures.
pub(crate) struct Svg;

impl Renderer for Svg {
    fn files(&self, r: &Rendered) -> anyhow::Result<Vec<(String, Vec<u8>)>> {
        // plotters escapes `&`, `<` and `>` in titles and legends but not
        // the controls XML 1.0 forbids (a title or a campaign's load name
        // with ESC made an SVG no parser reads): the whole document goes
        // through the XML encoder's character rule.
        let xml = |svg: String| xml_chars(&svg).into_owned().into_bytes();
        Ok(vec![
            (
                "latency.svg".into(),
                xml(plot::latency_svg(r.series, r.title, r.x_max)?),
            ),
            (
                "percentiles.svg".into(),
                xml(plot::percentile_svg(r.series, &r.tail_title())?),
            ),
        ])
    }
}
