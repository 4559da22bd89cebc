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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::synth_run_result;

    /// A label, load or isolation name written to be Markdown that acts.
    const HOSTILE: &str = "x\n## INJECTED\n| a | b |\n<img src=x onerror=alert(1)>[x](javascript:alert(1))`c`\x1b]0;PWN\x07\u{202e}";

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
        let md = campaign_summary_markdown(HOSTILE, &[HOSTILE], &["none", HOSTILE], &runs);
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
        assert!(!md.chars().any(|c| c != '\n' && rtshield_text::terminal::is_control(c)), "{md:?}");
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
        let md = campaign_summary_markdown("c", &["idle"], &["none"], &[a, b]);
        let row = md.lines().find(|l| l.starts_with("| idle | none |")).unwrap();
        let cells: Vec<&str> = row.split(" | ").collect();
        assert_eq!(cells[5], "374.0", "{row}");
        assert_eq!(cells[6], "?", "p99.9 unknown in one run: {row}");
    }
}
