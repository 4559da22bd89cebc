//! Readers for files other tools wrote (cyclictest `--json` and `-h`
//! histogram text, the systress article's `timer_threadNN.txt`, the
//! torture article's fluctuation log), one file each, turned into
//! [`crate::RunResult`] so `report` can put rtshield and cyclictest runs
//! on one graph. [`sniff`] tells which reader a file needs.
//!
//! cyclictest gives less than rtshield measures: no percentiles beyond the
//! histogram, no overrun count, often no CPU number. What it does not give
//! is derived from the histogram (percentiles, median, mode, std) or left
//! at zero, and a warning on the run says so.

use crate::{RunResult, Settings, ThreadResult, SCHEMA};
use rtshield_sys::SysInfo;
use std::collections::BTreeMap;

mod cyclictest_hist;
mod cyclictest_json;
mod fluctuation_log;
mod provenance;
mod systress_txt;
#[cfg(test)]
mod tests;

pub use cyclictest_hist::read_cyclictest_hist;
pub use cyclictest_json::{read_cyclictest_json, CyclictestArgs};
use fluctuation_log::parse_fluct_line;
pub use fluctuation_log::{read_fluctuation_log, FluctLog, FluctRow};
pub use systress_txt::read_systress_txt;

/// What a result file looks like, from its first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputFormat {
    /// rtshield's `results.json` (has a `schema` member).
    Rtshield,
    /// `cyclictest --json=FILE`.
    CyclictestJson,
    /// `cyclictest -h N` standard output (two or more columns of counts),
    /// or rtshield's own `histogram.txt` (the same layout).
    CyclictestHist,
    /// The systress article's `timer_threadNN.txt`: a two-column histogram
    /// and a `#` SUMMARY block (as systress and rtshield write it).
    SystressTxt,
    /// The torture article's fluctuation log: `[t] Min.= …, Moy.= …,
    /// Max.= …,  Max.Max.= …` every 5 s.
    FluctuationLog,
}

/// Guess the format of `text`: JSON objects with `schema` are rtshield's,
/// other JSON objects cyclictest's, anything else histogram text.
pub fn sniff(text: &str) -> InputFormat {
    let t = text.trim_start();
    if let Some(body) = t.strip_prefix('{') {
        // Cheap look without a full parse: a truncated file must still be
        // routed to the reader that reports it well. Both tools write their
        // marker first (`schema`, `file_version`); a hand-edited file may
        // not, so fall back to looking for rtshield's marker anywhere.
        let first_key = body
            .trim_start()
            .strip_prefix('"')
            .and_then(|k| k.split('"').next());
        match first_key {
            Some("schema") => InputFormat::Rtshield,
            Some("file_version") => InputFormat::CyclictestJson,
            _ if t.contains("\"schema\"") => InputFormat::Rtshield,
            _ => InputFormat::CyclictestJson,
        }
    } else if t.lines().any(is_summary_header) {
        InputFormat::SystressTxt
    } else if t.lines().any(|l| parse_fluct_line(l).is_some()) {
        InputFormat::FluctuationLog
    } else {
        InputFormat::CyclictestHist
    }
}

/// `# Index    TID  Samples  L_min … Samples_H …`.
fn is_summary_header(l: &str) -> bool {
    l.strip_prefix('#')
        .map(str::trim_start)
        .is_some_and(|r| r.starts_with("Index") && r.contains("Samples_H"))
}

/// The thread fields cyclictest's text outputs (and the fluctuation log)
/// do not record: unknown unless rtshield's own `#` lines give them.
const NOT_IN_CYCLICTEST: &[&str] = &[
    "policy",
    "priority",
    "tid",
    "overruns",
    "missed_periods",
    "lost",
];

/// 1-based column of `word` (a sub-slice of `line`).
fn col_of(line: &str, word: &str) -> usize {
    (word.as_ptr() as usize).saturating_sub(line.as_ptr() as usize) + 1
}

/// `-i 200`, `-i200`, `--interval=200`, `--interval 200`.
fn arg_value(args: &[String], short: &str, long: &str) -> Option<u64> {
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let v = if a == short || a == long {
            it.next().map(String::as_str)
        } else if let Some(v) = a.strip_prefix(&format!("{long}=")) {
            Some(v)
        } else if a.starts_with(short) && !a.starts_with("--") && a.len() > short.len() {
            Some(&a[short.len()..])
        } else {
            None
        };
        if let Some(n) = v.and_then(|v| v.trim_start_matches('=').parse().ok()) {
            return Some(n);
        }
    }
    None
}

#[allow(clippy::too_many_arguments)]
fn imported(
    tool: String,
    started_at: String,
    command: Vec<String>,
    res_ns: u64,
    buckets: Option<u64>,
    period_us: u64,
    sysinfo: SysInfo,
    warnings: Vec<String>,
    threads: Vec<ThreadResult>,
) -> RunResult {
    RunResult {
        schema: SCHEMA.to_string(),
        tool,
        label: None,
        started_at,
        duration_s: threads
            .iter()
            .map(|t| t.samples as f64 * t.period_ns as f64 / 1e9)
            .fold(0.0, f64::max),
        command,
        config: None,
        settings: Settings {
            mode: "nanosleep".into(),
            resolution_ns: res_ns,
            histo_buckets: buckets.unwrap_or(0),
            stats_period_ns: 0,
            requested_duration_ns: None,
            requested_samples: None,
            memlock: false,
            cpu_dma_latency: None,
        },
        sysinfo,
        warnings,
        end_reason: "duration".into(),
        threads,
        programs: Vec::new(),
        tags: BTreeMap::from([("imported".to_string(), "cyclictest".to_string())])
            .into_iter()
            .chain((period_us > 0).then(|| ("period".to_string(), format!("{period_us}us"))))
            .collect(),
        trace: None,
        verdict: None,
    }
}
