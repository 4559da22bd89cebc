//! Day-long run machinery, shortened: checkpoints survive kill -9,
//! rotation makes numbered directories, load/rest cycles are marked in the
//! timeline, built-in loads run and leave nothing behind.

use crate::util::*;
use std::process::Stdio;
use std::time::Duration;

#[test]
fn kill_9_leaves_complete_parseable_results() {
    let d = tempfile::tempdir().unwrap();
    let pidf = d.path().join("p.pid");
    let gcf = d.path().join("g.pid");
    let cfg = write_cfg(
        d.path(),
        "k.cfg",
        &format!(
            "main\n{{\n  stats.period 250 ms\n  stats.checkpoint 500 ms\n}}\n{}program[0]\n{{\n  cmdline sh -c \"echo $$ > {}; sleep 300 & echo $! > {}; wait\"\n}}\n",
            timer("60 s"),
            pidf.display(),
            gcf.display()
        ),
    );
    let out = d.path().join("out");
    let mut child = spawn_quiet(&cfg, &out);
    let prog = wait_pid_file(&pidf, 10);
    let grandchild = wait_pid_file(&gcf, 10);
    // Wait for at least two checkpoints, then kill -9 mid-run.
    wait_until(Duration::from_secs(20), "no checkpoint written", || {
        std::fs::read_to_string(out.join("timeline.csv")).is_ok_and(|t| t.lines().count() >= 6)
            && out.join("results.json").exists()
    });
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    // What is on disk parses with the project's own reader.
    let r = rtshield_results::read_json(out.join("results.json")).expect("checkpoint parses");
    assert_eq!(r.end_reason.as_deref(), Some("checkpoint"));
    // rtshield's own runs know every count.
    let t0 = &r.threads[0];
    let (samples, lost) = (t0.samples.unwrap(), t0.lost.unwrap());
    assert!(samples >= 400, "{samples}");
    let th = t0.histogram.as_ref().unwrap();
    let h: u64 = th.counts.iter().map(|c| c[1]).sum::<u64>() + th.overflow;
    assert_eq!(h, samples - lost, "histogram holds every sample");
    let txt = std::fs::read_to_string(out.join("timer_thread00.txt")).unwrap();
    assert!(txt.contains("SUMMARY"), "{txt}");
    // No temp file left half-written in place of a result.
    for e in std::fs::read_dir(&out).unwrap().flatten() {
        let n = e.file_name().to_string_lossy().into_owned();
        assert!(!n.ends_with(".tmp") || n.starts_with('.'), "{n}");
    }
    // The program and its grandchild died with rtshield: the shim leading
    // their group got its parent-death signal and killed the group.
    // (The group sleeps for 300 s: a survivor is caught.)
    wait_gone(prog, 10);
    wait_gone(grandchild, 10);
}

#[test]
fn rotation_makes_numbered_result_directories() {
    let d = tempfile::tempdir().unwrap();
    let cfg = write_cfg(
        d.path(),
        "rot.cfg",
        &format!(
            "main\n{{\n  stats.period 250 ms\n  stats.rotate 1 s\n}}\n{}",
            timer("2500 ms")
        ),
    );
    let out = d.path().join("out");
    let o = run_quiet(&cfg, &out);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    let mut total = 0;
    let mut requested = 0u64;
    for (n, reason) in [(1, "rotate"), (2, "rotate"), (3, "duration")] {
        let dir = d.path().join(format!("out-{n}"));
        let r = results(&dir);
        assert_eq!(r["end_reason"], reason, "out-{n}");
        assert_eq!(r["label"], format!("out-{n}"));
        assert_eq!(r["tags"]["part"], n.to_string());
        // No program: the run is tagged idle.
        assert_eq!(r["tags"]["load"], "idle");
        let s = r["threads"][0]["samples"].as_u64().unwrap();
        assert!(s > 0, "out-{n}");
        total += s;
        // Parts of 1 s, 1 s and the 0.5 s left: the run does not drift.
        let want: u64 = if n < 3 { 1_000_000_000 } else { 500_000_000 };
        assert_eq!(r["settings"]["requested_duration_ns"], want, "out-{n}");
        requested += want;
        assert!(dir.join("timeline.csv").exists());
    }
    assert!(!d.path().join("out-4").exists());
    assert_eq!(requested, 2_500_000_000);
    // 1 ms period: 2.5 s of parts cannot hold more than 2500 samples (+1 per part).
    assert!(total <= 2503, "{total}");
}

