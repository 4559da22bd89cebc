//! `rtshield sysinfo` on a fake tree and on this machine.

use crate::util::{command as rtshield, put as write};
use std::fs;

#[test]
fn sysinfo_json_reads_the_fake_tree() {
    let d = tempfile::tempdir().unwrap();
    let b = d.path();
    write(b, "/proc/sys/kernel/osrelease", "5.10.0-rpi\n");
    write(b, "/proc/sys/kernel/version", "#1 SMP PREEMPT\n");
    write(
        b,
        "/boot/config-5.10.0-rpi",
        "CONFIG_PREEMPT=y\nCONFIG_HZ=100\n",
    );
    write(
        b,
        "/proc/cmdline",
        "console=ttyAMA0 isolcpus=3 rcu_nocbs=3\n",
    );
    write(b, "/sys/devices/system/cpu/online", "0-3\n");
    write(b, "/sys/devices/system/cpu/isolated", "3\n");
    write(
        b,
        "/proc/self/mountinfo",
        "30 1 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n",
    );
    write(
        b,
        "/sys/fs/cgroup/cgroup.controllers",
        "cpuset cpu io memory\n",
    );

    let out = rtshield()
        .args(["--sysroot", b.to_str().unwrap(), "sysinfo", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["kernel_release"], "5.10.0-rpi");
    assert_eq!(v["preempt_model"], "PREEMPT");
    assert_eq!(v["hz"], 100);
    assert_eq!(v["cpu_count"], 4);
    assert_eq!(v["cpus_isolated"], "3");
    assert_eq!(v["isolation_params"]["isolcpus"], "3");
    assert_eq!(v["isolation_params"]["rcu_nocbs"], "3");
    assert_eq!(v["cgroup_version"], "v2");
    assert_eq!(v["cpuset_mount"], "/sys/fs/cgroup");
    // Not probed on a fake tree: it would describe the host, not the tree.
    assert!(v["fifo_permitted"].is_null());
}

#[test]
fn sysinfo_text_describes_this_machine() {
    let out = rtshield().arg("sysinfo").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let release = fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
    assert!(text.contains(release.trim()), "{text}");
    for key in [
        "preemption",
        "HZ",
        "clocksource",
        "cpus online",
        "SCHED_FIFO",
    ] {
        assert!(text.contains(key), "missing {key} in\n{text}");
    }
}

#[test]
fn unimplemented_or_bad_input_never_pretends() {
    // An unknown subcommand is a usage error (exit 2), not a silent success.
    let out = rtshield().arg("frobnicate").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_closed_stdout_ends_quietly_with_141() {
    use std::process::Stdio;
    // The reader is gone before rtshield prints: its first write gets EPIPE.
    let mut child = rtshield()
        .arg("sysinfo")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(141), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}
