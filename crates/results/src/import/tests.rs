//! The readers on real and hand-made files of each format.

use super::*;
use crate::Pct;
use rtshield_vocab::Policy;

const JSON: &str = r##"{
  "file_version": 1,
  "cmdline:": "cyclictest -m -p 98 -a 1 -t 1 -i 200 -D 2 -h 100 -q --json=one.json",
  "rt_test_version:": "2.40",
  "start_time": "Sun, 22 Nov 2026 05:49:01 +0000",
  "end_time": "Sun, 22 Nov 2026 05:49:03 +0000",
  "return_code": 0,
  "sysinfo": {"sysname": "Linux", "nodename": "vm", "release": "6.18.44",
          "version": "#1 SMP PREEMPT_DYNAMIC @0", "machine": "x86_64", "realtime": 0},
  "num_threads": 2,
  "resolution_in_ns": 0,
  "thread": {
"10": {"histogram": {"3": 2}, "cycles": 2, "min": 3, "max": 3, "avg": 3.0, "cpu": 0, "node": 0},
"2": {"histogram": {"12": 1, "10": 6, "11": 2}, "cycles": 10, "min": 10, "max": 250,
      "avg": 34.5, "cpu": 1, "node": 0}
  }
}"##;

#[test]
fn json_threads_histogram_and_stats() {
    let r = read_cyclictest_json(JSON, "one.json").unwrap();
    assert_eq!(r.tool, "cyclictest 2.40");
    assert_eq!(r.threads.len(), 2);
    // Numeric order of thread keys: 2 before 10.
    let t = &r.threads[0];
    assert_eq!(t.index, 2);
    assert_eq!(t.cpu, Some(1));
    // -h: every thread at the same interval (no -d spread).
    assert_eq!(t.period_ns, Some(200_000));
    assert_eq!(r.threads[1].period_ns, Some(200_000));
    assert_eq!(t.samples, Some(10));
    assert_eq!((t.min_ns, t.max_ns), (Some(10_000), Some(250_000)));
    assert_eq!(t.avg_ns, Some(34_500.0));
    let h = t.histogram.as_ref().unwrap();
    assert_eq!(h.counts, vec![[10, 6], [11, 2], [12, 1]]);
    assert_eq!(h.buckets, 100);
    // 10 cycles, 9 in the histogram: one overflow.
    assert_eq!(h.overflow, 1);
    // Median of 6×10, 2×11, 1×12 is 10; mode 10; mean 10.444 µs.
    let hs = t.hist_stats.as_ref().unwrap();
    assert_eq!(hs.median_ns, 10_000);
    assert_eq!(hs.mode_ns, 10_000);
    assert!((hs.avg_ns - 94_000.0 / 9.0).abs() < 1e-6);
    // p90 = 9th of 10 samples = 12 µs; p99 needs 100 samples.
    assert_eq!(t.percentiles["90"], 12_000);
    assert_eq!(t.pct("99"), Pct::NotEnoughSamples);
    assert_eq!(r.sysinfo.kernel_release.as_deref(), Some("6.18.44"));
    assert!(r.sysinfo.preempt_dynamic);
    // end_time − start_time; the mode of cyclictest 2.x without -x.
    assert_eq!(r.duration_s, Some(2.0));
    assert_eq!(r.settings.mode.as_deref(), Some("nanosleep"));
    assert_eq!(r.end_reason, None);
}

/// `cyclictest --nsecs`: `resolution_in_ns: 1`, every value and the
/// histogram index in ns (checked against rt-tests 2.40).
#[test]
fn json_nsecs() {
    let text = r#"{"file_version": 1, "cmdline:": "cyclictest --nsecs -h 100000 -i 500",
        "resolution_in_ns": 1, "thread": {"0": {"histogram": {"11294": 1, "35000": 2},
        "cycles": 4, "min": 11294, "max": 767870, "avg": 35143.87, "cpu": 1}}}"#;
    let r = read_cyclictest_json(text, "ns.json").unwrap();
    let t = &r.threads[0];
    assert_eq!(r.settings.resolution_ns, 1);
    assert_eq!((t.min_ns, t.max_ns), (Some(11_294), Some(767_870)));
    assert_eq!(t.avg_ns, Some(35_143.87));
    let h = t.histogram.as_ref().unwrap();
    assert_eq!(h.counts, vec![[11294, 1], [35000, 2]]);
    assert_eq!(h.overflow, 1);
    assert_eq!(t.hist_stats.as_ref().unwrap().median_ns, 35_000);
    assert_eq!(t.period_ns, Some(500_000));
}

