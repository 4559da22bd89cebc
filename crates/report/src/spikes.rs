//! The "spikes" section: what kernel tracing found in each run
//! (`--trace-on`: the explained late wake-ups; `--split`: IRQ vs thread
//! latency per thread). Empty for runs that did not trace.

use crate::load::Run;
use rtshield_results::spikes_summary;
use rtshield_results::{LatencyPart, RunResult};
use rtshield_text::markdown_cell;
use rtshield_text::markup_text as esc;

fn us(ns: i64) -> String {
    format!("{:.1}", ns as f64 / 1000.0)
}

/// The spike's verdict, followed by the drift events that may have
/// happened within [`DRIFT_SPIKE_WINDOW_NS`](rtshield_results::DRIFT_SPIKE_WINDOW_NS)
/// before it (`after drift: irq_affinity irq 36 (eth0): 0 → 0-1`), so a
/// spike names the change that may have caused it.
fn verdict(r: &RunResult, expected_ns: u64, verdict: &str) -> String {
    use rtshield_results::{
        drift_before_spike as before_spike, DRIFT_SPIKE_WINDOW_NS as SPIKE_WINDOW_NS,
    };
    let near = before_spike(&r.drift, expected_ns, SPIKE_WINDOW_NS);
    if near.is_empty() {
        return verdict.to_string();
    }
    let named: Vec<String> = near
        .iter()
        .map(|e| {
            format!(
                "{} {}: {} → {}",
                e.kind,
                e.object,
                e.before.as_deref().unwrap_or("(absent)"),
                e.after.as_deref().unwrap_or("(absent)")
            )
        })
        .collect();
    format!("{verdict}; after drift: {}", named.join("; "))
}

fn traced(runs: &[Run]) -> impl Iterator<Item = (&Run, &rtshield_results::TraceResult)> {
    runs.iter()
        .filter_map(|r| r.result.trace.as_ref().map(|t| (r, t)))
}

fn part_cells(p: &LatencyPart) -> [String; 4] {
    let pct = |k: &str| p.percentiles.get(k).map_or("-".into(), |v| us(*v));
    // `?`: no wake-up split, the maximum is unknown.
    [
        pct("50"),
        pct("99"),
        pct("99.9"),
        p.max_ns.map_or("?".into(), us),
    ]
}

/// Split rows: (thread, samples, irq p50 p99 p99.9 max, thread p50 p99 p99.9 max), µs.
fn split_rows(r: &RunResult) -> Vec<Vec<String>> {
    r.threads
        .iter()
        .filter_map(|t| {
            let sp = t.split.as_ref()?;
            let mut row = vec![t.index.to_string(), sp.samples.to_string()];
            row.extend(part_cells(&sp.irq));
            row.extend(part_cells(&sp.thread));
            Some(row)
        })
        .collect()
}

const SPLIT_HEAD: [&str; 10] = [
    "thread",
    "wake-ups",
    "IRQ p50",
    "IRQ p99",
    "IRQ p99.9",
    "IRQ max",
    "thread p50",
    "thread p99",
    "thread p99.9",
    "thread max",
];

/// Table 1.1 (the ARTiS thesis) over the runs' split data.
fn table11(runs: &[Run]) -> Vec<[String; 6]> {
    crate::table11::rows(runs.iter().map(|r| (r.label.clone(), &r.result)))
}

/// Heading of Table 1.1 in a report.
const TABLE11: &str = "Table 1.1 (the ARTiS thesis): kernel and user latency";

/// The HTML section (empty when no run traced).
pub(crate) fn html(runs: &[Run]) -> String {
    let mut h = String::new();
    // Table 1.1 first: the thesis's view of the split, then the detail.
    let t11 = crate::table11::html(
        &table11(runs),
        &format!("<h2 id=\"table11\">{}</h2>", esc(TABLE11)),
    );
    for (run, t) in traced(runs) {
        if h.is_empty() {
            h.push_str("<h2 id=\"spikes\">Spikes</h2>\n<p class=\"hint\">Late wake-ups explained from kernel trace events; split: timer IRQ latency vs thread latency (µs). See docs/trace.md.</p>\n");
        }
        h.push_str(&format!(
            "<h3>{}</h3>\n<p>{}</p>\n",
            esc(&run.label),
            esc(&spikes_summary(t))
        ));
        if !t.spikes.is_empty() {
            h.push_str("<table class=\"spikes\"><tr><th>#</th><th>CPU</th><th>thread</th><th>late (µs)</th><th>IRQ latency (µs)</th><th>thread latency (µs)</th><th>verdict</th></tr>\n");
            for (i, s) in t.spikes.iter().enumerate() {
                h.push_str(&format!(
                    "<tr><td>{}</td><td>{}</td><td>{} ({})</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                    i + 1,
                    s.cpu,
                    esc(&s.comm),
                    s.pid,
                    us(s.latency_ns as i64),
                    s.irq_latency_ns.map_or("-".into(), us),
                    s.thread_latency_ns.map_or("-".into(), |v| us(v as i64)),
                    esc(&verdict(&run.result, s.expected_ns, &s.verdict))
                ));
            }
            h.push_str("</table>\n");
        }
        let rows = split_rows(&run.result);
        if !rows.is_empty() {
            h.push_str("<table class=\"split\"><tr>");
            for c in SPLIT_HEAD {
                h.push_str(&format!("<th>{c}</th>"));
            }
            h.push_str("</tr>\n");
            for r in rows {
                h.push_str("<tr>");
                for c in r {
                    h.push_str(&format!("<td>{}</td>", esc(&c)));
                }
                h.push_str("</tr>\n");
            }
            h.push_str("</table>\n");
        }
    }
    h + &t11
}

