//! The real consumers of rtshield's files (issue 22), one test each: the
//! harness of `tests/consumers/` (`check.py result`) runs them, unmodified,
//! on two fresh `rtshield measure` results — one that passed, one that
//! failed its `--max-latency 1us` (exit 3) — and every verdict of a
//! consumer must be PASS on both. The two measurements and the harness run
//! once per test binary run ([`fixture`]); each test then asserts its
//! consumer's verdicts.
//!
//! The consumers are installed by `scripts/test.sh` from
//! `scripts/test-packages.txt` (promtool from Debian's `prometheus`,
//! `python3-prometheus-client`, `kcidb-io` from PyPI, `gnuplot-nox`,
//! `libxml2-utils`); a missing one is a SKIP, and a failure under
//! `RTSHIELD_REQUIRE_ROOT=1`. The harness's own checkers are tested on
//! real cyclictest output by [`the_harness_checkers_catch_what_they_must`].

use crate::util::{command, harness_running_rtshield, require, require_tool};
use rtshield_testkit::python3;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The harness's verdicts on both results, or why there are none.
struct Fixture {
    /// `check.py --json` entries: consumer, subject, status, detail, findings.
    verdicts: Vec<Value>,
}

fn harness() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/consumers/check.py")
}

/// The CPU to measure on: 1 when there are two, as the runs.
fn cpu() -> &'static str {
    let two = std::thread::available_parallelism().is_ok_and(|n| n.get() >= 2);
    if two {
        "1"
    } else {
        "0"
    }
}

/// `rtshield measure` into `dir` (`res/`, `metrics.prom`,
/// `cyclictest.json`) with `extra` options; its exit status.
fn measure(dir: &Path, extra: &[&str]) -> i32 {
    std::fs::create_dir_all(dir).unwrap();
    let o = command()
        .args([
            "measure",
            "--cpus",
            cpu(),
            "--period",
            "200us",
            "--duration",
            "1s",
        ])
        // A small histogram: overflow samples and their cycle numbers.
        .args(["--histo-size", "30us", "-q", "--out"])
        .arg(dir.join("res"))
        .arg("--metrics-file")
        .arg(dir.join("metrics.prom"))
        .arg("--json")
        .arg(dir.join("cyclictest.json"))
        .args(["--json-format", "cyclictest"])
        .args(extra)
        .output()
        .unwrap();
    o.status.code().unwrap_or(-1)
}

