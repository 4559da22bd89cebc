//! `rtshield export` and the CI outputs of `measure` (`--json-format
//! cyclictest`, `--metrics-file`), from the command line.

use crate::util::{command, describe, poll, Kill};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

fn real_run() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/report/real/idle")
}

fn export(args: &[&str]) -> std::process::Output {
    command()
        .arg("export")
        .arg(real_run())
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn every_format_to_stdout_and_to_a_file() {
    let d = tempfile::tempdir().unwrap();
    for (fmt, check) in [
        ("cyclictest-json", "\"return_code\": 0"),
        (
            "junit",
            "<testsuites>\n  <testsuite name=\"rtshield latency",
        ),
        (
            "openmetrics",
            "rtshield_latency_seconds_count{cpu=\"1\",thread=\"0\"}",
        ),
        ("prometheus", "# TYPE rtshield_samples_total counter\n"),
        ("kcidb", "\"major\": 5"),
    ] {
        let o = export(&["--format", fmt]);
        assert!(o.status.success(), "{}", describe(&o));
        let text = String::from_utf8(o.stdout).unwrap();
        assert!(text.contains(check), "{fmt}: {text}");
        let f = d.path().join(format!("out.{fmt}"));
        let o = export(&["--format", fmt, "-o", f.to_str().unwrap()]);
        assert!(o.status.success(), "{}", describe(&o));
        assert_eq!(std::fs::read_to_string(&f).unwrap(), text, "{fmt}");
    }
    // results.json itself is accepted too.
    let o = command()
        .arg("export")
        .arg(real_run().join("results.json"))
        .args(["--format", "junit", "--max-latency", "10us"])
        .output()
        .unwrap();
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.contains("failures=\"1\""), "{text}");
}

#[test]
fn bad_input_is_exit_2_and_writes_nothing() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("x.xml");
    let cases: [(&[&str], &str); 4] = [
        (
            &["--format", "junit", "--max-latency", "2h"],
            "--max-latency 2h",
        ),
        (
            &["--format", "kcidb", "--build-id", "no colon"],
            "--build-id",
        ),
        (&["--format", "yaml"], "invalid value 'yaml'"),
        (&["--format", "junit", "--timestamps"], "--timestamps"),
    ];
    for (args, needle) in cases {
        let mut a = args.to_vec();
        a.extend(["-o", out.to_str().unwrap()]);
        let o = export(&a);
        assert_eq!(o.status.code(), Some(2), "{}", describe(&o));
        assert!(
            String::from_utf8_lossy(&o.stderr).contains(needle),
            "{}",
            describe(&o)
        );
        assert!(!out.exists());
    }
    let bad = d.path().join("bad.json");
    std::fs::write(&bad, "{\"schema\": \"rtshield-results/1\",\n  \"tool\": 3}").unwrap();
    let o = command()
        .arg("export")
        .arg(&bad)
        .args(["--format", "junit"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", describe(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("bad.json:"),
        "{}",
        describe(&o)
    );
}

