//! The cause breakdown of noise runs: one horizontal bar per measured CPU
//! (per run), its length the CPU's total noise, stacked by cause class
//! (unexplained, NMI, IRQ, tick, softirq, thread), so which kind of
//! activity stole the most time is seen at a glance. A CPU measured
//! without a trace is one grey bar ("untraced"). The `%` beside each bar
//! is the share of the CPU left to the spinning thread.

use super::{err, register_font, rgb, FONT, HEIGHT, WIDTH};
use crate::load::Run;
use crate::noise::{class_name, fmt_dur, CLASSES};
use plotters::coord::Shift;
use plotters::prelude::*;

/// One bar: its label, total noise, per-class ns (None: untraced) and
/// % available.
struct Bar {
    label: String,
    total_ns: u64,
    parts: Option<Vec<u64>>,
    available: Option<f64>,
}

/// The bars of every noise run, in input and CPU order.
fn bars(runs: &[Run]) -> Vec<Bar> {
    let several = runs.iter().filter(|r| r.result.noise.is_some()).count() > 1;
    let mut v = Vec::new();
    for r in runs {
        let Some(n) = &r.result.noise else { continue };
        for c in &n.cpus {
            let label = if several {
                format!("{} CPU {}", r.label, c.cpu)
            } else {
                format!("CPU {}", c.cpu)
            };
            let parts = c.class_ns.as_ref().map(|m| {
                CLASSES
                    .iter()
                    .map(|k| m.get(k).copied().unwrap_or(0))
                    .collect()
            });
            v.push(Bar {
                label,
                total_ns: c.noise_ns,
                parts,
                available: c.available_pct,
            });
        }
    }
    v
}

/// Whether any input is a noise run (then the breakdown is drawn).
pub(crate) fn has_noise(runs: &[Run]) -> bool {
    runs.iter().any(|r| r.result.noise.is_some())
}

/// The colour of each class (same order as [`CLASSES`]), then "untraced".
const COLORS: [(u8, u8, u8); 8] = [
    (150, 150, 150),
    (140, 86, 75),
    (31, 119, 180),
    (44, 160, 44),
    (255, 127, 14),
    (214, 39, 40),
    (188, 189, 34),
    (200, 200, 200),
];

fn draw<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    runs: &[Run],
    title: &str,
) -> anyhow::Result<()>
where
    DB::ErrorType: 'static,
{
    area.fill(&WHITE).map_err(err)?;
    let bars = bars(runs);
    let body = area
        .margin(8, 0, 0, 0)
        .titled(title, (FONT, 22))
        .map_err(err)?;
    let (plot, legend) = body.split_horizontally(WIDTH - 250);
    let n = bars.len().max(1) as f64;
    // Time in ms, so a 1.7 ms stall reads as 1.7.
    let xmax = bars.iter().map(|b| b.total_ns).max().unwrap_or(0).max(1) as f64 / 1e6 * 1.25;
    let mut chart = ChartBuilder::on(&plot)
        .margin(12)
        .x_label_area_size(50)
        .y_label_area_size(10)
        .build_cartesian_2d(0f64..xmax, 0f64..n)
        .map_err(err)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .disable_x_mesh()
        .y_labels(0)
        .x_desc("noise time over the run (ms), by cause")
        .label_style((FONT, 15))
        .axis_desc_style((FONT, 16))
        .draw()
        .map_err(err)?;
    // Bars from the top down, in input order; each bar's name above it.
    let row = |i: usize| n - 1.0 - i as f64;
    for (i, b) in bars.iter().enumerate() {
        chart
            .draw_series(std::iter::once(Text::new(
                b.label.clone(),
                (0.0, row(i) + 0.92),
                (FONT, 15).into_font(),
            )))
            .map_err(err)?;
    }
    for (i, b) in bars.iter().enumerate() {
        let (y0, y1) = (row(i) + 0.15, row(i) + 0.7);
        let mut x = 0.0;
        let segs: Vec<(f64, (u8, u8, u8))> = match &b.parts {
            Some(p) => p
                .iter()
                .zip(COLORS)
                .map(|(ns, c)| (*ns as f64 / 1e6, c))
                .collect(),
            None => vec![(b.total_ns as f64 / 1e6, COLORS[6])],
        };
        for (len, c) in segs.into_iter().filter(|s| s.0 > 0.0) {
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(x, y0), (x + len, y1)],
                    rgb(c).filled(),
                )))
                .map_err(err)?;
            x += len;
        }
        let note = format!(
            "{}{}",
            fmt_dur(b.total_ns),
            b.available
                .map_or(String::new(), |p| format!(" · {p:.3} % available"))
        );
        chart
            .draw_series(std::iter::once(Text::new(
                note,
                (x + xmax * 0.01, row(i) + 0.5),
                (FONT, 14).into_font(),
            )))
            .map_err(err)?;
    }
    let style = TextStyle::from((FONT, 15)).color(&BLACK);
    legend
        .draw_text(
            "cause",
            &TextStyle::from((FONT, 17)).color(&BLACK),
            (10, 40),
        )
        .map_err(err)?;
    let names: Vec<&str> = CLASSES
        .iter()
        .map(|c| class_name(*c))
        .chain(["untraced"])
        .collect();
    for (i, (name, c)) in names.iter().zip(COLORS).enumerate() {
        let y = 70 + i as i32 * 26;
        legend
            .draw(&Rectangle::new([(10, y), (34, y + 14)], rgb(c).filled()))
            .map_err(err)?;
        legend.draw_text(name, &style, (42, y)).map_err(err)?;
    }
    Ok(())
}

/// The picture's height: room for every bar, at least the usual height.
fn height(runs: &[Run]) -> u32 {
    (bars(runs).len() as u32 * 60 + 200).clamp(400, HEIGHT * 3)
}

/// The breakdown as PNG bytes.
pub(crate) fn noise_causes_png(runs: &[Run], title: &str) -> anyhow::Result<Vec<u8>> {
    register_font();
    let h = height(runs);
    let mut buf = vec![0u8; (WIDTH * h * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut buf, (WIDTH, h)).into_drawing_area();
        draw(&root, runs, title)?;
        root.present().map_err(err)?;
    }
    super::encode_png(&buf, WIDTH, h)
}

/// The breakdown as SVG text.
pub(crate) fn noise_causes_svg(runs: &[Run], title: &str) -> anyhow::Result<String> {
    register_font();
    let mut s = String::new();
    {
        let root = SVGBackend::with_string(&mut s, (WIDTH, height(runs))).into_drawing_area();
        draw(&root, runs, title)?;
        root.present().map_err(err)?;
    }
    Ok(s)
}
