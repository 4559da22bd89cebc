//! `rtshield audit` on fake trees (the torture article's "every IRQ on CPU 0", the rt
//! partition as default selection, scores, fixes) and on this machine.

use crate::util::all_text as text;
use crate::util::*;
use rtshield_testkit::{FakeSpec, FakeStyle};
use std::fs;

/// The torture article's Pandaboard: every device IRQ on CPU 0.
const PANDA: &str = "           CPU0       CPU1       CPU2       CPU3\n 24:      44000          0          0          0   GIC  dma\n 30:     109000          0          0          0   GIC  eth0\n 36:     115000          0          0          0   GIC  mmc0\n 41:          0          0          0          0   GIC  unused\nLOC:      23800      25870      25000      24000   Local timer interrupts\nRES:       1771       2429        100        200   Rescheduling interrupts\nERR:          0\n";

fn tree(style: FakeStyle) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    FakeSpec::standard(style).build(d.path()).unwrap();
    let w = |p: &str, s: &str| fs::write(d.path().join(p), s).unwrap();
    w("proc/interrupts", PANDA);
    w(
        "proc/softirqs",
        "      CPU0  CPU1  CPU2  CPU3\n  TIMER: 10 20 30 40\n NET_RX: 500 0 0 0\n",
    );
    w("proc/loadavg", "0.50 0.40 0.30 2/150 999\n");
    w(
        "proc/stat",
        "intr 1000 0\nctxt 5000\nprocs_running 2\nprocs_blocked 0\n",
    );
    d
}

