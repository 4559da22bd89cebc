//! `results.json`, schema `rtshield.results/2`. Fields are only ever added
//! within a major version; a reader refuses a major version it does not
//! know. Version 2 made every value a source may not record optional
//! (`null` in the file: unknown, never 0 or a guess) and added
//! `percentile_bounds`; version-1 files are read and upgraded
//! ([`crate::read`]).

use rtshield_sys::SysInfo;
use rtshield_vocab::Policy;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The schema identifier written in every `results.json`.
pub const SCHEMA: &str = "rtshield.results/2";

/// One measurement run: one or more measuring threads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// What was measured: wake-up latency (the default, not written) or
    /// `noise` (`rtshield noise`: then [`RunResult::noise`] is present).
    #[serde(default, skip_serializing_if = "crate::RunKind::is_latency")]
    pub kind: crate::RunKind,
    /// `rtshield 0.1.0`.
    pub tool: String,
    /// A short label for reports (defaults to the output directory name).
    #[serde(default)]
    pub label: Option<String>,
    /// When the run started: RFC 3339, UTC for rtshield's runs; as the
    /// source wrote it for an import (cyclictest's `Tue, 24 Nov 2026
    /// 21:07:05 +0000`); unknown when the source does not say.
    pub started_at: Option<String>,
    /// Wall time actually measured, in seconds (main thread's view), or
    /// the source's own start and end times; unknown when it records none.
    pub duration_s: Option<f64>,
    /// argv of the command that produced this run.
    pub command: Vec<String>,
    /// The configuration file's text, when run from one.
    #[serde(default)]
    pub config: Option<String>,
    /// How the run measured (mode, resolution, histogram size, period of the statistics).
    pub settings: Settings,
    /// The machine as it was at the start: kernel, CPUs, isolation, clocks (and temperatures at both ends).
    pub sysinfo: SysInfo,
    /// Things the user must know to read the numbers right (SCHED_OTHER
    /// fallback, lost samples, interrupted run...).
    #[serde(default)]
    pub warnings: Vec<String>,
    /// Why the run ended: `duration`, `samples`, `sigint`, `sigterm`, `sighup`, `sigquit`, `stop`
    /// (a program's STOP policy), `trace-stop` (`--trace-stop`), or
    /// `running` in a checkpoint of a run still going; unknown for a
    /// source that does not record it.
    pub end_reason: Option<String>,
    /// One entry per measuring thread, in index order.
    pub threads: Vec<ThreadResult>,
    /// Load programs and built-in loads that ran beside the measurement.
    #[serde(default)]
    pub programs: Vec<ProgramResult>,
    /// Extra provenance: isolation method, load name, partition, campaign axes.
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
    /// Kernel tracing (`--trace-on`, `--split`; docs/trace.md); absent
    /// when the run did not ask for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceResult>,
    /// The limits the run was given (`measure --max-latency`) and whether
    /// each thread and the run passed them; absent when no limit was given.
    /// Every CI export derives its pass/fail from it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<crate::Verdict>,
    /// `rtshield noise`: per CPU the noise figures, causes and offenders
    /// (the noise lengths' histograms are in `threads`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise: Option<crate::NoiseResult>,
    /// Isolation drift seen during the run: the top-level `drift` array
    /// and `drift_watch` object ([`crate::drift`]; docs/formats.md), both
    /// absent when the run was not watched.
    #[serde(flatten)]
    pub drift: crate::drift::Drift,
}

