//! `rtshield stat` on this machine and on a fake tree.

use crate::util::*;
use std::process::Command;

#[test]
fn json_lines_one_per_sample() {
    let o = rtshield(&["stat", "--interval", "100ms", "--count", "2", "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8(o.stdout).unwrap();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2);
    let online = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
    let n = rtshield_vocab::CpuSet::parse_list(online.trim())
        .unwrap()
        .len();
    for l in lines {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        assert_eq!(v["cpus"].as_array().unwrap().len(), n);
        assert!(v["interval_s"].as_f64().unwrap() > 0.0);
        // Sorted by activity, busiest first.
        let act: Vec<f64> = v["threads"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["cswch_per_s"].as_f64().unwrap() + t["nvcswch_per_s"].as_f64().unwrap())
            .collect();
        // (JSON floats may come back one ulp off: compare with a margin.)
        assert!(
            act.windows(2).all(|w| w[0] >= w[1] * (1.0 - 1e-9)),
            "{act:?}"
        );
        assert!(act.len() <= 15);
    }
}

#[test]
fn pids_filter_keeps_only_those_threads() {
    // A shell that waits for a short sleep over and over: voluntary switches.
    let child = Kill(
        Command::new("sh")
            .args(["-c", "while :; do sleep 0.01; done"])
            .spawn()
            .unwrap(),
    );
    let pid = child.0.id().to_string();
    let o = rtshield(&[
        "stat",
        "--interval",
        "500ms",
        "--count",
        "1",
        "--pids",
        &pid,
        "--top",
        "0",
        "--json",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let ts = v["threads"].as_array().unwrap();
    assert_eq!(ts.len(), 1, "{ts:?}");
    assert_eq!(ts[0]["tid"].to_string(), pid);
    assert_eq!(ts[0]["name"], "sh");
    assert!(ts[0]["cswch_per_s"].as_f64().unwrap() > 0.0);
}

#[test]
fn text_output_and_bad_input() {
    let o = rtshield(&["stat", "--interval", "50ms", "--count", "1"]);
    let t = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success());
    assert!(t.contains("CPU   intr/s     cs/s  runq"), "{t}");
    assert!(t.contains("load "), "{t}");
    let o = rtshield(&["stat", "--interval", "0s", "--count", "1"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("--interval 0s: must be between 10ms and 1h")
    );
    let o = rtshield(&["stat", "--pids", "12x"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("invalid value '12x' for '--pids"));
    let o = rtshield(&["stat", "--count", "many"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("invalid value 'many' for '--count"));
    let o = rtshield(&["stat", "--pids", "999999999", "--count", "1"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--pids: no process 999999999"));
}

#[test]
fn record_on_a_fake_tree_then_compare() {
    // A fake machine whose counters do not move: rates are 0, the
    // breakdown has no elapsed tick, /proc/loadavg's fields come through.
    let d = tempfile::tempdir().unwrap();
    let b = d.path();
    put(b, "/proc/stat", "cpu  10 0 5 100 0 0 0 0\ncpu0 10 0 5 100 0 0 0 0\nintr 100\nctxt 500\nprocs_running 2\nprocs_blocked 0\n");
    put(b, "/proc/loadavg", "1.50 0.75 0.25 3/412 12345\n");
    put(
        b,
        "/proc/interrupts",
        "           CPU0\n  1:         10   IO-APIC   1-edge   i8042\n",
    );
    put(b, "/sys/devices/system/cpu/online", "0\n");
    put(b, "/proc/sys/kernel/osrelease", "6.1.0-rt\n");
    let rec = b.join("rt.json");
    let o = rtshield_at(
        b,
        &[
            "stat",
            "--interval",
            "10ms",
            "--record",
            rec.to_str().unwrap(),
            "--duration",
            "30ms",
            "--json",
            "--label",
            "with PREEMPT_RT",
        ],
    );
    assert!(o.status.success(), "{}", describe(&o));
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3, "30ms / 10ms");
    assert_eq!(lines[0]["tasks_running"], 3);
    assert_eq!(lines[0]["tasks_total"], 412);
    assert_eq!(lines[0]["last_pid"], 12345);
    let v = json(&rec);
    assert_eq!(v["schema"], "rtshield.stat/1");
    assert_eq!(v["label"], "with PREEMPT_RT");
    assert_eq!(v["samples"], 3);
    assert_eq!(v["kernel_release"], "6.1.0-rt");
    let metric = |name: &str| {
        v["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == name)
            .map(|m| m["value"].as_f64().unwrap())
    };
    assert_eq!(metric("tasks"), Some(412.0));
    assert_eq!(metric("load1"), Some(1.5));
    assert_eq!(metric("runnable"), Some(2.0));
    assert_eq!(metric("cs/s"), Some(0.0));

    // The PREEMPT_RT impact article's comparison: context switches/s
    // 1243 without, 2168 with PREEMPT_RT; 1790 -> 10771 under ping -f.
    let mk = |label: &str, cs: f64, flood: f64| {
        format!(
            r#"{{"schema":"rtshield.stat/1","label":"{label}","started_at":"2026-11-23T21:00:00Z","duration_s":60.0,"samples":60,"kernel_release":null,"preempt_model":null,"metrics":[{{"name":"cs/s","value":{cs}}},{{"name":"cs/s ping -f","value":{flood}}}],"threads":[]}}"#
        )
    };
    std::fs::write(b.join("a.json"), mk("vanilla", 1243.0, 1790.0)).unwrap();
    std::fs::write(b.join("b.json"), mk("PREEMPT_RT", 2168.0, 10771.0)).unwrap();
    let o = rtshield_at(
        b,
        &[
            "stat",
            "--compare",
            b.join("a.json").to_str().unwrap(),
            b.join("b.json").to_str().unwrap(),
        ],
    );
    let t = ok(o);
    assert!(t.contains("A: vanilla (60 samples, 60 s)"), "{t}");
    assert!(t.contains("B: PREEMPT_RT"), "{t}");
    assert!(
        t.contains("cs/s                             1243.0     2168.0    1.74"),
        "{t}"
    );
    assert!(
        t.contains("cs/s ping -f                     1790.0    10771.0    6.02"),
        "{t}"
    );

    // Bad input: exit 2, the file named.
    std::fs::write(b.join("bad.json"), "{}").unwrap();
    let o = rtshield_at(
        b,
        &[
            "stat",
            "--compare",
            b.join("a.json").to_str().unwrap(),
            b.join("bad.json").to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", describe(&o));
    assert!(all_text(&o).contains("bad.json:1:"), "{}", describe(&o));
    let o = rtshield_at(b, &["stat", "--record", "x.json"]);
    assert_eq!(o.status.code(), Some(2), "--record needs --duration");
    let o = rtshield_at(
        b,
        &[
            "stat",
            "--record",
            "/nonexistent/x.json",
            "--duration",
            "1s",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", describe(&o));
    assert!(
        all_text(&o).contains("no such directory"),
        "{}",
        describe(&o)
    );
}

/// Adversary round 5, F05: SIGINT, SIGQUIT, SIGTERM and SIGHUP killed
/// `stat --record` at once: no file, no message (measure writes its
/// results). Each now ends the sampling like measure's: the file holds
/// what was sampled, the signal is named, exit 0.
#[test]
fn f05_every_stop_signal_ends_stat_record_with_its_file() {
    for (sig, name) in [
        (libc::SIGINT, "SIGINT"),
        (libc::SIGQUIT, "SIGQUIT"),
        (libc::SIGTERM, "SIGTERM"),
        (libc::SIGHUP, "SIGHUP"),
    ] {
        let d = tempfile::tempdir().unwrap();
        let rec = d.path().join("st3.json");
        let samples = d.path().join("samples.jsonl");
        let mut c = Kill(
            command()
                .args([
                    "stat",
                    "--json",
                    "--interval",
                    "100ms",
                    "--duration",
                    "60s",
                    "--record",
                ])
                .arg(&rec)
                .stdout(std::fs::File::create(&samples).unwrap())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap(),
        );
        wait_until(std::time::Duration::from_secs(30), "a first sample", || {
            std::fs::metadata(&samples).is_ok_and(|m| m.len() > 0)
        });
        // SAFETY: signalling the process this test started.
        unsafe { libc::kill(c.0.id() as i32, sig) };
        wait_until(std::time::Duration::from_secs(30), "stat ends", || {
            c.0.try_wait().unwrap().is_some()
        });
        let status = c.0.wait().unwrap();
        let mut err = String::new();
        std::io::Read::read_to_string(c.0.stderr.as_mut().unwrap(), &mut err).unwrap();
        assert_eq!(status.code(), Some(0), "{name}: {err}");
        assert!(err.contains(&format!("stopped by {name}")), "{name}: {err}");
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&rec).unwrap()).unwrap();
        assert!(v["samples"].as_u64().unwrap() >= 1, "{name}: {v}");
    }
}

/// Adversary round 5, F14: `stat --record FILE` into a directory that is
/// refused (mode 777, not sticky) was refused only after the whole
/// `--duration`, the recording lost. It is refused before anything is
/// sampled: a one-hour recording ends at once, exit 2, naming the option.
#[test]
fn f14_a_record_directory_that_is_refused_is_refused_before_sampling() {
    use std::os::unix::fs::PermissionsExt as _;
    let d = tempfile::tempdir().unwrap();
    let ww = d.path().join("ww");
    std::fs::create_dir(&ww).unwrap();
    std::fs::set_permissions(&ww, std::fs::Permissions::from_mode(0o777)).unwrap();
    let mut c = Kill(
        command()
            .args(["stat", "--interval", "1s", "--duration", "1h", "--record"])
            .arg(ww.join("r.json"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap(),
    );
    // Bounded wait (a refusal after the duration would take an hour).
    wait_until(std::time::Duration::from_secs(60), "stat refuses", || {
        c.0.try_wait().unwrap().is_some()
    });
    let status = c.0.wait().unwrap();
    let mut err = String::new();
    std::io::Read::read_to_string(c.0.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert_eq!(status.code(), Some(2), "{err}");
    assert!(err.contains("--record"), "{err}");
    assert!(!ww.join("r.json").exists());
}
