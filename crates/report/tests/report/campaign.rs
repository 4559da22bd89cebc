//! The campaign report in the articles' shape (issue 25): the systress
//! article's figure-11 statistics per isolation method × load × every
//! other axis × kernel, never pooled unless asked; the verdicts; figure
//! 12 in one report.html; Table 1.1 of the ARTiS thesis from `--split`.
//! (The figure-11 row's own statistics are checked by the unit tests in
//! src/campaign.rs: its row builder is the crate's own.)

use rtshield_report::{
    campaign_summary_html as summary_html, campaign_summary_markdown as summary_markdown,
    synth_run_result, CampaignView,
};
use rtshield_results::{LatencyPart, RunResult, SplitResult};

/// A stored campaign run: tags as the campaign writes them.
fn run(seed: u64, iso: &str, period: &str, load: &str, kernel: &str) -> RunResult {
    let peak = if iso == "partition" { 8.0 } else { 12.0 };
    let mut r = synth_run_result("x", seed, &[1], 2000, peak, 0.1, 200);
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
fn another_kernel_is_another_column_set_and_pool_merges_only_what_it_names() {
    let rs = runs(&["6.6 PREEMPT_RT", "6.12 PREEMPT_RT"]);
    let ax = axes();
    let v = CampaignView {
        name: "c",
        axes: &ax,
        pool: &[],
        runs: &rs,
    };
    let md = summary_markdown(&v);
    assert_eq!(md.matches("\n#### period = ").count(), 8, "{md}");
    assert!(
        md.contains("#### period = 300us · kernel 6.12 PREEMPT_RT"),
        "{md}"
    );
    assert!(
        md.contains("kernels: 6.6 PREEMPT_RT; 6.12 PREEMPT_RT"),
        "{md}"
    );
    // Pooling the period, by name: one table per isolation and kernel.
    let pool = vec!["period".to_string()];
    let v = CampaignView {
        name: "c",
        axes: &ax,
        pool: &pool,
        runs: &rs,
    };
    let md = summary_markdown(&v);
    assert_eq!(md.matches("\n#### ").count(), 4, "{md}");
    assert!(
        md.contains("#### period: pooled · kernel 6.6 PREEMPT_RT"),
        "{md}"
    );
    assert!(md.contains("| idle | 4 | 8000 |"), "{md}");
    assert!(md.contains("pooled as asked (`pool`): period"), "{md}");
}

#[test]
fn campaign_report_html_holds_matrix_verdicts_figure12_and_table11() {
    let mut rs = runs(&["6.18 NONE"]);
    let t = &rs[0].threads[0];
    let part = LatencyPart {
        min_ns: Some(1000),
        max_ns: Some(33_000),
        avg_ns: Some(2000.0),
        histogram: t.histogram.clone().expect("a measured run has a histogram"),
        percentiles: t.percentiles.clone(),
    };
    rs[0].threads[0].split = Some(SplitResult {
        samples: 1990,
        unsplit: None,
        irq: part.clone(),
        thread: part,
    });
    let ax = axes();
    let v = CampaignView {
        name: "c<1>",
        axes: &ax,
        pool: &[],
        runs: &rs,
    };
    let fig12 = vec![("idle".to_string(), "load-idle/latency.svg".to_string())];
    let h = summary_html(&v, &fig12);
    assert!(h.contains("<h1>Campaign c&lt;1&gt;</h1>"), "{h}");
    assert_eq!(h.matches("<table class=\"fig11\">").count(), 4, "{h}");
    assert!(h.contains("<th>L_avg_H</th>"));
    assert!(h.contains("<h2 id=\"verdicts\">") && h.contains("95 % CI"));
    assert!(h.contains("<img src=\"load-idle/latency.svg\""), "{h}");
    assert!(h.contains("<h2 id=\"table11\">"), "{h}");
    let md = summary_markdown(&v);
    // The name is the campaign file's: through the Markdown encoder.
    assert!(md.starts_with("# Campaign c\\<1>\n"), "{md}");
    assert!(
        md.contains("| configuration | kernel p99.999 (µs) | kernel max (µs) | user p99.999 (µs) | user max (µs) | wake-ups split / samples |"),
        "{md}"
    );
    // 2000 samples: p99.999 needs 10⁵; the maxima are the measured ones.
    let user_max = format!("{:.1}", rs[0].threads[0].max_ns.unwrap() as f64 / 1000.0);
    assert!(
        md.contains(&format!(
            "| isolation=none,period=300us,load=idle r1 · 6.18 NONE | not enough samples | 33.0 | not enough samples | {user_max} | 1990 / 2000 |"
        )),
        "{md}"
    );
}

/// A run imported from a file with no histogram (a real `cyclictest
/// --json` without `-h`, see tests/unknown_values.rs) has no `_H`
/// statistic: its figure-11 row shows `?` there (never 0, never the
/// statistics of the other runs of its group), and its exact SUMMARY
/// values as the file gave them.
#[test]
fn a_run_without_a_histogram_has_unknown_h_statistics_in_figure_11() {
    let fx = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/report/cyclictest-no-h.json");
    let text = std::fs::read_to_string(fx).unwrap();
    let imported = |iso: &str| {
        let mut r = rtshield_results::read_cyclictest_json(&text, "no-h.json").unwrap();
        assert!(r.threads[0].histogram.is_none(), "the fixture has no -h");
        for (k, v) in [
            ("isolation", iso),
            ("period", "300us"),
            ("load", "idle"),
            ("kernel_id", "6.18 NONE"),
            ("campaign", "c"),
        ] {
            r.tags.insert(k.into(), v.into());
        }
        r
    };
    // `none`: the import alone; `partition`: the import and a measured
    // run with a histogram in the same group.
    let rs = vec![
        imported("none"),
        imported("partition"),
        run(1, "partition", "300us", "idle", "6.18 NONE"),
    ];
    let ax = axes();
    let v = CampaignView {
        name: "c",
        axes: &ax,
        pool: &[],
        runs: &rs,
    };
    let md = summary_markdown(&v);
    let unknown_h = "? | ? | ? | ? | ? | ? |";
    assert!(
        md.contains(&format!(
            "| idle | 1 | 9923 | 9 | 2190 | 21.41 | {unknown_h}"
        )),
        "{md}"
    );
    let n = 9923 + rs[2].threads[0].samples.unwrap();
    assert!(
        md.contains(&format!("| idle | 2 | {n} | ")) && md.contains(&format!(" | {unknown_h}\n")),
        "{md}"
    );
    assert_eq!(md.matches(unknown_h).count(), 2, "{md}");
    let h = summary_html(&v, &[]);
    assert!(
        h.contains("<td>21.41</td><td>?</td><td>?</td><td>?</td><td>?</td><td>?</td><td>?</td>"),
        "{h}"
    );
}
