//! A full disk does not lose a measurement (issue 11 item 5): on a tiny
//! tmpfs that is full, `measure` still prints its summary, names where the
//! files went, writes them to the fallback directory and exits 4.
//! Root only (mounts a tmpfs); run under `flock /tmp/rtshield-live.lock`.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A tmpfs mounted by this test: registered before it is mounted,
/// detached on drop (even on failure) or by the reaper after a kill.
struct TmpfsGuard {
    _reg: rtshield_testkit::Registration,
}

impl TmpfsGuard {
    fn mount(at: &Path, size: &str) -> TmpfsGuard {
        let reg =
            rtshield_testkit::register(rtshield_testkit::KernelObject::Mount(at.to_path_buf()));
        let st = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size},mode=0755")])
            .arg("rtshield-test")
            .arg(at)
            .status()
            .unwrap();
        assert!(st.success(), "mount tmpfs on {}", at.display());
        TmpfsGuard { _reg: reg }
    }
}

/// Fill the file system of `dir` until ENOSPC.
fn fill(dir: &Path) {
    use std::io::Write;
    let mut f = std::fs::File::create(dir.join("filler")).unwrap();
    let chunk = vec![0u8; 4096];
    loop {
        if f.write_all(&chunk).and_then(|_| f.sync_all()).is_err() {
            break;
        }
    }
}

/// The one fallback directory in `parent`: `rtshield-fallback-<16 hex>`,
/// mode 0700 (never a fixed name another user could make first).
fn fallback_in(parent: &Path) -> PathBuf {
    let found: Vec<PathBuf> = std::fs::read_dir(parent)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| is_fallback_dir(p))
        .collect();
    assert_eq!(found.len(), 1, "{found:?} in {}", parent.display());
    found[0].clone()
}

fn is_fallback_dir(p: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let n = p.file_name().unwrap_or_default().to_string_lossy();
    n.strip_prefix("rtshield-fallback-")
        .is_some_and(|h| h.len() == 16 && h.bytes().all(|b| b.is_ascii_hexdigit()))
        && std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir() && m.mode() & 0o7777 == 0o700)
}

/// A full tmpfs with an `out` directory in it (unmounted when dropped).
fn full_out(t: &Path) -> (TmpfsGuard, PathBuf) {
    let mnt = t.join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    let guard = TmpfsGuard::mount(&mnt, "64k");
    let out = mnt.join("out");
    std::fs::create_dir(&out).unwrap();
    fill(&mnt);
    (guard, out)
}

/// Issue 21 finding 6 (n06): another user made `rtshield-fallback` first,
/// and `TMPDIR` is another user's directory (`sudo -E`). The results go to
/// a fresh private directory all the same (`TMPDIR` is not used: `/tmp`),
/// nothing goes into the attacker's places, and the summary does not say
/// the results are in the full `--out`.
#[test]
fn a_squatted_fallback_and_another_users_tmpdir_lose_nothing() {
    if !crate::util::require_root("mounts a small tmpfs and gives directories to uid 2345") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let (_guard, out) = full_out(t.path());
    let att = t.path().join("att");
    std::fs::create_dir(&att).unwrap();
    std::fs::create_dir(att.join("rtshield-fallback")).unwrap();
    for p in [att.clone(), att.join("rtshield-fallback")] {
        std::os::unix::fs::chown(&p, Some(2345), Some(2345)).unwrap();
    }
    let o = crate::util::command()
        .args(["measure", "-q", "--samples", "200", "--period", "1ms"])
        .args(["--cpus", "0", "--out"])
        .arg(&out)
        .env("TMPDIR", &att)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(4), "stdout {stdout}\nstderr {stderr}");
    assert!(
        stderr.contains("TMPDIR=") && stderr.contains("not used"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_dir(&att).unwrap().count(),
        1,
        "nothing made in TMPDIR"
    );
    assert_eq!(
        std::fs::read_dir(att.join("rtshield-fallback"))
            .unwrap()
            .count(),
        0
    );
    // Where the error says results.json went (under /tmp), then removed.
    let at = stderr
        .lines()
        .find_map(|l| l.split("written to ").nth(1))
        .and_then(|r| r.split(" instead").next())
        .map(PathBuf::from)
        .unwrap_or_else(|| panic!("no fallback named: {stderr}"));
    let fb = at.parent().unwrap().parent().unwrap().to_path_buf();
    assert!(fb.starts_with("/tmp"), "{}", fb.display());
    let kept = is_fallback_dir(&fb) && fb.parent() == Some(Path::new("/tmp"));
    let json_ok = fb.join("out/results.json").is_file();
    std::fs::remove_dir_all(&fb).unwrap();
    assert!(kept && json_ok, "{}", fb.display());
    // Never "Results in OUT/" when they are not there.
    assert!(!stdout.contains("Results in"), "{stdout}");
    assert!(stdout.contains("written to"), "{stdout}");
}

#[test]
fn measure_on_a_full_disk_writes_to_the_fallback_and_exits_4() {
    if !crate::util::require_root("mounts a small tmpfs and fills it") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let mnt = t.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    let _guard = TmpfsGuard::mount(&mnt, "64k");
    let out = mnt.join("out");
    std::fs::create_dir(&out).unwrap();
    fill(&mnt);
    let tmp = t.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let o = crate::util::command()
        .args(["measure", "-q", "--samples", "200", "--period", "1ms"])
        .args(["--cpus", "0", "--out"])
        .arg(&out)
        .env("TMPDIR", &tmp)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(4), "stdout {stdout}\nstderr {stderr}");
    // The summary is printed all the same.
    assert!(stdout.contains("Percentiles"), "{stdout}");
    assert!(stdout.contains("exit status 4"), "{stdout}");
    assert!(stderr.contains("No space left on device"), "{stderr}");
    // Every file is in the fallback directory the error names: a fresh
    // private one in $TMPDIR (which passes the path rules).
    let fb = fallback_in(&tmp).join("out");
    for f in [
        "results.json",
        "results.csv",
        "histogram.txt",
        "timer_thread00.txt",
    ] {
        assert!(fb.join(f).is_file(), "{f} not in {}", fb.display());
        assert!(
            stderr.contains(&format!("written to {}", fb.join(f).display())),
            "{stderr}"
        );
        assert!(!out.join(f).exists(), "{f} cannot fit on the full disk");
    }
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fb.join("results.json")).unwrap()).unwrap();
    assert_eq!(json["threads"][0]["samples"].as_u64(), Some(200));
}

/// Adversary round 3, C7: on a full disk the summary listed a 0-byte
/// `timeline.csv` as a result in OUT, with no LOST line. A file whose
/// write failed is never listed as saved: the summary names it LOST.
#[test]
fn a_timeline_that_could_not_be_written_is_lost_not_listed() {
    if !crate::util::require_root("mounts a small tmpfs and fills it") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let (_guard, out) = full_out(t.path());
    let tmp = t.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let o = crate::util::command()
        .args(["measure", "-q", "--samples", "200", "--period", "1ms"])
        .args(["--cpus", "0", "--out"])
        .arg(&out)
        .env("TMPDIR", &tmp)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(4), "stdout {stdout}\nstderr {stderr}");
    let listed = stdout
        .lines()
        .find(|l| {
            l.contains("results in") || l.contains("Results in") || l.contains("No result file")
        })
        .unwrap_or_else(|| panic!("no results line: {stdout}"));
    assert!(!listed.contains("timeline.csv"), "{listed}");
    assert!(stdout.contains("timeline.csv: LOST"), "{stdout}");
}