#[test]
fn rotation_rerun_starts_at_the_first_unused_number() {
    // The torture article's scripts number their daily files from the first
    // unused one; a re-run with the same --out must never overwrite a part.
    let d = tempfile::tempdir().unwrap();
    let cfg = write_cfg(
        d.path(),
        "rot.cfg",
        &format!(
            "main\n{{\n  stats.period 250 ms\n  stats.rotate 1 s\n}}\n{}",
            timer("1500 ms")
        ),
    );
    let out = d.path().join("out");
    let o = run_quiet(&cfg, &out);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    let first: Vec<Vec<u8>> = (1..=2)
        .map(|n| std::fs::read(d.path().join(format!("out-{n}/results.json"))).unwrap())
        .collect();
    // A stray directory in the way is skipped too.
    std::fs::create_dir(d.path().join("out-4")).unwrap();
    let o = run_quiet(&cfg, &out);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    for (n, bytes) in (1..=2).zip(&first) {
        let now = std::fs::read(d.path().join(format!("out-{n}/results.json"))).unwrap();
        assert_eq!(&now, bytes, "out-{n} was overwritten");
    }
    assert_eq!(results(&d.path().join("out-3"))["tags"]["part"], "3");
    assert!(!d.path().join("out-4/results.json").exists());
    assert_eq!(results(&d.path().join("out-5"))["tags"]["part"], "5");
    assert_eq!(results(&d.path().join("out-5"))["end_reason"], "duration");
    assert!(!d.path().join("out-6").exists());
}

#[test]
fn load_cycle_phases_are_marked_in_the_timeline() {
    let d = tempfile::tempdir().unwrap();
    let cfg = write_cfg(
        d.path(),
        "c.cfg",
        &format!(
            "main\n{{\n  stats.period 200 ms\n  load.cycle 1 s 2 s\n}}\n{}program[0]\n{{\n  cmdline sleep 300\n}}\n",
            timer("3500 ms")
        ),
    );
    let out = d.path().join("out");
    let o = run_quiet(&cfg, &out);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    let t = std::fs::read_to_string(out.join("timeline.csv")).unwrap();
    let phases: Vec<&str> = t
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(1).unwrap())
        .collect();
    assert!(phases.contains(&"load") && phases.contains(&"rest"), "{t}");
    let r = results(&out);
    // Load 0-1 s, rest 1-3 s, load from 3 s, the run lasts 3.5 s or more:
    // started, stopped for the rest phase (not an exit), started again.
    let spawns = r["programs"][0]["spawns"].as_u64().unwrap();
    assert!(spawns >= 2, "{}", r["programs"]);
    assert_eq!(r["programs"][0]["exits_ko"], 0);
}

