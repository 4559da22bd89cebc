//! rtshield-measure: the latency measuring engine. Its one job is to run
//! the measuring threads of a [`MeasureSpec`] and hand back a
//! [`Measurement`]: wake-up latencies, exact and in histograms.
//!
//! It may not decide what to measure (a request is `rtshield-run`'s), read
//! configuration, write result files or render anything but its live
//! table; it reaches the kernel only through `rtshield-sys` (scheduling,
//! affinity, cgroup `tasks` files it is handed) and the clock. The hot loop
//! allocates nothing, takes no lock and makes no system call besides the
//! sleep and the vDSO clock read (checked by a counting allocator in its
//! unit tests).
//!
//! One measuring thread per CPU runs the cyclictest loop (absolute
//! `clock_nanosleep` on CLOCK_MONOTONIC, or a per-thread POSIX timer), keeps
//! its own exact min/max/count, and hands every sample to the main thread
//! through a wait-free SPSC ring ([`rtrb`]). The main thread (on the
//! housekeeping CPUs) drains the rings into the histograms, calls an
//! [`Observer`] every stats period, and finally returns a [`Measurement`]
//! that becomes a [`rtshield_results::RunResult`].
//!
//! Module map: `hotloop` (the measuring thread's loop, to audit), `timer`
//! and `spike` (what the loop calls besides the clock), `engine` (thread
//! set-up, the main thread's loop), `stats` (exact
//! accumulator, linear + HDR histograms, `_H` statistics), `rt` (mlockall,
//! stack pre-faulting, `/dev/cpu_dma_latency`), `signals`, `display`
//! (live table / progress bar), `result` (conversion to the file schema).

#![deny(missing_docs)]
#![warn(unreachable_pub)]

use rtshield_vocab::Policy;

mod display;
#[doc(hidden)]
pub mod emulate;
mod engine;
mod hotloop;
mod main_side;
#[cfg(test)]
mod no_alloc_tests;
mod result;
mod rt;
mod signals;
mod spike;
mod stats;
mod timefmt;
mod timer;

pub use crate::display::{
    display_units, display_units_avg, render_table, result_row, table_row, Footer, LiveDisplay,
    TABLE_HEADER,
};
pub use crate::engine::{run, run_at, run_traced};
pub use crate::hotloop::now_ns;
pub use crate::result::ResultContext;
pub use crate::rt::{prefault_stack, MemLock};
pub use crate::signals::{install_signals, signal_received};
pub use crate::spike::{SpikeMark, SpikeTrigger};
pub use crate::stats::{Accum, ThreadHistograms};
pub use crate::timefmt::{rfc3339_utc, stamp_utc};

pub use rtshield_vocab::Mode;

/// One measuring thread.
#[derive(Debug, Clone, PartialEq)]
pub struct ThreadSpec {
    /// The thread's index (the `NN` of `timer_threadNN.txt`).
    pub index: u32,
    /// The CPU it is pinned to (inside the thread, before the first sample);
    /// `None` leaves the inherited affinity.
    pub cpu: Option<u32>,
    /// Requested policy; FIFO/RR fall back to OTHER when refused.
    pub policy: Policy,
    /// 1..=99 for FIFO/RR, ignored otherwise.
    pub priority: i32,
    /// Wake-up period, ns (at least 1 µs: `rtshield-limits`).
    pub period_ns: u64,
    /// A cgroup file (v1 `tasks`, below the run's root) the thread writes
    /// its own TID into before pinning: each thread goes to the partition
    /// its stanza names. Its CPU is then checked by the kernel, not against
    /// the process's affinity.
    pub cgroup_tasks: Option<String>,
}

/// A whole measurement.
#[derive(Debug, Clone, PartialEq)]
pub struct MeasureSpec {
    /// The measuring threads, one per CPU measured, in index order.
    pub threads: Vec<ThreadSpec>,
    /// How each thread waits and what it measures (`nanosleep`, `posix-timer`, `interval` ...).
    pub mode: Mode,
    /// Stop after this long (each thread measures the periods whose
    /// theoretical wake-up falls within it).
    pub duration_ns: Option<u64>,
    /// Stop each thread after this many samples.
    pub samples: Option<u64>,
    /// Largest latency kept in the linear histogram; larger samples count
    /// as overflow (they still enter min/max/avg and the HDR percentiles).
    pub histo_size_ns: u64,
    /// Histogram bucket width: 1000 (µs) or 1 (ns).
    pub resolution_ns: u64,
    /// How often the [`Observer`] is called.
    pub stats_period_ns: u64,
    /// `mlockall(MCL_CURRENT|MCL_FUTURE)` for the run.
    pub memlock: bool,
    /// Hold `/dev/cpu_dma_latency` at 0 for the run.
    pub cpu_dma_latency: bool,
    /// Kernel tracing (`--trace-on`, `--split`): set up by `rtshield-run`
    /// around the engine; the engine only sees a [`SpikeTrigger`].
    pub trace: Option<TraceSpec>,
}

