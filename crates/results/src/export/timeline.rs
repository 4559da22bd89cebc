//! `timeline.csv`: one row per measuring thread every `stats.period`, the
//! data of the torture article's `[t] Min= Moy= Max= Max.Max=` lines plus
//! the load phase and the per-CPU load, so a report can plot per-interval
//! maxima over a day. Written by `rtshield run` (appended row by row through
//! a [`TimelineWriter`]), read by `report` (column names below), synthesised
//! by the test fixtures: all three use this module.

use rtshield_safefs::{SafeDir, SafeError};
use std::fmt::Write as _;
use std::io::{self, Write};

/// The file name.
pub const TIMELINE_FILE: &str = "timeline.csv";

// Column names: readers find columns by name, so files of any version
// (with or without the host columns) read.
/// Column: seconds since the start of the run at the end of the interval.
pub const TIMELINE_ELAPSED_S: &str = "elapsed_s";
/// Column: the load phase (`load`, `rest`, or empty without cycles).
pub const TIMELINE_PHASE: &str = "phase";
/// Column: the measuring thread's index (`NN` of `timer_threadNN.txt`).
pub const TIMELINE_THREAD: &str = "thread";
/// Column: the CPU the thread measured, empty when not pinned.
pub const TIMELINE_CPU: &str = "cpu";
/// Column: the interval's largest latency, ns (empty without samples).
pub const TIMELINE_IVAL_MAX_NS: &str = "ival_max_ns";
/// Column: the largest latency since the start of the run, ns.
pub const TIMELINE_MAX_MAX_NS: &str = "max_max_ns";

/// The host columns (the torture article's log header has `uptime` and a
/// `temperature :` line every cycle): written after the per-CPU load
/// columns, optional for readers (older files do not have them).
const TIMELINE_UPTIME_S: &str = "uptime_s";
const TIMELINE_LOADAVG1: &str = "loadavg1";
const TIMELINE_LOADAVG5: &str = "loadavg5";
const TIMELINE_LOADAVG15: &str = "loadavg15";
/// The hottest thermal zone, °C; empty without a thermal zone.
const TIMELINE_TEMP_C: &str = "temp_c";
const TIMELINE_HOST_COLUMNS: [&str; 5] = [
    TIMELINE_UPTIME_S,
    TIMELINE_LOADAVG1,
    TIMELINE_LOADAVG5,
    TIMELINE_LOADAVG15,
    TIMELINE_TEMP_C,
];

/// Columns before the per-CPU load columns.
pub const TIMELINE_HEADER: &str = "elapsed_s,phase,thread,cpu,samples,ival_samples,ival_min_ns,ival_avg_ns,ival_max_ns,max_max_ns,overruns,lost,load_total";

/// The header line (without newline) with one `load_cpuN` column per CPU.
pub fn timeline_header(cpus: &[u32]) -> String {
    let mut h = String::from(TIMELINE_HEADER);
    for c in cpus {
        let _ = write!(h, ",load_cpu{c}");
    }
    h
}

/// The header line (without newline) with one `load_cpuN` column per CPU,
/// then the host columns: what [`TimelineWriter`] writes.
pub fn timeline_header_with_host(cpus: &[u32]) -> String {
    let mut h = timeline_header(cpus);
    for c in TIMELINE_HOST_COLUMNS {
        h.push(',');
        h.push_str(c);
    }
    h
}

/// The drift watch's column, after the host columns, in the files of a
/// watched run: the kinds of the drift events seen in the row's interval
/// (`crate::drift::timeline_cell`), empty when none. Optional for readers.
pub const TIMELINE_DRIFT: &str = "drift";

/// [`timeline_header_with_host`] and the [`TIMELINE_DRIFT`] column: what a watched run's
/// [`TimelineWriter`] writes.
pub fn timeline_header_with_drift(cpus: &[u32]) -> String {
    format!("{},{TIMELINE_DRIFT}", timeline_header_with_host(cpus))
}

