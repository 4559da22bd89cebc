//! rtshield-limits: every documented value range of a measurement
//! (docs/ranges.md, docs/manual/campaign.md), and the input limits every
//! reader and configuration shares (threads per file and per run,
//! programs, processes, the bytes one report reads, the events a
//! simulation keeps), in one place.
//!
//! Three parsers read measurement settings: the command line's
//! `MeasureRequest` (crate `run`, which also checks each campaign cell),
//! the systress configuration file (crate `config`) and the campaign file
//! (crate `campaign`). Each checks a value when it parses it, so that it can
//! name where the value came from (`--period 500ns: ...`, `FILE:LINE:COL`),
//! and words its refusal for its readers; the numbers are these.
//!
//! Why a crate of its own, below all three: the ranges are facts about what
//! rtshield accepts, not about any input format, and none of the parsers
//! should depend on another (or on the measuring engine) to know them. Pure
//! constants, no dependency.
//!
//! What it may not do: parse, word an error or know a format: it holds the
//! numbers only, and each parser phrases its own refusal with them.

#![deny(missing_docs)]
#![warn(unreachable_pub)]

/// A closed range `min..=max`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Range<T> {
    /// The smallest value accepted.
    pub min: T,
    /// The largest value accepted.
    pub max: T,
}

impl<T: PartialOrd + Copy> Range<T> {
    /// Whether `v` is within the range.
    pub fn contains(&self, v: T) -> bool {
        self.min <= v && v <= self.max
    }
}

const US: u64 = 1_000;
const MS: u64 = 1_000_000;
const S: u64 = 1_000_000_000;
const H: u64 = 3_600 * S;
const DAY: u64 = 86_400 * S;

// ------------------------------------------------ a measurement (`measure` options and `run` keys)

/// `--period`, `period`: 1 µs .. 1 h.
pub const PERIOD_NS: Range<u64> = Range { min: US, max: H };
/// `--duration`, `lifetime.duration`: more than 0, at most 365 days.
pub const DURATION_NS: Range<u64> = Range {
    min: 1,
    max: 365 * DAY,
};
/// `--samples`, `lifetime.samples`: 1 .. 10^12 per thread.
pub const SAMPLES: Range<u64> = Range {
    min: 1,
    max: 1_000_000_000_000,
};
/// `--histo-size`, `stats.histo_size`: more than 0, at most 1 s.
pub const HISTO_SIZE_NS: Range<u64> = Range { min: 1, max: S };
/// The most histogram buckets (`histo_size / resolution`) a thread may have.
pub const MAX_BUCKETS: u64 = 10_000_000;
/// Whether a histogram of `size_ns` at `resolution_ns` per bucket has more
/// than [`MAX_BUCKETS`] buckets: the one check `measure`'s options and a
/// `run` configuration's stanzas share (8 bytes a bucket, allocated up front).
pub fn too_many_buckets(size_ns: u64, resolution_ns: u64) -> bool {
    size_ns / resolution_ns.max(1) > MAX_BUCKETS
}
/// `histo.resolution`: a whole number of nanoseconds, 1 ns .. 1 ms.
pub const RESOLUTION_NS: Range<u64> = Range { min: 1, max: MS };
/// `--stats-period`, `stats.period`: 10 ms .. 1 h.
pub const STATS_PERIOD_NS: Range<u64> = Range {
    min: 10 * MS,
    max: H,
};
/// `--prio` (and `sched.priority`) with a real-time policy: 1..99.
pub const RT_PRIORITY: Range<i32> = Range { min: 1, max: 99 };
/// `sched.priority`, `priority` in a campaign: 0..99 (0 for a policy that
/// is not real-time).
pub const PRIORITY: Range<i32> = Range { min: 0, max: 99 };
/// `--max-latency` (as `export --max-latency`): more than 0, at most 1 h.
pub const MAX_LATENCY_NS: Range<u64> = Range { min: 1, max: H };
/// `--trace-on`, `trace.on_latency`: 1 µs .. 1 s.
pub const TRACE_LATENCY_NS: Range<u64> = Range { min: US, max: S };
/// `--trace-buffer-kb`, `trace.buffer_kb`: 1 .. 1048576 KiB per CPU.
pub const TRACE_BUFFER_KB: Range<u32> = Range {
    min: 1,
    max: 1_048_576,
};
/// The smallest per-CPU trace buffer rtshield picks itself (without
/// `--trace-buffer-kb` / `trace.buffer_kb`: sized from the period and the
/// CPU count, docs/trace.md), KiB: what 1 ms periods need for 1 s.
pub const TRACE_BUFFER_KB_AUTO_MIN: u32 = 256;