/// What kernel tracing found (`--trace-on`, `--trace-stop`, `--split`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TraceResult {
    /// `--trace-on`: wake-ups later than this are spikes, explained.
    pub on_latency_ns: Option<u64>,
    /// `--trace-stop`: the run stopped at the first spike, trace kept.
    pub stop: bool,
    /// `--split`: IRQ and thread latency of every wake-up (`threads[].split`).
    pub split: bool,
    /// Per-CPU trace buffer, KiB.
    pub buffer_kb: u32,
    /// Whether rtshield chose `buffer_kb` (from the period and the CPU
    /// count, docs/trace.md) because none was given; absent when given
    /// and in older files.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub buffer_auto: bool,
    /// Events the buffers of the measured CPUs overwrote before they were
    /// read (`overrun:` of each `per_cpu/cpuN/stats`, summed, read at the
    /// end); null when unknown (a stats file unreadable, no instance),
    /// absent in older files. With `--split` these are lost; without it,
    /// the oldest events leave an overwrite-mode buffer by design, and a
    /// spike read after its window was overwritten cannot be explained.
    #[serde(default)]
    pub overrun_events: Option<u64>,
    /// Events the buffers of the measured CPUs refused (`dropped events:`
    /// of the same files); null when unknown, absent in older files.
    #[serde(default)]
    pub dropped_events: Option<u64>,
    /// Why tracing did not run (the run measured without it).
    pub unavailable: Option<String>,
    /// Wanted events this kernel does not have.
    #[serde(default)]
    pub events_missing: Vec<String>,
    /// Wake-ups later than `on_latency_ns`, every thread.
    pub spikes_seen: u64,
    /// Spikes seen but not explained (beyond the analysis cap, or the
    /// measuring thread's spike queue was full).
    #[serde(default)]
    pub spikes_not_analysed: u64,
    /// The explained spikes (also in `spikes.json`).
    #[serde(default)]
    pub spikes: Vec<rtshield_trace::Spike>,
    /// Spikes that could not be explained, and why.
    #[serde(default)]
    pub errors: Vec<String>,
    /// VM steal time of the measured CPUs over the run (`/proc/stat`).
    #[serde(default)]
    pub steal_ns: Option<u64>,
    /// Longest analysis of one spike (reading and parsing the buffer
    /// included), ms.
    #[serde(default)]
    pub analysis_max_ms: Option<f64>,
    /// `--split`: events the trace buffer reported lost on the measured
    /// CPUs (`CPU:N [LOST k EVENTS]` in `trace_pipe`), summed; absent when
    /// the pipe was not read. The wake-ups in a stretch with lost events
    /// are not split (`threads[].split.unsplit.lost_events`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lost_events: Option<u64>,
    /// `--split`: `LOST EVENTS` notes without a count (the kernel could
    /// not say how many): `lost_events` is then a lower bound.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub lost_notes_uncounted: u64,
    /// The trace buffer as read at a `--trace-stop` (written to
    /// `trace.txt`, not to results.json).
    #[serde(skip)]
    pub raw: Option<String>,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// One latency split in two (`--split`): from the same kernel events,
/// timer IRQ latency (timer expiry − requested expiry) and thread latency
/// (switch-in − wake-up) of each measured sample, paired one to one with
/// its own wake-up's events (docs/trace.md: the pairing rule); samples
/// whose events are not all there are counted in `unsplit`, not guessed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SplitResult {
    /// Samples split.
    pub samples: u64,
    /// Samples whose split is unknown, by reason: `lost_events` (the
    /// buffer lost events in the wake-up's stretch), `not_traced` (no
    /// complete wake-up in the trace: outside its window, or an event not
    /// recorded), `overrun` (the thread armed its sleep late: nothing to
    /// split), `inconsistent` (events contradicting the sample). Absent in
    /// files written before it (unknown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unsplit: Option<BTreeMap<String, u64>>,
    /// Timer IRQ latency: hardware timer expiry minus the requested expiry.
    pub irq: LatencyPart,
    /// Thread latency: switch-in of the measuring thread minus its wake-up.
    pub thread: LatencyPart,
}

impl SplitResult {
    /// A file whose split covers no sample holds placeholders, not
    /// figures (rtshield before the figures became optional wrote 0 for
    /// each): they become unknown.
    pub fn forget_placeholders(&mut self) {
        if self.samples == 0 {
            for p in [&mut self.irq, &mut self.thread] {
                (p.min_ns, p.max_ns, p.avg_ns) = (None, None, None);
                p.percentiles.clear();
            }
        }
    }
}

