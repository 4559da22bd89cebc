//! The summary table (the systress article's figure 11): one column per curve
//! (`run:cpuN`), statistics rows in µs, then the provenance rows that
//! differ between runs. Rendered as Markdown, CSV and HTML.

use crate::load::Run;
use crate::series::{fmt_us, fmt_us_frac, Series};
use rtshield_results::{Pct, RunResult, ThreadResult};
use rtshield_text::{markdown, markdown_cell, markup_text};

/// The summary table: one column per curve, one row per statistic, then
/// the provenance rows (kernel, isolation, load ...).
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// The column headers: the curves' labels (`run` or `run/thread`).
    pub columns: Vec<String>,
    /// (row name, one cell per column).
    pub rows: Vec<(String, Vec<String>)>,
    /// How many of `rows` are statistics (the rest is provenance).
    pub n_stats: usize,
    /// Each new maximum per curve.
    pub worst: Vec<(String, Vec<Worst>)>,
}

/// A new maximum: `us` at `at_s` seconds from the start; `before`: only
/// known to have happened by then (a log that starts after it).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Worst {
    /// When, in seconds from the start of the run.
    pub at_s: f64,
    /// The new maximum, µs.
    pub us: f64,
    /// Only known to have happened by `at_s` (a log that starts after it).
    pub before: bool,
    /// The run's resolution: latencies shown as in the summary table.
    pub res_ns: u64,
}

/// Under every summary table: what the row names mean.
pub(crate) const NOTE: &str = "p50 … p99.999999: over every sample (a percentile needs at least 1/(1 − q) samples: 10⁶ for p99.9999, else \"not enough samples\"); `≥N`: beyond the histogram, only known to be at least N. `_H` rows (the systress article's names): over the samples inside the histogram only, at bucket values; the mode lists every fullest bucket. `?`: not recorded by the source.";

/// Statistics rows, in order. Latencies in µs. `_H` rows (the systress
/// article's names) are over the samples inside the histogram only, at
/// bucket values; `p` rows are over every sample. Percentile rows no
/// column has enough samples for are left out.
pub(crate) const STAT_ROWS: &[&str] = &[
    "samples",
    "min (µs)",
    "avg (µs)",
    "max (µs)",
    "p50 (µs)",
    "p99 (µs)",
    "p99.9 (µs)",
    "p99.99 (µs)",
    "p99.999 (µs)",
    "p99.9999 (µs)",
    "p99.99999 (µs)",
    "p99.999999 (µs)",
    "Samples_H",
    "L_avg_H (µs)",
    "L_med_H (µs)",
    "L_std_H (µs)",
    "L_mode_H (µs)",
    "overflows",
    "overruns",
];

/// The percentile key of a row (`p99.9 (µs)` → `99.9`).
fn row_percentile(row: &str) -> Option<&str> {
    row.strip_prefix('p')?.strip_suffix(" (µs)")
}

/// What a table shows for a percentile the run has too few samples for.
pub(crate) const NOT_ENOUGH: &str = "not enough samples";

/// Every mode of a histogram (all the fullest buckets, in µs), at most
/// `limit` of them then `… (N modes)`; `?` without a histogram.
pub(crate) fn modes(t: &ThreadResult, limit: usize) -> String {
    let Some(h) = &t.histogram else {
        return "?".into();
    };
    let best = h.counts.iter().map(|c| c[1]).max().unwrap_or(0);
    if best == 0 {
        return "-".into();
    }
    let all: Vec<String> = h
        .counts
        .iter()
        .filter(|c| c[1] == best)
        .map(|c| fmt_us(c[0] as f64 * h.resolution_ns as f64, h.resolution_ns))
        .collect();
    if all.len() > limit {
        format!("{} … ({} modes)", all[..limit].join(", "), all.len())
    } else {
        all.join(", ")
    }
}

/// `v`, or `?` when unknown.
pub(crate) fn q<T: std::fmt::Display>(v: Option<T>) -> String {
    rtshield_results::or_unknown(v, "?")
}

/// Percentile `key` of `t` as a table cell (µs at resolution `res`): the
/// value, `≥N` when only a bound is known, [`NOT_ENOUGH`], or `?`.
pub(crate) fn pct_cell(t: &ThreadResult, key: &str, res: u64) -> String {
    pct_text(t, key, |v| fmt_us(v as f64, res))
}

