//! gnuplot export: `plot.gp` plus one data file per curve
//! (`latency-SLUG.dat`: `µs count`, non-zero buckets, a blank line where
//! empty buckets break the curve) and, for runs with a
//! timeline, `timeline.gp` + `timeline-SLUG.dat` (`t_s max_us maxmax_us`),
//! load phases shaded like `timeline.png`.
//! Like the systress article's `plot.show`: `gnuplot -p plot.gp`, or `load "plot.gp"`
//! in an interactive gnuplot, where clicking a key entry toggles its curve.

use crate::load::Run;
use crate::series::{slugify, Series};
use rtshield_text::gnuplot::{comment, single_quoted as quoted};

/// (file name, contents) pairs.
pub(crate) fn files(
    runs: &[Run],
    series: &[Series],
    title: &str,
    x_max: Option<f64>,
) -> Vec<(String, String)> {
    let mut out = latency_files(series, title, x_max);
    out.extend(timeline_files(runs, title));
    out
}

/// `plot.gp` (first) and one `latency-SLUG.dat` per curve.
fn latency_files(series: &[Series], title: &str, x_max: Option<f64>) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut plots = Vec::new();
    let x_end = crate::plot::x_range(series, x_max);
    for s in series {
        let name = format!("latency-{}.dat", s.slug);
        // The legend's words, in ASCII: gnuplot terminals differ in UTF-8 support.
        let note = s
            .note(x_end)
            .replace("µs", "us")
            .replace('≥', ">=")
            .replace(" · ", ", ");
        let mut d = format!(
            "# {}: {}\n# latency_us count (non-zero buckets; a blank line where buckets are empty breaks the curve)\n",
            comment(&s.label),
            comment(&note),
        );
        for (k, seg) in s.segments.iter().enumerate() {
            if k > 0 {
                d.push('\n');
            }
            for (x, c) in &s.points[seg.clone()] {
                d.push_str(&format!("{x} {c}\n"));
            }
        }
        // A curve without a point (a source without a histogram) keeps
        // its key entry: gnuplot refuses an empty data file, not NaN.
        let data = if s.points.is_empty() {
            "NaN".to_string()
        } else {
            format!("\"{name}\" using 1:2")
        };
        plots.push(format!(
            "  {data} with linespoints pt 7 ps 0.4 lw 2 lc rgb \"{}\" title {}",
            s.css_color(),
            quoted(&format!("{}: {note}", s.label)),
        ));
        out.push((name, d));
    }
    let gp = format!(
        "# rtshield report: latency histograms, one curve per run and thread.\n\
         # Interactive: gnuplot -p plot.gp   (click a key entry to hide/show its curve)\n\
         # To a file:   gnuplot -e \"set terminal pngcairo size 1200,800; set output 'latency-gp.png'\" plot.gp\n\
         set termoption noenhanced\n\
         set title {}\n\
         set xlabel \"latency (us)\"\n\
         set ylabel \"samples\"\n\
         set logscale y\n\
         # The same axes as latency.png: counts from 0.8 (a single sample\n\
         # shows), latency up to the histogram end or just past the maximum.\n\
         set yrange [0.8:{ymax}]\n\
         set xrange [0:{x_end}]\n\
         set grid\n\
         set key top right\n\
         plot \\\n{}\n",
        quoted(title),
        plots.join(", \\\n"),
        ymax = crate::plot::y_range(series),
    );
    out.insert(0, ("plot.gp".to_string(), gp));
    out
}

/// The drift watch's changes as in timeline.png: a vertical line at the
/// end of each interval in which what shields the measured CPUs changed,
/// the kinds named in a comment (never in gnuplot's syntax).
fn drift_markers(tl: &crate::timeline::Timeline) -> String {
    let c = crate::plot::DRIFT_COLOR;
    tl.drift
        .iter()
        .map(|(t, kinds)| {
            format!(
                "set arrow from {t}, graph 0 to {t}, graph 1 nohead lw 2 lc rgb \"#{:02x}{:02x}{:02x}\" back  # isolation drift: {}\n",
                c.0,
                c.1,
                c.2,
                comment(kinds)
            )
        })
        .collect()
}

