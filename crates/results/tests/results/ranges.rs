//! Round-2 finding B1: numbers near 2^64 in a result file (counts,
//! resolutions, bucket numbers, durations) made report and export panic
//! (`attempt to multiply with overflow`, exit 101). Every reader now
//! checks docs/ranges.md's ranges: a file with any value out of range is
//! refused (an input error naming the file), and whatever a reader
//! accepts renders in every format without panicking.

use proptest::prelude::*;
use rtshield_results::*;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The values an attacker tries: around 2^64, 2^63, 2^53, the limit.
fn extreme() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(u64::MAX),
        Just(u64::MAX - 1),
        Just(1u64 << 63),
        Just((1u64 << 53) + 1),
        Just(MAX_COUNT + 1),
        Just(MAX_COUNT),
        Just(MAX_SPAN_NS),
        Just(MAX_RESOLUTION_NS),
        Just(0),
        Just(1),
        any::<u64>(),
    ]
}

/// Every output of an accepted result: each file format, each CI format,
/// the histogram's statistics.
fn render_everything(r: &RunResult) {
    let _ = ExportManager::all().render(r);
    for f in CI_FORMATS {
        let _ = by_name(f, &CiOptions::default()).unwrap().files(r);
    }
    for t in &r.threads {
        if let Some(h) = &t.histogram {
            let _ = hist_percentiles(h);
            let _ = hist_stats(h);
        }
    }
}

/// The fields of results.json a hostile file sets, and how.
const FIELDS: &[&str] = &[
    "/threads/0/histogram/resolution_ns",
    "/threads/0/histogram/buckets",
    "/threads/0/histogram/overflow",
    "/threads/0/histogram/underflow",
    "/threads/0/histogram/counts index",
    "/threads/0/histogram/counts two",
    "/threads/0/samples",
    "/threads/0/overruns",
    "/threads/0/missed_periods",
    "/threads/0/period_ns",
    "/threads/0/hist_stats/samples",
    "/settings/resolution_ns",
    "/settings/stats_period_ns",
    "/settings/histo_buckets",
];

fn hostile_json(field: &str, v: u64, also: Option<(usize, u64)>) -> String {
    let mut j: Value = serde_json::to_value(example_result()).unwrap();
    let mut set = |f: &str, v: u64| match f {
        "/threads/0/histogram/counts index" => {
            j["threads"][0]["histogram"]["counts"] = json!([[v, 1]]);
        }
        "/threads/0/histogram/counts two" => {
            j["threads"][0]["histogram"]["counts"] = json!([[1, v], [2, v]]);
        }
        f => *j.pointer_mut(f).unwrap() = json!(v),
    };
    set(field, v);
    if let Some((i, w)) = also {
        set(FIELDS[i % FIELDS.len()], w);
    }
    j.to_string()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    /// results.json: refused, or rendered.
    #[test]
    fn results_json_with_extreme_numbers_is_refused_or_renders(
        f in 0..FIELDS.len(),
        v in extreme(),
        also in proptest::option::of((0..FIELDS.len(), extreme())),
    ) {
        let text = hostile_json(FIELDS[f], v, also);
        if let Ok(r) = parse_json(&text, Path::new("x.json")) {
            render_everything(&r);
        }
    }

    /// A duration (with a statistics period of 0): refused out of
    /// 0 ..= 10^9 s, rendered within.
    #[test]
    fn results_json_with_extreme_durations_is_refused_or_renders(
        d in prop_oneof![Just(1e308), Just(-1e9), Just(1e300), Just(f64::MAX), Just(1e9), any::<f64>()],
    ) {
        let mut j: Value = serde_json::to_value(example_result()).unwrap();
        j["duration_s"] = json!(d);
        j["settings"]["stats_period_ns"] = json!(0);
        let r = parse_json(&j.to_string(), Path::new("x.json"));
        prop_assert_eq!(r.is_ok(), (0.0..=MAX_DURATION_S).contains(&d));
        if let Ok(r) = r {
            render_everything(&r);
        }
    }

    /// cyclictest --json: `-h`, bucket numbers, counts, cycles.
    #[test]
    fn cyclictest_json_with_extreme_numbers_is_refused_or_renders(
        h in extreme(), b in extreme(), c in extreme(), cycles in extreme(),
    ) {
        let text = json!({
            "file_version": 1,
            "cmdline": format!("cyclictest -p 99 -h {h} -i 1000"),
            "rt_test_version": "2.5",
            "num_threads": 1,
            "resolution_in_ns": 0,
            "thread": {"0": {
                "histogram": {"0": 1, b.to_string(): c},
                "cycles": cycles, "min": 0, "max": 18446744073709551615u64,
                "avg": 1.5, "cpu": 0, "node": 0
            }}
        })
        .to_string();
        if let Ok(r) = read_cyclictest_json(&text, "ct.json") {
            render_everything(&r);
        }
    }

    /// cyclictest -h text and the systress text: bucket numbers, counts,
    /// summary values.
    #[test]
    fn histogram_texts_with_extreme_numbers_are_refused_or_render(
        b in extreme(), c in extreme(), m in extreme(),
    ) {
        let ct = format!(
            "# Histogram\n000000 000001\n{b} {c}\n# Total: 000000006\n# Min Latencies: 00000\n\
             # Avg Latencies: {m}\n# Max Latencies: {m}\n# Histogram Overflows: {c}\n"
        );
        if let Ok(r) = read_cyclictest_hist(&ct, "ct.txt") {
            render_everything(&r);
        }
        let st = format!(
            "0 1\n{b} {c}\n# Index TID Samples L_min L_max L_avg Samples_H a b c d\n\
             # 0 100 {c} 0 {m} {m} {c} 0 0 0 0\n"
        );
        if let Ok(r) = read_systress_txt(&st, "st.txt") {
            render_everything(&r);
        }
    }
}

