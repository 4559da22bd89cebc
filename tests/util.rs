// Shared helpers for the integration tests (the `util` module of tests/tests.rs):
// running the binary, environment preconditions, deadline polling, files.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};
use std::time::{Duration, Instant};

pub use rtshield_testkit::{alive, all_text, describe, json, ok, put, refused, text};
pub use rtshield_testkit::{
    online_cpus, require_cpus_0_and_1, require_cpuset_v1_two_cpus, PrivateParent, TracefsMount,
};
pub use rtshield_testkit::{require, require_root, require_tool};

/// The binary under test. Private: tests run it through [`command`] or
/// [`wrapped`], which give it an environment of its own.
fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_rtshield")
}

/// The binary's path, for a link to it under another name (`partrt`);
/// run it through [`command`] or an environment made by
/// `rtshield_testkit::isolate`.
pub fn bin_path() -> &'static str {
    bin()
}

/// A command for the binary under test, to add arguments, pipes, spawn:
/// a private empty home (HOME and XDG directories), no store
/// (`RTSHIELD_NO_STORE`), and death with the test (see
/// `rtshield_testkit::cmd`). The store tests give `--store` explicitly.
pub fn command() -> Command {
    rtshield_testkit::rtshield(bin())
}

/// `program ARGS FLAG PATH`: a harness that runs the binary under test
/// itself (`--rtshield PATH`), with [`command`]'s private environment,
/// which the binary inherits from it.
pub fn harness_running_rtshield(program: &Path, args: &[&Path], flag: &str) -> Command {
    let mut c = Command::new(program);
    rtshield_testkit::isolate(&mut c);
    c.args(args).arg(flag).arg(bin());
    c
}

/// The binary under test behind a wrapper (`ip netns exec NS`,
/// `setpriv ...`), with [`command`]'s environment.
pub fn wrapped(wrapper: &[&str]) -> Command {
    rtshield_testkit::wrapped(bin(), wrapper)
}

/// `rtshield measure --samples 1 --out /nonexistent/never-written ARGS` is
/// refused (exit 2) naming `needle`, before measuring anything.
#[track_caller]
pub fn measure_refused(args: &[&str], needle: &str) {
    let mut a = vec![
        "measure",
        "--samples",
        "1",
        "--out",
        "/nonexistent/never-written",
    ];
    a.extend_from_slice(args);
    let o = rtshield(&a);
    refused(&o, needle);
    assert!(
        !String::from_utf8_lossy(&o.stdout).contains("Results in"),
        "{args:?} must not measure"
    );
}

/// `rtshield ARGS`, waited for.
pub fn rtshield(args: &[&str]) -> Output {
    command().args(args).output().expect("run rtshield")
}

/// `rtshield --sysroot ROOT ARGS`, waited for.
pub fn rtshield_at(root: &Path, args: &[&str]) -> Output {
    command()
        // Fake trees get the fake kernel's cgroup emulation (test builds only).
        .env("RTSHIELD_FAKE_KERNEL", "1")
        .arg("--sysroot")
        .arg(root)
        .args(args)
        .output()
        .expect("run rtshield")
}

/// Poll `f` every 20 ms until it gives a value; panics naming `what` after
/// `within`. For "wait until the program did X" instead of a fixed sleep.
#[track_caller]
pub fn poll<T>(within: Duration, what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let end = Instant::now() + within;
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(Instant::now() < end, "timed out after {within:?}: {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// [`poll`] for a condition.
#[track_caller]
pub fn wait_until(within: Duration, what: &str, mut f: impl FnMut() -> bool) {
    poll(within, what, || f().then_some(()))
}

/// A child process killed and reaped on drop (even after a failed assertion).
pub struct Kill(pub Child);

impl Drop for Kill {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
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

/// `rtshield ARGS`, waited for (the `run_*` modules' name for [`rtshield`]).
pub fn run(args: &[&str]) -> Output {
    rtshield(args)
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
    command()
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

/// Wait (up to `secs`) for a file to hold a pid.
pub fn wait_pid_file(p: &Path, secs: u64) -> i32 {
    poll(
        Duration::from_secs(secs),
        &format!("{} never written", p.display()),
        || std::fs::read_to_string(p).ok()?.trim().parse().ok(),
    )
}

/// Wait (up to `secs`) until `dir/timeline.csv` has `rows` data rows: the
/// measurement is running. A bounded poll, not a guess at how long start-up takes.
pub fn wait_timeline_rows(dir: &Path, rows: usize, secs: u64) {
    wait_until(
        Duration::from_secs(secs),
        &format!("no {rows} timeline rows in {secs} s"),
        || {
            std::fs::read_to_string(dir.join("timeline.csv"))
                .is_ok_and(|t| t.lines().count() > rows)
        },
    )
}

/// Wait (up to `secs`) until `pid` is gone (dead or a zombie).
pub fn wait_gone(pid: i32, secs: u64) {
    wait_until(
        Duration::from_secs(secs),
        &format!("pid {pid} still alive after {secs} s"),
        || !alive(pid),
    )
}

/// Every descendant of `pid`, from the host's /proc (the library's walk).
pub fn descendants(pid: i32) -> Vec<i32> {
    rtshield_load::descendants(&rtshield_sys::Root::host(), pid)
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

/// Held by the live tests that make an exclusive cpuset partition of CPU 1
/// (each under its own private parent): two such partitions cannot exist
/// at once, so these tests take turns.
pub fn cpuset_partition_lock() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// No test can forget its environment: the binary's path
/// (`CARGO_BIN_EXE_rtshield`) is named here only, and [`bin`] is private,
/// so every run goes through [`command`] or [`wrapped`].
#[test]
fn only_the_kit_s_commands_run_the_binary() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let needle = concat!("CARGO_BIN_", "EXE_rtshield");
    let mut found = Vec::new();
    let mut stack = vec![root.join("tests"), root.join("crates"), root.join("src")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs")
                && std::fs::read_to_string(&p).is_ok_and(|t| t.contains(needle))
            {
                found.push(p.strip_prefix(root).unwrap().to_path_buf());
            }
        }
    }
    assert_eq!(found, [PathBuf::from("tests/util.rs")]);
}

/// A process a test's own program wrote the pid of (and named by a unique
/// `sleep` argument): killed on drop if it is still that process, so a
/// failing test leaves nothing running. Never any other process: the pid
/// must still run `sleep MARKER`.
pub struct Leftover {
    pub pid_file: std::path::PathBuf,
    pub marker: &'static str,
}

impl Leftover {
    /// The pid in the file, if it names a live `sleep MARKER`.
    pub fn live(&self) -> Option<i32> {
        let pid: i32 = std::fs::read_to_string(&self.pid_file)
            .ok()?
            .trim()
            .parse()
            .ok()?;
        let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
        let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let zombie = state
            .rsplit_once(')')
            .is_some_and(|(_, r)| r.trim_start().starts_with('Z'));
        (pid > 1 && !zombie && cmd == format!("sleep\0{}\0", self.marker).into_bytes())
            .then_some(pid)
    }
}

impl Drop for Leftover {
    fn drop(&mut self) {
        if let Some(pid) = self.live() {
            let _ = std::process::Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
        }
    }
}
