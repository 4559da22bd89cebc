//! The noise part of a `results.json` written by `rtshield noise`
//! (`"kind": "noise"`): per measured CPU what osnoise reports (runtime,
//! total noise, % of the CPU available, the longest single noise, counts
//! per cause class), the loop's own figures, the VM steal time, the top
//! offenders and the longest gaps with their causes.
//!
//! The histogram of noise lengths, its percentiles and the `_H` statistics
//! are in the run's `threads[]` (one per measured CPU, same index), so the
//! histogram files, the store and the comparison read them as they read a
//! latency run's.
//!
//! A figure that was not measured is absent (`null`), never 0: without a
//! trace there are no class counts, without a steal column no steal time.

use crate::Histogram;
use rtshield_trace::{
    Explained, NoiseCause as Cause, NoiseClass as Class, NoiseEvent, NoiseSource as Source,
    SourceTotal,
};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The osnoise columns, in osnoise's order (`HW` is "no kernel event":
/// hardware, firmware or the hypervisor), then `LOST`: gaps where the
/// kernel dropped trace events, whose cause is unknown (never `HW`).
pub const NOISE_COLUMNS: [&str; 6] = ["HW", "NMI", "IRQ", "SIRQ", "THREAD", "LOST"];

/// The tail histogram's bucket width ([`CpuNoise::tail`]): 100 µs.
pub const NOISE_TAIL_RESOLUTION_NS: u64 = 100_000;
/// The tail histogram's reach ([`CpuNoise::tail`]): 1 s (longer gaps
/// are its overflow).
pub const NOISE_TAIL_SIZE_NS: u64 = 1_000_000_000;

/// What a `results.json` measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunKind {
    /// Wake-up latency (`measure`, `run`, `campaign`, imports): the
    /// default, and what a file without `kind` is.
    #[default]
    Latency,
    /// OS noise on busy-polling CPUs (`rtshield noise`): `threads[]` hold
    /// noise lengths and [`crate::RunResult::noise`] the rest.
    Noise,
}

impl RunKind {
    /// Whether this is the default kind (then `kind` is not written, so
    /// latency files stay as they were).
    pub fn is_latency(&self) -> bool {
        *self == RunKind::Latency
    }

    /// `latency` or `noise`.
    pub fn name(&self) -> &'static str {
        match self {
            RunKind::Latency => "latency",
            RunKind::Noise => "noise",
        }
    }
}

/// The noise figures of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NoiseResult {
    /// A gap between two clock reads longer than this is noise.
    pub threshold_ns: u64,
    /// Spinning time per period.
    pub runtime_ns: u64,
    /// Window spacing.
    pub period_ns: u64,
    /// Per measured CPU, in CPU order (same order as `threads[]`).
    pub cpus: Vec<CpuNoise>,
    /// Present when `--trace` was asked (even when it could not run).
    #[serde(default)]
    pub trace: Option<NoiseTrace>,
}

/// One CPU's noise.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuNoise {
    /// The CPU.
    pub cpu: u32,
    /// The spinning thread's TID.
    pub tid: i32,
    /// Its policy in force (`SCHED_OTHER` after a refused SCHED_FIFO).
    pub policy: String,
    /// Its SCHED_FIFO priority, when real-time.
    pub priority: Option<i32>,
    /// Time spent spinning (first to last clock read of each window).
    pub runtime_ns: u64,
    /// Sum of the gaps longer than the threshold.
    pub noise_ns: u64,
    /// `100 × (runtime − noise) / runtime` (osnoise's "% CPU available");
    /// absent without runtime.
    pub available_pct: Option<f64>,
    /// The longest single gap; null when there was none above the
    /// threshold (`events` 0: older files wrote 0, read back as null).
    pub max_single_ns: Option<u64>,
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
    /// Windows spun.
    pub windows: u64,
    /// Windows skipped whole (the thread woke after their end).
    pub windows_missed: u64,
    /// VM steal time the kernel accounted to the CPU over the run
    /// (`/proc/stat`, USER_HZ ticks); absent when not read.
    pub steal_ns: Option<u64>,
    /// Events per osnoise column ([`NOISE_COLUMNS`]); traced only.
    pub classes: Option<BTreeMap<String, u64>>,
    /// Events per class (the tick apart from IRQs, `unexplained` and
    /// `lost` apart); traced only.
    pub by_class: Option<BTreeMap<Class, u64>>,
    /// Time inside gaps that no kernel event covered, the gaps of class
    /// `lost` apart: hardware, firmware, the hypervisor; traced only.
    pub unexplained_ns: Option<u64>,
    /// Time inside the gaps of class `lost` (the kernel dropped trace
    /// events there) that no traced event covered: unknown, never counted
    /// as hardware; traced only (absent in files written before it).
    #[serde(default)]
    pub lost_ns: Option<u64>,
    /// Time inside gaps per class (exclusive ns, every source counted, the
    /// untraced time as `unexplained`, or as `lost` in the gaps where
    /// events were dropped): what the cause breakdown plots; traced only.
    #[serde(default)]
    pub class_ns: Option<BTreeMap<Class, u64>>,
    /// Sources by total time inside gaps, most first; traced only.
    pub offenders: Option<Vec<Offender>>,
    /// The longest gaps, longest first (with their causes when traced).
    pub longest: Vec<LongEvent>,
    /// The gaps beyond the thread's histogram (`threads[].histogram`'s
    /// overflow: from 10 ms by default), counted in coarser buckets of
    /// [`NOISE_TAIL_RESOLUTION_NS`] up to [`NOISE_TAIL_SIZE_NS`] (longer
    /// ones are its overflow): what `runs compare` draws the maximum noise
    /// from. Absent in files written before it.
    #[serde(default)]
    pub tail: Option<Histogram>,
}