/// `--metrics-file` is rewritten while the run goes on (checked before
/// the run is stopped), and holds the final figures at the end.
/// SCHED_OTHER: no root needed.
#[test]
fn metrics_file_is_rewritten_during_the_run() {
    let d = tempfile::tempdir().unwrap();
    let prom = d.path().join("rtshield.prom");
    let cj = d.path().join("cyclictest.json");
    let out = d.path().join("m");
    let child = command()
        .args(["measure", "--policy", "other", "--period", "1ms"])
        .args(["--duration", "60s", "--stats-period", "100ms", "-q"])
        .args(["--no-dma-latency", "--no-memlock", "--json"])
        .arg(&cj)
        .args(["--json-format", "cyclictest", "--metrics-file"])
        .arg(&prom)
        .arg("--out")
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut child = Kill(child);
    let samples = |text: &str| -> Option<u64> {
        text.lines()
            .find(|l| l.starts_with("rtshield_samples_total{"))?
            .rsplit_once(' ')?
            .1
            .parse()
            .ok()
    };
    // Two different non-empty versions while the run goes on.
    let first = poll(Duration::from_secs(30), "a first metrics file", || {
        let t = std::fs::read_to_string(&prom).ok()?;
        samples(&t).filter(|&n| n > 0)
    });
    poll(Duration::from_secs(30), "a rewritten metrics file", || {
        let t = std::fs::read_to_string(&prom).ok()?;
        assert!(t.ends_with("# EOF\n"), "a whole file: {t}");
        samples(&t).filter(|&n| n > first)
    });
    assert!(
        child.0.try_wait().unwrap().is_none(),
        "the run was still going"
    );
    // SAFETY: SIGINT to the child this test started.
    unsafe { libc::kill(child.0.id() as i32, libc::SIGINT) };
    let st = child.0.wait().unwrap();
    assert!(st.success(), "{st:?}");
    let res: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    let n = res["threads"][0]["samples"].as_u64().unwrap();
    let t = std::fs::read_to_string(&prom).unwrap();
    assert_eq!(samples(&t), Some(n), "the final figures");
    let c: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&cj).unwrap()).unwrap();
    assert_eq!(c["thread"]["0"]["cycles"].as_u64(), Some(n));
    assert_eq!(c["return_code"], 0);
}

