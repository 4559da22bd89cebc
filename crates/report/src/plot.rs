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

pub const WIDTH: u32 = 1200;
pub const HEIGHT: u32 = 800;
pub const TIMELINE_HEIGHT: u32 = 600;
const LEGEND_W: u32 = 330;
const FONT: &str = "sans-serif";
static FONT_BYTES: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");

pub fn register_font() {
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
pub fn x_range(series: &[Series], x_max: Option<f64>) -> f64 {
    if let Some(x) = x_max.filter(|x| x.is_finite() && *x > 0.0) {
        return x;
    }
    let mut x: f64 = 0.0;
    for s in series {
        let res = s.thread.histogram.resolution_ns as f64 / 1000.0;
        match s.points.last() {
            Some(p) => x = x.max(p.0 + res),
            None => x = x.max(s.max_us()),
        }
    }
    nice_end(x.max(1.0) * 1.05)
}

/// Round an axis end up to two significant digits (105 → 110, 52.5 → 53),
/// so the end is a plain number without wasting width.
pub fn nice_end(x: f64) -> f64 {
    let step = 10f64.powf(x.log10().floor() - 1.0);
    (x / step - 1e-9).ceil() * step
}

pub fn y_range(series: &[Series]) -> f64 {
    let m = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1).chain([s.overflow()]))
        .max()
        .unwrap_or(1);
    (m.max(1) as f64) * 3.0
}

/// The pixel mapping of a rendered latency plot (for tests and tools that
/// check the picture): `translate(&(µs, count))` gives the pixel.
pub type LatencyCoord = plotters::coord::cartesian::Cartesian2d<
    plotters::coord::types::RangedCoordf64,
    plotters::coord::combinators::LogCoord<f64>,
>;

/// Render the latency plot as PNG bytes.
pub fn latency_png(series: &[Series], title: &str, x_max: Option<f64>) -> anyhow::Result<Vec<u8>> {
    let (buf, _) = latency_rgb(series, title, x_max)?;
    encode_png(&buf, WIDTH, HEIGHT)
}

/// The latency plot as raw RGB pixels (`WIDTH`×`HEIGHT`×3) and its
/// coordinate mapping.
pub fn latency_rgb(
    series: &[Series],
    title: &str,
    x_max: Option<f64>,
) -> anyhow::Result<(Vec<u8>, LatencyCoord)> {
    let mut buf = vec![0u8; (WIDTH * HEIGHT * 3) as usize];
    let coord = {
        let root = BitMapBackend::with_buffer(&mut buf, (WIDTH, HEIGHT)).into_drawing_area();
        let c = draw_latency(&root, series, title, x_max, true)?;
        root.present().map_err(err)?;
        c
    };
    Ok((buf, coord))
}

pub fn latency_svg(series: &[Series], title: &str, x_max: Option<f64>) -> anyhow::Result<String> {
    let mut s = String::new();
    {
        let root = SVGBackend::with_string(&mut s, (WIDTH, HEIGHT)).into_drawing_area();
        draw_latency(&root, series, title, x_max, false)?;
        root.present().map_err(err)?;
    }
    Ok(s)
}

/// Where the overflow marker of the `k`-th overflowing curve goes: at the
/// right end of the axis, each one 14 px further left, so markers of runs
/// with similar counts stand side by side instead of on top of each other.
pub fn marker_x(x_end: f64, k: usize, plot_px: f64) -> f64 {
    x_end - (k as f64 + 0.5) * 14.0 * x_end / plot_px.max(1.0)
}

/// The pixel polyline of one run of adjacent buckets: points mapped to
/// pixels, consecutive duplicates dropped (buckets narrower than a pixel
/// land on the same one).
fn pixel_path(coord: &LatencyCoord, pts: impl Iterator<Item = (f64, f64)>) -> Vec<(i32, i32)> {
    let mut v: Vec<(i32, i32)> = Vec::new();
    for p in pts {
        let q = coord.translate(&p);
        if v.last() != Some(&q) {
            v.push(q);
        }
    }
    v
}

