//! A noise run's results: per CPU what osnoise reports (runtime, noise,
//! % available, max single noise, counts per class), the histogram of
//! noise lengths, the top offenders and the longest gaps; the JSON document
//! (`--json FILE`, draft schema `rtshield.noise/0`) and the summary table.
//!
//! A figure that was not measured is absent (`null`), never 0: without a
//! trace there are no class counts, without a steal column no steal time.

use rtshield_results::{HistStats, Histogram};
use rtshield_trace::{fmt_ns, priority_text};
use rtshield_trace::{Explained, NoiseCause, NoiseClass, NoiseEvent, NoiseSource, SourceTotal};
use rtshield_vocab::Policy;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The whole run.
#[derive(Debug, Clone, Serialize)]
pub struct NoiseRun {
    /// `rtshield.noise/0` (a draft: the result-file family comes later).
    pub schema: String,
    /// RFC 3339 UTC time of the start.
    pub started_at: String,
    /// Wall time from the start of the first window to the end.
    pub elapsed_ns: u64,
    /// `duration` or `stopped` (the caller may name the signal).
    pub end_reason: String,
    /// A gap longer than this is noise.
    pub threshold_ns: u64,
    /// Spinning time per period.
    pub runtime_ns: u64,
    /// Window spacing.
    pub period_ns: u64,
    /// Per measured CPU, in CPU order.
    pub cpus: Vec<CpuNoise>,
    /// Present when `--trace` was asked (even when it could not run).
    pub trace: Option<TraceSummary>,
    /// Things the user must know.
    pub warnings: Vec<String>,
}

/// One CPU's noise.
#[derive(Debug, Clone, Serialize)]
pub struct CpuNoise {
    /// The CPU.
    pub cpu: u32,
    /// The spinning thread's TID.
    pub tid: i32,
    /// Its policy in force (SCHED_OTHER after a refused SCHED_FIFO).
    pub policy: Policy,
    /// Its SCHED_FIFO priority, when real-time.
    pub priority: Option<i32>,
    /// Time spent spinning (first to last clock read of each window).
    pub runtime_ns: u64,
    /// Sum of the gaps longer than the threshold.
    pub noise_ns: u64,
    /// `100 × (runtime − noise) / runtime` (osnoise's "% CPU available");
    /// absent without runtime.
    pub available_pct: Option<f64>,
    /// The longest single gap (0: none above the threshold).
    pub max_single_ns: u64,
    /// Gaps longer than the threshold.
    pub events: u64,
    /// Events the ring could not take: in the figures above, not in the
    /// histogram, the classes or the offenders.
    pub lost: u64,
    /// Clock reads compared.
    pub iterations: u64,
    /// The loop's speed (iterations per µs of runtime).
    pub iterations_per_us: Option<f64>,
    /// The shortest gap between two reads: the loop's resolution.
    pub min_gap_ns: Option<u64>,
    /// Windows spun and windows skipped whole (woken after their end).
    pub windows: u64,
    /// See `windows`.
    pub windows_missed: u64,
    /// VM steal time the kernel accounted to the CPU over the run
    /// (`/proc/stat`, USER_HZ ticks); absent when not read.
    pub steal_ns: Option<u64>,
    /// Noise lengths, 1 µs buckets (cyclictest-like).
    pub histogram: Histogram,
    /// The systress article's `_H` statistics over that histogram.
    pub hist_stats: HistStats,
    /// Percentiles of the noise lengths (HDR histogram, every event).
    pub percentiles: BTreeMap<String, i64>,
    /// Events per osnoise column (`HW NMI IRQ SIRQ THREAD`); traced only.
    pub classes: Option<BTreeMap<String, u64>>,
    /// Events per class (the tick apart from IRQs); traced only.
    pub by_class: Option<BTreeMap<NoiseClass, u64>>,
    /// Time inside gaps that no kernel event covered; traced only.
    pub unexplained_ns: Option<u64>,
    /// Sources by total time inside gaps, most first; traced only.
    pub offenders: Option<Vec<Offender>>,
    /// The longest gaps, longest first (with their causes when traced).
    pub longest: Vec<LongEvent>,
}

