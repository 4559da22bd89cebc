//! `rtshield.prom`: OpenMetrics 1.0 text, which Prometheus scrapes,
//! node_exporter's textfile collector reads (as the 0.0.4 text format: the
//! two agree on everything this file uses) and `promtool tsdb
//! create-blocks-from openmetrics` imports (with [`Timestamps::At`]). Per
//! measuring thread: a latency histogram in seconds, the latency gauges,
//! and counters for samples, overruns, missed periods and lost samples.
//!
//! The histogram's buckets are the fixed [`LE_BOUNDS_NS`] scale (1 µs …
//! 10 s, 1-2-5 steps), not the run's: a Prometheus histogram should keep
//! the same `le` values across runs and hosts so they can be aggregated.
//! Each bucket counts every sample at or below its bound, overflow included
//! (so `+Inf` equals `_count` and PromQL's `histogram_quantile` lands in
//! the right bucket): exactly, from [`ThreadResult::le_counts`]. A result
//! without them (an import, an older file) gives the buckets the linear
//! histogram settles: below the histogram's end, the buckets wholly at or
//! below the bound; at or above the maximum, every sample; a bound in
//! between has no sample line (unknown). `_sum` is the exact sum of the
//! samples in ns (the mean times the count, rounded to the ns it was
//! computed from), printed as an exact decimal, so `--metrics-file` and
//! `export` write the same digits.
//!
//! A value the result does not know (an unknown counter, an absent
//! percentile) has no sample line: "absent" to every Prometheus reader.
//!
//! The two text formats differ in one point this file uses: an OpenMetrics
//! counter family is named without `_total` (`# TYPE rtshield_samples
//! counter`, sample `rtshield_samples_total`), a 0.0.4 one with it. A 0.0.4
//! reader takes the OpenMetrics samples as untyped, and `promtool check
//! metrics` (a lint of the 0.0.4 format) says they have no help text;
//! [`to_prometheus_text`] writes the same figures in the 0.0.4 format
//! (`export --format prometheus`) for it.

use super::Exporter;
use crate::{RunResult, ThreadResult, LE_BOUNDS_NS};
use std::fmt::Write as _;

/// The file name when written beside the other result files.
pub const OPENMETRICS_FILE: &str = "rtshield.prom";

/// The `le` bounds, in ns (the results' fixed scale).
pub(crate) const BOUNDS_NS: &[u64] = &LE_BOUNDS_NS;

/// Whether every sample line carries a timestamp.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Timestamps {
    /// No timestamps: what a scrape and node_exporter's textfile collector
    /// want (the latter refuses a file with timestamps).
    #[default]
    None,
    /// Every sample at the end of the run (`started_at` + `duration_s`),
    /// OpenMetrics seconds: what `promtool tsdb create-blocks-from
    /// openmetrics` needs to import the file.
    At,
}

/// The OpenMetrics exporter.
#[derive(Debug, Clone, Copy, Default)]
pub struct OpenMetrics {
    /// Timestamps on the samples (`export --timestamps`).
    pub timestamps: Timestamps,
}

impl Exporter for OpenMetrics {
    fn name(&self) -> &'static str {
        "openmetrics"
    }
    fn files(&self, res: &RunResult) -> Vec<(String, String)> {
        vec![(
            OPENMETRICS_FILE.into(),
            to_openmetrics_with(res, self.timestamps),
        )]
    }
}

/// The Prometheus text format 0.0.4 exporter (`export --format prometheus`).
#[derive(Debug, Clone, Copy, Default)]
pub struct PrometheusText;

impl Exporter for PrometheusText {
    fn name(&self) -> &'static str {
        "prometheus"
    }
    fn files(&self, res: &RunResult) -> Vec<(String, String)> {
        vec![(OPENMETRICS_FILE.into(), to_prometheus_text(res))]
    }
}

/// Which text format is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dialect {
    /// OpenMetrics 1.0: counter families without `_total`, `# EOF`.
    OpenMetrics,
    /// Prometheus text 0.0.4: counter families named `…_total`.
    Text004,
}

/// A label value, escaped as the format requires (`\\`, `\"`, `\n`).
use rtshield_text::openmetrics::label_value as label;