/// Percentile `key` of `t` as a cell, its values written by `us`: the
/// value, `≥N` when only a bound is known, [`NOT_ENOUGH`], or `?`.
pub(crate) fn pct_text(t: &ThreadResult, key: &str, us: impl Fn(i64) -> String) -> String {
    match t.pct(key) {
        Pct::Exact(v) => us(v),
        Pct::AtLeast(v, _) => format!("≥{}", us(v)),
        Pct::NotEnoughSamples => NOT_ENOUGH.to_string(),
        Pct::Unknown => "?".to_string(),
    }
}

/// A provenance cell: (run, index of the thread in the run) → text.
type Cell = fn(&RunResult, usize) -> String;

pub(crate) fn build(runs: &[Run], series: &[Series]) -> Table {
    let mut rows: Vec<(String, Vec<String>)> = STAT_ROWS
        .iter()
        .map(|r| (r.to_string(), Vec::new()))
        .collect();
    for s in series {
        let t = s.thread;
        let res = t.resolution_ns(runs[s.run].result.settings.resolution_ns);
        let hs = t.hist_stats.as_ref();
        let cells: Vec<String> = STAT_ROWS
            .iter()
            .map(|row| match *row {
                "samples" => q(t.samples),
                // Unknown (a thread that measured nothing): `?`.
                "min (µs)" => q(t.min_ns.map(|v| fmt_us(v as f64, res))),
                "avg (µs)" => q(t.avg_ns.map(|v| fmt_us_frac(v, res))),
                "max (µs)" => q(t.max_ns.map(|v| fmt_us(v as f64, res))),
                "Samples_H" => q(hs.map(|h| h.samples)),
                "L_avg_H (µs)" => q(hs.map(|h| fmt_us_frac(h.avg_ns, res))),
                "L_med_H (µs)" => q(hs.map(|h| fmt_us(h.median_ns as f64, res))),
                "L_std_H (µs)" => q(hs.map(|h| fmt_us_frac(h.std_ns, res))),
                "L_mode_H (µs)" => modes(t, 8),
                "overflows" => q(t.histogram.as_ref().map(|h| h.overflow)),
                "overruns" => q(t.overruns),
                r => pct_cell(t, row_percentile(r).unwrap_or(r), res),
            })
            .collect();
        for (row, c) in rows.iter_mut().zip(cells) {
            row.1.push(c);
        }
    }
    // A percentile row no column can fill says nothing.
    rows.retain(|(name, cells)| {
        row_percentile(name).is_none() || cells.is_empty() || cells.iter().any(|c| c != NOT_ENOUGH)
    });
    let n_stats = rows.len();
    // Provenance: per column (the run of the curve), only rows that differ
    // between runs — with a single run, everything is shown.
    let prov: Vec<(&str, Cell)> = vec![
        ("host", |r, _| opt(&r.sysinfo.hostname)),
        ("kernel", |r, _| opt(&r.sysinfo.kernel_release)),
        ("preemption", |r, _| preemption(&r.sysinfo)),
        ("isolation", |r, _| isolation(r)),
        ("load", |r, _| load(r)),
        ("policy", |r, i| {
            let t = &r.threads[i];
            format!("{} {}", q(t.policy), q(t.priority))
        }),
        ("period (µs)", |r, i| {
            let t = &r.threads[i];
            let res = t.resolution_ns(r.settings.resolution_ns);
            q(t.period_ns.map(|p| fmt_us(p as f64, res)))
        }),
        ("tool", |r, _| r.tool.clone()),
    ];
    for (name, f) in prov {
        let cells: Vec<String> = series
            .iter()
            .map(|s| {
                let r = &runs[s.run].result;
                let i = r
                    .threads
                    .iter()
                    .position(|t| std::ptr::eq(t, s.thread))
                    .unwrap_or(0);
                f(r, i)
            })
            .collect();
        let differs = cells.iter().any(|c| *c != cells[0]);
        if runs.len() == 1 || differs {
            rows.push((name.to_string(), cells));
        }
    }
    Table {
        columns: series.iter().map(|s| s.label.clone()).collect(),
        rows,
        n_stats,
        worst: worst_cases(runs, series),
    }
}

