//! Live: the systress article's `rpi_cpuset.cfg` and `rpi_cpuset_load.cfg`
//! (main in `nrt`, the timer thread in `rt`) run under a private `--parent`
//! partition of this machine, folded onto its CPUs (any count from 2: the
//! timer's CPU and main's set are those `--fold-cpus` gives here, e.g.
//! CPU 1 and CPU 0 on 2 CPUs, CPU 3 and 0-2 on 4); each thread's
//! `Cpus_allowed_list` and cpuset cgroup are read from `/proc` while it runs.
//! The partition holds only the processes this test starts; a guard undoes
//! it even when an assertion fails. Machine-wide knobs are not touched.

use crate::util::command as rtshield;
use crate::util::*;
use rtshield_sys::Root;
use rtshield_vocab::CpuSet;
use std::fs;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// Owns the private cgroup, the partition inside it and the run: on drop
/// (even after a failed assertion) kills the run and undoes the partition;
/// then the private parent removes the cgroups and the state file.
struct Guard {
    p: PrivateParent,
    run: Option<Child>,
}

impl Drop for Guard {
    fn drop(&mut self) {
        if let Some(c) = &mut self.run {
            let _ = c.kill();
            let _ = c.wait();
        }
        let _ = rtshield()
            .args(["partition", "undo", "--parent", &self.p.name])
            .output();
    }
}

/// (comm, Cpus_allowed_list, cpuset cgroup path) of thread `tid` of `pid`.
fn thread(pid: u32, tid: u32) -> Option<(String, String, String)> {
    let base = format!("/proc/{pid}/task/{tid}");
    let comm = fs::read_to_string(format!("{base}/comm")).ok()?;
    let status = fs::read_to_string(format!("{base}/status")).ok()?;
    // A program that just ended (ping is missing here: it exits at once and
    // is respawned later) is a zombie whose cgroup reads `/`: skipped.
    let state = status.lines().find_map(|l| l.strip_prefix("State:"))?;
    if state.trim_start().starts_with(['Z', 'X']) {
        return None;
    }
    let allowed = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))?
        .trim()
        .to_string();
    let cg = fs::read_to_string(format!("{base}/cgroup")).ok()?;
    let cpuset = cg.lines().find_map(|l| {
        let mut f = l.splitn(3, ':');
        let (_, ctl, path) = (f.next()?, f.next()?, f.next()?);
        ctl.split(',')
            .any(|c| c == "cpuset")
            .then(|| path.to_string())
    })?;
    Some((comm.trim().to_string(), allowed, cpuset))
}

fn threads(pid: u32) -> Vec<(u32, String, String, String)> {
    let mut v: Vec<(u32, String, String, String)> = fs::read_dir(format!("/proc/{pid}/task"))
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
                .filter_map(|tid| thread(pid, tid).map(|(c, a, g)| (tid, c, a, g)))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

#[test]
fn rpi_cpuset_configs_put_each_thread_in_its_partition() {
    if !require_cpuset_v1_two_cpus("live run under a cpuset partition") {
        return;
    }
    let _turn = cpuset_partition_lock();
    // Where `--fold-cpus` puts the timer (CPU 3 on the board) and main
    // (0-2) on this machine: the partition follows.
    let online = CpuSet::parse_list(&online_cpus()).unwrap();
    let machine = rtshield_config::Machine::from_root(&Root::host(), true).unwrap();
    let folded = rtshield_config::load(&example("rpi_cpuset.cfg"), &machine).unwrap();
    let rt_cpu = folded.timers[0].cpu.unwrap();
    let nrt_cpus = online.difference(&CpuSet::single(rt_cpu));
    let main_cpus = folded.main.cpu_affinity.clone().unwrap_or(online.clone());
    let main_allowed = main_cpus.intersection(&nrt_cpus).to_list();
    let rt_allowed = rt_cpu.to_string();
    let mut g = Guard {
        p: PrivateParent::with_cpus("rtshield-cfgtest", &online.to_list()),
        run: None,
    };
    let name = g.p.name.clone();
    // `partrt create 0x8` on the board; the timer's CPU here.
    let out = ok(rtshield()
        .args(["partition", "create", &rt_allowed, "--parent", &name])
        .output()
        .unwrap());
    assert!(out.contains(&format!("rt   CPUs {rt_cpu}")), "{out}");
    let (rt, nrt) = (format!("/{name}/rt"), format!("/{name}/nrt"));

    let d = tempfile::tempdir().unwrap();
    for cfg in ["rpi_cpuset.cfg", "rpi_cpuset_load.cfg"] {
        let out = d.path().join(cfg);
        let child = rtshield()
            .args(["run", "-q", "--fold-cpus", "--duration", "60s"])
            .arg(example(cfg))
            .arg("--out")
            .arg(&out)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let me = child.id();
        g.run = Some(child);
        // Wait for the measuring thread to be pinned in rt and, with the
        // load, for the four programs' shims to be in nrt.
        let progs = if cfg.contains("load") { 4 } else { 0 };
        let ts = poll(
            Duration::from_secs(30),
            "the measuring thread in rt",
            || {
                let ts = threads(me);
                let m0 = ts
                    .iter()
                    .any(|(_, c, a, cg)| c == "rtshield-m0" && *a == rt_allowed && *cg == rt);
                let kids = descendants(me as i32).len();
                (m0 && kids >= progs).then_some(ts)
            },
        );
        for (tid, comm, allowed, cg) in &ts {
            if comm == "rtshield-m0" {
                assert_eq!(
                    (allowed.as_str(), cg.as_str()),
                    (rt_allowed.as_str(), rt.as_str()),
                    "{cfg}: {ts:?}"
                );
            } else {
                // main (cgroup nrt) and every other thread with it.
                assert_eq!(cg, &nrt, "{cfg}: thread {tid} {comm}: {ts:?}");
                assert_eq!(allowed, &main_allowed, "{cfg}: thread {tid} {comm}: {ts:?}");
            }
        }
        assert!(
            ts.iter().any(|(tid, _, _, _)| *tid == me),
            "main thread listed"
        );
        // The programs (no `cgroup` in the file) run with main, in nrt, on
        // main's CPUs (CPU 0 on 2 CPUs).
        for k in descendants(me as i32) {
            for (tid, comm, allowed, cg) in threads(k as u32) {
                assert_eq!(cg, nrt, "{cfg}: program {k} thread {tid} {comm}");
                assert_eq!(
                    allowed, main_allowed,
                    "{cfg}: program {k} thread {tid} {comm}"
                );
            }
        }
        Command::new("kill")
            .args(["-INT", &me.to_string()])
            .status()
            .unwrap();
        let o = g.run.take().unwrap().wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{cfg}: {err}");
        let r = results(&out);
        let warnings = r["warnings"].to_string();
        assert!(!warnings.contains("main's cgroup"), "{cfg}: {warnings}");
        assert_eq!(r["end_reason"], "sigint", "{cfg}");
        assert_eq!(r["threads"][0]["cpu"], rt_cpu, "{cfg}");
        let txt = if progs > 0 {
            "rpi_cpuset_load.txt"
        } else {
            "rpi_cpuset.txt"
        };
        assert!(out.join(txt).exists(), "{cfg}: {txt}");
    }
    let out = ok(rtshield()
        .args(["partition", "undo", "--parent", &name])
        .output()
        .unwrap());
    assert!(out.contains("Everything is back"), "{out}");
}
