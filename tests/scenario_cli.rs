//! `rtshield scenario` end to end: the binary, its exit codes, its files.

use crate::util::*;
use std::io::{BufRead, Read};
use std::path::Path;
use std::process::Stdio;
const ANNEX: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/examples/scenarios/annex-b.scn"
);

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

#[test]
fn check_shows_annex_b_trimmed_to_this_machine() {
    let o = rtshield(&["scenario", ANNEX, "--check"]);
    assert_eq!(o.status.code(), Some(0));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains(": 16 tasks, 2 groups;"), "{out}");
    assert!(out.contains("fifo99.3  fifo99  fifo:99"), "{out}");
    if !out.contains("CPUs present: 0-15") {
        assert!(
            out.contains("note: cpu_mask 0xffff trimmed to the CPUs present"),
            "{out}"
        );
    }
}

#[test]
fn every_example_scenario_checks() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/scenarios");
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "scn") {
            let o = rtshield(&["scenario", p.to_str().unwrap(), "--check"]);
            assert_eq!(
                o.status.code(),
                Some(0),
                "{}",
                String::from_utf8_lossy(&o.stderr)
            );
            n += 1;
        }
    }
    assert!(n >= 4);
}

#[test]
fn bad_scenario_exits_2_naming_file_line_column() {
    let d = tempfile::tempdir().unwrap();
    let f = write(d.path(), "bad.scn", "{\nloop = 10\nsched = EDF\n}\n");
    let o = rtshield(&["scenario", &f]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!("{f}:3:9: unknown sched `EDF`")),
        "{err}"
    );

    let o = rtshield(&[
        "scenario",
        &d.path().join("missing.scn").display().to_string(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot read scenario"));
}

#[test]
fn annex_b_as_printed_gets_a_hint_for_the_page_break_brace() {
    // The annex as printed in the ARTiS thesis: a page break leaves a
    // stray `}` after block #6 (the code fences around it became blanks).
    let annex = std::fs::read_to_string(ANNEX).unwrap();
    let mut lines: Vec<&str> = annex.lines().collect();
    let six = lines.iter().position(|l| *l == "#6").unwrap();
    let close = six + lines[six..].iter().position(|l| *l == "}").unwrap();
    lines.splice(close + 1..close + 1, ["", "", "}"]);
    let stray = close + 4;
    let d = tempfile::tempdir().unwrap();
    let f = write(d.path(), "printed.scn", &(lines.join("\n") + "\n"));
    for cmd in [&["scenario", &f, "--check"][..], &["simulate", &f][..]] {
        let o = rtshield(cmd);
        assert_eq!(o.status.code(), Some(2), "{cmd:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains(&format!("{f}:{stray}:1: `}}` without a matching `{{`")),
            "{err}"
        );
        assert!(
            err.contains("hint: a stray `}` after a closed block"),
            "{err}"
        );
        assert!(err.contains("annex B"), "{err}");
    }
}

#[test]
fn rt_share_sizes_annex_b_to_the_thesis_share_and_is_range_checked() {
    let o = rtshield(&["scenario", ANNEX, "--check", "--rt-share", "annex"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(err.contains("loops_per_us = 0.1000"), "{err}");
    for bad in ["0", "1", "1.5", "lots", "nan"] {
        let o = rtshield(&["scenario", ANNEX, "--check", "--rt-share", bad]);
        assert_eq!(o.status.code(), Some(2), "{bad}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("--rt-share"), "{bad}: {err}");
    }
    let o = rtshield(&[
        "scenario",
        ANNEX,
        "--check",
        "--rt-share",
        "0.5",
        "--loops-per-us",
        "1",
    ]);
    assert_eq!(o.status.code(), Some(2), "one or the other");
}

/// Adversary round 3 (C6): `sloop` beyond `loop` (done before the first
/// sleep) or a 1 ns sleep after long work holds the CPU as a task without
/// `sloop` does: refused at its line, exit 2, unless --force; `--check`
/// too, before anything runs.
#[test]
fn fifo_99_that_hardly_sleeps_on_every_cpu_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let f = write(
        d.path(),
        "hog.scn",
        "loops_per_us = 1\n{\nsched = FIFO\npriority = 99\nloop = 3600000000\nsloop = 1000000000000\nsleep = 1ns\n}\n",
    );
    for args in [vec!["scenario", &f, "--check"], vec!["scenario", &f]] {
        let o = rtshield(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains(&format!(
                "{f}:2:1: task fifo99.1 is FIFO priority 99, never sleeps (sloop 1000000000000 is not less than its loop 3600000000"
            )),
            "{err}"
        );
    }
    let f = write(
        d.path(),
        "nap.scn",
        "loops_per_us = 1\n{\nsched = FIFO\npriority = 99\nloop = 3600000000\nsloop = 1000000\nsleep = 1ns\n}\n",
    );
    let o = rtshield(&["scenario", &f, "--check"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!("{f}:2:1: task fifo99.1 is FIFO priority 99, works 100.0 % of the time (sloop 1000000 at 1.0 loops/µs is 1.0 s, then a 1 ns sleep")),
        "{err}"
    );
    // --loops-per-us decides the work's length as the run would: 1 µs of
    // work per 1 ns sleep is still the whole CPU.
    let o = rtshield(&["scenario", &f, "--check", "--loops-per-us", "1000000"]);
    assert_eq!(o.status.code(), Some(2));
    // A second of work per second of sleep is half the CPU: fine.
    let f2 = write(
        d.path(),
        "half.scn",
        "loops_per_us = 1\n{\nsched = FIFO\npriority = 99\nloop = 3600000000\nsloop = 1000000\nsleep = 1s\n}\n",
    );
    let o = rtshield(&["scenario", &f2, "--check"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = rtshield(&["scenario", &f, "--check", "--force"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn fifo_99_spinning_on_every_cpu_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let f = write(
        d.path(),
        "hog.scn",
        "{\nloop = 10\nsched = FIFO\npriority = 99\n}\n",
    );
    let o = rtshield(&["scenario", &f]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!(
            "{f}:1:1: task fifo99.1 is FIFO priority 99, never sleeps"
        )),
        "{err}"
    );
    assert!(err.contains("--force"), "{err}");

    // Lower priorities too, when there is one never-sleeping RT task per CPU
    // (as many as the CPUs this process may use: nothing starts).
    let n = rtshield_sys::get_affinity(0).unwrap().len();
    let f = write(
        d.path(),
        "hogs.scn",
        &format!("{{\nloop = 10\nsched = RR\npriority = 5\ncount = {n}\n}}\n"),
    );
    let o = rtshield(&["scenario", &f]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!("{f}:1:1: tasks rr5.1"))
            && err.contains("together can hold every CPU"),
        "{err}"
    );
}

#[test]
fn annex_b_runs_scaled_down_and_writes_json_and_text() {
    let d = tempfile::tempdir().unwrap();
    let j = d.path().join("r.json");
    let out = d.path().join("out");
    let o = rtshield(&[
        "scenario",
        ANNEX,
        "--scale",
        "0.0002",
        "--json",
        j.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{text}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v = json(&j);
    assert_eq!(v["schema"], "rtshield.balance/1");
    assert_eq!(v["source"], "kernel");
    let tasks = v["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 16);
    assert!(tasks.iter().all(|t| t["finished"] == true));
    // The FIFO tasks are pinned to one CPU and measured there.
    for t in &tasks[13..] {
        assert_eq!(t["policy"], "fifo");
        let cpu: usize = t["cpu_mask"].as_str().unwrap().parse().unwrap();
        assert!(t["cpu_share"][cpu].as_f64().unwrap() > 0.9, "{t}");
    }
    let groups = v["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 2);
    assert_eq!(groups[0]["name"], "other");
    assert_eq!(groups[0]["tasks"], 13);
    assert_eq!(json(&out.join("balance.json")), v);
    assert_eq!(
        std::fs::read_to_string(out.join("balance.txt")).unwrap(),
        text
    );
    assert!(text.contains("Groups (fairness"), "{text}");
}

#[test]
fn fake_sysroot_decides_the_cpus_and_the_kernel_name() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("root");
    std::fs::create_dir_all(root.join("sys/devices/system/cpu")).unwrap();
    std::fs::create_dir_all(root.join("proc/sys/kernel")).unwrap();
    std::fs::write(root.join("sys/devices/system/cpu/online"), "0\n").unwrap();
    std::fs::write(root.join("proc/sys/kernel/osrelease"), "9.9-fake\n").unwrap();
    let f = write(
        d.path(),
        "s.scn",
        "loops_per_us = 1\n{\nloop = 2000\ncpu_mask = 0x3\n}\n",
    );
    let j = d.path().join("r.json");
    let o = rtshield(&[
        "--sysroot",
        root.to_str().unwrap(),
        "scenario",
        &f,
        "--json",
        j.to_str().unwrap(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v = json(&j);
    assert_eq!(v["balancer"], "linux 9.9-fake");
    assert_eq!(v["ncpus"], 1);
    assert_eq!(v["tasks"][0]["cpu_mask"], "0");
    assert!(v["tasks"][0]["cpu_share"][0].as_f64().unwrap() > 0.9);
    let notes = v["warnings"].to_string();
    assert!(
        notes.contains("cpu_mask 0x3 trimmed to the CPUs present: 0 (dropped 1)"),
        "{notes}"
    );
    assert!(notes.contains("/proc/stat could not be read"), "{notes}");
}

#[test]
fn timeout_exits_1_and_still_writes_every_task() {
    let d = tempfile::tempdir().unwrap();
    let f = write(
        d.path(),
        "long.scn",
        "loops_per_us = 1\n{\nloop = 60000000\ncount = 2\n}\n",
    );
    let j = d.path().join("r.json");
    let o = rtshield(&[
        "scenario",
        &f,
        "--timeout",
        "150ms",
        "--json",
        j.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let v = json(&j);
    assert_eq!(v["run"]["unfinished"], 2);
    assert_eq!(v["tasks"].as_array().unwrap().len(), 2);
    assert!(String::from_utf8_lossy(&o.stderr).contains("timeout: 2 task(s) unfinished"));
}

#[test]
fn sigint_still_writes_results() {
    let d = tempfile::tempdir().unwrap();
    let f = write(
        d.path(),
        "long.scn",
        "loops_per_us = 1\n{\nloop = 60000000\n}\n",
    );
    let j = d.path().join("r.json");
    let mut child = command()
        .args(["scenario", &f, "--json", j.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The "calibrating" line comes once the handler is installed.
    let mut err = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    while !line.contains("calibrating") {
        line.clear();
        assert!(err.read_line(&mut line).unwrap() > 0, "stderr closed early");
    }
    std::thread::sleep(std::time::Duration::from_millis(200));
    // SAFETY: signalling the child this test started.
    unsafe { libc_kill(child.id() as i32, 2) };
    let mut rest = String::new();
    err.read_to_string(&mut rest).unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{rest}");
    assert!(rest.contains("interrupted"), "{rest}");
    let v = json(&j);
    assert_eq!(v["run"]["unfinished"], 1);
    assert_eq!(v["tasks"][0]["finished"], false);
}

extern "C" {
    #[link_name = "kill"]
    fn libc_kill(pid: i32, sig: i32) -> i32;
}

/// `rtshield ARGS` must end (exit 2, naming `option`) within a minute: a
/// refusal that came after the run would take an hour.
fn refused_before_running(args: &[&str], option: &str) {
    use std::os::unix::process::CommandExt as _;
    let mut cmd = command();
    // A run that keeps its events (the code before this fix) must not
    // take the machine's memory while the test waits: 2 GiB of address
    // space at most.
    // SAFETY: setrlimit only, in the child before exec.
    unsafe {
        cmd.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: 2 << 30,
                rlim_max: 2 << 30,
            };
            libc::setrlimit(libc::RLIMIT_AS, &lim);
            Ok(())
        });
    }
    let mut c = Kill(
        cmd.args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    wait_until(std::time::Duration::from_secs(60), "the refusal", || {
        c.0.try_wait().unwrap().is_some()
    });
    let status = c.0.wait().unwrap();
    let mut err = String::new();
    c.0.stderr
        .as_mut()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert_eq!(status.code(), Some(2), "{args:?}: {err}");
    assert!(err.contains(option), "{args:?}: {err}");
}

/// Adversary round 5, F14 (and its class): `scenario --json FILE` or
/// `--out DIR`, and `simulate --json/--trace/--gantt`, into a directory
/// that is refused (mode 777, not sticky) were refused only after the
/// whole run, its report lost. Every output is opened and checked before
/// the run: an hour-long run ends at once, exit 2, naming the option.
#[test]
fn f14_outputs_that_are_refused_are_refused_before_the_run() {
    use std::os::unix::fs::PermissionsExt as _;
    let d = tempfile::tempdir().unwrap();
    let ww = d.path().join("ww");
    std::fs::create_dir(&ww).unwrap();
    std::fs::set_permissions(&ww, std::fs::Permissions::from_mode(0o777)).unwrap();
    let scn = write(
        d.path(),
        "long.scn",
        "{\n  name = a\n  sched = other\n  loop = 300000000\n  sloop = 1\n  sleep = 1us\n  count = 2\n}\n",
    );
    let w = |n: &str| ww.join(n).display().to_string();
    // (`--out DIR` takes DIR itself: a new directory it creates there is
    // its own and accepted.)
    for (opt, path) in [("--json", w("s.json")), ("--out", ww.display().to_string())] {
        refused_before_running(&["scenario", &scn, "--timeout", "1h", opt, &path], opt);
    }
    for opt in ["--json", "--trace", "--gantt"] {
        // Without --trace/--gantt but the refused one: nothing is kept.
        refused_before_running(
            &[
                "simulate",
                &scn,
                "--duration",
                "1h",
                "--max-events",
                "100000000000",
                opt,
                &w("x"),
            ],
            opt,
        );
    }
    assert_eq!(std::fs::read_dir(&ww).unwrap().count(), 0);
}