#[test]
fn a_rest_first_cycle_starts_resting_and_no_timeline_row_spans_a_switch() {
    // The torture article's script rests first; rows every 1.5 s would
    // straddle the 1 s phases if they were not cut at each switch.
    let d = tempfile::tempdir().unwrap();
    let cfg = write_cfg(
        d.path(),
        "c.cfg",
        &format!(
            "main\n{{\n  stats.period 1500 ms\n  load.cycle rest 1 s load 1 s\n}}\n{}program[0]\n{{\n  cmdline sleep 300\n}}\n",
            timer("4 s")
        ),
    );
    let out = d.path().join("out");
    let o = run_quiet(&cfg, &out);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    let t = std::fs::read_to_string(out.join("timeline.csv")).unwrap();
    let rows: Vec<(f64, String)> = t
        .lines()
        .skip(1)
        .map(|l| {
            let mut f = l.split(',');
            let e: f64 = f.next().unwrap().parse().unwrap();
            (e, f.next().unwrap().to_string())
        })
        .collect();
    assert_eq!(rows[0].1, "rest", "the cycle starts with its rest:\n{t}");
    // Each row lies in one phase: its middle is in the phase it names
    // (the schedule: rest [0,1) load [1,2) rest [2,3) load [3,4) s)...
    let mut prev = 0.0;
    for (end, phase) in &rows {
        let mid = (prev + end) / 2.0;
        let want = if (mid as u64) % 2 == 0 {
            "rest"
        } else {
            "load"
        };
        if end - prev > 0.4 {
            assert_eq!(phase, want, "row {prev}..{end}:\n{t}");
        }
        prev = *end;
    }
    // ...and a row ends at each switch (the loads were switched then, the
    // row cut at the next 20 ms drain; generous slack for this noisy VM).
    for s in [1.0, 2.0, 3.0] {
        assert!(
            rows.iter().any(|(e, _)| *e >= s - 0.05 && *e < s + 0.4),
            "no row ends near the switch at {s} s:\n{t}"
        );
    }
    // The program ran in the load phases only: started twice, never failed.
    let r = results(&out);
    assert!(
        r["programs"][0]["spawns"].as_u64().unwrap() >= 2,
        "{}",
        r["programs"]
    );
    assert_eq!(r["programs"][0]["exits_ko"], 0);
}

#[test]
fn hell_runs_every_builtin_and_leaves_nothing() {
    let d = tempfile::tempdir().unwrap();
    let cfg = write_cfg(
        d.path(),
        "h.cfg",
        &format!(
            "main\n{{\n  stats.period 500 ms\n  stats.cpu_load all\n}}\n{}program[0]\n{{\n  load hell\n  load.size 1M\n  cpu_affinity 0\n}}\n",
            timer("2 s")
        ),
    );
    let out = d.path().join("out");
    let child = crate::util::command()
        .args(["run", cfg.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let me = child.id() as i32;
    // Watch the descendants until every worker kind has been seen (bounded:
    // start-up on a loaded machine is slow, the run lasts 2 s of measurement).
    let kinds = ["cpu", "memory", "io", "syscall", "fork", "net"];
    let mut kids: Vec<i32> = Vec::new();
    let mut cmdlines: Vec<String> = Vec::new();
    // A worker, not the shim whose command line names it.
    let worker =
        |c: &String, k: &str| !c.contains("__load exec") && c.contains(&format!("__load {k}"));
    let end = std::time::Instant::now() + Duration::from_secs(30);
    while std::time::Instant::now() < end {
        for p in descendants(me) {
            if let Ok(b) = std::fs::read(format!("/proc/{p}/cmdline")) {
                if !kids.contains(&p) {
                    kids.push(p);
                }
                let c = String::from_utf8_lossy(&b).replace('\0', " ");
                // Every worker runs with the load's cpu_affinity (CPU 0).
                if kinds.iter().any(|k| worker(&c, k)) {
                    if let Ok(st) = std::fs::read_to_string(format!("/proc/{p}/status")) {
                        if let Some(l) = st.lines().find(|l| l.starts_with("Cpus_allowed_list:")) {
                            let cpus = l.split_whitespace().last().unwrap_or("").to_string();
                            assert_eq!(cpus, "0", "worker {p} ({c}) not pinned to CPU 0");
                        }
                    }
                }
                if !cmdlines.contains(&c) {
                    cmdlines.push(c);
                }
            }
        }
        let all = kinds.iter().all(|k| cmdlines.iter().any(|c| worker(c, k)));
        if all || !alive(me) {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    for k in kinds {
        assert!(
            cmdlines.iter().any(|c| worker(c, k)),
            "{k} worker missing: {cmdlines:?}"
        );
    }
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0));
    let so = String::from_utf8_lossy(&o.stdout);
    assert!(so.contains("CPU#0 :") && so.contains("CPU    :"), "{so}");
    let r = results(&out);
    assert_eq!(r["programs"][0]["command"], "builtin:hell");
    assert_eq!(r["programs"][0]["spawns"], 6, "{}", r["programs"]);
    for k in &kids {
        assert!(!alive(*k), "worker {k} survived");
    }
    let leftovers: Vec<_> = std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(&format!("rtshield-io-{me}-"))
        })
        .collect();
    assert!(leftovers.is_empty(), "io temp dir left: {leftovers:?}");
    let tl = std::fs::read_to_string(out.join("timeline.csv")).unwrap();
    assert!(tl.lines().next().unwrap().contains("load_cpu0"), "{tl}");
}

