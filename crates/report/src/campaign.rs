//! A campaign's report in the systress article's shape: `summary.md` and
//! one `report.html` with the figure-11 tables (the SUMMARY statistics,
//! one block per isolation method, rows per load, one table — a column
//! set — per value of every other declared axis and per kernel), the
//! percentiles, the isolation methods compared with bootstrap confidence
//! intervals, Table 1.1 of the ARTiS thesis when runs were split, and (in
//! HTML) the overlaid histograms per load (figure 12).
//!
//! Figure 11 is an image in the article; its text fixes the matrix
//! (isolation × load × preemption model) but not the arrangement: this
//! layout is our reading of it (docs/manual/campaign.md says so).
//!
//! No axis is ever pooled unless the campaign names it in `pool`: runs of
//! another period, priority … or kernel stay in their own column set.

use crate::runs::{row_cells, us};
use crate::series::{fmt_us, fmt_us_frac};
use crate::table::{modes, q};
use rtshield_results::{kernel_id, pool_threads, RunResult, ThreadResult};
use rtshield_store::{compare, default_stats};
use rtshield_text::{markdown_cell as cell, markup_attribute as attr, markup_text as esc};
use std::fmt::Write as _;

/// The tag a campaign writes with each run's [`kernel_id`].
pub const KERNEL_TAG: &str = "kernel_id";

/// The implicit axis name of the kernel (in `pool`, headings).
const KERNEL: &str = "kernel";

/// What a campaign report is made of.
pub struct CampaignView<'a> {
    /// The campaign's name.
    pub name: &'a str,
    /// The declared axes and their values, in the file's order.
    pub axes: &'a [(String, Vec<String>)],
    /// The axes the campaign asked to pool (`pool = [...]`, may hold `kernel`).
    pub pool: &'a [String],
    /// Every stored run of the campaign (tagged with each axis value).
    pub runs: &'a [RunResult],
}

/// The figure-11 columns after `load`: the systress article's SUMMARY
/// statistics (µs), plus how many runs and how many samples fell above
/// the histogram (what makes `Samples_H` < `Samples`).
pub(crate) const FIG11_HEAD: [&str; 12] = [
    "load",
    "runs",
    "Samples",
    "L_min",
    "L_max",
    "L_avg",
    "Samples_H",
    "L_avg_H",
    "L_med_H",
    "L_std_H",
    "L_mode_H",
    "overflows",
];

/// One column set: a value of every kept axis other than isolation and
/// load, and the kernel (None when pooled). Its label names the kernel
/// when the runs were measured on more than one.
#[derive(Debug, Clone)]
pub struct ColumnSet {
    /// (axis, value) of each kept axis.
    pub keys: Vec<(String, String)>,
    /// The kernel, unless `pool` names it.
    pub kernel: Option<String>,
    /// `period = 300us · kernel 6.18 NONE` (`period = 300us` on one kernel).
    pub label: String,
}

/// The kernel a run was measured on: its recorded tag, else (a run
/// stored before the tag existed) from its system description.
pub(crate) fn run_kernel(r: &RunResult) -> String {
    r.tags
        .get(KERNEL_TAG)
        .cloned()
        .unwrap_or_else(|| kernel_id(&r.sysinfo))
}

