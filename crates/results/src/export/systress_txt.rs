//! The systress article's `timer_threadNN.txt`, one file per thread.

use super::{provenance, units, units_round, Exporter};
use crate::unknown::or;
use crate::{Pct, RunResult, ThreadResult, DEEP_PERCENTILES, PERCENTILES};
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
/// exactly as systress prints it, in resolution units. A value the source
/// did not record is `?` (no histogram: no bucket line, `?` in the `_H`
/// columns); a percentile beyond the histogram is `pK>=N`.
pub fn to_systress_txt(res: &RunResult, t: &ThreadResult) -> String {
    let h = t.histogram.clone().unwrap_or_default();
    let r = t.resolution_ns(res.settings.resolution_ns);
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
    // Only the percentiles the run had the samples for.
    let pct: Vec<String> = PERCENTILES
        .iter()
        .chain(DEEP_PERCENTILES)
        .filter_map(|k| match t.pct(k) {
            Pct::Exact(v) => Some(format!("p{k}={}", units(v, r))),
            Pct::AtLeast(v, _) => Some(format!("p{k}>={}", units(v, r))),
            Pct::Unknown => Some(format!("p{k}=?")),
            Pct::NotEnoughSamples => None,
        })
        .collect();
    let _ = writeln!(s, "# percentiles ({}): {}", unit_name(r), pct.join(" "));
    s.push_str(&super::split_lines(t));
    s.push_str("#                            SUMMARY\n#\n");
    s.push_str("# Index    TID  Samples  L_min  L_max  L_avg  Samples_H  L_avg_H  L_med_H  L_std_H  L_mode_H\n#\n");
    let hs = t.hist_stats.as_ref();
    let _ = writeln!(
        s,
        "#{:>7} {:>5} {:>8} {:>6} {:>6} {:>6} {:>10} {:>8} {:>8} {:>8} {:>9}",
        t.index,
        or(t.tid, "?"),
        or(t.samples, "?"),
        or(t.min_ns.map(|v| units(v, r)), "?"),
        or(t.max_ns.map(|v| units(v, r)), "?"),
        or(t.avg_ns.map(|v| units_round(v, r)), "?"),
        or(hs.map(|h| h.samples), "?"),
        or(hs.map(|h| units_round(h.avg_ns, r)), "?"),
        or(hs.map(|h| units(h.median_ns, r)), "?"),
        or(hs.map(|h| units_round(h.std_ns, r)), "?"),
        or(hs.map(|h| units(h.mode_ns, r)), "?")
    );
    s
}

/// `# thread 0: tid 4242 cpu 1 policy FIFO priority 98 period 200000 ns;
/// overflow 1 underflow 0 overruns 0 missed_periods 0 lost 0` (read back
/// by the importers: what a histogram alone cannot say).
/// An unknown value is `?`.
pub(crate) fn thread_line(t: &ThreadResult) -> String {
    let h = t.histogram.as_ref();
    format!(
        "# thread {}: tid {} cpu {} policy {} priority {} period {} ns; overflow {} underflow {} overruns {} missed_periods {} lost {}\n",
        t.index,
        or(t.tid, "?"),
        t.cpu.map_or("-".into(), |c| c.to_string()),
        or(t.policy, "?"),
        or(t.priority, "?"),
        or(t.period_ns, "?"),
        or(h.map(|h| h.overflow), "?"),
        or(h.map(|h| h.underflow), "?"),
        or(t.overruns, "?"),
        or(t.missed_periods, "?"),
        or(t.lost, "?")
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
