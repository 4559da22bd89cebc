//! rtshield-results: the result files, and only them. Its one job is the
//! schema of `results.json` ([`RunResult`], version [`SCHEMA`]) and every
//! file format written from it or read into it: rtshield's own files
//! (JSON, CSV, `histogram.txt`, the systress article's `timer_threadNN.txt`,
//! `timeline.csv`, `spikes.json`), the CI formats of `rtshield export`
//! (cyclictest JSON, JUnit, OpenMetrics, KCIDB), and the readers of other
//! tools' files (cyclictest's `--json` and `-h` output, the torture
//! article's fluctuation log), plus the one latency [`Histogram`] type with
//! its statistics and merge.
//!
//! It may not measure, render a report, reach the kernel or know where
//! files live: callers hand it a [`RunResult`] and a directory
//! ([`rtshield_safefs::SafeDir`]) or text. All latencies are integer
//! nanoseconds; a format rounds to the run's resolution only when it
//! prints.

#![deny(missing_docs)]
#![warn(unreachable_pub)]

mod drift;
#[cfg(any(test, feature = "testing"))]
mod example;
mod export;
mod histogram;
mod import;
mod merge;
mod noise;
mod ranges;
mod read;
pub mod run_files;
mod schema;
mod secrets;
mod statrec;
mod unknown;
mod verdict;

pub use crate::drift::{
    before_spike as drift_before_spike, kind as drift_kind, timeline_cell as drift_timeline_cell,
    Drift, DriftEvent, DriftWatch, Effect as DriftEffect, SPIKE_WINDOW_NS as DRIFT_SPIKE_WINDOW_NS,
};
/// Fixtures for tests of this and other crates (feature `testing`, never
/// in the release binary).
#[cfg(any(test, feature = "testing"))]
pub use crate::example::example_result;
pub use crate::export::{
    by_name, csv_header, csv_split_header, file_names, format_timeline_host, format_timeline_row,
    read_timeline, spikes_summary, systress_file_name, timeline_header, timeline_header_with_drift,
    timeline_header_with_host, to_csv, to_cyclictest_hist, to_cyclictest_json, to_json, to_junit,
    to_kcidb, to_openmetrics, to_prometheus_text, to_spikes_json, to_spikes_txt, to_systress_txt,
    write_all, write_json, write_text, CiOptions, Csv, CyclictestHist, CyclictestJson,
    ExportManager, Exporter, Failure, Json, Junit, Kcidb, OpenMetrics, PrometheusText, Spikes,
    SystressTxt, TimelineHost, TimelineRecord, TimelineRow, TimelineWriter, Timestamps, CI_FORMATS,
    CSV_FILE, CYCLICTEST_JSON_FILE, HIST_FILE, JSON_FILE, JUNIT_FILE, KCIDB_FILE, OPENMETRICS_FILE,
    SPIKES_JSON, SPIKES_TXT, TIMELINE_CPU, TIMELINE_DRIFT, TIMELINE_ELAPSED_S, TIMELINE_FILE,
    TIMELINE_HEADER, TIMELINE_IVAL_MAX_NS, TIMELINE_MAX_MAX_NS, TIMELINE_PHASE, TIMELINE_THREAD,
    TRACE_TXT,
};
pub use crate::histogram::{
    hist_percentiles, hist_stats, pool_threads, thread_from_histogram, LeCounter, MinMaxSum,
};
pub use crate::import::{
    read_cyclictest_hist, read_cyclictest_json, read_fluctuation_log, read_systress_txt, sniff,
    FluctLog, FluctRow, InputFormat,
};
pub use crate::merge::merge_resumed;
pub use crate::noise::{
    CpuNoise, LongEvent, NoiseResult, NoiseTrace, Offender, RunKind, NOISE_COLUMNS,
    NOISE_TAIL_RESOLUTION_NS, NOISE_TAIL_SIZE_NS,
};
pub use crate::ranges::{
    check_count, check_histogram, check_latency, check_mean, check_result, sum_counts, MAX_BUCKETS,
    MAX_COUNT, MAX_DURATION_S, MAX_RESOLUTION_NS, MAX_SPAN_NS,
};
pub use crate::read::{
    from_stored_json, parse_json, read_json, ReadError, OLDEST_MAJOR, SCHEMA_MAJOR,
};
pub use crate::schema::{
    kernel_id, percentile_supported, Corrected, HistStats, Histogram, LatencyPart, Pct,
    PercentileBound, ProgramResult, RunResult, Settings, SplitResult, ThreadResult, TraceResult,
    WorstCase, BEYOND_HISTOGRAM, DEEP_PERCENTILES, LE_BOUNDS_NS, PERCENTILES, SCHEMA,
};
pub use crate::statrec::{
    compare_stat_records, stat_ratio, Metric, StatRecord, ThreadMean, STAT_SCHEMA,
};
pub use crate::unknown::or as or_unknown;
pub use crate::verdict::{
    effective_verdict, LimitFailure, Limits, ThreadVerdict, Verdict, EXIT_LIMIT_EXCEEDED,
};
/// The class of a noise event (the trace's), as stored in [`CpuNoise`].
pub use rtshield_trace::NoiseClass;
/// A noise event (the trace's), as stored in [`LongEvent`].
pub use rtshield_trace::NoiseEvent;