fn draw_latency<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    series: &[Series],
    title: &str,
    x_max: Option<f64>,
    bitmap: bool,
) -> anyhow::Result<LatencyCoord>
where
    DB::ErrorType: 'static,
{
    register_font();
    root.fill(&WHITE).map_err(err)?;
    let (plot, legend) = root.split_horizontally(WIDTH - LEGEND_W);
    let xmax = x_range(series, x_max);
    let ymax = y_range(series);
    let mut chart = ChartBuilder::on(&plot)
        .caption(title, (FONT, 26))
        .margin(14)
        .x_label_area_size(55)
        .y_label_area_size(80)
        .build_cartesian_2d(0f64..xmax, (0.8f64..ymax).log_scale())
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("latency (µs)")
        .y_desc("samples (log)")
        .label_style((FONT, 15))
        .axis_desc_style((FONT, 17))
        .x_labels(12)
        .x_label_formatter(&|v| format_us_tick(*v))
        .y_label_formatter(&|v| format_count(*v))
        .light_line_style(RGBColor(235, 235, 235))
        .bold_line_style(RGBColor(200, 200, 200))
        .draw()
        .map_err(err)?;
    // The chart's own mapping, rebuilt as ChartBuilder builds it
    // (LogCoord is not Clone): last pixel inclusive, y upwards.
    let coord: LatencyCoord = {
        let (xr, yr) = chart.plotting_area().get_pixel_range();
        plotters::coord::cartesian::Cartesian2d::new(
            0f64..xmax,
            (0.8f64..ymax).log_scale(),
            (xr.start..xr.end - 1, yr.end - 1..yr.start),
        )
    };
    let plot_px = {
        let (xr, _) = chart.plotting_area().get_pixel_range();
        f64::from(xr.end - xr.start)
    };
    // The pixel paths are in root coordinates (the root's origin is the
    // picture's).
    let area = root;
    let mut overflowing = 0;
    for s in series {
        let c = rgb(s.color);
        // One line per run of adjacent buckets: the curve breaks where a
        // bucket is empty (log axis), a lone bucket is a dot. Only buckets
        // on the axis are drawn.
        for seg in &s.segments {
            let pts: Vec<(f64, f64)> = s.points[seg.clone()]
                .iter()
                .filter(|p| p.0 <= xmax)
                .map(|p| (p.0, p.1 as f64))
                .collect();
            let path = pixel_path(&coord, pts.iter().copied());
            match path.len() {
                0 => {}
                1 => area
                    .draw(&Circle::new(path[0], 3, c.filled()))
                    .map_err(err)?,
                // The bitmap backend joins the pieces of a thick polyline
                // with miters: where buckets are narrower than a pixel the
                // curve turns back on itself and a miter shoots far below
                // the axis or above the peak. Drawn piece by piece there is
                // no join (the SVG renderer limits miters itself).
                _ if bitmap => {
                    for w in path.windows(2) {
                        area.draw(&PathElement::new(vec![w[0], w[1]], c.stroke_width(2)))
                            .map_err(err)?;
                    }
                }
                _ => area
                    .draw(&PathElement::new(path, c.stroke_width(2)))
                    .map_err(err)?,
            }
        }
        let beyond = s.beyond(xmax);
        if beyond > 0 {
            let x = marker_x(xmax, overflowing, plot_px);
            overflowing += 1;
            chart
                .draw_series([TriangleMarker::new((x, beyond as f64), 9, c.filled())])
                .map_err(err)?;
        }
        // The maximum: a short vertical bar on the x axis when it is on
        // the plot; beyond the axis the legend says so rather than
        // stacking every off-scale bar on the right edge.
        if s.max_us() <= xmax {
            let mx = s.max_us();
            chart
                .draw_series(LineSeries::new([(mx, 0.8), (mx, 4.0)], c.stroke_width(4)))
                .map_err(err)?;
        }
    }
    draw_legend(&legend, series, xmax)?;
    Ok(coord)
}

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
        let res = s.thread.histogram.resolution_ns;
        let max = fmt_us(s.thread.max_ns as f64, res);
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

