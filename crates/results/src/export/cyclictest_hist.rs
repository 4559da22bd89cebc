//! cyclictest's `-h` histogram text, `histogram.txt`.

use super::{provenance, units, Exporter};
// --split figures go in as `#` lines before `# Histogram` (readers skip them).
use crate::{Histogram, RunResult, ThreadResult};
use std::fmt::Write as _;

/// The name of the cyclictest histogram file.
pub const HIST_FILE: &str = "histogram.txt";

/// The `histogram.txt` exporter: cyclictest's `-h` layout, readable by its scripts.
pub struct CyclictestHist;

impl Exporter for CyclictestHist {
    fn name(&self) -> &'static str {
        "cyclictest"
    }
    fn files(&self, res: &RunResult) -> Vec<(String, String)> {
        vec![(HIST_FILE.into(), to_cyclictest_hist(res))]
    }
}

/// cyclictest's `-h` output: `# Histogram`, one zero-padded row per bucket
/// with one tab-separated column per thread, then the `# Total:` (samples
/// inside the histogram), `# Min/Avg/Max Latencies:`, `# Histogram
/// Overflows:` and `# Histogram Overflow at cycle number:` lines and an
/// empty line, byte for byte as cyclictest 2.x prints them. Values in
/// resolution units (µs by default, like cyclictest). For a histogram size
/// of N units the rows are `0..N-1`, as `cyclictest -h N` prints them: a
/// sample of N units or more (rtshield's last bucket and beyond) is an
/// overflow, listed by its sample number (the first N of them, then
/// `# NNNNN others`) when the result records the numbers.
///
/// A thread without a histogram (an import of `cyclictest` without `-h`)
/// has no column: cyclictest's text has no way to say "unknown", and a
/// column of zeros would be read as counts.
pub fn to_cyclictest_hist(res: &RunResult) -> String {
    let mut s = provenance(res);
    let (with, without): (Vec<&ThreadResult>, Vec<&ThreadResult>) =
        res.threads.iter().partition(|t| t.histogram.is_some());
    // `#` lines: skipped by cyclictest's readers, read back by rtshield's.
    for t in &with {
        s.push_str(&super::systress_txt::thread_line(t));
        s.push_str(&super::split_lines(t));
    }
    for t in &without {
        let _ = writeln!(s, "# thread {}: no histogram (not in this file)", t.index);
    }
    let hist = |t: &ThreadResult| t.histogram.clone().unwrap_or_default();
    let res_ns = |t: &ThreadResult| t.resolution_ns(res.settings.resolution_ns);
    s.push_str("# Histogram\n");
    let rows = with.iter().map(|t| rows_of(&hist(t))).max().unwrap_or(0);
    let per_thread: Vec<Vec<u64>> = with
        .iter()
        .map(|t| {
            let h = hist(t);
            let mut v = vec![0u64; rows as usize];
            for [b, c] in h.counts.iter().filter(|b| b[0] < rows_of(&h)) {
                // try_from: an index past usize (32-bit) is out of range,
                // not wrapped into a low row.
                if let Some(x) = usize::try_from(*b).ok().and_then(|b| v.get_mut(b)) {
                    *x = *c;
                }
            }
            v
        })
        .collect();
    for i in 0..rows as usize {
        let cols: Vec<String> = per_thread.iter().map(|v| format!("{:06}", v[i])).collect();
        let _ = writeln!(s, "{i:06} {}", cols.join("\t"));
    }
    let line = |s: &mut String, name: &str, f: &dyn Fn(&ThreadResult) -> String| {
        s.push_str(name);
        for t in &with {
            s.push(' ');
            s.push_str(&f(t));
        }
        s.push('\n');
    };
    line(&mut s, "# Total:", &|t| {
        let h = hist(t);
        format!(
            "{:09}",
            h.counts
                .iter()
                .map(|c| c[1])
                .fold(0, u64::saturating_add)
                .saturating_sub(at_or_past_n(&h))
        )
    });
    line(&mut s, "# Min Latencies:", &|t| {
        t.min_ns
            .map_or("?".into(), |v| format!("{:05}", units(v, res_ns(t))))
    });
    // cyclictest truncates the average.
    line(&mut s, "# Avg Latencies:", &|t| {
        t.avg_ns.map_or("?".into(), |v| {
            format!("{:05}", (v / res_ns(t).max(1) as f64) as i64)
        })
    });
    line(&mut s, "# Max Latencies:", &|t| {
        t.max_ns
            .map_or("?".into(), |v| format!("{:05}", units(v, res_ns(t))))
    });
    line(&mut s, "# Histogram Overflows:", &|t| {
        format!("{:05}", overflows(&hist(t)))
    });
    s.push_str("# Histogram Overflow at cycle number:\n");
    for (i, t) in with.iter().enumerate() {
        let _ = write!(s, "# Thread {i}:");
        let listed = t.overflow_cycles.as_deref().unwrap_or_default();
        for c in listed {
            let _ = write!(s, " {c:05}");
        }
        // As cyclictest: the overflows not listed (all of them when the
        // numbers are unknown).
        let others = overflows(&hist(t)).saturating_sub(listed.len() as u64);
        if others > 0 {
            let _ = write!(s, " # {others:05} others");
        }
        s.push('\n');
    }
    // cyclictest ends with an empty line too.
    s.push('\n');
    s
}

/// The rows of a thread's `-h N` histogram: N, the histogram size in
/// resolution units (rtshield's buckets hold `0..=N`).
fn rows_of(h: &Histogram) -> u64 {
    h.buckets.saturating_sub(1)
}

/// Samples in rtshield's last bucket (N units): past `cyclictest -h N`'s rows.
fn at_or_past_n(h: &Histogram) -> u64 {
    let n = rows_of(h);
    h.counts.iter().filter(|b| b[0] >= n).map(|b| b[1]).sum()
}

/// cyclictest's overflows: samples of N units or more.
fn overflows(h: &Histogram) -> u64 {
    h.overflow + at_or_past_n(h)
}
