//! A noise run (`results.json` of kind `noise`, written by `rtshield
//! noise`) for a person: the osnoise-shaped per-CPU table, each CPU's
//! distribution, loop cost, steal time and top offenders with their fixes,
//! and the histogram of noise lengths as text (what `rtshield noise`
//! prints and `rtshield report` writes as `noise.txt`). The cause
//! breakdown picture is `crate::plot::noise_causes_png`. Offender names
//! (thread comm names, IRQ names: any process sets its own) and fixes go
//! through the terminal encoder (`rtshield_text::terminal::value`): the
//! text is printed on root's terminal and read with `cat`.

use rtshield_results::{
    CpuNoise, NoiseClass, NoiseResult, Pct, RunResult, ThreadResult, NOISE_COLUMNS,
};
use rtshield_text::terminal::value as v;
use std::fmt::Write as _;

/// `850 ns`, `12.3 us`, `1.71 ms`, `9.00 s`: three significant digits.
pub(crate) fn fmt_dur(ns: u64) -> String {
    let f = ns as f64;
    if ns < 1_000 {
        format!("{ns} ns")
    } else if ns < 1_000_000 {
        format!("{:.3} us", f / 1e3).replace(".000 ", " ")
    } else if ns < 1_000_000_000 {
        format!("{:.2} ms", f / 1e6)
    } else {
        format!("{:.2} s", f / 1e9)
    }
}

/// The name of a class as the report writes it.
pub(crate) fn class_name(c: NoiseClass) -> &'static str {
    match c {
        NoiseClass::Unexplained => "unexplained",
        NoiseClass::Nmi => "NMI",
        NoiseClass::Irq => "IRQ",
        NoiseClass::Tick => "tick",
        NoiseClass::Softirq => "softirq",
        NoiseClass::Thread => "thread",
        NoiseClass::Lost => "unknown (trace events lost)",
    }
}

/// The classes in the order the breakdown stacks them.
pub(crate) const CLASSES: [NoiseClass; 7] = [
    NoiseClass::Unexplained,
    NoiseClass::Nmi,
    NoiseClass::Irq,
    NoiseClass::Tick,
    NoiseClass::Softirq,
    NoiseClass::Thread,
    NoiseClass::Lost,
];

/// The thread of CPU entry `i` (same index in `threads[]`).
fn thread_of(run: &RunResult, i: usize) -> Option<&ThreadResult> {
    run.threads.get(i)
}

/// The whole summary of a noise run: the table, then per CPU its details
/// and (with `histogram`) the histogram of noise lengths. Empty for a run
/// that is not a noise run.
pub fn summary(run: &RunResult, top: usize, histogram: bool) -> String {
    let Some(n) = &run.noise else {
        return String::new();
    };
    let mut o = table(n);
    for (i, c) in n.cpus.iter().enumerate() {
        cpu_details(&mut o, n, c, thread_of(run, i), top);
        after_drift(&mut o, run, c);
    }
    // Every change the drift watch saw, with its time (the run's clock).
    let _ = writeln!(o, "{}", run.drift.summary());
    for e in run.drift.events() {
        let _ = writeln!(o, "  {}", e.line());
    }
    if histogram {
        o.push_str(&histogram_text(run));
    }
    o
}

/// The longest gaps of CPU entry `c` that came within
/// [`DRIFT_SPIKE_WINDOW_NS`](rtshield_results::DRIFT_SPIKE_WINDOW_NS)
/// after a change the drift watch saw, with the change named (as a
/// latency spike is in the report's spikes): at most three lines.
fn after_drift(o: &mut String, run: &RunResult, c: &CpuNoise) {
    use rtshield_results::{drift_before_spike, DRIFT_SPIKE_WINDOW_NS};
    let Some(zero) = run.drift.drift_watch.as_ref().and_then(|w| w.mono_zero_ns) else {
        return;
    };
    for g in c.longest.iter().take(LONGEST_SHOWN) {
        let near = drift_before_spike(&run.drift, g.event.start_ns, DRIFT_SPIKE_WINDOW_NS);
        if near.is_empty() {
            continue;
        }
        let named: Vec<String> = near
            .iter()
            .map(|e| format!("{} {}", v(&e.kind), v(&e.object)))
            .collect();
        let _ = writeln!(
            o,
            "       the {} gap at {:.3} s came after drift: {}",
            fmt_dur(g.event.len_ns),
            g.event.start_ns.saturating_sub(zero) as f64 / 1e9,
            named.join("; ")
        );
    }
}