/// The tail of one curve as HdrHistogram and jitterplot users read it:
/// (latency in µs, fraction of the samples at or above it), both on log
/// scales. From the histogram: after each non-empty bucket, the fraction
/// still to come (at the bucket's upper edge); past the histogram, the
/// percentiles of the whole run (p99.9 → 10⁻³ …) that lie beyond it;
/// the maximum closes the curve at 1/N. A run without histogram buckets
/// has only its percentiles and maximum.
pub fn tail_points(s: &Series) -> Vec<(f64, f64)> {
    let t = s.thread;
    let n = s.points.iter().map(|p| p.1).sum::<u64>() + s.overflow();
    let n = n.max(t.samples);
    if n == 0 {
        return Vec::new();
    }
    let res = t.histogram.resolution_ns as f64 / 1000.0;
    let nf = n as f64;
    let mut rem = n;
    let mut out: Vec<(f64, f64)> = Vec::new();
    // Samples outside the buckets (overflow, and any the histogram did not
    // see) stay in `rem` to the end.
    for p in &s.points {
        if out.is_empty() {
            out.push((p.0.max(res / 2.0), 1.0));
        }
        rem = rem.saturating_sub(p.1);
        if rem == 0 {
            break;
        }
        out.push((p.0 + res, rem as f64 / nf));
    }
    let last_x = out.last().map_or(0.0, |p| p.0);
    let mut pct: Vec<(f64, f64)> = t
        .percentiles
        .iter()
        .filter_map(|(k, v)| {
            let q: f64 = k.parse().ok()?;
            let x = *v as f64 / 1000.0;
            (x > last_x && rtshield_results::percentile_supported(k, n))
                .then_some((x, 1.0 - q / 100.0))
        })
        .collect();
    pct.sort_by(|a, b| a.0.total_cmp(&b.0));
    for p in pct {
        if out.last().is_none_or(|l| p.1 < l.1) {
            out.push(p);
        }
    }
    let max = s.max_us();
    if max > 0.0 && out.last().is_none_or(|l| max >= l.0) {
        out.push((max.max(out.last().map_or(0.0, |l| l.0)), 1.0 / nf));
    }
    out
}

/// `1`, `0.1`, then `10⁻³` … with the percentile it stands for.
fn format_fraction(v: f64) -> String {
    let e = v.log10().round() as i32;
    match e {
        0 => "1 (all)".into(),
        -1 => "0.1 (p90)".into(),
        -2 => "0.01 (p99)".into(),
        _ => {
            let nines = (-e - 2) as usize;
            format!("1e{e} (p99.{})", "9".repeat(nines))
        }
    }
}

/// The percentile plot (PNG).
pub fn percentile_png(series: &[Series], title: &str) -> anyhow::Result<Vec<u8>> {
    let mut buf = vec![0u8; (WIDTH * HEIGHT * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut buf, (WIDTH, HEIGHT)).into_drawing_area();
        draw_percentiles(&root, series, title)?;
        root.present().map_err(err)?;
    }
    encode_png(&buf, WIDTH, HEIGHT)
}

/// The percentile plot (SVG).
pub fn percentile_svg(series: &[Series], title: &str) -> anyhow::Result<String> {
    let mut s = String::new();
    {
        let root = SVGBackend::with_string(&mut s, (WIDTH, HEIGHT)).into_drawing_area();
        draw_percentiles(&root, series, title)?;
        root.present().map_err(err)?;
    }
    Ok(s)
}