/// The finding's files, one by one: refused, naming the file and field.
#[test]
fn b1_files_are_refused_naming_the_field() {
    for (field, v, names) in [
        (
            "/threads/0/histogram/counts index",
            u64::MAX,
            "threads[0].histogram.counts[0]",
        ),
        (
            "/threads/0/histogram/counts two",
            u64::MAX,
            "threads[0].histogram.counts[0]",
        ),
        (
            "/threads/0/histogram/resolution_ns",
            u64::MAX,
            "threads[0].histogram.resolution_ns",
        ),
    ] {
        let e = parse_json(&hostile_json(field, v, None), Path::new("x.json"))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("x.json: ") && e.contains(names), "{e}");
    }
    let e = read_cyclictest_hist(
        "# Histogram\n000000 000001\n18446744073709551615 000005\n# Total: 000000006\n\
         # Min Latencies: 00000\n# Max Latencies: 99999999999999\n",
        "ct2.txt",
    )
    .unwrap_err()
    .to_string();
    assert!(e.starts_with("ct2.txt:3:1: "), "{e}");
}

/// The templates above are files the readers accept when the numbers are
/// ordinary (so the properties exercise the renderers, not just errors).
#[test]
fn the_hostile_templates_are_valid_files() {
    let (b, c, m) = (5, 3, 7);
    let ct = format!(
        "# Histogram\n000000 000001\n{b} {c}\n# Total: 000000006\n# Min Latencies: 00000\n\
         # Avg Latencies: {m}\n# Max Latencies: {m}\n# Histogram Overflows: {c}\n"
    );
    read_cyclictest_hist(&ct, "ct.txt").unwrap();
    let st = format!(
        "0 1\n{b} {c}\n# Index TID Samples L_min L_max L_avg Samples_H a b c d\n\
         # 0 100 {c} 0 {m} {m} {c} 0 0 0 0\n"
    );
    read_systress_txt(&st, "st.txt").unwrap();
    parse_json(&hostile_json(FIELDS[0], 1000, None), Path::new("x.json")).unwrap();
}

/// A noise run (`rtshield noise`) of `n` CPUs whose every duration is `ns`
/// and every count `c`.
fn noise_json(n: usize, ns: u64, c: u64) -> String {
    let mut r = example_result();
    r.kind = RunKind::Noise;
    let cpu = |i: u32| CpuNoise {
        cpu: i,
        tid: 9,
        policy: "other".into(),
        priority: None,
        runtime_ns: ns,
        noise_ns: ns,
        available_pct: Some(50.0),
        max_single_ns: Some(ns),
        events: c,
        lost: c,
        iterations: c,
        iterations_per_us: Some(1.0),
        min_gap_ns: Some(ns),
        windows: c,
        windows_missed: c,
        steal_ns: Some(ns),
        classes: None,
        by_class: None,
        unexplained_ns: Some(ns),
        lost_ns: None,
        class_ns: None,
        offenders: Some(vec![]),
        longest: vec![],
        tail: None,
    };
    r.noise = Some(NoiseResult {
        threshold_ns: 1_000,
        runtime_ns: ns,
        period_ns: 1_000_000_000,
        cpus: (0..n as u32).map(cpu).collect(),
        trace: None,
    });
    serde_json::to_string(&r).unwrap()
}