/// The machine at the end of an interval: the same for every thread's row.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct TimelineHost {
    /// `/proc/uptime`, seconds since boot.
    pub uptime_s: Option<f64>,
    /// `/proc/loadavg`: 1, 5 and 15 minutes.
    pub loadavg: Option<[f64; 3]>,
    /// The hottest thermal zone, °C.
    pub temp_c: Option<f64>,
}

/// The host columns of a row, each preceded by a comma.
pub fn format_timeline_host(h: &TimelineHost) -> String {
    let opt = |v: Option<f64>, d: usize| v.map_or(String::new(), |v| format!("{v:.d$}"));
    let l = |i: usize| opt(h.loadavg.map(|a| a[i]), 2);
    format!(
        ",{},{},{},{},{}",
        opt(h.uptime_s, 2),
        l(0),
        l(1),
        l(2),
        opt(h.temp_c, 1)
    )
}

/// One row: a measuring thread over one statistics interval.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TimelineRow<'a> {
    /// Seconds since the start of the run, end of the interval.
    pub elapsed_s: f64,
    /// The load phase during the interval (`load`, `rest`, or empty without cycles).
    pub phase: &'a str,
    /// The measuring thread's index.
    pub thread: u32,
    /// The CPU it measured, `None` when not pinned (an empty column).
    pub cpu: Option<u32>,
    /// Samples since the start.
    pub samples: u64,
    /// Samples in this interval; min/max are empty when 0.
    pub ival_samples: u64,
    /// Smallest latency of the interval, ns.
    pub ival_min_ns: i64,
    /// Mean latency of the interval, ns (written rounded to 1 ns; empty
    /// when `ival_samples` is 0).
    pub ival_avg_ns: f64,
    /// Largest latency of the interval, ns.
    pub ival_max_ns: i64,
    /// Running maximum (written empty while `samples` is 0).
    pub max_max_ns: i64,
    /// Overruns since the start (wake-ups later than the next period).
    pub overruns: u64,
    /// Samples the thread's ring could not take, since the start.
    pub lost: u64,
    /// Total CPU load, %.
    pub load_total: Option<f64>,
    /// Load per CPU of the header, %, in header order.
    pub load_cpus: Vec<Option<f64>>,
}

/// The row as a CSV line (without newline).
pub fn format_timeline_row(r: &TimelineRow) -> String {
    let opt = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v:.1}"));
    let mut line = format!(
        "{:.3},{},{},{},{},{},{},{},{},{},{},{},{}",
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
        // An interval (or a run so far) without a sample has no mean or
        // maximum: empty, never 0.
        if r.ival_samples > 0 {
            format!("{:.0}", r.ival_avg_ns)
        } else {
            String::new()
        },
        if r.ival_samples > 0 {
            r.ival_max_ns.to_string()
        } else {
            String::new()
        },
        if r.samples > 0 {
            r.max_max_ns.to_string()
        } else {
            String::new()
        },
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
    /// The header has the [`TIMELINE_DRIFT`] column: every row gets its cell.
    drift: bool,
}

impl TimelineWriter {
    /// Create `dir/timeline.csv` (replacing a file of ours from a previous
    /// run in the same directory) with the header for `cpus`.
    pub fn create(dir: &SafeDir, cpus: &[u32]) -> Result<TimelineWriter, SafeError> {
        Self::create_with(dir, &timeline_header_with_host(cpus), "")
    }

    /// Create `dir/timeline.csv` with the header for `cpus` and the
    /// [`TIMELINE_DRIFT`] column (a run the drift watch follows).
    pub fn create_watched(dir: &SafeDir, cpus: &[u32]) -> Result<TimelineWriter, SafeError> {
        let mut w = Self::create_with(dir, &timeline_header_with_drift(cpus), "")?;
        w.drift = true;
        Ok(w)
    }