fn draw_percentiles<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    series: &[Series],
    title: &str,
) -> anyhow::Result<()>
where
    DB::ErrorType: 'static,
{
    register_font();
    root.fill(&WHITE).map_err(err)?;
    let (plot, legend) = root.split_horizontally(WIDTH - LEGEND_W);
    let tails: Vec<Vec<(f64, f64)>> = series.iter().map(tail_points).collect();
    let all = tails.iter().flatten();
    let xmin = all.clone().map(|p| p.0).fold(f64::MAX, f64::min);
    let xmax = all.clone().map(|p| p.0).fold(0.0, f64::max);
    let ymin = all.map(|p| p.1).fold(1.0, f64::min);
    let (xmin, xmax) = if xmax > 0.0 {
        (xmin.max(1e-3) / 1.3, xmax * 1.3)
    } else {
        (1.0, 1000.0)
    };
    // Down to the next power of ten below 1/N.
    let ymin = 10f64.powf(ymin.log10().floor()).min(0.1);
    let mut chart = ChartBuilder::on(&plot)
        .caption(title, (FONT, 26))
        .margin(14)
        .x_label_area_size(55)
        .y_label_area_size(130)
        .build_cartesian_2d((xmin..xmax).log_scale(), (ymin..1.5f64).log_scale())
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("latency (µs, log)")
        .y_desc("fraction of samples ≥ latency (1 − quantile)")
        .label_style((FONT, 15))
        .axis_desc_style((FONT, 17))
        .x_label_formatter(&|v| format_us_tick(*v))
        .y_label_formatter(&|v| format_fraction(*v))
        .light_line_style(RGBColor(235, 235, 235))
        .bold_line_style(RGBColor(200, 200, 200))
        .draw()
        .map_err(err)?;
    for (s, pts) in series.iter().zip(&tails) {
        let c = rgb(s.color);
        // A staircase: the fraction holds until the next edge.
        let mut stairs: Vec<(f64, f64)> = Vec::with_capacity(pts.len() * 2);
        for (i, p) in pts.iter().enumerate() {
            if i > 0 {
                stairs.push((p.0, pts[i - 1].1));
            }
            stairs.push(*p);
        }
        // Piece by piece, as the histogram (no miter spikes in the bitmap).
        for w in stairs.windows(2) {
            chart
                .draw_series(LineSeries::new(w.iter().copied(), c.stroke_width(2)))
                .map_err(err)?;
        }
        if let Some(last) = pts.last() {
            chart
                .draw_series([Circle::new(*last, 4, c.filled())])
                .map_err(err)?;
        }
    }
    // Legend: label and the sample count that bounds the deepest
    // percentile.
    let label_style = TextStyle::from((FONT, 15)).color(&BLACK);
    let small = TextStyle::from((FONT, 13)).color(&RGBColor(90, 90, 90));
    legend
        .draw_text(
            "legend",
            &TextStyle::from((FONT, 17)).color(&BLACK),
            (10, 32),
        )
        .map_err(err)?;
    let step = 40;
    let fit = ((HEIGHT as i32 - 160) / step) as usize;
    for (i, s) in series.iter().take(fit).enumerate() {
        let y = 60 + i as i32 * step;
        legend
            .draw(&Rectangle::new(
                [(10, y + 5), (34, y + 9)],
                rgb(s.color).filled(),
            ))
            .map_err(err)?;
        legend
            .draw_text(&truncate(&s.label, 34), &label_style, (42, y))
            .map_err(err)?;
        let note = format!("{} samples · {}", s.thread.samples, s.max_note(f64::MAX));
        legend
            .draw_text(&truncate(&note, 44), &small, (42, y + 18))
            .map_err(err)?;
    }
    if series.len() > fit {
        legend
            .draw_text(
                &format!("+{} more (see report.html)", series.len() - fit),
                &small,
                (42, 60 + fit as i32 * step),
            )
            .map_err(err)?;
    }
    let note_y = HEIGHT as i32 - 80;
    for (k, t) in [
        "y: share of samples at or above x;",
        "1e-3 is the p99.9, 1e-6 the p99.9999.",
        "● the maximum (one sample: 1/N)",
    ]
    .iter()
    .enumerate()
    {
        legend
            .draw_text(t, &small, (10, note_y + 20 * k as i32))
            .map_err(err)?;
    }
    Ok(())
}