/// Longest gaps looked at for a drift before them.
const LONGEST_SHOWN: usize = 3;

/// Gaps of class lost on CPU entry `c` (trace events dropped), traced only.
fn lost_gaps(c: &CpuNoise) -> Option<u64> {
    c.classes.as_ref().and_then(|m| m.get("LOST")).copied()
}

/// The osnoise-shaped table: one row per CPU; `?` for a figure not
/// measured (the class columns without `--trace`), never 0. A `LOST`
/// column (gaps where trace events were dropped: cause unknown, not `HW`)
/// follows when some CPU has such gaps.
pub(crate) fn table(n: &NoiseResult) -> String {
    let with_lost = n.cpus.iter().any(|c| lost_gaps(c).is_some_and(|k| k > 0));
    let shown = if with_lost { 6 } else { 5 };
    let mut o = String::new();
    let _ = write!(
        o,
        "{:>4} {:>10} {:>10} {:>9} {:>10}",
        "CPU", "RUNTIME", "NOISE", "%AVAIL", "MAX-SINGLE"
    );
    for k in &NOISE_COLUMNS[..shown] {
        let _ = write!(o, " {k:>6}");
    }
    o.push('\n');
    for c in &n.cpus {
        let col = |name: &str| {
            c.classes
                .as_ref()
                .and_then(|m| m.get(name))
                .map_or("?".to_string(), |n| n.to_string())
        };
        let _ = write!(
            o,
            "{:>4} {:>10} {:>10} {:>9} {:>10}",
            c.cpu,
            fmt_dur(c.runtime_ns),
            fmt_dur(c.noise_ns),
            c.available_pct.map_or("?".into(), |p| format!("{p:.5}")),
            c.max_single_ns.map_or("?".into(), fmt_dur),
        );
        for k in &NOISE_COLUMNS[..shown] {
            // A file written before the LOST column: none lost, known 0.
            let v = if *k == "LOST" && c.classes.is_some() && lost_gaps(c).is_none() {
                "0".to_string()
            } else {
                col(k)
            };
            let _ = write!(o, " {v:>6}");
        }
        o.push('\n');
    }
    o
}

