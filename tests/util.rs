// Shared helpers for the integration tests (the `util` module of tests/tests.rs).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_rtshield")
}

pub fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples")
        .join(name)
}

/// A fake root whose machine has `online` CPUs.
pub fn fake_root(online: &str) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let cpu = d.path().join("sys/devices/system/cpu");
    std::fs::create_dir_all(&cpu).unwrap();
    std::fs::write(cpu.join("online"), format!("{online}\n")).unwrap();
    d
}

pub fn run(args: &[&str]) -> Output {
    Command::new(bin()).args(args).output().unwrap()
}

/// `rtshield run -q CFG --out OUT`, waited for.
pub fn run_quiet(cfg: &Path, out: &Path) -> Output {
    run(&[
        "run",
        "-q",
        cfg.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ])
}

/// `rtshield run -q CFG --out OUT` in the background, stdout discarded.
pub fn spawn_quiet(cfg: &Path, out: &Path) -> std::process::Child {
    Command::new(bin())
        .args([
            "run",
            "-q",
            cfg.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

pub fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Alive and not a zombie.
pub fn alive(pid: i32) -> bool {
    // A zombie is dead for our purpose.
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|s| rtshield_load::reaper::parse_state(&s) != Some('Z'))
}

/// Wait (up to `secs`) for a file to hold a pid.
pub fn wait_pid_file(p: &Path, secs: u64) -> i32 {
    let end = Instant::now() + Duration::from_secs(secs);
    loop {
        if let Ok(s) = std::fs::read_to_string(p) {
            if let Ok(pid) = s.trim().parse() {
                return pid;
            }
        }
        assert!(Instant::now() < end, "{} never written", p.display());
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Wait (up to `secs`) until `dir/timeline.csv` has `rows` data rows: the
/// measurement is running. A bounded poll, not a guess at how long start-up takes.
pub fn wait_timeline_rows(dir: &Path, rows: usize, secs: u64) {
    let end = Instant::now() + Duration::from_secs(secs);
    loop {
        if let Ok(t) = std::fs::read_to_string(dir.join("timeline.csv")) {
            if t.lines().count() > rows {
                return;
            }
        }
        assert!(Instant::now() < end, "no {rows} timeline rows in {secs} s");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Every descendant of `pid`, from the host's /proc (the library's walk).
pub fn descendants(pid: i32) -> Vec<i32> {
    rtshield_load::reaper::descendants(&rtshield_sys::Root::host(), pid)
}

/// A measuring stanza that works on any machine with CPU 0 (sleeps: FIFO is safe).
pub fn timer(duration: &str) -> String {
    format!(
        "timer_thread[0]\n{{\n  cpu_affinity 0\n  sched.policy FIFO\n  sched.priority 50\n  period 1 ms\n  lifetime.duration {duration}\n  stats.histo_size 500 us\n}}\n"
    )
}

pub fn write_cfg(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

pub fn results(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).unwrap()).unwrap()
}
