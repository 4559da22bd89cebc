//! rtshield-noise: what steals time from a busy-polling CPU.
//!
//! On each measured CPU a thread pinned there spins reading
//! CLOCK_MONOTONIC and records every gap between two reads longer than a
//! threshold (default 1 µs) as a noise event: the time the CPU was taken
//! from it (an IRQ, a softirq, another thread, the tick, an NMI) or lost
//! altogether (hardware, firmware, the hypervisor). Per CPU it reports what
//! osnoise reports: runtime, total noise, the share of the CPU left to the
//! thread (`100 × (runtime − noise) / runtime`), the longest single noise,
//! a histogram of noise lengths, and, with a kernel trace
//! (a private tracefs instance), the cause of every event
//! (`rtshield_trace::noise`).
//!
//! Its one job: measure what steals time from a CPU, and say why.
//! Module map: `spin` (the hot loop and its windows), `engine` (threads,
//! rings, the drain, the run's [`RunResult`](rtshield_results::RunResult)
//! of kind `noise`), `traced` (the tracing session), `result` (helpers of
//! the result), `limits` (every range of a [`NoiseSpec`]). The file format
//! is `rtshield-results`' (`NoiseResult`), the summary table and pictures
//! `rtshield-report`'s.
//!
//! What it may not do: allocate, lock or make a system call while a
//! window spins, besides the clock read (the `no_alloc` unit tests check
//! allocations; the sleep comes between windows); leave a real-time busy loop unbounded: the spinning threads
//! run at SCHED_OTHER by default; with a priority they run at SCHED_FIFO
//! only `runtime` out of every `period` and sleep the rest
//! ([`MAX_RT_SHARE_PCT`]); or parse ftrace text itself (that is
//! `rtshield_trace`'s).
#![deny(missing_docs)]
#![warn(unreachable_pub)]

mod engine;
mod limits;
#[cfg(test)]
mod no_alloc;
mod result;
mod spin;
mod traced;

pub use engine::{run, EndReason};
pub use limits::{DEFAULT_PERIOD_NS, MAX_RT_SHARE_PCT};

use rtshield_vocab::CpuSet;

/// A noise measurement, as asked (check it with [`NoiseSpec::check`]).
#[derive(Debug, Clone, PartialEq)]
pub struct NoiseSpec {
    /// The CPUs measured, one spinning thread each.
    pub cpus: CpuSet,
    /// Stop after this long; `None`: until the stop flag is set.
    pub duration_ns: Option<u64>,
    /// A gap between two clock reads longer than this is noise.
    pub threshold_ns: u64,
    /// Spinning time per period.
    pub runtime_ns: u64,
    /// Window spacing: the thread sleeps `period_ns - runtime_ns` of each.
    pub period_ns: u64,
    /// `Some(p)`: SCHED_FIFO priority `p` (1..99); `None`: SCHED_OTHER.
    pub priority: Option<i32>,
    /// Find the cause of every event from kernel trace events.
    pub trace: bool,
    /// Per-CPU trace buffer, KiB.
    pub trace_buffer_kb: u32,
    /// Largest noise length in the 1 µs linear histogram; longer ones are
    /// its overflow (still in the maximum and the percentiles).
    pub histo_size_ns: u64,
    /// Lock memory (`mlockall`) for the run.
    pub memlock: bool,
}

impl NoiseSpec {
    /// The defaults of `rtshield noise --cpus LIST`: 1 µs threshold,
    /// SCHED_OTHER, spinning without pause (1 s windows back to back).
    pub fn new(cpus: CpuSet) -> NoiseSpec {
        NoiseSpec {
            cpus,
            duration_ns: None,
            threshold_ns: limits::DEFAULT_THRESHOLD_NS,
            runtime_ns: limits::DEFAULT_PERIOD_NS,
            period_ns: limits::DEFAULT_PERIOD_NS,
            priority: None,
            trace: false,
            trace_buffer_kb: limits::DEFAULT_TRACE_BUFFER_KB,
            histo_size_ns: limits::DEFAULT_HISTO_SIZE_NS,
            memlock: true,
        }
    }

    /// Every value in its range ([`limits`]); the error names the option.
    pub fn check(&self) -> Result<(), rtshield_vocab::InputError> {
        limits::check(self)
    }
}
