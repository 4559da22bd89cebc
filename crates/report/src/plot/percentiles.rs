//! The tail of each curve: latency against the fraction of samples
//! above it (PNG and SVG).

use super::*;

/// The tail of one curve as HdrHistogram and jitterplot users read it:
/// (latency in µs, fraction of the samples at or above it), both on log
/// scales. From the histogram: after each non-empty bucket, the fraction
/// still to come (at the bucket's upper edge); past the histogram, the
/// percentiles of the whole run (p99.9 → 10⁻³ …) that lie beyond it;
/// the maximum closes the curve at 1/N. A run without histogram buckets
/// has only its percentiles and maximum.
fn tail_points(s: &Series) -> Vec<(f64, f64)> {
    let t = s.thread;
    let n = s.points.iter().map(|p| p.1).sum::<u64>() + s.overflow();
    let n = n.max(t.samples.unwrap_or(0));
    if n == 0 {
        return Vec::new();
    }
    let res = s.res_ns as f64 / 1000.0;
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
    let max = s.max_us().unwrap_or(0.0);
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
pub(crate) fn percentile_png(series: &[Series], title: &str) -> anyhow::Result<Vec<u8>> {
    let mut buf = vec![0u8; (WIDTH * HEIGHT * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut buf, (WIDTH, HEIGHT)).into_drawing_area();
        draw_percentiles(&root, series, title)?;
        root.present().map_err(err)?;
    }
    encode_png(&buf, WIDTH, HEIGHT)
}

/// The percentile plot (SVG).
pub(crate) fn percentile_svg(series: &[Series], title: &str) -> anyhow::Result<String> {
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
        let samples = rtshield_results::or_unknown(s.thread.samples, "?");
        let note = format!("{samples} samples · {}", s.max_note(f64::MAX));
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
