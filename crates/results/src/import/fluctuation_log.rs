//! The torture article's fluctuation log.

use super::Imported;
use crate::histogram::thread_without_histogram;
use crate::RunResult;
use rtshield_vocab::InputError;

/// One line of the torture article's fluctuation log.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FluctRow {
    /// `[t]`: `time(NULL)` when the line was printed.
    pub t: i64,
    /// `Min.=`: the interval's smallest gap between timer signals, µs.
    pub min_us: f64,
    /// `Moy.=`: the interval's mean gap, µs.
    pub avg_us: f64,
    /// `Max.=`: the interval's largest gap, µs.
    pub max_us: f64,
    /// `Max.Max.=`: the largest gap since the start, µs.
    pub maxmax_us: f64,
}

/// `[86566] Min.= 0, Moy.= 99.7, Max.= 213,  Max.Max.= 3173`.
pub(crate) fn parse_fluct_line(l: &str) -> Option<FluctRow> {
    let rest = l.trim().strip_prefix('[')?;
    let (t, rest) = rest.split_once(']')?;
    let t: i64 = t.trim().parse().ok()?;
    let field = |name: &str| -> Option<f64> {
        let i = rest.find(name)? + name.len();
        let v = rest[i..].trim_start();
        let end = v.find([',', ' ']).unwrap_or(v.len());
        v[..end].parse().ok().filter(|x: &f64| x.is_finite())
    };
    // "Max.Max.=" contains "Max.=" only as its tail: find " Max.=" first.
    Some(FluctRow {
        t,
        min_us: field("Min.=")?,
        avg_us: field("Moy.=")?,
        max_us: field(", Max.=")?,
        maxmax_us: field("Max.Max.=")?,
    })
}

/// A fluctuation log read: the run it summarises (one thread, min/avg/max
/// only) and its rows as a timeline.
#[derive(Debug, Clone)]
pub struct FluctLog {
    /// The run the log summarises: one thread, min/avg/max only (no histogram).
    pub result: RunResult,
    /// (seconds since the start, row).
    pub rows: Vec<(f64, FluctRow)>,
    /// `##[t] text` marks: (seconds, text), e.g. `Periode de charge`.
    pub marks: Vec<(f64, String)>,
}

/// Read the torture article's fluctuation log: `[t] Min.= …, Moy.= …,
/// Max.= …,  Max.Max.= …` lines (one per 5 s), `##[t] text` marks, other
/// lines ignored (the shell prompt, `(Contrôle-C)`). Values are intervals
/// between timer signals in µs (its method: `--mode interval`). `t` is
/// read as seconds since the start when it is small (the article's board
/// had no clock: `[16718]` is 16718 s into the run), and made relative to
/// the first line (minus one interval) when it is an epoch time.
pub fn read_fluctuation_log(text: &str, source: &str) -> Result<FluctLog, InputError> {
    let mut rows: Vec<FluctRow> = Vec::new();
    let mut marks: Vec<(i64, String)> = Vec::new();
    for (ln, line) in text.lines().enumerate() {
        let t = line.trim();
        if let Some(m) = t.strip_prefix("##[") {
            if let Some((ts, txt)) = m.split_once(']') {
                if let Ok(ts) = ts.trim().parse() {
                    marks.push((ts, txt.trim().to_string()));
                }
            }
            continue;
        }
        if t.starts_with('[') && t.contains("Min.=") {
            let r = parse_fluct_line(t).ok_or_else(|| {
                InputError::at(
                    source,
                    ln + 1,
                    1,
                    "expected `[t] Min.= N, Moy.= N, Max.= N,  Max.Max.= N`",
                )
            })?;
            rows.push(r);
        }
    }
    let first = rows.first().ok_or_else(|| {
        InputError::new(format!(
            "{source}: no `[t] Min.= …, Moy.= …, Max.= …,  Max.Max.= …` line"
        ))
    })?;
    // In 128 bits: `[t]` is the file's number, any i64 (F15: [i64::MAX]
    // then [i64::MIN] panicked); a duration out of range is refused by
    // the range check.
    let step = rows
        .get(1)
        .map_or(5, |r| (i128::from(r.t) - i128::from(first.t)).max(1));
    let base = if first.t > 1_000_000_000 {
        i128::from(first.t) - step
    } else {
        0
    };
    let rel = |t: i64| (i128::from(t) - base) as f64;
    let min = rows.iter().map(|r| r.min_us).fold(f64::MAX, f64::min);
    let max = rows
        .iter()
        .map(|r| r.max_us.max(r.maxmax_us))
        .fold(0.0, f64::max);
    let avg = rows.iter().map(|r| r.avg_us).sum::<f64>() / rows.len() as f64;
    // Minima, means and maxima only: no sample count, no histogram.
    let t = thread_without_histogram(
        0,
        None,
        None,
        Some((min * 1000.0) as i64),
        Some((max * 1000.0) as i64),
        Some(avg * 1000.0),
    );
    let end = rel(rows.last().map_or(first.t, |r| r.t));
    let result = Imported {
        tool: "fluctuations-timer".into(),
        duration_s: Some(end),
        res_ns: 1000,
        mode: Some("interval".into()),
        warnings: vec![
            "read from a fluctuation log: intervals between timer signals (µs), 5 s minima, means and maxima only; avg is the mean of the 5 s means".into(),
        ],
        kind: "fluctuation-log",
        ..Imported::default()
    }
    .into_result(vec![t]);
    let result = super::in_range(result, source)?;
    Ok(FluctLog {
        rows: rows.iter().map(|r| (rel(r.t), *r)).collect(),
        marks: marks.into_iter().map(|(t, m)| (rel(t), m)).collect(),
        result,
    })
}
