//! Live drift watch under a private parent (a cpuset holding only what the
//! test starts; machine-wide knobs untouched): a task the test adds to
//! `rt` and the `rt` set's CPUs changed are one event each in `audit
//! --follow`, and, made during a real `measure --partition`, reach its
//! results.json with a time bracketing the moment the test made them, its
//! timeline.csv's `drift` column once each, and the report's verdict of a
//! spike after them; a 30 s measurement in the partition, with nothing
//! changed, records none (its own threads joining `rt` are not drift). No
//! timing is asserted: the bounds come from the test's own clock around
//! each change, never from how fast the watch is.

use crate::util::command as rtshield;
use crate::util::*;
use rtshield_sys::{set_affinity, set_scheduler};
use rtshield_vocab::{CpuSet, Policy};
use serde_json::Value;
use std::fs;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// CLOCK_MONOTONIC, ns: the clock of the drift watch's `mono_zero_ns`.
fn mono_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Kills the children it owns (only ones the test started), undoes the
/// partition, then the private parent goes.
struct Guard {
    children: Vec<Child>,
    p: PrivateParent,
}

impl Drop for Guard {
    fn drop(&mut self) {
        for c in &mut self.children {
            let _ = c.kill();
            let _ = c.wait();
        }
        let _ = rtshield()
            .args(["partition", "undo", "--parent", &self.p.name])
            .output();
    }
}

fn partitioned(prefix: &str) -> Guard {
    let g = Guard {
        children: vec![],
        p: PrivateParent::create(prefix),
    };
    ok(rtshield()
        .args(["partition", "create", "1", "--parent", &g.p.name])
        .output()
        .unwrap());
    g
}

#[test]
fn a_task_added_to_rt_and_the_rt_cpus_changed_are_one_event_each() {
    if !require_cpuset_v1_two_cpus("live drift test writes cgroups") {
        return;
    }
    let _turn = cpuset_partition_lock();
    let mut g = partitioned("rtshield-drift");
    let rt = g.p.cg.join("rt");
    let mut follow = rtshield()
        .args([
            "audit", "1", "--follow", "--period", "100ms", "--parent", &g.p.name,
        ])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = follow.id() as i32;
    let stdout = follow.stdout.take().unwrap();
    g.children.push(follow);
    let mut lines = BufReader::new(stdout).lines();
    let first = lines.next().unwrap().unwrap();
    assert!(first.starts_with("Following what shields CPU 1"), "{first}");
    // The baseline is read before the header is printed.
    let sleeper = Command::new("sleep").arg("60").spawn().unwrap();
    let tid = sleeper.id();
    g.children.push(sleeper);
    fs::write(rt.join("tasks"), tid.to_string()).unwrap();
    let mut out = Vec::new();
    let mut read_until = |needle: &str, out: &mut Vec<String>| loop {
        let l = lines.next().expect("audit --follow ended early").unwrap();
        let hit = l.contains(needle);
        out.push(l);
        if hit {
            break;
        }
    };
    read_until("rt_task", &mut out);
    fs::write(rt.join("cpuset.cpus"), "0-1").unwrap();
    read_until("cpuset_cpus", &mut out);
    // A few more ticks: nothing else changed, nothing more is printed.
    std::thread::sleep(Duration::from_millis(500));
    // SIGTERM to the process this test started: it stops, exit 0.
    unsafe { libc::kill(pid, libc::SIGTERM) };
    let follow = g.children.remove(0);
    let o = follow.wait_with_output().unwrap();
    assert!(o.status.success(), "{o:?}");
    out.extend(lines.map_while(Result::ok));
    let events: Vec<&String> = out
        .iter()
        .filter(|l| !l.starts_with("not watched"))
        .collect();
    let rt_task: Vec<_> = events
        .iter()
        .filter(|l| l.contains("  rt_task  "))
        .collect();
    assert_eq!(rt_task.len(), 1, "{out:#?}");
    assert!(
        rt_task[0].contains(&format!("task {tid} (sleep)")),
        "{out:#?}"
    );
    assert!(rt_task[0].contains(" exposes CPU 1 "), "{out:#?}");
    let cpus: Vec<_> = events
        .iter()
        .filter(|l| l.contains("  cpuset_cpus  "))
        .collect();
    assert_eq!(cpus.len(), 1, "{out:#?}");
    assert!(
        cpus[0].contains(&format!("{}: 1 → 0-1", rt.display())),
        "{out:#?}"
    );
    // rt gained CPU 0, which is not measured: a change, not an exposure.
    assert!(cpus[0].contains(" changes  cpuset_cpus "), "{out:#?}");
    assert_eq!(events.len(), 2, "{out:#?}");
}

