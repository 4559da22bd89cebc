//! Readers for files other tools wrote (cyclictest `--json` and `-h`
//! histogram text, the systress article's `timer_threadNN.txt`, the
//! torture article's fluctuation log), one file each, turned into
//! [`crate::RunResult`] so `report` can put rtshield and cyclictest runs
//! on one graph. [`sniff`] tells which reader a file needs.
//!
//! cyclictest gives less than rtshield measures: no percentiles beyond the
//! histogram, no overrun count, often no CPU number. What can be derived
//! from what the file holds is (percentiles, median, mode, std from the
//! histogram; a percentile past the histogram only as a bound); what it
//! does not hold is unknown (`None`), never 0 and never a guess, and a
//! warning on the run says what was derived.

use crate::{RunResult, Settings, ThreadResult, SCHEMA};
use rtshield_sys::SysInfo;
use rtshield_vocab::InputError;
use std::collections::BTreeMap;

mod cmdline;
mod cyclictest_hist;
mod cyclictest_json;
mod fluctuation_log;
mod provenance;
mod systress_txt;
#[cfg(test)]
mod tests;

pub use cyclictest_hist::read_cyclictest_hist;
pub use cyclictest_json::read_cyclictest_json;
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

/// What a reader built from a file, if every number is in range
/// (docs/ranges.md): no reader hands on a run the range check refuses,
/// whatever the file's numbers made of it (a period `-i` × 1000, a
/// duration between two time stamps; F15's class).
fn in_range(mut r: RunResult, source: &str) -> Result<RunResult, InputError> {
    crate::ranges::check_result(&r)
        .map_err(|m| InputError::new(format!("{source}: {m} (docs/ranges.md)")))?;
    // A thread of 0 cycles has no minimum, mean or maximum, whatever the
    // file printed for them (cyclictest's initial values).
    for t in &mut r.threads {
        t.forget_placeholders();
    }
    Ok(r)
}

/// 1-based column of `word` (a sub-slice of `line`).
fn col_of(line: &str, word: &str) -> usize {
    (word.as_ptr() as usize).saturating_sub(line.as_ptr() as usize) + 1
}

/// What an imported file says about the run as a whole; what it does not
/// say stays unknown.
#[derive(Debug, Clone, Default)]
struct Imported {
    tool: String,
    started_at: Option<String>,
    duration_s: Option<f64>,
    command: Vec<String>,
    res_ns: u64,
    buckets: Option<u64>,
    mode: Option<String>,
    sysinfo: SysInfo,
    warnings: Vec<String>,
    /// The `imported` tag: which reader made it.
    kind: &'static str,
}

impl Imported {
    fn into_result(self, threads: Vec<ThreadResult>) -> RunResult {
        RunResult {
            schema: SCHEMA.to_string(),
            kind: Default::default(),
            tool: self.tool,
            label: None,
            started_at: self.started_at.filter(|s| !s.is_empty()),
            duration_s: self.duration_s,
            command: self.command,
            config: None,
            settings: Settings {
                mode: self.mode,
                resolution_ns: self.res_ns,
                histo_buckets: self.buckets,
                stats_period_ns: None,
                requested_duration_ns: None,
                requested_samples: None,
                memlock: None,
                cpu_dma_latency: None,
            },
            sysinfo: self.sysinfo,
            warnings: self.warnings,
            end_reason: None,
            threads,
            programs: Vec::new(),
            tags: BTreeMap::from([("imported".to_string(), self.kind.to_string())]),
            trace: None,
            verdict: None,
            noise: None,
            drift: Default::default(),
        }
    }
}