/// Placeholders that appear nowhere else in [`noise_json`]'s text.
const NS_MARK: u64 = 987_654_321_987_653;
const COUNT_MARK: u64 = 876_543_218_765_431;

/// [`noise_json`] for 8192 CPUs (4 MB) costs a second unoptimised: it is
/// written once with placeholder numbers and cut at them, and each case
/// puts its own numbers between the pieces: the very text serde_json
/// writes (checked by [`the_noise_template_is_noise_json`]).
fn noise_json_fast(n: usize, ns: u64, c: u64) -> String {
    type Pieces = Vec<(String, Option<bool>)>; // text, then ns (true) or the count (false)
    static TEMPLATES: std::sync::Mutex<BTreeMap<usize, std::sync::Arc<Pieces>>> =
        std::sync::Mutex::new(BTreeMap::new());
    let pieces = TEMPLATES
        .lock()
        .unwrap()
        .entry(n)
        .or_insert_with(|| {
            let t = noise_json(n, NS_MARK, COUNT_MARK);
            let (ns_mark, count_mark) = (NS_MARK.to_string(), COUNT_MARK.to_string());
            let mut marks: Vec<(usize, bool)> =
                t.match_indices(&ns_mark).map(|(i, _)| (i, true)).collect();
            marks.extend(t.match_indices(&count_mark).map(|(i, _)| (i, false)));
            marks.sort();
            // Every duration and count of the file, and nothing else.
            assert_eq!(marks.iter().filter(|m| m.1).count(), 6 * n + 1);
            assert_eq!(marks.iter().filter(|m| !m.1).count(), 5 * n);
            let mut pieces = Vec::new();
            let mut at = 0;
            for (i, is_ns) in marks {
                pieces.push((t[at..i].to_string(), Some(is_ns)));
                at = i + if is_ns {
                    ns_mark.len()
                } else {
                    count_mark.len()
                };
            }
            pieces.push((t[at..].to_string(), None));
            std::sync::Arc::new(pieces)
        })
        .clone();
    let (ns, c) = (ns.to_string(), c.to_string());
    let mut out = String::with_capacity(4 << 20);
    for (text, then) in pieces.iter() {
        out.push_str(text);
        match then {
            Some(true) => out.push_str(&ns),
            Some(false) => out.push_str(&c),
            None => {}
        }
    }
    out
}

#[test]
fn the_noise_template_is_noise_json() {
    for (n, ns, c) in [
        (3, 0, 0),
        (3, u64::MAX, 1),
        (2, MAX_SPAN_NS, MAX_COUNT),
        (1, 7, 8),
    ] {
        assert_eq!(noise_json_fast(n, ns, c), noise_json(n, ns, c));
    }
}

/// The (8192 CPUs?, duration, count) cases that already passed:
/// `extreme()` draws the same few values again and again, and a case of
/// 8192 CPUs costs a second in a debug build; an identical, deterministic
/// case run again can find nothing new.
fn passed_before() -> std::sync::MutexGuard<'static, BTreeSet<(bool, u64, u64)>> {
    static PASSED: std::sync::Mutex<BTreeSet<(bool, u64, u64)>> =
        std::sync::Mutex::new(BTreeSet::new());
    PASSED.lock().unwrap_or_else(|e| e.into_inner())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// A noise run's durations and counts: refused out of range, and what
    /// is accepted renders (and pools its CPUs) without overflowing, even
    /// with 8192 CPUs at the largest duration.
    #[test]
    fn noise_results_with_extreme_numbers_are_refused_or_render(
        ns in extreme(), c in extreme(), many in any::<bool>(),
    ) {
        if passed_before().contains(&(many, ns, c)) {
            return Ok(());
        }
        let text = noise_json_fast(if many { 8192 } else { 3 }, ns, c);
        let r = parse_json(&text, Path::new("n.json"));
        prop_assert_eq!(r.is_ok(), ns <= MAX_SPAN_NS && c <= MAX_COUNT);
        if let Ok(r) = r {
            let _ = r.noise.as_ref().unwrap().available_pct();
            render_everything(&r);
        }
        passed_before().insert((many, ns, c));
    }
}

