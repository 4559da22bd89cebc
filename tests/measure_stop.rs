//! SIGINT ends `rtshield measure` at once even when the period is long: the
//! measuring threads are woken (issue 11 item 7), and the results are still
//! written.

use std::io::Read;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// Wait for `f` to hold, polling, for at most `secs`.
fn poll(secs: u64, mut f: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + Duration::from_secs(secs);
    while Instant::now() < end {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    f()
}

fn stop_long_period(mode: &str) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let stdout_file = dir.path().join("stdout");
    let mut child = crate::util::command()
        .args(["measure", "-q", "--period", "10s", "--duration", "1m"])
        .args(["--cpus", "0", "--mode", mode, "--out"])
        .arg(&out)
        .stdout(std::fs::File::create(&stdout_file).unwrap())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The header is printed after the signal handlers are installed.
    let started = poll(30, || {
        std::fs::read_to_string(&stdout_file)
            .unwrap_or_default()
            .contains("rtshield measure:")
    });
    assert!(started, "measure did not start");
    // Let the threads enter their 10 s wait.
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: a signal to the child this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let sent = Instant::now();
    let mut status = None;
    // Without the wake-up the thread would sleep until its first period
    // (10 s after start); 5 s leaves room for a loaded machine.
    poll(5, || {
        status = child.try_wait().unwrap();
        status.is_some()
    });
    let Some(status) = status else {
        let _ = child.kill();
        let _ = child.wait();
        panic!("{mode}: still running 5 s after SIGINT");
    };
    eprintln!("{mode}: exited {:?} after SIGINT", sent.elapsed());
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let stdout = std::fs::read_to_string(&stdout_file).unwrap();
    assert_eq!(status.code(), Some(0), "stdout {stdout} stderr {err}");
    assert!(stdout.contains("ended by sigint"), "{stdout}");
    for f in [
        "results.json",
        "results.csv",
        "histogram.txt",
        "timer_thread00.txt",
    ] {
        assert!(Path::new(&out).join(f).is_file(), "{mode}: {f} missing");
    }
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    // The interrupted wait is not a sample: none was taken before 10 s.
    assert_eq!(
        json["threads"][0]["samples"].as_u64(),
        Some(0),
        "{}",
        json["threads"][0]
    );
}

#[test]
fn sigint_ends_a_nanosleep_run_with_a_10s_period() {
    stop_long_period("nanosleep");
}

#[test]
fn sigint_ends_a_posix_timer_run_with_a_10s_period() {
    stop_long_period("posix-timer");
}

#[test]
fn sigint_ends_a_run_with_a_10s_period() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("slow.cfg");
    std::fs::write(
        &cfg,
        "timer_thread[0]\n{\n  cpu_affinity 0\n  period 10 s\n  lifetime.duration 1 min\n}\n",
    )
    .unwrap();
    let out = dir.path().join("out");
    let mut child = crate::util::command()
        .args(["run", "-q"])
        .arg(&cfg)
        .arg("--out")
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // timeline.csv is created just before the engine starts (and the
    // SIGINT handler is installed before that).
    assert!(
        poll(30, || out.join("timeline.csv").is_file()),
        "run did not start"
    );
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: a signal to the child this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let mut status = None;
    poll(5, || {
        status = child.try_wait().unwrap();
        status.is_some()
    });
    let Some(status) = status else {
        let _ = child.kill();
        let _ = child.wait();
        panic!("run still running 5 s after SIGINT");
    };
    assert_eq!(status.code(), Some(0));
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    assert_eq!(
        json["end_reason"].as_str(),
        Some("sigint"),
        "{}",
        json["end_reason"]
    );
    assert_eq!(json["threads"][0]["samples"].as_u64(), Some(0));
}
