//! Files of a traced run: spikes.json / spikes.txt / trace.txt through the
//! exporter registry, and the `--split` figures in every result file.

use rtshield_results::example_result;
use rtshield_results::*;
use rtshield_results::{csv_header, csv_split_header};
use rtshield_trace::{Spike, SpikeFile, ThreadItem};
use std::collections::BTreeMap;

fn spike() -> Spike {
    Spike {
        cpu: 1,
        pid: 100,
        comm: "rtshield-m0".into(),
        expected_ns: 1_000_000_100_000,
        timer_expiry_ns: Some(1_000_000_103_500),
        wakeup_ns: Some(1_000_000_105_000),
        switch_in_ns: 1_000_001_908_000,
        latency_ns: 1_808_000,
        irq_latency_ns: Some(3_500),
        thread_latency_ns: Some(1_803_000),
        irqs: vec![],
        threads: vec![ThreadItem {
            comm: "stress-ng-cpu".into(),
            pid: 4242,
            kernel_prio: Some(0),
            priority: "FIFO 99".into(),
            ns: 1_800_000,
            works: vec![],
        }],
        unaccounted_ns: 8_000,
        verdict: "blocked 1.8 ms by thread `stress-ng-cpu` (pid 4242, FIFO 99)".into(),
        steal_ns: None,
        steal_window_ns: None,
    }
}

fn part(vals: &[(u64, u64)], min: i64, max: i64) -> LatencyPart {
    LatencyPart {
        min_ns: Some(min),
        max_ns: Some(max),
        avg_ns: Some(2_500.0),
        histogram: Histogram {
            resolution_ns: 1000,
            buckets: 101,
            counts: vals.iter().map(|&(b, c)| [b, c]).collect(),
            overflow: 0,
            underflow: 1,
        },
        percentiles: PERCENTILES
            .iter()
            .map(|k| (k.to_string(), max))
            .collect::<BTreeMap<_, _>>(),
    }
}

fn traced() -> RunResult {
    let mut r = example_result();
    r.trace = Some(TraceResult {
        on_latency_ns: Some(300_000),
        stop: false,
        split: true,
        buffer_kb: 2048,
        spikes_seen: 3,
        spikes_not_analysed: 1,
        spikes: vec![spike()],
        errors: vec!["thread 0 (tid 100) on CPU 1: no switch".into()],
        steal_ns: Some(20_000_000),
        lost_events: Some(37),
        ..Default::default()
    });
    r.threads[0].split = Some(SplitResult {
        samples: 9,
        unsplit: Some([("lost_events".to_string(), 2), ("overrun".to_string(), 1)].into()),
        irq: part(&[(2, 5), (3, 3)], -500, 3_900),
        thread: part(&[(1, 8), (150, 1)], 600, 150_100),
    });
    r
}

/// Issue 22 item 10: results.json says how many samples were not split
/// and why, and how many events the buffer lost; a file without them
/// reads back as unknown, not 0.
#[test]
fn unsplit_samples_and_lost_events_are_written_and_read_back() {
    let r = traced();
    let j = serde_json::to_value(&r).unwrap();
    assert_eq!(j["trace"]["lost_events"], 37);
    assert_eq!(j["threads"][0]["split"]["unsplit"]["lost_events"], 2);
    assert_eq!(j["threads"][0]["split"]["unsplit"]["overrun"], 1);
    let back: rtshield_results::RunResult = serde_json::from_value(j.clone()).unwrap();
    assert_eq!(back, r);
    let mut old = j;
    old["trace"].as_object_mut().unwrap().remove("lost_events");
    old["threads"][0]["split"]
        .as_object_mut()
        .unwrap()
        .remove("unsplit");
    let back: rtshield_results::RunResult = serde_json::from_value(old).unwrap();
    assert_eq!(back.trace.unwrap().lost_events, None);
    assert_eq!(back.threads[0].split.as_ref().unwrap().unsplit, None);
}

#[test]
fn a_traced_run_writes_spikes_json_and_txt_through_the_registry() {
    let d = tempfile::tempdir().unwrap();
    let r = traced();
    write_all(&r, d.path()).unwrap();
    let json = std::fs::read_to_string(d.path().join(SPIKES_JSON)).unwrap();
    let f: SpikeFile = serde_json::from_str(&json).unwrap();
    assert_eq!(f.version, 1);
    assert_eq!(f.spikes, vec![spike()]);
    let txt = std::fs::read_to_string(d.path().join(SPIKES_TXT)).unwrap();
    assert!(txt.starts_with(
        "# 3 wake-ups later than 0.3 ms, 1 explained, 1 not analysed, 1 not explained; VM steal time on the measured CPUs: 20 ms\n"
    ), "{txt}");
    assert!(
        txt.contains("  verdict: blocked 1.8 ms by thread `stress-ng-cpu` (pid 4242, FIFO 99)\n")
    );
    assert!(txt.contains("not explained: thread 0 (tid 100) on CPU 1: no switch\n"));
    // No trace kept without --trace-stop.
    assert!(!d.path().join("trace.txt").exists());
    // results.json carries the same, and reads back.
    let back = read_json(d.path().join(JSON_FILE)).unwrap();
    assert_eq!(back, r);
}

