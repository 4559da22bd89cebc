//! gnuplot export: `plot.gp` plus one data file per curve
//! (`latency-SLUG.dat`: `µs count`, non-zero buckets) and, for runs with a
//! timeline, `timeline.gp` + `timeline-SLUG.dat` (`t_s max_us maxmax_us`).
//! Like seed 000's `plot.show`: `gnuplot -p plot.gp`, or `load "plot.gp"`
//! in an interactive gnuplot, where clicking a key entry toggles its curve.

use crate::load::Run;
use crate::series::{slugify, Series};

/// (file name, contents) pairs.
pub fn files(runs: &[Run], series: &[Series], title: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut plots = Vec::new();
    for s in series {
        let name = format!("latency-{}.dat", s.slug);
        let mut d = format!(
            "# {}\n# latency_us count (non-zero buckets; {} samples beyond {} us, max {} us)\n",
            s.label,
            s.overflow(),
            s.hist_end_us,
            s.max_us()
        );
        for (x, c) in &s.points {
            d.push_str(&format!("{x} {c}\n"));
        }
        plots.push(format!(
            "  \"{name}\" using 1:2 with linespoints pt 7 ps 0.4 lw 2 lc rgb \"{}\" title \"{}\"",
            s.css_color(),
            gp_escape(&s.label)
        ));
        out.push((name, d));
    }
    let gp = format!(
        "# rtshield report: latency histograms, one curve per run and thread.\n\
         # Interactive: gnuplot -p plot.gp   (click a key entry to hide/show its curve)\n\
         # To a file:   gnuplot -e \"set terminal pngcairo size 1200,800; set output 'latency-gp.png'\" plot.gp\n\
         set termoption noenhanced\n\
         set title \"{}\"\n\
         set xlabel \"latency (us)\"\n\
         set ylabel \"samples\"\n\
         set logscale y\n\
         set yrange [0.8:*]\n\
         set xrange [0:*]\n\
         set grid\n\
         set key top right\n\
         plot \\\n{}\n",
        gp_escape(title),
        plots.join(", \\\n")
    );
    out.insert(0, ("plot.gp".to_string(), gp));

    let mut tplots = Vec::new();
    for run in runs {
        let Some(tl) = &run.timeline else { continue };
        for t in &tl.threads {
            let who = match t.cpu {
                Some(c) => format!("cpu{c}"),
                None => format!("t{}", t.thread),
            };
            let label = format!("{}:{who}", run.label);
            let name = format!("timeline-{}.dat", slugify(&label));
            let mut d = format!("# {label}\n# t_s max_us maxmax_us\n");
            for i in 0..t.t_s.len() {
                d.push_str(&format!(
                    "{} {} {}\n",
                    t.t_s[i], t.max_us[i], t.maxmax_us[i]
                ));
            }
            tplots.push(format!(
                "  \"{name}\" using 1:2 with dots title \"{} max per interval\", \\\n  \"{name}\" using 1:3 with lines lw 2 title \"{} running max\"",
                gp_escape(&label),
                gp_escape(&label)
            ));
            out.push((name, d));
        }
    }
    if !tplots.is_empty() {
        out.push((
            "timeline.gp".to_string(),
            format!(
                "# rtshield report: per-interval maximum (dots) and running maximum (line).\n\
                 set termoption noenhanced\nset title \"{}\"\nset xlabel \"time (s)\"\nset ylabel \"latency (us)\"\nset grid\nset key top left\n\
                 plot \\\n{}\n",
                gp_escape(title),
                tplots.join(", \\\n")
            ),
        ));
    }
    out
}

fn gp_escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}
