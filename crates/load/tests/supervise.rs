//! The supervisor against real (harmless) processes: sh, sleep, true.

use rtshield_load::{Event, ProcSpec, Supervisor};
use rtshield_testkit::alive;
use rtshield_vocab::{CpuSet, Output, Termination};
use std::time::{Duration, Instant};

fn sh(label: &str, script: &str) -> ProcSpec {
    ProcSpec::new(label, vec!["sh".into(), "-c".into(), script.into()])
}

/// Poll until `f`, or 30 s (generous: a loaded machine only makes it slower).
fn poll_until(
    sup: &mut Supervisor,
    mut f: impl FnMut(&[Event], &Supervisor) -> bool,
) -> Vec<Event> {
    let mut all = Vec::new();
    let end = Instant::now() + Duration::from_secs(30);
    while Instant::now() < end {
        all.extend(sup.poll());
        if f(&all, sup) {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    all
}

#[test]
fn respawn_counts_spawns_and_exits() {
    let mut s = sh("p", "exit 0");
    s.on_ok = Termination::Respawn;
    let mut sup = Supervisor::new(vec![s]).unwrap();
    sup.start();
    // Fast exits back off 100, 200, 400 ms: 3 spawns within ~0.4 s.
    poll_until(&mut sup, |_, s| s.stats()[0].1.spawns >= 3);
    sup.shutdown();
    let st = &sup.stats()[0].1;
    assert!(st.spawns >= 3, "{st:?}");
    assert!(st.exits_ok >= 2, "{st:?}");
    assert_eq!(st.exits_ko, 0);
}

#[test]
fn stop_policy_asks_to_end_the_run() {
    let mut s = sh("p1", "exit 3");
    s.on_ko = Termination::Stop;
    let mut sup = Supervisor::new(vec![s]).unwrap();
    sup.start();
    let ev = poll_until(&mut sup, |e, _| {
        e.iter().any(|x| matches!(x, Event::Stop { .. }))
    });
    assert!(
        ev.contains(&Event::Stop {
            label: "p1".into(),
            how: "exit 3".into()
        }),
        "{ev:?}"
    );
    assert_eq!(sup.stats()[0].1.exits_ko, 1);
}

#[test]
fn ignore_leaves_it_dead_and_missing_programs_count_as_failures() {
    let a = sh("a", "exit 1");
    let b = ProcSpec::new("b", vec!["/nonexistent/rtshield-test-prog".into()]);
    let mut sup = Supervisor::new(vec![a, b]).unwrap();
    let ev = sup.start();
    assert!(ev
        .iter()
        .any(|e| matches!(e, Event::SpawnFailed { label, .. } if label == "b")));
    poll_until(&mut sup, |_, s| s.stats()[0].1.exits_ko == 1);
    // Left dead for good: no respawn is pending (no sleep-and-see).
    assert_eq!(sup.ended_per_spec(), [true, true]);
    sup.poll();
    let st = sup.stats();
    assert_eq!((st[0].1.spawns, st[0].1.exits_ko), (1, 1));
    assert_eq!((st[1].1.spawns, st[1].1.spawn_errors), (0, 1));
    assert!(st[1]
        .1
        .last_error
        .as_ref()
        .unwrap()
        .contains("cannot start"));
}

#[test]
fn output_goes_to_a_file_and_affinity_applies() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("out.txt");
    let mut s = sh("p", "grep Cpus_allowed_list /proc/self/status");
    s.stdout = Output::File(out.clone());
    s.stderr = Output::Null;
    let cpu = rtshield_sys::get_affinity(0).unwrap().first().unwrap();
    s.cpus = Some(CpuSet::single(cpu));
    let mut sup = Supervisor::new(vec![s]).unwrap();
    sup.start();
    poll_until(&mut sup, |_, s| s.stats()[0].1.exits_ok == 1);
    let text = std::fs::read_to_string(&out).unwrap();
    assert_eq!(
        text.split_whitespace().last().unwrap(),
        cpu.to_string(),
        "{text}"
    );
}

#[test]
fn shutdown_kills_the_group_including_grandchildren() {
    let d = tempfile::tempdir().unwrap();
    let pidfile = d.path().join("gc.pid");
    // The program forks a grandchild (sleep) and waits.
    let s = sh(
        "p",
        &format!("sleep 300 & echo $! > {}; wait", pidfile.display()),
    );
    let mut sup = Supervisor::new(vec![s]).unwrap();
    sup.start();
    let leader = sup.running_pids()[0];
    let end = Instant::now() + Duration::from_secs(30);
    while !pidfile.exists() || std::fs::read_to_string(&pidfile).unwrap().trim().is_empty() {
        assert!(Instant::now() < end, "grandchild never started");
        std::thread::sleep(Duration::from_millis(10));
    }
    let gc: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(alive(gc));
    sup.shutdown();
    assert!(!alive(leader));
    // The grandchild was re-parented to init and reaped there: wait for it
    // (bounded; a loaded machine may take a while, this is no timing check).
    let end = Instant::now() + Duration::from_secs(20);
    while alive(gc) && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(!alive(gc), "grandchild {gc} survived");
}

#[test]
fn pause_and_resume_do_not_count_as_exits() {
    let mut s = sh("p", "sleep 300");
    s.on_ko = Termination::Stop;
    let mut sup = Supervisor::new(vec![s]).unwrap();
    sup.start();
    let p1 = sup.running_pids()[0];
    sup.pause();
    assert!(!alive(p1));
    assert!(sup.running_pids().is_empty());
    assert!(
        sup.poll().is_empty(),
        "a paused program must not be reported"
    );
    sup.resume();
    assert_eq!(sup.running_pids().len(), 1);
    sup.shutdown();
    let st = &sup.stats()[0].1;
    assert_eq!((st.spawns, st.exits_ok, st.exits_ko), (2, 0, 0));
}

#[test]
fn start_delay_holds_the_first_spawn() {
    let mut s = sh("p", "sleep 300");
    // Long enough that the check right after start() cannot miss it.
    s.start_delay = Duration::from_secs(1);
    let mut sup = Supervisor::new(vec![s]).unwrap();
    sup.start();
    assert!(sup.running_pids().is_empty());
    poll_until(&mut sup, |_, s| !s.running_pids().is_empty());
    assert_eq!(sup.running_pids().len(), 1);
}

#[test]
fn empty_command_line_is_refused() {
    assert!(Supervisor::new(vec![ProcSpec::new("x", vec![])]).is_err());
}

/// Root opens a program's `output.out` safely: a symlink planted at the
/// name is replaced, never followed (its target keeps its content), and a
/// directory writable by others without the sticky bit is refused.
#[test]
fn output_files_never_follow_a_link_nor_use_a_shared_dir() {
    use std::os::unix::fs::PermissionsExt;
    let d = tempfile::tempdir().unwrap();
    let victim = d.path().join("victim");
    std::fs::write(&victim, "precious\n").unwrap();
    let out = d.path().join("prog.out");
    std::os::unix::fs::symlink(&victim, &out).unwrap();
    let mut s = sh("p", "echo hello");
    s.stdout = Output::File(out.clone());
    let sup = Supervisor::new(vec![s]);
    assert!(sup.is_ok(), "{:?}", sup.err());
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
    assert!(std::fs::symlink_metadata(&out)
        .unwrap()
        .file_type()
        .is_file());

    let shared = d.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o777)).unwrap();
    let mut s = sh("q", "echo hello");
    s.stdout = Output::File(shared.join("q.out"));
    let Err(e) = Supervisor::new(vec![s]) else {
        panic!("a shared directory is refused")
    };
    assert!(e.to_string().contains("refusing"), "{e}");
    assert!(!shared.join("q.out").exists());
}
