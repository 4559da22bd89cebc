//! `rtshield measure`: bad input is refused with exit status 2 and a
//! message naming the option, before anything starts.

use crate::util::*;

/// Exit status (-1 for a signal), stdout, stderr.
fn status_text(args: &[&str]) -> (i32, String, String) {
    let o = rtshield(args);
    let (out, err) = text(&o);
    (o.status.code().unwrap_or(-1), out, err)
}

#[test]
fn bad_cpu_list() {
    measure_refused(&["--cpus", "1-x"], "--cpus 1-x");
    measure_refused(&["--cpus", "4095"], "CPU 4095 is not available");
}

#[test]
fn bad_period_and_durations() {
    measure_refused(&["--period", "0us"], "--period 0s: must be at least 1us");
    measure_refused(&["--period", "200"], "invalid duration '200'");
    measure_refused(&["--duration", "0s"], "--duration 0");
    measure_refused(
        &["--histo-size", "10s", "--resolution", "ns"],
        "more than 10 million buckets",
    );
}

#[test]
fn bad_policy_priority_mode_resolution() {
    measure_refused(&["--prio", "0"], "--prio 0: must be within 1..99");
    measure_refused(&["--prio", "100", "--policy", "rr"], "--prio 100");
    measure_refused(&["--policy", "edf"], "unknown policy 'edf'");
    measure_refused(
        &["--policy", "batch"],
        "--policy batch: expected fifo, rr or other",
    );
    measure_refused(&["--mode", "busy"], "unknown mode 'busy'");
    measure_refused(
        &["--resolution", "ms"],
        "--resolution ms: expected us or ns",
    );
}

#[test]
fn zero_samples() {
    let (code, _, err) = status_text(&["measure", "--samples", "0"]);
    assert_eq!(code, 2);
    assert!(err.contains("--samples 0: must be at least 1"), "{err}");
}

#[test]
fn bad_load_options() {
    measure_refused(&["--load-cpus", "0"], "--load-cpus needs --load NAME");
    measure_refused(&["--load", "lava"], "unknown built-in load 'lava'");
}

