//! A Gantt chart of a run as SVG, written by hand: one row per CPU, one
//! colour per task class, interrupt-masking sections as black marks above
//! the row (they are microseconds long, so they get their own lane).
//! Long runs are drawn at one pixel column per `span / 1200`: each column
//! is a stacked bar of the time each class ran in it.

use crate::trace::{Segment, SegmentKind};
use rtshield_scenario::fmt_ns;
use rtshield_text::markup_text as esc;
use std::fmt::Write as _;

const PLOT_W: usize = 1200;
const LEFT: usize = 90;
const ROW_H: usize = 26;
const TOP: usize = 40;

fn colour(kind: SegmentKind) -> &'static str {
    match kind {
        SegmentKind::Rt0 => "#d62728",
        SegmentKind::Rt => "#ff7f0e",
        SegmentKind::Normal => "#1f77b4",
        SegmentKind::Masked => "#000000",
    }
}

/// The smallest 1, 2 or 5 × 10^k at least `raw` (and at least 1).
fn nice_step(raw: u64) -> u64 {
    let mut p = 1u64;
    loop {
        for m in [1, 2, 5] {
            if p.saturating_mul(m) >= raw.max(1) {
                return p.saturating_mul(m);
            }
        }
        p = p.saturating_mul(10);
    }
}

/// Time per (CPU, pixel column, class) of a run: what the chart draws.
struct Grid {
    span: u64,
    /// Rt0, Rt, Normal time per `cpu * PLOT_W + column`.
    bins: Vec<[u64; 3]>,
    /// Whether a masking section falls in the column.
    masked: Vec<bool>,
}

/// The first nanosecond of pixel column `c` of a `span`-long chart.
fn col_start(span: u64, c: usize) -> u64 {
    (u128::from(span) * c as u128 / PLOT_W as u128) as u64
}

impl Grid {
    fn new(segments: &[Segment], ncpus: usize, span: u64) -> Grid {
        let mut bins = vec![[0u64; 3]; ncpus * PLOT_W];
        let mut masked = vec![false; ncpus * PLOT_W];
        let col_of =
            |t: u64| ((u128::from(t) * PLOT_W as u128 / u128::from(span)) as usize).min(PLOT_W - 1);
        for s in segments {
            if s.cpu >= ncpus || s.start >= span {
                continue;
            }
            let end = s.end.min(span);
            let (c0, c1) = (col_of(s.start), col_of(end.saturating_sub(1).max(s.start)));
            for col in c0..=c1 {
                let lo = s.start.max(col_start(span, col));
                let hi = end.min(col_start(span, col + 1));
                let idx = s.cpu * PLOT_W + col;
                match s.kind {
                    SegmentKind::Masked => masked[idx] = true,
                    k => {
                        let slot = match k {
                            SegmentKind::Rt0 => 0,
                            SegmentKind::Rt => 1,
                            _ => 2,
                        };
                        bins[idx][slot] += hi.saturating_sub(lo);
                    }
                }
            }
        }
        Grid { span, bins, masked }
    }
}