/// One source of noise on one CPU.
#[derive(Debug, Clone, Serialize)]
pub struct Offender {
    /// `IRQ eth0-rx:24`, `thread busy (pid 77, FIFO 99)`, ... (a thread's
    /// with its `priority`).
    pub label: String,
    /// Who.
    pub source: NoiseSource,
    /// A thread's priority as a person sets it: `FIFO 99` (policy read
    /// from the live thread), `RT 99` (real-time, policy unknown),
    /// `nice 0`, `deadline`; threads only.
    pub priority: Option<String>,
    /// Its time, runs, gaps and longest share of one gap.
    #[serde(flatten)]
    pub total: SourceTotal,
}

/// One of the longest gaps of a CPU.
#[derive(Debug, Clone, Serialize)]
pub struct LongEvent {
    /// The gap (CLOCK_MONOTONIC ns).
    #[serde(flatten)]
    pub event: NoiseEvent,
    /// Traced only.
    pub class: Option<NoiseClass>,
    /// Traced only, longest first.
    pub causes: Option<Vec<NoiseCause>>,
    /// Traced only.
    pub unexplained_ns: Option<u64>,
}

impl From<NoiseEvent> for LongEvent {
    fn from(event: NoiseEvent) -> Self {
        LongEvent {
            event,
            class: None,
            causes: None,
            unexplained_ns: None,
        }
    }
}

impl From<Explained> for LongEvent {
    fn from(x: Explained) -> Self {
        LongEvent {
            event: x.event,
            class: Some(x.class),
            causes: Some(x.causes),
            unexplained_ns: Some(x.unexplained_ns),
        }
    }
}

/// The tracing session, when `--trace` was asked.
#[derive(Debug, Clone, Default, Serialize)]
pub struct TraceSummary {
    /// Why tracing did not run (not root, no tracefs, ...): then nothing
    /// else here is meaningful and no CPU has causes.
    pub unavailable: Option<String>,
    /// Events enabled in the instance.
    pub events_enabled: Vec<String>,
    /// Wanted events this kernel lacks.
    pub events_missing: Vec<String>,
    /// Stale instances of dead rtshield processes removed at the start.
    pub stale_removed: Vec<String>,
    /// Events the kernel dropped (`[LOST n EVENTS]`): causes may be
    /// missing around them.
    pub lost_events: u64,
    /// Trace lines that were not events (skipped).
    pub bad_lines: u64,
}

/// The `k` items with the largest keys (ties: the first offered).
#[derive(Debug, Clone)]
pub(crate) struct TopK<T> {
    k: usize,
    /// Largest first.
    items: Vec<(u64, T)>,
}

impl<T> TopK<T> {
    pub(crate) fn new(k: usize) -> Self {
        TopK {
            k,
            items: Vec::with_capacity(k + 1),
        }
    }

    pub(crate) fn offer(&mut self, key: u64, item: T) {
        if self.items.len() == self.k && self.items.last().is_none_or(|(m, _)| key <= *m) {
            return;
        }
        let at = self.items.partition_point(|(m, _)| *m >= key);
        self.items.insert(at, (key, item));
        self.items.truncate(self.k);
    }

    pub(crate) fn into_sorted(self) -> Vec<T> {
        self.items.into_iter().map(|(_, t)| t).collect()
    }
}

/// `9.00 s` for runtimes, `fmt_ns` below a second.
fn dur(ns: u64) -> String {
    if ns >= 1_000_000_000 {
        format!("{:.2} s", ns as f64 / 1e9)
    } else {
        fmt_ns(ns)
    }
}

/// The osnoise-shaped table, then per CPU its distribution, loop cost,
/// steal time and top offenders.
pub fn render_summary(run: &NoiseRun, top: usize) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "{:>4} {:>10} {:>10} {:>9} {:>10} {:>6} {:>6} {:>6} {:>6} {:>6}",
        "CPU", "RUNTIME", "NOISE", "%AVAIL", "MAX-SINGLE", "HW", "NMI", "IRQ", "SIRQ", "THREAD"
    );
    for c in &run.cpus {
        let col = |name: &str| {
            c.classes
                .as_ref()
                .and_then(|m| m.get(name))
                .map_or("-".to_string(), |n| n.to_string())
        };
        let _ = writeln!(
            o,
            "{:>4} {:>10} {:>10} {:>9} {:>10} {:>6} {:>6} {:>6} {:>6} {:>6}",
            c.cpu,
            dur(c.runtime_ns),
            dur(c.noise_ns),
            c.available_pct.map_or("-".into(), |p| format!("{p:.5}")),
            dur(c.max_single_ns),
            col("HW"),
            col("NMI"),
            col("IRQ"),
            col("SIRQ"),
            col("THREAD"),
        );
    }
    for c in &run.cpus {
        cpu_details(&mut o, run, c, top);
    }
    o
}

