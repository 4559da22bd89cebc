//! `rtshield demo`: measures on the last CPU with a CPU load on the others
//! and writes every file (short duration here; root only).

use crate::util::*;

#[test]
fn demo_measures_under_load_and_writes_files() {
    if !require_root("the demo measures under SCHED_FIFO") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("rtshield-demo");
    let o = command()
        .args(["demo", "--duration", "1s", "--quiet", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(stdout.starts_with("rtshield demo: wake-up latency of a SCHED_FIFO thread on CPU "));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    assert_eq!(v["label"], "demo");
    assert_eq!(v["end_reason"], "duration");
    let t = &v["threads"][0];
    // 1 s at 200 us: 5000 periods, each measured or missed.
    assert_eq!(
        t["samples"].as_u64().unwrap() + t["missed_periods"].as_u64().unwrap(),
        5000
    );
    if require_cpus_0_and_1("the demo's CPU load beside its measurement") {
        // The CPU load ran beside the measurement.
        assert_eq!(v["tags"]["load"], "cpu");
        assert_eq!(v["programs"][0]["command"], "builtin:cpu");
        assert!(v["programs"][0]["spawns"].as_u64().unwrap() >= 1);
    }
    for f in ["results.csv", "histogram.txt", "timer_thread00.txt"] {
        assert!(out.join(f).is_file(), "{f}");
    }
}
