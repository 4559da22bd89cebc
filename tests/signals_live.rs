//! Every stop signal ends every long command like SIGTERM (issue 21
//! finding 10, adversary cases n10a and g-*): SIGHUP (a dropped ssh
//! session) and SIGQUIT (Ctrl-\) used to kill `measure`, `run` and
//! `campaign` with no results.json; a campaign left its cell measuring,
//! orphaned (new finding 5). Each test signals only the process it
//! started, with a private output directory and store. (The traced case,
//! where the instance must be removed too, is in `trace_live`.)

use crate::util::*;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const MEASURE: &[&str] = &[
    "--cpus",
    "0",
    "--period",
    "1ms",
    "--policy",
    "other",
    "--no-memlock",
    "--no-dma-latency",
    "-q",
];

fn kill(pid: i32, sig: i32) {
    // SAFETY: signalling a process (or group) this test started.
    unsafe { libc::kill(pid, sig) };
}

/// Wait (bounded) for `c` to end; its exit code.
fn finish(c: &mut Child, within: Duration) -> Option<i32> {
    poll(within, "the command ends", || c.try_wait().unwrap());
    c.wait().unwrap().code()
}

fn spawn(mut cmd: Command) -> Kill {
    Kill(
        cmd.stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    )
}

/// `measure` or `run` ended by `sig` once it measures: exit 0 (as after
/// SIGTERM), every file written, `end_reason` naming the signal.
fn ends_like_sigterm(what: &str, sig: i32, reason: &str) {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("out");
    let mut cmd = command();
    if what == "measure" {
        cmd.arg("measure").args(MEASURE).args(["--duration", "60s"]);
    } else {
        let cfg = write_cfg(d.path(), "c.cfg", &timer("60 s"));
        cmd.args(["run", "-q"]).arg(cfg);
    }
    let mut c = spawn({
        cmd.arg("--out").arg(&out);
        cmd
    });
    wait_timeline_rows(&out, 1, 30);
    kill(c.0.id() as i32, sig);
    let code = finish(&mut c.0, Duration::from_secs(30));
    assert_eq!(code, Some(0), "{what} after {reason}");
    let r = results(&out);
    assert_eq!(r["end_reason"], reason, "{what}");
    assert!(r["threads"][0]["samples"].as_u64().unwrap() > 0);
    for f in ["results.csv", "histogram.txt", "timeline.csv"] {
        assert!(out.join(f).is_file(), "{what}: {f}");
    }
}

#[test]
fn sighup_ends_measure_and_run_like_sigterm() {
    ends_like_sigterm("measure", libc::SIGHUP, "sighup");
    ends_like_sigterm("run", libc::SIGHUP, "sighup");
}

#[test]
fn sigquit_ends_measure_and_run_like_sigterm() {
    ends_like_sigterm("measure", libc::SIGQUIT, "sigquit");
    ends_like_sigterm("run", libc::SIGQUIT, "sigquit");
}

#[test]
fn sighup_and_sigquit_end_noise_with_its_results() {
    for (sig, reason) in [(libc::SIGHUP, "sighup"), (libc::SIGQUIT, "sigquit")] {
        let d = tempfile::tempdir().unwrap();
        let json = d.path().join("results.json");
        let mut cmd = command();
        cmd.args([
            "noise",
            "--cpus",
            "0",
            "--no-memlock",
            "--period",
            "10ms",
            "--runtime",
            "5ms",
        ])
        .arg("--json")
        .arg(&json)
        .stderr(Stdio::piped());
        let mut c = Kill(cmd.stdout(Stdio::null()).spawn().unwrap());
        // The start line comes once the handlers are in place.
        let mut err = std::io::BufReader::new(c.0.stderr.take().unwrap());
        let mut first = String::new();
        std::io::BufRead::read_line(&mut err, &mut first).unwrap();
        assert!(first.starts_with("rtshield noise:"), "{first}");
        std::thread::sleep(Duration::from_millis(300));
        kill(c.0.id() as i32, sig);
        assert_eq!(
            finish(&mut c.0, Duration::from_secs(30)),
            Some(0),
            "{reason}"
        );
        let r = json_value(&json);
        assert_eq!(r["end_reason"], reason);
    }
}

#[test]
fn sighup_ends_the_demo_with_its_results() {
    if !require_root("the demo measures at SCHED_FIFO 98") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("demo");
    let mut cmd = command();
    cmd.args(["demo", "-q", "--duration", "60s", "--out"])
        .arg(&out);
    let mut c = spawn(cmd);
    wait_timeline_rows(&out, 1, 30);
    kill(c.0.id() as i32, libc::SIGHUP);
    assert_eq!(finish(&mut c.0, Duration::from_secs(30)), Some(0));
    assert_eq!(results(&out)["end_reason"], "sighup");
}