/// One part of a split latency: exact figures, histogram (same buckets as
/// the total's), percentiles.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencyPart {
    /// Smallest latency of this part, ns (may be negative on clock skew
    /// between events); null = unknown (no sample split).
    pub min_ns: Option<i64>,
    /// Largest latency of this part, ns; null = unknown (no sample split).
    pub max_ns: Option<i64>,
    /// Mean latency of this part, ns; null = unknown (no sample split).
    pub avg_ns: Option<f64>,
    /// The part's histogram, same resolution and size as the thread's total.
    pub histogram: Histogram,
    /// Percentiles of this part from its histogram, ns, keyed like [`ThreadResult::percentiles`].
    pub percentiles: BTreeMap<String, i64>,
}

/// The measurement settings common to the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    /// `nanosleep`, `posix-timer` or `interval`; unknown for a source
    /// that does not record it.
    pub mode: Option<String>,
    /// Histogram bucket width in ns (1000 = µs resolution, 1 = ns).
    pub resolution_ns: u64,
    /// Number of histogram buckets: histo_size / resolution + 1 (bucket
    /// `histo_size/res` still holds a sample equal to the histogram size,
    /// as in the systress article where `20 us` lists 0..=20); unknown
    /// without a histogram.
    pub histo_buckets: Option<u64>,
    /// How often the live statistics (and `timeline.csv` rows) were
    /// taken, ns; unknown for an import.
    pub stats_period_ns: Option<u64>,
    /// The duration asked for (`--duration`, `lifetime.duration`), ns; `None` when the run was bounded otherwise.
    pub requested_duration_ns: Option<u64>,
    /// The sample count asked for per thread (`--samples`); `None` when not bounded by samples.
    pub requested_samples: Option<u64>,
    /// Whether the process ran with `mlockall(MCL_CURRENT|MCL_FUTURE)`
    /// (no page faults in the loop); unknown when the source does not say.
    pub memlock: Option<bool>,
    /// The value held in `/dev/cpu_dma_latency` during the run (0: no
    /// deep C-state), `None` when it was not held (or, for an import, not
    /// recorded).
    pub cpu_dma_latency: Option<i32>,
}

/// One measuring thread's results. A field that is `None` was not
/// recorded by the source (an import from another tool's file): unknown,
/// shown as `?`, never 0 and never a guess.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadResult {
    /// The thread's index (the `NN` of `timer_threadNN.txt`), from 0.
    pub index: u32,
    /// The kernel thread id it ran as; unknown when imported from a file
    /// that does not say.
    pub tid: Option<i32>,
    /// The CPU it was pinned to; `None` when it kept the inherited
    /// affinity or the source does not say.
    pub cpu: Option<u32>,
    /// Policy actually in force (after any fallback).
    #[serde(with = "policy_name")]
    pub policy: Option<Policy>,
    /// Real-time priority in force, 1..=99 for FIFO/RR, 0 otherwise.
    pub priority: Option<i32>,
    /// Policy that was asked for, when it differs (fallback).
    #[serde(default, with = "policy_name")]
    pub requested_policy: Option<Policy>,
    /// Wake-up period, ns.
    pub period_ns: Option<u64>,
    /// Wake-ups measured (unknown for a source that keeps only minima,
    /// means and maxima).
    pub samples: Option<u64>,
    /// Smallest latency measured, ns (exact, not from the histogram);
    /// null = unknown (no sample: a run stopped before the first wake-up).
    pub min_ns: Option<i64>,
    /// Largest latency measured, ns (exact: also counts samples past the
    /// histogram); null = unknown (no sample).
    pub max_ns: Option<i64>,
    /// Last sample.
    pub cur_ns: Option<i64>,
    /// Mean latency over every sample, ns; null = unknown (no sample).
    pub avg_ns: Option<f64>,
    /// Overrun events: wake-ups later than the following period.
    pub overruns: Option<u64>,
    /// Periods skipped because of overruns (cyclictest hides these).
    pub missed_periods: Option<u64>,
    /// Samples the ring could not take (still in min/max/avg/samples).
    pub lost: Option<u64>,
    /// Every sample in [`Settings::resolution_ns`] buckets (samples past
    /// the last bucket in `overflow`); None when the source kept none
    /// (cyclictest without `-h`).
    pub histogram: Option<Histogram>,
    /// Over the histogram only (the systress article's `_H` columns);
    /// None without a histogram.
    pub hist_stats: Option<HistStats>,
    /// Exact percentiles, in ns: from a high-dynamic-range histogram
    /// (measured runs) or from the linear histogram when the percentile's
    /// rank falls inside it (imports). Keys among [`PERCENTILES`] and
    /// [`DEEP_PERCENTILES`], only when the sample count supports them
    /// ([`percentile_supported`]): absent otherwise ("not enough
    /// samples"), and absent when unknown or only bounded.
    pub percentiles: BTreeMap<String, i64>,
    /// Percentiles only known to lie at or above a value (their rank
    /// falls beyond the source's histogram). Never also in `percentiles`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub percentile_bounds: BTreeMap<String, PercentileBound>,
    /// Coordinated-omission-corrected view: each missed period counted as
    /// a sample with the latency it would have had. None when the source
    /// does not record missed periods (no correction is possible).
    pub corrected: Option<Corrected>,
    /// Each new maximum of the run and when it happened (the torture
    /// article's "946 µs after 156 s … 3173 µs after 16718 s"), oldest
    /// first. Absent in files written before it was recorded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub worst_cases: Vec<WorstCase>,
    /// `--split`: IRQ latency and thread latency of the same wake-ups.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split: Option<SplitResult>,
    /// `[bound_ns, samples at or below it]` for each bound of
    /// [`LE_BOUNDS_NS`], cumulative, counted exactly from every sample
    /// (overflow and underflow included): the buckets of the OpenMetrics
    /// export. Absent (unknown) in imports and in files written before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub le_counts: Option<Vec<[u64; 2]>>,
    /// The 0-based numbers of the first samples at or above the histogram
    /// size (the overflows of cyclictest's `-h N`, N = the size in
    /// resolution units: the last bucket and beyond), at most N of them, as
    /// cyclictest lists them. Absent when unknown (imports, older files, a
    /// thread that lost samples: the numbers would be shifted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overflow_cycles: Option<Vec<u64>>,
}