    /// Create `dir/timeline.csv` with `header` and then `body` (already
    /// formatted lines: the rows kept from an interrupted run on resume).
    pub fn create_with(
        dir: &SafeDir,
        header: &str,
        body: &str,
    ) -> Result<TimelineWriter, SafeError> {
        let mut file = dir.create_appendable(TIMELINE_FILE)?;
        write!(file, "{header}\n{body}").map_err(|e| SafeError::Io {
            path: dir.display_path(TIMELINE_FILE),
            err: e,
        })?;
        let drift = header.trim_end().ends_with(&format!(",{TIMELINE_DRIFT}"));
        Ok(TimelineWriter { file, drift })
    }

    /// Append rows (one write), host columns empty.
    pub fn append(&mut self, rows: &[TimelineRow]) -> io::Result<()> {
        self.append_host(rows, &TimelineHost::default())
    }

    /// Append rows (one write), each with the host columns `host`.
    pub fn append_host(&mut self, rows: &[TimelineRow], host: &TimelineHost) -> io::Result<()> {
        self.append_drift(rows, host, "")
    }

    /// Append rows (one write) with the host columns `host` and, when the
    /// header has the [`TIMELINE_DRIFT`] column, the cell `drift` (kinds only: no
    /// comma).
    pub fn append_drift(
        &mut self,
        rows: &[TimelineRow],
        host: &TimelineHost,
        drift: &str,
    ) -> io::Result<()> {
        let mut s = String::new();
        let h = format_timeline_host(host);
        for r in rows {
            s.push_str(&format_timeline_row(r));
            s.push_str(&h);
            if self.drift {
                s.push(',');
                s.push_str(drift);
            }
            s.push('\n');
        }
        self.file.write_all(s.as_bytes())
    }
}

/// A row read back: what resume and tools need, found by column name, so
/// files of any version read (the host columns are `None` in files written
/// before they existed).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TimelineRecord {
    /// Seconds since the start of the run, end of the interval.
    pub elapsed_s: f64,
    /// The load phase (`load`, `rest`, or empty).
    pub phase: String,
    /// The measuring thread's index (0 when the column is absent).
    pub thread: u32,
    /// The CPU it measured, `None` when empty or absent.
    pub cpu: Option<u32>,
    /// Samples since the start, `None` when empty or absent.
    pub samples: Option<u64>,
    /// None for an interval without samples.
    pub ival_max_ns: Option<i64>,
    /// The running maximum, ns, `None` when empty or absent.
    pub max_max_ns: Option<i64>,
    /// The host columns (all `None` in files written before they existed).
    pub host: TimelineHost,
    /// The line as written (1-based line number in `line_no`).
    pub line: String,
    /// 1-based line number of `line` in the file (for FILE:LINE messages).
    pub line_no: usize,
}