/// `rtshield measure … | head -1`: the reader goes away mid-run; the
/// measurement still completes and writes every file, then exits 141
/// quietly like any Unix filter. Runs as SCHED_OTHER, so no root needed.
#[test]
fn a_reader_that_goes_away_does_not_lose_the_results() {
    use std::io::BufRead;
    use std::process::Stdio;
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("m");
    let mut child = command()
        .args([
            "measure",
            "--policy",
            "other",
            "--period",
            "1ms",
            "--samples",
            "300",
        ])
        .args([
            "--stats-period",
            "100ms",
            "--no-dma-latency",
            "--no-memlock",
            "--out",
        ])
        .arg(&out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap(); // the reader is dropped here, like `head -1`
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(first.starts_with("rtshield measure"), "{first}");
    assert_eq!(o.status.code(), Some(141), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    assert_eq!(v["threads"][0]["samples"], 300);
    for f in ["timer_thread00.txt", "histogram.txt", "results.csv"] {
        assert!(out.join(f).is_file(), "{f} missing");
    }
}

#[test]
fn bad_timer() {
    measure_refused(
        &["--mode", "interval", "--timer", "itimer"],
        "--timer itimer: expected nanosleep or posix",
    );
}

/// The torture article's method (`--mode interval --timer posix`), as
/// SCHED_OTHER (no root needed): the mode is recorded, and `measure` writes
/// timeline.csv with the host columns (uptime, load average, temperature).
#[test]
fn interval_posix_mode_and_the_measure_timeline() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("m");
    let o = command()
        .args(["measure", "--policy", "other", "--period", "1ms"])
        .args(["--samples", "300", "--mode", "interval", "--timer", "posix"])
        .args([
            "--stats-period",
            "100ms",
            "--no-dma-latency",
            "--no-memlock",
        ])
        .args(["--quiet", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", describe(&o));
    let v = json(&out.join("results.json"));
    assert_eq!(v["settings"]["mode"], "interval-posix");
    assert_eq!(v["threads"][0]["samples"], 300);
    // What an interval file must hold, whatever the machine's load (no
    // timing is asserted: this VM stalls): each sample is the time between
    // two wake-ups of a timer on a fixed grid, so the intervals add up to
    // at least one period per period passed (measured or missed: the
    // grid never drifts) and to at most the run's duration.
    let t = &v["threads"][0];
    let n = t["samples"].as_u64().unwrap();
    let missed = t["missed_periods"].as_u64().unwrap();
    assert_eq!(t["period_ns"], 1_000_000);
    let (min, avg, max) = (
        t["min_ns"].as_f64().unwrap(),
        t["avg_ns"].as_f64().unwrap(),
        t["max_ns"].as_f64().unwrap(),
    );
    assert!(0.0 < min && min <= avg && avg <= max, "{t}");
    // 1 µs for the rounding of avg_ns.
    let sum = avg * n as f64;
    let grid = ((n + missed) * 1_000_000) as f64;
    assert!(
        sum + 1_000.0 >= grid,
        "intervals {sum} ns < {} periods",
        n + missed
    );
    let run = v["duration_s"].as_f64().unwrap() * 1e9;
    assert!(
        sum <= run + 1_000.0,
        "intervals {sum} ns > the run's {run} ns"
    );
    // Every sample is in the histogram or beyond it.
    let h = &t["histogram"];
    let binned: u64 = h["counts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c[1].as_u64().unwrap())
        .sum();
    let beyond = h["overflow"].as_u64().unwrap() + h["underflow"].as_u64().unwrap();
    assert_eq!(binned + beyond, n, "{h}");
    let t = std::fs::read_to_string(out.join("timeline.csv")).unwrap();
    let (_, recs) = rtshield_results::read_timeline(&t, "timeline.csv").unwrap();
    assert!(!recs.is_empty(), "{t}");
    let last = recs.last().unwrap();
    assert_eq!(last.samples, Some(300), "{t}");
    // The running count never goes back.
    assert!(recs.windows(2).all(|w| w[0].samples <= w[1].samples), "{t}");
    assert_eq!(last.phase, "none");
    assert!(last.host.uptime_s.is_some_and(|u| u > 0.0), "{t}");
    assert!(last.host.loadavg.is_some(), "{t}");
}

/// Adversary round 3 (N3): `noise --json FILE/` and `measure
/// --metrics-file FILE/` name a directory, as `measure --json FILE/` does:
/// refused (exit 2, naming the option), the existing FILE untouched (its
/// `/` was dropped and FILE overwritten).
#[test]
fn a_file_option_ending_in_a_slash_names_no_file() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("precious");
    std::fs::write(&f, "precious\n").unwrap();
    let slashed = format!("{}/", f.display());
    let out = d.path().join("m");
    for (args, opt) in [
        (
            vec![
                "noise",
                "--cpus",
                "0",
                "--duration",
                "1s",
                "--json",
                &slashed,
            ],
            "--json",
        ),
        (
            vec![
                "measure",
                "--samples",
                "1",
                "--out",
                out.to_str().unwrap(),
                "--metrics-file",
                &slashed,
            ],
            "--metrics-file",
        ),
    ] {
        let o = rtshield(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(opt) && err.contains("it names a directory, not a file"),
            "{err}"
        );
        assert_eq!(
            std::fs::read_to_string(&f).unwrap(),
            "precious\n",
            "{args:?}"
        );
    }
    assert!(!out.exists(), "measure started");
}

/// Adversary round 3 (C11): `--partition-parent` with a `.` or `..`
/// component is refused at parse time (exit 2 naming the option): measure
/// wrote its PID and TIDs into the `tasks` files of `../../tmp/X/fake/rt`,
/// ordinary files outside the cgroup tree. `/` (the whole machine's
/// partition, which a campaign passes) stays accepted by the parser.
#[test]
fn partition_parent_with_dot_dot_is_refused() {
    for p in ["..", "../../../../tmp/x/fake", "a/../b", "./a", "a\nb"] {
        measure_refused(
            &["--partition", "--partition-parent", p],
            "--partition-parent",
        );
    }
}