/// Seconds from integer ns, as an exact decimal (`1.000000001`, `-0.5`).
fn secs_exact(ns: i128) -> String {
    let sign = if ns < 0 { "-" } else { "" };
    let a = ns.unsigned_abs();
    let frac = format!("{:09}", a % 1_000_000_000);
    let frac = frac.trim_end_matches('0');
    if frac.is_empty() {
        format!("{sign}{}", a / 1_000_000_000)
    } else {
        format!("{sign}{}.{frac}", a / 1_000_000_000)
    }
}

fn labels(t: &ThreadResult) -> String {
    let cpu = t.cpu.map_or("none".into(), |c| c.to_string());
    format!("cpu=\"{}\",thread=\"{}\"", label(&cpu), t.index)
}

/// Every sample the histogram holds: its buckets, overflow and underflow;
/// without a histogram (cyclictest without `-h`), the sample count, when
/// known. None: the thread has no histogram line at all.
fn total(t: &ThreadResult) -> Option<u64> {
    match &t.histogram {
        Some(h) => Some(
            h.counts
                .iter()
                .map(|c| c[1])
                .chain([h.overflow, h.underflow])
                .fold(0, u64::saturating_add),
        ),
        None => t.samples,
    }
}

/// The count at each of [`BOUNDS_NS`], None where the result cannot say.
fn cumulative(t: &ThreadResult) -> Vec<Option<u64>> {
    if let Some(le) = &t.le_counts {
        return BOUNDS_NS
            .iter()
            .map(|b| le.iter().find(|p| p[0] == *b).map(|p| p[1]))
            .collect();
    }
    let all = total(t);
    // At or above the maximum, every sample (none when it is unknown).
    let above_max = |le: u64| t.max_ns.is_some_and(|m| le as i64 >= m);
    let Some(h) = &t.histogram else {
        // No histogram: only the bounds at or above the maximum are known.
        return BOUNDS_NS
            .iter()
            .map(|&le| all.filter(|_| above_max(le)))
            .collect();
    };
    let res = h.resolution_ns.max(1);
    // Overflow samples are at or above this, at most the maximum.
    let overflow_from = h.buckets.saturating_mul(res);
    BOUNDS_NS
        .iter()
        .map(|&le| {
            if above_max(le) {
                all
            } else if le < overflow_from || h.overflow == 0 {
                // Bucket i holds [i·res, (i+1)·res - 1] ns.
                Some(
                    h.counts
                        .iter()
                        .filter(|c| {
                            (c[0].saturating_add(1))
                                .saturating_mul(res)
                                .saturating_sub(1)
                                <= le
                        })
                        .map(|c| c[1])
                        .fold(h.underflow, u64::saturating_add),
                )
            } else {
                None
            }
        })
        .collect()
}

/// The exact sum of the samples, in ns: the mean was computed from it
/// (0 for no sample; unknown when the mean is and there were samples).
fn sum_ns(t: &ThreadResult, count: u64) -> Option<i128> {
    match t.avg_ns {
        Some(a) => Some((a * count as f64).round() as i128),
        None => (count == 0).then_some(0),
    }
}

/// A metric family: name, help, and its value for a thread (None: unknown).
type Family<T> = (&'static str, &'static str, fn(&ThreadResult) -> Option<T>);

/// The file's text, without timestamps.
pub fn to_openmetrics(res: &RunResult) -> String {
    to_openmetrics_with(res, Timestamps::None)
}

/// The file's text; `ts` says whether samples carry a timestamp.
pub(crate) fn to_openmetrics_with(res: &RunResult, ts: Timestamps) -> String {
    render(res, ts, Dialect::OpenMetrics)
}

/// The same figures in the Prometheus text format 0.0.4 (what `promtool
/// check metrics` lints): counter families named `…_total`, no `# EOF`.
pub fn to_prometheus_text(res: &RunResult) -> String {
    render(res, Timestamps::None, Dialect::Text004)
}

