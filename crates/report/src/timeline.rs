//! `timeline.csv`: one row per statistics interval and measuring thread,
//! as the torture article's `[t] Min.= …, Moy.= …, Max.= …, Max.Max.= …` lines.
//!
//! Columns are found by header name, in any order, other columns ignored.
//! What `rtshield run` writes (the format of
//! `rtshield_results::timeline`, whose column names are used here):
//! `elapsed_s,phase,thread,cpu,…,ival_max_ns,max_max_ns,…` (ns); the
//! hand-friendly µs form is also read: `t_s,thread,cpu,max_us,maxmax_us,phase`.
//! The time (`elapsed_s`/`t_s`, seconds since the start, end of the
//! interval) and the interval maximum (`ival_max_ns`/`max_us`) are
//! required; an empty maximum (an interval without samples) is skipped; a
//! missing running maximum is computed, a missing `thread` means thread 0,
//! `phase` names the load phase (`load`, `rest`, …) if any.

use rtshield_results::{
    TIMELINE_CPU, TIMELINE_DRIFT, TIMELINE_ELAPSED_S, TIMELINE_IVAL_MAX_NS, TIMELINE_MAX_MAX_NS,
    TIMELINE_PHASE, TIMELINE_THREAD,
};
use rtshield_vocab::InputError;
use std::path::Path;

/// One measuring thread's intervals.
#[derive(Debug, Clone, PartialEq)]
pub struct ThreadLine {
    pub thread: u32,
    pub cpu: Option<u32>,
    pub t_s: Vec<f64>,
    pub max_us: Vec<f64>,
    /// Running maximum (`Max.Max.` in the torture article).
    pub maxmax_us: Vec<f64>,
}

/// A stretch of time spent in one named load phase.
#[derive(Debug, Clone, PartialEq)]
pub struct Phase {
    pub start_s: f64,
    pub end_s: f64,
    pub name: String,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Timeline {
    pub threads: Vec<ThreadLine>,
    pub phases: Vec<Phase>,
    /// The intervals in which the drift watch saw a change (the `drift`
    /// column: end of the interval, s, and the kinds, `;`-separated), in
    /// time order, once per interval.
    pub drift: Vec<(f64, String)>,
}

/// One line of a timeline CSV, split, with what its errors must name.
struct Fields<'a> {
    fields: Vec<&'a str>,
    line: &'a str,
    /// 0-based line index.
    ln: usize,
    file: &'a str,
    /// The header's column names.
    cols: &'a [&'a str],
}

impl<'a> Fields<'a> {
    /// Field `c`, trimmed; a line with too few fields is refused.
    fn field(&self, c: usize) -> Result<&'a str, InputError> {
        self.fields.get(c).map(|f| f.trim()).ok_or_else(|| {
            InputError::at(
                self.file,
                self.ln + 1,
                self.line.len() + 1,
                format!(
                    "{} fields, the header has {} (truncated line?)",
                    self.fields.len(),
                    self.cols.len()
                ),
            )
        })
    }

    /// Column of field `c`, 1-based, for error messages.
    fn col(&self, c: usize) -> usize {
        self.fields[..c].iter().map(|f| f.len() + 1).sum::<usize>() + 1
    }

    /// Field `c` as a finite number.
    fn num(&self, c: usize) -> Result<f64, InputError> {
        let f = self.field(c)?;
        f.parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .ok_or_else(|| {
                InputError::at(
                    self.file,
                    self.ln + 1,
                    self.col(c),
                    format!("`{f}` is not a number ({})", self.cols[c]),
                )
            })
    }

    /// Field `c` as an integer, None when empty.
    fn int(&self, c: usize) -> Result<Option<u32>, InputError> {
        let f = self.field(c)?;
        if f.is_empty() {
            return Ok(None);
        }
        f.parse().map(Some).map_err(|_| {
            InputError::at(
                self.file,
                self.ln + 1,
                self.col(c),
                format!("`{f}` is not an integer ({})", self.cols[c]),
            )
        })
    }
}

