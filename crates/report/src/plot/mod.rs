//! Static plots with plotters: the overlaid latency histograms (PNG and
//! SVG, OSADL look: linear µs axis, log counts) and the timeline (PNG).
//!
//! Text: plotters' `ab_glyph` renderer does no system font lookup, so
//! DejaVu Sans (Bitstream Vera licence, from Debian's fonts-dejavu-core)
//! is embedded and registered once. All text outside the axes lives in a
//! legend panel beside the plot, one line per entry, so labels never
//! overlap the curves or each other.

use crate::series::{fmt_us, Series};
use crate::timeline::{Phase, Timeline};
use anyhow::anyhow;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::sync::Once;

mod latency;
mod noise;
mod percentiles;
#[cfg(test)]
mod png_pixels_tests;
mod timeline;

pub(crate) use latency::{latency_png, latency_svg};
pub(crate) use noise::{has_noise, noise_causes_png, noise_causes_svg};
pub(crate) use percentiles::{percentile_png, percentile_svg};
pub(crate) use timeline::{phase_fill, phase_names, timeline_colors, timeline_png, DRIFT_COLOR};
// What only the tests below and `png_pixels_tests` look at.
#[cfg(test)]
use {latency::latency_rgb, timeline::merge_close};

/// Width of every picture (latency, percentiles, timeline), px: the plot
/// and, on its right, the legend panel.
pub const WIDTH: u32 = 1200;
/// Height of the latency and percentile pictures, px.
pub const HEIGHT: u32 = 800;
/// Height of a timeline picture, px.
pub(crate) const TIMELINE_HEIGHT: u32 = 600;
const LEGEND_W: u32 = 330;
const FONT: &str = "sans-serif";
static FONT_BYTES: &[u8] = include_bytes!("../../assets/DejaVuSans.ttf");

pub(crate) fn register_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // The bytes are a valid TTF shipped with the crate: failure here is a build error.
        let _ = plotters::style::register_font(FONT, FontStyle::Normal, FONT_BYTES);
    });
}

fn rgb(c: (u8, u8, u8)) -> RGBColor {
    RGBColor(c.0, c.1, c.2)
}

fn err<E: std::fmt::Display>(e: E) -> anyhow::Error {
    anyhow!("drawing failed: {e}")
}

/// x axis end in µs: `x_max` when given (`--x-max`), else a little past
/// the largest latency observed inside the histograms (the upper edge of
/// the last non-empty bucket), so the body of the curves fills the
/// picture instead of an empty 1000 µs histogram range. Samples beyond the
/// axis (the overflow, and with `--x-max` the buckets past it) are counted
/// by a marker at the right edge; a run without a histogram (cyclictest
/// `--json` without `-h`) extends the axis to its maximum.
pub(crate) fn x_range(series: &[Series], x_max: Option<f64>) -> f64 {
    if let Some(x) = x_max.filter(|x| x.is_finite() && *x > 0.0) {
        return x;
    }
    let mut x: f64 = 0.0;
    for s in series {
        let res = s.res_ns as f64 / 1000.0;
        match s.points.last() {
            Some(p) => x = x.max(p.0 + res),
            None => x = x.max(s.max_us().unwrap_or(0.0)),
        }
    }
    nice_end(x.max(1.0) * 1.05)
}

/// Round an axis end up to two significant digits (105 → 110, 52.5 → 53),
/// so the end is a plain number without wasting width.
pub(crate) fn nice_end(x: f64) -> f64 {
    let step = 10f64.powf(x.log10().floor() - 1.0);
    (x / step - 1e-9).ceil() * step
}

pub(crate) fn y_range(series: &[Series]) -> f64 {
    let m = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1).chain([s.overflow()]))
        .max()
        .unwrap_or(1);
    (m.max(1) as f64) * 3.0
}

/// The pixel mapping of a rendered latency plot (for tests and tools that
/// check the picture): `translate(&(µs, count))` gives the pixel.
pub(crate) type LatencyCoord = plotters::coord::cartesian::Cartesian2d<
    plotters::coord::types::RangedCoordf64,
    plotters::coord::combinators::LogCoord<f64>,
>;

