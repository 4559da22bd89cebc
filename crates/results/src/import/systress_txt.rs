//! The systress article's `timer_threadNN.txt`.

use super::provenance::Provenance;
use super::{col_of, is_summary_header, Imported};
use crate::histogram::{thread_from_histogram, thread_without_histogram};
use crate::{Histogram, RunResult};
use rtshield_vocab::InputError;

/// Read the systress article's `timer_threadNN.txt` (as systress and
/// rtshield write it): `INDEX COUNT` lines for every bucket, then `#`
/// lines ending with the SUMMARY block
/// (`# Index TID Samples L_min L_max L_avg Samples_H L_avg_H L_med_H
/// L_std_H L_mode_H` and one line of values, in the histogram's unit).
/// The overflow is `Samples − Samples_H` unless rtshield's per-thread
/// line gives it.
pub fn read_systress_txt(text: &str, source: &str) -> Result<RunResult, InputError> {
    let prov = Provenance::parse(text);
    let res = prov.resolution_ns.unwrap_or(1000);
    let mut counts: Vec<[u64; 2]> = Vec::new();
    let mut last_bucket: Option<u64> = None;
    let mut summary: Option<Vec<Option<u64>>> = None;
    let mut after_header = false;
    for (ln, line) in text.lines().enumerate() {
        let lno = ln + 1;
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        if let Some(rest) = t.strip_prefix('#') {
            if is_summary_header(t) {
                after_header = true;
            } else if after_header && summary.is_none() && !rest.trim().is_empty() {
                let vals = summary_values(line, rest, lno, source)?;
                summary = Some(vals);
            }
            continue;
        }
        let (b, c) = bucket_line(line, t, lno, source)?;
        if last_bucket.is_some_and(|l| b <= l) {
            return Err(InputError::at(
                source,
                lno,
                col_of(line, t),
                format!(
                    "bucket {b} after bucket {}: not ascending",
                    last_bucket.unwrap_or(0)
                ),
            ));
        }
        last_bucket = Some(b);
        if c > 0 {
            counts.push([b, c]);
        }
    }
    let Some(sm) = summary else {
        return Err(InputError::new(format!(
            "{source}: no SUMMARY line after `# Index … Samples_H …` (truncated file?)"
        )));
    };
    let [index, tid, samples, l_min, l_max, l_avg, samples_h, ..] = sm[..] else {
        unreachable!("11 values checked above")
    };
    let need = |v: Option<u64>, what: &str| {
        v.ok_or_else(|| InputError::new(format!("{source}: SUMMARY: {what} is `?`")))
    };
    let index = need(index, "Index")?;
    let tl = prov.threads.first();
    // `?`: rtshield wrote a thread that measured nothing (unknown).
    let ns = |v: Option<u64>, what: &str| v.map(|v| units_ns(v, res, what, source)).transpose();
    let (min_ns, max_ns, avg_ns) = (
        ns(l_min, "L_min")?,
        ns(l_max, "L_max")?,
        ns(l_avg, "L_avg")?.map(|a| a as f64),
    );
    // `Samples_H ?`: rtshield wrote a thread without a histogram.
    let mut t = match (samples, samples_h) {
        (Some(samples), Some(samples_h)) => {
            let overflow = samples.saturating_sub(samples_h);
            let underflow = tl.and_then(|t| t.underflow).unwrap_or(0);
            let h = Histogram {
                resolution_ns: res,
                buckets: last_bucket.map_or(0, |b| b + 1),
                counts,
                overflow: overflow.saturating_sub(underflow),
                underflow,
            };
            crate::ranges::check_histogram("histogram", &h)
                .map_err(|m| InputError::new(format!("{source}: {m} (docs/ranges.md)")))?;
            thread_from_histogram(index as u32, None, None, samples, min_ns, max_ns, avg_ns, h)
        }
        (samples, _) => {
            thread_without_histogram(index as u32, None, samples, min_ns, max_ns, avg_ns)
        }
    };
    if let Some(l) = tl {
        l.apply(&mut t);
    }
    t.tid = tid.and_then(|t| i32::try_from(t).ok()).or(t.tid);
    prov.apply_percentiles(&mut t, res);
    let mut warnings = vec![format!(
        "read from a systress text file: L_min/L_max/L_avg in whole {} units",
        if res == 1000 {
            "µs".to_string()
        } else {
            format!("{res} ns")
        }
    )];
    let in_hist = t.hist_stats.as_ref().map(|h| h.samples);
    if let (Some(in_hist), Some(samples_h)) = (in_hist, samples_h.filter(|h| Some(*h) != in_hist)) {
        warnings.push(format!(
            "the histogram holds {in_hist} samples, its SUMMARY says Samples_H {samples_h} (lines left out?)"
        ));
    }
    let mut r = Imported {
        tool: prov.tool.clone().unwrap_or_else(|| "systress".into()),
        started_at: prov.started.clone(),
        duration_s: prov.duration_s,
        command: prov.command.clone(),
        res_ns: res,
        buckets: last_bucket.map(|b| b + 1),
        mode: prov.mode.clone(),
        sysinfo: prov.sysinfo.clone(),
        warnings,
        kind: "systress-txt",
    }
    .into_result(vec![t]);
    r.end_reason = prov.end_reason.clone();
    r.settings.memlock = prov.memlock;
    super::in_range(r, source)
}