#[test]
fn json_format_needs_json_and_metrics_dir_must_exist() {
    let o = command()
        .args(["measure", "--json-format", "cyclictest", "--samples", "1"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", describe(&o));
    let d = tempfile::tempdir().unwrap();
    let o = command()
        .args(["measure", "--policy", "other", "--samples", "1", "--out"])
        .arg(d.path().join("o"))
        .arg("--metrics-file")
        .arg(d.path().join("nodir/x.prom"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", describe(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("--metrics-file"),
        "{}",
        describe(&o)
    );
    assert!(!d.path().join("o").exists(), "nothing made");
}

/// `rtshield run --metrics-file`: rewritten during the run, final at the
/// end (SCHED_OTHER: no root needed).
#[test]
fn run_writes_the_metrics_file_too() {
    let d = tempfile::tempdir().unwrap();
    let cfg = crate::util::write_cfg(
        d.path(),
        "m.cfg",
        "main\n{\n  stats.period 100 ms\n}\ntimer_thread[0]\n{\n  cpu_affinity 0\n  sched.policy OTHER\n  period 1 ms\n  lifetime.duration 60 s\n}\n",
    );
    let prom = d.path().join("run.prom");
    let out = d.path().join("out");
    let child = command()
        .args(["run", "-q"])
        .arg(&cfg)
        .arg("--out")
        .arg(&out)
        .arg("--metrics-file")
        .arg(&prom)
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let mut child = Kill(child);
    poll(
        Duration::from_secs(30),
        "a metrics file during the run",
        || {
            let t = std::fs::read_to_string(&prom).ok()?;
            t.contains("rtshield_samples_total{cpu=\"0\",thread=\"0\"}")
                .then_some(())
        },
    );
    assert!(
        child.0.try_wait().unwrap().is_none(),
        "the run was still going"
    );
    // SAFETY: SIGINT to the child this test started.
    unsafe { libc::kill(child.0.id() as i32, libc::SIGINT) };
    assert!(child.0.wait().unwrap().success());
    let res = crate::util::results(&out);
    let n = res["threads"][0]["samples"].as_u64().unwrap();
    let t = std::fs::read_to_string(&prom).unwrap();
    assert!(
        t.contains(&format!(
            "rtshield_samples_total{{cpu=\"0\",thread=\"0\"}} {n}\n"
        )),
        "{t}"
    );
}

// Issue 22: one regression test per finding of exports (each failed on the
// code before the fix; see docs/formats.md for the rules).

/// `rtshield export DIR --format FMT ARGS` to standard output: its text.
fn export_of(dir: &Path, fmt: &str, args: &[&str]) -> String {
    let o = command()
        .arg("export")
        .arg(dir)
        .args(["--format", fmt])
        .args(args)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", describe(&o));
    String::from_utf8(o.stdout).unwrap()
}

/// A short SCHED_OTHER measurement into `dir` (no root needed); its exit
/// status.
fn short_run(dir: &Path, extra: &[&str]) -> i32 {
    let o = command()
        .args(["measure", "--policy", "other", "--period", "100us"])
        .args(["--samples", "300", "-q", "--no-dma-latency", "--no-memlock"])
        .arg("--out")
        .arg(dir)
        .args(extra)
        .output()
        .unwrap();
    o.status.code().unwrap_or(-1)
}

/// Issue 22 #5: `measure --max-latency` exits 3 and results.json records
/// the limit and the verdict, so every export says the run failed without
/// the limit being given again (before: `return_code` 0, no JUnit failure,
/// KCIDB `DONE`).
#[test]
fn issue22_5_a_failed_run_exports_as_failed_without_the_limit_again() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("r");
    // Every wake-up is later than 1 us.
    assert_eq!(short_run(&out, &["--max-latency", "1us"]), 3);
    let res = crate::util::results(&out);
    let v = &res["verdict"];
    assert_eq!(v["limits"]["max_latency_ns"], 1000, "{v}");
    assert_eq!(v["passed"], false, "{v}");
    assert_eq!(v["threads"][0]["passed"], false, "{v}");
    assert_eq!(v["threads"][0]["failures"][0]["limit"], "max_latency_ns");
    // cyclictest's return_code is its exit status (LAVA: "cyclictest fail").
    let c: serde_json::Value =
        serde_json::from_str(&export_of(&out, "cyclictest-json", &[])).unwrap();
    assert_eq!(c["return_code"], 3);
    let j = export_of(&out, "junit", &[]);
    assert!(j.contains(" failures=\"1\""), "{j}");
    assert!(j.contains("<failure type=\"latency\""), "{j}");
    let k: serde_json::Value = serde_json::from_str(&export_of(&out, "kcidb", &[])).unwrap();
    let max = |k: &serde_json::Value| {
        k["tests"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["path"] == "rtshield.latency.t0.max")
            .unwrap()["status"]
            .clone()
    };
    assert_eq!(max(&k), "FAIL");
    // A limit given to `export` replaces the recorded one of its kind.
    let k: serde_json::Value =
        serde_json::from_str(&export_of(&out, "kcidb", &["--max-latency", "1h"])).unwrap();
    assert_eq!(max(&k), "PASS");
    // A run within its limit exports as passed.
    let ok = d.path().join("ok");
    assert_eq!(short_run(&ok, &["--max-latency", "1h"]), 0);
    assert_eq!(crate::util::results(&ok)["verdict"]["passed"], true);
    assert!(export_of(&ok, "junit", &[]).contains(" failures=\"0\""));
}

/// The `rtshield_latency_seconds_bucket` counts of thread 0 by `le`, and
/// its `_count`.
fn buckets(prom: &str) -> (Vec<(f64, u64)>, u64) {
    let mut b = Vec::new();
    let mut count = None;
    for l in prom.lines() {
        let Some((head, v)) = l.rsplit_once(' ') else {
            continue;
        };
        if head.starts_with("rtshield_latency_seconds_count{") {
            count = v.parse().ok();
        }
        if let Some(le) = head
            .strip_prefix("rtshield_latency_seconds_bucket{")
            .and_then(|h| h.split("le=\"").nth(1))
            .and_then(|h| h.strip_suffix("\"}"))
        {
            let le = if le == "+Inf" {
                f64::INFINITY
            } else {
                le.parse().unwrap()
            };
            b.push((le, v.parse().unwrap()));
        }
    }
    (b, count.expect("a _count line"))
}

/// Issue 22 #6: a bucket counts every sample at or below its bound,
/// overflow samples included (`+Inf` = `_count`), so PromQL's
/// histogram_quantile lands in the right bucket; the strict OpenMetrics
/// parser reads the file; `--timestamps` lets promtool import it (before:
/// the buckets up to 0.1 s left the overflow out, the strict parser said
/// `Clashing name: rtshield_samples_total`, and there was no way to write
/// timestamps).
#[test]
fn issue22_6_openmetrics_buckets_hold_the_overflow_and_strict_readers_read_it() {
    // A file written before exact counts were recorded: 49045 samples, 181
    // beyond its 400 us histogram, maximum 8.38 ms.
    let text = export_of(&real_run(), "openmetrics", &[]);
    let (b, count) = buckets(&text);
    assert_eq!(count, 49045);
    for (le, c) in &b {
        if *le >= 0.008380652 {
            assert_eq!(*c, count, "le={le}: every sample is at or below it");
        }
        // Between the histogram's end and the maximum: unknown, no line.
        assert!(!(0.000401..0.008380652).contains(le), "le={le}: {text}");
    }
    // A fresh run with a 5 us histogram (nearly every sample overflows):
    // the exact counts.
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("r");
    assert_eq!(short_run(&out, &["--histo-size", "5us"]), 0);
    let res = crate::util::results(&out);
    let max_s = res["threads"][0]["max_ns"].as_f64().unwrap() / 1e9;
    let (b, count) = buckets(&export_of(&out, "openmetrics", &[]));
    assert_eq!(b.last().unwrap().1, count, "+Inf = _count");
    assert!(b.windows(2).all(|w| w[0].1 <= w[1].1), "cumulative: {b:?}");
    for (le, c) in &b {
        if *le >= max_s {
            assert_eq!(*c, count, "le={le} >= the maximum {max_s}");
        }
    }
    if crate::util::require(
        std::process::Command::new(rtshield_testkit::python3())
            .args(["-c", "import prometheus_client"])
            .status()
            .is_ok_and(|s| s.success()),
        "python3-prometheus-client is not installed",
    ) {
        let f = d.path().join("x.prom");
        std::fs::write(&f, &text).unwrap();
        let o = std::process::Command::new(rtshield_testkit::python3())
            .args([
                "-c",
                "import sys\nfrom prometheus_client.openmetrics.parser import text_string_to_metric_families as p\nprint(sorted((f.name, f.type) for f in p(open(sys.argv[1]).read()) if f.type == 'counter'))",
            ])
            .arg(&f)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", describe(&o));
        assert_eq!(
            String::from_utf8_lossy(&o.stdout),
            "[('rtshield_lost_samples', 'counter'), ('rtshield_missed_periods', 'counter'), ('rtshield_overruns', 'counter'), ('rtshield_samples', 'counter')]\n"
        );
    }
    if crate::util::require_tool("promtool", "--version") {
        let f = d.path().join("ts.prom");
        let o = command()
            .arg("export")
            .arg(&out)
            .args(["--format", "openmetrics", "--timestamps", "-o"])
            .arg(&f)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", describe(&o));
        let o = std::process::Command::new("promtool")
            .args(["tsdb", "create-blocks-from", "openmetrics"])
            .arg(&f)
            .arg(d.path().join("tsdb"))
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", describe(&o));
    }
}

/// Issue 22 #7: JUnit valid under Jenkins xunit's junit-10.xsd and Ant's
/// JUnit.xsd, whose rules tests/consumers/conformance/junit.py restates
/// (before: properties inside testcase, attributes on testsuites, no
/// package/id, a timestamp with `Z`, no system-out/system-err).
#[test]
fn issue22_7_junit_is_valid_under_jenkins_and_ant_schemas() {
    if !crate::util::require_tool(rtshield_testkit::python3(), "--version") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("junit.xml");
    std::fs::write(
        &f,
        export_of(&real_run(), "junit", &["--max-latency", "5ms"]),
    )
    .unwrap();
    let script = "import sys, xml.etree.ElementTree as ET\n\
                  sys.path.insert(0, sys.argv[2])\n\
                  from conformance import junit\n\
                  r = ET.parse(sys.argv[1]).getroot()\n\
                  print('jenkins', junit.jenkins_violations(r))\n\
                  print('ant', junit.ant_violations(r))\n\
                  print('failed', len([c for c in r.iter('testcase') if c.find('failure') is not None]))\n";
    let o = std::process::Command::new(rtshield_testkit::python3())
        .args(["-c", script])
        .arg(&f)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/consumers"))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", describe(&o));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "jenkins []\nant []\nfailed 1\n"
    );
}

