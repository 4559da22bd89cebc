//! The text `rtshield runs` prints: the run list, one run, a comparison,
//! groups, and the CSV export. The store answers; this module only
//! renders what it answered.

use crate::table::q;
use rtshield_results::RunResult;
use rtshield_store::{Comparison, Group, Method, Put, Row, RunSummary, ThreadSummary};
use rtshield_text::terminal::value as v;
use std::fmt::Write as _;

/// ns as µs with one decimal, `?` when unknown.
pub(crate) fn us(ns: Option<i64>) -> String {
    ns.map_or_else(|| "?".into(), |v| format!("{:.1}", v as f64 / 1000.0))
}

/// A tag, or the field it falls back to (`isolation`: what was detected).
/// The text of a stored run came from files or other hosts: everything
/// this module prints for the terminal goes through
/// [`rtshield_text::terminal::value`] (`v`).
fn tag(r: &RunSummary, k: &str) -> String {
    r.field(k).unwrap_or_else(|| "?".into())
}

/// `runs` / `run` after a count.
fn plural(n: usize, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}

/// `runs list`: one line per run, then the count and where they are.
pub fn list_table(runs: &[RunSummary], location: &str) -> String {
    let mut s = format!(
        "{:>5}  {:<8}  {:<20}  {:<12}  {:<16}  {:<10}  {:<8}  {:>10}  {:>8}  {:>8}  label\n",
        "ID",
        "UUID",
        "started",
        "host",
        "kernel",
        "isolation",
        "load",
        "samples",
        "p99.9us",
        "max_us"
    );
    for r in runs {
        let _ = writeln!(
            s,
            "{:>5}  {:<8}  {:<20}  {:<12}  {:<16}  {:<10}  {:<8}  {:>10}  {:>8}  {:>8}  {}",
            r.id,
            v(r.uuid.get(..8).unwrap_or(&r.uuid)),
            v(&q(r.started.as_ref())),
            v(&r.host),
            v(&r.kernel),
            v(&tag(r, "isolation")),
            v(&tag(r, "load")),
            q(r.samples()),
            us(r.worst_percentile("99.9")),
            us(r.worst_max()),
            v(&r.label)
        );
    }
    let _ = writeln!(s, "{} in {location}", plural(runs.len(), "run"));
    s
}

/// Percentile `k` of a stored thread in µs: the value, `≥N` for a
/// bound, `-` when its sample count is too small, `?` when unknown.
fn summary_pct(t: &ThreadSummary, k: &str) -> String {
    if let Some(v) = t.percentiles.get(k) {
        return us(Some(*v));
    }
    if let Some(b) = t.percentile_bounds.get(k) {
        return format!("≥{}", us(Some(*b)));
    }
    match t.samples {
        Some(n) if !rtshield_results::percentile_supported(k, n) => "-".into(),
        _ => "?".into(),
    }
}

/// `runs show`: everything stored about one run; `full` is its stored
/// result (command line, preemption as `report` prints it).
pub fn show_text(r: &RunSummary, full: &RunResult) -> String {
    let mut s = format!("run {}  uuid {}\n", r.id, v(&r.uuid));
    let _ = writeln!(
        s,
        "host {}  kernel {} ({})  preempt {}  arch {}",
        v(&r.host),
        v(&r.kernel),
        v(&r.kernel_version),
        v(&crate::table::preemption(&full.sysinfo)),
        v(&r.arch)
    );
    let machine = if r.machine_id.is_empty() {
        "?"
    } else {
        &r.machine_id
    };
    let _ = writeln!(s, "machine id {}", v(machine));
    let _ = writeln!(s, "cpu {}", v(&r.cpu_model));
    let _ = writeln!(
        s,
        "started {}  duration {}  end {}  mode {}  tool {}",
        v(&q(r.started.as_ref())),
        q(r.duration_s.map(|d| format!("{d:.1} s"))),
        v(&q(r.end.as_ref())),
        v(&q(r.mode.as_ref())),
        v(&r.tool)
    );
    // A run stored by an older rtshield may hold a password.
    let command = rtshield_text::secret::redact_args(&full.command);
    let command: Vec<_> = command.iter().map(|a| v(a)).collect();
    let _ = writeln!(s, "command {}", command.join(" "));
    for (k, val) in &r.tags {
        let _ = writeln!(s, "tag {}={}", v(k), v(val));
    }
    let _ = writeln!(
        s,
        "\n{:>6} {:>4} {:>12} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>7}",
        "thread",
        "cpu",
        "samples",
        "min_us",
        "avg_us",
        "p50",
        "p99",
        "p99.9",
        "p99.99",
        "max_us",
        "overrun"
    );
    for (i, t) in r.threads.iter().enumerate() {
        let p = |k: &str| summary_pct(t, k);
        let _ = writeln!(
            s,
            "{:>6} {:>4} {:>12} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>7}",
            i,
            t.cpu.map_or("-".into(), |c| c.to_string()),
            q(t.samples),
            us(t.min_ns),
            t.avg_ns
                .map_or("?".into(), |a| format!("{:.1}", a / 1000.0)),
            p("50"),
            p("99"),
            p("99.9"),
            p("99.99"),
            us(t.max_ns),
            q(t.overruns)
        );
    }
    s
}

