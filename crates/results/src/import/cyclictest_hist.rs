//! The histogram text `cyclictest -h N` prints (and rtshield's
//! `histogram.txt`, the same layout with `#` provenance lines).

use super::provenance::Provenance;
use super::{col_of, Imported};
use crate::histogram::{hist_stats, thread_from_histogram};
use crate::ranges::{check_histogram, sum_counts, MAX_COUNT};
use crate::{Histogram, RunResult};
use rtshield_vocab::InputError;
use std::collections::BTreeMap;

/// Read the text cyclictest prints with `-h N` (`-q` recommended): lines of
/// `BUCKET COUNT COUNT…`, then `# Total:`, `# Min Latencies:` … one column
/// per thread. Other lines (status lines without `-q`) are ignored.
pub fn read_cyclictest_hist(text: &str, source: &str) -> Result<RunResult, InputError> {
    let (rows, summary, ncols) = read_table(text, source)?;
    let n = ncols.ok_or_else(|| {
        InputError::new(format!(
            "{source}: no histogram lines (`BUCKET COUNT…`): not cyclictest -h output"
        ))
    })?;
    // A value rtshield wrote as `?` (unknown) is None.
    let col = |key: &str, i: usize| summary.get(key).and_then(|v| v.get(i)).copied().flatten();
    // `-H` (histofall) adds a last column summing every thread, and a last
    // value to `# Total:`, `# Max Latencies:` and `# Histogram Overflows:`
    // (not to Min/Avg): that column is not a thread.
    let threads_n = match summary.get("Min Latencies").map(Vec::len) {
        Some(m) if m + 1 == n && n > 2 => m,
        _ => n,
    };
    let max_len = summary.get("Max Latencies").map(Vec::len);
    if max_len != Some(n) && max_len != Some(threads_n) {
        return Err(InputError::new(format!(
            "{source}: no `# Max Latencies:` line with {n} values after the histogram (truncated file?)"
        )));
    }
    // rtshield's own histogram.txt: its provenance says what it is, the
    // resolution its numbers are in, and each thread's counters. A
    // cyclictest -h text says none of it: no time, period, policy, mode or
    // end reason (unknown, never a default).
    let prov = Provenance::parse(text);
    let res = prov.resolution_ns.unwrap_or(1000);
    let mut threads = Vec::new();
    for i in 0..threads_n {
        let counts: Vec<[u64; 2]> = rows
            .iter()
            .filter(|r| r.1[i] > 0)
            .map(|r| [r.0, r.1[i]])
            .collect();
        let too_many = || {
            InputError::new(format!(
                "{source}: thread {i} holds more than {MAX_COUNT} samples (docs/ranges.md)"
            ))
        };
        let in_hist = sum_counts(counts.iter().map(|c| c[1])).ok_or_else(too_many)?;
        let tl = prov.threads.get(i);
        let overflow = col("Histogram Overflows", i).unwrap_or(0);
        let h = Histogram {
            resolution_ns: res,
            buckets: rows.last().map_or(0, |r| r.0 + 1),
            counts,
            overflow,
            underflow: tl.and_then(|t| t.underflow).unwrap_or(0),
        };
        let samples = sum_counts([in_hist, overflow, h.underflow]).ok_or_else(too_many)?;
        check_histogram(&format!("thread {i}'s histogram"), &h)
            .map_err(|m| InputError::new(format!("{source}: {m} (docs/ranges.md)")))?;
        let hs = hist_stats(&h);
        // Each value is at most MAX_COUNT units of at most a second:
        // i128 holds the product, i64 the nanoseconds of any real run.
        let ns = |key: &str, v: u64| {
            i64::try_from(i128::from(v) * i128::from(res)).map_err(|_| {
                InputError::new(format!(
                    "{source}: `# {key}:` {v} is out of range (docs/ranges.md)"
                ))
            })
        };
        let has = |key: &str| summary.get(key).is_some_and(|v| v.len() > i);
        // No `# Avg Latencies:` column: the histogram's mean (when it has
        // samples); `?` or no minimum: unknown, never 0.
        let avg_ns = match col("Avg Latencies", i) {
            Some(a) => Some(ns("Avg Latencies", a)? as f64),
            None if !has("Avg Latencies") && hs.samples > 0 => Some(hs.avg_ns),
            None => None,
        };
        let min_ns = col("Min Latencies", i)
            .map(|m| ns("Min Latencies", m))
            .transpose()?;
        let max_ns = col("Max Latencies", i)
            .map(|m| ns("Max Latencies", m))
            .transpose()?;
        let mut t = thread_from_histogram(i as u32, None, None, samples, min_ns, max_ns, avg_ns, h);
        if let Some(l) = tl {
            l.apply(&mut t);
        }
        threads.push(t);
    }
    let buckets = rows.last().map(|r| r.0 + 1);
    let (tool, kind, warning) = match &prov.tool {
        Some(t) => (
            t.clone(),
            "rtshield-histogram",
            "read from rtshield's histogram.txt: min/avg/max in whole resolution units; percentiles, median, mode and std from the histogram; a percentile beyond it is a bound",
        ),
        None => (
            "cyclictest".to_string(),
            "cyclictest",
            "imported from cyclictest histogram text: no time, CPU, period, policy, mode or system information; percentiles from the histogram",
        ),
    };
    let mut r = Imported {
        tool,
        started_at: prov.started.clone(),
        duration_s: prov.duration_s,
        command: prov.command.clone(),
        res_ns: res,
        buckets,
        mode: prov.mode.clone(),
        sysinfo: prov.sysinfo.clone(),
        warnings: vec![warning.into()],
        kind,
    }
    .into_result(threads);
    r.end_reason = prov.end_reason.clone();
    r.settings.memlock = prov.memlock;
    super::in_range(r, source)
}