/// Issue 22 #11: cyclictest's files as cyclictest writes them: a version
/// number in `rt_test_version:` (before: "rtshield 0.1.0"), `-h N` rows
/// 0..N-1 (before: N+1 rows), histogram keys below N, and the overflow
/// cycle numbers listed (before: none).
#[test]
fn issue22_11_cyclictest_files_are_cyclictests() {
    let c: serde_json::Value =
        serde_json::from_str(&export_of(&real_run(), "cyclictest-json", &[])).unwrap();
    let v = c["rt_test_version:"].as_str().unwrap();
    assert!(v.parse::<f64>().is_ok(), "{v}");
    // The run's histogram size is 400 us: keys 0..399.
    let h = c["thread"]["0"]["histogram"].as_object().unwrap();
    assert!(h.keys().all(|k| k.parse::<u64>().unwrap() < 400), "{h:?}");
    // A fresh run with a 5 us histogram: 5 rows, and the numbers of the
    // first 5 samples of 5 us or more (0-based, %05lu), then the others.
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("r");
    assert_eq!(short_run(&out, &["--histo-size", "5us"]), 0);
    let text = std::fs::read_to_string(out.join("histogram.txt")).unwrap();
    let rows: Vec<&str> = text
        .lines()
        .skip_while(|l| *l != "# Histogram")
        .skip(1)
        .take_while(|l| !l.starts_with('#'))
        .collect();
    assert_eq!(rows.len(), 5, "{text}");
    let ovf: u64 = text
        .lines()
        .find_map(|l| l.strip_prefix("# Histogram Overflows: "))
        .unwrap()
        .parse()
        .unwrap();
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("# Thread 0:"))
        .unwrap();
    let (listed, others) = match line.split_once(" # ") {
        Some((a, b)) => (a, b.trim_end_matches(" others").parse::<u64>().unwrap()),
        None => (line, 0),
    };
    let nums: Vec<u64> = listed
        .split_whitespace()
        .map(|n| {
            assert_eq!(n.len().max(5), n.len(), "%05lu: {n}");
            n.parse().unwrap()
        })
        .collect();
    assert_eq!(nums.len() as u64, ovf.min(5), "{line}");
    assert_eq!(nums.len() as u64 + others, ovf, "{line}");
    assert!(nums.windows(2).all(|w| w[0] < w[1]) && nums.iter().all(|&n| n < 300));
}