impl CampaignView<'_> {
    /// The values of `axis` (declared order), or `default` without it.
    fn values(&self, axis: &str, default: &str) -> Vec<String> {
        self.axes
            .iter()
            .find(|(a, _)| a == axis)
            .map_or_else(|| vec![default.to_string()], |(_, v)| v.clone())
    }

    /// Isolation methods (the blocks).
    pub fn isolations(&self) -> Vec<String> {
        self.values("isolation", "none")
    }

    /// Loads (the rows).
    pub fn loads(&self) -> Vec<String> {
        self.values("load", "idle")
    }

    /// The kernels of the stored runs, in order of first appearance.
    pub fn kernels(&self) -> Vec<String> {
        let mut k: Vec<String> = Vec::new();
        for r in self.runs {
            let id = run_kernel(r);
            if !k.contains(&id) {
                k.push(id);
            }
        }
        k
    }

    /// Every column set: the cross product of the kept axes' values and
    /// the kernels (pooled axes left out).
    pub fn column_sets(&self) -> Vec<ColumnSet> {
        let kept: Vec<&(String, Vec<String>)> = self
            .axes
            .iter()
            .filter(|(a, _)| a != "isolation" && a != "load" && !self.pool.contains(a))
            .collect();
        let mut sets: Vec<Vec<(String, String)>> = vec![Vec::new()];
        for (a, vals) in kept {
            sets = sets
                .into_iter()
                .flat_map(|s| {
                    vals.iter().map(move |v| {
                        let mut s = s.clone();
                        s.push((a.clone(), v.clone()));
                        s
                    })
                })
                .collect();
        }
        let kernels: Vec<Option<String>> = if self.pool.iter().any(|p| p == KERNEL) {
            vec![None]
        } else {
            self.kernels().into_iter().map(Some).collect()
        };
        // One kernel: the header names it; labels name it only when it is
        // all that tells the column set.
        let name_kernel = kernels.len() > 1 || (sets.len() == 1 && self.pool.is_empty());
        let mut out = Vec::new();
        for s in &sets {
            for k in &kernels {
                let mut parts: Vec<String> = s.iter().map(|(a, v)| format!("{a} = {v}")).collect();
                for p in self.pool {
                    parts.push(format!("{p}: pooled"));
                }
                if let Some(k) = k.as_ref().filter(|_| name_kernel) {
                    parts.push(format!("kernel {k}"));
                }
                out.push(ColumnSet {
                    keys: s.clone(),
                    kernel: k.clone(),
                    label: parts.join(" · "),
                });
            }
        }
        out
    }

    /// The runs of one (isolation, load, column set).
    pub fn group(&self, iso: &str, load: &str, set: &ColumnSet) -> Vec<&RunResult> {
        self.runs
            .iter()
            .filter(|r| {
                let tag = |k: &str| r.tags.get(k).map(String::as_str);
                tag("isolation") == Some(iso)
                    && tag("load") == Some(load)
                    && set.keys.iter().all(|(a, v)| tag(a) == Some(v.as_str()))
                    && set.kernel.as_ref().is_none_or(|k| *k == run_kernel(r))
            })
            .collect()
    }

    /// The header lines: axes, kernels, what is pooled, how many runs.
    /// `enc` encodes each value from the campaign file or the runs for
    /// the output language (the fixed words around them need none).
    fn header(&self, enc: &dyn Fn(&str) -> String) -> String {
        let axes: Vec<String> = self
            .axes
            .iter()
            .map(|(a, v)| format!("{} ({})", enc(a), enc(&v.join(", "))))
            .collect();
        let pooled = if self.pool.is_empty() {
            "nothing pooled: every declared axis and the kernel are kept apart".to_string()
        } else {
            format!("pooled as asked (`pool`): {}", enc(&self.pool.join(", ")))
        };
        format!(
            "Axes: {}; kernels: {}. {} runs stored; {pooled}.",
            if axes.is_empty() {
                "none".into()
            } else {
                axes.join(" × ")
            },
            enc(&self.kernels().join("; ")),
            self.runs.len()
        )
    }
}