/// A SCHED_FIFO 99 thread on CPU 1, busy 2 ms (bounded: wall clock)
/// `bursts` times, `gap` apart: each delays the measuring thread there.
fn busy_bursts(bursts: usize, gap: Duration) {
    std::thread::Builder::new()
        .name("rtsh-drift2ms".into())
        .spawn(move || {
            set_affinity(0, &CpuSet::single(1)).expect("pin to CPU 1");
            set_scheduler(0, Policy::Fifo, 99).expect("SCHED_FIFO 99");
            for _ in 0..bursts {
                std::thread::sleep(gap);
                let end = Instant::now() + Duration::from_millis(2);
                while Instant::now() < end {
                    std::hint::spin_loop();
                }
            }
            let _ = set_scheduler(0, Policy::Other, 0);
        })
        .unwrap()
        .join()
        .unwrap();
}

/// The one event of `kind` in a results.json's `drift`, and the
/// CLOCK_MONOTONIC interval it says the change happened in.
fn event_of<'a>(r: &'a Value, kind: &str) -> (&'a Value, (u64, u64)) {
    let ev: Vec<&Value> = r["drift"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == kind)
        .collect();
    assert_eq!(ev.len(), 1, "one {kind} event: {}", r["drift"]);
    let zero = r["drift_watch"]["mono_zero_ns"].as_u64().unwrap();
    let at = |k: &str| zero + ev[0][k].as_u64().unwrap();
    (ev[0], (at("since_ns"), at("at_ns")))
}

/// The change was made within `made` (the test's clock around its write):
/// the event's `(since, at]` must hold a moment of it.
fn brackets(seen: (u64, u64), made: (u64, u64), what: &str) {
    assert!(
        seen.0 < made.1 && made.0 <= seen.1,
        "{what}: seen as changed in ({}, {}] ns, made in [{}, {}]",
        seen.0,
        seen.1,
        made.0,
        made.1
    );
}

/// The `drift` cells of timeline.csv, one per data row.
fn drift_cells(out: &Path) -> Vec<String> {
    let tl = fs::read_to_string(out.join("timeline.csv")).unwrap();
    let mut rows = tl.lines();
    assert!(rows.next().unwrap().ends_with(",drift"), "{tl}");
    rows.map(|l| l.rsplit(',').next().unwrap().to_string())
        .collect()
}