/// The harness on one result: its verdicts (`check.py --json`).
fn check(dir: &Path, status: i32, extra: &[&str]) -> Vec<Value> {
    let json = dir.join("verdicts.json");
    let work = dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let o = harness_running_rtshield(Path::new(python3()), &[&harness()], "--rtshield")
        .arg("--json")
        .arg(&json)
        .arg("--keep")
        .arg(&work)
        .arg("result")
        .arg(dir.join("res"))
        .args(["--exit-status", &status.to_string()])
        .arg("--metrics-file")
        .arg(dir.join("metrics.prom"))
        .arg("--cyclictest-json")
        .arg(dir.join("cyclictest.json"))
        .args(extra)
        // The harness's own temporary files stay in this test's directory.
        .env("TMPDIR", &work)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .unwrap();
    let text = std::fs::read_to_string(&json).unwrap_or_else(|e| {
        panic!(
            "check.py wrote no verdicts ({e}): {}\n{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    });
    serde_json::from_str::<Vec<Value>>(&text).unwrap()
}

/// The two measurements and the harness on them, once per test binary run.
fn fixture() -> Option<&'static Fixture> {
    static F: OnceLock<Option<Fixture>> = OnceLock::new();
    F.get_or_init(|| {
        if !require_tool(python3(), "--version") {
            return None;
        }
        let d = tempfile::tempdir().unwrap();
        let (a, b) = (d.path().join("a"), d.path().join("b"));
        // The two results are independent: each is measured and checked
        // beside the other (the harness runs some forty commands a result;
        // one after the other they made this the suite's slowest test).
        let (va, vb) = std::thread::scope(|s| {
            let a = s.spawn(|| {
                let sa = measure(&a, &["--label", "a \"quoted\", label"]);
                assert_eq!(sa, 0, "the passing run exits 0");
                check(&a, sa, &[])
            });
            let b = s.spawn(|| {
                let sb = measure(&b, &["--max-latency", "1us"]);
                assert_eq!(sb, 3, "a run over --max-latency exits 3");
                check(&b, sb, &["--max-latency", "1us"])
            });
            (a.join(), b.join())
        });
        let (Ok(mut verdicts), Ok(vb)) = (va, vb) else {
            panic!("the fixture failed (see the panic above)");
        };
        verdicts.extend(vb);
        Some(Fixture { verdicts })
    })
    .as_ref()
}

/// Every verdict of the consumers named `prefix…`: present for both runs
/// (`a`, `b`), all PASS; a consumer not installed is a SKIP (a failure
/// under `RTSHIELD_REQUIRE_ROOT=1`).
#[track_caller]
fn consumer_passes(prefix: &str) {
    let Some(f) = fixture() else {
        return;
    };
    let mine: Vec<&Value> = f
        .verdicts
        .iter()
        .filter(|v| {
            v["consumer"]
                .as_str()
                .is_some_and(|c| c.starts_with(prefix))
        })
        .collect();
    let line = |v: &Value| {
        let mut s = format!(
            "{} {} [{}]: {}",
            v["status"].as_str().unwrap_or("?"),
            v["consumer"].as_str().unwrap_or("?"),
            v["subject"].as_str().unwrap_or("?"),
            v["detail"].as_str().unwrap_or("")
        );
        for x in v["findings"].as_array().into_iter().flatten() {
            s.push_str(&format!(
                "\n    x {}: got {}, expected {} -- {}",
                x["what"].as_str().unwrap_or("?"),
                x["got"].as_str().unwrap_or("?"),
                x["expected"].as_str().unwrap_or("?"),
                x["rule"].as_str().unwrap_or("")
            ));
        }
        s
    };
    let missing: Vec<String> = mine
        .iter()
        .filter(|v| v["status"] == "MISSING")
        .map(|v| line(v))
        .collect();
    if !require(missing.is_empty(), &missing.join("; ")) {
        return;
    }
    for run in ["a/res", "b/res"] {
        // Subjects start with the result's last two path components.
        assert!(
            mine.iter()
                .any(|v| v["subject"].as_str().is_some_and(|s| s.starts_with(run))),
            "no verdict of {prefix} on {run}: {:#?}",
            mine.iter().map(|v| line(v)).collect::<Vec<_>>()
        );
    }
    let bad: Vec<String> = mine
        .iter()
        .filter(|v| v["status"] != "PASS")
        .map(|v| line(v))
        .collect();
    assert!(bad.is_empty(), "{prefix}:\n{}", bad.join("\n"));
}

#[test]
fn promtool_check_metrics_lints_the_prometheus_text_clean() {
    consumer_passes("promtool check metrics");
}

#[test]
fn promtool_imports_the_openmetrics_file_into_a_tsdb() {
    consumer_passes("promtool tsdb create-blocks-from openmetrics");
}

#[test]
fn the_strict_openmetrics_parser_accepts_export_and_metrics_file() {
    consumer_passes("prometheus_client OpenMetrics parser (strict)");
}

#[test]
fn the_prometheus_text_parser_reads_them() {
    consumer_passes("prometheus_client text-format parser");
}

#[test]
fn promql_histogram_quantile_finds_the_true_percentile_bucket() {
    consumer_passes("PromQL histogram_quantile");
}

#[test]
fn the_metrics_file_is_the_export_to_the_digit() {
    consumer_passes("--metrics-file final = export");
}

#[test]
fn the_kcidb_validator_accepts_it() {
    consumer_passes("KCIDB validator");
}

#[test]
fn kcidb_shows_the_verdict_and_the_numbers() {
    consumer_passes("KCIDB verdict and numbers");
}

#[test]
fn xmllint_reads_the_junit_file() {
    consumer_passes("xmllint --noout");
}

#[test]
fn junit_follows_jenkins_xunit_junit_10_xsd() {
    consumer_passes("JUnit rules of Jenkins xunit junit-10.xsd");
}

#[test]
fn junit_follows_ant_junit_xsd() {
    consumer_passes("JUnit rules of Ant JUnit.xsd");
}

#[test]
fn junit_fails_exactly_the_failed_threads() {
    consumer_passes("JUnit verdict (failures)");
}

#[test]
fn cyclictest_json_follows_rt_write_json() {
    consumer_passes("cyclictest --json rules");
}

#[test]
fn linaros_lava_parser_gives_the_runs_verdict() {
    consumer_passes("Linaro parse_rt_tests_results.py");
}

#[test]
fn histogram_txt_follows_cyclictest_print_hist() {
    consumer_passes("cyclictest -h N text rules");
}

#[test]
fn rtevals_parser_reads_histogram_txt() {
    consumer_passes("rteval cyclictest parser");
}

#[test]
fn osadls_latency_plot_recipe_draws_histogram_txt() {
    consumer_passes("OSADL mklatencyplot.bash recipe");
}

#[test]
fn pythons_csv_reads_results_csv_and_runs_export() {
    consumer_passes("Python csv on");
}

#[test]
fn gnuplot_draws_the_reports_plot() {
    consumer_passes("gnuplot on report plot.gp");
}

/// The harness's checkers on inputs whose verdict is known (real
/// cyclictest 2.40 output must pass, broken documents must fail): a
/// checker that cannot fail would make every test above pass.
#[test]
fn the_harness_checkers_catch_what_they_must() {
    if !require_tool(python3(), "--version") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let o = Command::new(python3())
        .arg(harness())
        .arg("selftest")
        .env("TMPDIR", d.path())
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{out}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(out.contains(" 0 failed"), "{out}");
}