fn cpu_details(
    o: &mut String,
    n: &NoiseResult,
    c: &CpuNoise,
    t: Option<&ThreadResult>,
    top: usize,
) {
    // As every renderer: exact, `≥N` (a bound), too few gaps, or `?`.
    let p = |k: &str| match t.map_or(Pct::Unknown, |t| t.pct(k)) {
        Pct::Exact(v) => fmt_dur(v.max(0) as u64),
        Pct::AtLeast(v, _) => format!("≥{}", fmt_dur(v.max(0) as u64)),
        Pct::NotEnoughSamples => crate::table::NOT_ENOUGH.into(),
        Pct::Unknown => "?".into(),
    };
    let _ = writeln!(
        o,
        "CPU {}: {} gaps > {} ({} lost): p50 {}, p99 {}, p99.9 {}, max {}; loop {} iterations/us, smallest gap {}",
        c.cpu,
        c.events,
        fmt_dur(n.threshold_ns),
        c.lost,
        p("50"),
        p("99"),
        p("99.9"),
        c.max_single_ns.map_or("?".into(), fmt_dur),
        c.iterations_per_us.map_or("?".into(), |v| format!("{v:.1}")),
        c.min_gap_ns.map_or("?".into(), fmt_dur),
    );
    let steal = c.steal_ns.map_or("not read".into(), fmt_dur);
    let (Some(offenders), Some(unexplained)) = (&c.offenders, c.unexplained_ns) else {
        let _ = writeln!(
            o,
            "       VM steal time over the run {steal}; causes: run with --trace"
        );
        return;
    };
    let lost = match (lost_gaps(c).filter(|k| *k > 0), c.lost_ns) {
        (Some(k), ns) => format!(
            "; unknown (trace events lost) {} in {k} gaps, not counted as hardware",
            ns.map_or("?".into(), fmt_dur)
        ),
        _ => String::new(),
    };
    let _ = writeln!(
        o,
        "       unexplained (hardware, firmware, hypervisor) {}{lost}; VM steal time over the run {}",
        fmt_dur(unexplained),
        steal
    );
    if let Some(m) = &c.class_ns {
        let parts: Vec<String> = CLASSES
            .iter()
            .filter_map(|k| m.get(k).filter(|v| **v > 0).map(|v| (k, v)))
            .map(|(k, v)| format!("{} {}", class_name(*k), fmt_dur(*v)))
            .collect();
        let _ = writeln!(o, "       time by cause: {}", parts.join(", "));
    }
    let mut parts: Vec<(u64, String)> = offenders
        .iter()
        .map(|f| {
            let text = format!(
                "{} {} in {} gaps",
                v(&f.label),
                fmt_dur(f.total.ns),
                f.total.gaps
            );
            (f.total.ns, text)
        })
        .collect();
    parts.push((unexplained, format!("unexplained {}", fmt_dur(unexplained))));
    if let Some(ns) = c.lost_ns.filter(|ns| *ns > 0) {
        parts.push((ns, format!("unknown (trace events lost) {}", fmt_dur(ns))));
    }
    parts.sort_by_key(|p| std::cmp::Reverse(p.0));
    parts.truncate(top);
    let list: Vec<String> = parts.into_iter().map(|(_, s)| s).collect();
    let _ = writeln!(o, "       top: {}", list.join("; "));
    for f in offenders.iter().take(top) {
        if let Some(fix) = &f.fix {
            let _ = writeln!(o, "       fix {}: {}", v(&f.label), v(fix));
        }
    }
}

/// The histogram of noise lengths of every CPU, cyclictest-like: one line
/// per non-empty 1 µs bucket (`   12 us  CPU1 CPU2` counts), then the
/// overflow and the maximum. A CPU whose histogram is unknown shows `?`.
pub(crate) fn histogram_text(run: &RunResult) -> String {
    let mut o = String::new();
    let Some(n) = &run.noise else { return o };
    let hists: Vec<Option<&rtshield_results::Histogram>> =
        run.threads.iter().map(|t| t.histogram.as_ref()).collect();
    let Some(res) = hists
        .iter()
        .flatten()
        .map(|h| h.resolution_ns.max(1))
        .next()
    else {
        return o;
    };
    let _ = write!(o, "# noise length histogram ({} ns buckets): bucket", res);
    for c in &n.cpus {
        let _ = write!(o, " CPU{}", c.cpu);
    }
    o.push('\n');
    let mut buckets: Vec<u64> = hists
        .iter()
        .flatten()
        .flat_map(|h| h.counts.iter().map(|c| c[0]))
        .collect();
    buckets.sort_unstable();
    buckets.dedup();
    for b in buckets {
        let _ = write!(o, "{:>8}", b * res / 1000);
        for h in &hists {
            let v = h.map_or("?".into(), |h| {
                let n = h.counts.iter().find(|c| c[0] == b).map_or(0, |c| c[1]);
                n.to_string()
            });
            let _ = write!(o, " {v:>8}");
        }
        o.push('\n');
    }
    let _ = write!(o, "# overflow");
    for h in &hists {
        let _ = write!(o, " {}", h.map_or("?".into(), |h| h.overflow.to_string()));
    }
    let _ = write!(o, "\n# max (us)");
    for t in &run.threads {
        let _ = write!(
            o,
            " {}",
            t.max_ns.map_or("?".into(), |m| (m / 1000).to_string())
        );
    }
    o.push('\n');
    tail_text(&mut o, n);
    o
}