/// What to trace (docs/trace.md).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceSpec {
    /// Explain every wake-up later than this (`--trace-on`).
    pub on_latency_ns: Option<u64>,
    /// Stop tracing and the run at the first such wake-up (`--trace-stop`).
    pub stop: bool,
    /// IRQ vs thread latency of every wake-up (`--split`).
    pub split: bool,
    /// Per-CPU trace buffer, KiB; None: `rtshield-run` sizes it from the
    /// period and the CPU count.
    pub buffer_kb: Option<u32>,
}

impl MeasureSpec {
    /// Defaults of `rtshield measure`: one thread per CPU, FIFO 98.
    pub fn new(cpus: &[u32], period_ns: u64) -> MeasureSpec {
        MeasureSpec {
            threads: cpus
                .iter()
                .enumerate()
                .map(|(i, &c)| ThreadSpec {
                    index: i as u32,
                    cpu: Some(c),
                    policy: Policy::Fifo,
                    priority: 98,
                    period_ns,
                    cgroup_tasks: None,
                })
                .collect(),
            mode: Mode::Nanosleep,
            duration_ns: None,
            samples: None,
            histo_size_ns: 1_000_000,
            resolution_ns: 1000,
            stats_period_ns: 1_000_000_000,
            memlock: true,
            cpu_dma_latency: true,
            trace: None,
        }
    }
}

/// One thread's figures as seen by the main thread at a stats period.
/// Totals (samples, min, max, cur, avg, overruns, lost) come from the
/// measuring thread's own exact counters; `ival_*` from the samples that
/// came through the ring during this interval.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ThreadStats {
    /// The thread's index ([`ThreadSpec::index`]).
    pub index: u32,
    /// 0 until the thread has started.
    pub tid: i32,
    /// The CPU it is pinned to, `None` when not pinned.
    pub cpu: Option<u32>,
    /// Policy actually in force (after any fallback).
    pub policy: Option<Policy>,
    /// Wake-ups measured since the start.
    pub samples: u64,
    /// Smallest latency since the start, ns (0 before the first sample).
    pub min_ns: i64,
    /// Running maximum (the torture article's max-max).
    pub max_ns: i64,
    /// The last latency, ns.
    pub cur_ns: i64,
    /// Mean latency since the start, ns.
    pub avg_ns: f64,
    /// This interval's samples (through the ring).
    pub ival_samples: u64,
    /// Smallest latency of this interval, ns (meaningless when `ival_samples` is 0).
    pub ival_min_ns: i64,
    /// Largest latency of this interval, ns (meaningless when `ival_samples` is 0).
    pub ival_max_ns: i64,
    /// Mean latency of this interval, ns.
    pub ival_avg_ns: f64,
    /// Wake-ups later than the following period, since the start.
    pub overruns: u64,
    /// Periods skipped because of overruns, since the start.
    pub missed_periods: u64,
    /// Samples the ring could not take, since the start (still in the totals).
    pub lost: u64,
    /// The thread has finished.
    pub done: bool,
}

/// What the main thread sees every stats period (per thread: tid, cpu,
/// total samples, interval min/avg/max, running max, cur, overruns, lost).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct IntervalStats {
    /// Since the start of the measurement.
    pub elapsed_ns: u64,
    /// The requested duration, if any (for a progress bar).
    pub duration_ns: Option<u64>,
    /// The requested sample count per thread, if any.
    pub samples_target: Option<u64>,
    /// Bucket width used for display (1000 = µs).
    pub resolution_ns: u64,
    /// The measuring mode, for the display's header (`None` in hand-built stats).
    pub mode: Option<Mode>,
    /// One entry per measuring thread, in index order.
    pub threads: Vec<ThreadStats>,
}

/// Called on the main thread every stats period; return false to stop the run.
pub trait Observer {
    /// Called every stats period with the figures so far; return false to stop the run.
    fn interval(&mut self, s: &IntervalStats) -> bool;

    /// Asked after each [`interval`](Self::interval) that returned true:
    /// return true to receive a [`snapshot`](Self::snapshot) now (e.g. a
    /// checkpoint is due). The default never asks.
    fn wants_snapshot(&mut self, _s: &IntervalStats) -> bool {
        false
    }

    /// The run so far, as a complete [`Measurement`] (`partial` set,
    /// `end` = [`EndReason::Running`]): write it with `to_result` +
    /// `rtshield_results::write_all` to checkpoint. Costs a copy of the
    /// histograms, on the main thread only.
    fn snapshot(&mut self, _m: &Measurement) {}

