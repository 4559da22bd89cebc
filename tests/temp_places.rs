//! Issue 21, "private temporary places": with `TMPDIR` another user's
//! directory (as under `sudo -E`), root makes nothing there: the io load's
//! files go to a fresh private directory elsewhere, and `runs report`
//! writes no temporary file at all (finding 7, t-tmpdir-of-another-user,
//! t-runs-report-tmp-swapped).

use crate::util::{command, describe};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::atomic::{AtomicBool, Ordering};

/// A directory the attacker controls: uid 2345's as root, and in any case
/// writable by everyone without the sticky bit (so it fails the path rules
/// for whoever runs the test).
fn attackers_tmpdir(t: &Path) -> PathBuf {
    let a = t.join("att-tmp");
    std::fs::create_dir(&a).unwrap();
    std::fs::set_permissions(&a, std::fs::Permissions::from_mode(0o777)).unwrap();
    let _ = std::os::unix::fs::chown(&a, Some(2345), Some(2345));
    a
}

/// Run `rtshield ARGS` with `TMPDIR=tmpdir`, watching `tmpdir` all along:
/// returns the output and every name seen in it.
fn watching(tmpdir: &Path, args: &[&str]) -> (Output, Vec<String>) {
    let done = AtomicBool::new(false);
    let mut seen = Vec::new();
    let o = std::thread::scope(|s| {
        let w = s.spawn(|| {
            let mut names = Vec::new();
            while !done.load(Ordering::Relaxed) {
                for e in std::fs::read_dir(tmpdir).unwrap() {
                    let n = e.unwrap().file_name().to_string_lossy().into_owned();
                    if !names.contains(&n) {
                        names.push(n);
                    }
                }
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            names
        });
        let o = command().args(args).env("TMPDIR", tmpdir).output().unwrap();
        done.store(true, Ordering::Relaxed);
        seen = w.join().unwrap();
        o
    });
    (o, seen)
}

#[test]
fn the_io_load_never_works_in_another_users_tmpdir() {
    let t = tempfile::tempdir().unwrap();
    let att = attackers_tmpdir(t.path());
    let out = t.path().join("out");
    let (o, seen) = watching(
        &att,
        &[
            "measure",
            "--duration",
            "2s",
            "--period",
            "1ms",
            "--policy",
            "other",
            "-q",
            "--no-memlock",
            "--no-dma-latency",
            "--cpus",
            "0",
            "--load",
            "io",
            "--load-cpus",
            "0",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", describe(&o));
    assert!(
        seen.is_empty(),
        "root made {seen:?} in another user's TMPDIR"
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("TMPDIR=") && err.contains("not used"), "{err}");
    // The load ran (its workers were spawned) and its results are there.
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    let spawns = r["programs"][0]["spawns"].as_u64().unwrap_or(0);
    assert!(spawns >= 1, "{r}");
}

#[test]
fn runs_report_writes_no_temporary_file() {
    let t = tempfile::tempdir().unwrap();
    let att = attackers_tmpdir(t.path());
    let store = t.path().join("st/runs.db");
    let fixture = format!(
        "{}/tests/fixtures/report/real/idle",
        env!("CARGO_MANIFEST_DIR")
    );
    let o = command()
        .args([
            "runs",
            "import",
            &fixture,
            "--store",
            store.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", describe(&o));
    let rep = t.path().join("rep");
    let (o, seen) = watching(
        &att,
        &[
            "runs",
            "report",
            "id=1",
            "--store",
            store.to_str().unwrap(),
            "-o",
            rep.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", describe(&o));
    assert!(seen.is_empty(), "root made {seen:?} in TMPDIR");
    let md = std::fs::read_to_string(rep.join("summary.md")).unwrap();
    assert!(md.contains("idle"), "{md}");
}

/// Finding 7 (n07b): `load.size` has an upper bound, checked when the
/// configuration is parsed: 9000000G is refused (exit 2, FILE:LINE:COL),
/// 64G, the bound, is accepted.
#[test]
fn load_size_has_an_upper_bound() {
    let t = tempfile::tempdir().unwrap();
    for (size, code) in [("9000000G", 2), ("65G", 2), ("64G", 0)] {
        let cfg = t.path().join(format!("io-{size}.cfg"));
        std::fs::write(
            &cfg,
            format!(
                "main\n{{\n  stats.period 100 ms\n}}\ntimer_thread[0]\n{{\n  cpu_affinity 0\n  \
                 sched.policy OTHER\n  period 1 ms\n  lifetime.duration 1 s\n}}\nprogram[0]\n{{\n  \
                 load io\n  load.size {size}\n  cpu_affinity 0\n}}\n"
            ),
        )
        .unwrap();
        let o = command()
            .args(["run", "--check", cfg.to_str().unwrap()])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(code), "{size}: {}", describe(&o));
        if code == 2 {
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(
                err.contains(&format!("{}:15:13", cfg.display())) && err.contains("out of range"),
                "{err}"
            );
        }
    }
}

/// `measure` with an io load on CPU 0, its temporary files in `tmpdir`.
fn io_measure(tmpdir: &Path, out: &Path, duration: &str) -> std::process::Command {
    let mut c = command();
    c.env("TMPDIR", tmpdir).args([
        "measure",
        "--duration",
        duration,
        "--period",
        "1ms",
        "--policy",
        "other",
        "-q",
        "--no-memlock",
        "--no-dma-latency",
        "--cpus",
        "0",
        "--load",
        "io",
        "--load-cpus",
        "0",
        "--out",
    ]);
    c.arg(out);
    c
}

fn io_dirs(tmpdir: &Path) -> Vec<String> {
    std::fs::read_dir(tmpdir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("rtshield-io-"))
        .collect()
}

/// Adversary round 5, F11: after SIGKILL (or the OOM killer) of a run with
/// an io load, its `rtshield-io-*` directory (up to 64 GiB per worker)
/// stayed, and no later run removed it. Each such directory now holds an
/// owner record its rtshield keeps locked: the next io load removes the
/// directories whose lock is free (their rtshield is gone, whatever its
/// PID namespace), and never one whose owner lives.
#[test]
fn f11_an_io_directory_left_by_a_killed_run_is_removed_by_the_next() {
    let t = tempfile::tempdir().unwrap();
    let tmp = t.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o700)).unwrap();
    let mut killed = crate::util::Kill(
        io_measure(&tmp, &t.path().join("k"), "60s")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    let left = crate::util::poll(
        std::time::Duration::from_secs(30),
        "the io load's directory",
        || io_dirs(&tmp).pop(),
    );
    // While its rtshield lives, another io load leaves it alone.
    let o = io_measure(&tmp, &t.path().join("a"), "1s")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", describe(&o));
    assert!(
        tmp.join(&left).is_dir(),
        "a live run's directory was removed"
    );
    killed.0.kill().unwrap();
    killed.0.wait().unwrap();
    // Its workers die with it (PR_SET_PDEATHSIG); the directory stays.
    assert!(tmp.join(&left).is_dir());
    let o = io_measure(&tmp, &t.path().join("b"), "1s")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", describe(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !tmp.join(&left).exists(),
        "{left} left after the next io load: {err}"
    );
    assert!(err.contains("left by an rtshield that is gone"), "{err}");
    assert!(io_dirs(&tmp).is_empty(), "{:?}", io_dirs(&tmp));
}
