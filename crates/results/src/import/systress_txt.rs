//! The systress article's `timer_threadNN.txt`.

use super::provenance::Provenance;
use super::{col_of, imported, is_summary_header};
use crate::histogram::thread_from_histogram;
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
    let mut summary: Option<Vec<u64>> = None;
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
    let tl = prov.threads.first();
    let overflow = samples.saturating_sub(samples_h);
    let underflow = tl.and_then(|t| t.underflow).unwrap_or(0);
    let h = Histogram {
        resolution_ns: res,
        buckets: last_bucket.map_or(0, |b| b + 1),
        counts,
        overflow: overflow.saturating_sub(underflow),
        underflow,
    };
    let mut t = thread_from_histogram(
        index as u32,
        None,
        0,
        samples,
        (l_min * res) as i64,
        (l_max * res) as i64,
        (l_avg * res) as f64,
        h,
    );
    match tl {
        Some(l) => l.apply(&mut t),
        None => t.unknown.extend(
            ["policy", "priority", "overruns", "missed_periods", "lost"]
                .iter()
                .map(|s| s.to_string()),
        ),
    }
    t.tid = tid as i32;
    for (k, v) in &prov.percentiles {
        t.percentiles.insert(k.clone(), (*v * res) as i64);
    }
    let mut warnings = vec![format!(
        "read from a systress text file: L_min/L_max/L_avg in whole {} units",
        if res == 1000 {
            "µs".to_string()
        } else {
            format!("{res} ns")
        }
    )];
    if t.hist_stats.samples != samples_h {
        warnings.push(format!(
            "the histogram holds {} samples, its SUMMARY says Samples_H {samples_h} (lines left out?)",
            t.hist_stats.samples
        ));
    }
    let mut r = imported(
        prov.tool.clone().unwrap_or_else(|| "systress".into()),
        prov.started.clone().unwrap_or_default(),
        prov.command.clone(),
        res,
        last_bucket.map(|b| b + 1),
        0,
        prov.sysinfo.clone(),
        warnings,
        vec![t],
    );
    r.tags.insert("imported".into(), "systress-txt".into());
    if let Some(m) = &prov.mode {
        r.settings.mode = m.clone();
    }
    Ok(r)
}

/// The 11 numbers of the SUMMARY line (`rest`: after its `#`).
fn summary_values(
    line: &str,
    rest: &str,
    lno: usize,
    source: &str,
) -> Result<Vec<u64>, InputError> {
    let mut vals = Vec::new();
    for w in rest.split_whitespace().take(11) {
        vals.push(w.parse::<u64>().map_err(|_| {
            InputError::at(
                source,
                lno,
                col_of(line, w),
                format!("`{w}` is not a number in the SUMMARY line"),
            )
        })?);
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
        w.parse::<u64>().map_err(|_| {
            InputError::at(source, lno, col_of(line, w), format!("`{w}` is not {what}"))
        })
    };
    Ok((num(b, "a bucket number")?, num(c, "a sample count")?))
}
