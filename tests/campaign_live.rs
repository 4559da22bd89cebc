//! Live campaign (root): 2 isolation methods x 2 loads x 2 repeats of 1 s,
//! the partition under a private `--parent` cgroup this test creates. The
//! campaign is killed with SIGKILL part-way, resumed with `--resume`, and
//! must end with 8 stored runs (each cell and repeat once), no partition
//! left behind, and a report.

use crate::util::*;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Removes the test's cgroups and state file even when an assertion fails
/// (undoing through rtshield first, so moved tasks go back; then the
/// private parent removes what is left).
struct Guard {
    p: PrivateParent,
}

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = command()
            .args(["partition", "undo", "--parent", &self.p.name])
            .output();
    }
}

fn stored(db: &Path, campaign: &str) -> Vec<serde_json::Value> {
    let o = command()
        .args(["runs", "--store"])
        .arg(db)
        .args([
            "list",
            "--json",
            "--where",
            &format!("campaign = {campaign}"),
        ])
        .output()
        .unwrap();
    if !o.status.success() {
        return Vec::new();
    }
    serde_json::from_slice::<serde_json::Value>(&o.stdout)
        .ok()
        .and_then(|v| v.as_array().cloned())
        .unwrap_or_default()
}

/// A measuring thread in `<parent>/rt` while its process's main thread is
/// in `<parent>/nrt`: (thread id, process id), when one is there now.
fn measuring_thread_in_rt(cg: &Path) -> Option<(u32, u32)> {
    let rt = fs::read_to_string(cg.join("rt/tasks")).ok()?;
    let nrt = fs::read_to_string(cg.join("nrt/tasks")).ok()?;
    let nrt: Vec<&str> = nrt.split_whitespace().collect();
    rt.split_whitespace().find_map(|tid| {
        let status = fs::read_to_string(format!("/proc/{tid}/status")).ok()?;
        let tgid = status
            .lines()
            .find_map(|l| l.strip_prefix("Tgid:"))?
            .trim()
            .to_string();
        if tgid == tid || !nrt.contains(&tgid.as_str()) {
            return None;
        }
        Some((tid.parse().ok()?, tgid.parse().ok()?))
    })
}

fn tasks(p: &Path) -> usize {
    fs::read_to_string(p)
        .map(|s| s.split_whitespace().count())
        .unwrap_or(0)
}