#[test]
fn changes_during_a_measurement_reach_its_results_timeline_and_spikes() {
    if !require_cpuset_v1_two_cpus("live drift test writes cgroups") {
        return;
    }
    // A FIFO 99 thread on CPU 1 and a traced measurement: the trace tests'
    // turn too (reaper_live's order).
    let _turns = (cpuset_partition_lock(), crate::trace_live::one_at_a_time());
    let mut g = partitioned("rtshield-drift-run");
    let rt = g.p.cg.join("rt");
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("res");
    let m = rtshield()
        .args(["measure", "--cpus", "1", "--duration", "5s", "--quiet"])
        .args(["--partition", "--partition-parent", &g.p.name])
        .args(["--trace-on", "500us", "--no-store", "--out"])
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    g.children.push(m);
    // One interval written: the watch's baseline is long read.
    wait_timeline_rows(&out, 1, 30);
    let sleeper = Command::new("sleep").arg("60").spawn().unwrap();
    let tid = sleeper.id();
    g.children.push(sleeper);
    let t0 = mono_ns();
    fs::write(rt.join("tasks"), tid.to_string()).unwrap();
    let joined = (t0, mono_ns());
    let t2 = mono_ns();
    fs::write(rt.join("cpuset.cpus"), "0-1").unwrap();
    let widened = (t2, mono_ns());
    // After both changes: late wake-ups of the measuring thread.
    busy_bursts(3, Duration::from_millis(300));
    poll(Duration::from_secs(60), "measure ends", || {
        g.children[0].try_wait().unwrap()
    });
    let o = g.children.remove(0).wait_with_output().unwrap();
    assert!(o.status.success(), "{}", describe(&o));
    let r = results(&out);
    // Exactly the two changes, each at a time bracketing the test's write.
    assert_eq!(r["drift"].as_array().unwrap().len(), 2, "{}", r["drift"]);
    let (task, seen) = event_of(&r, "rt_task");
    assert_eq!(task["object"], format!("task {tid} (sleep)"), "{task}");
    assert_eq!(task["effect"], "exposes");
    brackets(seen, joined, "the sleeper joining rt");
    let (cpus, seen) = event_of(&r, "cpuset_cpus");
    assert_eq!(
        (cpus["before"].as_str(), cpus["after"].as_str()),
        (Some("1"), Some("0-1"))
    );
    brackets(seen, widened, "rt's CPUs widened");
    // timeline.csv names each once, in the order made.
    let cells = drift_cells(&out);
    let row_of = |kind: &str| {
        let rows: Vec<usize> = (0..cells.len())
            .filter(|&i| cells[i].split(';').any(|k| k == kind))
            .collect();
        assert_eq!(rows.len(), 1, "{kind} in one row: {cells:?}");
        rows[0]
    };
    assert!(row_of("rt_task") <= row_of("cpuset_cpus"), "{cells:?}");
    let named: usize = cells
        .iter()
        .map(|c| c.split(';').filter(|k| !k.is_empty()).count())
        .sum();
    assert_eq!(named, 2, "{cells:?}");
    // The spikes after the changes name them in the report.
    let spikes = r["trace"]["spikes"].as_array().unwrap();
    let after = spikes
        .iter()
        .filter(|s| s["expected_ns"].as_u64().is_some_and(|t| t > widened.1))
        .count();
    assert!(after >= 1, "no spike after the changes: {}", r["trace"]);
    let rep = d.path().join("rep");
    ok(rtshield()
        .args(["report", "--format", "md", "-o"])
        .arg(&rep)
        .arg(&out)
        .output()
        .unwrap());
    let md = fs::read_to_string(rep.join("summary.md")).unwrap();
    let named = format!("rt_task task {tid} (sleep)");
    assert!(
        md.lines()
            .any(|l| l.contains("after drift: ") && l.contains(&named)),
        "{named} not in:\n{md}"
    );
    // Row k of the spikes table is spike k: named after the change only
    // when it came after the interval the change was seen in began.
    let rows: Vec<&str> = md
        .lines()
        .skip_while(|l| !l.starts_with("| # | CPU | thread"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .collect();
    assert_eq!(rows.len(), spikes.len(), "{md}");
    let since = event_of(&r, "rt_task").1 .0;
    for (row, s) in rows.iter().zip(spikes) {
        let t = s["expected_ns"].as_u64().unwrap();
        assert_eq!(
            row.contains(&named),
            t > since,
            "{row} (spike at {t}, change after {since})"
        );
    }
}

/// 30 s without a change, outside the partition lock: its own private
/// parent and partition (the sets of two private parents coexist: neither
/// parent is `cpu_exclusive`, so rt's exclusivity is refused, and noted, by
/// `partition create`), and nothing another test does reaches what this
/// watch reads (its own rt and nrt sets; the machine-wide knobs and IRQs,
/// which live tests never change; task affinities are not followed under
/// a private parent). So the other partition tests take their turns
/// meanwhile; only a test thread is held for the 30 s.
#[test]
fn a_measurement_without_change_records_no_drift() {
    if !require_cpuset_v1_two_cpus("live drift test writes cgroups") {
        return;
    }
    let g = partitioned("rtshield-drift-quiet");
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("res");
    let o = rtshield()
        .args(["measure", "--cpus", "1", "--duration", "30s", "--quiet"])
        .args(["--no-store", "--partition", "--partition-parent", &g.p.name])
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", describe(&o));
    // Nothing changed: no drift lines after the summary.
    assert!(!text(&o).0.contains("drift:"), "{}", describe(&o));
    let r = results(&out);
    assert_eq!(r["drift"], serde_json::json!([]), "{}", r["drift"]);
    let w = &r["drift_watch"];
    assert_eq!(w["cpus"], "1");
    assert_eq!(w["ran_on"], "0");
    // A tick a second over the 30 s, the baseline included.
    assert!(w["ticks"].as_u64().unwrap() >= 25, "{w}");
    assert_eq!(w["period_ns"], 1_000_000_000u64);
    let unwatched = w["unwatched"].to_string();
    assert!(
        !unwatched.contains("rt tasks"),
        "the partition was found: {unwatched}"
    );
    let cells = drift_cells(&out);
    assert!(cells.len() >= 25, "{cells:?}");
    assert!(
        cells.iter().all(|c| c.is_empty()),
        "no drift in any interval: {cells:?}"
    );
}