/// Light fills for load phases; `rest`/`idle`/`none` stay white.
const PHASE_FILLS: &[(u8, u8, u8)] = &[
    (255, 221, 190),
    (255, 200, 200),
    (215, 230, 255),
    (220, 245, 210),
    (240, 220, 250),
];

/// Fill of phase `name`, one tint per name of `names` ([`phase_names`]).
pub fn phase_fill(names: &[String], name: &str) -> (u8, u8, u8) {
    let i = names.iter().position(|x| x == name).unwrap_or(0);
    PHASE_FILLS[i % PHASE_FILLS.len()]
}

pub fn is_quiet_phase(name: &str) -> bool {
    matches!(name, "rest" | "idle" | "none" | "off")
}

/// Distinct shaded phase names, in order of first appearance. A run that
/// never changes phase (no `load.cycle`: every row says `load`) has
/// nothing to contrast, so nothing is shaded.
pub fn phase_names(tl: &Timeline) -> Vec<String> {
    let mut all: Vec<&str> = Vec::new();
    for p in &tl.phases {
        if !all.contains(&p.name.as_str()) {
            all.push(&p.name);
        }
    }
    if all.len() < 2 {
        return Vec::new();
    }
    all.into_iter()
        .filter(|n| !is_quiet_phase(n))
        .map(str::to_string)
        .collect()
}

/// The stretches of the shaded phases `names`, a stretch joined to the
/// previous one of the same phase when less than `min_gap` s lies between.
pub fn merge_close(phases: &[Phase], names: &[String], min_gap: f64) -> Vec<Phase> {
    let mut out: Vec<Phase> = Vec::new();
    for p in phases.iter().filter(|p| names.contains(&p.name)) {
        match out.last_mut() {
            Some(q) if q.name == p.name && p.start_s - q.end_s < min_gap => q.end_s = p.end_s,
            _ => out.push(p.clone()),
        }
    }
    out
}

/// (dot, line) colours of timeline thread `i`: the torture article's navy dots and
/// maroon line for a single thread, one palette colour per thread else.
pub fn timeline_colors(i: usize, threads: usize) -> (RGBColor, RGBColor) {
    if threads == 1 {
        (RGBColor(0, 0, 128), RGBColor(128, 0, 0))
    } else {
        let c = rgb(crate::series::PALETTE[i % crate::series::PALETTE.len()]);
        (c, c)
    }
}