    /// Called on the main thread after every drain of the rings (every
    /// 20 ms) with the spikes the measuring threads flagged since the last
    /// call (see [`SpikeTrigger`]; often none), the threads' tids (0 for
    /// a thread not started) and, with `--split` only (empty otherwise),
    /// per thread the expected wake-up and latency of every sample drained
    /// since the last call, in order. The default does nothing.
    fn drained(&mut self, _marks: &[SpikeMark], _tids: &[i32], _times: &[Vec<SampleTime>]) {}

    /// Asked after every drain (every 20 ms) with the time since the start
    /// of the measurement: return true to end the current interval now (an
    /// [`interval`](Self::interval) call follows at once, and the next
    /// period counts from here). `rtshield run` cuts a `timeline.csv` row
    /// at each load/rest switch this way. The default never cuts.
    fn cut_due(&mut self, _elapsed_ns: u64) -> bool {
        false
    }
}

/// One sample's time, as the measuring loop knew it: handed to the
/// observer with `--split` so it can pair the sample with its own trace
/// events (the main thread copies it out of the ring; the loop only stores
/// one word more per sample).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SampleTime {
    /// The absolute expected wake-up, CLOCK_MONOTONIC ns.
    pub expected_ns: i64,
    /// Its latency, ns; `None` in interval mode (the sample is an interval).
    pub latency_ns: Option<i64>,
}

/// An observer that watches nothing.
pub struct NoObserver;

impl Observer for NoObserver {
    fn interval(&mut self, _s: &IntervalStats) -> bool {
        true
    }
}

/// Why a run ended, as written in `end_reason`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndReason {
    /// The requested duration elapsed.
    Duration,
    /// Every thread took its requested samples.
    Samples,
    /// The stop flag was set by a signal (see [`signal_received`]).
    Signal(i32),
    /// The stop flag was set by someone else, or the observer said stop.
    Stop,
    /// Not ended: a snapshot taken while running (a checkpoint).
    Running,
    /// `--trace-stop`: a wake-up was later than the trace threshold.
    TraceStop,
}

impl EndReason {
    /// The reason as written in `end_reason` (`duration`, `sigint`, `signal 10`, `trace-stop` ...).
    pub fn name(self) -> String {
        match self {
            EndReason::Duration => "duration".into(),
            EndReason::Samples => "samples".into(),
            EndReason::Signal(s) => rtshield_signals::end_reason(s),
            EndReason::Stop => "stop".into(),
            EndReason::Running => "running".into(),
            EndReason::TraceStop => "trace-stop".into(),
        }
    }
}

/// One thread's final results.
#[derive(Debug, Clone)]
pub struct ThreadMeasurement {
    /// What was asked for this thread.
    pub spec: ThreadSpec,
    /// The kernel thread id it ran as.
    pub tid: i32,
    /// The CPU the thread was pinned to (and found itself on).
    pub cpu: Option<u32>,
    /// Policy actually in force.
    pub policy: Policy,
    /// Real-time priority in force (0 after a fallback to OTHER).
    pub priority: i32,
    /// Why FIFO/RR was refused, when it was (the fallback explanation).
    pub fallback: Option<String>,
    /// Exact figures from the measuring thread.
    pub exact: stats::Accum,
    /// Histograms built from the samples that came through the ring.
    pub hist: stats::ThreadHistograms,
    /// `--split`: set by `rtshield-run` from the trace after the run.
    pub split: Option<rtshield_results::SplitResult>,
}

/// The outcome of [`run`].
#[derive(Debug, Clone)]
pub struct Measurement {
    /// What was asked for.
    pub spec: MeasureSpec,
    /// RFC 3339 UTC time of the start.
    pub started_at: String,
    /// Wall time measured.
    pub elapsed_ns: u64,
    /// Why the run ended.
    pub end: EndReason,
    /// One entry per measuring thread, in index order.
    pub threads: Vec<ThreadMeasurement>,
    /// Things the user must know (fallback, mlockall refused, lost samples...).
    pub warnings: Vec<String>,
    /// `/dev/cpu_dma_latency` value held during the run, if any.
    pub cpu_dma_latency: Option<i32>,
    /// mlockall was in force.
    pub memlocked: bool,
    /// A snapshot of a run still going ([`Observer::snapshot`]).
    pub partial: bool,
    /// What kernel tracing found; set by `rtshield-run` after the run.
    pub trace: Option<rtshield_results::TraceResult>,
}

impl Measurement {
    /// The largest maximum of all threads, in ns.
    pub fn max_latency_ns(&self) -> i64 {
        self.threads
            .iter()
            .map(|t| t.exact.lat.max)
            .max()
            .unwrap_or(0)
    }
}
