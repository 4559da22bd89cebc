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

#[test]
fn sysinfo_records_frequency_idle_states_and_temperature() {
    // A Raspberry Pi-like board: ondemand governor at 600 of 1500 MHz,
    // WFI and a 2 ms deep idle state, a hot SoC (the systress article's
    // warning: it throttles when hot).
    let d = tempfile::tempdir().unwrap();
    let b = d.path();
    write(b, "/sys/devices/system/cpu/online", "0-1\n");
    for cpu in 0..2 {
        let f = format!("/sys/devices/system/cpu/cpu{cpu}/cpufreq");
        write(b, &format!("{f}/scaling_governor"), "ondemand\n");
        write(b, &format!("{f}/scaling_driver"), "cpufreq-dt\n");
        write(b, &format!("{f}/scaling_cur_freq"), "600000\n");
        write(b, &format!("{f}/cpuinfo_max_freq"), "1500000\n");
        for (k, name, lat) in [(0, "WFI", "1"), (1, "cpu-sleep-0", "2000")] {
            let s = format!("/sys/devices/system/cpu/cpu{cpu}/cpuidle/state{k}");
            write(b, &format!("{s}/name"), &format!("{name}\n"));
            write(b, &format!("{s}/latency"), &format!("{lat}\n"));
            write(b, &format!("{s}/disable"), "0\n");
        }
    }
    write(b, "/sys/class/thermal/thermal_zone0/type", "cpu-thermal\n");
    write(b, "/sys/class/thermal/thermal_zone0/temp", "71540\n");
    let run = |json: bool| {
        let mut c = rtshield();
        c.args(["--sysroot", b.to_str().unwrap(), "sysinfo"]);
        if json {
            c.arg("--json");
        }
        let out = c.output().unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap()
    };
    let v: serde_json::Value = serde_json::from_str(&run(true)).unwrap();
    assert_eq!(v["cpufreq"][1]["governor"], "ondemand");
    assert_eq!(v["cpufreq"][1]["cur_khz"], 600000);
    assert_eq!(v["cpufreq"][1]["max_khz"], 1500000);
    assert_eq!(v["cpuidle"][0]["states"][1]["name"], "cpu-sleep-0");
    assert_eq!(v["cpuidle"][0]["states"][1]["latency_us"], 2000);
    assert_eq!(v["thermal"][0]["kind"], "cpu-thermal");
    assert_eq!(v["thermal"][0]["temp_c"], 71.54);
    let text = run(false);
    assert!(
        text.contains("cpufreq cpu0         ondemand (cpufreq-dt), 600 of 1500 MHz"),
        "{text}"
    );
    assert!(
        text.contains("cpuidle cpu0-1       WFI 1us, cpu-sleep-0 2000us"),
        "{text}"
    );
    assert!(
        text.contains("thermal              cpu-thermal 71.5°C"),
        "{text}"
    );
}
