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
pub const FILE: &str = "timeline.csv";

/// Column names (the reader finds columns by name).
pub const ELAPSED_S: &str = "elapsed_s";
pub const PHASE: &str = "phase";
pub const THREAD: &str = "thread";
pub const CPU: &str = "cpu";
pub const IVAL_MAX_NS: &str = "ival_max_ns";
pub const MAX_MAX_NS: &str = "max_max_ns";

/// The host columns (the torture article's log header has `uptime` and a
/// `temperature :` line every cycle): written after the per-CPU load
/// columns, optional for readers (older files do not have them).
pub const UPTIME_S: &str = "uptime_s";
pub const LOADAVG1: &str = "loadavg1";
pub const LOADAVG5: &str = "loadavg5";
pub const LOADAVG15: &str = "loadavg15";
/// The hottest thermal zone, °C; empty without a thermal zone.
pub const TEMP_C: &str = "temp_c";
pub const HOST_COLUMNS: [&str; 5] = [UPTIME_S, LOADAVG1, LOADAVG5, LOADAVG15, TEMP_C];

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

/// The header line (without newline) with one `load_cpuN` column per CPU,
/// then the host columns: what [`TimelineWriter`] writes.
pub fn header_with_host(cpus: &[u32]) -> String {
    let mut h = header(cpus);
    for c in HOST_COLUMNS {
        h.push(',');
        h.push_str(c);
    }
    h
}

/// The machine at the end of an interval: the same for every thread's row.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Host {
    /// `/proc/uptime`, seconds since boot.
    pub uptime_s: Option<f64>,
    /// `/proc/loadavg`: 1, 5 and 15 minutes.
    pub loadavg: Option<[f64; 3]>,
    /// The hottest thermal zone, °C.
    pub temp_c: Option<f64>,
}

/// The host columns of a row, each preceded by a comma.
pub fn format_host(h: &Host) -> String {
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
        Self::create_with(dir, &header_with_host(cpus), "")
    }

    /// Create `dir/timeline.csv` with `header` and then `body` (already
    /// formatted lines: the rows kept from an interrupted run on resume).
    pub fn create_with(
        dir: &SafeDir,
        header: &str,
        body: &str,
    ) -> Result<TimelineWriter, SafeError> {
        let mut file = dir.create_appendable(FILE)?;
        write!(file, "{header}\n{body}").map_err(|e| SafeError::Io {
            path: dir.display_path(FILE),
            err: e,
        })?;
        Ok(TimelineWriter { file })
    }

    /// Append rows (one write), host columns empty.
    pub fn append(&mut self, rows: &[Row]) -> io::Result<()> {
        self.append_host(rows, &Host::default())
    }

    /// Append rows (one write), each with the host columns `host`.
    pub fn append_host(&mut self, rows: &[Row], host: &Host) -> io::Result<()> {
        let mut s = String::new();
        let h = format_host(host);
        for r in rows {
            s.push_str(&format_row(r));
            s.push_str(&h);
            s.push('\n');
        }
        self.file.write_all(s.as_bytes())
    }
}

/// A row read back: what resume and tools need, found by column name, so
/// files of any version read (the host columns are `None` in files written
/// before they existed).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Record {
    pub elapsed_s: f64,
    pub phase: String,
    pub thread: u32,
    pub cpu: Option<u32>,
    pub samples: Option<u64>,
    /// None for an interval without samples.
    pub ival_max_ns: Option<i64>,
    pub max_max_ns: Option<i64>,
    pub host: Host,
    /// The line as written (1-based line number in `line_no`).
    pub line: String,
    pub line_no: usize,
}

/// Read `timeline.csv` text: the header, then the records. `file` names
/// the input in errors (FILE:LINE:COL).
pub fn read(text: &str, file: &str) -> Result<(String, Vec<Record>), rtshield_vocab::InputError> {
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
    let c_t = find(ELAPSED_S).ok_or_else(|| {
        InputError::at(file, 1, 1, format!("no `{ELAPSED_S}` column in the header"))
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
        let la = [find(LOADAVG1), find(LOADAVG5), find(LOADAVG15)].map(num);
        out.push(Record {
            elapsed_s,
            phase: get(find(PHASE)).unwrap_or("").to_string(),
            thread: get(find(THREAD)).and_then(|v| v.parse().ok()).unwrap_or(0),
            cpu: get(find(CPU)).and_then(|v| v.parse().ok()),
            samples: get(find("samples")).and_then(|v| v.parse().ok()),
            ival_max_ns: get(find(IVAL_MAX_NS)).and_then(|v| v.parse().ok()),
            max_max_ns: get(find(MAX_MAX_NS)).and_then(|v| v.parse().ok()),
            host: Host {
                uptime_s: num(find(UPTIME_S)),
                loadavg: match la {
                    [Some(a), Some(b), Some(c)] => Some([a, b, c]),
                    _ => None,
                },
                temp_c: num(find(TEMP_C)),
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
        let h = header_with_host(&[0, 1]);
        assert!(h.starts_with(HEADER));
        assert!(h.ends_with(",load_cpu0,load_cpu1,uptime_s,loadavg1,loadavg5,loadavg15,temp_c"));
        let row = Row {
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
        let host = Host {
            uptime_s: Some(156.25),
            loadavg: Some([2.5, 1.25, 0.5]),
            temp_c: Some(47.0),
        };
        let line = format!("{}{}", format_row(&row), format_host(&host));
        assert_eq!(
            line,
            "5.000,load,0,1,25000,25000,2000,6500,305000,366000,0,0,50.0,10.0,,156.25,2.50,1.25,0.50,47.0"
        );
        let (_, recs) = read(&format!("{h}\n{line}\n"), "t.csv").unwrap();
        assert_eq!(recs.len(), 1);
        assert_eq!(recs[0].host, host);
        assert_eq!(recs[0].ival_max_ns, Some(305_000));
        assert_eq!(recs[0].samples, Some(25000));
        // No thermal zone: an empty temp_c.
        assert!(format_host(&Host::default()).ends_with(",,,,,"));
    }

    #[test]
    fn reads_a_timeline_written_before_the_host_columns() {
        let old = "elapsed_s,phase,thread,cpu,samples,ival_samples,ival_min_ns,ival_avg_ns,ival_max_ns,max_max_ns,overruns,lost,load_total,load_cpu0\n\
                   0.250,load,0,1,250,250,3000,5000,9000,9000,0,0,12.0,3.0\n";
        let (_, recs) = read(old, "old.csv").unwrap();
        assert_eq!(recs[0].elapsed_s, 0.25);
        assert_eq!(recs[0].max_max_ns, Some(9000));
        assert_eq!(recs[0].host, Host::default());
        let e = read("elapsed_s,phase\nx,load\n", "bad.csv").unwrap_err();
        assert!(e.to_string().starts_with("bad.csv:2:1"), "{e}");
    }
}