/// The timestamp put after every sample (` <seconds>`), or nothing.
fn end_stamp(res: &RunResult, ts: Timestamps) -> String {
    match ts {
        Timestamps::None => String::new(),
        // The end of the run: unknown (no timestamp) when either is.
        Timestamps::At => res
            .started_at
            .as_deref()
            .and_then(super::cyclictest_json::parse_rfc3339)
            .zip(res.duration_s)
            .map(|(t, d)| {
                format!(
                    " {}",
                    secs_exact(t as i128 * 1_000_000_000 + (d.max(0.0) * 1e9).round() as i128)
                )
            })
            .unwrap_or_default(),
    }
}

fn render(res: &RunResult, ts: Timestamps, dialect: Dialect) -> String {
    let stamp = end_stamp(res, ts);
    if let Some(n) = &res.noise {
        return render_noise(res, n, &stamp, dialect);
    }
    let mut s = String::new();
    let th = &res.threads;
    family(
        &mut s,
        "rtshield_latency_seconds",
        "histogram",
        "Wake-up latency of each measuring thread.",
    );
    for t in th {
        let l = labels(t);
        let Some(all) = total(t) else {
            continue;
        };
        for (b, c) in BOUNDS_NS.iter().zip(cumulative(t)) {
            if let Some(c) = c {
                let _ = writeln!(
                    s,
                    "rtshield_latency_seconds_bucket{{{l},le=\"{}\"}} {c}{stamp}",
                    secs_exact(i128::from(*b))
                );
            }
        }
        let _ = writeln!(
            s,
            "rtshield_latency_seconds_bucket{{{l},le=\"+Inf\"}} {all}{stamp}"
        );
        let _ = writeln!(s, "rtshield_latency_seconds_count{{{l}}} {all}{stamp}");
        // OpenMetrics: a sum is a counter, never negative (samples below
        // zero are clock anomalies: then there is no sum line; nor when
        // it is unknown).
        if let Some(sum) = sum_ns(t, all).filter(|s| *s >= 0) {
            let _ = writeln!(
                s,
                "rtshield_latency_seconds_sum{{{l}}} {}{stamp}",
                secs_exact(sum)
            );
        }
    }
    let gauges: [Family<i64>; 3] = [
        (
            "rtshield_latency_max_seconds",
            "Largest wake-up latency of each thread.",
            |t| t.max_ns,
        ),
        (
            "rtshield_latency_min_seconds",
            "Smallest wake-up latency of each thread.",
            |t| t.min_ns,
        ),
        (
            "rtshield_latency_p99_9_seconds",
            "99.9th percentile of the wake-up latency of each thread.",
            |t| t.percentiles.get("99.9").copied(),
        ),
    ];
    for (name, help, f) in gauges {
        family(&mut s, name, "gauge", help);
        for t in th {
            if let Some(v) = f(t) {
                let _ = writeln!(s, "{name}{{{}}} {}{stamp}", labels(t), secs_exact(v.into()));
            }
        }
    }
    let counters: [Family<u64>; 4] = [
        ("rtshield_samples", "Wake-ups measured.", |t| t.samples),
        (
            "rtshield_overruns",
            "Wake-ups later than the following period.",
            |t| t.overruns,
        ),
        (
            "rtshield_missed_periods",
            "Periods skipped because of overruns.",
            |t| t.missed_periods,
        ),
        (
            "rtshield_lost_samples",
            "Samples the measuring ring could not take.",
            |t| t.lost,
        ),
    ];
    for (name, help, f) in counters {
        // OpenMetrics: the family is named without `_total`, its sample with.
        match dialect {
            Dialect::OpenMetrics => family(&mut s, name, "counter", help),
            Dialect::Text004 => family(&mut s, &format!("{name}_total"), "counter", help),
        }
        for t in th {
            if let Some(v) = f(t) {
                let _ = writeln!(s, "{name}_total{{{}}} {v}{stamp}", labels(t));
            }
        }
    }
    family(
        &mut s,
        "rtshield_run_duration_seconds",
        "gauge",
        "Time measured so far.",
    );
    // In whole ns (as measured), so a float read back from results.json
    // prints the same digits as the measurement's own.
    // Unknown (an import of a `-h` text): no sample line.
    if let Some(d) = res.duration_s {
        let _ = writeln!(
            s,
            "rtshield_run_duration_seconds {}{stamp}",
            secs_exact((d.max(0.0) * 1e9).round() as i128)
        );
    }
    if dialect == Dialect::OpenMetrics {
        s.push_str("# EOF\n");
    }
    s
}

