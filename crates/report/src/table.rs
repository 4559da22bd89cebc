//! The summary table (the systress article's figure 11): one column per curve
//! (`run:cpuN`), statistics rows in µs, then the provenance rows that
//! differ between runs. Rendered as Markdown, CSV and HTML.

use crate::load::Run;
use crate::series::{fmt_us, fmt_us_frac, Series};
use rtshield_results::RunResult;

#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub columns: Vec<String>,
    /// (row name, one cell per column).
    pub rows: Vec<(String, Vec<String>)>,
    /// How many of `rows` are statistics (the rest is provenance).
    pub n_stats: usize,
}

/// Statistics rows, in order. Latencies in µs.
pub const STAT_ROWS: &[&str] = &[
    "samples",
    "min (µs)",
    "avg (µs)",
    "median (µs)",
    "stddev (µs)",
    "mode (µs)",
    "p99 (µs)",
    "p99.9 (µs)",
    "p99.99 (µs)",
    "p99.999 (µs)",
    "max (µs)",
    "overflows",
    "overruns",
];

/// A provenance cell: (run, index of the thread in the run) → text.
type Cell = fn(&RunResult, usize) -> String;

pub fn build(runs: &[Run], series: &[Series]) -> Table {
    let mut rows: Vec<(String, Vec<String>)> = STAT_ROWS
        .iter()
        .map(|r| (r.to_string(), Vec::new()))
        .collect();
    for s in series {
        let t = s.thread;
        let res = t.histogram.resolution_ns;
        let imported = runs[s.run].result.tags.contains_key("imported");
        let end_ns = (t.histogram.buckets * res) as i64;
        let pct = |k: &str| match t.percentiles.get(k) {
            None => "-".to_string(),
            // cyclictest keeps no samples beyond its histogram: the
            // percentile is only known to be at least the histogram end.
            Some(v) if imported && *v >= end_ns && t.histogram.overflow > 0 => {
                format!("≥{}", fmt_us(end_ns as f64, res))
            }
            Some(v) => fmt_us(*v as f64, res),
        };
        let cells = [
            t.samples.to_string(),
            fmt_us(t.min_ns as f64, res),
            fmt_us_frac(t.avg_ns, res),
            fmt_us(t.hist_stats.median_ns as f64, res),
            fmt_us_frac(t.hist_stats.std_ns, res),
            fmt_us(t.hist_stats.mode_ns as f64, res),
            pct("99"),
            pct("99.9"),
            pct("99.99"),
            pct("99.999"),
            fmt_us(t.max_ns as f64, res),
            t.histogram.overflow.to_string(),
            t.overruns.to_string(),
        ];
        for (row, c) in rows.iter_mut().zip(cells) {
            row.1.push(c);
        }
    }
    let n_stats = rows.len();
    // Provenance: per column (the run of the curve), only rows that differ
    // between runs — with a single run, everything is shown.
    let prov: Vec<(&str, Cell)> = vec![
        ("host", |r, _| opt(&r.sysinfo.hostname)),
        ("kernel", |r, _| opt(&r.sysinfo.kernel_release)),
        ("preemption", |r, _| preemption(r)),
        ("isolation", |r, _| isolation(r)),
        ("load", |r, _| load(r)),
        ("policy", |r, i| {
            let t = &r.threads[i];
            format!("{} {}", t.policy, t.priority)
        }),
        ("period (µs)", |r, i| match r.threads[i].period_ns {
            0 => "?".into(),
            p => fmt_us(p as f64, r.threads[i].histogram.resolution_ns),
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
    }
}

fn opt(s: &Option<String>) -> String {
    s.clone().unwrap_or_else(|| "?".into())
}

fn preemption(r: &RunResult) -> String {
    let si = &r.sysinfo;
    let mode = si
        .preempt_mode
        .clone()
        .or(si.preempt_dynamic.then(|| "dynamic".to_string()));
    match (&si.preempt_model, mode) {
        (Some(m), Some(d)) => format!("{m} ({d})"),
        (Some(m), None) => m.clone(),
        (None, Some(d)) => d,
        (None, None) => "?".into(),
    }
}

/// The `isolation` tag when the run has one (partition, campaign axis),
/// else what the kernel command line and sysfs say.
fn isolation(r: &RunResult) -> String {
    if let Some(t) = r.tags.get("isolation") {
        return t.clone();
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
    pub fn to_markdown(&self, title: &str) -> String {
        let esc = |s: &str| s.replace('|', "\\|");
        let mut out = format!("# {title}\n\n| |");
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
        out
    }

    /// RFC 4180: fields with `,` `"` or newlines are quoted.
    pub fn to_csv(&self) -> String {
        let q = |s: &str| {
            if s.contains([',', '"', '\n', '\r']) {
                format!("\"{}\"", s.replace('"', "\"\""))
            } else {
                s.to_string()
            }
        };
        let mut out = String::from("metric");
        for c in &self.columns {
            out.push(',');
            out.push_str(&q(c));
        }
        out.push('\n');
        for (name, cells) in &self.rows {
            out.push_str(&q(name));
            for c in cells {
                out.push(',');
                out.push_str(&q(c));
            }
            out.push('\n');
        }
        out
    }

    pub fn to_html(&self) -> String {
        let mut out = String::from("<table class=\"summary\">\n<thead><tr><th></th>");
        for c in &self.columns {
            out.push_str(&format!("<th>{}</th>", html_escape(c)));
        }
        out.push_str("</tr></thead>\n<tbody>\n");
        for (i, (name, cells)) in self.rows.iter().enumerate() {
            let class = if i >= self.n_stats {
                " class=\"prov\""
            } else {
                ""
            };
            out.push_str(&format!("<tr{class}><th>{}</th>", html_escape(name)));
            for c in cells {
                out.push_str(&format!("<td>{}</td>", html_escape(c)));
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</tbody>\n</table>\n");
        out
    }
}

pub fn html_escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}