/// `rtshield run CONFIG --max-latency DUR`: as measure's, exit 3 and the
/// limit and verdict in results.json (SCHED_OTHER: no root needed).
#[test]
fn run_max_latency_records_the_verdict_and_exits_3() {
    let d = tempfile::tempdir().unwrap();
    let cfg = crate::util::write_cfg(
        d.path(),
        "v.cfg",
        "timer_thread[0]\n{\n  cpu_affinity 0\n  sched.policy OTHER\n  period 1 ms\n  lifetime.samples 20\n}\n",
    );
    let out = d.path().join("out");
    let o = command()
        .args(["run", "-q"])
        .arg(&cfg)
        .arg("--out")
        .arg(&out)
        .args(["--max-latency", "1us"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3), "{}", describe(&o));
    let v = &crate::util::results(&out)["verdict"];
    assert_eq!(v["limits"]["max_latency_ns"], 1000, "{v}");
    assert_eq!(v["passed"], false, "{v}");
    let c: serde_json::Value =
        serde_json::from_str(&export_of(&out, "cyclictest-json", &[])).unwrap();
    assert_eq!(c["return_code"], 3);
    let o = command()
        .args(["run", "-q"])
        .arg(&cfg)
        .arg("--out")
        .arg(d.path().join("no"))
        .args(["--max-latency", "2h"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", describe(&o));
    assert!(!d.path().join("no").exists());
}
