//! A full disk does not lose a measurement (issue 11 item 5): on a tiny
//! tmpfs that is full, `measure` still prints its summary, names where the
//! files went, writes them to the fallback directory and exits 4.
//! Root only (mounts a tmpfs); run under `flock /tmp/rtshield-live.lock`.

use std::path::Path;
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
    // Every file is in the fallback directory the error names.
    let fb_root = tmp.join("rtshield-fallback");
    let stamp = std::fs::read_dir(&fb_root)
        .unwrap()
        .next()
        .expect("a fallback directory")
        .unwrap()
        .path();
    let fb = stamp.join("out");
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
