//! The systress article's `timer_threadNN.txt`, one file per thread.

use super::{provenance, units, units_round, Exporter};
use crate::{RunResult, ThreadResult, DEEP_PERCENTILES, PERCENTILES};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// `timer_thread00.txt` for thread index 0 (the systress article's name).
pub fn systress_file_name(index: u32) -> String {
    format!("timer_thread{index:02}.txt")
}

/// One file per thread, named by `names` (a config's `stats.filename`) or
/// [`systress_file_name`].
#[derive(Default)]
pub struct SystressTxt {
    /// File name per thread index (a configuration's `stats.filename`); threads not named here get [`systress_file_name`].
    pub names: BTreeMap<u32, String>,
}

impl SystressTxt {
    /// The file thread `index` is written to.
    pub fn file_name(&self, index: u32) -> String {
        self.names
            .get(&index)
            .cloned()
            .unwrap_or_else(|| systress_file_name(index))
    }
}

impl Exporter for SystressTxt {
    fn name(&self) -> &'static str {
        "txt"
    }
    fn files(&self, res: &RunResult) -> Vec<(String, String)> {
        res.threads
            .iter()
            .map(|t| (self.file_name(t.index), to_systress_txt(res, t)))
            .collect()
    }
}

/// The systress article's `timer_threadNN.txt`: the two-column histogram (every bucket
/// from 0), then (as `#` comments) the provenance and the SUMMARY block
/// exactly as systress prints it, in resolution units.
pub fn to_systress_txt(res: &RunResult, t: &ThreadResult) -> String {
    let h = &t.histogram;
    let r = h.resolution_ns;
    let mut s = String::new();
    let mut counts = h.counts.iter().peekable();
    for i in 0..h.buckets {
        let c = match counts.peek() {
            Some([b, c]) if *b == i => {
                let c = *c;
                counts.next();
                c
            }
            _ => 0,
        };
        let _ = writeln!(s, "{i:>8} {c:>8}");
    }
    s.push('\n');
    s.push_str(&provenance(res));
    s.push_str(&thread_line(t));
    // The deep percentiles only when the run had the samples for them.
    let pct: Vec<String> = PERCENTILES
        .iter()
        .map(|k| format!("p{k}={}", t.percentiles.get(*k).map_or(0, |v| units(*v, r))))
        .chain(DEEP_PERCENTILES.iter().filter_map(|k| {
            t.percentiles
                .get(*k)
                .map(|v| format!("p{k}={}", units(*v, r)))
        }))
        .collect();
    let _ = writeln!(s, "# percentiles ({}): {}", unit_name(r), pct.join(" "));
    s.push_str(&super::split_lines(t));
    s.push_str("#                            SUMMARY\n#\n");
    s.push_str("# Index    TID  Samples  L_min  L_max  L_avg  Samples_H  L_avg_H  L_med_H  L_std_H  L_mode_H\n#\n");
    let hs = &t.hist_stats;
    let _ = writeln!(
        s,
        "#{:>7} {:>5} {:>8} {:>6} {:>6} {:>6} {:>10} {:>8} {:>8} {:>8} {:>9}",
        t.index,
        t.tid,
        t.samples,
        units(t.min_ns, r),
        units(t.max_ns, r),
        units_round(t.avg_ns, r),
        hs.samples,
        units_round(hs.avg_ns, r),
        units(hs.median_ns, r),
        units_round(hs.std_ns, r),
        units(hs.mode_ns, r)
    );
    s
}

/// `# thread 0: tid 4242 cpu 1 policy FIFO priority 98 period 200000 ns;
/// overflow 1 underflow 0 overruns 0 missed_periods 0 lost 0` (read back
/// by the importers: what a histogram alone cannot say).
pub(crate) fn thread_line(t: &ThreadResult) -> String {
    let h = &t.histogram;
    format!(
        "# thread {}: tid {} cpu {} policy {} priority {} period {} ns; overflow {} underflow {} overruns {} missed_periods {} lost {}\n",
        t.index,
        t.tid,
        t.cpu.map_or("-".into(), |c| c.to_string()),
        t.policy,
        t.priority,
        t.period_ns,
        h.overflow,
        h.underflow,
        t.overruns,
        t.missed_periods,
        t.lost
    )
}

fn unit_name(res: u64) -> String {
    match res {
        1 => "ns".into(),
        1000 => "us".into(),
        1_000_000 => "ms".into(),
        r => format!("x{r}ns"),
    }
}