/// The torture article's plot: per-interval maximum as points, running maximum as a
/// line, one colour per thread; load phases shaded. PNG bytes.
pub fn timeline_png(tl: &Timeline, title: &str) -> anyhow::Result<Vec<u8>> {
    register_font();
    let (w, h) = (WIDTH, TIMELINE_HEIGHT);
    let mut buf = vec![0u8; (w * h * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut buf, (w, h)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        // Title, then a legend row saying which mark is which, then the plot.
        let body = root
            .margin(8, 0, 0, 0)
            .titled(title, (FONT, 22))
            .map_err(err)?;
        let (legend, plot) = body.split_vertically(30);
        let hours = tl.end_s() > 7200.0;
        let scale = if hours { 3600.0 } else { 1.0 };
        let xmax = (tl.end_s() / scale).max(1e-9) * 1.01;
        let ymax = tl.max_us().max(1.0) * 1.08;
        let mut chart = ChartBuilder::on(&plot)
            .margin(12)
            .margin_top(4)
            .x_label_area_size(50)
            .y_label_area_size(75)
            .build_cartesian_2d(0f64..xmax, 0f64..ymax)
            .map_err(err)?;
        let names = phase_names(tl);
        let fill = |n: &str| rgb(phase_fill(&names, n));
        // A gap narrower than 2 px between two stretches of one phase (30 s
        // rests in a day) cannot be seen, only aliased into stripes: merged.
        let min_gap = 2.0 * tl.end_s() / f64::from(w);
        let shaded = merge_close(&tl.phases, &names, min_gap);
        chart
            .draw_series(shaded.iter().map(|p| {
                Rectangle::new(
                    [(p.start_s / scale, 0.0), (p.end_s / scale, ymax)],
                    fill(&p.name).filled(),
                )
            }))
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc(if hours { "time (h)" } else { "time (s)" })
            .y_desc("latency (µs)")
            .x_label_formatter(&|v| format_us_tick(*v))
            .y_label_formatter(&|v| format_us_tick(*v))
            .label_style((FONT, 15))
            .axis_desc_style((FONT, 17))
            .light_line_style(RGBColor(235, 235, 235))
            .bold_line_style(RGBColor(205, 205, 205))
            .draw()
            .map_err(err)?;
        let n = tl.threads.len();
        for (i, s) in tl.threads.iter().enumerate() {
            let (dot, line) = timeline_colors(i, n);
            chart
                .draw_series(
                    s.t_s
                        .iter()
                        .zip(&s.max_us)
                        .map(|(t, m)| Circle::new((t / scale, *m), 2, dot.filled())),
                )
                .map_err(err)?;
            chart
                .draw_series(LineSeries::new(
                    steps(&s.t_s, &s.maxmax_us, scale),
                    line.stroke_width(2),
                ))
                .map_err(err)?;
        }
        // Legend row: `● cpu1 max per interval  ━ cpu1 running max  ▇ load`.
        let st = TextStyle::from((FONT, 14)).color(&BLACK);
        let width = |t: &str| {
            legend
                .estimate_text_size(t, &st)
                .map_or(t.chars().count() as i32 * 8, |s| s.0 as i32)
        };
        let right = w as i32 - 20;
        let mut x = 90;
        for (i, s) in tl.threads.iter().enumerate() {
            let who = match s.cpu {
                Some(c) => format!("cpu{c}"),
                None => format!("t{}", s.thread),
            };
            let (dot, line) = timeline_colors(i, n);
            let a = format!("{who} max per interval");
            let b = format!("{who} running max");
            if x + 30 + width(&a) + 40 + width(&b) > right {
                break;
            }
            legend
                .draw(&Circle::new((x + 8, 15), 3, dot.filled()))
                .map_err(err)?;
            legend.draw_text(&a, &st, (x + 20, 7)).map_err(err)?;
            x += 20 + width(&a) + 22;
            legend
                .draw(&Rectangle::new([(x, 14), (x + 20, 16)], line.filled()))
                .map_err(err)?;
            legend.draw_text(&b, &st, (x + 26, 7)).map_err(err)?;
            x += 26 + width(&b) + 22;
        }
        for p in &names {
            let t = format!("{p} phase");
            if x + 28 + width(&t) > right {
                break;
            }
            legend
                .draw(&Rectangle::new([(x, 7), (x + 22, 23)], fill(p).filled()))
                .map_err(err)?;
            legend.draw_text(&t, &st, (x + 28, 7)).map_err(err)?;
            x += 28 + width(&t) + 22;
        }
        root.present().map_err(err)?;
    }
    encode_png(&buf, w, h)
}

/// The running maximum holds until the interval that raises it: a
/// staircase, not a slope between two interval ends.
fn steps(t: &[f64], m: &[f64], scale: f64) -> Vec<(f64, f64)> {
    let mut v = Vec::with_capacity(t.len() * 2);
    for i in 0..t.len() {
        if i > 0 && m[i] != m[i - 1] {
            v.push((t[i] / scale, m[i - 1]));
        }
        v.push((t[i] / scale, m[i]));
    }
    v
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