// ------------------------------------------------ keys of the systress file only

/// `stats.checkpoint`: `off`, or at least 100 ms.
pub const CHECKPOINT_MIN_NS: u64 = 100 * MS;
/// `stats.rotate`: `off`, or 1 s .. 365 days.
pub const ROTATE_NS: Range<u64> = Range {
    min: S,
    max: 365 * DAY,
};
/// `start.delay`: 0 .. 1 day.
pub const START_DELAY_NS: Range<u64> = Range { min: 0, max: DAY };
/// Each phase of `load.cycle`: 100 ms .. 1 day.
pub const CYCLE_PHASE_NS: Range<u64> = Range {
    min: 100 * MS,
    max: DAY,
};
/// `dbg_level`: 0 .. 9.
pub const DBG_LEVEL: Range<u32> = Range { min: 0, max: 9 };
/// `load.size` of the `memory` and `io` loads: 4 KiB .. 64 GiB per
/// worker (the io load's file grows to it, the memory load maps it).
pub const LOAD_SIZE_BYTES: Range<u64> = Range {
    min: 4 << 10,
    max: 64 << 30,
};
/// `load.workers`: 1 .. 64 per CPU.
pub const LOAD_WORKERS: Range<u32> = Range { min: 1, max: 64 };

// ------------------------------------------------ the campaign file

/// A campaign's `duration` (each run): 1 s .. 7 days.
pub const CAMPAIGN_DURATION_NS: Range<u64> = Range {
    min: S,
    max: 7 * DAY,
};
/// A campaign's `repeat`: 1 .. 1000.
pub const CAMPAIGN_REPEAT: Range<u64> = Range { min: 1, max: 1000 };
/// The most cells a campaign's matrix may have.
pub const CAMPAIGN_MAX_CELLS: usize = 10_000;
/// A campaign's `period` and `histo_size` (written in µs when bare): at
/// least 1 µs; at most the measure's own maximum.
pub const CAMPAIGN_PERIOD_NS: Range<u64> = PERIOD_NS;
/// See [`CAMPAIGN_PERIOD_NS`].
pub const CAMPAIGN_HISTO_SIZE_NS: Range<u64> = Range {
    min: US,
    max: HISTO_SIZE_NS.max,
};

// ------------------------------------------------ files rtshield reads (report, export, runs import)

/// Threads in one results file (`results.json`): at most 8192, the largest
/// `NR_CPUS` of distribution kernels (a run measures at most one thread
/// per CPU). A file naming more is refused before it is read into memory.
pub const RESULT_MAX_THREADS: usize = 8192;
/// Curves (measuring threads, over every input) in one report: at most
/// 512. Plots and tables of more are unreadable, and took minutes.
pub const REPORT_MAX_CURVES: usize = 512;
/// Bytes one `report` (or one `runs import`) reads over all its inputs
/// together (result files and their `timeline.csv`): 512 MiB, twice the
/// largest single input (`INPUT_LIMIT`). Per-file limits alone let 512
/// directories hard-linked to one 256 MiB timeline cost ~200 GB
/// (adversary round 5, F20).
pub const INPUT_TOTAL_MAX_BYTES: u64 = 512 << 20;