/// kill -9 mid-run, then `--resume`: the checkpoint's samples are kept
/// once, the resumed run measures only the time left, the timeline goes on
/// after one `down` row per thread. Counts, not timing, are asserted.
#[test]
fn kill_9_then_resume_counts_no_sample_twice() {
    let d = tempfile::tempdir().unwrap();
    let cfg = write_cfg(
        d.path(),
        "r.cfg",
        &format!(
            "main\n{{\n  stats.period 250 ms\n  stats.checkpoint 500 ms\n}}\n{}",
            timer("3 s")
        ),
    );
    let out = d.path().join("out");
    let mut child = spawn_quiet(&cfg, &out);
    wait_until(Duration::from_secs(20), "no checkpoint written", || {
        rtshield_results::read_json(out.join("results.json")).is_ok_and(|r| {
            r.end_reason.as_deref() == Some("checkpoint") && r.threads[0].samples >= Some(500)
        })
    });
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let ck = rtshield_results::read_json(out.join("results.json")).unwrap();
    let s0 = ck.threads[0].samples.unwrap();
    let copy = d.path().join("copy");
    std::fs::create_dir(&copy).unwrap();
    std::fs::copy(out.join("results.json"), copy.join("results.json")).unwrap();
    // Rows written after the checkpoint exist now and must not survive.
    let o = run(&[
        "run",
        "-q",
        cfg.to_str().unwrap(),
        "--resume",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    let r = rtshield_results::read_json(out.join("results.json")).unwrap();
    let t = &r.threads[0];
    assert_eq!(r.end_reason.as_deref(), Some("duration"));
    assert_eq!(r.tags["resumed"], "1");
    let (samples, missed, lost) = (
        t.samples.unwrap(),
        t.missed_periods.unwrap(),
        t.lost.unwrap(),
    );
    assert!(samples > s0, "{samples} after {s0}");
    // 3 s at 1 ms: 3000 periods in all; a sample counted twice (or the lost
    // time measured again) would exceed them.
    assert!(samples + missed <= 3000 + 2, "{samples} + {missed}");
    let th = t.histogram.as_ref().unwrap();
    let h: u64 = th.counts.iter().map(|c| c[1]).sum::<u64>() + th.overflow;
    assert_eq!(h, samples - lost, "the histogram holds every sample once");
    // The timeline: rows up to the checkpoint, one `down` row with its
    // count, then rows counting on from it; time never goes back.
    let text_tl = std::fs::read_to_string(out.join("timeline.csv")).unwrap();
    let (_, recs) = rtshield_results::read_timeline(&text_tl, "timeline.csv").unwrap();
    let down: Vec<_> = recs.iter().filter(|r| r.phase == "down").collect();
    assert_eq!(down.len(), 1, "{text_tl}");
    assert_eq!(down[0].samples, Some(s0));
    let at = recs.iter().position(|r| r.phase == "down").unwrap();
    assert!(
        recs[..at].iter().all(|r| r.samples.unwrap() <= s0),
        "{text_tl}"
    );
    assert!(
        recs[at + 1..].iter().all(|r| r.samples.unwrap() > s0),
        "{text_tl}"
    );
    assert!(at + 1 < recs.len(), "rows after the gap: {text_tl}");
    assert!(
        recs.windows(2)
            .all(|w| w[0].elapsed_s <= w[1].elapsed_s
                && w[0].samples.unwrap() <= w[1].samples.unwrap()),
        "{text_tl}"
    );
    assert_eq!(recs.last().unwrap().samples, t.samples);
    // A finished run has nothing to resume; another configuration is refused.
    let o = run(&[
        "run",
        "-q",
        cfg.to_str().unwrap(),
        "--resume",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{:?}", text(&o));
    assert!(text(&o).1.contains("nothing to resume"), "{:?}", text(&o));
    let other = write_cfg(d.path(), "o.cfg", &timer("3 s"));
    let o = run(&[
        "run",
        "-q",
        other.to_str().unwrap(),
        "--resume",
        copy.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{:?}", text(&o));
    assert!(
        text(&o).1.contains("another configuration"),
        "{:?}",
        text(&o)
    );
    assert!(!copy.join("timeline.csv").exists(), "nothing started");
}

/// Resume a rotated run in its second part: the part is completed to its
/// rotation length, the next part follows, the run's total holds.
#[test]
fn resume_continues_a_rotated_run_in_its_part() {
    let d = tempfile::tempdir().unwrap();
    let cfg = write_cfg(
        d.path(),
        "rr.cfg",
        &format!(
            "main\n{{\n  stats.period 100 ms\n  stats.checkpoint 200 ms\n  stats.rotate 1 s\n}}\n{}",
            timer("3 s")
        ),
    );
    let out = d.path().join("out");
    let p2 = d.path().join("out-2");
    let mut child = spawn_quiet(&cfg, &out);
    wait_until(Duration::from_secs(20), "no checkpoint in part 2", || {
        rtshield_results::read_json(p2.join("results.json")).is_ok_and(|r| {
            r.end_reason.as_deref() == Some("checkpoint") && r.threads[0].samples >= Some(200)
        })
    });
    child.kill().unwrap();
    child.wait().unwrap();
    let part1 = std::fs::read(d.path().join("out-1/results.json")).unwrap();
    let ck = rtshield_results::read_json(p2.join("results.json")).unwrap();
    let o = run(&[
        "run",
        "-q",
        cfg.to_str().unwrap(),
        "--resume",
        p2.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    assert_eq!(
        std::fs::read(d.path().join("out-1/results.json")).unwrap(),
        part1
    );
    let r2 = rtshield_results::read_json(p2.join("results.json")).unwrap();
    assert_eq!(r2.end_reason.as_deref(), Some("rotate"));
    assert_eq!(r2.tags["part"], "2");
    assert_eq!(r2.tags["resumed"], "1");
    assert!(r2.threads[0].samples.unwrap() > ck.threads[0].samples.unwrap());
    let r3 = rtshield_results::read_json(d.path().join("out-3/results.json")).unwrap();
    assert_eq!(r3.end_reason.as_deref(), Some("duration"));
    assert_eq!(r3.label.as_deref(), Some("out-3"));
    assert!(!d.path().join("out-4").exists());
    // Three parts of one second at 1 ms: 3000 periods; nothing counted twice.
    let r1 = rtshield_results::read_json(d.path().join("out-1/results.json")).unwrap();
    let n: u64 = [&r1, &r2, &r3]
        .iter()
        .map(|r| r.threads[0].samples.unwrap() + r.threads[0].missed_periods.unwrap())
        .sum();
    assert!(n <= 3000 + 3, "{n}");
    // Part 2 was completed to its length, not restarted: about 1 s of it.
    let (s2, m2) = (
        r2.threads[0].samples.unwrap(),
        r2.threads[0].missed_periods.unwrap(),
    );
    assert!(s2 + m2 <= 1000 + 2, "{s2}");
}

/// A run stopped by SIGTERM before its end resumes like a killed one: its
/// final files hold every sample, the resumed run adds the time left.
#[test]
fn a_run_stopped_by_sigterm_resumes() {
    let d = tempfile::tempdir().unwrap();
    let cfg = write_cfg(
        d.path(),
        "t.cfg",
        &format!("main\n{{\n  stats.period 100 ms\n}}\n{}", timer("2 s")),
    );
    let out = d.path().join("out");
    let mut child = spawn_quiet(&cfg, &out);
    wait_timeline_rows(&out, 3, 20);
    // SAFETY: a plain kill(2) of the child this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    child.wait().unwrap();
    let first = rtshield_results::read_json(out.join("results.json")).unwrap();
    assert_eq!(first.end_reason.as_deref(), Some("sigterm"));
    let o = run(&[
        "run",
        "-q",
        cfg.to_str().unwrap(),
        "--resume",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    let r = rtshield_results::read_json(out.join("results.json")).unwrap();
    assert_eq!(r.end_reason.as_deref(), Some("duration"));
    let t = &r.threads[0];
    let (samples, missed) = (t.samples.unwrap(), t.missed_periods.unwrap());
    assert!(samples > first.threads[0].samples.unwrap());
    assert!(samples + missed <= 2000 + 2, "{samples}");
}

/// `--resume DIR` where `results.json` is a FIFO nobody writes (or a huge
/// file): refused at once with exit 2, never a read that blocks forever.
#[test]
fn resume_refuses_a_fifo_instead_of_blocking() {
    let d = tempfile::tempdir().unwrap();
    let cfg = write_cfg(d.path(), "t.cfg", &timer("2 s"));
    let dir = d.path().join("planted");
    std::fs::create_dir(&dir).unwrap();
    let fifo = std::ffi::CString::new(dir.join("results.json").to_str().unwrap()).unwrap();
    // SAFETY: a plain mkfifo on a path of this test's temp dir.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    let mut child = crate::util::command()
        .args([
            "run",
            "-q",
            cfg.to_str().unwrap(),
            "--resume",
            dir.to_str().unwrap(),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A deadline for the refusal, not a timing assertion: a blocking read
    // would never end, and the child is killed rather than left behind.
    let end = std::time::Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if std::time::Instant::now() > end {
            let _ = child.kill();
            let _ = child.wait();
            panic!("run --resume on a FIFO still blocked after 30 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(status.code(), Some(2), "{err}");
    assert!(err.contains("not a regular file"), "{err}");
}

/// Round-2 finding B5 (repro-B5-resume-overflow.sh): a checkpoint whose
/// counts are near 2^64 (copied from elsewhere, or edited) was accepted,
/// the run measured the time left, then panicked adding the counts
/// (observer.rs, exit 101) and the resumed part was lost. Now the
/// checkpoint is read with every range checked (docs/ranges.md): refused
/// with exit 2 before anything is measured, the directory untouched.
#[test]
fn resume_refuses_a_checkpoint_whose_counts_overflow() {
    let d = tempfile::tempdir().unwrap();
    let cfg = write_cfg(
        d.path(),
        "o.cfg",
        "main\n{\n  stats.period 250 ms\n  stats.checkpoint 500 ms\n}\ntimer_thread[0]\n{\n  \
         cpu_affinity 0\n  sched.policy OTHER\n  period 1 ms\n  lifetime.duration 2 s\n}\n",
    );
    let out = d.path().join("out");
    let o = run_quiet(&cfg, &out);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    // The finished run made a checkpoint of its first second, with
    // counts an attacker chose.
    let mut v = results(&out);
    v["end_reason"] = "checkpoint".into();
    v["duration_s"] = 1.0.into();
    v["threads"][0]["samples"] = u64::MAX.into();
    v["threads"][0]["histogram"]["counts"] = serde_json::json!([[5, u64::MAX]]);
    let ck = serde_json::to_string_pretty(&v).unwrap();
    std::fs::write(out.join("results.json"), &ck).unwrap();
    let o = run(&[
        "run",
        "-q",
        cfg.to_str().unwrap(),
        "--resume",
        out.to_str().unwrap(),
    ]);
    let err = text(&o).1;
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--resume") && err.contains("threads[0].samples") && !err.contains("resuming"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(out.join("results.json")).unwrap(),
        ck
    );
}