/// The figures of one comparison row: statistic, A and B (µs), B/A, the
/// confidence interval's bounds, verdict.
pub(crate) fn row_cells(row: &Row) -> [String; 7] {
    [
        row.stat.clone(),
        us(Some(row.a_ns)),
        us(Some(row.b_ns)),
        format!("{:.2}", row.ratio),
        format!("{:.2}", row.ci_low),
        format!("{:.2}", row.ci_high),
        row.verdict.as_str().to_string(),
    ]
}

/// `runs compare`: the two sides (`a`, `b`: their selectors), the method,
/// and one line per statistic.
pub fn compare_table(c: &Comparison, a: &str, b: &str, seed: u64) -> String {
    let mut s = format!("A: {a}  ({} runs, {} samples)\n", c.runs_a, c.samples_a);
    let _ = writeln!(s, "B: {b}  ({} runs, {} samples)", c.runs_b, c.samples_b);
    let _ = writeln!(
        s,
        "95 % confidence interval of B/A: bootstrap over {} ({} resamples, seed {seed})\n",
        match c.method {
            Method::Runs => "runs",
            Method::Samples => "samples within the histograms (fewer than 3 runs a side)",
        },
        c.iterations
    );
    let _ = writeln!(
        s,
        "{:<8} {:>10} {:>10} {:>7}  {:<17} verdict",
        "stat", "A (us)", "B (us)", "B/A", "95% CI"
    );
    for row in &c.rows {
        let [stat, a, b, ratio, lo, hi, verdict] = row_cells(row);
        let _ = writeln!(
            s,
            "{stat:<8} {a:>10} {b:>10} {ratio:>7}  [{lo:>5}, {hi:>5}]    {verdict}"
        );
    }
    if let Some(av) = &c.available {
        let pct = |v: Option<f64>| v.map_or("?".to_string(), |p| format!("{p:.4}"));
        let ci = match (av.diff_low, av.diff_high) {
            (Some(l), Some(h)) => format!("B-A in [{l:+.4}, {h:+.4}] points"),
            _ => "no interval".to_string(),
        };
        let _ = writeln!(
            s,
            "\nnoise: % available  A {}  B {}  {ci}    {}",
            pct(av.a_pct),
            pct(av.b_pct),
            av.verdict.as_str()
        );
        let _ = writeln!(
            s,
            "(the rows above are the noise lengths: max is the longest single noise)"
        );
    }
    s
}