#[test]
fn truncated_json_names_file_line_col() {
    let e = read_cyclictest_json(&JSON[..200], "cut.json")
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("cut.json:"), "{e}");
    assert!(e.contains("not valid cyclictest JSON"), "{e}");
}

#[test]
fn unknown_file_version() {
    let e = read_cyclictest_json(
        &JSON.replace("\"file_version\": 1", "\"file_version\": 7"),
        "x.json",
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("x.json") && e.contains("file_version 7"), "{e}");
}

const HIST: &str = "# /dev/cpu_dma_latency set to 0us\n# Histogram\n000000 000000 000000\n000001 000004 000000\n000002 000001 000003\n000003 000000 000001\n# Total: 000000005 000000004\n# Min Latencies: 00001 00002\n# Avg Latencies: 00001 00002\n# Max Latencies: 00009 00003\n# Histogram Overflows: 00002 00000\n# Histogram Overflow at cycle number:\n# Thread 0: 00003 00010\n# Thread 1:\n";

#[test]
fn hist_text_two_threads() {
    let r = read_cyclictest_hist(HIST, "h.txt").unwrap();
    assert_eq!(r.threads.len(), 2);
    let t0 = &r.threads[0];
    let h0 = t0.histogram.as_ref().unwrap();
    assert_eq!(h0.counts, vec![[1, 4], [2, 1]]);
    assert_eq!(h0.overflow, 2);
    assert_eq!(h0.buckets, 4);
    assert_eq!(t0.samples, Some(7));
    assert_eq!((t0.min_ns, t0.max_ns), (Some(1000), Some(9000)));
    let t1 = &r.threads[1];
    assert_eq!(t1.histogram.as_ref().unwrap().counts, vec![[2, 3], [3, 1]]);
    assert_eq!(t1.samples, Some(4));
    assert_eq!(t1.hist_stats.as_ref().unwrap().mode_ns, 2000);
}

#[test]
fn hist_text_errors_name_line_and_column() {
    let bad = HIST.replace("000002 000001 000003", "000002 00x001 000003");
    let e = read_cyclictest_hist(&bad, "h.txt").unwrap_err().to_string();
    assert_eq!(e, "h.txt:5:8: `00x001` is not a sample count");
    let short = HIST.replace("000003 000000 000001", "000003 000000");
    let e = read_cyclictest_hist(&short, "h.txt")
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("h.txt:6:14: 1 counts"), "{e}");
    let cut = &HIST[..HIST.find("# Max").unwrap()];
    let e = read_cyclictest_hist(cut, "h.txt").unwrap_err().to_string();
    assert!(e.contains("h.txt") && e.contains("truncated"), "{e}");
    let e = read_cyclictest_hist("hello\n", "h.txt")
        .unwrap_err()
        .to_string();
    assert!(e.contains("no histogram lines"), "{e}");
}

#[test]
fn sniffing() {
    assert_eq!(sniff(JSON), InputFormat::CyclictestJson);
    assert_eq!(
        sniff("{\"schema\": \"rtshield.results/1\""),
        InputFormat::Rtshield
    );
    assert_eq!(sniff(HIST), InputFormat::CyclictestHist);
    // A config text mentioning the other tool does not confuse it.
    assert_eq!(
        sniff("{\n  \"schema\": \"rtshield.results/1\", \"config\": \"\\\"rt_test_version\\\"\"}"),
        InputFormat::Rtshield
    );
    assert_eq!(
        sniff("{\"num_threads\": 1, \"schema\": 2}"),
        InputFormat::Rtshield
    );
    assert_eq!(sniff("{}"), InputFormat::CyclictestJson);
}

/// The systress article's `timer_thread00.txt` (its figure, verbatim
/// but for the elided `[...]` line): histogram 0..=20 µs, SUMMARY
/// Samples 60000, Samples_H 55431 → 4569 beyond 20 µs.
#[test]
fn systress_txt_from_the_article() {
    let text = include_str!("../../tests/fixtures/systress-timer_thread00.txt");
    assert_eq!(sniff(text), InputFormat::SystressTxt);
    let r = read_systress_txt(text, "timer_thread00.txt").unwrap();
    assert_eq!(r.tool, "systress");
    assert_eq!(r.tags["imported"], "systress-txt");
    let t = &r.threads[0];
    assert_eq!((t.index, t.tid, t.samples), (0, Some(13029), Some(60000)));
    assert_eq!(
        (t.min_ns, t.max_ns, t.avg_ns),
        (Some(2000), Some(100_000), Some(17_000.0))
    );
    let h = t.histogram.as_ref().unwrap();
    assert_eq!(h.buckets, 21);
    assert_eq!(h.overflow, 4569);
    assert_eq!(h.counts[0], [2, 8]);
    assert_eq!(t.hist_stats.as_ref().unwrap().mode_ns, 17_000);
    assert_eq!(t.overruns, None);
    // systress records no time, mode or end reason.
    assert_eq!((r.duration_s, r.end_reason.as_deref()), (None, None));
    // The elided lines: the histogram holds fewer than Samples_H.
    assert!(
        r.warnings.iter().any(|w| w.contains("Samples_H 55431")),
        "{:?}",
        r.warnings
    );
}

