//! The overlaid latency histograms (PNG and SVG).

use super::*;

/// Render the latency plot as PNG bytes.
pub(crate) fn latency_png(
    series: &[Series],
    title: &str,
    x_max: Option<f64>,
) -> anyhow::Result<Vec<u8>> {
    let (buf, _) = latency_rgb(series, title, x_max)?;
    encode_png(&buf, WIDTH, HEIGHT)
}

/// The latency plot as raw RGB pixels (`WIDTH`×`HEIGHT`×3) and its
/// coordinate mapping.
pub(crate) fn latency_rgb(
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

pub(crate) fn latency_svg(
    series: &[Series],
    title: &str,
    x_max: Option<f64>,
) -> anyhow::Result<String> {
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
fn marker_x(x_end: f64, k: usize, plot_px: f64) -> f64 {
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
        if let Some(mx) = s.max_us().filter(|m| *m <= xmax) {
            chart
                .draw_series(LineSeries::new([(mx, 0.8), (mx, 4.0)], c.stroke_width(4)))
                .map_err(err)?;
        }
    }
    draw_legend(&legend, series, xmax)?;
    Ok(coord)
}