/// Whole numbers without a fraction (`20`, not `20.0`).
fn format_us_tick(v: f64) -> String {
    if (v - v.round()).abs() < 1e-9 {
        format!("{}", v.round() as i64)
    } else {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// `1`, `10`, `100`, `1k`, `10k`, `1M`…
fn format_count(v: f64) -> String {
    if v >= 1e9 {
        format!("{}G", v / 1e9)
    } else if v >= 1e6 {
        format!("{}M", v / 1e6)
    } else if v >= 1e3 {
        format!("{}k", v / 1e3)
    } else {
        format!("{v}")
    }
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let t: String = s.chars().take(n - 1).collect();
        format!("{t}…")
    }
}

/// One entry per curve: colour swatch, label, then max and overflow in
/// plain words (`max 8380 µs (beyond axis)`, `181 overflow ≥ 401 µs`).
/// Three lines per entry while they fit, then two (shorter wording), then
/// one, then a "+N more" line rather than text running off the picture.
fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    series: &[Series],
    x_end: f64,
) -> anyhow::Result<()>
where
    DB::ErrorType: 'static,
{
    let top = 60;
    let avail = HEIGHT as i32 - top - 70;
    let n = series.len() as i32;
    let lines = match n {
        _ if n * 54 <= avail => 3,
        _ if n * 38 <= avail => 2,
        _ => 1,
    };
    let step = [20, 38, 54][lines - 1];
    let fit = (avail / step) as usize;
    let shown = if series.len() > fit {
        fit.saturating_sub(1)
    } else {
        series.len()
    };
    let label_style = TextStyle::from((FONT, 15)).color(&BLACK);
    let small = TextStyle::from((FONT, 13)).color(&RGBColor(90, 90, 90));
    area.draw_text(
        "legend",
        &TextStyle::from((FONT, 17)).color(&BLACK),
        (10, top - 28),
    )
    .map_err(err)?;
    for (i, s) in series.iter().take(shown).enumerate() {
        let y = top + i as i32 * step;
        area.draw(&Rectangle::new(
            [(10, y + 5), (34, y + 9)],
            rgb(s.color).filled(),
        ))
        .map_err(err)?;
        let max = s
            .thread
            .max_ns
            .map_or("?".into(), |m| fmt_us(m as f64, s.res_ns));
        let ovf = s.overflow();
        let text: Vec<(String, &TextStyle, i32)> = match lines {
            3 => [
                Some((truncate(&s.label, 34), &label_style, 0)),
                Some((s.max_note(x_end), &small, 18)),
                s.overflow_note(x_end).map(|o| (o, &small, 34)),
            ]
            .into_iter()
            .flatten()
            .collect(),
            2 => {
                let stats = if ovf > 0 {
                    format!("max {max} µs · {ovf} overflow")
                } else {
                    format!("max {max} µs")
                };
                vec![
                    (truncate(&s.label, 34), &label_style, 0),
                    (stats, &small, 18),
                ]
            }
            _ => {
                let ovf = if ovf > 0 {
                    format!(" · {ovf} ovf")
                } else {
                    String::new()
                };
                let line = format!("{}  max {max}{ovf}", truncate(&s.label, 20));
                vec![(line, &small, 0)]
            }
        };
        for (t, st, dy) in text {
            area.draw_text(&truncate(&t, 44), st, (42, y + dy))
                .map_err(err)?;
        }
    }
    if shown < series.len() {
        let y = top + shown as i32 * step;
        area.draw_text(
            &format!("+{} more (see report.html)", series.len() - shown),
            &small,
            (42, y),
        )
        .map_err(err)?;
    }
    let note_y = HEIGHT as i32 - 60;
    area.draw_text(
        "▲ at the right edge: samples beyond the axis",
        &small,
        (10, note_y),
    )
    .map_err(err)?;
    area.draw_text(
        "▮ on the x axis: maximum (when on the axis)",
        &small,
        (10, note_y + 20),
    )
    .map_err(err)?;
    Ok(())
}

fn encode_png(rgb: &[u8], w: u32, h: u32) -> anyhow::Result<Vec<u8>> {
    let mut out = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut out, w, h);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        // Flat colours and thin lines: adaptive filtering makes files
        // about 8 times smaller (680 KB → 86 KB for the README picture)
        // at the default deflate level, for little time.
        enc.set_compression(png::Compression::Default);
        enc.set_adaptive_filter(png::AdaptiveFilterType::Adaptive);
        let mut wr = enc.write_header()?;
        wr.write_image_data(rgb)?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tl(phases: &[&str]) -> Timeline {
        let mut csv = String::from("t_s,max_us,phase\n");
        for (i, p) in phases.iter().enumerate() {
            csv.push_str(&format!("{},10,{p}\n", i + 1));
        }
        Timeline::parse(&csv, "t.csv").unwrap()
    }

    #[test]
    fn only_changing_phases_are_shaded() {
        // A run without load.cycle says `load` on every row: nothing to contrast.
        assert!(phase_names(&tl(&["load", "load", "load"])).is_empty());
        assert_eq!(phase_names(&tl(&["load", "rest", "load"])), ["load"]);
        assert_eq!(
            phase_names(&tl(&["idle", "hell", "cpu", "hell"])),
            ["hell", "cpu"]
        );
        let names = phase_names(&tl(&["idle", "hell", "cpu"]));
        assert_ne!(phase_fill(&names, "hell"), phase_fill(&names, "cpu"));
    }

    #[test]
    fn gaps_too_narrow_to_see_are_merged() {
        // load 0-5, rest 5-6, load 6-10, rest 10-13, load 13-14
        let t = tl(&[
            "load", "load", "load", "load", "load", "rest", "load", "load", "load", "load", "rest",
            "rest", "rest", "load",
        ]);
        let names = phase_names(&t);
        let span = |v: Vec<Phase>| v.iter().map(|p| (p.start_s, p.end_s)).collect::<Vec<_>>();
        assert_eq!(
            span(merge_close(&t.phases, &names, 0.5)),
            [(0.0, 5.0), (6.0, 10.0), (13.0, 14.0)]
        );
        assert_eq!(
            span(merge_close(&t.phases, &names, 2.0)),
            [(0.0, 10.0), (13.0, 14.0)]
        );
    }
}
