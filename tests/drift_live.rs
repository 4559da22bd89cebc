//! Live drift watch under a private parent (a cpuset holding only what the
//! test starts; machine-wide knobs untouched): a task the test adds to
//! `rt` and the `rt` set's CPUs changed are one event each in `audit
//! --follow`; a 3 s measurement in the partition, with nothing changed,
//! records none (its own threads joining `rt` are not drift). No timing
//! is asserted.

use crate::util::command as rtshield;
use crate::util::*;
use std::fs;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

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

#[test]
fn a_measurement_without_change_records_no_drift() {
    if !require_cpuset_v1_two_cpus("live drift test writes cgroups") {
        return;
    }
    let _turn = cpuset_partition_lock();
    let g = partitioned("rtshield-drift-quiet");
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("res");
    let o = rtshield()
        .args([
            "measure",
            "--cpus",
            "1",
            "--duration",
            "3s",
            "--quiet",
            "--partition",
        ])
        .args(["--partition-parent", &g.p.name])
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
    assert!(w["ticks"].as_u64().unwrap() >= 2, "{w}");
    assert_eq!(w["period_ns"], 1_000_000_000u64);
    let unwatched = w["unwatched"].to_string();
    assert!(
        !unwatched.contains("rt tasks"),
        "the partition was found: {unwatched}"
    );
    let tl = fs::read_to_string(out.join("timeline.csv")).unwrap();
    let mut rows = tl.lines();
    assert!(rows.next().unwrap().ends_with(",temp_c,drift"));
    for l in rows {
        assert!(l.ends_with(','), "no drift in any interval: {l}");
    }
}