/// A figure-11 row: the SUMMARY statistics over every run of a group.
/// `Samples`, `L_min`, `L_max`, `L_avg` are exact over every sample; the
/// `_H` statistics come from the group's summed histogram (threads with
/// another histogram shape are left out: `†`). Unknown values are `?`:
/// a sample count any thread did not record, and every `_H` statistic
/// when any thread has no histogram (cyclictest without `-h`).
pub(crate) fn fig11_row(load: &str, group: &[&RunResult]) -> [String; 12] {
    let ts: Vec<&ThreadResult> = group.iter().flat_map(|r| &r.threads).collect();
    let res = group
        .iter()
        .find_map(|r| {
            let t = r.threads.first()?;
            Some(t.resolution_ns(r.settings.resolution_ns))
        })
        .unwrap_or(1000);
    // Unknown as soon as one thread did not record its count.
    let n: Option<u64> = ts.iter().map(|t| t.samples).sum();
    // A thread that measured nothing adds no minimum or maximum; none
    // measured anything: unknown (never 0).
    let min = ts.iter().filter_map(|t| t.min_ns).min();
    let max = ts.iter().filter_map(|t| t.max_ns).max();
    // The mean over every sample weighs each thread by its count: without
    // every count (or without a sample) no mean is known (never 0).
    let avg = match (n, ts.as_slice()) {
        (Some(0), _) => None,
        (Some(n), _) => {
            let sum: f64 = ts
                .iter()
                .map(|t| t.avg_ns.unwrap_or(0.0) * t.samples.unwrap_or(0) as f64)
                .sum();
            Some(sum / n as f64)
        }
        (None, [t]) => t.avg_ns,
        (None, _) => None,
    };
    let pooled = pool_threads(ts.iter().copied());
    let shape = |t: &ThreadResult| t.histogram.as_ref().map(|h| (h.resolution_ns, h.buckets));
    let left_out = ts.iter().filter(|t| shape(t) != shape(ts[0])).count();
    let mark = if left_out > 0 { " †" } else { "" };
    // The summed histogram stands for the group only when every thread
    // has one and its count: else each `_H` statistic is unknown.
    let whole = ts
        .iter()
        .all(|t| t.histogram.is_some() && t.samples.is_some());
    let p = pooled.as_ref().filter(|_| whole);
    let hs = p.and_then(|p| p.hist_stats.as_ref());
    [
        load.to_string(),
        group.len().to_string(),
        q(n),
        q(min.map(|v| fmt_us(v as f64, res))),
        q(max.map(|v| fmt_us(v as f64, res))),
        q(avg.map(|a| fmt_us_frac(a, res))),
        q(hs.map(|h| format!("{}{mark}", h.samples))),
        q(hs.map(|h| fmt_us_frac(h.avg_ns, res))),
        q(hs.map(|h| fmt_us(h.median_ns as f64, res))),
        q(hs.map(|h| fmt_us_frac(h.std_ns, res))),
        p.map_or_else(|| "?".to_string(), |p| modes(p, 8)),
        q(p.and_then(|p| p.histogram.as_ref()).map(|h| h.overflow)),
    ]
}

/// The figure-11 tables: per isolation method, one table per column set
/// holding any run: (isolation, column set label, rows).
#[allow(clippy::type_complexity)]
pub(crate) fn figure11(v: &CampaignView) -> Vec<(String, String, Vec<[String; 12]>)> {
    let mut out = Vec::new();
    for iso in v.isolations() {
        for set in v.column_sets() {
            let rows: Vec<[String; 12]> = v
                .loads()
                .iter()
                .filter_map(|l| {
                    let g = v.group(&iso, l, &set);
                    (!g.is_empty()).then(|| fig11_row(l, &g))
                })
                .collect();
            if !rows.is_empty() {
                out.push((iso.clone(), set.label.clone(), rows));
            }
        }
    }
    out
}

/// The percentiles of the matrix, in its column order.
const STAT_KEYS: [&str; 4] = ["50", "99", "99.9", "99.99"];

/// The percentile row of one group (worst over its runs and threads: the
/// figure a user must plan for). `set`: the column set's label, when the
/// campaign has more than one.
fn matrix_row(load: &str, iso: &str, set: Option<&str>, group: &[&RunResult]) -> String {
    let threads = || group.iter().flat_map(|r| &r.threads);
    let samples =
        rtshield_results::or_unknown(threads().map(|t| t.samples).sum::<Option<u64>>(), "?");
    // A percentile one thread does not know (too few samples) makes the
    // group's worst unknown: the worst of the others alone could be lower
    // than the true one (a p99.9 shown under the row's p99).
    let worst = |k: &str| {
        threads()
            .map(|t| t.percentiles.get(k).copied())
            .collect::<Option<Vec<_>>>()?
            .into_iter()
            .max()
    };
    let max = threads().filter_map(|t| t.max_ns).max();
    let set = set.map_or(String::new(), |s| format!(" {} |", cell(s)));
    format!(
        "| {} | {} |{set} {} | {samples} | {} | {} | {} | {} | {} |\n",
        cell(load),
        cell(iso),
        group.len(),
        us(worst(STAT_KEYS[0])),
        us(worst(STAT_KEYS[1])),
        us(worst(STAT_KEYS[2])),
        us(worst(STAT_KEYS[3])),
        us(max)
    )
}

