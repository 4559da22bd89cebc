//! `rtshield measure --trace-on/--trace-stop/--split/--trace-buffer-kb`
//! without a real trace: bad values are refused (exit 2, the option named,
//! nothing measured), and where tracing is impossible the reason is said
//! once and the run measures without it.

use crate::util::*;

#[test]
fn bad_trace_options_are_refused() {
    measure_refused(
        &["--trace-on", "2s"],
        "--trace-on 2s: must be within 1us..1s",
    );
    measure_refused(
        &["--trace-on", "500ns"],
        "--trace-on 500ns: must be within 1us..1s",
    );
    measure_refused(&["--trace-on", "x"], "invalid duration 'x'");
    measure_refused(&["--trace-stop"], "--trace-stop needs --trace-on DUR");
    measure_refused(
        &["--split", "--trace-buffer-kb", "0"],
        "--trace-buffer-kb 0: must be within 1..1048576",
    );
    measure_refused(
        &["--trace-on", "1ms", "--trace-buffer-kb", "2000000"],
        "--trace-buffer-kb 2000000: must be within 1..1048576",
    );
    measure_refused(
        &["--trace-buffer-kb", "64"],
        "--trace-buffer-kb needs --trace-on DUR or --split",
    );
}

/// A tree without tracefs: one message, the run measures anyway, and the
/// result files say why there is no trace.
#[test]
fn without_tracefs_the_reason_is_said_once_and_the_run_measures() {
    let root = fake_root("0-1");
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("m");
    let o = rtshield_at(
        root.path(),
        &[
            "measure",
            "--policy",
            "other",
            "--period",
            "1ms",
            "--samples",
            "50",
            "--no-dma-latency",
            "--no-memlock",
            "--quiet",
            "--trace-on",
            "100us",
            "--split",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    let (stdout, err) = text(&o);
    assert!(o.status.success(), "{stdout}{err}");
    let why = "this kernel has no tracefs (CONFIG_TRACING is off)";
    assert_eq!(err.matches("tracing off").count(), 1, "said once: {err}");
    assert!(
        err.contains(&format!(
            "rtshield: tracing off: {why}; measuring without it"
        )),
        "{err}"
    );
    let r = results(&out);
    assert_eq!(r["threads"][0]["samples"], 50);
    assert_eq!(r["trace"]["unavailable"], why);
    assert!(r["threads"][0].get("split").is_none());
    // No instance: the buffer's losses are unknown (null), not 0; its
    // size was chosen (1 ms: the 256 KiB floor), not given.
    assert!(r["trace"]["overrun_events"].is_null(), "{}", r["trace"]);
    assert!(r["trace"]["dropped_events"].is_null());
    assert_eq!(r["trace"]["buffer_kb"], 256);
    assert_eq!(r["trace"]["buffer_auto"], true);
    let txt = std::fs::read_to_string(out.join("spikes.txt")).unwrap();
    assert!(txt.starts_with(&format!("# no trace: {why}\n")), "{txt}");
    assert!(
        stdout.contains(&format!("Trace: no trace: {why}")),
        "{stdout}"
    );
    let sp = json(&out.join("spikes.json"));
    assert_eq!(sp["spikes"].as_array().unwrap().len(), 0);
}

/// `run` with trace.* keys on the same tree: the same, through the config.
#[test]
fn run_trace_keys_reach_the_pipeline() {
    let root = fake_root("0-1");
    let d = tempfile::tempdir().unwrap();
    let cfg = write_cfg(
        d.path(),
        "t.cfg",
        "main {\n  trace.on_latency 100us\n  trace.buffer_kb 64\n  stats.checkpoint off\n}\ntimer_thread[0] {\n  cpu_affinity 1\n  period 1ms\n  lifetime.samples 30\n}\n",
    );
    let out = d.path().join("r");
    let o = rtshield_at(
        root.path(),
        &[
            "run",
            cfg.to_str().unwrap(),
            "--quiet",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    let (stdout, err) = text(&o);
    assert!(o.status.success(), "{stdout}{err}");
    let r = results(&out);
    assert_eq!(r["trace"]["on_latency_ns"], 100_000);
    assert_eq!(r["trace"]["buffer_kb"], 64);
    assert!(r["trace"]["unavailable"].is_string());
    assert!(out.join("spikes.txt").exists());
}
