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
    // A results.json of kind noise.
    assert_eq!(run["schema"], "rtshield.results/2");
    assert_eq!(run["kind"], "noise");
    assert_eq!(run["end_reason"], "duration");
    // The drift watch ran beside the spinning threads and says so (in the
    // file and on the terminal), whatever it saw.
    assert!(run["drift"].is_array(), "{}", run["drift"]);
    assert!(run["drift_watch"].is_object(), "{}", run["drift_watch"]);
    assert!(out.contains("drift: "), "{out}");
    let n = &run["noise"];
    assert_eq!(n["threshold_ns"], 1000);
    assert!(n["trace"].is_null());
    let c = &n["cpus"][0];
    let t = &run["threads"][0];
    assert_eq!(t["cpu"], 0);
    assert_eq!(t["samples"], c["events"]);
    // Meaningless for a spinning thread: unknown (null), never 0.
    for k in ["cur_ns", "overruns", "missed_periods", "corrected"] {
        assert!(t[k].is_null(), "{k}: {}", t[k]);
    }
    // No internal "none yet" value reaches the file as a number.
    let text = std::fs::read_to_string(&file).unwrap();
    for sentinel in [u64::MAX.to_string(), i64::MAX.to_string()] {
        assert!(!text.contains(&sentinel), "{sentinel} in {text}");
    }
    assert_eq!(t["max_ns"], c["max_single_ns"]);
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
    let h = &t["histogram"];
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
    for k in [
        "classes",
        "by_class",
        "unexplained_ns",
        "class_ns",
        "offenders",
    ] {
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
        run["noise"]["trace"]["unavailable"].as_str().is_some(),
        "{}",
        run["noise"]["trace"]
    );
    assert!(run["noise"]["cpus"][0]["classes"].is_null());
}

/// `rtshield ARGS` with the store on (`--store` names a file of the test's).
fn storing(args: &[&str]) -> std::process::Output {
    command()
        .args(args)
        .env_remove("RTSHIELD_NO_STORE")
        .output()
        .unwrap()
}

/// `noise --out DIR` writes the result family (results.json of kind
/// noise, results.csv, histogram.txt); `export` turns it into JSON,
/// OpenMetrics and Prometheus text that promtool accepts and refuses the
/// latency formats; `report` renders the table, the histogram and the
/// cause breakdown; the store keeps it and `runs compare` judges the share
/// available (unknown against a latency run).
#[test]
fn a_noise_run_is_a_result_family_exported_reported_and_compared() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("n1");
    let store = d.path().join("runs.db");
    let o = storing(&[
        "noise",
        "--cpus",
        "0",
        "--duration",
        "200ms",
        "-q",
        "--out",
        out.to_str().unwrap(),
        "--store",
        store.to_str().unwrap(),
        "--tag",
        "side=a",
    ]);
    let (so, se) = text(&o);
    assert!(o.status.success(), "{so} {se}");
    assert!(so.contains("stored as run 1"), "{so}");
    for f in ["results.json", "results.csv", "histogram.txt"] {
        assert!(out.join(f).is_file(), "{f} missing");
    }
    let run = json(&out.join("results.json"));
    assert_eq!(run["kind"], "noise");
    assert_eq!(run["label"], "n1");
    assert_eq!(run["tags"]["side"], "a");
    let hist = std::fs::read_to_string(out.join("histogram.txt")).unwrap();
    assert!(hist.contains("# Histogram"), "{hist}");
    assert!(hist.contains("mode=noise"), "{hist}");
    exports_of_a_noise_run(d.path(), &out, &run);
    // The report: table, histogram, cause breakdown picture.
    let rep = d.path().join("rep");
    let r = rtshield(&["report", out.to_str().unwrap(), "-o", rep.to_str().unwrap()]);
    assert!(r.status.success(), "{}", describe(&r));
    let nt = std::fs::read_to_string(rep.join("noise.txt")).unwrap();
    assert!(nt.contains("MAX-SINGLE"), "{nt}");
    assert!(nt.contains("# noise length histogram"), "{nt}");
    let png = std::fs::read(rep.join("noise-causes.png")).unwrap();
    assert!(png.starts_with(b"\x89PNG"));
    compare_noise_runs(d.path(), &store);
}

