//! `timeline.csv`: one row per measuring thread every `stats.period`, the
//! data of the torture article's `[t] Min= Moy= Max= Max.Max=` lines plus
//! the load phase and the per-CPU load, so a report can plot per-interval
//! maxima over a day. Written by `rtshield run` (appended row by row through
//! a [`TimelineWriter`]), read by `report` (column names below), synthesised
//! by the test fixtures: all three use this module.

use rtshield_sys::{SafeDir, SafeError};
use std::fmt::Write as _;
use std::io::{self, Write};

/// The file name.
pub const FILE: &str = "timeline.csv";

/// Column names (the reader finds columns by name).
pub const ELAPSED_S: &str = "elapsed_s";
pub const PHASE: &str = "phase";
pub const THREAD: &str = "thread";
pub const CPU: &str = "cpu";
pub const IVAL_MAX_NS: &str = "ival_max_ns";
pub const MAX_MAX_NS: &str = "max_max_ns";

/// Columns before the per-CPU load columns.
pub const HEADER: &str = "elapsed_s,phase,thread,cpu,samples,ival_samples,ival_min_ns,ival_avg_ns,ival_max_ns,max_max_ns,overruns,lost,load_total";

/// The header line (without newline) with one `load_cpuN` column per CPU.
pub fn header(cpus: &[u32]) -> String {
    let mut h = String::from(HEADER);
    for c in cpus {
        let _ = write!(h, ",load_cpu{c}");
    }
    h
}

/// One row: a measuring thread over one statistics interval.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Row<'a> {
    /// Seconds since the start of the run, end of the interval.
    pub elapsed_s: f64,
    pub phase: &'a str,
    pub thread: u32,
    pub cpu: Option<u32>,
    /// Samples since the start.
    pub samples: u64,
    /// Samples in this interval; min/max are empty when 0.
    pub ival_samples: u64,
    pub ival_min_ns: i64,
    pub ival_avg_ns: f64,
    pub ival_max_ns: i64,
    /// Running maximum.
    pub max_max_ns: i64,
    pub overruns: u64,
    pub lost: u64,
    /// Total CPU load, %.
    pub load_total: Option<f64>,
    /// Load per CPU of the header, %, in header order.
    pub load_cpus: Vec<Option<f64>>,
}

/// The row as a CSV line (without newline).
pub fn format_row(r: &Row) -> String {
    let opt = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v:.1}"));
    let mut line = format!(
        "{:.3},{},{},{},{},{},{},{:.0},{},{},{},{},{}",
        r.elapsed_s,
        r.phase,
        r.thread,
        r.cpu.map_or(String::new(), |c| c.to_string()),
        r.samples,
        r.ival_samples,
        if r.ival_samples > 0 {
            r.ival_min_ns.to_string()
        } else {
            String::new()
        },
        r.ival_avg_ns,
        if r.ival_samples > 0 {
            r.ival_max_ns.to_string()
        } else {
            String::new()
        },
        r.max_max_ns,
        r.overruns,
        r.lost,
        opt(r.load_total),
    );
    for v in &r.load_cpus {
        line.push(',');
        line.push_str(&opt(*v));
    }
    line
}

/// `timeline.csv` being written: created exclusively (never following a
/// planted file) in a [`SafeDir`], a header, then rows appended and flushed.
pub struct TimelineWriter {
    file: std::fs::File,
}

impl TimelineWriter {
    /// Create `dir/timeline.csv` (replacing a file of ours from a previous
    /// run in the same directory) with the header for `cpus`.
    pub fn create(dir: &SafeDir, cpus: &[u32]) -> Result<TimelineWriter, SafeError> {
        let mut file = dir.create_appendable(FILE)?;
        writeln!(file, "{}", header(cpus)).map_err(|e| SafeError::Io {
            path: dir.display_path(FILE),
            err: e,
        })?;
        Ok(TimelineWriter { file })
    }

    /// Append rows (one write).
    pub fn append(&mut self, rows: &[Row]) -> io::Result<()> {
        let mut s = String::new();
        for r in rows {
            s.push_str(&format_row(r));
            s.push('\n');
        }
        self.file.write_all(s.as_bytes())
    }
}