#[test]
fn systress_txt_errors_name_line_and_column() {
    let text = include_str!("../../tests/fixtures/systress-timer_thread00.txt");
    let e = read_systress_txt(&text.replace("    3114", "    31x4"), "t.txt").unwrap_err();
    assert_eq!(e.to_string(), "t.txt:6:14: `31x4` is not a sample count");
    let cut = &text[..text.find("#      0 13029").unwrap()];
    let e = read_systress_txt(cut, "t.txt").unwrap_err().to_string();
    assert!(e.contains("no SUMMARY line"), "{e}");
}

/// rtshield's own files read back: its name, its resolution, its
/// per-thread counters (overruns 3, not 0).
#[test]
fn rtshield_text_files_read_back() {
    let mut res = crate::example::example_result();
    res.threads[0].overruns = Some(3);
    res.threads[0].missed_periods = Some(5);
    let hist = crate::to_cyclictest_hist(&res);
    let r = read_cyclictest_hist(&hist, "histogram.txt").unwrap();
    assert_eq!(r.tool, res.tool);
    assert_eq!(r.tags["imported"], "rtshield-histogram");
    let (t, e) = (&r.threads[0], &res.threads[0]);
    assert_eq!((t.overruns, t.missed_periods), (Some(3), Some(5)));
    assert_eq!(
        (t.policy, t.priority, t.tid),
        (Some(Policy::Fifo), Some(98), Some(4242))
    );
    assert_eq!(t.cpu, Some(1));
    // The text has `cyclictest -h N`'s rows (0..N-1): rtshield's last
    // bucket (N) is an overflow there, and reads back as one.
    let mut want = e.histogram.clone().unwrap();
    want.buckets -= 1;
    want.overflow += want
        .counts
        .iter()
        .filter(|c| c[0] >= want.buckets)
        .map(|c| c[1])
        .sum::<u64>();
    want.counts.retain(|c| c[0] < want.buckets);
    assert_eq!(t.histogram, Some(want));
    assert_eq!(t.lost, Some(0));
    assert_eq!(r.sysinfo.kernel_release.as_deref(), Some("6.18.0"));
    // The first line's duration and end reason, not samples × period.
    assert_eq!(
        (r.duration_s, r.end_reason.as_deref()),
        (Some(0.002), Some("samples"))
    );

    let txt = crate::to_systress_txt(&res, &res.threads[0]);
    assert_eq!(sniff(&txt), InputFormat::SystressTxt);
    let r = read_systress_txt(&txt, "timer_thread00.txt").unwrap();
    let t = &r.threads[0];
    assert_eq!(r.tool, res.tool);
    assert_eq!(
        (t.overruns, t.tid, t.samples),
        (Some(3), Some(4242), Some(10))
    );
    assert_eq!(t.histogram, e.histogram);
    assert_eq!(t.max_ns, Some(150_000));
    assert_eq!(r.duration_s, Some(0.002));
    assert!(r.warnings.len() == 1, "{:?}", r.warnings);
}

/// `cyclictest -H`: the last column sums the threads; not a thread.
#[test]
fn histofall_column_is_not_a_thread() {
    let text = "# Histogram\n000000 000000\t000000\t000000\n000001 000004\t000002\t000006\n000002 000001\t000003\t000004\n# Total: 000000005 000000005 000000010\n# Min Latencies: 00001 00001\n# Avg Latencies: 00001 00001\n# Max Latencies: 00002 00002 00002\n# Histogram Overflows: 00000 00000 00000\n# Histogram Overflow at cycle number:\n# Thread 0:\n# Thread 1:\n";
    let r = read_cyclictest_hist(text, "h.txt").unwrap();
    assert_eq!(r.threads.len(), 2);
    assert_eq!(
        r.threads[1].histogram.as_ref().unwrap().counts,
        vec![[1, 2], [2, 3]]
    );
    assert_eq!(r.tool, "cyclictest");
    assert_eq!(r.threads[0].overruns, None);
}