#[test]
fn campaign_killed_then_resumed_stores_every_run_once_and_leaves_no_partition() {
    if !require_cpuset_v1_two_cpus("a live campaign makes cpuset partitions and SCHED_FIFO threads")
    {
        return;
    }
    let _turn = cpuset_partition_lock();
    let g = Guard {
        p: PrivateParent::create("rtshield-camp"),
    };
    let name = g.p.name.clone();
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("c.toml");
    let campaign = format!("live{}", std::process::id());
    fs::write(
        &file,
        format!(
            "name = \"{campaign}\"\ncpus = \"1\"\nload_cpus = \"0\"\nduration = \"1s\"\nrepeat = 2\n\
             [measure]\nperiod = \"1ms\"\n[axes]\nisolation = [\"none\", \"partition\"]\n\
             load = [\"idle\", \"cpu\"]\n[partition]\nparent = \"{name}\"\n"
        ),
    )
    .unwrap();
    let db = d.path().join("runs.db");
    let out = d.path().join("out");
    // The same user resumes: the same data directory, where the campaign
    // keeps its record of the runs it measured (each command of the test
    // kit has a private HOME of its own otherwise).
    let data = d.path().join("data");
    let args = |resume: bool| {
        let mut c = command();
        c.env("XDG_DATA_HOME", &data);
        c.arg("campaign")
            .arg(&file)
            .arg("--store")
            .arg(&db)
            .arg("--out")
            .arg(&out);
        if resume {
            c.arg("--resume");
        }
        c
    };
    let mut first = Kill(
        args(false)
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    // A partition cell measures inside the partition: its measuring
    // thread in <parent>/rt, the measure's main thread in <parent>/nrt.
    let mut seen_in_rt = None;
    wait_until(
        Duration::from_secs(120),
        "a measuring thread in the rt set",
        || {
            seen_in_rt = measuring_thread_in_rt(&g.p.cg);
            seen_in_rt.is_some()
        },
    );
    let (tid, pid) = seen_in_rt.unwrap();
    assert_ne!(tid, pid);
    // Kill it once three runs are stored: mid-campaign, mid-cell.
    wait_until(Duration::from_secs(120), "3 stored runs", || {
        stored(&db, &campaign).len() >= 3
    });
    first.0.kill().unwrap();
    first.0.wait().unwrap();
    // The killed cell's measure ends on its own within the cell's second;
    // wait for the rt and nrt sets to empty (its measuring thread in rt,
    // its main thread in nrt).
    wait_until(
        Duration::from_secs(30),
        "the killed cell's processes to end",
        || tasks(&g.p.cg.join("rt/tasks")) == 0 && tasks(&g.p.cg.join("nrt/tasks")) == 0,
    );
    let before = stored(&db, &campaign).len();
    assert!(
        (3..8).contains(&before),
        "{before} runs stored before resume"
    );

    let o = args(true).output().unwrap();
    let text = ok(o);
    assert!(text.contains(&format!("{before} already stored")), "{text}");
    let runs = stored(&db, &campaign);
    assert_eq!(runs.len(), 8, "{text}");
    let mut seen: Vec<(String, String)> = runs
        .iter()
        .map(|r| {
            (
                r["tags"]["cell"].as_str().unwrap().to_string(),
                r["tags"]["repeat"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), 8, "each cell and repeat stored once: {seen:?}");
    // `step`: each run's place in the interleaved order, 1..8 once each.
    let mut steps: Vec<u64> = runs
        .iter()
        .map(|r| r["tags"]["step"].as_str().unwrap().parse().unwrap())
        .collect();
    steps.sort();
    assert_eq!(steps, (1..=8).collect::<Vec<u64>>());
    // Runs of the partition cells saw rtshield's partition in force.
    for r in &runs {
        let asked = r["tags"]["isolation"].as_str().unwrap();
        let found = r["tags"]["isolation_detected"].as_str().unwrap();
        if asked == "partition" {
            assert!(found.contains("partition"), "{found}");
        }
    }
    // No partition left behind.
    assert!(!g.p.cg.join("rt").exists() && !g.p.cg.join("nrt").exists());
    assert!(!Path::new(&format!("/run/rtshield/partition-{name}.json")).exists());
    let md = fs::read_to_string(out.join("report/summary.md")).unwrap();
    assert!(md.contains("| idle | partition | 2 |"), "{md}");
    assert!(md.contains("| cpu | none | 2 |"), "{md}");
}

/// Root, a cgroup v1 cpuset hierarchy and 2 CPUs; then a private parent
/// cgroup (removed by the guard) for the campaign's partition.
fn private_parent(tag: &str) -> Option<Guard> {
    if !require_cpuset_v1_two_cpus("a live campaign makes cpuset partitions and SCHED_FIFO threads")
    {
        return None;
    }
    Some(Guard {
        p: PrivateParent::create(&format!("rtshield-camp{tag}")),
    })
}

fn one_partition_cell(dir: &Path, g: &Guard, duration: &str, load: &str) -> PathBuf {
    let file = dir.join("c.toml");
    fs::write(
        &file,
        format!(
            "name = \"one{}\"\ncpus = \"1\"\nload_cpus = \"0\"\nduration = \"{duration}\"\nrepeat = 1\n\
             [measure]\nperiod = \"1ms\"\n[axes]\nisolation = [\"partition\"]\n\
             load = [{load:?}]\n[partition]\nparent = \"{}\"\n",
            std::process::id(),
            g.p.name
        ),
    )
    .unwrap();
    file
}

#[test]
fn campaign_sigterm_in_a_partition_cell_undoes_it_and_says_sigterm() {
    let _turn = cpuset_partition_lock();
    let Some(g) = private_parent("term") else {
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let file = one_partition_cell(d.path(), &g, "60s", "idle");
    let mut c = Kill(
        command()
            .arg("campaign")
            .arg(&file)
            .arg("--store")
            .arg(d.path().join("runs.db"))
            .arg("--out")
            .arg(d.path().join("out"))
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap(),
    );
    wait_until(
        Duration::from_secs(60),
        "the cell's measuring thread in the rt set",
        || measuring_thread_in_rt(&g.p.cg).is_some(),
    );
    // SAFETY: signalling the campaign this test started.
    unsafe { libc::kill(c.0.id() as libc::pid_t, libc::SIGTERM) };
    let mut text = String::new();
    std::io::Read::read_to_string(c.0.stdout.as_mut().unwrap(), &mut text).unwrap();
    let st = c.0.wait().unwrap();
    assert_eq!(st.code(), Some(128 + 15), "{text}");
    assert!(text.contains("interrupted (sigterm)"), "{text}");
    assert!(text.contains("stopped by sigterm"), "{text}");
    assert!(!text.contains("sigint"), "{text}");
    assert!(!g.p.cg.join("rt").exists() && !g.p.cg.join("nrt").exists());
    assert!(!Path::new(&format!("/run/rtshield/partition-{}.json", g.p.name)).exists());
}

#[test]
fn campaign_cell_whose_load_command_exits_at_once_fails_and_leaves_no_partition() {
    let _turn = cpuset_partition_lock();
    let Some(g) = private_parent("fail") else {
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let file = one_partition_cell(d.path(), &g, "1s", "cmd:exit 3");
    let o = command()
        .arg("campaign")
        .arg(&file)
        .arg("--store")
        .arg(d.path().join("runs.db"))
        .arg("--out")
        .arg(d.path().join("out"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("the load command `exit 3` ended (exit status: 3)"),
        "{err}"
    );
    assert!(!g.p.cg.join("rt").exists() && !g.p.cg.join("nrt").exists());
    assert!(!Path::new(&format!("/run/rtshield/partition-{}.json", g.p.name)).exists());
}

#[test]
fn campaign_start_undoes_a_leftover_partition_before_any_cell() {
    let _turn = cpuset_partition_lock();
    let Some(g) = private_parent("left") else {
        return;
    };
    // A partition left behind (as by a SIGKILLed campaign).
    ok(command()
        .args(["partition", "create", "1", "--parent", &g.p.name])
        .output()
        .unwrap());
    assert!(g.p.cg.join("rt").exists());
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("c.toml");
    // The first cell (isolation none) fails at once: no partition cell
    // ever runs, so only the start-up undo can remove the leftover.
    fs::write(
        &file,
        format!(
            "name = \"left{}\"\ncpus = \"1\"\nduration = \"1s\"\norder = \"sequential\"\n\
             [axes]\nisolation = [\"none\", \"partition\"]\nload = [\"cmd:exit 3\"]\n\
             [partition]\nparent = \"{}\"\n",
            std::process::id(),
            g.p.name
        ),
    )
    .unwrap();
    let o = command()
        .arg("campaign")
        .arg(&file)
        .arg("--store")
        .arg(d.path().join("runs.db"))
        .arg("--out")
        .arg(d.path().join("out"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("cell isolation=none,load=cmd:exit 3"), "{err}");
    assert!(!g.p.cg.join("rt").exists() && !g.p.cg.join("nrt").exists());
    assert!(!Path::new(&format!("/run/rtshield/partition-{}.json", g.p.name)).exists());
}

/// Issue 23's "Done means": a `syncio` load (150 threads in `O_SYNC`
/// writes, still exiting in `nrt` when the cell ends) × a partition cell,
/// 20 times: every partition undone (the undo waits for the exiting
/// tasks instead of failing on EBUSY), every run stored.
#[test]
fn syncio_partition_cell_twenty_times_leaves_no_partition() {
    let _turn = cpuset_partition_lock();
    let Some(g) = private_parent("sync") else {
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("c.toml");
    let campaign = format!("sync{}", std::process::id());
    fs::write(
        &file,
        format!(
            "name = \"{campaign}\"\ncpus = \"1\"\nload_cpus = \"0\"\nduration = \"1s\"\nrepeat = 20\n\
             [measure]\nperiod = \"1ms\"\n[axes]\nisolation = [\"partition\"]\n\
             load = [\"syncio\"]\n[partition]\nparent = \"{}\"\n",
            g.p.name
        ),
    )
    .unwrap();
    let db = d.path().join("runs.db");
    let o = command()
        .arg("campaign")
        .arg(&file)
        .arg("--store")
        .arg(&db)
        .arg("--out")
        .arg(d.path().join("out"))
        .output()
        .unwrap();
    let text = ok(o);
    assert!(text.contains("20 stored"), "{text}");
    assert_eq!(stored(&db, &campaign).len(), 20);
    assert!(!g.p.cg.join("rt").exists() && !g.p.cg.join("nrt").exists());
    assert!(!Path::new(&format!("/run/rtshield/partition-{}.json", g.p.name)).exists());
}

/// A cell's partition that cannot be undone (here: a cgroup its load made
/// inside `nrt`, which keeps `rmdir` busy) no longer ends the campaign
/// without a report: the run is stored, the report written, and the
/// campaign says what is left and the command that finishes the undo,
/// which then works.
#[test]
fn campaign_whose_undo_fails_still_reports_and_names_the_command() {
    let _turn = cpuset_partition_lock();
    let Some(g) = private_parent("left2") else {
        return;
    };
    let sub = g.p.cg.join("nrt/sub");
    let d = tempfile::tempdir().unwrap();
    let load = format!("cmd:mkdir {} && exec sleep 60", sub.display());
    let file = one_partition_cell(d.path(), &g, "1s", &load);
    let o = command()
        .arg("campaign")
        .arg(&file)
        .arg("--store")
        .arg(d.path().join("runs.db"))
        .arg("--out")
        .arg(d.path().join("out"))
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    let _ = fs::remove_dir(&sub);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{out}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(out.contains("1 stored"), "{out}");
    assert!(out.contains("the partition is LEFT"), "{out}");
    assert!(
        out.contains("holds cgroup(s) rtshield did not make: sub"),
        "{out}"
    );
    let cmd = format!("partition undo --parent {}", g.p.name);
    assert!(out.contains(&cmd), "{out}");
    assert!(d.path().join("out/report/summary.md").is_file(), "{out}");
    // The command it gave finishes the undo.
    let o = command()
        .args(["partition", "undo", "--parent", &g.p.name])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", all_text(&o));
    assert!(!g.p.cg.join("rt").exists() && !g.p.cg.join("nrt").exists());
}
