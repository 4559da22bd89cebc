// Shared helpers for the `run_*` integration tests (included with `mod`).
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

pub fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Alive and not a zombie.
pub fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => {
            let rest = &s[s.rfind(')').unwrap() + 1..];
            rest.split_whitespace().next() != Some("Z")
        }
        Err(_) => false,
    }
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

/// Every descendant of `pid`, from /proc.
pub fn descendants(pid: i32) -> Vec<i32> {
    let mut parent = std::collections::HashMap::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(p) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        if let Ok(s) = std::fs::read_to_string(format!("/proc/{p}/stat")) {
            let rest = &s[s.rfind(')').unwrap() + 1..];
            if let Some(pp) = rest
                .split_whitespace()
                .nth(1)
                .and_then(|x| x.parse::<i32>().ok())
            {
                parent.insert(p, pp);
            }
        }
    }
    let mut out = Vec::new();
    let mut stack = vec![pid];
    while let Some(x) = stack.pop() {
        for (&c, &pp) in &parent {
            if pp == x && !out.contains(&c) {
                out.push(c);
                stack.push(c);
            }
        }
    }
    out
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