/// A percentile known only as a lower bound: every sample from its rank
/// up lies at or above `at_least_ns` (and at or below the maximum).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PercentileBound {
    /// The percentile is at least this, in ns.
    pub at_least_ns: i64,
    /// Why only a bound is known ([`BEYOND_HISTOGRAM`]).
    pub reason: String,
}

/// The reason of a bound whose rank falls among the samples beyond the
/// histogram (the overflow).
pub const BEYOND_HISTOGRAM: &str = "beyond the histogram";

/// What a reader knows of one percentile of a thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pct<'a> {
    /// The value, in ns.
    Exact(i64),
    /// At least this many ns, and why only that is known.
    AtLeast(i64, &'a str),
    /// Too few samples for this percentile to differ from the maximum.
    NotEnoughSamples,
    /// The source did not record it.
    Unknown,
}

impl ThreadResult {
    /// Percentile `key` (`"99.9"`): not enough samples when the sample
    /// count is known and does not support it (whatever a file holds),
    /// else exact, bounded, or unknown.
    pub fn pct(&self, key: &str) -> Pct<'_> {
        if self.samples.is_some_and(|n| !percentile_supported(key, n)) {
            return Pct::NotEnoughSamples;
        }
        if let Some(v) = self.percentiles.get(key) {
            return Pct::Exact(*v);
        }
        if let Some(b) = self.percentile_bounds.get(key) {
            return Pct::AtLeast(b.at_least_ns, &b.reason);
        }
        Pct::Unknown
    }

    /// A thread that measured nothing (`samples` 0) has no minimum,
    /// maximum, mean or last sample: files written before these became
    /// optional hold 0 for each, which is a placeholder and becomes
    /// unknown. A thread with samples (or an unknown count) keeps its
    /// figures.
    pub fn forget_placeholders(&mut self) {
        if self.samples == Some(0) {
            (self.min_ns, self.max_ns, self.avg_ns) = (None, None, None);
            self.cur_ns = None;
        }
        if let Some(c) = self.corrected.as_mut().filter(|c| c.samples == 0) {
            c.max_ns = None;
        }
        if let Some(sp) = &mut self.split {
            sp.forget_placeholders();
        }
    }

    /// The histogram's bucket width, else `fallback` (the run's
    /// resolution) for a thread without a histogram.
    pub fn resolution_ns(&self, fallback: u64) -> u64 {
        self.histogram
            .as_ref()
            .map_or(fallback, |h| h.resolution_ns)
    }
}

