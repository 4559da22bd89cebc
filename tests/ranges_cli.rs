// Issue 11, "values that overflow or make no sense": the ranges of simulate,
// scenario, measure, stat and run's configuration keys (docs/ranges.md). Each
// bad value is exit 2 naming the option or FILE:LINE:COL, before anything
// runs; every case runs under a deadline so a hang fails instead of blocking.
// On the code before this change, each of these exited 0, hung or panicked.
use crate::util::*;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// Run `args` with a deadline; it must exit 2 naming `needle`, print nothing
/// on stdout, and create none of `untouched`.
fn refused(args: &[&str], needle: &str, untouched: &[&Path]) {
    let mut child = command()
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("{args:?} did not end (a hang, not a refusal)");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let o = child.wait_with_output().unwrap();
    crate::util::refused(&o, needle);
    assert!(o.stdout.is_empty(), "{args:?} printed: {}", describe(&o));
    for p in untouched {
        assert!(!p.exists(), "{args:?} created {}", p.display());
    }
}

#[test]
fn simulate_options_out_of_range_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let j = json.to_str().unwrap();
    let scn = example("scenarios/irq.scn");
    let s = scn.to_str().unwrap();
    for (extra, needle) in [
        (
            &["--balancer", "artis", "--artis-k", "0"][..],
            "--artis-k 0",
        ),
        (
            &["--balancer", "artis", "--artis-k", "101"],
            "--artis-k 101",
        ),
        (&["--start-jitter", "106752d"], "--start-jitter"),
        (&["--start-jitter", "2s"], "--start-jitter"),
        (&["--duration", "0s"], "--duration"),
        (&["--duration", "2h"], "--duration"),
        (&["--migration-cost", "106752d"], "--migration-cost"),
        (&["--lock-cost", "2s"], "--lock-cost"),
        (&["--fifo-cost", "2s"], "--fifo-cost"),
        (&["--mask-len", "2s"], "--mask-len"),
        (&["--cache-decay", "2h"], "--cache-decay"),
        (&["--artis-c", "2s"], "--artis-c"),
        (&["--artis-c", "18446744073709551615ticks"], "--artis-c"),
        (&["--tick", "1ns"], "--tick"),
        (&["--tick", "1s"], "--tick"),
        (&["--cpus", "0"], "--cpus"),
        (&["--cpus", "1025"], "--cpus"),
        (&["--cpus", "2", "--rt-cpus", "3"], "--rt-cpus"),
        (&["--loops-per-us", "1e308"], "--loops-per-us"),
        (&["--loops-per-us", "0"], "--loops-per-us"),
        (&["--max-events", "0"], "--max-events"),
        (&["--max-events", "999"], "--max-events"),
        (&["--max-events", "100000000001"], "--max-events"),
        (&["--max-events", "18446744073709551616"], "--max-events"),
        (&["--max-events", "many"], "--max-events"),
    ] {
        let mut args = vec!["simulate", s, "--json", j];
        args.extend_from_slice(extra);
        refused(&args, needle, &[&json]);
    }
}

#[test]
fn simulate_scenario_values_out_of_range_name_their_position() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let j = json.to_str().unwrap();
    for (name, text, needle) in [
        (
            "loop.scn",
            "{\ncpu_mask = 0x1\nloop = 18446744073709551615\n}\n",
            "loop.scn:3:8:",
        ),
        (
            "sleep.scn",
            "{\nloop = 100\nsloop = 10\nsleep = 213503d\n}\n",
            "sleep.scn:4:9:",
        ),
        (
            "timeout.scn",
            "timeout = 213503d\n{\nloop = 100\n}\n",
            "timeout.scn:1:11:",
        ),
        (
            "lpus.scn",
            "loops_per_us = 1e308\n{\nloop = 100\n}\n",
            "lpus.scn:1:16:",
        ),
        // Valid iterations, but more than the simulator's 1 h of work at 0.1/µs.
        ("work.scn", "{\nloop = 100000000000\n}\n", "work.scn:1:1:"),
        // A masking call every nanosecond would flood the event queue.
        (
            "irq.scn",
            "loops_per_us = 1000\n{\nloop = 1000000000\nirq_period = 1\n}\n",
            "irq.scn:2:1:",
        ),
    ] {
        let p = write_cfg(dir.path(), name, text);
        refused(
            &["simulate", p.to_str().unwrap(), "--json", j],
            needle,
            &[&json],
        );
    }
}