/// `timeline.gp` and one `timeline-SLUG.dat` per thread of the runs that
/// have a timeline (nothing when none has).
fn timeline_files(runs: &[Run], title: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut tplots = Vec::new();
    // Load phases shaded as in timeline.png, when one run has a timeline
    // (several runs' phases would overlap on the one plot).
    let mut shading = String::new();
    let with_tl: Vec<_> = runs.iter().filter_map(|r| r.timeline.as_ref()).collect();
    if let [tl] = with_tl[..] {
        let names = crate::plot::phase_names(tl);
        for (k, p) in tl
            .phases
            .iter()
            .filter(|p| names.contains(&p.name))
            .enumerate()
        {
            let (r, g, b) = crate::plot::phase_fill(&names, &p.name);
            shading.push_str(&format!(
                "set object {} rect from {}, graph 0 to {}, graph 1 behind fillcolor rgb \"#{r:02x}{g:02x}{b:02x}\" fillstyle solid 1.0 noborder  # {} phase\n",
                k + 1,
                p.start_s,
                p.end_s,
                comment(&p.name)
            ));
        }
        shading.push_str(&drift_markers(tl));
    }
    let n_threads: usize = with_tl.iter().map(|t| t.threads.len()).sum();
    for run in runs {
        let Some(tl) = &run.timeline else { continue };
        for t in &tl.threads {
            let who = match t.cpu {
                Some(c) => format!("cpu{c}"),
                None => format!("t{}", t.thread),
            };
            let label = format!("{}:{who}", run.label);
            let name = format!("timeline-{}.dat", slugify(&label));
            let mut d = format!("# {}\n# t_s max_us maxmax_us\n", comment(&label));
            for i in 0..t.t_s.len() {
                d.push_str(&format!(
                    "{} {} {}\n",
                    t.t_s[i], t.max_us[i], t.maxmax_us[i]
                ));
            }
            // The colours of timeline.png; the running maximum as a
            // staircase (it holds until the interval that raises it).
            let (dot, line) = crate::plot::timeline_colors(tplots.len(), n_threads);
            let hex = |c: plotters::style::RGBColor| format!("#{:02x}{:02x}{:02x}", c.0, c.1, c.2);
            tplots.push(format!(
                "  \"{name}\" using 1:2 with points pt 7 ps 0.4 lc rgb \"{}\" title {}, \\\n  \"{name}\" using 1:3 with steps lw 2 lc rgb \"{}\" title {}",
                hex(dot),
                quoted(&format!("{label} max per interval")),
                hex(line),
                quoted(&format!("{label} running max"))
            ));
            out.push((name, d));
        }
    }
    if !tplots.is_empty() {
        out.push((
            "timeline.gp".to_string(),
            format!(
                "# rtshield report: per-interval maximum (dots) and running maximum (line).\n\
                 set termoption noenhanced\nset title {}\nset xlabel \"time (s)\"\nset ylabel \"latency (us)\"\nset grid\nset key below\n\
                 {shading}plot \\\n{}\n",
                quoted(title),
                tplots.join(", \\\n")
            ),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timeline::Timeline;

    /// timeline.gp marks each drift interval as timeline.png does, and a
    /// hostile drift cell stays inside the comment (one line, no command).
    #[test]
    fn timeline_gp_marks_each_drift_interval_as_a_comment_named_line() {
        let h = rtshield_results::timeline_header_with_drift(&[]);
        let csv = format!(
            "{h}\n1.000,none,0,1,10,10,1,2,3,3,0,0,,,,,,,\n\
             2.000,none,0,1,20,10,1,2,3,3,0,0,,,,,,,irq_affinity;rt_task\n\
             3.000,none,0,1,30,10,1,2,3,3,0,0,,,,,,,x`touch /tmp/p`\\\n"
        );
        let tl = Timeline::parse(&csv, "timeline.csv").unwrap();
        let m = drift_markers(&tl);
        let lines: Vec<&str> = m.lines().collect();
        assert_eq!(lines.len(), 2, "{m}");
        assert!(
            lines[0].starts_with("set arrow from 2, graph 0 to 2, graph 1 nohead")
                && lines[0].ends_with("# isolation drift: irq_affinity;rt_task"),
            "{m}"
        );
        // The trailing `\\` would continue the comment onto the next line.
        assert!(
            lines[1].ends_with("# isolation drift: x`touch /tmp/p`\\ "),
            "{m}"
        );
    }
}
