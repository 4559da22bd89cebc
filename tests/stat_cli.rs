//! `rtshield stat` on this machine and on a fake tree.

use crate::util::*;
use std::process::Command;

#[test]
fn json_lines_one_per_sample() {
    let o = rtshield(&["stat", "--interval", "100ms", "--count", "2", "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8(o.stdout).unwrap();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2);
    let online = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
    let n = rtshield_sys::CpuSet::parse_list(online.trim())
        .unwrap()
        .len();
    for l in lines {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        assert_eq!(v["cpus"].as_array().unwrap().len(), n);
        assert!(v["interval_s"].as_f64().unwrap() > 0.0);
        // Sorted by activity, busiest first.
        let act: Vec<f64> = v["threads"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["cswch_per_s"].as_f64().unwrap() + t["nvcswch_per_s"].as_f64().unwrap())
            .collect();
        // (JSON floats may come back one ulp off: compare with a margin.)
        assert!(
            act.windows(2).all(|w| w[0] >= w[1] * (1.0 - 1e-9)),
            "{act:?}"
        );
        assert!(act.len() <= 15);
    }
}

#[test]
fn pids_filter_keeps_only_those_threads() {
    // A shell that waits for a short sleep over and over: voluntary switches.
    let child = Kill(
        Command::new("sh")
            .args(["-c", "while :; do sleep 0.01; done"])
            .spawn()
            .unwrap(),
    );
    let pid = child.0.id().to_string();
    let o = rtshield(&[
        "stat",
        "--interval",
        "500ms",
        "--count",
        "1",
        "--pids",
        &pid,
        "--top",
        "0",
        "--json",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let ts = v["threads"].as_array().unwrap();
    assert_eq!(ts.len(), 1, "{ts:?}");
    assert_eq!(ts[0]["tid"].to_string(), pid);
    assert_eq!(ts[0]["name"], "sh");
    assert!(ts[0]["cswch_per_s"].as_f64().unwrap() > 0.0);
}

#[test]
fn text_output_and_bad_input() {
    let o = rtshield(&["stat", "--interval", "50ms", "--count", "1"]);
    let t = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success());
    assert!(t.contains("CPU   intr/s     cs/s  runq"), "{t}");
    assert!(t.contains("load "), "{t}");
    let o = rtshield(&["stat", "--interval", "0s", "--count", "1"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--interval must be more than 0"));
    let o = rtshield(&["stat", "--pids", "12x"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("invalid value '12x' for '--pids"));
    let o = rtshield(&["stat", "--count", "many"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("invalid value 'many' for '--count"));
    let o = rtshield(&["stat", "--pids", "999999999", "--count", "1"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--pids: no process 999999999"));
}
