//! `results.csv`: one row per thread, provenance repeated on each row.

use super::Exporter;
use crate::unknown::{or, pct_csv};
use crate::{RunResult, PERCENTILES};

/// The name of the CSV file.
pub const CSV_FILE: &str = "results.csv";

/// The `results.csv` exporter: one row per thread ([`csv_header`] columns).
pub struct Csv;

impl Exporter for Csv {
    fn name(&self) -> &'static str {
        "csv"
    }
    fn files(&self, res: &RunResult) -> Vec<(String, String)> {
        vec![(CSV_FILE.into(), to_csv(res))]
    }
}

/// The `--split` columns, appended to [`csv_header`]'s only when a
/// thread of the run was split (so other runs keep the exact header).
pub fn csv_split_header() -> Vec<String> {
    let mut h = Vec::new();
    for part in ["irq", "thread"] {
        h.push(format!("{part}_samples"));
        h.push(format!("{part}_min_ns"));
        h.push(format!("{part}_avg_ns"));
        h.push(format!("{part}_max_ns"));
        h.extend(PERCENTILES.iter().map(|k| format!("{part}_p{k}_ns")));
    }
    h
}

/// The CSV columns, in order.
pub fn csv_header() -> Vec<String> {
    let mut h: Vec<String> = [
        "label",
        "index",
        "tid",
        "cpu",
        "policy",
        "priority",
        "requested_policy",
        "period_ns",
        "mode",
        "samples",
        "min_ns",
        "max_ns",
        "avg_ns",
        "cur_ns",
        "samples_h",
        "avg_h_ns",
        "median_h_ns",
        "std_h_ns",
        "mode_h_ns",
        "overflow",
        "underflow",
        "overruns",
        "missed_periods",
        "lost",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    h.extend(PERCENTILES.iter().map(|k| format!("p{k}_ns")));
    h.push("corrected_samples".into());
    h.extend(PERCENTILES.iter().map(|k| format!("corrected_p{k}_ns")));
    h.extend(
        [
            "started_at",
            "duration_s",
            "end_reason",
            "kernel_release",
            "preempt",
            "hostname",
            "command",
            "warnings",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    h
}

/// `results.csv`: a header and one row per thread; the last columns repeat
/// the run's provenance so a row is never orphaned.
pub fn to_csv(res: &RunResult) -> String {
    let split = res.threads.iter().any(|t| t.split.is_some());
    let mut header = csv_header();
    if split {
        header.extend(csv_split_header());
    }
    let mut rows = vec![header];
    let si = &res.sysinfo;
    for t in &res.threads {
        // Unknown values are empty cells; a percentile bound is `>=N`.
        let hs = t.hist_stats.as_ref();
        let h = t.histogram.as_ref();
        let mut row: Vec<String> = vec![
            res.label.clone().unwrap_or_default(),
            t.index.to_string(),
            or(t.tid, ""),
            or(t.cpu, ""),
            or(t.policy, ""),
            or(t.priority, ""),
            or(t.requested_policy, ""),
            or(t.period_ns, ""),
            or(res.settings.mode.as_ref(), ""),
            or(t.samples, ""),
            or(t.min_ns, ""),
            or(t.max_ns, ""),
            or(t.avg_ns.map(|a| format!("{a:.1}")), ""),
            or(t.cur_ns, ""),
            or(hs.map(|s| s.samples), ""),
            or(hs.map(|s| format!("{:.1}", s.avg_ns)), ""),
            or(hs.map(|s| s.median_ns), ""),
            or(hs.map(|s| format!("{:.1}", s.std_ns)), ""),
            or(hs.map(|s| s.mode_ns), ""),
            or(h.map(|h| h.overflow), ""),
            or(h.map(|h| h.underflow), ""),
            or(t.overruns, ""),
            or(t.missed_periods, ""),
            or(t.lost, ""),
        ];
        row.extend(PERCENTILES.iter().map(|k| pct_csv(t, k)));
        let c = t.corrected.as_ref();
        row.push(or(c.map(|c| c.samples), ""));
        row.extend(
            PERCENTILES
                .iter()
                .map(|k| or(c.and_then(|c| c.percentiles.get(*k)), "")),
        );
        row.push(or(res.started_at.as_ref(), ""));
        row.push(or(res.duration_s.map(|d| format!("{d:.3}")), ""));
        row.push(or(res.end_reason.as_ref(), ""));
        row.push(si.kernel_release.clone().unwrap_or_default());
        row.push(
            si.preempt_mode
                .clone()
                .or(si.preempt_model.clone())
                .unwrap_or_default(),
        );
        row.push(si.hostname.clone().unwrap_or_default());
        row.push(res.command.join(" "));
        row.push(res.warnings.join(" | "));
        if split {
            match &t.split {
                Some(sp) => {
                    for p in [&sp.irq, &sp.thread] {
                        row.push(sp.samples.to_string());
                        // Empty: unknown (no sample split).
                        row.push(or(p.min_ns, ""));
                        row.push(or(p.avg_ns.map(|a| format!("{a:.1}")), ""));
                        row.push(or(p.max_ns, ""));
                        row.extend(PERCENTILES.iter().map(|k| {
                            p.percentiles
                                .get(*k)
                                .map_or(String::new(), |v| v.to_string())
                        }));
                    }
                }
                None => row.extend(csv_split_header().iter().map(|_| String::new())),
            }
        }
        rows.push(row);
    }
    rtshield_text::csv_table(rows)
}