/// The verdicts: every pair of isolation methods compared within each
/// (column set, load), never across them. Rows of cells: column set,
/// load, A, B, statistic, A, B, B/A, CI, verdict.
pub(crate) fn verdicts(v: &CampaignView) -> Vec<[String; 10]> {
    let isos = v.isolations();
    let mut out = Vec::new();
    for set in v.column_sets() {
        for l in v.loads() {
            let side = |iso: &str| -> Vec<RunResult> {
                v.group(iso, &l, &set).into_iter().cloned().collect()
            };
            for (ai, a) in isos.iter().enumerate() {
                for b in isos.iter().skip(ai + 1) {
                    let (ra, rb) = (side(a), side(b));
                    if ra.is_empty() || rb.is_empty() {
                        continue;
                    }
                    let cmp = compare(&ra, &rb, &default_stats(), 0);
                    for row in &cmp.rows {
                        let [stat, va, vb, ratio, lo, hi, verdict] = row_cells(row);
                        out.push([
                            set.label.clone(),
                            l.clone(),
                            a.clone(),
                            b.clone(),
                            stat,
                            va,
                            vb,
                            ratio,
                            format!("[{lo}, {hi}]"),
                            verdict,
                        ]);
                    }
                }
            }
        }
    }
    out
}

/// Table 1.1 rows: one per split run, its configuration the cell, the
/// repeat and the kernel.
fn table11_rows(v: &CampaignView) -> Vec<[String; 6]> {
    crate::table11::rows(v.runs.iter().map(|r| {
        let label = r.label.clone().unwrap_or_default();
        (format!("{label} · {}", run_kernel(r)), r)
    }))
}

/// Note under the figure-11 tables.
const FIG11_NOTE: &str = "µs. Samples, L_min, L_max, L_avg: over every sample of the group's runs (exact); Samples_H … L_mode_H: over the samples inside the summed histogram (the systress article's definitions; L_mode_H lists every fullest bucket); overflows: samples above the histogram. † threads with another histogram shape left out of the _H columns. `?`: not recorded. The article's figure 11 is an image: this arrangement (a block per isolation method, a row per load, a table per value of every other axis and per kernel) is our reading of its text.";

/// `summary.md` of a campaign.
pub fn campaign_summary_markdown(v: &CampaignView) -> String {
    let mut md = format!(
        "# Campaign {}\n\n{}\n\n",
        cell(v.name),
        v.header(&|s| cell(s))
    );
    md.push_str("## Figure 11: SUMMARY statistics (the systress article's columns)\n");
    let mut last_iso = String::new();
    for (iso, set, rows) in figure11(v) {
        if iso != last_iso {
            let _ = write!(md, "\n### isolation = {}\n", cell(&iso));
            last_iso = iso;
        }
        let _ = write!(
            md,
            "\n#### {}\n\n| {} |\n|---|{}\n",
            cell(&set),
            FIG11_HEAD.join(" | "),
            "---:|".repeat(FIG11_HEAD.len() - 1)
        );
        for r in rows {
            let cells: Vec<String> = r.iter().map(|c| cell(c)).collect();
            let _ = writeln!(md, "| {} |", cells.join(" | "));
        }
    }
    let _ = write!(md, "\n{FIG11_NOTE}\n\n## Percentiles\n\n");
    let sets = v.column_sets();
    let several = sets.len() > 1;
    let set_col = if several { " column set |" } else { "" };
    let _ = write!(
        md,
        "| load | isolation |{set_col} runs | samples | p50 (us) | p99 (us) | p99.9 (us) | p99.99 (us) | max (us) |\n|---|---|{}---|---|---|---|---|---|---|\n",
        if several { "---|" } else { "" }
    );
    for l in v.loads() {
        for iso in v.isolations() {
            for set in &sets {
                let g = v.group(&iso, &l, set);
                if !g.is_empty() {
                    md.push_str(&matrix_row(&l, &iso, several.then_some(&set.label), &g));
                }
            }
        }
    }
    md.push_str("\nPercentiles are the worst over each group's runs and threads.\n\n## Isolation methods compared within each load and column set\n\n");
    md.push_str("| column set | load | A | B | statistic | A (us) | B (us) | B/A | 95 % CI | verdict |\n|---|---|---|---|---|---|---|---|---|---|\n");
    for r in verdicts(v) {
        let cells: Vec<String> = r.iter().map(|c| cell(c)).collect();
        let _ = writeln!(md, "| {} |", cells.join(" | "));
    }
    md.push_str(&crate::table11::markdown(
        &table11_rows(v),
        "## Table 1.1 (the ARTiS thesis): kernel and user latency",
    ));
    md
}