#[test]
fn tells_the_user_every_device_irq_is_on_one_cpu() {
    let d = tree(FakeStyle::V1Prefix);
    let o = rtshield_at(d.path(), &["audit", "--watch", "0s"]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(
        t.contains("Every device IRQ since boot (268000 interrupts) was handled on CPU 0"),
        "{t}"
    );
    assert!(t.contains("Audit of CPUs 0-3 (all online"), "{t}");
    // CPU 0 carries three IRQs: +30 for them.
    assert!(
        t.contains("+30  3 device IRQ(s) handled here since boot"),
        "{t}"
    );
    // Advice goes to the least disturbed CPU (highest number on a tie):
    // CPUs 1 and 2 score 22, CPU 3 23 (irq 36 is routed there).
    assert!(
        t.contains("the least disturbed CPU other than CPU 0 is CPU 2 (score 22)"),
        "{t}"
    );
    assert!(t.contains("rtshield partition create 2"), "{t}");
    assert!(t.contains("CPU 3: DISTURBED (score 23)"), "{t}");
}

#[test]
fn audits_the_rt_partition_by_default_and_scores_it() {
    let d = tree(FakeStyle::V1Prefix);
    let o = rtshield_at(d.path(), &["partition", "create", "3"]);
    assert!(o.status.success(), "{}", text(&o));
    let o = rtshield_at(d.path(), &["audit", "--watch", "0s", "--json"]);
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["selection"], "CPUs 3 (the rt partition)");
    let c = &v["cpus"][0];
    assert_eq!(c["cpu"], 3);
    assert!(c["partition"].as_str().unwrap().starts_with("rt ("), "{c}");
    // After create: IRQs, workqueues, default affinity, tasks are off CPU 3;
    // the pinned ksoftirqd threads remain, which cost nothing, and init,
    // kept in the root group (no --move-init), may still run there: 1 point.
    assert_eq!(c["allowed"]["user"], 1, "{c}");
    assert_eq!(c["workqueue_mask"], false);
    assert_eq!(c["default_irq_affinity"], false);
    assert_eq!(c["irqs"].as_array().unwrap().len(), 0, "{c}");
    assert_eq!(c["score"], 1, "{c}");
    assert_eq!(c["verdict"], "clean");
    // Boot parameters are still missing: a numbered fix says which.
    let fixes = v["fixes"].as_array().unwrap();
    assert_eq!(fixes[0]["n"], 1);
    assert!(
        fixes
            .iter()
            .any(|f| f["command"].as_str().unwrap().contains("nohz_full=3")),
        "{fixes:?}"
    );
    // Undo: CPU 3 is disturbed again.
    assert!(rtshield_at(d.path(), &["partition", "undo"])
        .status
        .success());
    let o = rtshield_at(d.path(), &["audit", "3", "--watch", "0s", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let c = &v["cpus"][0];
    assert_eq!(c["verdict"], "disturbed");
    // Hand-computed: 3 IRQs allowed (24, 30, 36), none fired on CPU 3 (+3); 3 user
    // threads (+1); 2 movable kernel threads (+1); wq mask (+5); default
    // affinity (+3); not shielded (+10).
    assert_eq!(c["score"], 23, "{c}");
}

#[test]
fn audit_bad_input() {
    let d = tree(FakeStyle::V2);
    let o = rtshield_at(d.path(), &["audit", "7"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("CPU 7 is not online (online: 0-3)"));
    let o = rtshield_at(d.path(), &["audit", "1-", "--watch", "0s"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("invalid CPU set '1-'"), "{}", text(&o));
    let o = rtshield_at(d.path(), &["audit", "--watch", "soon"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("invalid duration 'soon'"), "{}", text(&o));
}

#[test]
fn audit_this_machine() {
    // CPUs named: the default selection would follow any partition another
    // test (partition_live) or a user has open on this machine right now.
    let online = online_cpus();
    let o = rtshield(&["audit", &online, "--watch", "200ms", "--json"]);
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let n = rtshield_vocab::CpuSet::parse_list(&online).unwrap().len();
    assert_eq!(v["cpus"].as_array().unwrap().len(), n);
    for c in v["cpus"].as_array().unwrap() {
        let s = c["score"].as_u64().unwrap();
        assert!(s <= 100);
        assert_eq!(c["verdict"], if s <= 5 { "clean" } else { "disturbed" });
    }
}

#[test]
fn a_managed_irq_that_refused_is_explained() {
    let d = tempfile::tempdir().unwrap();
    let mut sp = FakeSpec::standard(FakeStyle::V1Prefix);
    sp.config
        .refuse
        .insert("/proc/irq/36/smp_affinity_list".into(), "EPERM".into());
    sp.build(d.path()).unwrap();
    // The virtio-blk situation of this VM: irq 36 served on CPU 3.
    fs::write(
        d.path().join("proc/interrupts"),
        "      CPU0  CPU1  CPU2  CPU3\n 24:  10  0  0  0  IO-APIC  acpi\n 36:  0  0  0  9157  PCI-MSIX  virtio1-req.0\nLOC:  5  5  5  5  Local timer interrupts\n",
    )
    .unwrap();
    let o = rtshield_at(d.path(), &["partition", "create", "3"]);
    let t = text(&o);
    assert!(t.contains("irq 36"), "{t}");
    assert!(t.contains("EPERM"), "{t}");
    assert!(t.contains("isolcpus=managed_irq,3"), "{t}");
    let o = rtshield_at(d.path(), &["audit", "--watch", "0s"]);
    let t = text(&o);
    assert!(
        t.contains(
            "CPU 3: the main disturbance is irq 36 (virtio1-req.0), 9157 interrupts since boot"
        ),
        "{t}"
    );
    assert!(
        t.contains("irq 36 could not be moved off CPU 3 when the partition was created: EPERM"),
        "{t}"
    );
    assert!(
        t.contains("IRQ(s) 36 refuse run-time affinity changes"),
        "{t}"
    );
    assert!(t.contains("CPU 3: DISTURBED"), "{t}");
}

#[test]
fn warns_about_a_scaling_governor_and_deep_idle_on_the_rt_cpu() {
    let d = tree(FakeStyle::V1Prefix);
    let w = |p: &str, s: &str| {
        let p = d.path().join(p);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, s).unwrap();
    };
    for cpu in 0..4 {
        let f = format!("sys/devices/system/cpu/cpu{cpu}/cpufreq");
        w(&format!("{f}/scaling_governor"), "ondemand\n");
        let s = format!("sys/devices/system/cpu/cpu{cpu}/cpuidle");
        for (k, name, lat) in [(0, "WFI", "1"), (1, "cpu-sleep-0", "2000")] {
            w(&format!("{s}/state{k}/name"), &format!("{name}\n"));
            w(&format!("{s}/state{k}/latency"), &format!("{lat}\n"));
            w(&format!("{s}/state{k}/disable"), "0\n");
        }
    }
    let o = rtshield_at(d.path(), &["partition", "create", "3"]);
    assert!(o.status.success(), "{}", text(&o));
    let o = rtshield_at(d.path(), &["audit", "--watch", "0s"]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(
        t.contains("CPU 3 run the ondemand governor"),
        "only the rt CPU is named: {t}"
    );
    assert!(
        t.contains("for c in 3; do echo performance > /sys/devices/system/cpu/cpu$c/cpufreq/scaling_governor; done"),
        "{t}"
    );
    assert!(
        t.contains(
            "CPU 3 may enter deep idle states (up to cpu-sleep-0 with a 2000 us exit latency"
        ),
        "{t}"
    );
    assert!(t.contains("processor.max_cstate=1"), "{t}");
}

/// `audit ARGS` on tree `d`, killed after 10 s if it is still watching:
/// (exit status, None when it had to be killed; all its text).
fn follow_at(d: &std::path::Path, args: &[&str]) -> (Option<i32>, String) {
    let mut c = command();
    c.env("RTSHIELD_FAKE_KERNEL", "1")
        .arg("--sysroot")
        .arg(d)
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut ch = c.spawn().unwrap();
    let t0 = std::time::Instant::now();
    while ch.try_wait().unwrap().is_none() {
        if t0.elapsed() > std::time::Duration::from_secs(10) {
            ch.kill().unwrap();
            let o = ch.wait_with_output().unwrap();
            return (None, text(&o));
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let o = ch.wait_with_output().unwrap();
    (o.status.code(), text(&o))
}

/// Adversary round 3 (C8, C11): `audit --follow` refuses, before watching
/// (exit 2 naming the option), a `--period` outside 100 ms ..= 1 h (it
/// printed `every 1ns` and read every 100 ms) and a `--parent` that is not
/// a cgroup below the hierarchy (`..` made it read ordinary files outside
/// cgroupfs as "the partition"; `''` and `/` are the root, which leaving
/// --parent out means), as `partition --parent` does.
#[test]
fn follow_refuses_a_period_or_parent_out_of_range() {
    let d = tree(FakeStyle::V1Prefix);
    for p in ["1ns", "0s", "99ms", "2h"] {
        let (code, t) = follow_at(d.path(), &["audit", "1", "--follow", "--period", p]);
        assert_eq!(code, Some(2), "--period {p}: {t}");
        assert!(
            t.contains("--period") && t.contains("between 100ms and 1h"),
            "{p}: {t}"
        );
    }
    for (p, why) in [
        ("..", "without `.` or `..`"),
        ("../../../../tmp/x/fake", "without `.` or `..`"),
        ("a/./b", "without `.` or `..`"),
        ("", "not the root itself"),
        ("/", "not the root itself"),
        ("/sys/fs/cgroup/cpuset", "not the root itself"),
        ("nope", "does not exist"),
    ] {
        let (code, t) = follow_at(d.path(), &["audit", "1", "--follow", "--parent", p]);
        assert_eq!(code, Some(2), "--parent {p:?}: {t}");
        assert!(t.contains("--parent") && t.contains(why), "{p:?}: {t}");
        assert!(!t.contains("Following"), "{p:?} watched: {t}");
    }
}