#[test]
fn trace_stop_keeps_the_buffer_in_trace_txt_not_in_results_json() {
    let d = tempfile::tempdir().unwrap();
    let mut r = traced();
    let t = r.trace.as_mut().unwrap();
    t.stop = true;
    let raw = "# tracer: nop\n x-1 [001] d..1. 1.000000: sched_switch: ...\n";
    t.raw = Some(raw.into());
    write_all(&r, d.path()).unwrap();
    assert_eq!(
        std::fs::read_to_string(d.path().join("trace.txt")).unwrap(),
        raw
    );
    let json = std::fs::read_to_string(d.path().join(JSON_FILE)).unwrap();
    assert!(!json.contains("tracer: nop"));
    let back = read_json(d.path().join(JSON_FILE)).unwrap();
    assert_eq!(back.trace.as_ref().unwrap().raw, None);
    assert!(std::fs::read_to_string(d.path().join(SPIKES_TXT))
        .unwrap()
        .contains("--trace-stop"));
}

#[test]
fn an_untraced_run_writes_no_spike_file_and_no_trace_key() {
    let r = example_result();
    assert!(!file_names(&r).iter().any(|n| n.starts_with("spikes")));
    assert!(!to_json(&r).contains("\"trace\""));
    assert!(!to_json(&r).contains("\"split\""));
    // --split alone: no spike files either.
    let mut s = traced();
    s.trace.as_mut().unwrap().on_latency_ns = None;
    assert!(!file_names(&s).iter().any(|n| n.starts_with("spikes")));
}

#[test]
fn split_figures_are_next_to_the_total_in_every_file() {
    let r = traced();
    // CSV: the split columns after the usual ones, for this run only.
    let csv = to_csv(&r);
    let mut lines = csv.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let row: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| row[head.iter().position(|h| *h == name).unwrap()];
    assert_eq!(head.len(), csv_header().len() + csv_split_header().len());
    assert_eq!(col("irq_samples"), "9");
    assert_eq!(col("irq_min_ns"), "-500");
    assert_eq!(col("irq_max_ns"), "3900");
    assert_eq!(col("thread_max_ns"), "150100");
    assert_eq!(col("thread_p99_ns"), "150100");
    assert_eq!(
        to_csv(&example_result())
            .lines()
            .next()
            .unwrap()
            .split(',')
            .count(),
        csv_header().len()
    );
    // Text formats: `#` lines (in µs), before the SUMMARY / `# Histogram`.
    let want_irq = "# split thread 0 irq latency (1000ns units): samples 9 min -1 avg 3 max 3 ";
    let txt = to_systress_txt(&r, &r.threads[0]);
    assert!(txt.contains(want_irq), "{txt}");
    assert!(txt.contains("# split thread 0 thread histogram: 1:8 150:1\n"));
    assert!(
        txt.lines().last().unwrap().starts_with("#      0"),
        "SUMMARY stays last"
    );
    let hist = to_cyclictest_hist(&r);
    let at = |s: &str| hist.find(s).unwrap();
    assert!(at(want_irq) < at("# Histogram\n"));
    assert!(hist.contains("# split thread 0 irq histogram: 2:5 3:3\n"));
}

/// A part as `measure --split` writes it for `n` split samples of `v` ns
/// each: only the percentiles `n` supports (schema 2), and with `n` = 0
/// no figure at all.
fn real_part(n: u64, v: i64) -> LatencyPart {
    let known = n > 0;
    LatencyPart {
        min_ns: known.then_some(v),
        max_ns: known.then_some(v),
        avg_ns: known.then_some(v as f64),
        histogram: Histogram {
            resolution_ns: 1000,
            buckets: 101,
            counts: if known {
                vec![[(v / 1000) as u64, n]]
            } else {
                vec![]
            },
            overflow: 0,
            underflow: 0,
        },
        percentiles: PERCENTILES
            .iter()
            .filter(|k| percentile_supported(k, n))
            .map(|k| (k.to_string(), v))
            .collect(),
    }
}

