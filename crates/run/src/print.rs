//! What a command prints, as a seam: the pipeline decides *when* (the
//! order of the steps is `run`'s), a [`Printer`] or [`ConfigPrinter`]
//! decides *how it looks* (hyperfine's exporter idea: plain data in, text
//! out). The command line implements them; tests can too.

use crate::request::Plan;
use crate::runner::RunOutcome;
use rtshield_config::Config;
use rtshield_measure::{IntervalStats, Measurement};
use rtshield_results::RunResult;
use rtshield_sys::SysInfo;
use std::path::Path;

/// What `measure` and `demo` print ([`crate::measure`] calls it in this
/// order: header, every interval, live end, summary).
pub trait Printer {
    /// Before measuring: what is about to be measured, with the warnings
    /// that change its meaning.
    fn header(&mut self, plan: &Plan, sysinfo: &SysInfo);
    /// Every stats period while measuring (the live table); false stops
    /// the run.
    fn interval(&mut self, s: &IntervalStats) -> bool;
    /// The measurement ended, with figures or not: the live display goes.
    fn live_end(&mut self);
    /// After the files are written and the run stored.
    fn summary(&mut self, s: &Summary<'_>);
}

/// The end of one measurement, for [`Printer::summary`].
pub struct Summary<'a> {
    /// What the engine measured.
    pub measurement: &'a Measurement,
    /// The result as written.
    pub result: &'a RunResult,
    /// The output directory.
    pub out: &'a Path,
    /// The `--json` copy, when it was written.
    pub json: Option<&'a Path>,
    /// Some result file is not where asked (exit
    /// [`crate::pipeline::EXIT_FILES_MISSING`]).
    pub files_missing: bool,
    /// The result files not written in `out`, and where they went if
    /// anywhere (the summary never says they are in `out`).
    pub missing: &'a [crate::pipeline::Missing],
    /// `--max-latency`, when given (exceeded: exit 3).
    pub max_latency_ns: Option<u64>,
}

/// What `run CONFIG` prints ([`crate::run_config`] calls it).
pub trait ConfigPrinter {
    /// `--check`: the effective settings, the warnings, the verdict.
    fn checked(&mut self, cfg: &Config, warnings: &[String], duration_ns: Option<u64>);
    /// Before the run: what is worth knowing (folded CPUs, commands not found).
    fn warnings(&mut self, warnings: &[String]);
    /// `--resume`: which run goes on, from when.
    fn resuming(&mut self, dir: &Path, measured_s: f64, gap_s: f64);
    /// Every stats period: the live table, the CPU load (`stats.cpu_load`)
    /// and the messages of the programs' supervisor since the last one
    /// (taken from `messages` when printed).
    fn interval(&mut self, s: &IntervalStats, cpu_load: Option<&str>, messages: &mut Vec<String>);
    /// The run ended: messages not printed yet.
    fn live_end(&mut self, messages: &mut Vec<String>);
    /// Each part's figures and files, the total, the clean-up.
    fn summary(&mut self, cfg: &Config, outcome: &RunOutcome);
    /// Some result files are not where asked.
    fn files_missing(&mut self, count: usize);
}