/// A counter family's header: OpenMetrics names the family without
/// `_total`, 0.0.4 with it.
fn counter_family(s: &mut String, name: &str, help: &str, dialect: Dialect) {
    match dialect {
        Dialect::OpenMetrics => family(s, name, "counter", help),
        Dialect::Text004 => family(s, &format!("{name}_total"), "counter", help),
    }
}

/// A noise run (`rtshield noise`): per CPU the histogram of noise lengths
/// (same fixed `le` scale), the share of the CPU available, the longest
/// single noise, and counters for runtime, noise time, noise events, steal
/// time and the events per osnoise class (`class` label, traced runs only).
/// A figure the run does not know has no line.
fn render_noise(res: &RunResult, n: &crate::NoiseResult, stamp: &str, dialect: Dialect) -> String {
    let mut s = String::new();
    noise_histograms(&mut s, res, n, stamp);
    noise_figures(&mut s, n, stamp, dialect);
    family(
        &mut s,
        "rtshield_run_duration_seconds",
        "gauge",
        "Time measured so far.",
    );
    if let Some(d) = res.duration_s {
        let _ = writeln!(
            s,
            "rtshield_run_duration_seconds {}{stamp}",
            secs_exact((d.max(0.0) * 1e9).round() as i128)
        );
    }
    if dialect == Dialect::OpenMetrics {
        s.push_str("# EOF\n");
    }
    s
}

/// The `cpu` label of a noise run's line.
fn cpu_label(c: u32) -> String {
    format!("cpu=\"{c}\"")
}

/// A noise run's histogram family: per CPU the noise lengths on the fixed
/// `le` scale.
fn noise_histograms(s: &mut String, res: &RunResult, n: &crate::NoiseResult, stamp: &str) {
    family(
        s,
        "rtshield_noise_seconds",
        "histogram",
        "Length of each noise event (a gap in a spinning thread's clock reads above the threshold).",
    );
    for (t, c) in res.threads.iter().zip(&n.cpus) {
        // Unknown count: no line (never a 0 or a guess).
        let Some(all) = total(t) else {
            continue;
        };
        let l = cpu_label(c.cpu);
        for (b, v) in BOUNDS_NS.iter().zip(cumulative(t)) {
            if let Some(v) = v {
                let _ = writeln!(
                    s,
                    "rtshield_noise_seconds_bucket{{{l},le=\"{}\"}} {v}{stamp}",
                    secs_exact(i128::from(*b))
                );
            }
        }
        let _ = writeln!(
            s,
            "rtshield_noise_seconds_bucket{{{l},le=\"+Inf\"}} {all}{stamp}"
        );
        let _ = writeln!(s, "rtshield_noise_seconds_count{{{l}}} {all}{stamp}");
        // The exact sum is the noise time of the events in the histogram:
        // known exactly only when none was lost.
        if c.lost == 0 {
            let _ = writeln!(
                s,
                "rtshield_noise_seconds_sum{{{l}}} {}{stamp}",
                secs_exact(i128::from(c.noise_ns))
            );
        }
    }
}