/// The noise fields the merge of `rtshield noise` brought in are checked
/// like the latency ones (round-2 finding B1 was fixed before they came).
#[test]
fn a_noise_run_out_of_range_is_refused_naming_the_field() {
    let e = parse_json(&noise_json(1, u64::MAX, 1), Path::new("n.json"))
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("n.json: ") && e.contains("noise."), "{e}");
    let e = parse_json(&noise_json(1, 1, u64::MAX), Path::new("n.json"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("noise.cpus[0].events"), "{e}");
    parse_json(
        &noise_json(8192, MAX_SPAN_NS, MAX_COUNT),
        Path::new("n.json"),
    )
    .unwrap();
}

/// Numbers an attacker writes as text (command lines, time stamps): the
/// extremes of every integer type, one past them, and far beyond.
fn extreme_word() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(u64::MAX.to_string()),
        Just((u64::MAX / 1000 + 1).to_string()),
        Just(i64::MAX.to_string()),
        Just(i64::MIN.to_string()),
        Just((1u64 << 63).to_string()),
        Just("18446744073709552".to_string()),
        Just("99999999999999999999999999".to_string()),
        Just("-1".to_string()),
        Just("0".to_string()),
        Just("1".to_string()),
        any::<u64>().prop_map(|v| v.to_string()),
        any::<i64>().prop_map(|v| v.to_string()),
    ]
}

/// An option of cyclictest's or rtshield's command line, with a value.
fn extreme_option() -> impl Strategy<Value = String> {
    let names = prop_oneof![
        Just("-i"),
        Just("-d"),
        Just("-h"),
        Just("-H"),
        Just("-l"),
        Just("-D"),
        Just("-p"),
        Just("-t"),
        Just("-a"),
        Just("--interval"),
        Just("--distance"),
        Just("--priority"),
    ];
    (names, extreme_word()).prop_map(|(n, v)| format!("{n} {v}"))
}

/// What `read_cyclictest_json` accepted must pass every range check and
/// render; anything else is an input error. Never a panic.
fn accepted_renders(r: Result<RunResult, rtshield_vocab::InputError>) {
    if let Ok(r) = r {
        check_result(&r).unwrap_or_else(|m| panic!("accepted out of range: {m}"));
        render_everything(&r);
    }
}

fn cyclictest_file(cmdline: &str, threads: usize, start: &str, end: &str) -> String {
    let t = json!({"histogram": {"0": 1, "3": 2}, "cycles": 3, "min": 0, "max": 3,
                   "avg": 1.5, "cpu": 0, "node": 0});
    let threads: serde_json::Map<String, Value> =
        (0..threads).map(|i| (i.to_string(), t.clone())).collect();
    json!({
        "file_version": 1, "cmdline:": cmdline, "rt_test_version:": "2.5",
        "start_time": start, "end_time": end, "resolution_in_ns": 0, "thread": threads,
    })
    .to_string()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// Adversary round 5, F15: `cmdline: cyclictest -i 18446744073709551615`
    /// (or `-d`) panicked in the reader (exit 101: a whole report, a whole
    /// `runs import` batch lost). Every option with extreme values, on
    /// several threads (the period grows by `-d` per thread), cyclictest's
    /// and rtshield's own command lines.
    #[test]
    fn cyclictest_command_lines_with_extreme_numbers_never_panic(
        opts in proptest::collection::vec(extreme_option(), 1..5),
        threads in 1usize..5,
        rtshield in any::<bool>(),
    ) {
        let cmd = if rtshield {
            let o: Vec<String> = opts.iter().map(|o| {
                let (n, v) = o.split_once(' ').unwrap();
                let n = match n { "-i" | "--interval" => "--period", "-h" | "-H" => "--histo-size",
                                  "-D" => "--duration", "-l" => "--samples", _ => "--prio" };
                format!("{n} {v}ns")
            }).collect();
            format!("rtshield measure --mode interval {}", o.join(" "))
        } else {
            format!("cyclictest {}", opts.join(" "))
        };
        let text = cyclictest_file(&cmd, threads, "Tue, 24 Nov 2026 21:07:05 +0000", "");
        accepted_renders(read_cyclictest_json(&text, "ct.json"));
    }

    /// The start and end times (`%a, %d %b %Y %T %z`) with extreme fields.
    #[test]
    fn cyclictest_times_with_extreme_fields_never_panic(
        y in extreme_word(), h in extreme_word(), d in extreme_word(), y2 in extreme_word(),
    ) {
        let start = format!("Tue, {d} Nov {y} {h}:07:05 +0000");
        let end = format!("Tue, 24 Nov {y2} 21:{h}:05 -9999");
        accepted_renders(read_cyclictest_json(&cyclictest_file("cyclictest", 1, &start, &end), "ct.json"));
    }

    /// The torture article's fluctuation log: `[t]` time stamps of any
    /// 64-bit value, in any order (F15: [i64::MAX] then [i64::MIN]
    /// panicked, subtracting).
    #[test]
    fn fluctuation_logs_with_extreme_stamps_never_panic(
        stamps in proptest::collection::vec(extreme_word(), 1..4),
        mark in extreme_word(),
    ) {
        let mut text = format!("##[{mark}] Periode de charge\n");
        for t in &stamps {
            text.push_str(&format!("[{t}] Min.= 1, Moy.= 1, Max.= 3,  Max.Max.= 3\n"));
        }
        if let Ok(log) = read_fluctuation_log(&text, "fl.txt") {
            check_result(&log.result).unwrap();
            render_everything(&log.result);
        }
    }
}

