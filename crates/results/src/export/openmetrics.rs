//! `rtshield.prom`: the Prometheus text exposition format (0.0.4), which
//! node_exporter's textfile collector and Prometheus read, ended by
//! OpenMetrics' `# EOF` line (a comment to a 0.0.4 reader). Per measuring
//! thread: a latency histogram in seconds, the latency gauges, and
//! counters for overruns, missed periods and lost samples.
//!
//! The histogram's buckets are fixed (1 µs … 100 ms, 1-2-5 steps), not the
//! run's: a Prometheus histogram should keep the same `le` values across
//! runs and hosts so they can be aggregated. A bucket counts the samples
//! whose run-histogram bucket lies wholly at or below its bound; samples
//! beyond the run's histogram are only in `+Inf`. `_count` is every sample
//! the histogram holds (overflow included), `_sum` is `_count` × the mean.

use super::Exporter;
use crate::{RunResult, ThreadResult};
use std::fmt::Write as _;

pub const OPENMETRICS_FILE: &str = "rtshield.prom";

/// The `le` bounds, in ns.
pub const BOUNDS_NS: &[u64] = &[
    1_000,
    2_000,
    5_000,
    10_000,
    20_000,
    50_000,
    100_000,
    200_000,
    500_000,
    1_000_000,
    2_000_000,
    5_000_000,
    10_000_000,
    20_000_000,
    50_000_000,
    100_000_000,
];

pub struct OpenMetrics;

impl Exporter for OpenMetrics {
    fn name(&self) -> &'static str {
        "openmetrics"
    }
    fn files(&self, res: &RunResult) -> Vec<(String, String)> {
        vec![(OPENMETRICS_FILE.into(), to_openmetrics(res))]
    }
}

/// A label value, escaped as the format requires (`\\`, `\"`, `\n`).
fn label(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// Seconds from ns, printed as the shortest exact decimal.
fn secs(ns: f64) -> String {
    let v = ns / 1e9;
    if v.is_finite() {
        format!("{v}")
    } else {
        "NaN".into()
    }
}

fn labels(t: &ThreadResult) -> String {
    let cpu = t.cpu.map_or("none".into(), |c| c.to_string());
    format!("cpu=\"{}\",thread=\"{}\"", label(&cpu), t.index)
}

/// Cumulative counts at each of [`BOUNDS_NS`], then the total; None
/// without a histogram.
fn cumulative(t: &ThreadResult) -> Option<(Vec<u64>, u64)> {
    let h = t.histogram.as_ref()?;
    let res = h.resolution_ns.max(1);
    let total: u64 = h.counts.iter().map(|c| c[1]).sum::<u64>() + h.overflow + h.underflow;
    let out = BOUNDS_NS
        .iter()
        .map(|&le| {
            // Bucket i holds [i·res, (i+1)·res - 1] ns.
            h.underflow
                + h.counts
                    .iter()
                    .filter(|c| (c[0] + 1) * res - 1 <= le)
                    .map(|c| c[1])
                    .sum::<u64>()
        })
        .collect();
    Some((out, total))
}

/// A metric family: name, help, and its value for a thread (None: the
/// value is unknown, and the thread has no sample line).
type Family<T> = (&'static str, &'static str, fn(&ThreadResult) -> Option<T>);

/// The file's text.
pub fn to_openmetrics(res: &RunResult) -> String {
    let mut s = String::new();
    let th = &res.threads;
    s.push_str("# HELP rtshield_latency_seconds Wake-up latency of each measuring thread.\n");
    s.push_str("# TYPE rtshield_latency_seconds histogram\n");
    for t in th {
        let l = labels(t);
        let Some((cum, total)) = cumulative(t) else {
            continue;
        };
        for (b, c) in BOUNDS_NS.iter().zip(&cum) {
            let _ = writeln!(
                s,
                "rtshield_latency_seconds_bucket{{{l},le=\"{}\"}} {c}",
                secs(*b as f64)
            );
        }
        let _ = writeln!(
            s,
            "rtshield_latency_seconds_bucket{{{l},le=\"+Inf\"}} {total}"
        );
        let _ = writeln!(
            s,
            "rtshield_latency_seconds_sum{{{l}}} {}",
            secs(t.avg_ns * total as f64)
        );
        let _ = writeln!(s, "rtshield_latency_seconds_count{{{l}}} {total}");
    }
    let gauges: [Family<f64>; 3] = [
        (
            "rtshield_latency_max_seconds",
            "Largest wake-up latency of each thread.",
            |t| Some(t.max_ns as f64),
        ),
        (
            "rtshield_latency_min_seconds",
            "Smallest wake-up latency of each thread.",
            |t| Some(t.min_ns as f64),
        ),
        (
            "rtshield_latency_p99_9_seconds",
            "99.9th percentile of the wake-up latency of each thread.",
            |t| t.percentiles.get("99.9").map(|v| *v as f64),
        ),
    ];
    for (name, help, f) in gauges {
        let _ = writeln!(s, "# HELP {name} {help}");
        let _ = writeln!(s, "# TYPE {name} gauge");
        for t in th {
            if let Some(v) = f(t) {
                let _ = writeln!(s, "{name}{{{}}} {}", labels(t), secs(v));
            }
        }
    }
    let counters: [Family<u64>; 4] = [
        ("rtshield_samples_total", "Wake-ups measured.", |t| {
            t.samples
        }),
        (
            "rtshield_overruns_total",
            "Wake-ups later than the following period.",
            |t| t.overruns,
        ),
        (
            "rtshield_missed_periods_total",
            "Periods skipped because of overruns.",
            |t| t.missed_periods,
        ),
        (
            "rtshield_lost_samples_total",
            "Samples the measuring ring could not take.",
            |t| t.lost,
        ),
    ];
    for (name, help, f) in counters {
        let _ = writeln!(s, "# HELP {name} {help}");
        let _ = writeln!(s, "# TYPE {name} counter");
        for t in th {
            if let Some(v) = f(t) {
                let _ = writeln!(s, "{name}{{{}}} {v}", labels(t));
            }
        }
    }
    s.push_str("# HELP rtshield_run_duration_seconds Time measured so far.\n");
    s.push_str("# TYPE rtshield_run_duration_seconds gauge\n");
    if let Some(d) = res.duration_s {
        let _ = writeln!(s, "rtshield_run_duration_seconds {}", secs(d * 1e9));
    }
    s.push_str("# EOF\n");
    s
}