/// The worst-cases table: each new maximum of a thread and when it
/// happened, from `worst_cases` in the result or, for older files and
/// imports, from the timeline's running maximum (time = end of the
/// interval that raised it).
pub(crate) fn worst_cases(runs: &[Run], series: &[Series]) -> Vec<(String, Vec<Worst>)> {
    let mut out = Vec::new();
    for s in series {
        let t = s.thread;
        let mut v: Vec<Worst> = t
            .worst_cases
            .iter()
            .map(|w| Worst {
                at_s: w.at_ns as f64 / 1e9,
                us: w.latency_ns as f64 / 1000.0,
                before: false,
                res_ns: t.resolution_ns(runs[s.run].result.settings.resolution_ns),
            })
            .collect();
        if v.is_empty() {
            if let Some(tl) = &runs[s.run].timeline {
                if let Some(line) = tl
                    .threads
                    .iter()
                    .find(|l| l.thread == t.index)
                    .or(tl.threads.first().filter(|_| tl.threads.len() == 1))
                {
                    let mut prev = f64::MIN;
                    for ((ts, mm), m) in line.t_s.iter().zip(&line.maxmax_us).zip(&line.max_us) {
                        if *mm > prev {
                            // Raised in this interval when its own maximum
                            // is the new one; else before the log began.
                            v.push(Worst {
                                at_s: *ts,
                                us: *mm,
                                before: m < mm,
                                res_ns: t.resolution_ns(runs[s.run].result.settings.resolution_ns),
                            });
                            prev = *mm;
                        }
                    }
                }
            }
        }
        if !v.is_empty() {
            out.push((s.label.clone(), v));
        }
    }
    out
}

impl Worst {
    /// `156 s (2 min 36 s)`, or `by 86566 s (…)` when only known to be
    /// before.
    pub fn when(&self) -> String {
        if self.before {
            format!("by {}", fmt_when(self.at_s))
        } else {
            fmt_when(self.at_s)
        }
    }
}

/// `156 s (2 min 36 s)`: seconds, and a human reading past a minute.
pub(crate) fn fmt_when(t: f64) -> String {
    let s = if t < 1e-3 {
        format!("{:.0} µs", t * 1e6)
    } else if t < 1.0 {
        format!("{:.1} ms", t * 1e3)
    } else if t < 10.0 {
        format!("{t:.3} s")
    } else {
        format!("{t:.0} s")
    };
    let whole = t.round() as u64;
    if whole < 60 {
        s
    } else if whole < 3600 {
        format!("{s} ({} min {} s)", whole / 60, whole % 60)
    } else {
        format!("{s} ({} h {} min)", whole / 3600, whole % 3600 / 60)
    }
}

/// The worst cases as Markdown, one section per curve.
pub(crate) fn worst_cases_markdown(w: &[(String, Vec<Worst>)]) -> String {
    let mut out = String::new();
    if w.is_empty() {
        return out;
    }
    out.push_str(
        "\n## Worst cases\n\nEach new maximum and when it happened (time since the start).\n",
    );
    for (label, v) in w {
        out.push_str(&format!(
            "\n| {} | latency (µs) |\n|---|---:|\n",
            markdown_cell(label)
        ));
        for x in v {
            out.push_str(&format!(
                "| {} | {} |\n",
                markdown_cell(&x.when()),
                fmt_us(x.us * 1000.0, x.res_ns)
            ));
        }
    }
    out
}

/// The worst cases as HTML tables.
pub(crate) fn worst_cases_html(w: &[(String, Vec<Worst>)]) -> String {
    let mut out = String::new();
    for (label, v) in w {
        out.push_str(&format!(
            "<table class=\"summary worst\">\n<thead><tr><th>{}: at</th><th>latency (µs)</th></tr></thead>\n<tbody>\n",
            markup_text(label)
        ));
        for x in v {
            out.push_str(&format!(
                "<tr><td>{}</td><td>{}</td></tr>\n",
                markup_text(&x.when()),
                fmt_us(x.us * 1000.0, x.res_ns)
            ));
        }
        out.push_str("</tbody>\n</table>\n");
    }
    out
}

fn opt(s: &Option<String>) -> String {
    s.clone().unwrap_or_else(|| "?".into())
}