/// `v` resolution units in ns. Each value is at most MAX_COUNT units of
/// at most a second: i128 holds the product, i64 the nanoseconds of any
/// real run; beyond that, an input error.
fn units_ns(v: u64, res: u64, what: &str, source: &str) -> Result<i64, InputError> {
    i64::try_from(i128::from(v) * i128::from(res)).map_err(|_| {
        InputError::new(format!(
            "{source}: SUMMARY: {what} {v} is out of range (docs/ranges.md)"
        ))
    })
}

/// The 11 values of the SUMMARY line (`rest`: after its `#`): numbers,
/// or `?` for a value rtshield's source did not record.
fn summary_values(
    line: &str,
    rest: &str,
    lno: usize,
    source: &str,
) -> Result<Vec<Option<u64>>, InputError> {
    let mut vals = Vec::new();
    for w in rest.split_whitespace().take(11) {
        if w == "?" {
            vals.push(None);
            continue;
        }
        let at = |m: String| InputError::at(source, lno, col_of(line, w), m);
        let v = w
            .parse::<u64>()
            .map_err(|_| at(format!("`{w}` is not a number in the SUMMARY line")))?;
        if v > crate::MAX_COUNT {
            return Err(at(format!(
                "`{w}` is out of range (at most {}, docs/ranges.md)",
                crate::MAX_COUNT
            )));
        }
        vals.push(Some(v));
    }
    if vals.len() < 11 {
        return Err(InputError::at(
            source,
            lno,
            line.len() + 1,
            format!("{} values in the SUMMARY line, 11 expected", vals.len()),
        ));
    }
    Ok(vals)
}

/// `BUCKET COUNT` (`t`: the trimmed line).
fn bucket_line(line: &str, t: &str, lno: usize, source: &str) -> Result<(u64, u64), InputError> {
    let mut words = t.split_whitespace();
    let (Some(b), Some(c), None) = (words.next(), words.next(), words.next()) else {
        return Err(InputError::at(
            source,
            lno,
            1,
            "expected `BUCKET COUNT` (two columns)",
        ));
    };
    let num = |w: &str, what: &str| {
        let at = |m: String| InputError::at(source, lno, col_of(line, w), m);
        let v = w
            .parse::<u64>()
            .map_err(|_| at(format!("`{w}` is not {what}")))?;
        if v > crate::MAX_COUNT {
            return Err(at(format!(
                "`{w}` is out of range (at most {}, docs/ranges.md)",
                crate::MAX_COUNT
            )));
        }
        Ok(v)
    };
    Ok((num(b, "a bucket number")?, num(c, "a sample count")?))
}