/// Issue 22 item 10 (review): a split of 50 samples has no p99 and
/// beyond, a split of none has no figure: the `# split` lines of
/// histogram.txt and timer_threadNN.txt say `?` (they said `p99=0`, and
/// `min 0 avg 0 max 0` for an empty part), results.csv leaves the cells
/// empty, results.json writes null and reads it back.
#[test]
fn a_split_without_enough_samples_writes_unknown_not_zero() {
    let mut r = traced();
    let t = r.threads[0].clone();
    r.threads.push(ThreadResult { index: 1, ..t });
    r.threads[0].split = Some(SplitResult {
        samples: 50,
        unsplit: Some([("not_traced".to_string(), 3)].into()),
        irq: real_part(50, 3_000),
        thread: real_part(50, 7_000),
    });
    r.threads[1].split = Some(SplitResult {
        samples: 0,
        unsplit: Some([("not_traced".to_string(), 53)].into()),
        irq: real_part(0, 0),
        thread: real_part(0, 0),
    });
    let d = tempfile::tempdir().unwrap();
    write_all(&r, d.path()).unwrap();
    let hist = std::fs::read_to_string(d.path().join(HIST_FILE)).unwrap();
    let sys0 = std::fs::read_to_string(d.path().join(systress_file_name(0))).unwrap();
    let sys1 = std::fs::read_to_string(d.path().join(systress_file_name(1))).unwrap();
    let irq0 = "# split thread 0 irq latency (1000ns units): samples 50 min 3 avg 3 max 3 p50=3 p90=3 p99=? p99.9=? p99.99=? p99.999=? p99.9999=? overflow 0 underflow 0\n";
    let irq1 = "# split thread 1 irq latency (1000ns units): samples 0 min ? avg ? max ? p50=? p90=? p99=? p99.9=? p99.99=? p99.999=? p99.9999=? overflow 0 underflow 0\n";
    for (name, txt, want) in [
        ("histogram.txt", &hist, irq0),
        ("histogram.txt", &hist, irq1),
        ("timer_thread00.txt", &sys0, irq0),
        ("timer_thread01.txt", &sys1, irq1),
    ] {
        assert!(txt.contains(want), "{name} lacks {want}{txt}");
    }
    for txt in [&hist, &sys0, &sys1] {
        let split: Vec<&str> = txt.lines().filter(|l| l.starts_with("# split")).collect();
        assert!(
            !split
                .iter()
                .any(|l| l.contains("=0 ") || l.contains(" 0 avg")),
            "{split:?}"
        );
    }
    // CSV: empty cells for what is unknown.
    let csv = to_csv(&r);
    let rows: Vec<Vec<String>> = csv
        .lines()
        .map(|l| l.split(',').map(String::from).collect())
        .collect();
    let col =
        |row: usize, name: &str| rows[row][rows[0].iter().position(|h| h == name).unwrap()].clone();
    assert_eq!(col(1, "irq_p90_ns"), "3000");
    assert_eq!(col(1, "irq_p99_ns"), "");
    for c in ["irq_min_ns", "irq_avg_ns", "irq_max_ns", "thread_p50_ns"] {
        assert_eq!(col(2, c), "", "{c}");
    }
    assert_eq!(col(2, "irq_samples"), "0");
    // JSON: null, read back as unknown.
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.path().join(JSON_FILE)).unwrap()).unwrap();
    let p = &j["threads"][1]["split"]["irq"];
    assert!(
        p["min_ns"].is_null() && p["max_ns"].is_null() && p["avg_ns"].is_null(),
        "{p}"
    );
    assert!(j["threads"][0]["split"]["irq"]["percentiles"]
        .get("99")
        .is_none());
    assert_eq!(read_json(d.path().join(JSON_FILE)).unwrap(), r);
}

/// A file written before the figures could be unknown holds 0 for a part
/// of no split sample: read back, those are unknown.
#[test]
fn an_older_file_s_empty_split_reads_back_as_unknown() {
    let mut r = traced();
    r.threads[0].split = Some(SplitResult {
        samples: 0,
        unsplit: None,
        irq: real_part(0, 0),
        thread: real_part(0, 0),
    });
    let mut j = serde_json::to_value(&r).unwrap();
    for part in ["irq", "thread"] {
        let p = &mut j["threads"][0]["split"][part];
        p["min_ns"] = 0.into();
        p["max_ns"] = 0.into();
        p["avg_ns"] = 0.0.into();
        p["percentiles"] = serde_json::json!({"50": 0, "99": 0});
    }
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("old.json");
    std::fs::write(&f, j.to_string()).unwrap();
    assert_eq!(read_json(&f).unwrap(), r);
}
