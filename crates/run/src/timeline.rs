//! `timeline.csv`: one row per measuring thread every `stats.period`, the
//! data of seed 001's `[t] Min= Moy= Max= Max.Max=` lines plus the load
//! phase and the per-CPU load, so a report can plot per-interval maxima
//! over a day. Appended and flushed line by line.

use rtshield_load::CpuLoad;
use rtshield_measure::IntervalStats;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

pub const FILE: &str = "timeline.csv";

/// Columns before the per-CPU load columns.
pub const HEADER: &str = "elapsed_s,phase,thread,cpu,samples,ival_samples,ival_min_ns,ival_avg_ns,ival_max_ns,max_max_ns,overruns,lost,load_total";

pub struct Timeline {
    out: BufWriter<File>,
    cpus: Vec<u32>,
}

impl Timeline {
    /// Create `dir/timeline.csv` with a header naming one column per CPU.
    pub fn create(dir: &Path, cpus: Vec<u32>) -> io::Result<Timeline> {
        let p = dir.join(FILE);
        let f = File::create(&p)
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", p.display())))?;
        let mut out = BufWriter::new(f);
        let mut h = String::from(HEADER);
        for c in &cpus {
            h.push_str(&format!(",load_cpu{c}"));
        }
        writeln!(out, "{h}")?;
        out.flush()?;
        Ok(Timeline { out, cpus })
    }

    /// One row per thread; `offset_ns` is added to the segment's elapsed time.
    pub fn append(
        &mut self,
        s: &IntervalStats,
        offset_ns: u64,
        phase: &str,
        load: Option<&CpuLoad>,
    ) -> io::Result<()> {
        let t_s = (s.elapsed_ns + offset_ns) as f64 / 1e9;
        for t in &s.threads {
            let mut line = format!(
                "{t_s:.3},{phase},{},{},{},{},{},{:.0},{},{},{},{},{}",
                t.index,
                t.cpu.map_or(String::new(), |c| c.to_string()),
                t.samples,
                t.ival_samples,
                if t.ival_samples > 0 {
                    t.ival_min_ns.to_string()
                } else {
                    String::new()
                },
                t.ival_avg_ns,
                if t.ival_samples > 0 {
                    t.ival_max_ns.to_string()
                } else {
                    String::new()
                },
                t.max_ns,
                t.overruns,
                t.lost,
                load.map_or(String::new(), |l| format!("{:.1}", l.total)),
            );
            for c in &self.cpus {
                let v = load
                    .and_then(|l| l.per_cpu.get(c))
                    .map_or(String::new(), |v| format!("{v:.1}"));
                line.push(',');
                line.push_str(&v);
            }
            writeln!(self.out, "{line}")?;
        }
        self.out.flush()
    }
}
