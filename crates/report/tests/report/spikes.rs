//! The "Spikes" section: a traced run's explained spikes and split
//! figures in report.html and summary.md; nothing for untraced runs.

use rtshield_report::{generate, synth_run_result, write_synth_run_dir, Format, Options};
use rtshield_results::{LatencyPart, SplitResult, TraceResult};

fn traced_run() -> rtshield_results::RunResult {
    let mut r = synth_run_result("traced", 1, &[1], 1000, 10.0, 0.0, 100);
    let trace: TraceResult = serde_json::from_value(serde_json::json!({
        "on_latency_ns": 300000, "stop": false, "split": true, "buffer_kb": 2048,
        "unavailable": null, "spikes_seen": 2, "spikes_not_analysed": 1,
        "spikes": [{
            "cpu": 1, "pid": 100, "comm": "rtshield-m0",
            "expected_ns": 1000, "timer_expiry_ns": 1500, "wakeup_ns": 2000,
            "switch_in_ns": 1901000, "latency_ns": 1900000,
            "irq_latency_ns": 500, "thread_latency_ns": 1899000,
            "irqs": [], "threads": [], "unaccounted_ns": 0,
            "verdict": "blocked 1.9 ms by thread `x<y>` (pid 7, FIFO 99)"
        }]
    }))
    .unwrap();
    r.trace = Some(trace);
    let part = |max: i64| LatencyPart {
        min_ns: Some(1000),
        max_ns: Some(max),
        avg_ns: Some(2000.0),
        histogram: r.threads[0].histogram.clone().unwrap(),
        percentiles: r.threads[0].percentiles.clone(),
    };
    r.threads[0].split = Some(SplitResult {
        unsplit: None,
        samples: 990,
        irq: part(33_000),
        thread: part(1_899_000),
    });
    r
}

#[test]
fn a_traced_run_has_a_spikes_section() {
    let d = tempfile::tempdir().unwrap();
    let a = d.path().join("a");
    let b = d.path().join("b");
    write_synth_run_dir(&a, &traced_run(), None).unwrap();
    write_synth_run_dir(
        &b,
        &synth_run_result("plain", 2, &[1], 1000, 10.0, 0.0, 100),
        None,
    )
    .unwrap();
    let out = d.path().join("rep");
    generate(&Options {
        inputs: vec![a, b],
        names: vec![],
        out_dir: out.clone(),
        formats: vec![Format::Html, Format::Md],
        title: "t".into(),
        policy: rtshield_safefs::DirPolicy::Strict,
        x_max_us: None,
    })
    .unwrap();
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert_eq!(html.matches("<h2 id=\"spikes\">Spikes</h2>").count(), 1);
    assert!(html.contains("2 wake-ups later than 0.3 ms, 1 explained, 1 not analysed"));
    // Escaped: the verdict names a thread whose name has < and >.
    assert!(html.contains("blocked 1.9 ms by thread `x&lt;y&gt;` (pid 7, FIFO 99)"));
    assert!(html.contains("<td>1900.0</td>"), "latency in µs");
    assert!(html.contains("<td>990</td>"), "split samples");
    assert!(html.contains("<td>1899.0</td>"), "thread max in µs");
    let md = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(md.contains("\n## Spikes\n"));
    assert!(md.contains("| 1 | 1 | rtshield-m0 (100) | 1900.0 | blocked 1.9 ms"));
    assert!(md.contains("| thread | wake-ups | IRQ p50 |"));
    assert!(!md.contains("**plain**"), "an untraced run has no entry");
}

/// Adversary round 3, C2: the `## Spikes` section wrote the run's label
/// raw. A label holding a newline, a heading, a table row, an `<img
/// onerror>`, a `javascript:` link, a backquote and terminal escapes stays
/// one escaped cell in every part of summary.md (table, worst cases,
/// spikes); the same holds for a label given with --name.
#[test]
fn a_hostile_label_stays_inert_in_every_part_of_summary_md() {
    const HOSTILE: &str = "x\n## INJECTED\n| a | b |\n<img src=x onerror=alert(1)>[x](javascript:alert(1))`c`\x1b]0;PWN\x07\u{202e}";
    for by_name in [false, true] {
        let d = tempfile::tempdir().unwrap();
        let a = d.path().join("a");
        let mut r = traced_run();
        r.label = Some(HOSTILE.into());
        write_synth_run_dir(&a, &r, None).unwrap();
        let out = d.path().join("rep");
        generate(&Options {
            inputs: vec![a],
            names: if by_name {
                vec![HOSTILE.into()]
            } else {
                vec![]
            },
            out_dir: out.clone(),
            formats: vec![Format::Md],
            title: HOSTILE.into(),
            policy: rtshield_safefs::DirPolicy::Strict,
            x_max_us: None,
        })
        .unwrap();
        let md = std::fs::read_to_string(out.join("summary.md")).unwrap();
        assert!(md.contains("\n## Spikes\n"), "{md}");
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
        assert!(
            md.contains("**x\\n## INJECTED\\n\\| a \\| b \\|\\n\\<img"),
            "{md}"
        );
    }
}

/// Table 1.1 of the ARTiS thesis from `--split`: kernel (the IRQ part)
/// and user (the run's own latency) at p99.999 and maximum.
#[test]
fn a_split_run_gets_table_1_1_with_the_thesis_columns() {
    let d = tempfile::tempdir().unwrap();
    let a = d.path().join("a");
    let mut r = traced_run();
    // 200 000 samples: enough for a p99.999.
    r.threads[0].samples = Some(200_000);
    r.threads[0].percentiles.insert("99.999".into(), 41_000);
    let sp = r.threads[0].split.as_mut().unwrap();
    sp.samples = 150_000;
    sp.irq.percentiles.insert("99.999".into(), 12_000);
    let user_max = format!("{:.1}", r.threads[0].max_ns.unwrap() as f64 / 1000.0);
    write_synth_run_dir(&a, &r, None).unwrap();
    let out = d.path().join("rep");
    generate(&Options {
        inputs: vec![a],
        names: vec!["cfg".into()],
        out_dir: out.clone(),
        formats: vec![Format::Html, Format::Md],
        title: "t".into(),
        policy: rtshield_safefs::DirPolicy::Strict,
        x_max_us: None,
    })
    .unwrap();
    let md = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(md.contains("## Table 1.1 (the ARTiS thesis)"), "{md}");
    assert!(
        md.contains(&format!(
            "| cfg | 12.0 | 33.0 | 41.0 | {user_max} | 150000 / 200000 |"
        )),
        "{md}"
    );
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(
        html.contains("<td>12.0</td><td>33.0</td><td>41.0</td>"),
        "{html}"
    );
}
