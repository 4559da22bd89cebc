//! The timeline: per-interval maxima and the running maximum over the
//! run, load phases shaded (PNG).

use super::*;

/// Light fills for load phases; `rest`/`idle`/`none` stay white.
const PHASE_FILLS: &[(u8, u8, u8)] = &[
    (255, 221, 190),
    (255, 200, 200),
    (215, 230, 255),
    (220, 245, 210),
    (240, 220, 250),
];

/// Fill of phase `name`, one tint per name of `names` ([`phase_names`]).
pub(crate) fn phase_fill(names: &[String], name: &str) -> (u8, u8, u8) {
    let i = names.iter().position(|x| x == name).unwrap_or(0);
    PHASE_FILLS[i % PHASE_FILLS.len()]
}

fn is_quiet_phase(name: &str) -> bool {
    matches!(name, "rest" | "idle" | "none" | "off")
}

/// Distinct shaded phase names, in order of first appearance. A run that
/// never changes phase (no `load.cycle`: every row says `load`) has
/// nothing to contrast, so nothing is shaded.
pub(crate) fn phase_names(tl: &Timeline) -> Vec<String> {
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
pub(crate) fn merge_close(phases: &[Phase], names: &[String], min_gap: f64) -> Vec<Phase> {
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
pub(crate) fn timeline_colors(i: usize, threads: usize) -> (RGBColor, RGBColor) {
    if threads == 1 {
        (RGBColor(0, 0, 128), RGBColor(128, 0, 0))
    } else {
        let c = rgb(crate::series::PALETTE[i % crate::series::PALETTE.len()]);
        (c, c)
    }
}

/// The drift markers' colour (a magenta that no thread colour uses).
pub(crate) const DRIFT_COLOR: RGBColor = RGBColor(230, 0, 160);

/// The torture article's plot: per-interval maximum as points, running maximum as a
/// line, one colour per thread; load phases shaded. PNG bytes.
pub(crate) fn timeline_png(tl: &Timeline, title: &str) -> anyhow::Result<Vec<u8>> {
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
        // Drift markers: a vertical line at the end of each interval in
        // which what shields the measured CPUs changed (behind the points).
        for (t, _) in &tl.drift {
            chart
                .draw_series(LineSeries::new(
                    [(t / scale, 0.0), (t / scale, ymax)],
                    DRIFT_COLOR.stroke_width(2),
                ))
                .map_err(err)?;
        }
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
        draw_legend(&legend, tl, &names, w)?;
        root.present().map_err(err)?;
    }
    encode_png(&buf, w, h)
}

/// The legend row: `● cpu1 max per interval  ━ cpu1 running max  ▮
/// isolation drift  ▇ load`, as much of it as fits in the width `w`.
fn draw_legend(
    legend: &DrawingArea<BitMapBackend<'_>, Shift>,
    tl: &Timeline,
    names: &[String],
    w: u32,
) -> anyhow::Result<()> {
    let fill = |n: &str| rgb(phase_fill(names, n));
    let n = tl.threads.len();
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
    if !tl.drift.is_empty() {
        let t = "isolation drift";
        if x + 14 + width(t) <= right {
            legend
                .draw(&Rectangle::new(
                    [(x + 3, 5), (x + 5, 25)],
                    DRIFT_COLOR.filled(),
                ))
                .map_err(err)?;
            legend.draw_text(t, &st, (x + 14, 7)).map_err(err)?;
            x += 14 + width(t) + 22;
        }
    }
    for p in names {
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
    Ok(())
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