fn json_value(p: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// A campaign of one 60 s cell (no partition, no load) in `dir`.
fn campaign(dir: &Path) -> (Command, PathBuf) {
    let file = dir.join("c.toml");
    std::fs::write(
        &file,
        format!(
            "name = \"sig{}\"\ncpus = \"0\"\nduration = \"60s\"\nrepeat = 1\n\
             [measure]\nperiod = \"1ms\"\npolicy = \"other\"\n\
             [axes]\nisolation = [\"none\"]\nload = [\"idle\"]\n",
            std::process::id()
        ),
    )
    .unwrap();
    let out = dir.join("out");
    let mut c = command();
    c.arg("campaign")
        .arg(&file)
        .arg("--store")
        .arg(dir.join("runs.db"))
        .arg("--out")
        .arg(&out);
    (c, out.join("001-cell1-r1"))
}

/// The campaign's cell child, once it measures.
fn cell_child(campaign: u32, cell: &Path) -> i32 {
    wait_timeline_rows(cell, 1, 60);
    let kids = descendants(campaign as i32);
    assert_eq!(kids.len(), 1, "one cell child expected: {kids:?}");
    kids[0]
}

/// g-sighup-campaign and its SIGQUIT twin: the campaign passes the signal
/// to its cell, waits for it (the cell's results are written, nothing is
/// left running) and exits 128 + signal.
#[test]
fn sighup_and_sigquit_end_a_campaign_and_its_cell() {
    for (sig, reason) in [(libc::SIGHUP, "sighup"), (libc::SIGQUIT, "sigquit")] {
        let d = tempfile::tempdir().unwrap();
        let (cmd, cell) = campaign(d.path());
        let mut c = spawn(cmd);
        let child = cell_child(c.0.id(), &cell);
        kill(c.0.id() as i32, sig);
        assert_eq!(finish(&mut c.0, Duration::from_secs(60)), Some(128 + sig));
        assert!(
            !alive(child),
            "the cell {child} outlived the campaign ({reason})"
        );
        assert_eq!(results(&cell)["end_reason"], reason);
    }
}

/// New finding 5: a campaign killed outright (SIGKILL: nothing to pass
/// on) no longer leaves its cell measuring for its whole duration: the
/// kernel tells the cell (SIGTERM, its parent-death signal), which writes
/// its results and ends.
#[test]
fn a_killed_campaigns_cell_ends_and_writes_its_results() {
    let d = tempfile::tempdir().unwrap();
    let (cmd, cell) = campaign(d.path());
    let mut c = spawn(cmd);
    let child = cell_child(c.0.id(), &cell);
    kill(c.0.id() as i32, libc::SIGKILL);
    c.0.wait().unwrap();
    wait_gone(child, 30);
    assert_eq!(results(&cell)["end_reason"], "sigterm");
}

/// Ctrl-C at a terminal reaches the campaign and its cell at once (one
/// process group), and the campaign passes it on: the cell sees two
/// SIGINTs. It used to take the second as "exit at once" and lose the
/// cell's results; a cell now waits for its files.
#[test]
fn ctrl_c_to_the_whole_group_keeps_the_cells_results() {
    for _ in 0..3 {
        let d = tempfile::tempdir().unwrap();
        let (mut cmd, cell) = campaign(d.path());
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
        let mut c = spawn(cmd);
        let pgid = c.0.id() as i32;
        let child = cell_child(c.0.id(), &cell);
        kill(-pgid, libc::SIGINT);
        assert_eq!(finish(&mut c.0, Duration::from_secs(60)), Some(128 + 2));
        assert!(!alive(child));
        assert_eq!(results(&cell)["end_reason"], "sigint");
    }
}

/// A terminal that hangs up (a dropped ssh session, for real: the test's
/// pseudo-terminal is closed): the kernel sends SIGHUP to the measure, the
/// session leader, and the terminal answers EIO from then on. The measure
/// writes every file, then cannot print its summary: exit 129, as the
/// shell would report a command killed by SIGHUP — not a panic (101).
#[test]
fn a_terminal_that_hangs_up_ends_measure_with_its_results() {
    use std::os::unix::fs::OpenOptionsExt;
    use std::os::unix::process::CommandExt;
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("out");
    // SAFETY: libc's pty calls on a descriptor this test owns; the name
    // buffer is NUL-terminated by ptsname_r. O_CLOEXEC: no child may keep
    // the master open, or closing it would hang nothing up.
    let (master, slave_path) = unsafe {
        let m = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC);
        assert!(m >= 0, "posix_openpt");
        assert_eq!(libc::grantpt(m), 0);
        assert_eq!(libc::unlockpt(m), 0);
        let mut name = [0 as libc::c_char; 128];
        assert_eq!(libc::ptsname_r(m, name.as_mut_ptr(), name.len()), 0);
        let p = std::ffi::CStr::from_ptr(name.as_ptr())
            .to_str()
            .unwrap()
            .to_string();
        (m, p)
    };
    let slave = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOCTTY)
        .open(&slave_path)
        .unwrap();
    let mut cmd = command();
    cmd.arg("measure")
        .args(MEASURE)
        .args(["--duration", "60s", "--out"])
        .arg(&out)
        .stdin(slave.try_clone().unwrap())
        .stdout(slave.try_clone().unwrap())
        .stderr(slave);
    // SAFETY: setsid and ioctl are async-signal-safe; the child leads a
    // new session whose controlling terminal is the pty.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY, 0) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut c = Kill(cmd.spawn().unwrap());
    drop(cmd);
    wait_timeline_rows(&out, 1, 30);
    // SAFETY: closing the master this test opened: the terminal hangs up.
    unsafe { libc::close(master) };
    assert_eq!(finish(&mut c.0, Duration::from_secs(30)), Some(129));
    let r = results(&out);
    assert_eq!(r["end_reason"], "sighup");
    for f in ["results.csv", "histogram.txt", "timeline.csv"] {
        assert!(out.join(f).is_file(), "{f}");
    }
}