impl Timeline {
    /// Read a `timeline.csv`; also the bytes it held.
    pub fn read(path: &Path) -> Result<(Timeline, usize), InputError> {
        let name = path.display().to_string();
        let bytes = rtshield_safefs::read_input(path, rtshield_safefs::INPUT_LIMIT)
            .map_err(|e| InputError::new(format!("cannot read: {e}")))?;
        let n = bytes.len();
        let text = rtshield_text::decode_utf8(bytes)
            .map_err(|e| InputError::at(&name, e.line, e.col, e))?;
        Ok((Self::parse(&text, &name)?, n))
    }

    pub fn parse(text: &str, file: &str) -> Result<Timeline, InputError> {
        let mut lines = text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#'));
        let (hl, header) = lines
            .next()
            .ok_or_else(|| InputError::new(format!("{file}: empty timeline (no header line)")))?;
        let cols: Vec<&str> = header.split(',').map(str::trim).collect();
        let find = |n: &str| cols.iter().position(|c| *c == n);
        // (column, divisor to µs) of the first of `names` present.
        let find_us =
            |names: &[(&str, f64)]| names.iter().find_map(|(n, div)| find(n).map(|c| (c, *div)));
        let need = |what: &str, found: Option<(usize, f64)>| {
            found.ok_or_else(|| {
                InputError::at(
                    file,
                    hl + 1,
                    1,
                    format!("no {what} column in the header (expected elapsed_s,thread,cpu,ival_max_ns,max_max_ns,phase or t_s,thread,cpu,max_us,maxmax_us,phase)"),
                )
            })
        };
        let (c_t, _) = need(
            "`elapsed_s`/`t_s`",
            find_us(&[(TIMELINE_ELAPSED_S, 1.0), ("t_s", 1.0)]),
        )?;
        let (c_max, max_div) = need(
            "`ival_max_ns`/`max_us`",
            find_us(&[(TIMELINE_IVAL_MAX_NS, 1000.0), ("max_us", 1.0)]),
        )?;
        let c_mm = find_us(&[(TIMELINE_MAX_MAX_NS, 1000.0), ("maxmax_us", 1.0)]);
        let (c_thread, c_cpu, c_phase, c_drift) = (
            find(TIMELINE_THREAD),
            find(TIMELINE_CPU),
            find(TIMELINE_PHASE),
            find(TIMELINE_DRIFT),
        );

        let mut tl = Timeline::default();
        let mut phase_rows: Vec<(f64, &str)> = Vec::new();
        for (ln, line) in lines {
            let f = Fields {
                fields: line.split(',').collect(),
                line,
                ln,
                file,
                cols: &cols,
            };
            let t = f.num(c_t)?;
            let max = if f.field(c_max)?.is_empty() {
                None // no sample in this interval
            } else {
                Some(f.num(c_max)? / max_div)
            };
            let thread = match c_thread {
                Some(c) => f.int(c)?.unwrap_or(0),
                None => 0,
            };
            let cpu = match c_cpu {
                Some(c) => f.int(c)?,
                None => None,
            };
            let mm = match c_mm {
                Some((c, _)) if f.field(c)?.is_empty() => None,
                Some((c, div)) => Some(f.num(c)? / div),
                None => None,
            };
            let idx = match tl.threads.iter().position(|s| s.thread == thread) {
                Some(i) => i,
                None => {
                    tl.threads.push(ThreadLine {
                        thread,
                        cpu,
                        t_s: Vec::new(),
                        max_us: Vec::new(),
                        maxmax_us: Vec::new(),
                    });
                    tl.threads.len() - 1
                }
            };
            let s = &mut tl.threads[idx];
            if let Some(max) = max {
                let prev = s.maxmax_us.last().copied().unwrap_or(f64::MIN);
                s.t_s.push(t);
                s.max_us.push(max);
                s.maxmax_us.push(mm.unwrap_or(prev.max(max)));
            }
            if idx == 0 {
                // Borrowed from `text`: no allocation per row.
                let ph = match c_phase {
                    Some(c) => f.field(c)?,
                    None => "",
                };
                phase_rows.push((t, ph));
                // Every thread's row has the same cell: the first's.
                let cell = c_drift
                    .and_then(|c| f.fields.get(c))
                    .map_or("", |v| v.trim());
                if !cell.is_empty() {
                    tl.drift.push((t, cell.to_string()));
                }
            }
        }
        tl.threads.sort_by_key(|s| s.thread);
        tl.phases = phases(&phase_rows);
        Ok(tl)
    }

