//! Resume (`rtshield run CONFIG --resume DIR`): the last checkpoint of an
//! interrupted run plus what the resumed run measured, as one result.
//!
//! Counts add up exactly (samples, histogram buckets, overflow, overruns,
//! missed periods, lost), min/max are exact, the mean is weighted by the
//! samples. The HDR histograms behind the percentiles are not in
//! results.json, so the merged percentiles come from the merged linear
//! histogram (bucket lower edges, the exact maximum for a percentile in the
//! overflow); the corrected percentiles are the larger of the two parts'
//! (an upper bound).

use crate::histogram::{hist_percentiles, hist_stats};
use crate::{RunResult, ThreadResult};

/// Two counts of the same thing added up; unknown when either is.
fn add(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    // Saturating: both parts are in range (docs/ranges.md); a merge must
    // never be what loses the resumed part of a run.
    Some(a?.saturating_add(b?))
}

/// The figure of two parts (minimum or maximum, `f`): a part that
/// measured nothing (None) leaves the other's; unknown when both are.
pub(crate) fn pick(a: Option<i64>, b: Option<i64>, f: fn(i64, i64) -> i64) -> Option<i64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(f(x, y)),
        (x, None) => x,
        (None, y) => y,
    }
}

fn merge_thread(a: &ThreadResult, b: &ThreadResult) -> Result<ThreadResult, String> {
    let histogram = match (&a.histogram, &b.histogram) {
        (Some(x), Some(y)) => Some(x.merge(y).map_err(|e| format!("thread {}: {e}", a.index))?),
        _ => None,
    };
    let samples = add(a.samples, b.samples);
    let (na, nb) = (a.samples.unwrap_or(0), b.samples.unwrap_or(0));
    let min_ns = pick(a.min_ns, b.min_ns, i64::min);
    let max_ns = pick(a.max_ns, b.max_ns, i64::max);
    // A part without samples has no mean: the other part's is the whole's.
    let avg_ns = match (a.avg_ns, b.avg_ns, samples) {
        (Some(x), Some(y), Some(n)) if n > 0 => Some((x * na as f64 + y * nb as f64) / n as f64),
        (Some(_), Some(_), _) => None,
        (x, None, _) => x,
        (None, y, _) => y,
    };
    let corrected = match (&a.corrected, &b.corrected) {
        (Some(ac), Some(bc)) => {
            let mut c = bc.clone();
            c.samples = ac.samples.saturating_add(bc.samples);
            c.max_ns = pick(ac.max_ns, bc.max_ns, i64::max);
            for (k, v) in &ac.percentiles {
                let e = c.percentiles.entry(k.clone()).or_insert(*v);
                *e = (*e).max(*v);
            }
            Some(c)
        }
        _ => None,
    };
    let (percentiles, percentile_bounds) =
        histogram.as_ref().map(hist_percentiles).unwrap_or_default();
    Ok(ThreadResult {
        samples,
        min_ns,
        max_ns,
        avg_ns,
        cur_ns: if nb > 0 { b.cur_ns } else { a.cur_ns },
        overruns: add(a.overruns, b.overruns),
        missed_periods: add(a.missed_periods, b.missed_periods),
        lost: add(a.lost, b.lost),
        hist_stats: histogram.as_ref().map(hist_stats),
        percentiles,
        percentile_bounds,
        le_counts: merge_le(a.le_counts.as_deref(), b.le_counts.as_deref()),
        overflow_cycles: histogram
            .as_ref()
            .and_then(|h| merge_cycles(a, b, h.buckets.saturating_sub(1))),
        histogram,
        corrected,
        ..b.clone()
    })
}

/// Both parts' exact `le` counts added up; unknown when either is.
fn merge_le(a: Option<&[[u64; 2]]>, b: Option<&[[u64; 2]]>) -> Option<Vec<[u64; 2]>> {
    let (a, b) = (a?, b?);
    (a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x[0] == y[0])).then(|| {
        a.iter()
            .zip(b)
            .map(|(x, y)| [x[0], x[1].saturating_add(y[1])])
            .collect()
    })
}

/// The first part's overflow cycle numbers, then the second's numbered on
/// from the first part's samples (the merged result's numbering), at most
/// `n` in all, as cyclictest keeps them. Unknown when either part's are.
fn merge_cycles(a: &ThreadResult, b: &ThreadResult, n: u64) -> Option<Vec<u64>> {
    let (x, y) = (a.overflow_cycles.as_ref()?, b.overflow_cycles.as_ref()?);
    let na = a.samples?;
    Some(
        x.iter()
            .copied()
            .chain(y.iter().map(|c| c.saturating_add(na)))
            .take(n as usize)
            .collect(),
    )
}