/// The histogram lines (`(bucket, counts)`), the `# Key:` summary lines,
/// and the number of count columns (None without a histogram line).
type Table = (
    Vec<(u64, Vec<u64>)>,
    BTreeMap<&'static str, Vec<Option<u64>>>,
    Option<usize>,
);

/// Every histogram and summary line of `text`, checked.
fn read_table(text: &str, source: &str) -> Result<Table, InputError> {
    let mut rows: Vec<(u64, Vec<u64>)> = Vec::new();
    let mut summary: BTreeMap<&'static str, Vec<Option<u64>>> = BTreeMap::new();
    let mut ncols: Option<usize> = None;
    for (ln, line) in text.lines().enumerate() {
        let lno = ln + 1;
        let t = line.trim();
        if let Some(rest) = t.strip_prefix('#') {
            let rest = rest.trim();
            for key in [
                "Total",
                "Min Latencies",
                "Avg Latencies",
                "Max Latencies",
                "Histogram Overflows",
            ] {
                if let Some(v) = rest.strip_prefix(key).and_then(|r| r.strip_prefix(':')) {
                    let mut vals = Vec::new();
                    for w in v.split_whitespace() {
                        // rtshield writes `?` for the figures of a thread
                        // that measured nothing; counts are always known.
                        if w == "?" && key.ends_with("Latencies") {
                            vals.push(None);
                            continue;
                        }
                        let n = number(w, line, lno, source, || {
                            format!("`{w}` is not a count in `# {key}:`")
                        })?;
                        vals.push(Some(n));
                    }
                    summary.insert(key, vals);
                }
            }
            continue;
        }
        if !t.starts_with(|c: char| c.is_ascii_digit()) {
            continue; // blank line or a status line
        }
        let mut words = t.split_whitespace();
        let first = words.next().unwrap_or_default();
        let bucket = number(first, line, lno, source, || {
            format!("`{first}` is not a bucket number")
        })?;
        let mut counts = Vec::new();
        for w in words {
            // One column per thread (and `-H`'s sum): refused at the
            // first line of too many, before the rest is read (F19).
            if counts.len() > rtshield_limits::RESULT_MAX_THREADS {
                return Err(InputError::at(
                    source,
                    lno,
                    col_of(line, w),
                    format!(
                        "more than {} columns of counts: more threads than the {} a results file may hold (docs/ranges.md)",
                        rtshield_limits::RESULT_MAX_THREADS + 1,
                        rtshield_limits::RESULT_MAX_THREADS
                    ),
                ));
            }
            counts.push(number(w, line, lno, source, || {
                format!("`{w}` is not a sample count")
            })?);
        }
        match ncols {
            None if counts.is_empty() => {
                return Err(InputError::at(
                    source,
                    lno,
                    line.len() + 1,
                    "expected `BUCKET COUNT…`",
                ));
            }
            None => ncols = Some(counts.len()),
            Some(n) if n != counts.len() => {
                return Err(InputError::at(
                    source,
                    lno,
                    line.len() + 1,
                    format!(
                        "{} counts on this line, {n} on the first histogram line (truncated file?)",
                        counts.len()
                    ),
                ));
            }
            _ => {}
        }
        rows.push((bucket, counts));
    }
    Ok((rows, summary, ncols))
}

/// The number `w` (a word of `line`, line `lno`): a whole number at most
/// [`MAX_COUNT`] (docs/ranges.md), else an error at its LINE:COL (`what`
/// says what it should have been).
fn number(
    w: &str,
    line: &str,
    lno: usize,
    source: &str,
    what: impl Fn() -> String,
) -> Result<u64, InputError> {
    let at = |m: String| InputError::at(source, lno, col_of(line, w), m);
    let n: u64 = w.parse().map_err(|_| at(what()))?;
    if n > MAX_COUNT {
        return Err(at(format!(
            "`{w}` is out of range (at most {MAX_COUNT}, docs/ranges.md)"
        )));
    }
    Ok(n)
}