/// A noise run's per-CPU figures: % available, longest noise, the
/// counters and (traced runs) the events per osnoise class.
fn noise_figures(s: &mut String, n: &crate::NoiseResult, stamp: &str, dialect: Dialect) {
    family(
        s,
        "rtshield_noise_cpu_available_ratio",
        "gauge",
        "Share of the spinning time left to the thread: (runtime - noise) / runtime (osnoise's % CPU available / 100).",
    );
    for c in &n.cpus {
        if let Some(p) = c.available_pct {
            let _ = writeln!(
                s,
                "rtshield_noise_cpu_available_ratio{{{}}} {}{stamp}",
                cpu_label(c.cpu),
                p / 100.0
            );
        }
    }
    family(
        s,
        "rtshield_noise_max_single_seconds",
        "gauge",
        "Longest single noise event.",
    );
    for c in n.cpus.iter().filter(|c| c.events > 0) {
        let Some(m) = c.max_single_ns else { continue };
        let _ = writeln!(
            s,
            "rtshield_noise_max_single_seconds{{{}}} {}{stamp}",
            cpu_label(c.cpu),
            secs_exact(i128::from(m))
        );
    }
    type Counter = (
        &'static str,
        &'static str,
        fn(&crate::CpuNoise) -> Option<String>,
    );
    let counters: [Counter; 5] = [
        (
            "rtshield_noise_runtime_seconds",
            "Time spent spinning.",
            |c| Some(secs_exact(i128::from(c.runtime_ns))),
        ),
        (
            "rtshield_noise_time_seconds",
            "Time inside noise events.",
            |c| Some(secs_exact(i128::from(c.noise_ns))),
        ),
        ("rtshield_noise_events", "Noise events.", |c| {
            Some(c.events.to_string())
        }),
        (
            "rtshield_noise_steal_seconds",
            "VM steal time of the CPU over the run (/proc/stat).",
            |c| c.steal_ns.map(|v| secs_exact(i128::from(v))),
        ),
        (
            "rtshield_noise_lost_events",
            "Noise events the ring could not take (in the totals, not in the histogram).",
            |c| Some(c.lost.to_string()),
        ),
    ];
    for (name, help, f) in counters {
        counter_family(s, name, help, dialect);
        for c in &n.cpus {
            if let Some(v) = f(c) {
                let _ = writeln!(s, "{name}_total{{{}}} {v}{stamp}", cpu_label(c.cpu));
            }
        }
    }
    let name = "rtshield_noise_class_events";
    counter_family(
        s,
        name,
        "Noise events per osnoise class (HW: no kernel event; LOST: trace events dropped, cause unknown; traced runs only).",
        dialect,
    );
    for c in &n.cpus {
        let Some(classes) = &c.classes else { continue };
        for k in crate::NOISE_COLUMNS {
            if let Some(v) = classes.get(k) {
                let _ = writeln!(
                    s,
                    "{name}_total{{{},class=\"{}\"}} {v}{stamp}",
                    cpu_label(c.cpu),
                    label(k)
                );
            }
        }
    }
    let name = "rtshield_noise_class_time_seconds";
    counter_family(
        s,
        name,
        "Time inside noise events per class (unexplained: no kernel event; lost: trace events dropped, cause unknown; traced runs only).",
        dialect,
    );
    for c in &n.cpus {
        for (k, v) in c.class_ns.iter().flatten() {
            let _ = writeln!(
                s,
                "{name}_total{{{},class=\"{}\"}} {}{stamp}",
                cpu_label(c.cpu),
                label(k.name()),
                secs_exact(i128::from(*v))
            );
        }
    }
}

