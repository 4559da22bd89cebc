//! `rtshield run` with programs: respawn counts, STOP, and that no process
//! outlives the run (normal end, SIGTERM, and a grandchild).

use crate::util::*;
use std::process::Command;
use std::time::Duration;

#[test]
fn respawn_and_ignore_counts_go_into_results() {
    let d = tempfile::tempdir().unwrap();
    let cfg = write_cfg(
        d.path(),
        "r.cfg",
        &format!(
            "main\n{{\n  stats.period 200 ms\n}}\n{}\
             program[0]\n{{\n  cmdline sh -c \"exit 0\"\n  termination.ok RESPAWN\n}}\n\
             program[1]\n{{\n  cmdline sh -c \"exit 7\"\n  termination.ko IGNORE\n}}\n\
             program[2]\n{{\n  cmdline /nonexistent/prog\n  termination.ko RESPAWN\n}}\n",
            timer("2 s")
        ),
    );
    let out = d.path().join("out");
    let o = run_quiet(&cfg, &out);
    let (so, se) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{so}{se}");
    let r = results(&out);
    let p = &r["programs"];
    assert_eq!(p[0]["command"], "sh -c exit 0");
    let spawns0 = p[0]["spawns"].as_u64().unwrap();
    // Respawned (at least once: the first back-off is 0.1 s of the 2 s), but
    // with back-off (0.1, 0.2, 0.4 s... doubling), never a storm: an 8th
    // spawn would need 12.7 s of back-offs in a run of 2 s plus start-up, so
    // the cap holds however loaded the machine is (load only delays spawns);
    // without back-off there would be hundreds.
    assert!(spawns0 >= 2, "respawned: {p}");
    assert!(spawns0 <= 8, "backed off: {p}");
    assert!(p[0]["exits_ok"].as_u64().unwrap() >= spawns0 - 1, "{p}");
    assert_eq!(
        (p[1]["spawns"].as_u64(), p[1]["exits_ko"].as_u64()),
        (Some(1), Some(1)),
        "{p}"
    );
    // Not startable: the trampoline reports exit 127, respawned with back-off.
    let ko2 = p[2]["exits_ko"].as_u64().unwrap();
    assert!((2..=8).contains(&ko2), "respawned, backed off: {p}");
    assert_eq!(r["end_reason"], "duration");
    assert!(so.contains("program[0] sh -c exit 0:"), "{so}");
    // Every run is tagged with its load (the programs' names) and the
    // isolation detected at its start.
    assert_eq!(r["tags"]["load"], "sh+prog");
    assert_eq!(r["tags"]["isolation"], r["tags"]["isolation_detected"]);
}

#[test]
fn stop_policy_ends_the_run_early_and_results_are_written() {
    let d = tempfile::tempdir().unwrap();
    let cfg = write_cfg(
        d.path(),
        "s.cfg",
        &format!(
            "main\n{{\n  stats.period 100 ms\n}}\n{}program[0]\n{{\n  cmdline sh -c \"sleep 0.5; exit 3\"\n  termination.ko STOP\n}}\n",
            timer("60 s")
        ),
    );
    let out = d.path().join("out");
    let o = run_quiet(&cfg, &out);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    let r = results(&out);
    // Ended by the program, not by the 60 s lifetime.
    assert_eq!(r["end_reason"], "stop");
    assert_eq!(r["programs"][0]["exits_ko"], 1);
    assert!(r["threads"][0]["samples"].as_u64().unwrap() > 0);
}

/// A program that forks a grandchild in its group, and one that escapes
/// into its own session: neither survives the end of the run.
fn grandchild_cfg(
    d: &std::path::Path,
    dur: &str,
) -> (std::path::PathBuf, std::path::PathBuf, std::path::PathBuf) {
    let g1 = d.join("g1.pid");
    let g2 = d.join("g2.pid");
    let cfg = write_cfg(
        d,
        "g.cfg",
        &format!(
            "main\n{{\n  stats.period 200 ms\n}}\n{}\
             program[0]\n{{\n  cmdline sh -c \"sleep 300 & echo $! > {}; wait\"\n}}\n\
             program[1]\n{{\n  cmdline sh -c \"setsid sleep 301 & echo $! > {}; wait\"\n}}\n",
            timer(dur),
            g1.display(),
            g2.display()
        ),
    );
    (cfg, g1, g2)
}