/// `policy` as one lowercase word (`fifo`, `rr`, `other` …); any spelling
/// `Policy::parse` knows is read (`FIFO`, `SCHED_FIFO`, files written
/// before the vocabulary was one), and a name it does not know reads as
/// unknown.
mod policy_name {
    use super::Policy;
    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(p: &Option<Policy>, s: S) -> Result<S::Ok, S::Error> {
        match p {
            Some(p) => s.serialize_str(p.name()),
            None => s.serialize_none(),
        }
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Policy>, D::Error> {
        Ok(Option::<String>::deserialize(d)?.and_then(|n| Policy::parse(&n)))
    }
}

/// A new maximum: `latency_ns`, `at_ns` after the start of the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorstCase {
    /// When the new maximum happened, ns after the start of the run.
    pub at_ns: u64,
    /// The new maximum, ns.
    pub latency_ns: i64,
}

/// Histogram of latencies in `resolution_ns` buckets; bucket `i` counts
/// samples in `[i*res, (i+1)*res)`. Only non-zero buckets are stored.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Histogram {
    /// Bucket width, ns (1000 for µs resolution, 1 for ns).
    pub resolution_ns: u64,
    /// Number of buckets: latencies from 0 to `buckets * resolution_ns` (exclusive) are counted.
    pub buckets: u64,
    /// `[bucket index, count]`, ascending, non-zero only.
    pub counts: Vec<[u64; 2]>,
    /// Samples at or above `buckets * resolution_ns`.
    pub overflow: u64,
    /// Samples below zero (clock anomalies); not in `counts`.
    #[serde(default)]
    pub underflow: u64,
}

/// Statistics over the samples inside the histogram (the systress article §4.3.4),
/// in ns (computed from bucket indexes × resolution).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HistStats {
    /// Samples inside the histogram (overflow and underflow excluded).
    pub samples: u64,
    /// Mean over those samples (bucket lower edges), ns.
    pub avg_ns: f64,
    /// Lower median: lower edge of the bucket holding the ⌈n/2⌉-th sample, ns.
    pub median_ns: i64,
    /// Population standard deviation, ns.
    pub std_ns: f64,
    /// Lower edge of the fullest bucket (the lowest one on a tie), ns.
    pub mode_ns: i64,
}

impl HistStats {
    /// The systress article's `_H` statistics over `(bucket index, count)` pairs in
    /// ascending bucket order, buckets `res_ns` wide: mean, population
    /// standard deviation, lower median (the bucket holding the
    /// ⌈n/2⌉-th sample) and mode (the lowest of the fullest buckets).
    pub fn from_buckets<I>(buckets: I, res_ns: u64) -> HistStats
    where
        I: IntoIterator<Item = (u64, u64)>,
        I::IntoIter: Clone,
    {
        let it = buckets.into_iter();
        let n: u64 = it.clone().map(|(_, c)| c).fold(0, u64::saturating_add);
        if n == 0 {
            return HistStats {
                samples: 0,
                avg_ns: 0.0,
                median_ns: 0,
                std_ns: 0.0,
                mode_ns: 0,
            };
        }
        let r = res_ns as f64;
        let mean = it.clone().map(|(i, c)| i as f64 * c as f64).sum::<f64>() / n as f64;
        let var = it
            .clone()
            .map(|(i, c)| (i as f64 - mean).powi(2) * c as f64)
            .sum::<f64>()
            / n as f64;
        let rank = n.div_ceil(2);
        let mut cum = 0;
        let mut median = 0;
        for (i, c) in it.clone() {
            cum = u64::saturating_add(cum, c);
            if cum >= rank {
                median = i;
                break;
            }
        }
        let (mut mode, mut best) = (0, 0);
        for (i, c) in it {
            if c > best {
                (mode, best) = (i, c);
            }
        }
        HistStats {
            samples: n,
            avg_ns: mean * r,
            median_ns: crate::histogram::edge_ns(median, res_ns),
            std_ns: var.sqrt() * r,
            mode_ns: crate::histogram::edge_ns(mode, res_ns),
        }
    }
}