/// Render `segments` over `[0, span_ns)`. Each pixel column of a CPU row is
/// a stacked bar of the share of its time each class ran (grey: idle).
pub fn render_svg(
    segments: &[Segment],
    ncpus: usize,
    rt_cpus: &[bool],
    span_ns: u64,
    title: &str,
) -> String {
    let span = span_ns.max(1);
    let g = Grid::new(segments, ncpus, span);
    let height = TOP + ncpus * ROW_H + 70;
    let width = LEFT + PLOT_W + 20;
    let mut o = String::new();
    let _ = writeln!(
        o,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(
        o,
        r#"<rect width="{width}" height="{height}" fill="white"/>"#
    );
    let _ = writeln!(
        o,
        r#"<text x="{LEFT}" y="20" font-size="14">{}</text>"#,
        esc(title)
    );
    for cpu in 0..ncpus {
        cpu_row(&mut o, &g, cpu, rt_cpus);
    }
    axis_and_legend(&mut o, ncpus, span);
    o.push_str("</svg>\n");
    o
}

/// One CPU's row: its label, background, stacked bars and masking marks.
fn cpu_row(o: &mut String, g: &Grid, cpu: usize, rt_cpus: &[bool]) {
    let y = TOP + cpu * ROW_H;
    let label = if rt_cpus.get(cpu).copied().unwrap_or(false) {
        format!("cpu{cpu} (RT)")
    } else {
        format!("cpu{cpu}")
    };
    let _ = writeln!(o, r#"<text x="4" y="{}">{label}</text>"#, y + 17);
    let _ = writeln!(
        o,
        r##"<rect x="{LEFT}" y="{}" width="{PLOT_W}" height="{}" fill="#f4f4f4" stroke="#cccccc"/>"##,
        y + 6,
        ROW_H - 8
    );
    // Each column is a stacked bar: the share of the column's time each
    // class ran (RT0 at the bottom, then RT1+, then normal; the rest is
    // idle). Runs of columns with the same bar become one rect each.
    let h = ROW_H - 8;
    let width_ns = |col: usize| col_start(g.span, col + 1) - col_start(g.span, col);
    let bar = |col: usize| -> [usize; 3] {
        let b = &g.bins[cpu * PLOT_W + col];
        let w = width_ns(col).max(1) as f64;
        let mut out = [0usize; 3];
        for (o, &v) in out.iter_mut().zip(b.iter()) {
            *o = ((v as f64 / w) * h as f64).round() as usize;
        }
        out
    };
    let mut col = 0;
    while col < PLOT_W {
        let cur = bar(col);
        let mut end = col + 1;
        while end < PLOT_W && bar(end) == cur {
            end += 1;
        }
        let mut y_bottom = y + 6 + h;
        for (slot, kind) in [SegmentKind::Rt0, SegmentKind::Rt, SegmentKind::Normal]
            .into_iter()
            .enumerate()
        {
            let hh = cur[slot].min(y_bottom - (y + 6));
            if hh > 0 {
                let _ = writeln!(
                    o,
                    r#"<rect x="{}" y="{}" width="{}" height="{hh}" fill="{}"/>"#,
                    LEFT + col,
                    y_bottom - hh,
                    end - col,
                    colour(kind)
                );
                y_bottom -= hh;
            }
        }
        col = end;
    }
    for col in 0..PLOT_W {
        if g.masked[cpu * PLOT_W + col] {
            let _ = writeln!(
                o,
                r#"<rect x="{}" y="{}" width="1" height="4" fill="black"/>"#,
                LEFT + col,
                y + 1
            );
        }
    }
}

/// The time axis (round steps) and the legend.
fn axis_and_legend(o: &mut String, ncpus: usize, span: u64) {
    // Time axis.
    let axis_y = TOP + ncpus * ROW_H + 4;
    // Round steps (1, 2 or 5 × 10^k ns), about five of them, so the labels
    // read 10 s, 20 s… rather than 16.7 s, 33.5 s…
    let step = nice_step(span / 5);
    for i in 0..=span / step {
        let t = step * i;
        let x = LEFT + (u128::from(t) * PLOT_W as u128 / u128::from(span)) as usize;
        let _ = writeln!(
            o,
            r##"<line x1="{x}" y1="{axis_y}" x2="{x}" y2="{}" stroke="#555555"/><text x="{x}" y="{}" text-anchor="middle">{}</text>"##,
            axis_y + 5,
            axis_y + 18,
            fmt_ns(t as f64)
        );
    }
    let ly = axis_y + 40;
    let legend = [
        (SegmentKind::Rt0, "RT0 (FIFO 99)"),
        (SegmentKind::Rt, "RT1+ (FIFO/RR)"),
        (SegmentKind::Normal, "normal"),
        (
            SegmentKind::Masked,
            "interrupts masked (mark above the row)",
        ),
    ];
    let mut x = LEFT;
    for (k, name) in legend {
        let _ = writeln!(
            o,
            r#"<rect x="{x}" y="{}" width="14" height="12" fill="{}"/><text x="{}" y="{}">{name}</text>"#,
            ly - 10,
            colour(k),
            x + 18,
            ly
        );
        x += 40 + name.len() * 7;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(cpu: usize, task: usize, start: u64, end: u64, kind: SegmentKind) -> Segment {
        Segment {
            cpu,
            task,
            start,
            end,
            kind,
        }
    }

    #[test]
    fn draws_one_row_per_cpu_and_each_class() {
        let segs = [
            seg(0, 0, 0, 600, SegmentKind::Normal),
            seg(1, 1, 0, 1200, SegmentKind::Rt0),
            seg(1, 2, 600, 601, SegmentKind::Masked),
        ];
        let svg = render_svg(&segs, 2, &[false, true], 1200, "t<1>");
        assert!(svg.starts_with("<svg"));
        assert!(svg.contains("cpu0") && svg.contains("cpu1 (RT)"));
        assert!(svg.contains("t&lt;1&gt;"));
        // cpu0: normal for the first half (600 px, full height), idle after.
        assert!(svg.contains(r##"<rect x="90" y="46" width="600" height="18" fill="#1f77b4"/>"##));
        assert!(svg.contains(r##"width="1200" height="18" fill="#d62728""##));
        // A column shared half and half stacks two half-height bars.
        let segs = [
            seg(0, 0, 0, 600, SegmentKind::Rt0),
            seg(0, 1, 600, 1200, SegmentKind::Normal),
        ];
        let half = render_svg(&segs, 1, &[false], 1200 * 1200, "half");
        assert!(
            half.contains(r##"<rect x="90" y="55" width="1" height="9" fill="#d62728"/>"##),
            "{half}"
        );
        assert!(
            half.contains(r##"<rect x="90" y="46" width="1" height="9" fill="#1f77b4"/>"##),
            "{half}"
        );
        assert!(svg.contains(r#"width="1" height="4" fill="black""#));
    }

    #[test]
    fn axis_uses_round_steps() {
        assert_eq!(nice_step(0), 1);
        assert_eq!(nice_step(16_740_000_000), 20_000_000_000);
        assert_eq!(nice_step(2_000), 2_000);
        assert_eq!(nice_step(2_001), 5_000);
        // 83.7 s: labels at 0, 20, 40, 60, 80 s.
        let svg = render_svg(&[], 1, &[false], 83_700_000_000, "axis");
        for l in [">0 ns<", ">20.0 s<", ">40.0 s<", ">60.0 s<", ">80.0 s<"] {
            assert!(svg.contains(l), "{l} missing");
        }
        assert!(!svg.contains(">100 s<"));
    }
}