#[test]
fn no_process_survives_the_end_of_the_run() {
    let d = tempfile::tempdir().unwrap();
    let (cfg, g1, g2) = grandchild_cfg(d.path(), "2 s");
    let out = d.path().join("out");
    let o = run_quiet(&cfg, &out);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    let (p1, p2) = (wait_pid_file(&g1, 1), wait_pid_file(&g2, 1));
    // Killed at the end of the run (a survivor sleeps for 300 s): the
    // kernel may take a moment to tear a killed process down.
    wait_gone(p1, 10);
    wait_gone(p2, 10);
}

#[test]
fn sigterm_cleans_up_and_still_writes_results() {
    let d = tempfile::tempdir().unwrap();
    let (cfg, g1, g2) = grandchild_cfg(d.path(), "60 s");
    let out = d.path().join("out");
    let mut child = spawn_quiet(&cfg, &out);
    let me = child.id() as i32;
    let (p1, p2) = (wait_pid_file(&g1, 10), wait_pid_file(&g2, 10));
    assert!(alive(p1) && alive(p2));
    // Measuring for a while (two intervals), so there are samples to write.
    wait_timeline_rows(&out, 2, 30);
    // Signal only the child this test started.
    Command::new("kill")
        .args(["-TERM", &me.to_string()])
        .status()
        .unwrap();
    let st = child.wait().unwrap();
    assert_eq!(st.code(), Some(0));
    assert!(!alive(p1), "grandchild {p1} survived SIGTERM");
    assert!(!alive(p2), "escaped grandchild {p2} survived SIGTERM");
    assert!(descendants(me).is_empty());
    let r = results(&out);
    assert_eq!(r["end_reason"], "sigterm");
    assert!(r["threads"][0]["samples"].as_u64().unwrap() > 0);
    assert_eq!(r["programs"][0]["spawns"], 1);
}

#[test]
fn cgroup_key_moves_rtshield_and_programs_into_the_partitions() {
    // A fake tree with rt/nrt partitions (cgroup v2 layout, found through
    // mountinfo as on a real machine).
    let root = fake_root("0-1");
    std::fs::create_dir_all(root.path().join("proc/self")).unwrap();
    std::fs::write(
        root.path().join("proc/self/mountinfo"),
        "35 24 0:30 / /sys/fs/cgroup rw,nosuid shared:9 - cgroup2 cgroup2 rw,nsdelegate\n",
    )
    .unwrap();
    std::fs::create_dir_all(root.path().join("sys/fs/cgroup")).unwrap();
    std::fs::write(
        root.path().join("sys/fs/cgroup/cgroup.controllers"),
        "cpuset cpu io memory\n",
    )
    .unwrap();
    for p in ["rt", "nrt"] {
        let d = root.path().join("sys/fs/cgroup").join(p);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("cgroup.procs"), "").unwrap();
        std::fs::write(d.join("cpuset.cpus"), if p == "rt" { "1\n" } else { "0\n" }).unwrap();
    }
    let d = tempfile::tempdir().unwrap();
    let pidf = d.path().join("p.pid");
    let cfg = write_cfg(
        d.path(),
        "cg.cfg",
        &format!(
            "main\n{{\n  cgroup rt\n  stats.period 200 ms\n}}\n{}program[0]\n{{\n  cmdline sh -c \"echo $PPID > {}; sleep 300\"\n  cgroup nrt\n}}\n",
            timer("1500 ms"),
            pidf.display()
        ),
    );
    let out = d.path().join("out");
    let child = crate::util::command()
        .args([
            "--sysroot",
            root.path().to_str().unwrap(),
            "run",
            "-q",
            cfg.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let me = child.id();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0));
    let rt = std::fs::read_to_string(root.path().join("sys/fs/cgroup/rt/cgroup.procs")).unwrap();
    assert_eq!(rt.trim(), me.to_string(), "rtshield itself goes to rt");
    // The program's group leader (its shim, the parent of sh) goes to nrt.
    let shim = wait_pid_file(&pidf, 1);
    let nrt = std::fs::read_to_string(root.path().join("sys/fs/cgroup/nrt/cgroup.procs")).unwrap();
    assert_eq!(nrt.trim(), shim.to_string());

    // Without the partition: a clear error, before anything starts.
    std::fs::remove_dir_all(root.path().join("sys/fs/cgroup/nrt")).unwrap();
    let o = run(&[
        "--sysroot",
        root.path().to_str().unwrap(),
        "run",
        "-q",
        cfg.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("program[0]: cgroup nrt: no 'nrt' partition found"),
        "{err}"
    );
}