/// The overflow's coarser buckets (`tail`), one line per non-empty bucket
/// (`#   12.3 ms  CPU1 CPU2` counts), when some CPU overflowed.
fn tail_text(o: &mut String, n: &NoiseResult) {
    let tails: Vec<Option<&rtshield_results::Histogram>> =
        n.cpus.iter().map(|c| c.tail.as_ref()).collect();
    let mut buckets: Vec<(u64, u64)> = tails
        .iter()
        .flatten()
        .flat_map(|h| h.counts.iter().map(|c| (c[0], h.resolution_ns.max(1))))
        .collect();
    if buckets.is_empty() {
        return;
    }
    buckets.sort_unstable();
    buckets.dedup();
    let _ = writeln!(o, "# overflow by length (lower edge of 100 us buckets):");
    for (b, res) in buckets {
        let _ = write!(o, "# {:>9}", fmt_dur(b * res));
        for h in &tails {
            let v = h.map_or("?".into(), |h| {
                let n = h.counts.iter().find(|c| c[0] == b).map_or(0, |c| c[1]);
                n.to_string()
            });
            let _ = write!(o, " {v:>8}");
        }
        o.push('\n');
    }
    let beyond: Vec<String> = tails
        .iter()
        .map(|h| h.map_or("?".into(), |h| h.overflow.to_string()))
        .collect();
    let _ = writeln!(o, "# beyond 1 s {}", beyond.join(" "));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A one-CPU noise run that spun for nothing: no gap, no loop speed.
    fn unmeasured() -> RunResult {
        let mut r = crate::synth::synth_run_result("n", 1, &[1], 1_000, 20.0, 0.01, 100);
        r.kind = rtshield_results::RunKind::Noise;
        r.threads.truncate(1);
        r.threads[0].histogram = None;
        r.threads[0].samples = None;
        r.threads[0].percentiles.clear();
        r.noise = Some(NoiseResult {
            threshold_ns: 1_000,
            runtime_ns: 1_000_000,
            period_ns: 1_000_000,
            cpus: vec![CpuNoise {
                cpu: 1,
                tid: 7,
                policy: "other".into(),
                priority: None,
                runtime_ns: 0,
                noise_ns: 0,
                available_pct: None,
                max_single_ns: None,
                events: 0,
                lost: 0,
                iterations: 0,
                iterations_per_us: None,
                min_gap_ns: None,
                windows: 0,
                windows_missed: 0,
                steal_ns: None,
                classes: None,
                by_class: None,
                unexplained_ns: None,
                lost_ns: None,
                class_ns: None,
                offenders: None,
                longest: vec![],
                tail: None,
            }],
            trace: None,
        });
        r
    }

    #[test]
    fn what_a_noise_run_did_not_measure_is_shown_as_unknown() {
        let s = summary(&unmeasured(), 5, true);
        assert!(s.contains("smallest gap ?"), "{s}");
        assert!(s.contains("loop ? iterations/us"), "{s}");
        assert!(s.contains("p50 ?, p99 ?, p99.9 ?"), "{s}");
        // %AVAIL, the longest gap (none seen) and the untraced class columns.
        let row = s.lines().nth(1).unwrap();
        assert_eq!(row.matches('?').count(), 7, "{row}");
        assert!(!s.contains(&u64::MAX.to_string()), "{s}");
        // No histogram known: no histogram text, not an empty one.
        assert!(!s.contains("# noise length histogram"), "{s}");
    }

    #[test]
    fn a_cpu_whose_histogram_is_unknown_shows_question_marks() {
        let mut r = unmeasured();
        let mut two = r.threads[0].clone();
        two.histogram = crate::synth::synth_run_result("n", 1, &[1], 1_000, 20.0, 0.01, 100)
            .threads[0]
            .histogram
            .clone();
        r.threads.push(two);
        let n = r.noise.as_mut().unwrap();
        let mut c = n.cpus[0].clone();
        c.cpu = 2;
        n.cpus.push(c);
        let h = histogram_text(&r);
        assert!(h.contains("# overflow ? "), "{h}");
        assert!(
            h.lines()
                .skip(1)
                .take_while(|l| !l.starts_with('#'))
                .all(|l| l.split_whitespace().nth(1) == Some("?")),
            "{h}"
        );
    }

    /// A traced CPU: 3 gaps HW, 2 whose trace events were lost.
    fn traced(lost: u64) -> RunResult {
        let mut r = unmeasured();
        let c = &mut r.noise.as_mut().unwrap().cpus[0];
        c.runtime_ns = 1_000_000_000;
        c.noise_ns = 9_000_000;
        c.available_pct = Some(99.1);
        let cols = [
            ("HW", 3),
            ("NMI", 0),
            ("IRQ", 0),
            ("SIRQ", 0),
            ("THREAD", 0),
        ];
        let mut classes: std::collections::BTreeMap<String, u64> =
            cols.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        if lost > 0 {
            classes.insert("LOST".into(), lost);
        }
        c.classes = Some(classes);
        c.unexplained_ns = Some(5_100_000);
        c.lost_ns = Some(if lost > 0 { 3_400_000 } else { 0 });
        c.class_ns = Some(
            [
                (NoiseClass::Unexplained, 5_100_000),
                (NoiseClass::Lost, c.lost_ns.unwrap()),
            ]
            .into(),
        );
        c.offenders = Some(vec![]);
        r
    }

    #[test]
    fn gaps_whose_trace_events_were_lost_are_counted_apart() {
        let s = summary(&traced(2), 5, false);
        let mut lines = s.lines();
        let head: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
        assert_eq!(
            head[5..],
            ["HW", "NMI", "IRQ", "SIRQ", "THREAD", "LOST"],
            "{s}"
        );
        let row: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
        assert_eq!(row[row.len() - 6..], ["3", "0", "0", "0", "0", "2"], "{s}");
        assert!(
            s.contains("unexplained (hardware, firmware, hypervisor) 5.10 ms; unknown (trace events lost) 3.40 ms in 2 gaps, not counted as hardware"),
            "{s}"
        );
        assert!(s.contains("unknown (trace events lost) 3.40 ms"), "{s}");
        // Nothing lost: osnoise's five columns, no such line.
        let s = summary(&traced(0), 5, false);
        assert!(s.lines().next().unwrap().ends_with("THREAD"), "{s}");
        assert!(!s.contains("trace events lost"), "{s}");
    }

    #[test]
    fn drift_events_are_listed_and_named_before_the_gaps_after_them() {
        use rtshield_results::{Drift, DriftEvent, DriftWatch, LongEvent, NoiseEvent};
        let mut r = traced(0);
        let zero = 1_000_000_000_000;
        let c = &mut r.noise.as_mut().unwrap().cpus[0];
        let gap = |at_s: u64, len_ns| LongEvent {
            event: NoiseEvent {
                start_ns: zero + at_s * 1_000_000_000,
                len_ns,
            },
            class: None,
            causes: None,
            unexplained_ns: None,
        };
        // Longest first: one before the change, one after.
        c.longest = vec![gap(2, 8_220_000), gap(9, 3_700_000)];
        r.drift = Drift {
            drift: Some(vec![DriftEvent {
                at_ns: 5_000_000_000,
                since_ns: 4_000_000_000,
                kind: "rt_task".into(),
                object: "task 77 (sleep)".into(),
                before: None,
                after: Some("/sys/fs/cgroup/cpuset/p/rt".into()),
                effect: rtshield_results::DriftEffect::Exposes,
                cpus: "1".into(),
            }]),
            drift_watch: Some(DriftWatch {
                mono_zero_ns: Some(zero),
                ..DriftWatch::default()
            }),
        };
        let s = summary(&r, 5, false);
        assert!(
            s.contains("drift: 1 change seen, 1 exposing a measured CPU"),
            "{s}"
        );
        assert!(
            s.contains("  5.000 s  exposes CPU 1  rt_task  task 77 (sleep)"),
            "{s}"
        );
        assert!(
            s.contains("the 3.70 ms gap at 9.000 s came after drift: rt_task task 77 (sleep)"),
            "{s}"
        );
        assert!(!s.contains("8.22 ms gap"), "{s}");
        // Not watched (an older file): said so, nothing named.
        r.drift = Drift::default();
        let s = summary(&r, 5, false);
        assert!(s.contains("drift: not watched"), "{s}");
        assert!(!s.contains("came after drift"), "{s}");
    }
}