fn cpu_details(o: &mut String, run: &NoiseRun, c: &CpuNoise, top: usize) {
    let p = |k: &str| {
        c.percentiles
            .get(k)
            .map_or("-".into(), |v| fmt_ns(*v as u64))
    };
    let _ = writeln!(
        o,
        "CPU {}: {} gaps > {} ({} lost): p50 {}, p99 {}, p99.9 {}, max {}; loop {} iterations/us, smallest gap {}",
        c.cpu,
        c.events,
        fmt_ns(run.threshold_ns),
        c.lost,
        p("50"),
        p("99"),
        p("99.9"),
        fmt_ns(c.max_single_ns),
        c.iterations_per_us.map_or("-".into(), |v| format!("{v:.1}")),
        c.min_gap_ns.map_or("-".into(), fmt_ns),
    );
    let steal = c.steal_ns.map_or("not read".into(), fmt_ns);
    match (&c.offenders, c.unexplained_ns) {
        (Some(offenders), Some(unexplained)) => {
            let _ = writeln!(
                o,
                "       unexplained (hardware, firmware, hypervisor) {}; VM steal time over the run {}",
                fmt_ns(unexplained),
                steal
            );
            let mut parts: Vec<(u64, String)> = offenders
                .iter()
                .map(|f| {
                    let text = format!(
                        "{} {} in {} gaps",
                        f.label,
                        fmt_ns(f.total.ns),
                        f.total.gaps
                    );
                    (f.total.ns, text)
                })
                .collect();
            parts.push((unexplained, format!("unexplained {}", fmt_ns(unexplained))));
            parts.sort_by_key(|p| std::cmp::Reverse(p.0));
            parts.truncate(top);
            let list: Vec<String> = parts.into_iter().map(|(_, s)| s).collect();
            let _ = writeln!(o, "       top: {}", list.join("; "));
        }
        _ => {
            let _ = writeln!(
                o,
                "       VM steal time over the run {steal}; causes: run with --trace"
            );
        }
    }
}

/// The priority text of a traced thread: `FIFO 99` when `live` (read
/// after the run) has it under the same name and priority, else from the
/// traced prio (`RT 99`, `nice 0`, `deadline`).
pub(crate) fn thread_priority(
    src: &NoiseSource,
    live: &BTreeMap<u32, rtshield_trace::LiveRt>,
) -> String {
    let kp = src.kernel_prio;
    if let (Some(kp), Some(pid)) = (kp, src.pid) {
        if let Some(l) = live.get(&pid) {
            if (0..100).contains(&kp) && l.comm == src.name && l.priority as i32 == 99 - kp {
                let name = match l.policy {
                    rtshield_trace::RtPolicy::Fifo => "FIFO",
                    rtshield_trace::RtPolicy::Rr => "RR",
                };
                return format!("{name} {}", l.priority);
            }
        }
    }
    priority_text(kp)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn top_k_keeps_the_largest_in_order() {
        let mut t = TopK::new(3);
        for (k, v) in [(5, 'a'), (1, 'b'), (9, 'c'), (5, 'd'), (7, 'e'), (2, 'f')] {
            t.offer(k, v);
        }
        assert_eq!(t.into_sorted(), vec!['c', 'e', 'a']);
        let t: TopK<u8> = TopK::new(0);
        assert!(t.into_sorted().is_empty());
    }

    #[test]
    fn durations() {
        assert_eq!(dur(9_000_000_000), "9.00 s");
        assert_eq!(dur(1_710_000), "1.71 ms");
        assert_eq!(dur(850), "850 ns");
    }

    #[test]
    fn live_policy_only_for_the_same_thread() {
        use rtshield_trace::CauseKind;
        use rtshield_trace::{LiveRt, RtPolicy};
        let src = NoiseSource {
            kind: CauseKind::Thread,
            name: "busy".into(),
            number: None,
            pid: Some(9),
            kernel_prio: Some(0),
        };
        let mut live = BTreeMap::new();
        assert_eq!(thread_priority(&src, &live), "RT 99");
        live.insert(
            9,
            LiveRt {
                comm: "busy".into(),
                policy: RtPolicy::Fifo,
                priority: 99,
            },
        );
        assert_eq!(thread_priority(&src, &live), "FIFO 99");
        live.get_mut(&9).unwrap().comm = "other".into();
        assert_eq!(thread_priority(&src, &live), "RT 99");
    }
}