/// F15's files, exactly: an input error naming the file, never a panic.
#[test]
fn f15_overflowing_command_lines_and_stamps_are_input_errors() {
    for cmd in [
        "cyclictest -i 18446744073709551615",
        "cyclictest -t 3 -d 18446744073709551615",
        "cyclictest -i 9223372036854775807",
        "cyclictest -i 18446744073709552",
    ] {
        let text = cyclictest_file(cmd, 3, "", "");
        let e = read_cyclictest_json(&text, "cjp.json")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("period_ns") && e.contains("out of range"),
            "{cmd}: {e}"
        );
    }
    let e = read_fluctuation_log(
        "[9223372036854775807] Min.= 1, Moy.= 1, Max.= 3, Max.Max.= 3\n\
         [-9223372036854775808] Min.= 1, Moy.= 1, Max.= 5, Max.Max.= 5\n",
        "fl5.txt",
    )
    .unwrap_err()
    .to_string();
    assert!(e.starts_with("fl5.txt: duration_s = "), "{e}");
}

/// Adversary round 5, F19: the 8192-thread bound of results.json was not
/// applied to cyclictest's files (JSON and `-h` text): 9000 threads were
/// read in full and `runs import` stored a run `runs show` refused. Every
/// reader now refuses the 8193rd thread, and the range check (which the
/// store runs too) refuses any run of more.
#[test]
fn f19_every_reader_refuses_more_than_8192_threads() {
    let max = rtshield_limits::RESULT_MAX_THREADS;
    let e = read_cyclictest_json(
        &cyclictest_file("cyclictest -q", max + 1, "", ""),
        "cj9k.json",
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("more than 8192 threads"), "{e}");
    let ok =
        read_cyclictest_json(&cyclictest_file("cyclictest -q", max, "", ""), "cj8k.json").unwrap();
    assert_eq!(ok.threads.len(), max);
    let hist = |n: usize| {
        let row = |b: usize| format!("{b:06} {}\n", vec!["1"; n].join(" "));
        let sum = |k: &str, v: &str| format!("# {k}: {}\n", vec![v; n].join(" "));
        format!(
            "# Histogram\n{}{}{}{}{}",
            row(0) + &row(1),
            sum("Total", "2"),
            sum("Min Latencies", "0"),
            sum("Avg Latencies", "1"),
            sum("Max Latencies", "1")
        )
    };
    let e = read_cyclictest_hist(&hist(max + 2), "hh9k.txt")
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("hh9k.txt:2:") && e.contains("8192"), "{e}");
    // The one check every result goes through (readers, the store).
    let mut r = example_result();
    let t = r.threads[0].clone();
    r.threads = vec![t; max + 1];
    assert!(check_result(&r).unwrap_err().contains("8193 threads"));
}