/// `runs list --group-by`: one row per group, columns as wide as their
/// widest key.
pub fn groups_table(by: &[String], groups: &[Group], location: &str) -> String {
    let widths: Vec<usize> = (0..by.len())
        .map(|i| {
            groups
                .iter()
                .map(|g| g.keys[i].chars().count())
                .chain([by[i].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let keys = |ks: &[String]| -> String {
        ks.iter()
            .zip(&widths)
            .map(|(k, w)| format!("{:<w$}  ", v(k)))
            .collect()
    };
    let mut s = format!(
        "{}{:>6}  {:>8}  {:>8}\n",
        keys(by),
        "runs",
        "p99.9us",
        "max_us"
    );
    for g in groups {
        let _ = writeln!(
            s,
            "{}{:>6}  {:>8}  {:>8}",
            keys(&g.keys),
            g.runs,
            us(g.worst_p999_ns),
            us(g.worst_max_ns)
        );
    }
    let total: u64 = groups.iter().map(|g| g.runs).sum();
    let _ = writeln!(
        s,
        "{}, {} in {location}",
        plural(groups.len(), "group"),
        plural(total as usize, "run")
    );
    s
}

/// `runs import`: one line per file (`puts[i]` came from `sources[i]`),
/// then the counts.
pub fn import_text(puts: &[Put], sources: &[&str], location: &str) -> String {
    let stored = |p: &Put| matches!(p, Put::Stored { .. });
    let conflict = |p: &Put| matches!(p, Put::Conflict { .. });
    let mut s = String::new();
    for (p, src) in puts.iter().zip(sources) {
        let what = match p {
            Put::Stored { .. } => "stored",
            Put::AlreadyStored { .. } => "already stored",
            // Another run under that UUID (another content): nothing
            // stored, never "already stored" (F03).
            Put::Conflict { .. } => "CONFLICT: another run has this UUID, not stored",
        };
        let _ = writeln!(s, "{:>5}  {}  {what}  {}", p.id(), v(p.uuid()), v(src));
    }
    let new = puts.iter().filter(|p| stored(p)).count();
    let bad = puts.iter().filter(|p| conflict(p)).count();
    let _ = writeln!(
        s,
        "{new} stored, {} already there, {bad} in conflict, in {location}",
        puts.len() - new - bad
    );
    s
}

/// `runs export --format csv`: one row per thread of each run (RFC 4180
/// through the one CSV writer). An unknown value is an empty cell; a
/// percentile only bounded is `>=N`.
pub fn runs_csv(runs: &[RunSummary]) -> String {
    const HEADER: &str = "id,uuid,host,kernel,preempt,started,label,isolation,load,thread,cpu,samples,min_ns,avg_ns,p50_ns,p99_ns,p99.9_ns,p99.99_ns,max_ns,overruns,missed_periods,lost";
    let mut rows: Vec<Vec<String>> = vec![HEADER.split(',').map(str::to_string).collect()];
    for r in runs {
        for (i, t) in r.threads.iter().enumerate() {
            let p = |k: &str| match (t.percentiles.get(k), t.percentile_bounds.get(k)) {
                (Some(v), _) => v.to_string(),
                (None, Some(b)) => format!(">={b}"),
                (None, None) => String::new(),
            };
            let e = |v: Option<u64>| rtshield_results::or_unknown(v, "");
            rows.push(vec![
                r.id.to_string(),
                r.uuid.clone(),
                r.host.clone(),
                r.kernel.clone(),
                r.preempt.clone(),
                r.started.clone().unwrap_or_default(),
                r.label.clone(),
                tag(r, "isolation"),
                tag(r, "load"),
                i.to_string(),
                t.cpu.map_or(String::new(), |c| c.to_string()),
                e(t.samples),
                rtshield_results::or_unknown(t.min_ns, ""),
                rtshield_results::or_unknown(t.avg_ns.map(|a| format!("{a:.1}")), ""),
                p("50"),
                p("99"),
                p("99.9"),
                p("99.99"),
                rtshield_results::or_unknown(t.max_ns, ""),
                e(t.overruns),
                e(t.missed_periods),
                e(t.lost),
            ]);
        }
    }
    rtshield_text::csv_table(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_started_value_with_commas_stays_in_its_column() {
        // cyclictest's start_time reads "Sun, 22 Nov 2026 05:49:01 +0000".
        let mut r = crate::synth::synth_run_result("a,b", 1, &[1], 1_000, 50.0, 0.5, 200);
        r.started_at = Some("Sun, 22 Nov 2026 05:49:01 +0000".into());
        let csv = runs_csv(&[RunSummary::of(&r)]);
        let mut rd = ::csv::ReaderBuilder::new().from_reader(csv.as_bytes());
        let head: Vec<String> = rd.headers().unwrap().iter().map(str::to_string).collect();
        let row = rd.records().next().unwrap().unwrap();
        assert_eq!(row.len(), head.len(), "{csv}");
        let at = |k: &str| &row[head.iter().position(|h| h == k).unwrap()];
        assert_eq!(at("started"), "Sun, 22 Nov 2026 05:49:01 +0000");
        assert_eq!(at("label"), "a,b");
    }
}