/// The cmdline's `-p98` is the priority (not `FIFO 0`); the counters
/// cyclictest does not keep are unknown.
#[test]
fn json_priority_and_unknowns() {
    let r = read_cyclictest_json(JSON, "one.json").unwrap();
    let t = &r.threads[0];
    assert_eq!((t.policy, t.priority), (Some(Policy::Fifo), Some(98)));
    assert_eq!(
        (t.overruns, t.missed_periods, t.lost, t.tid, t.cur_ns),
        (None, None, None, None, None)
    );
    assert_eq!(r.settings.memlock, Some(true));
    assert_eq!(r.tags["affinity"], "1");
    // Serialised, unknown is null (never 0).
    let j = serde_json::to_value(t).unwrap();
    assert!(j["tid"].is_null() && j["overruns"].is_null(), "{j}");
    assert_eq!(j["policy"], "fifo");
}

/// Without `-h` the JSON has no histogram: min/avg/max only, not a
/// median of 0 and every sample counted as overflow.
#[test]
fn json_without_histogram() {
    let text = r#"{"file_version": 1, "cmdline": "cyclictest -p 90 -i 1000",
        "thread": {"0": {"cycles": 5000, "min": 3, "max": 80, "avg": 6.5, "cpu": 0}}}"#;
    let r = read_cyclictest_json(text, "nohist.json").unwrap();
    let t = &r.threads[0];
    assert_eq!(t.histogram, None);
    assert_eq!(t.hist_stats, None);
    assert!(t.percentiles.is_empty() && t.percentile_bounds.is_empty());
    assert_eq!(t.pct("50"), Pct::Unknown);
    assert_eq!(
        (t.samples, t.min_ns, t.max_ns),
        (Some(5000), Some(3000), Some(80_000))
    );
}

/// The torture article's fluctuation logs, verbatim.
#[test]
fn fluctuation_logs_from_the_article() {
    let day2 = include_str!("../../tests/fixtures/fluctuations-day2-tail.txt");
    assert_eq!(sniff(day2), InputFormat::FluctuationLog);
    let log = read_fluctuation_log(day2, "day2.txt").unwrap();
    assert_eq!(log.rows.len(), 9);
    assert_eq!(log.rows[0].0, 29230.0);
    assert_eq!(
        log.rows[6].1,
        FluctRow {
            t: 29260,
            min_us: 0.0,
            avg_us: 99.9,
            max_us: 396.0,
            maxmax_us: 6072.0
        }
    );
    assert_eq!(log.marks, vec![(29257.0, "Periode de charge".to_string())]);
    let t = &log.result.threads[0];
    assert_eq!((t.min_ns, t.max_ns), (Some(0), Some(6_072_000)));
    assert_eq!(log.result.settings.mode.as_deref(), Some("interval"));
    assert_eq!((t.samples, &t.histogram), (None, &None));

    // The first run printed time(NULL): epoch times become seconds
    // from the start (the first line closes the first 5 s).
    let first = include_str!("../../tests/fixtures/fluctuations-first-run.txt");
    let log = read_fluctuation_log(first, "first.txt").unwrap();
    let ts: Vec<f64> = log.rows.iter().map(|r| r.0).collect();
    assert_eq!(ts, [5.0, 10.0, 15.0, 20.0, 25.0, 30.0]);
    assert_eq!(log.rows[0].1.min_us, 0.0); // `Min.= 00`

    let e = read_fluctuation_log("[12] Min.= x, Moy.= 1, Max.= 2,  Max.Max.= 2\n", "f.txt")
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("f.txt:1:1: expected `[t] Min.="), "{e}");
}

proptest::proptest! {
    #[test]
    fn readers_never_panic(s in "\\PC{0,300}") {
        let _ = read_cyclictest_hist(&s, "p");
        let _ = read_cyclictest_json(&s, "p");
        let _ = read_systress_txt(&s, "p");
        let _ = read_fluctuation_log(&s, "p");
        let _ = sniff(&s);
        let _ = sniff(&format!("{{{s}"));
    }

    #[test]
    fn hist_lines_never_panic(lines in proptest::collection::vec("[0-9# :A-Za-z]{0,30}", 0..20)) {
        let _ = read_cyclictest_hist(&lines.join("\n"), "p");
    }
}