/// `export` of the noise run in `out` (results.json `run`): JSON as it is,
/// OpenMetrics and Prometheus text of the noise families (promtool accepts
/// both), the latency formats refused.
fn exports_of_a_noise_run(d: &std::path::Path, out: &std::path::Path, run: &serde_json::Value) {
    // Exports.
    let exp = |fmt: &str, extra: &[&str]| {
        let mut a = vec!["export", "--format", fmt];
        a.extend_from_slice(extra);
        a.push(out.to_str().unwrap());
        rtshield(&a)
    };
    let j = exp("json", &[]);
    assert!(j.status.success());
    let back: serde_json::Value = serde_json::from_slice(&j.stdout).unwrap();
    assert_eq!(&back, run);
    let om = exp("openmetrics", &[]);
    let om = String::from_utf8(om.stdout).unwrap();
    assert!(
        om.contains("rtshield_noise_cpu_available_ratio{cpu=\"0\"}"),
        "{om}"
    );
    assert!(
        om.contains("rtshield_noise_seconds_bucket{cpu=\"0\",le=\"+Inf\"}"),
        "{om}"
    );
    assert!(!om.contains("rtshield_latency"), "{om}");
    assert!(om.ends_with("# EOF\n"));
    let j = exp("junit", &[]);
    assert_eq!(j.status.code(), Some(2));
    assert!(text(&j).1.contains("a noise run"), "{}", text(&j).1);
    if require_tool("promtool", "--version") {
        let prom = d.join("n.prom");
        std::fs::write(&prom, exp("prometheus", &[]).stdout).unwrap();
        let c = std::process::Command::new("promtool")
            .args(["check", "metrics"])
            .stdin(std::fs::File::open(&prom).unwrap())
            .output()
            .unwrap();
        assert!(
            c.status.success(),
            "promtool check metrics: {}",
            describe(&c)
        );
        let om = d.join("n.om");
        std::fs::write(&om, exp("openmetrics", &["--timestamps"]).stdout).unwrap();
        let tsdb = d.join("tsdb");
        let c = std::process::Command::new("promtool")
            .args(["tsdb", "create-blocks-from", "openmetrics"])
            .arg(&om)
            .arg(&tsdb)
            .output()
            .unwrap();
        assert!(c.status.success(), "promtool tsdb import: {}", describe(&c));
    }
}

/// The store holds noise run `side=a`; add a second noise run and a latency
/// run: the comparison has the share available, unknown against the
/// latency run, and the table says it too.
fn compare_noise_runs(d: &std::path::Path, store: &std::path::Path) {
    // has the share available, unknown against the latency run.
    let o = storing(&[
        "noise",
        "--cpus",
        "0",
        "--duration",
        "200ms",
        "-q",
        "--store",
        store.to_str().unwrap(),
        "--tag",
        "side=b",
    ]);
    assert!(o.status.success(), "{}", describe(&o));
    let cmp = rtshield(&[
        "runs",
        "--store",
        store.to_str().unwrap(),
        "compare",
        "side=a",
        "side=b",
        "--json",
    ]);
    assert!(cmp.status.success(), "{}", describe(&cmp));
    let c: serde_json::Value = serde_json::from_slice(&cmp.stdout).unwrap();
    let av = &c["available"];
    assert!(
        av["a_pct"].as_f64().is_some() && av["b_pct"].as_f64().is_some(),
        "{c}"
    );
    assert_ne!(av["verdict"], "unknown", "{c}");
    assert!(
        c["rows"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["stat"] == "max"),
        "{c}"
    );
    let lat = d.join("lat");
    let m = storing(&[
        "measure",
        "--cpus",
        "0",
        "--period",
        "1ms",
        "--duration",
        "200ms",
        "-q",
        "--out",
        lat.to_str().unwrap(),
        "--store",
        store.to_str().unwrap(),
        "--tag",
        "side=lat",
    ]);
    assert!(m.status.success(), "{}", describe(&m));
    let cmp = rtshield(&[
        "runs",
        "--store",
        store.to_str().unwrap(),
        "compare",
        "side=a",
        "side=lat",
        "--json",
    ]);
    assert!(cmp.status.success(), "{}", describe(&cmp));
    let c: serde_json::Value = serde_json::from_slice(&cmp.stdout).unwrap();
    assert_eq!(c["available"]["verdict"], "unknown", "{c}");
    assert!(c["available"]["b_pct"].is_null(), "{c}");
    assert!(c["available"]["a_pct"].as_f64().is_some(), "{c}");
    // The table says it too.
    let t = rtshield(&[
        "runs",
        "--store",
        store.to_str().unwrap(),
        "compare",
        "side=a",
        "side=b",
    ]);
    assert!(text(&t).0.contains("% available"), "{}", text(&t).0);
}