/// The Markdown section for `summary.md` (empty when no run traced).
pub(crate) fn markdown(runs: &[Run]) -> String {
    let mut m = String::new();
    for (run, t) in traced(runs) {
        if m.is_empty() {
            m.push_str("\n## Spikes\n");
        }
        // The label and the summary (a reason from the system, `no trace:
        // …`) are data: through the Markdown encoder like every cell.
        m.push_str(&format!(
            "\n**{}**: {}\n",
            markdown_cell(&run.label),
            markdown_cell(&spikes_summary(t))
        ));
        if !t.spikes.is_empty() {
            m.push_str("\n| # | CPU | thread | late (µs) | verdict |\n|---|---|---|---|---|\n");
            for (i, s) in t.spikes.iter().enumerate() {
                m.push_str(&format!(
                    "| {} | {} | {} ({}) | {} | {} |\n",
                    i + 1,
                    s.cpu,
                    markdown_cell(&s.comm),
                    s.pid,
                    us(s.latency_ns as i64),
                    markdown_cell(&verdict(&run.result, s.expected_ns, &s.verdict))
                ));
            }
        }
        let rows = split_rows(&run.result);
        if !rows.is_empty() {
            m.push_str(&format!(
                "\n| {} |\n|{}\n",
                SPLIT_HEAD.join(" | "),
                "---|".repeat(SPLIT_HEAD.len())
            ));
            for r in rows {
                let cells: Vec<String> = r.iter().map(|c| markdown_cell(c)).collect();
                m.push_str(&format!("| {} |\n", cells.join(" | ")));
            }
        }
    }
    m + &crate::table11::markdown(&table11(runs), &format!("## {TABLE11}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::{synth_run_result, write_synth_run_dir};
    use rtshield_results::{Drift, DriftEffect as Effect, DriftEvent, DriftWatch};

    #[test]
    fn no_traced_run_no_section() {
        let r = synth_run_result("plain", 2, &[1], 1000, 10.0, 0.0, 100);
        let d = tempfile::tempdir().unwrap();
        let a = d.path().join("a");
        write_synth_run_dir(&a, &r, None).unwrap();
        let runs = crate::load::load_all(&[a], &[]).unwrap();
        assert_eq!(html(&runs), "");
        assert_eq!(markdown(&runs), "");
    }

    #[test]
    fn a_spike_names_the_drift_just_before_it() {
        let mut r = synth_run_result("r", 1, &[1], 100, 10.0, 0.0, 100);
        assert_eq!(verdict(&r, 5_000_000_000, "thread"), "thread");
        let zero = 1_000_000_000;
        r.drift = Drift {
            drift: Some(vec![DriftEvent {
                at_ns: 3_000_000_000,
                since_ns: 2_000_000_000,
                kind: "irq_affinity".into(),
                object: "irq 36 (eth0)".into(),
                before: Some("0".into()),
                after: Some("0-1".into()),
                effect: Effect::Exposes,
                cpus: "1".into(),
            }]),
            drift_watch: Some(DriftWatch {
                mono_zero_ns: Some(zero),
                ..Default::default()
            }),
        };
        // 10 s into the run: 7 s after the change.
        assert_eq!(
            verdict(&r, zero + 10_000_000_000, "irq"),
            "irq; after drift: irq_affinity irq 36 (eth0): 0 → 0-1"
        );
        // Before the change, or long after it: not named.
        assert_eq!(verdict(&r, zero + 1_000_000_000, "irq"), "irq");
        assert_eq!(verdict(&r, zero + 100_000_000_000, "irq"), "irq");
    }
}