/// Coordinated-omission-corrected figures: every missed period counted as
/// the sample it would have been (its latency the delay it suffered), so a
/// stall shows in the tail as it would for a steady caller.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Corrected {
    /// Samples plus the missed periods counted back in.
    pub samples: u64,
    /// Largest corrected latency, ns; null without a sample (older
    /// files wrote 0: read back as null).
    pub max_ns: Option<i64>,
    /// Corrected percentiles, ns, keyed like [`ThreadResult::percentiles`].
    pub percentiles: BTreeMap<String, i64>,
}

/// A load program or built-in load that ran beside the measurement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProgramResult {
    /// The program's index in the configuration (`program[N]`), built-in loads after.
    pub index: u32,
    /// Command line, or `builtin:<name>`.
    pub command: String,
    /// The CPUs it was allowed to run on (a CPU list such as `1-3`), `None` for the inherited set.
    pub cpus: Option<String>,
    /// Times it was started (respawns included).
    pub spawns: u64,
    /// Times it exited with status 0.
    pub exits_ok: u64,
    /// Times it exited otherwise (non-zero status, signal, or a failed start).
    pub exits_ko: u64,
}

/// The fixed `le` scale of [`ThreadResult::le_counts`] and of the
/// OpenMetrics histogram, in ns: 1, 2, 5 per decade from 1 µs to 10 s (the
/// same on every host and run, so series aggregate). It covers the largest
/// linear histogram (`--histo-size` 1 s) and ten times beyond; a larger
/// sample is only in `+Inf`.
pub const LE_BOUNDS_NS: [u64; 22] = [
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
    200_000_000,
    500_000_000,
    1_000_000_000,
    2_000_000_000,
    5_000_000_000,
    10_000_000_000,
];

/// The percentile keys, in order: in `percentiles` when exact and the
/// sample count supports them ([`percentile_supported`]).
pub const PERCENTILES: &[&str] = &["50", "90", "99", "99.9", "99.99", "99.999", "99.9999"];

/// Deeper percentiles (the ARTiS thesis quotes 99.999999 %): in
/// `percentiles` only when [`percentile_supported`], absent otherwise.
pub const DEEP_PERCENTILES: &[&str] = &["99.99999", "99.999999"];

/// Whether `n` samples support percentile `key` (`"99.9"`): at least
/// 1/(1 − q) of them (1000 for p99.9, 10⁸ for p99.999999), so that at
/// least one sample lies at or past it. With fewer, the value would only
/// be the maximum again: tables say "not enough samples".
pub fn percentile_supported(key: &str, n: u64) -> bool {
    match key.parse::<f64>() {
        Ok(p) if (0.0..100.0).contains(&p) => n as f64 * (1.0 - p / 100.0) >= 1.0 - 1e-6,
        _ => false,
    }
}

/// The kernel a run was measured on, as one label: release, preemption
/// model and (for a dynamic-preemption kernel) the mode in force, e.g.
/// `6.18.44 NONE (dynamic: none)`. What a campaign keeps apart (the
/// systress article's figure 11 has one column set per kernel) and what
/// `campaign --resume` compares: a run made on another kernel is not done
/// on this one. Unknown parts are `?`.
pub fn kernel_id(si: &SysInfo) -> String {
    let release = si.kernel_release.as_deref().unwrap_or("?");
    let model = si.preempt_model.as_deref().unwrap_or("?");
    match (&si.preempt_mode, si.preempt_dynamic) {
        (Some(m), _) => format!("{release} {model} (dynamic: {m})"),
        (None, true) => format!("{release} {model} (dynamic)"),
        (None, false) => format!("{release} {model}"),
    }
}