/// A family's `# HELP` and `# TYPE` lines.
fn family(s: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(s, "# HELP {name} {help}");
    let _ = writeln!(s, "# TYPE {name} {kind}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_decimal_seconds() {
        assert_eq!(secs_exact(504_031_722), "0.504031722");
        assert_eq!(secs_exact(1_000_000_000), "1");
        assert_eq!(secs_exact(1_000_000_001), "1.000000001");
        assert_eq!(secs_exact(-500_000_000), "-0.5");
        assert_eq!(secs_exact(0), "0");
    }

    /// A one-CPU noise run: 3 events (2, 5 and 40 µs), traced.
    fn noise_run() -> RunResult {
        let mut r = crate::example::example_result();
        r.kind = crate::RunKind::Noise;
        r.threads.truncate(1);
        let t = &mut r.threads[0];
        t.cpu = Some(1);
        let h = t.histogram.as_mut().expect("the example has histograms");
        h.resolution_ns = 1_000;
        h.buckets = 31;
        h.counts = vec![[2, 1], [5, 1]];
        h.overflow = 1;
        h.underflow = 0;
        t.samples = Some(3);
        t.max_ns = Some(40_000);
        t.le_counts = None;
        let mut classes = std::collections::BTreeMap::new();
        for (k, v) in [
            ("HW", 1),
            ("NMI", 0),
            ("IRQ", 2),
            ("SIRQ", 0),
            ("THREAD", 0),
            ("LOST", 1),
        ] {
            classes.insert(k.to_string(), v);
        }
        let class_ns = [
            (crate::NoiseClass::Unexplained, 40_000),
            (crate::NoiseClass::Lost, 5_000),
        ]
        .into();
        r.noise = Some(crate::NoiseResult {
            threshold_ns: 1_000,
            runtime_ns: 1_000_000_000,
            period_ns: 1_000_000_000,
            cpus: vec![crate::CpuNoise {
                cpu: 1,
                tid: 9,
                policy: "other".into(),
                priority: None,
                runtime_ns: 1_000_000_000,
                noise_ns: 47_000,
                available_pct: Some(99.9953),
                max_single_ns: Some(40_000),
                events: 3,
                lost: 0,
                iterations: 1_000,
                iterations_per_us: Some(1.0),
                min_gap_ns: Some(20),
                windows: 1,
                windows_missed: 0,
                steal_ns: None,
                classes: Some(classes),
                by_class: None,
                unexplained_ns: Some(40_000),
                lost_ns: Some(5_000),
                class_ns: Some(class_ns),
                offenders: Some(vec![]),
                longest: vec![],
                tail: None,
            }],
            trace: None,
        });
        r
    }

    #[test]
    fn a_noise_run_has_noise_families_and_no_latency_ones() {
        let r = noise_run();
        let t = to_openmetrics(&r);
        assert!(!t.contains("rtshield_latency"), "{t}");
        for line in [
            "rtshield_noise_seconds_bucket{cpu=\"1\",le=\"0.00001\"} 2",
            "rtshield_noise_seconds_bucket{cpu=\"1\",le=\"+Inf\"} 3",
            "rtshield_noise_seconds_count{cpu=\"1\"} 3",
            "rtshield_noise_seconds_sum{cpu=\"1\"} 0.000047",
            "rtshield_noise_cpu_available_ratio{cpu=\"1\"} 0.999953",
            "rtshield_noise_max_single_seconds{cpu=\"1\"} 0.00004",
            "rtshield_noise_events_total{cpu=\"1\"} 3",
            "rtshield_noise_class_events_total{cpu=\"1\",class=\"IRQ\"} 2",
            // The gaps where trace events were lost, apart from HW.
            "rtshield_noise_class_events_total{cpu=\"1\",class=\"LOST\"} 1",
            "rtshield_noise_class_events_total{cpu=\"1\",class=\"HW\"} 1",
            "rtshield_noise_class_time_seconds_total{cpu=\"1\",class=\"unexplained\"} 0.00004",
            "rtshield_noise_class_time_seconds_total{cpu=\"1\",class=\"lost\"} 0.000005",
        ] {
            assert!(t.lines().any(|l| l == line), "{line} missing:\n{t}");
        }
        // Steal time not read: no line (unknown), not 0.
        assert!(!t.contains("rtshield_noise_steal_seconds_total{"), "{t}");
        assert!(t.ends_with("# EOF\n"));
        // 0.0.4: counter families named with _total.
        let p = to_prometheus_text(&r);
        assert!(
            p.contains("# TYPE rtshield_noise_events_total counter"),
            "{p}"
        );
        assert!(!p.contains("# EOF"));
        // The JSON round trip keeps the kind and the noise part.
        let back = crate::parse_json(&crate::to_json(&r), std::path::Path::new("r.json")).unwrap();
        assert_eq!(back, r);
    }

    #[test]
    fn a_noise_run_s_unknown_values_have_no_line() {
        let mut r = noise_run();
        let t = &mut r.threads[0];
        t.histogram = None;
        t.samples = None;
        r.duration_s = None;
        let n = r.noise.as_mut().unwrap();
        n.cpus[0].available_pct = None;
        for text in [to_openmetrics(&r), to_prometheus_text(&r)] {
            for family in [
                "rtshield_noise_seconds_bucket{",
                "rtshield_noise_seconds_count{",
                "rtshield_noise_seconds_sum{",
                "rtshield_noise_cpu_available_ratio{",
                "rtshield_run_duration_seconds ",
            ] {
                assert!(
                    !text.lines().any(|l| l.starts_with(family)),
                    "{family} has a sample line:\n{text}"
                );
            }
            // What is known still is.
            assert!(
                text.contains("rtshield_noise_max_single_seconds{cpu=\"1\"} 0.00004"),
                "{text}"
            );
        }
    }
}