#[test]
fn scenario_scale_loops_and_timeout_out_of_range_are_refused() {
    let scn = example("scenarios/irq.scn");
    let s = scn.to_str().unwrap();
    for (extra, needle) in [
        (&["--scale", "1e308"][..], "--scale"),
        (&["--scale", "1e-9"], "--scale"),
        (&["--loops-per-us", "1e308"], "--loops-per-us"),
        (&["--timeout", "0s"], "--timeout"),
        (&["--timeout", "213503d"], "--timeout"),
    ] {
        let mut args = vec!["scenario", s, "--check"];
        args.extend_from_slice(extra);
        refused(&args, needle, &[]);
    }
    // Within range, but a scaled loop beyond 10^12 iterations is refused too.
    let dir = tempfile::tempdir().unwrap();
    let p = write_cfg(dir.path(), "big.scn", "{\nloop = 1000000000000\n}\n");
    refused(
        &["scenario", p.to_str().unwrap(), "--check", "--scale", "10"],
        "--scale 10",
        &[],
    );
}

#[test]
fn measure_stats_period_and_max_latency_out_of_range_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = out.to_str().unwrap();
    for (extra, needle) in [
        (&["--stats-period", "1ns"][..], "--stats-period"),
        (&["--stats-period", "213503d"], "--stats-period"),
        (&["--max-latency", "0us"], "--max-latency"),
        (&["--max-latency", "2h"], "--max-latency"),
    ] {
        let mut args = vec!["measure", "--samples", "1", "--out", o];
        args.extend_from_slice(extra);
        refused(&args, needle, &[&out]);
    }
}

#[test]
fn stat_interval_count_and_top_out_of_range_are_refused() {
    for (args, needle) in [
        (
            &["stat", "--interval", "1000d", "--count", "1"][..],
            "--interval",
        ),
        (&["stat", "--interval", "1ms", "--count", "1"], "--interval"),
        (&["stat", "--count", "0"], "--count"),
        (&["stat", "--count", "1000000001"], "--count"),
        (&["stat", "--top", "100001", "--count", "1"], "--top"),
    ] {
        refused(args, needle, &[]);
    }
}

#[test]
fn run_check_refuses_keys_out_of_range_with_their_position() {
    let dir = tempfile::tempdir().unwrap();
    for (text, needle) in [
        ("main {\n  start.delay 213503d\n}\n", "c.cfg:2:15:"),
        (
            "main {\n}\nprogram[0] {\n  cmdline sleep 1\n  start.delay 2d\n}\n",
            "c.cfg:5:15:",
        ),
        ("main {\n  stats.period 213503d\n}\n", "c.cfg:2:16:"),
        ("main {\n  stats.period 1 ms\n}\n", "c.cfg:2:16:"),
        ("main {\n  load.cycle 1 ns 1 ns\n}\n", "c.cfg:2:14:"),
        ("main {\n  load.cycle 1 s 213503d\n}\n", "c.cfg:2:14:"),
        (
            "main {\n}\nprogram[0] {\n  cmdline sleep 1\n  load.cycle 2d 1 s\n}\n",
            "c.cfg:5:14:",
        ),
        (
            "timer_thread[0] {\n  lifetime.samples 1000000000001\n}\n",
            "c.cfg:2:20:",
        ),
        ("main {\n  dbg_level 10\n}\n", "c.cfg:2:13:"),
        ("main {\n  cpu_dma_latency 2\n}\n", "c.cfg:2:19:"),
    ] {
        let p = write_cfg(dir.path(), "c.cfg", text);
        refused(&["run", "--check", p.to_str().unwrap()], needle, &[]);
    }
}

#[test]
fn partition_pid_zero_and_unknown_knobs_are_refused_before_any_write() {
    let root = fake_root("0-3");
    let r = root.path().to_str().unwrap();
    for (args, needle) in [
        (&["partition", "move", "rt", "0"][..], "'0' is not a PID"),
        (
            &["partition", "move", "rt", "4194305"],
            "'4194305' is not a PID",
        ),
        (
            &["partition", "create", "1", "--skip", "irqs"],
            "--skip/--with",
        ),
        (
            &["partition", "create", "1", "--with", "sysctls"],
            "--skip/--with",
        ),
    ] {
        let mut full = vec!["--sysroot", r];
        full.extend_from_slice(args);
        refused(&full, needle, &[]);
    }
}