/// The preemption model and the mode in force, as `report` and `runs
/// show` both print it: `PREEMPT_DYNAMIC (full)`, `PREEMPT_RT`; a kernel
/// that can switch models at boot whose mode the source did not record
/// (cyclictest's `uname -v` says `PREEMPT_DYNAMIC` only) is
/// `dynamic (mode ?)`, and `?` when nothing is known.
pub(crate) fn preemption(si: &rtshield_sys::SysInfo) -> String {
    let mode = match (&si.preempt_mode, si.preempt_dynamic) {
        (Some(d), _) => Some(d.as_str()),
        (None, true) => Some("dynamic, mode ?"),
        (None, false) => None,
    };
    match (&si.preempt_model, mode) {
        (Some(m), Some(d)) => format!("{m} ({d})"),
        (Some(m), None) => m.clone(),
        (None, Some(_)) if si.preempt_mode.is_none() => "dynamic (mode ?)".into(),
        (None, Some(d)) => d.to_string(),
        (None, None) => "?".into(),
    }
}

/// The `isolation` tag when the run has one (partition, campaign axis),
/// else what the kernel command line and sysfs say.
fn isolation(r: &RunResult) -> String {
    // What was detected at the start covers cpusets and other tools'
    // partitions, which the kernel command line does not show.
    if let Some(t) = r.tags.get("isolation").or(r.tags.get("isolation_detected")) {
        return t.clone();
    }
    // An import without the kernel command line cannot tell.
    if r.tags.contains_key("imported") && r.sysinfo.cmdline.is_none() {
        return "?".into();
    }
    let si = &r.sysinfo;
    let mut parts: Vec<String> = ["isolcpus", "nohz_full", "rcu_nocbs"]
        .iter()
        .filter_map(|k| si.isolation_params.get(*k).map(|v| format!("{k}={v}")))
        .collect();
    if let Some(p) = r.tags.get("partition") {
        parts.push(format!("partition {p}"));
    }
    if parts.is_empty() {
        "none".into()
    } else {
        parts.join(" ")
    }
}

fn load(r: &RunResult) -> String {
    if let Some(t) = r.tags.get("load") {
        return t.clone();
    }
    // Other tools do not record what ran beside them.
    if r.tags.contains_key("imported") {
        return "?".into();
    }
    if r.programs.is_empty() {
        return "none".into();
    }
    r.programs
        .iter()
        .map(|p| match &p.cpus {
            Some(c) => format!("{} @{c}", p.command),
            None => p.command.clone(),
        })
        .collect::<Vec<_>>()
        .join("; ")
}

impl Table {
    /// `summary.md`: the table under a `# title`, the note on percentiles and the worst cases.
    pub fn to_markdown(&self, title: &str) -> String {
        let esc = markdown::cell;
        let mut out = format!("# {}\n\n| |", esc(title));
        for c in &self.columns {
            out.push_str(&format!(" {} |", esc(c)));
        }
        out.push_str("\n|---|");
        out.push_str(&"---:|".repeat(self.columns.len()));
        out.push('\n');
        for (name, cells) in &self.rows {
            out.push_str(&format!("| {} |", esc(name)));
            for c in cells {
                out.push_str(&format!(" {} |", esc(c)));
            }
            out.push('\n');
        }
        out.push_str(&format!("\n{NOTE}\n"));
        out.push_str(&worst_cases_markdown(&self.worst));
        out
    }

    /// `summary.csv`: a `metric` column, then one column per curve.
    pub fn to_csv(&self) -> String {
        let header = std::iter::once("metric").chain(self.columns.iter().map(String::as_str));
        let rows = self.rows.iter().map(|(name, cells)| {
            std::iter::once(name.as_str()).chain(cells.iter().map(String::as_str))
        });
        rtshield_text::csv_table(
            std::iter::once(header.collect::<Vec<_>>()).chain(rows.map(Iterator::collect)),
        )
    }

    /// The table as the HTML page shows it (cells escaped, statistics and provenance separated).
    pub fn to_html(&self) -> String {
        let mut out = String::from("<table class=\"summary\">\n<thead><tr><th></th>");
        for c in &self.columns {
            out.push_str(&format!("<th>{}</th>", markup_text(c)));
        }
        out.push_str("</tr></thead>\n<tbody>\n");
        for (i, (name, cells)) in self.rows.iter().enumerate() {
            let class = if i >= self.n_stats {
                " class=\"prov\""
            } else {
                ""
            };
            out.push_str(&format!("<tr{class}><th>{}</th>", markup_text(name)));
            for c in cells {
                out.push_str(&format!("<td>{}</td>", markup_text(c)));
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</tbody>\n</table>\n");
        out.push_str(&format!("<p class=\"hint\">{}</p>\n", markup_text(NOTE)));
        out
    }
}
