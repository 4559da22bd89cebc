//! Every report output format behind one trait (hyperfine's `Exporter`
//! idea, as `rtshield_results::ExportManager` does for result files): each
//! [`Format`] is a [`Renderer`] in its own file, rendering in memory from
//! the same [`Rendered`] inputs.

mod csv;
mod gnuplot;
mod html;
mod md;
mod png;
mod svg;

use crate::load::Run;
use crate::series::Series;
use crate::table::Table;
use crate::Format;

/// A timeline picture: its file name, its caption in `report.html`, and
/// the PNG.
pub(crate) struct TimelinePng {
    /// `timeline.png`, or `timeline-SLUG.png` with several runs.
    pub file: String,
    /// `TITLE — LABEL`.
    pub caption: String,
    /// The encoded picture.
    pub png: Vec<u8>,
}

/// What every output is rendered from, computed once.
pub(crate) struct Rendered<'a> {
    /// The inputs, as loaded.
    pub runs: &'a [Run],
    /// One curve per measuring thread.
    pub series: &'a [Series<'a>],
    /// The summary table.
    pub table: &'a Table,
    /// The report's title.
    pub title: &'a str,
    /// `--x-max`, µs.
    pub x_max: Option<f64>,
    /// The timeline pictures (when PNG or HTML is wanted).
    pub timelines: &'a [TimelinePng],
}

impl Rendered<'_> {
    /// The title of the tail plot.
    fn tail_title(&self) -> String {
        format!("{}: tail (1 − quantile)", self.title)
    }
}

/// One output format.
pub(crate) trait Renderer {
    /// The files of this format: (file name, bytes).
    fn files(&self, r: &Rendered) -> anyhow::Result<Vec<(String, Vec<u8>)>>;
}

/// The renderer of `f`.
pub(crate) fn renderer(f: Format) -> &'static dyn Renderer {
    match f {
        Format::Png => &png::Png,
        Format::Svg => &svg::Svg,
        Format::Html => &html::Html,
        Format::Md => &md::Md,
        Format::Csv => &csv::Csv,
        Format::Gnuplot => &gnuplot::Gnuplot,
    }
}