/// cgroup v1 (a fake tree): main's `cgroup nrt` and the timer thread's
/// `cgroup rt` are both applied, per thread (the systress article's
/// rpi_cpuset.cfg): the process joins nrt through `cgroup.procs`, the
/// timer thread writes its own TID to rt's `tasks`.
#[test]
fn cgroup_v1_puts_each_thread_where_its_stanza_says() {
    let root = fake_root("0-1");
    let w = |p: &str, s: &str| {
        let f = root.path().join(p);
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(f, s).unwrap();
    };
    w(
        "proc/self/mountinfo",
        "30 25 0:26 / /sys/fs/cgroup/cpuset rw,nosuid shared:12 - cgroup cgroup rw,cpuset\n",
    );
    w("sys/fs/cgroup/cpuset/cpuset.cpus", "0-1\n");
    for (p, cpus) in [("rt", "1\n"), ("nrt", "0\n")] {
        w(&format!("sys/fs/cgroup/cpuset/{p}/cpuset.cpus"), cpus);
        w(&format!("sys/fs/cgroup/cpuset/{p}/tasks"), "");
        w(&format!("sys/fs/cgroup/cpuset/{p}/cgroup.procs"), "");
    }
    let d = tempfile::tempdir().unwrap();
    let cfg = write_cfg(
        d.path(),
        "cg1.cfg",
        "main\n{\n  cgroup nrt\n  stats.period 200 ms\n}\ntimer_thread[0]\n{\n  cgroup rt\n  cpu_affinity 0\n  period 1 ms\n  lifetime.duration 600 ms\n  stats.histo_size 500 us\n}\n",
    );
    let out = d.path().join("out");
    let child = crate::util::command()
        .args([
            "--sysroot",
            root.path().to_str().unwrap(),
            "run",
            "-q",
            cfg.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let me = child.id();
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let warnings = results(&out)["warnings"].to_string();
    assert!(!warnings.contains("main's cgroup"), "{warnings}");
    let read = |p: &str| {
        std::fs::read_to_string(root.path().join("sys/fs/cgroup/cpuset").join(p)).unwrap()
    };
    assert_eq!(
        read("nrt/cgroup.procs").trim(),
        me.to_string(),
        "main's process to nrt"
    );
    let tid: u32 = read("rt/tasks").trim().parse().unwrap();
    assert_ne!(tid, me, "a thread of its own in rt, not the process");
    let r = results(&out);
    assert_eq!(r["threads"][0]["tid"].as_u64(), Some(tid as u64), "{r}");
}

/// cgroup v2 (a fake tree): threads of one process share one cgroup, so
/// with main in nrt and the timer in rt the process goes to rt, and the
/// warning says why main's cgroup is not applied.
#[test]
fn cgroup_v2_says_why_main_shares_the_timers_partition() {
    let root = fake_root("0-1");
    let w = |p: &str, s: &str| {
        let f = root.path().join(p);
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(f, s).unwrap();
    };
    w(
        "proc/self/mountinfo",
        "35 24 0:30 / /sys/fs/cgroup rw,nosuid shared:9 - cgroup2 cgroup2 rw,nsdelegate\n",
    );
    w("sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory\n");
    for (p, cpus) in [("rt", "1\n"), ("nrt", "0\n")] {
        w(&format!("sys/fs/cgroup/{p}/cpuset.cpus"), cpus);
        w(&format!("sys/fs/cgroup/{p}/cgroup.procs"), "");
    }
    let d = tempfile::tempdir().unwrap();
    let cfg = write_cfg(
        d.path(),
        "cg2.cfg",
        "main\n{\n  cgroup nrt\n  stats.period 200 ms\n}\ntimer_thread[0]\n{\n  cgroup rt\n  cpu_affinity 0\n  period 1 ms\n  lifetime.duration 300 ms\n  stats.histo_size 500 us\n}\n",
    );
    let out = d.path().join("out");
    let o = run(&[
        "--sysroot",
        root.path().to_str().unwrap(),
        "run",
        "-q",
        cfg.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let (so, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let want =
        "main's cgroup nrt not applied: cgroup v2 keeps all threads of a process in one cgroup";
    assert!(so.contains(want), "{so}");
    assert!(results(&out)["warnings"].to_string().contains(want));
    let rt = std::fs::read_to_string(root.path().join("sys/fs/cgroup/rt/cgroup.procs")).unwrap();
    assert!(!rt.trim().is_empty(), "the process went to rt");
    let nrt = std::fs::read_to_string(root.path().join("sys/fs/cgroup/nrt/cgroup.procs")).unwrap();
    assert!(nrt.trim().is_empty(), "{nrt}");
}

#[test]
fn sigint_ends_the_run_like_ctrl_c() {
    let d = tempfile::tempdir().unwrap();
    let pidf = d.path().join("p.pid");
    let cfg = write_cfg(
        d.path(),
        "i.cfg",
        &format!(
            "main\n{{\n  stats.period 200 ms\n}}\n{}program[0]\n{{\n  load cpu\n  cpu_affinity 0\n}}\nprogram[1]\n{{\n  cmdline sh -c \"echo $$ > {}; exec sleep 300\"\n}}\n",
            timer("60 s"),
            pidf.display()
        ),
    );
    let out = d.path().join("out");
    let child = spawn_quiet(&cfg, &out);
    let me = child.id() as i32;
    let prog = wait_pid_file(&pidf, 10);
    wait_timeline_rows(&out, 1, 30);
    // Both shims, the cpu worker and sh (bounded wait: start-up may be slow).
    let kids = poll(
        Duration::from_secs(30),
        "shims, the cpu worker and sh",
        || Some(descendants(me)).filter(|k| k.len() >= 4),
    );
    Command::new("kill")
        .args(["-INT", &me.to_string()])
        .status()
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0));
    for k in kids {
        assert!(!alive(k), "{k} survived SIGINT");
    }
    assert!(!alive(prog));
    let r = results(&out);
    assert_eq!(r["end_reason"], "sigint");
    assert_eq!(r["programs"][0]["command"], "builtin:cpu");
    assert_eq!(r["programs"][0]["spawns"], 1);
    assert_eq!(r["tags"]["load"], "cpu+sh");
}

#[test]
fn program_gets_its_affinity_policy_and_output_file() {
    let d = tempfile::tempdir().unwrap();
    let outf = d.path().join("prog.out");
    // The program reports what it runs with: its allowed CPUs, then the
    // rt_priority and policy fields (40 and 41) of /proc/PID/stat (cut
    // inherits them from sh). Short-lived: FIFO is safe here.
    // Without root only the SCHED_FIFO part is skipped (affinity and output
    // are still checked); under RTSHIELD_REQUIRE_ROOT=1 that fails.
    let root = require_root("the SCHED_FIFO part of the program's settings");
    let sched = if root {
        "  sched.policy FIFO\n  sched.priority 10\n"
    } else {
        ""
    };
    let cfg = write_cfg(
        d.path(),
        "a.cfg",
        &format!(
            "main\n{{\n  stats.period 200 ms\n}}\n{}program[0]\n{{\n  cmdline sh -c \"grep Cpus_allowed_list /proc/self/status; cut -d' ' -f40,41 /proc/self/stat; echo to-stderr >&2\"\n  cpu_affinity 0\n{}  output.out {}\n  output.err /dev/null\n}}\n",
            timer("1 s"),
            sched,
            outf.display()
        ),
    );
    let out = d.path().join("out");
    let o = run_quiet(&cfg, &out);
    let (so, se) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{so}{se}");
    assert!(!se.contains("to-stderr"), "stderr went to /dev/null: {se}");
    let text = std::fs::read_to_string(&outf).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert_eq!(
        lines[0].split_whitespace().last(),
        Some("0"),
        "affinity: {text}"
    );
    if root {
        assert_eq!(lines[1], "10 1", "rt_priority 10, SCHED_FIFO (1): {text}");
    } else {
        assert_eq!(lines[1], "0 0", "SCHED_OTHER: {text}");
    }
    let r = results(&out);
    assert_eq!(r["programs"][0]["exits_ok"], 1, "{}", r["programs"]);
}

/// rtshield partitions under two parents (the root's and `--parent lab`'s,
/// each with its state file): a stanza's `cgroup rt` and `measure
/// --partition` refuse to guess (exit 2, both named), as `partition undo`
/// does; `--partition-parent lab` chooses.
#[test]
fn several_partitions_are_named_not_guessed() {
    let root = fake_root("0-1");
    let w = |p: &str, s: &str| {
        let f = root.path().join(p);
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(f, s).unwrap();
    };
    w(
        "proc/self/mountinfo",
        "30 25 0:26 / /sys/fs/cgroup/cpuset rw,nosuid shared:12 - cgroup cgroup rw,cpuset\n",
    );
    w("sys/fs/cgroup/cpuset/cpuset.cpus", "0-1\n");
    for base in ["", "lab/"] {
        for (p, cpus) in [("rt", "1\n"), ("nrt", "0\n")] {
            w(&format!("sys/fs/cgroup/cpuset/{base}{p}/cpuset.cpus"), cpus);
            w(&format!("sys/fs/cgroup/cpuset/{base}{p}/tasks"), "");
            w(&format!("sys/fs/cgroup/cpuset/{base}{p}/cgroup.procs"), "");
        }
    }
    w("run/rtshield/partition.json", "{}");
    w("run/rtshield/partition-lab.json", "{}");
    let d = tempfile::tempdir().unwrap();
    let cfg = write_cfg(
        d.path(),
        "cg.cfg",
        "main\n{\n  cgroup nrt\n}\ntimer_thread[0]\n{\n  cgroup rt\n  cpu_affinity 0\n  period 1 ms\n  lifetime.duration 200 ms\n}\n",
    );
    let sysroot = root.path().to_str().unwrap();
    let out = d.path().join("out");
    let o = crate::util::command()
        .args(["--sysroot", sysroot, "run", "-q", cfg.to_str().unwrap()])
        .args(["--out", out.to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("several parents (/, lab)"), "{err}");
    assert!(!out.join("results.json").exists(), "nothing ran");
    let m = |extra: &[&str]| {
        crate::util::command()
            .args(["--sysroot", sysroot, "measure", "--partition"])
            .args(extra)
            .args(["--policy", "other", "--cpus", "0", "--samples", "20", "-q"])
            .args(["--no-store", "--out", d.path().join("m").to_str().unwrap()])
            .output()
            .unwrap()
    };
    let o = m(&[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("several parents (/, lab)"), "{err}");
    let o = m(&["--partition-parent", "lab"]);
    assert_eq!(o.status.code(), Some(0), "{}", describe(&o));
    let procs = std::fs::read_to_string(
        root.path()
            .join("sys/fs/cgroup/cpuset/lab/nrt/cgroup.procs"),
    );
    assert!(!procs.unwrap().trim().is_empty(), "measure joined lab/nrt");
}

/// Round-2 note N3: as root, a configuration with program commands in a
/// file another user owns is run (the administrator chose it) but `run
/// --check` and `run` warn, naming the file and its owner. Root's own file
/// draws no warning. (Before: no warning at all.)
#[test]
fn n3_root_is_warned_that_another_users_config_chooses_its_commands() {
    if !require_root("the file is given to another uid") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let text = "main\n{\n  stats.period 100 ms\n}\ntimer_thread[0]\n{\n  cpu_affinity 0\n  \
                sched.policy OTHER\n  period 1 ms\n  lifetime.duration 1 s\n}\n\
                program[0]\n{\n  cmdline /bin/true\n  cpu_affinity 0\n}\n";
    let mine = write_cfg(d.path(), "mine.cfg", text);
    let theirs = write_cfg(d.path(), "theirs.cfg", text);
    std::os::unix::fs::chown(&theirs, Some(2345), Some(2345)).unwrap();
    // `--check` runs nothing: a warning (a `run` is refused since round 5
    // (A), F01: `round5a::f01_…`).
    let warning = |cfg: &std::path::Path| {
        let o = run(&["run", "--check", cfg.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(0), "{}", describe(&o));
        text_of(&o)
    };
    let e = warning(&theirs);
    assert!(
        e.contains("its programs, loads and output paths come from this file")
            && e.contains("owned by uid 2345"),
        "{e}"
    );
    assert!(!warning(&mine).contains("come from this file"));
}

fn text_of(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Round 5 (A), F21: a program that double-forks a `sleep` into its own
/// session (re-parented to rtshield, the subreaper): ended at the end of
/// the run, SIGTERM first, and named with its pid in the run's messages.
/// (Before: SIGKILLed and only counted.)
#[test]
fn f21_a_double_forked_daemon_is_ended_and_named() {
    let d = tempfile::tempdir().unwrap();
    let pid_file = d.path().join("daemon.pid");
    let left = Leftover {
        pid_file: pid_file.clone(),
        marker: "7774",
    };
    let cfg = write_cfg(
        d.path(),
        "d.cfg",
        &format!(
            "main\n{{\n  stats.period 200 ms\n}}\n{}\
             program[0]\n{{\n  cmdline sh -c \"(setsid sleep 7774 & echo $! > {}); exec sleep 300\"\n}}\n",
            timer("2 s"),
            pid_file.display()
        ),
    );
    let out = d.path().join("out");
    let o = run_quiet(&cfg, &out);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    let pid = wait_pid_file(&pid_file, 1);
    assert_eq!(
        left.live(),
        None,
        "the daemon outlived the run: {:?}",
        text(&o)
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!("{pid} (sleep)")) && err.contains("left running"),
        "{err}"
    );
}