// ------------------------------------------------ what a `run` configuration may start

/// `timer_thread[N]` stanzas in one configuration: at most 1024 (each
/// measuring thread costs a histogram, a ring and a stack: 8193 of them
/// took 18 GB, adversary round 5, F12). At most [`RESULT_MAX_THREADS`], so
/// the run's own results always read back.
pub const RUN_MAX_TIMER_THREADS: usize = 1024;
/// `timer_thread[N]` stanzas per online CPU: at most 16 (so a 4-CPU board
/// takes at most 64, ~150 MB, rather than 1024, ~2.4 GB).
pub const RUN_MAX_TIMER_THREADS_PER_CPU: usize = 16;
/// The most `timer_thread[N]` stanzas a configuration may have on a
/// machine of `cpus` online CPUs: [`RUN_MAX_TIMER_THREADS_PER_CPU`] per
/// CPU, at most [`RUN_MAX_TIMER_THREADS`].
pub fn run_max_timer_threads(cpus: usize) -> usize {
    cpus.max(1)
        .saturating_mul(RUN_MAX_TIMER_THREADS_PER_CPU)
        .min(RUN_MAX_TIMER_THREADS)
}
/// `program[N]` stanzas in one configuration: at most 256 (100 000 were
/// accepted and started: a fork bomb, F12).
pub const RUN_MAX_PROGRAMS: usize = 256;
/// Processes the programs of one configuration start, a built-in load
/// counting one per worker (CPUs × kinds × `load.workers`): at most 4096.
pub const RUN_MAX_PROCESSES: u64 = 4096;
/// Threads the thread loads (`timers`, `syncio`: `load.size` threads per
/// worker) of one configuration start in all: at most 65 536.
pub const RUN_MAX_LOAD_THREADS: u64 = 65_536;

// ------------------------------------------------ what a simulation may keep

/// Events a simulation may take while it keeps them for `simulate
/// --trace` (the CSV rows) or `--gantt` (the run segments): at most 5
/// million (~115 bytes each, kept until the files are written: ~600 MB,
/// 760 MB with both). Beyond it the run is refused, naming both options
/// (adversary round 5, F16: the default `--max-events`, 500 million, let
/// a 90-byte scenario keep ~60-75 GB).
pub const SIM_MAX_TRACE_EVENTS: u64 = 5_000_000;

// A run's results must always read back: checked when this crate builds.
const _: () = assert!(RUN_MAX_TIMER_THREADS <= RESULT_MAX_THREADS);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_the_documented_ones() {
        assert!(PERIOD_NS.contains(1_000) && !PERIOD_NS.contains(999));
        assert!(PERIOD_NS.contains(3_600_000_000_000) && !PERIOD_NS.contains(3_600_000_000_001));
        assert!(!DURATION_NS.contains(0) && DURATION_NS.contains(365 * 86_400_000_000_000));
        assert!(!STATS_PERIOD_NS.contains(9_999_999));
        assert!(!RT_PRIORITY.contains(0) && PRIORITY.contains(0) && !PRIORITY.contains(100));
        assert!(CAMPAIGN_HISTO_SIZE_NS.contains(1_000) && !CAMPAIGN_HISTO_SIZE_NS.contains(999));
        assert!(LOAD_SIZE_BYTES.contains(4096) && !LOAD_SIZE_BYTES.contains(4095));
        assert!(LOAD_SIZE_BYTES.contains(64 << 30) && !LOAD_SIZE_BYTES.contains((64 << 30) + 1));
    }

    #[test]
    fn ten_million_buckets_at_most() {
        assert!(!too_many_buckets(10_000_000, 1));
        assert!(too_many_buckets(10_000_001, 1));
        assert!(too_many_buckets(S, 1));
        assert!(!too_many_buckets(S, 100));
    }
}
