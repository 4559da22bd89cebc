//! `rtshield noise` without a trace: every option's range is checked before
//! anything spins (exit 2, the option named), and a short untraced run
//! writes the JSON document with unknown figures absent, not 0.

use crate::util::*;

/// `noise ARGS` is refused with exit 2 and a message holding `needle`,
/// before any measurement (no table printed, no file written).
fn refused(args: &[&str], needle: &str) {
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("n.json");
    let mut a = vec!["noise", "--json", file.to_str().unwrap()];
    a.extend_from_slice(args);
    let o = rtshield(&a);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {out} {err}");
    assert!(err.contains(needle), "{args:?}: {err:?} lacks {needle:?}");
    assert!(out.is_empty(), "{args:?} measured: {out}");
    assert!(!file.exists());
}

#[test]
fn every_range_is_checked_before_spinning() {
    refused(&["--duration", "1s"], "--cpus");
    refused(&["--cpus", "x"], "--cpus x:");
    refused(&["--cpus", "4000"], "--cpus: CPU 4000 is not available");
    refused(
        &["--cpus", "0", "--threshold", "10ns"],
        "--threshold 10ns: must be within 100ns..1s",
    );
    refused(
        &["--cpus", "0", "--threshold", "2s"],
        "--threshold 2s: must be within 100ns..1s",
    );
    refused(&["--cpus", "0", "--threshold", "x"], "--threshold");
    refused(
        &["--cpus", "0", "--duration", "1ms"],
        "--duration 1ms: must be within 10ms..365d",
    );
    refused(
        &["--cpus", "0", "--period", "0s"],
        "--period 0s: must be within 1ms..1h",
    );
    refused(
        &["--cpus", "0", "--period", "2h"],
        "--period 2h: must be within 1ms..1h",
    );
    refused(
        &["--cpus", "0", "--runtime", "2s"],
        "--runtime 2s is longer than --period 1s",
    );
    refused(
        &["--cpus", "0", "--prio", "0"],
        "--prio 0: must be within 1..99",
    );
    refused(
        &["--cpus", "0", "--prio", "100"],
        "--prio 100: must be within 1..99",
    );
    refused(&["--cpus", "0", "--prio", "x"], "--prio");
    refused(
        &["--cpus", "0", "--prio", "10", "--runtime", "990ms"],
        "with --prio the spinning thread (SCHED_FIFO) may use at most 95 % of each period",
    );
    refused(
        &[
            "--cpus",
            "0",
            "--prio",
            "10",
            "--runtime",
            "20s",
            "--period",
            "40s",
        ],
        "--runtime 20s: with --prio at most 10s at a time",
    );
    refused(&["--cpus", "0", "--trace-buffer-kb", "64"], "--trace");
    refused(
        &["--cpus", "0", "--trace", "--trace-buffer-kb", "0"],
        "--trace-buffer-kb 0: must be within 1..1048576",
    );
    refused(
        &["--cpus", "0", "--top", "101"],
        "--top 101: must be within 0..100",
    );
}

#[test]
fn a_json_file_in_a_missing_directory_is_refused_first() {
    let o = rtshield(&[
        "noise",
        "--cpus",
        "0",
        "--duration",
        "10ms",
        "--json",
        "/nonexistent/dir/n.json",
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out} {err}");
    assert!(err.contains("--json /nonexistent/dir/n.json"), "{err}");
    assert!(out.is_empty());
}

#[test]
fn an_untraced_run_writes_what_it_measured_and_leaves_causes_unknown() {
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("n.json");
    let o = rtshield(&[
        "noise",
        "--cpus",
        "0",
        "--duration",
        "200ms",
        "-q",
        "--json",
        file.to_str().unwrap(),
    ]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out} {err}");
    assert!(out.lines().next().unwrap().contains("MAX-SINGLE"), "{out}");
    assert!(out.contains("causes: run with --trace"), "{out}");
    let run = json(&file);
    assert_eq!(run["schema"], "rtshield.noise/0");
    assert_eq!(run["end_reason"], "duration");
    assert_eq!(run["threshold_ns"], 1000);
    assert!(run["trace"].is_null());
    let c = &run["cpus"][0];
    assert_eq!(c["cpu"], 0);
    assert_eq!(c["policy"], "other");
    assert!(c["priority"].is_null());
    let runtime = c["runtime_ns"].as_u64().unwrap();
    let noise = c["noise_ns"].as_u64().unwrap();
    assert!(runtime > 0 && noise <= runtime, "{c}");
    let avail = c["available_pct"].as_f64().unwrap();
    let want = 100.0 * (runtime - noise) as f64 / runtime as f64;
    assert!((avail - want).abs() < 1e-9, "{avail} vs {want}");
    assert!(c["iterations"].as_u64().unwrap() > 0);
    // Every event counted is in the histogram (none lost here) and the
    // longest list is sorted, led by the maximum.
    assert_eq!(c["lost"], 0);
    let h = &c["histogram"];
    let inside: u64 = h["counts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p[1].as_u64().unwrap())
        .sum();
    assert_eq!(
        inside + h["overflow"].as_u64().unwrap(),
        c["events"].as_u64().unwrap()
    );
    let longest: Vec<u64> = c["longest"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["len_ns"].as_u64().unwrap())
        .collect();
    assert!(longest.windows(2).all(|w| w[0] >= w[1]), "{longest:?}");
    if let Some(first) = longest.first() {
        assert_eq!(*first, c["max_single_ns"].as_u64().unwrap());
    }
    // Not traced: no class counts, no offenders, no causes (unknown, not 0).
    for k in ["classes", "by_class", "unexplained_ns", "offenders"] {
        assert!(c[k].is_null(), "{k}: {}", c[k]);
    }
    assert!(c["longest"]
        .as_array()
        .unwrap()
        .iter()
        .all(|g| g["class"].is_null()));
}

/// A tree without tracefs: the reason is said once, the run measures.
#[test]
fn without_tracefs_the_reason_is_said_and_the_run_measures() {
    let root = fake_root("0-1");
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("n.json");
    let o = rtshield_at(
        root.path(),
        &[
            "noise",
            "--cpus",
            "0",
            "--duration",
            "100ms",
            "--trace",
            "-q",
            "--json",
            file.to_str().unwrap(),
        ],
    );
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out} {err}");
    assert_eq!(err.matches("tracing off:").count(), 1, "{err}");
    let run = json(&file);
    assert!(
        run["trace"]["unavailable"].as_str().is_some(),
        "{}",
        run["trace"]
    );
    assert!(run["cpus"][0]["classes"].is_null());
}
