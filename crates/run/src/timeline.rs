//! `timeline.csv` during a run: the engine's [`IntervalStats`] and the CPU
//! load become rows of the format `rtshield_results::export::timeline`
//! owns, appended through a [`SafeDir`].

use rtshield_load::CpuLoad;
use rtshield_measure::IntervalStats;
use rtshield_results::export::timeline::{Row, TimelineWriter};
use rtshield_sys::{SafeDir, SafeError};
use std::io;

pub use rtshield_results::export::timeline::{FILE, HEADER};

pub struct Timeline {
    out: TimelineWriter,
    cpus: Vec<u32>,
}

impl Timeline {
    /// Create `dir/timeline.csv` with a header naming one column per CPU.
    pub fn create(dir: &SafeDir, cpus: Vec<u32>) -> Result<Timeline, SafeError> {
        Ok(Timeline {
            out: TimelineWriter::create(dir, &cpus)?,
            cpus,
        })
    }

    /// One row per thread; `offset_ns` is added to the segment's elapsed time.
    pub fn append(
        &mut self,
        s: &IntervalStats,
        offset_ns: u64,
        phase: &str,
        load: Option<&CpuLoad>,
    ) -> io::Result<()> {
        let elapsed_s = (s.elapsed_ns + offset_ns) as f64 / 1e9;
        let rows: Vec<Row> = s
            .threads
            .iter()
            .map(|t| Row {
                elapsed_s,
                phase,
                thread: t.index,
                cpu: t.cpu,
                samples: t.samples,
                ival_samples: t.ival_samples,
                ival_min_ns: t.ival_min_ns,
                ival_avg_ns: t.ival_avg_ns,
                ival_max_ns: t.ival_max_ns,
                max_max_ns: t.max_ns,
                overruns: t.overruns,
                lost: t.lost,
                load_total: load.map(|l| l.total),
                load_cpus: self
                    .cpus
                    .iter()
                    .map(|c| load.and_then(|l| l.per_cpu.get(c)).copied())
                    .collect(),
            })
            .collect();
        self.out.append(&rows)
    }
}
