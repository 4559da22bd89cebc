//! A campaign's `summary.md`: the matrix (one row per load × isolation
//! method, the worst figures over its runs) and the isolation methods
//! compared within each load (bootstrap confidence intervals).

use crate::runs::{row_cells, us};
use rtshield_results::RunResult;
use rtshield_store::{compare, default_stats};
use rtshield_text::markdown::cell;
use rtshield_text::markdown_cell;
use std::fmt::Write as _;

/// The percentiles of the matrix, in its column order.
const STAT_KEYS: [&str; 4] = ["50", "99", "99.9", "99.99"];

/// The runs tagged `load=load` and `isolation=iso`.
fn group<'a>(runs: &'a [RunResult], load: &str, iso: &str) -> Vec<&'a RunResult> {
    runs.iter()
        .filter(|r| {
            r.tags.get("load").map(String::as_str) == Some(load)
                && r.tags.get("isolation").map(String::as_str) == Some(iso)
        })
        .collect()
}

/// The matrix row of one group (worst over its runs and threads: the
/// figure a user must plan for).
fn matrix_row(load: &str, iso: &str, group: &[&RunResult]) -> String {
    let threads = || group.iter().flat_map(|r| &r.threads);
    let samples =
        rtshield_results::or_unknown(threads().map(|t| t.samples).sum::<Option<u64>>(), "?");
    let worst = |k: &str| {
        threads()
            .filter_map(|t| t.percentiles.get(k).copied())
            .max()
    };
    let max = threads().map(|t| t.max_ns).max();
    format!(
        "| {} | {} | {} | {samples} | {} | {} | {} | {} | {} |\n",
        markdown_cell(load),
        markdown_cell(iso),
        group.len(),
        us(worst(STAT_KEYS[0])),
        us(worst(STAT_KEYS[1])),
        us(worst(STAT_KEYS[2])),
        us(worst(STAT_KEYS[3])),
        us(max)
    )
}

/// `summary.md` of campaign `name` over its `runs` (tagged `load` and
/// `isolation`), rows and comparisons in the order of `loads` and
/// `isolations` (the campaign file's order).
pub fn campaign_summary_markdown(
    name: &str,
    loads: &[&str],
    isolations: &[&str],
    runs: &[RunResult],
) -> String {
    let mut md = format!("# Campaign {}\n\n", cell(name));
    md.push_str("| load | isolation | runs | samples | p50 (us) | p99 (us) | p99.9 (us) | p99.99 (us) | max (us) |\n|---|---|---|---|---|---|---|---|---|\n");
    for l in loads {
        for iso in isolations {
            let g = group(runs, l, iso);
            if !g.is_empty() {
                md.push_str(&matrix_row(l, iso, &g));
            }
        }
    }
    md.push_str("\nPercentiles are the worst over each group's runs and threads.\n\n## Isolation methods compared within each load\n\n");
    md.push_str("| load | A | B | statistic | A (us) | B (us) | B/A | 95 % CI | verdict |\n|---|---|---|---|---|---|---|---|---|\n");
    for l in loads {
        let side =
            |iso: &str| -> Vec<RunResult> { group(runs, l, iso).into_iter().cloned().collect() };
        for (ai, a) in isolations.iter().enumerate() {
            for b in isolations.iter().skip(ai + 1) {
                let (ra, rb) = (side(a), side(b));
                if ra.is_empty() || rb.is_empty() {
                    continue;
                }
                let cmp = compare(&ra, &rb, &default_stats(), 0);
                for row in &cmp.rows {
                    let [stat, va, vb, ratio, lo, hi, verdict] = row_cells(row).map(|c| cell(&c));
                    let (l, a, b) = (markdown_cell(l), markdown_cell(a), markdown_cell(b));
                    let _ = writeln!(
                        md,
                        "| {l} | {a} | {b} | {stat} | {va} | {vb} | {ratio} | [{lo}, {hi}] | {verdict} |"
                    );
                }
            }
        }
    }
    md
}
