//! Table 1.1 of the ARTiS thesis from `measure --split`: per
//! configuration, the kernel latency (timer expiry → hrtimer handler,
//! the thesis's t1 − t0: the split's `irq` part) and the user latency
//! (timer expiry → the thread running in user space, t3 − t0: the run's
//! own samples), each at 99.999 % and maximum. docs/trace.md gives the
//! mapping and its limits.

use crate::table::{pct_text, q, NOT_ENOUGH};
use rtshield_results::{percentile_supported, RunResult};
use rtshield_text::{markdown_cell, markup_text};

/// The thesis's columns (its "Noyau" and "Utilisateur"), then how many
/// wake-ups the kernel column covers out of the run's samples.
pub(crate) const HEAD: [&str; 6] = [
    "configuration",
    "kernel p99.999 (µs)",
    "kernel max (µs)",
    "user p99.999 (µs)",
    "user max (µs)",
    "wake-ups split / samples",
];

/// What the table means, under it.
pub(crate) const NOTE: &str = "The ARTiS thesis's Table 1.1 columns. Kernel = the split's IRQ part (the timer's requested expiry → the hrtimer handler, ≈ t1 − t0), over the wake-ups whose trace events were all seen; user = the run's own latency (the expiry → the thread running again in user space, t3 − t0), over every sample. p99.999 needs 10⁵ samples. See docs/trace.md.";

/// µs with one decimal.
fn us(ns: i64) -> String {
    format!("{:.1}", ns as f64 / 1000.0)
}

/// A p99.999 cell: the value, or [`NOT_ENOUGH`] below 10⁵ samples.
fn p99999(p: &std::collections::BTreeMap<String, i64>, n: u64) -> String {
    if !percentile_supported("99.999", n) {
        return NOT_ENOUGH.into();
    }
    p.get("99.999").map_or(NOT_ENOUGH.into(), |v| us(*v))
}

/// One row per thread with split data: (`label`, or `label cpuN` when the
/// run has several threads). Empty when no run was split.
pub(crate) fn rows<'a>(
    runs: impl IntoIterator<Item = (String, &'a RunResult)>,
) -> Vec<[String; 6]> {
    let mut out = Vec::new();
    for (label, r) in runs {
        let several = r.threads.len() > 1;
        for t in &r.threads {
            let Some(sp) = &t.split else { continue };
            let config = match (several, t.cpu) {
                (true, Some(c)) => format!("{label} cpu{c}"),
                (true, None) => format!("{label} thread {}", t.index),
                _ => label.clone(),
            };
            // A part with no wake-up split holds no measured value.
            let kmax = match sp.irq.max_ns {
                Some(m) if sp.samples > 0 => us(m),
                _ => "?".to_string(),
            };
            out.push([
                config,
                p99999(&sp.irq.percentiles, sp.samples),
                kmax,
                pct_text(t, "99.999", us),
                t.max_ns.map_or("?".into(), us),
                format!("{} / {}", sp.samples, q(t.samples)),
            ]);
        }
    }
    out
}

/// The table as Markdown (empty without rows), headed `heading`.
pub(crate) fn markdown(rows: &[[String; 6]], heading: &str) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let mut m = format!(
        "\n{heading}\n\n| {} |\n|---|{}\n",
        HEAD.join(" | "),
        "---:|".repeat(HEAD.len() - 1)
    );
    for r in rows {
        let cells: Vec<String> = r.iter().map(|c| markdown_cell(c)).collect();
        m.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    m.push_str(&format!("\n{NOTE}\n"));
    m
}

/// The table as HTML (empty without rows), headed `heading` (an `<h2>`
/// or `<h3>` element, already markup).
pub(crate) fn html(rows: &[[String; 6]], heading: &str) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let mut h = format!("{heading}\n<table class=\"table11\"><tr>");
    for c in HEAD {
        h.push_str(&format!("<th>{}</th>", markup_text(c)));
    }
    h.push_str("</tr>\n");
    for r in rows {
        h.push_str("<tr>");
        for c in r {
            h.push_str(&format!("<td>{}</td>", markup_text(c)));
        }
        h.push_str("</tr>\n");
    }
    h.push_str(&format!(
        "</table>\n<p class=\"hint\">{}</p>\n",
        markup_text(NOTE)
    ));
    h
}

#[cfg(test)]
mod tests {
    use super::{rows, us, NOT_ENOUGH};
    use rtshield_results::{LatencyPart, PercentileBound, SplitResult, BEYOND_HISTOGRAM};

    /// The user side follows the report table's rule for a value the
    /// source did not record: `?` (never 0, never the maximum), `≥N` for
    /// a bound, "not enough samples" only when the count is known.
    #[test]
    fn the_user_side_shows_unknown_bounded_and_not_enough_as_the_report_table() {
        let mut r = crate::synth_run_result("x", 1, &[1], 2000, 10.0, 0.1, 200);
        let t = &mut r.threads[0];
        let part = LatencyPart {
            min_ns: Some(1000),
            max_ns: Some(33_000),
            avg_ns: Some(2000.0),
            histogram: t.histogram.clone().unwrap(),
            percentiles: t.percentiles.clone(),
        };
        t.split = Some(SplitResult {
            samples: 1990,
            unsplit: None,
            irq: part.clone(),
            thread: part,
        });
        let max = us(t.max_ns.unwrap());
        let row = |r: &rtshield_results::RunResult| rows([("cfg".to_string(), r)]).remove(0);
        assert_eq!(row(&r)[3], NOT_ENOUGH, "2000 samples: no p99.999");
        // No histogram, no count: unknown.
        let t = &mut r.threads[0];
        (t.samples, t.histogram, t.hist_stats) = (None, None, None);
        t.percentiles.clear();
        let cells = row(&r);
        assert_eq!(cells[3], "?");
        assert_eq!(cells[4], max, "the maximum is exact");
        assert_eq!(cells[5], "1990 / ?");
        // Only a bound: at least it.
        let t = &mut r.threads[0];
        t.samples = Some(200_000);
        t.percentile_bounds.insert(
            "99.999".into(),
            PercentileBound {
                at_least_ns: 41_000,
                reason: BEYOND_HISTOGRAM.into(),
            },
        );
        let cells = row(&r);
        assert_eq!(cells[3], "≥41.0");
        assert_eq!(cells[5], "1990 / 200000");
    }
}
