//! Live test on this machine: partition a private cpuset cgroup that holds
//! only `sleep` processes this test started (`--parent`), check their
//! affinity, run a command in rt, undo, and check everything is back.
//! Machine-wide knobs are not touched (no --with).

use crate::util::command as rtshield;
use crate::util::*;
use std::fs;
use std::path::Path;
use std::process::{Child, Command};
use std::time::Duration;

/// Owns the children and the test cgroup: on drop (even after a failed
/// assertion) kills the children, moves nothing else; then the private
/// parent removes the cgroups and the state file.
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
    }
}

fn allowed(pid: u32) -> String {
    let s = fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    s.lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap()
        .trim()
        .to_string()
}

fn ids(p: &Path) -> Vec<u32> {
    fs::read_to_string(p)
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect()
}

fn irq_affinities() -> Vec<(String, String)> {
    let mut v = vec![];
    for e in fs::read_dir("/proc/irq").unwrap().flatten() {
        let p = e.path().join("smp_affinity_list");
        if let Ok(s) = fs::read_to_string(&p) {
            v.push((p.display().to_string(), s));
        }
    }
    v.sort();
    v
}

#[test]
fn live_partition_of_a_private_cgroup() {
    if !require_cpuset_v1_two_cpus("live partition test writes cgroups") {
        return;
    }
    let _turn = cpuset_partition_lock();
    let mut g = Guard {
        children: vec![],
        p: PrivateParent::create("rtshield-test"),
    };
    let name = g.p.name.clone();
    for _ in 0..2 {
        let c = Command::new("sleep").arg("60").spawn().unwrap();
        let pid = c.id();
        // Owned by the guard before anything can fail.
        g.children.push(c);
        fs::write(g.p.cg.join("tasks"), pid.to_string()).unwrap();
    }
    let pids: Vec<u32> = g.children.iter().map(|c| c.id()).collect();
    let irqs_before = irq_affinities();

    let out = ok(rtshield()
        .args(["partition", "create", "1", "--parent", &name])
        .output()
        .unwrap());
    assert!(out.contains("rt   CPUs 1"), "{out}");
    assert!(out.contains("Moved 2 task(s) to nrt"), "{out}");
    for &p in &pids {
        assert_eq!(allowed(p), "0", "pid {p} after create");
    }
    assert_eq!(ids(&g.p.cg.join("nrt/tasks")), pids);
    assert!(ids(&g.p.cg.join("tasks")).is_empty());
    assert_eq!(
        fs::read_to_string(g.p.cg.join("rt/cpuset.cpus")).unwrap(),
        "1\n"
    );
    assert!(g.p.state.exists());
    // --parent: machine-wide knobs untouched.
    assert_eq!(irq_affinities(), irqs_before);

    // Run a command in rt, SCHED_FIFO (it sleeps).
    let runner = rtshield()
        .args([
            "partition",
            "run",
            "rt",
            "--parent",
            &name,
            "--fifo",
            "10",
            "--",
            "sleep",
            "60",
        ])
        .spawn()
        .unwrap();
    let rpid = runner.id();
    g.children.push(runner);
    wait_until(
        Duration::from_secs(10),
        "partition run did not exec",
        || fs::read_to_string(format!("/proc/{rpid}/comm")).is_ok_and(|c| c.trim() == "sleep"),
    );
    assert_eq!(allowed(rpid), "1");
    assert_eq!(ids(&g.p.cg.join("rt/tasks")), vec![rpid]);
    let stat = fs::read_to_string(format!("/proc/{rpid}/stat")).unwrap();
    let after = &stat[stat.rfind(')').unwrap() + 1..];
    let policy: u32 = after.split_whitespace().nth(38).unwrap().parse().unwrap();
    assert_eq!(policy, 1, "SCHED_FIFO expected: {stat}");

    let st = ok(rtshield()
        .args(["partition", "status", "--parent", &name, "--json"])
        .output()
        .unwrap());
    let v: serde_json::Value = serde_json::from_str(&st).unwrap();
    assert_eq!(v["state"], "complete");
    assert_eq!(v["partitions"][0]["name"], "rt");
    assert_eq!(v["partitions"][0]["tasks"][0]["tid"], rpid);

    // Move one sleeper to rt and back.
    ok(rtshield()
        .args([
            "partition",
            "move",
            "rt",
            &pids[0].to_string(),
            "--parent",
            &name,
        ])
        .output()
        .unwrap());
    assert_eq!(allowed(pids[0]), "1");
    ok(rtshield()
        .args([
            "partition",
            "move",
            "nrt",
            &pids[0].to_string(),
            "--parent",
            &name,
        ])
        .output()
        .unwrap());
    assert_eq!(allowed(pids[0]), "0");

    let out = ok(rtshield()
        .args(["partition", "undo", "--parent", &name])
        .output()
        .unwrap());
    assert!(out.contains("Everything is back"), "{out}");
    let mut all = pids.clone();
    all.push(rpid);
    all.sort_unstable();
    assert_eq!(ids(&g.p.cg.join("tasks")), all);
    for &p in &all {
        assert_eq!(allowed(p), "0-1", "pid {p} after undo");
    }
    assert!(!g.p.cg.join("rt").exists() && !g.p.cg.join("nrt").exists());
    assert!(!g.p.state.exists());
    assert_eq!(irq_affinities(), irqs_before);
    // Idempotent.
    let out = ok(rtshield()
        .args(["partition", "undo", "--parent", &name])
        .output()
        .unwrap());
    assert!(out.contains("Nothing to undo"), "{out}");
}