/// An HTML table: `head` cells, then `rows`.
fn html_table(class: &str, head: &[&str], rows: &[Vec<String>]) -> String {
    let mut h = format!("<table class=\"{class}\"><tr>");
    for c in head {
        let _ = write!(h, "<th>{}</th>", esc(c));
    }
    h.push_str("</tr>\n");
    for r in rows {
        h.push_str("<tr>");
        for c in r {
            let _ = write!(h, "<td>{}</td>", esc(c));
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</table>\n");
    h
}

/// The campaign's one `report.html`: the header, the figure-11 tables,
/// the verdicts with their confidence intervals, figure 12 (`figure12`:
/// per load, the overlay picture's path relative to the page, one curve
/// per isolation method and column set), Table 1.1, and a link to the
/// per-run report (`plots/report.html`).
pub fn campaign_summary_html(v: &CampaignView, figure12: &[(String, String)]) -> String {
    let mut h = format!(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Campaign {}</title>\n<style>body{{font-family:sans-serif;margin:1em 2em}}table{{border-collapse:collapse;margin:.5em 0}}td,th{{border:1px solid #bbb;padding:2px 6px;text-align:right}}td:first-child{{text-align:left}}.hint{{color:#555;font-size:90%}}img{{max-width:100%}}</style></head><body>\n<h1>Campaign {}</h1>\n<p>{}</p>\n<p><a href=\"summary.md\">summary.md</a> · <a href=\"plots/report.html\">every run's own report</a></p>\n",
        esc(v.name),
        esc(v.name),
        v.header(&|s| esc(s))
    );
    h.push_str("<h2 id=\"figure11\">Figure 11: SUMMARY statistics</h2>\n");
    let mut last_iso = String::new();
    for (iso, set, rows) in figure11(v) {
        if iso != last_iso {
            let _ = writeln!(h, "<h3>isolation = {}</h3>", esc(&iso));
            last_iso = iso;
        }
        let _ = writeln!(h, "<h4>{}</h4>", esc(&set));
        let rows: Vec<Vec<String>> = rows.into_iter().map(|r| r.to_vec()).collect();
        h.push_str(&html_table("fig11", &FIG11_HEAD, &rows));
    }
    let _ = writeln!(h, "<p class=\"hint\">{}</p>", esc(FIG11_NOTE));
    h.push_str(
        "<h2 id=\"verdicts\">Isolation methods compared (runs compare, 95 % bootstrap CI)</h2>\n",
    );
    let rows: Vec<Vec<String>> = verdicts(v).into_iter().map(|r| r.to_vec()).collect();
    h.push_str(&html_table(
        "verdicts",
        &[
            "column set",
            "load",
            "A",
            "B",
            "statistic",
            "A (µs)",
            "B (µs)",
            "B/A",
            "95 % CI",
            "verdict",
        ],
        &rows,
    ));
    h.push_str("<h2 id=\"figure12\">Figure 12: histograms overlaid per load</h2>\n");
    for (load, img) in figure12 {
        let _ = writeln!(
            h,
            "<h3>load {}</h3>\n<img src=\"{}\" alt=\"latency histograms, load {}\">",
            esc(load),
            attr(img),
            attr(load)
        );
    }
    h.push_str(&crate::table11::html(
        &table11_rows(v),
        "<h2 id=\"table11\">Table 1.1 (the ARTiS thesis): kernel and user latency</h2>",
    ));
    h.push_str("</body></html>\n");
    h
}

#[cfg(test)]
mod tests {
    use super::{campaign_summary_markdown as summary_markdown, fig11_row, CampaignView};
    use rtshield_results::RunResult;

    /// A stored campaign run: tags as the campaign writes them.
    fn run(seed: u64, iso: &str, period: &str, load: &str, kernel: &str) -> RunResult {
        let peak = if iso == "partition" { 8.0 } else { 12.0 };
        let mut r = crate::synth_run_result("x", seed, &[1], 2000, peak, 0.1, 200);
        for (k, v) in [
            ("isolation", iso),
            ("period", period),
            ("load", load),
            ("kernel_id", kernel),
            ("campaign", "c"),
        ] {
            r.tags.insert(k.into(), v.into());
        }
        r.label = Some(format!(
            "isolation={iso},period={period},load={load} r{seed}"
        ));
        r
    }

    fn axes() -> Vec<(String, Vec<String>)> {
        vec![
            ("isolation".into(), vec!["none".into(), "partition".into()]),
            ("period".into(), vec!["300us".into(), "500us".into()]),
            ("load".into(), vec!["idle".into(), "timers".into()]),
        ]
    }

    /// 2 isolations × 2 periods × 2 loads, 2 runs each; on `kernels`.
    fn runs(kernels: &[&str]) -> Vec<RunResult> {
        let mut out = Vec::new();
        let mut seed = 1;
        for k in kernels {
            for iso in ["none", "partition"] {
                for p in ["300us", "500us"] {
                    for l in ["idle", "timers"] {
                        for _ in 0..2 {
                            out.push(run(seed, iso, p, l, k));
                            seed += 1;
                        }
                    }
                }
            }
        }
        out
    }

    #[test]
    fn figure11_has_one_table_per_isolation_and_period_with_the_summary_columns() {
        let rs = runs(&["6.18 NONE"]);
        let ax = axes();
        let v = CampaignView {
            name: "partitioning",
            axes: &ax,
            pool: &[],
            runs: &rs,
        };
        let md = summary_markdown(&v);
        assert!(
            md.contains("| load | runs | Samples | L_min | L_max | L_avg | Samples_H | L_avg_H | L_med_H | L_std_H | L_mode_H | overflows |"),
            "{md}"
        );
        // One block per isolation method, one table per period: never pooled.
        assert_eq!(md.matches("\n### isolation = ").count(), 2, "{md}");
        assert_eq!(md.matches("\n#### period = ").count(), 4, "{md}");
        assert!(md.contains("#### period = 300us\n"), "{md}");
        assert!(md.contains("#### period = 500us\n"), "{md}");
        // Each row holds the 2 runs of its cell only (not 4: periods pooled).
        assert!(md.contains("| idle | 2 | 4000 |"), "{md}");
        assert!(!md.contains("| idle | 4 |"), "{md}");
        assert!(md.contains("nothing pooled"), "{md}");
        // One kernel: the header names it, the headings do not repeat it.
        assert!(md.contains("kernels: 6.18 NONE."), "{md}");
        // Verdicts within each period, never across.
        assert!(md.contains("| period = 300us | idle | none | partition |"));
        assert!(md.contains("| period = 500us | timers | none | partition |"));
        // The row's values are the SUMMARY statistics of the two runs.
        let g: Vec<&RunResult> = rs
            .iter()
            .filter(|r| {
                r.tags["isolation"] == "none"
                    && r.tags["period"] == "300us"
                    && r.tags["load"] == "idle"
            })
            .collect();
        let row = fig11_row("idle", &g);
        let t: Vec<_> = g.iter().flat_map(|r| &r.threads).collect();
        assert_eq!(row[2], "4000");
        let min = t.iter().filter_map(|t| t.min_ns).min().unwrap();
        let max = t.iter().filter_map(|t| t.max_ns).max().unwrap();
        assert_eq!(row[3], format!("{}", min / 1000));
        assert_eq!(row[4], format!("{}", max / 1000));
        let pooled = rtshield_results::pool_threads(t.iter().copied()).unwrap();
        let hs = pooled.hist_stats.as_ref().unwrap();
        assert_eq!(row[6], hs.samples.to_string());
        assert_eq!(row[7], format!("{:.2}", hs.avg_ns / 1000.0));
        assert!(md.contains(&format!("| {} |", row.join(" | "))), "{md}");
    }
}

#[cfg(test)]
mod round3_tests {
    use super::*;
    use crate::synth::synth_run_result;

    /// A label, load or isolation name written to be Markdown that acts.
    const HOSTILE: &str = "x\n## INJECTED\n| a | b |\n<img src=x onerror=alert(1)>[x](javascript:alert(1))`c`\x1b]0;PWN\x07\u{202e}";

    fn view<'a>(
        name: &'a str,
        axes: &'a [(String, Vec<String>)],
        runs: &'a [RunResult],
    ) -> CampaignView<'a> {
        CampaignView {
            name,
            axes,
            pool: &[],
            runs,
        }
    }

    fn tagged(load: &str, iso: &str, seed: u64) -> RunResult {
        let mut r = synth_run_result(HOSTILE, seed, &[1], 1000, 10.0, 0.2, 100);
        r.tags.insert("load".into(), load.into());
        r.tags.insert("isolation".into(), iso.into());
        r
    }

    /// Whatever a hostile value holds, summary.md keeps it inside its cell:
    /// no line of its own, no tag, no link, no control character.
    #[test]
    fn a_hostile_load_isolation_or_name_stays_in_its_cells() {
        let runs = vec![tagged(HOSTILE, "none", 1), tagged(HOSTILE, HOSTILE, 2)];
        let axes = vec![
            ("load".to_string(), vec![HOSTILE.to_string()]),
            (
                "isolation".to_string(),
                vec!["none".to_string(), HOSTILE.to_string()],
            ),
        ];
        let md = campaign_summary_markdown(&view(HOSTILE, &axes, &runs));
        assert_no_injection(&md);
    }

    fn assert_no_injection(md: &str) {
        assert!(!md.contains("\n## INJECTED"), "{md}");
        assert!(!md.contains("\n| a | b |"), "{md}");
        // A tag or a link starts only unescaped: every `<`, `[` and
        // backquote of the hostile value is preceded by a backslash.
        for bad in ["<img", "[x](javascript", "`c`"] {
            for (i, _) in md.match_indices(bad) {
                assert!(md[..i].ends_with('\\'), "{bad} unescaped: {md}");
            }
        }
        assert!(
            !md.chars()
                .any(|c| c != '\n' && rtshield_text::terminal::is_control(c)),
            "{md:?}"
        );
        assert!(md.contains("\\<img") && md.contains("\\[x]") && md.contains("\\`c\\`"));
    }

    /// The adversary's N6: one run whose p99.9 is unknown (too few
    /// samples) next to one whose p99.9 is known. The row's worst p99.9
    /// is unknown, never the known one alone (which was shown lower than
    /// the row's p99).
    #[test]
    fn a_percentile_unknown_in_one_run_is_unknown_for_the_row() {
        let a = tagged("idle", "none", 1);
        let mut b = tagged("idle", "none", 2);
        b.threads[0].percentiles.remove("99.9");
        b.threads[0].percentiles.insert("99".into(), 374_000);
        let axes = vec![
            ("load".to_string(), vec!["idle".to_string()]),
            ("isolation".to_string(), vec!["none".to_string()]),
        ];
        let runs = [a, b];
        let md = campaign_summary_markdown(&view("c", &axes, &runs));
        let row = md
            .lines()
            .find(|l| l.starts_with("| idle | none |"))
            .unwrap();
        let cells: Vec<&str> = row.split(" | ").collect();
        assert_eq!(cells[5], "374.0", "{row}");
        assert_eq!(cells[6], "?", "p99.9 unknown in one run: {row}");
    }
}