/// `prev` (the checkpoint) followed by `cur` (the resumed run), after
/// `gap_s` seconds down. Everything that describes the run as a whole
/// (start, command, config) comes from `prev`; `duration_s` is the
/// measured time (the gap excluded); the gap is a warning and the tag
/// `down_s` (summed over several resumes), `resumed` counts them.
pub fn merge_resumed(prev: &RunResult, cur: &RunResult, gap_s: f64) -> Result<RunResult, String> {
    let mut threads = Vec::new();
    for b in &cur.threads {
        let t = match prev.threads.iter().find(|a| a.index == b.index) {
            Some(a) => merge_thread(a, b)?,
            None => b.clone(),
        };
        threads.push(t);
    }
    for a in &prev.threads {
        if !cur.threads.iter().any(|b| b.index == a.index) {
            threads.push(a.clone());
        }
    }
    threads.sort_by_key(|t| t.index);
    let mut programs = cur.programs.clone();
    for p in &mut programs {
        if let Some(a) = prev.programs.iter().find(|a| a.index == p.index) {
            p.spawns = p.spawns.saturating_add(a.spawns);
            p.exits_ok = p.exits_ok.saturating_add(a.exits_ok);
            p.exits_ko = p.exits_ko.saturating_add(a.exits_ko);
        }
    }
    let mut tags = prev.tags.clone();
    let n: u32 = tags
        .get("resumed")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    tags.insert("resumed".into(), (n + 1).to_string());
    let down: f64 = tags
        .get("down_s")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0);
    tags.insert("down_s".into(), format!("{:.3}", down + gap_s));
    let mut warnings = prev.warnings.clone();
    warnings.push(format!(
        "resumed from a checkpoint at {:.3} s after {:.1} s down: samples of the down time and of the time between the last checkpoint and the interruption are not in these results; percentiles are from the merged histogram",
        prev.duration_s.unwrap_or(0.0),
        gap_s
    ));
    for w in &cur.warnings {
        if !warnings.contains(w) {
            warnings.push(w.clone());
        }
    }
    let mut sysinfo = cur.sysinfo.clone();
    sysinfo.thermal = prev.sysinfo.thermal.clone();
    // The verdict of the whole run: the same limits, on the merged figures.
    let limits = cur
        .verdict
        .as_ref()
        .or(prev.verdict.as_ref())
        .map(|v| v.limits);
    let verdict = limits.map(|l| crate::Verdict::judge(&threads, l));
    Ok(RunResult {
        started_at: prev.started_at.clone(),
        duration_s: prev.duration_s.zip(cur.duration_s).map(|(a, b)| a + b),
        command: prev.command.clone(),
        config: prev.config.clone(),
        label: prev.label.clone(),
        settings: prev.settings.clone(),
        sysinfo,
        warnings,
        threads,
        programs,
        tags,
        verdict,
        drift: crate::drift::Drift::merged(&prev.drift, &cur.drift),
        ..cur.clone()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::example::example_result;

    #[test]
    fn counts_add_up_exactly() {
        let a = example_result();
        let mut b = example_result();
        let bt = &mut b.threads[0];
        bt.samples = Some(5);
        bt.min_ns = Some(1_000);
        bt.max_ns = Some(90_000);
        bt.avg_ns = Some(8_000.0);
        bt.overruns = Some(2);
        bt.missed_periods = Some(3);
        let bh = bt.histogram.as_mut().unwrap();
        bh.counts = vec![[1, 2], [3, 3]];
        bh.overflow = 0;
        b.duration_s = Some(1.0);
        let m = merge_resumed(&a, &b, 12.5).unwrap();
        let t = &m.threads[0];
        let at = &a.threads[0];
        let n = |x: Option<u64>| x.unwrap();
        assert_eq!(n(t.samples), n(at.samples) + 5);
        assert_eq!((t.min_ns, t.max_ns), (Some(1_000), at.max_ns));
        assert_eq!(n(t.overruns), n(at.overruns) + 2);
        assert_eq!(n(t.missed_periods), n(at.missed_periods) + 3);
        // Bucket 3 held 3 samples before, 3 more now; bucket 1 is new.
        let th = t.histogram.as_ref().unwrap();
        assert!(th.counts.contains(&[3, 6]), "{:?}", th.counts);
        assert!(th.counts.contains(&[1, 2]));
        let h: u64 = th.counts.iter().map(|c| c[1]).sum::<u64>() + th.overflow;
        assert_eq!(h, n(t.samples) - n(t.lost), "every sample once");
        assert_eq!(t.hist_stats.as_ref().unwrap().samples, h - th.overflow);
        let want =
            (at.avg_ns.unwrap() * n(at.samples) as f64 + 8_000.0 * 5.0) / n(t.samples) as f64;
        assert!((t.avg_ns.unwrap() - want).abs() < 1e-6);
        assert_eq!(m.duration_s, Some(a.duration_s.unwrap() + 1.0));
        assert_eq!(m.tags["resumed"], "1");
        assert_eq!(m.tags["down_s"], "12.500");
        // A second resume accumulates.
        let m2 = merge_resumed(&m, &b, 1.0).unwrap();
        assert_eq!(m2.tags["resumed"], "2");
        assert_eq!(m2.tags["down_s"], "13.500");
        assert_eq!(n(m2.threads[0].samples), n(at.samples) + 10);
    }

    #[test]
    fn different_histograms_are_refused() {
        let a = example_result();
        let mut b = example_result();
        b.threads[0].histogram.as_mut().unwrap().buckets = 2001;
        let e = merge_resumed(&a, &b, 0.0).unwrap_err();
        assert!(e.contains("histograms differ"), "{e}");
    }
}
