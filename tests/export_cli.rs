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
        ("junit", "<testsuites name=\"rtshield\""),
        (
            "openmetrics",
            "rtshield_latency_seconds_count{cpu=\"1\",thread=\"0\"}",
        ),
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
    let cases: [(&[&str], &str); 3] = [
        (
            &["--format", "junit", "--max-latency", "2h"],
            "--max-latency 2h",
        ),
        (
            &["--format", "kcidb", "--build-id", "no colon"],
            "--build-id",
        ),
        (&["--format", "yaml"], "invalid value 'yaml'"),
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