/// Read `timeline.csv` text: the header, then the records. `file` names
/// the input in errors (FILE:LINE:COL).
pub fn read_timeline(
    text: &str,
    file: &str,
) -> Result<(String, Vec<TimelineRecord>), rtshield_vocab::InputError> {
    use rtshield_vocab::InputError;
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let (_, header) = lines
        .next()
        .ok_or_else(|| InputError::new(format!("{file}: empty timeline (no header line)")))?;
    let cols: Vec<&str> = header.split(',').map(str::trim).collect();
    let find = |n: &str| cols.iter().position(|c| *c == n);
    let c_t = find(TIMELINE_ELAPSED_S).ok_or_else(|| {
        InputError::at(
            file,
            1,
            1,
            format!("no `{TIMELINE_ELAPSED_S}` column in the header"),
        )
    })?;
    let mut out = Vec::new();
    for (i, line) in lines {
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        let get = |c: Option<usize>| c.and_then(|c| f.get(c)).copied().filter(|v| !v.is_empty());
        let num = |c: Option<usize>| {
            get(c)
                .and_then(|v| v.parse::<f64>().ok())
                .filter(|v| v.is_finite())
        };
        let elapsed_s = num(Some(c_t)).ok_or_else(|| {
            InputError::at(
                file,
                i + 1,
                1,
                format!("`{}` is not a time in seconds", f[0]),
            )
        })?;
        let la = [
            find(TIMELINE_LOADAVG1),
            find(TIMELINE_LOADAVG5),
            find(TIMELINE_LOADAVG15),
        ]
        .map(num);
        out.push(TimelineRecord {
            elapsed_s,
            phase: get(find(TIMELINE_PHASE)).unwrap_or("").to_string(),
            thread: get(find(TIMELINE_THREAD))
                .and_then(|v| v.parse().ok())
                .unwrap_or(0),
            cpu: get(find(TIMELINE_CPU)).and_then(|v| v.parse().ok()),
            samples: get(find("samples")).and_then(|v| v.parse().ok()),
            ival_max_ns: get(find(TIMELINE_IVAL_MAX_NS)).and_then(|v| v.parse().ok()),
            max_max_ns: get(find(TIMELINE_MAX_MAX_NS)).and_then(|v| v.parse().ok()),
            host: TimelineHost {
                uptime_s: num(find(TIMELINE_UPTIME_S)),
                loadavg: match la {
                    [Some(a), Some(b), Some(c)] => Some([a, b, c]),
                    _ => None,
                },
                temp_c: num(find(TIMELINE_TEMP_C)),
            },
            line: line.to_string(),
            line_no: i + 1,
        });
    }
    Ok((header.to_string(), out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_columns_follow_the_load_columns_and_read_back() {
        let h = timeline_header_with_host(&[0, 1]);
        assert!(h.starts_with(TIMELINE_HEADER));
        assert!(h.ends_with(",load_cpu0,load_cpu1,uptime_s,loadavg1,loadavg5,loadavg15,temp_c"));
        let row = TimelineRow {
            elapsed_s: 5.0,
            phase: "load",
            thread: 0,
            cpu: Some(1),
            samples: 25000,
            ival_samples: 25000,
            ival_min_ns: 2000,
            ival_avg_ns: 6500.0,
            ival_max_ns: 305_000,
            max_max_ns: 366_000,
            load_total: Some(50.0),
            load_cpus: vec![Some(10.0), None],
            ..Default::default()
        };
        let host = TimelineHost {
            uptime_s: Some(156.25),
            loadavg: Some([2.5, 1.25, 0.5]),
            temp_c: Some(47.0),
        };
        let line = format!(
            "{}{}",
            format_timeline_row(&row),
            format_timeline_host(&host)
        );
        assert_eq!(
            line,
            "5.000,load,0,1,25000,25000,2000,6500,305000,366000,0,0,50.0,10.0,,156.25,2.50,1.25,0.50,47.0"
        );
        let (_, recs) = read_timeline(&format!("{h}\n{line}\n"), "t.csv").unwrap();
        assert_eq!(recs.len(), 1);
        assert_eq!(recs[0].host, host);
        assert_eq!(recs[0].ival_max_ns, Some(305_000));
        assert_eq!(recs[0].samples, Some(25000));
        // No thermal zone: an empty temp_c.
        assert!(format_timeline_host(&TimelineHost::default()).ends_with(",,,,,"));
    }

    #[test]
    fn reads_a_timeline_written_before_the_host_columns() {
        let old = "elapsed_s,phase,thread,cpu,samples,ival_samples,ival_min_ns,ival_avg_ns,ival_max_ns,max_max_ns,overruns,lost,load_total,load_cpu0\n\
                   0.250,load,0,1,250,250,3000,5000,9000,9000,0,0,12.0,3.0\n";
        let (_, recs) = read_timeline(old, "old.csv").unwrap();
        assert_eq!(recs[0].elapsed_s, 0.25);
        assert_eq!(recs[0].max_max_ns, Some(9000));
        assert_eq!(recs[0].host, TimelineHost::default());
        let e = read_timeline("elapsed_s,phase\nx,load\n", "bad.csv").unwrap_err();
        assert!(e.to_string().starts_with("bad.csv:2:1"), "{e}");
    }
}