    /// The torture article's fluctuation log as a timeline: one point per
    /// 5 s line, its `Max.Max.` as the running maximum; each `##[t] text`
    /// mark starts a phase named by its text, up to the next mark.
    pub fn from_fluctuation_log(log: &rtshield_results::FluctLog) -> Timeline {
        let line = ThreadLine {
            thread: 0,
            cpu: None,
            t_s: log.rows.iter().map(|r| r.0).collect(),
            max_us: log.rows.iter().map(|r| r.1.max_us).collect(),
            maxmax_us: log.rows.iter().map(|r| r.1.maxmax_us).collect(),
        };
        let end = line.t_s.last().copied().unwrap_or(0.0);
        let mut phases = Vec::new();
        for (i, (t, name)) in log.marks.iter().enumerate() {
            let until = log.marks.get(i + 1).map_or(end, |m| m.0);
            if until > *t {
                phases.push(Phase {
                    start_s: *t,
                    end_s: until,
                    name: name.clone(),
                });
            }
        }
        Timeline {
            threads: vec![line],
            phases,
            drift: Vec::new(),
        }
    }

    /// Points over all threads.
    pub fn len(&self) -> usize {
        self.threads.iter().map(|s| s.t_s.len()).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Last time stamp over all threads.
    pub fn end_s(&self) -> f64 {
        self.threads
            .iter()
            .filter_map(|s| s.t_s.last().copied())
            .fold(0.0, f64::max)
    }

    pub fn max_us(&self) -> f64 {
        self.threads
            .iter()
            .flat_map(|s| s.max_us.iter().chain(&s.maxmax_us))
            .copied()
            .fold(0.0, f64::max)
    }
}

/// Each row's interval ends at its `t_s` and starts at the previous row's;
/// consecutive rows of the same non-empty phase merge into one stretch.
fn phases(rows: &[(f64, &str)]) -> Vec<Phase> {
    let mut out: Vec<Phase> = Vec::new();
    let mut start = 0.0;
    for (t, name) in rows {
        if !name.is_empty() {
            match out.last_mut() {
                Some(p) if p.name == *name && p.end_s == start => p.end_s = *t,
                _ => out.push(Phase {
                    start_s: start,
                    end_s: *t,
                    name: name.to_string(),
                }),
            }
        }
        start = *t;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_drift_column_marks_its_intervals_once() {
        let h = rtshield_results::timeline_header_with_drift(&[]);
        let csv = format!(
            "{h}\n1.000,none,0,1,10,10,1,2,3,3,0,0,,,,,,,\n1.000,none,1,2,10,10,1,2,3,3,0,0,,,,,,,\n\
             2.000,none,0,1,20,10,1,2,3,3,0,0,,,,,,,irq_affinity;rt_task\n\
             2.000,none,1,2,20,10,1,2,3,3,0,0,,,,,,,irq_affinity;rt_task\n"
        );
        let tl = Timeline::parse(&csv, "timeline.csv").unwrap();
        assert_eq!(tl.drift, vec![(2.0, "irq_affinity;rt_task".to_string())]);
        assert_eq!(tl.threads.len(), 2);
        // Files without the column: no marker.
        let tl = Timeline::parse(CSV, "t.csv").unwrap();
        assert!(tl.drift.is_empty());
    }

    const CSV: &str = "t_s,thread,cpu,samples,min_us,avg_us,max_us,maxmax_us,phase\n\
        5,0,1,50000,2,3.5,20,20,load\n\
        5,1,2,50000,2,3.5,7,7,load\n\
        10,0,1,50000,2,3.5,12,20,load\n\
        10,1,2,50000,2,3.5,9,9,load\n\
        15,0,1,50000,2,3.5,30,30,rest\n\
        15,1,2,50000,2,3.5,8,9,rest\n\
        20,0,1,50000,2,3.5,10,30,load\n\
        20,1,2,50000,2,3.5,8,9,load\n";

    fn ph(start_s: f64, end_s: f64, name: &str) -> Phase {
        Phase {
            start_s,
            end_s,
            name: name.into(),
        }
    }

    #[test]
    fn parses_threads_and_phases() {
        let tl = Timeline::parse(CSV, "t.csv").unwrap();
        assert_eq!(tl.threads.len(), 2);
        assert_eq!(tl.threads[0].cpu, Some(1));
        assert_eq!(tl.threads[0].t_s, vec![5.0, 10.0, 15.0, 20.0]);
        assert_eq!(tl.threads[0].max_us, vec![20.0, 12.0, 30.0, 10.0]);
        assert_eq!(tl.threads[1].maxmax_us, vec![7.0, 9.0, 9.0, 9.0]);
        assert_eq!(
            tl.phases,
            vec![
                ph(0.0, 10.0, "load"),
                ph(10.0, 15.0, "rest"),
                ph(15.0, 20.0, "load")
            ]
        );
        assert_eq!(tl.end_s(), 20.0);
        assert_eq!(tl.max_us(), 30.0);
    }

    #[test]
    fn running_max_computed_and_columns_in_any_order() {
        let tl = Timeline::parse("max_us,t_s\n4,1\n9,2\n3,3\n", "t.csv").unwrap();
        assert_eq!(tl.threads[0].maxmax_us, vec![4.0, 9.0, 9.0]);
        assert!(tl.phases.is_empty());
    }

    /// The file `rtshield run` writes: ns columns, empty fields for an
    /// interval without samples, per-CPU load columns at the end.
    #[test]
    fn reads_the_run_format() {
        let csv = "elapsed_s,phase,thread,cpu,samples,ival_samples,ival_min_ns,ival_avg_ns,ival_max_ns,max_max_ns,overruns,lost,load_total,load_cpu0\n\
            5.000,load,0,1,25000,25000,2100,3500,41000,41000,0,0,97.0,99.0\n\
            10.000,load,0,1,50000,25000,2000,3400,12500,41000,0,0,98.0,99.5\n\
            15.000,rest,0,1,50000,0,,0,,41000,0,0,1.0,0.5\n\
            20.000,rest,0,1,75000,25000,2000,3000,9000,41000,0,0,1.0,0.5\n";
        let tl = Timeline::parse(csv, "timeline.csv").unwrap();
        assert_eq!(tl.threads.len(), 1);
        let s = &tl.threads[0];
        assert_eq!(s.cpu, Some(1));
        assert_eq!(s.t_s, vec![5.0, 10.0, 20.0]);
        assert_eq!(s.max_us, vec![41.0, 12.5, 9.0]);
        assert_eq!(s.maxmax_us, vec![41.0, 41.0, 41.0]);
        assert_eq!(
            tl.phases,
            vec![ph(0.0, 10.0, "load"), ph(10.0, 20.0, "rest")]
        );
    }

    #[test]
    fn errors_name_file_line_column() {
        let e = Timeline::parse("t_s,max_us\n1,2\n2,zz\n", "t.csv").unwrap_err();
        assert_eq!(e.to_string(), "t.csv:3:3: `zz` is not a number (max_us)");
        let e = Timeline::parse("t_s,max_us,phase\n1,2,load\n2\n", "t.csv").unwrap_err();
        assert!(e.to_string().starts_with("t.csv:3:2: 1 fields"), "{e}");
        let e = Timeline::parse("time,max\n", "t.csv").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("t.csv:1:1: no `elapsed_s`/`t_s` column"),
            "{e}"
        );
        let e = Timeline::parse("", "t.csv").unwrap_err();
        assert!(e.to_string().contains("empty timeline"), "{e}");
    }

    proptest::proptest! {
        #[test]
        fn never_panics(s in "[0-9a-z_,.\\n-]{0,200}") {
            let _ = Timeline::parse(&format!("t_s,thread,max_us,phase\n{s}"), "p");
        }
    }
}