/// One source of noise on one CPU.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Offender {
    /// `IRQ eth0-rx:24`, `thread busy (pid 77, FIFO 99)`, ...
    pub label: String,
    /// Who.
    pub source: Source,
    /// A thread's priority as a person sets it: `FIFO 99` (policy read
    /// from the live thread), `RT 99` (real-time, policy unknown),
    /// `nice 0`, `deadline`; threads only.
    pub priority: Option<String>,
    /// What to change so that it leaves the CPU alone (from the audit's
    /// advice), when something can be changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
    /// Its time, runs, gaps and longest share of one gap.
    #[serde(flatten)]
    pub total: SourceTotal,
}

/// One of the longest gaps of a CPU.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LongEvent {
    /// The gap (CLOCK_MONOTONIC ns).
    #[serde(flatten)]
    pub event: NoiseEvent,
    /// Traced only.
    pub class: Option<Class>,
    /// Traced only, longest first.
    pub causes: Option<Vec<Cause>>,
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

/// The tracing session of a noise run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NoiseTrace {
    /// Why tracing did not run (not root, no tracefs, ...): then nothing
    /// else here is meaningful and no CPU has causes.
    pub unavailable: Option<String>,
    /// Events enabled in the instance.
    pub events_enabled: Vec<String>,
    /// Wanted events this kernel lacks.
    pub events_missing: Vec<String>,
    /// Stale instances of dead rtshield processes removed at the start.
    pub stale_removed: Vec<String>,
    /// Events the kernel dropped (`[LOST n EVENTS]`): the gaps overlapping
    /// them are of class `lost` (unknown), not unexplained.
    pub lost_events: u64,
    /// Loss notes without a count (`[LOST EVENTS]`): `lost_events` is
    /// then a lower bound.
    #[serde(default)]
    pub lost_notes_uncounted: u64,
    /// Trace lines that were not events (skipped).
    pub bad_lines: u64,
}

impl NoiseResult {
    /// The share of the CPUs left to the spinning threads over the run,
    /// all CPUs pooled: `100 × (Σ runtime − Σ noise) / Σ runtime`; None
    /// when nothing was spun.
    pub fn available_pct(&self) -> Option<f64> {
        // u128: 8192 CPUs of 10^18 ns each do not fit a u64.
        let runtime: u128 = self.cpus.iter().map(|c| u128::from(c.runtime_ns)).sum();
        let noise: u128 = self.cpus.iter().map(|c| u128::from(c.noise_ns)).sum();
        (runtime > 0).then(|| 100.0 * runtime.saturating_sub(noise) as f64 / runtime as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpu(runtime_ns: u64, noise_ns: u64) -> CpuNoise {
        CpuNoise {
            cpu: 1,
            tid: 7,
            policy: "SCHED_OTHER".into(),
            priority: None,
            runtime_ns,
            noise_ns,
            available_pct: None,
            max_single_ns: None,
            events: 0,
            lost: 0,
            iterations: 0,
            iterations_per_us: None,
            min_gap_ns: None,
            windows: 1,
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
        }
    }

    #[test]
    fn available_is_pooled_and_unknown_without_runtime() {
        let mut n = NoiseResult {
            threshold_ns: 1_000,
            runtime_ns: 1,
            period_ns: 1,
            cpus: vec![cpu(1_000, 10), cpu(1_000, 30)],
            trace: None,
        };
        assert_eq!(n.available_pct(), Some(98.0));
        n.cpus = vec![cpu(0, 0)];
        assert_eq!(n.available_pct(), None);
    }
}
