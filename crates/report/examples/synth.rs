//! Write synthetic run directories for the bench scripts:
//! `cargo run -p rtshield-report --example synth -- OUT RUNS INTERVALS [WITH_TIMELINE]`
//! makes OUT/run1 … OUT/runN (OUT/idle and OUT/loaded when RUNS is 2;
//! 2 threads each, the first WITH_TIMELINE runs (default 2) with a
//! timeline of INTERVALS rows per thread) and OUT/cyclictest.json.
use rtshield_report::{synth_run_result, synth_timeline_csv, write_synth_run_dir};
use std::path::PathBuf;

fn main() -> std::io::Result<()> {
    let mut a = std::env::args().skip(1);
    let out = PathBuf::from(a.next().expect("usage: synth OUT RUNS INTERVALS"));
    let runs: u64 = a.next().map_or(2, |v| v.parse().expect("RUNS"));
    let intervals: usize = a.next().map_or(720, |v| v.parse().expect("INTERVALS"));
    let with_tl: u64 = a.next().map_or(2, |v| v.parse().expect("WITH_TIMELINE"));
    for i in 1..=runs {
        let label = if runs == 2 {
            ["idle", "loaded"][i as usize - 1].to_string()
        } else {
            format!("run{i}")
        };
        let tail = (i - 1) as f64 / runs.max(2) as f64;
        let r = synth_run_result(&label, i, &[2, 3], 200_000, 8.0 + i as f64, tail, 200);
        let tl = (i <= with_tl).then(|| synth_timeline_csv(i, intervals, &[2, 3]));
        write_synth_run_dir(&out.join(&label), &r, tl.as_deref())?;
    }
    std::fs::write(out.join("cyclictest.json"), CYCLICTEST)?;
    Ok(())
}

const CYCLICTEST: &str = r##"{
  "file_version": 1,
  "cmdline:": "cyclictest -m -p 98 -a 1 -t 1 -i 200 -D 2 -h 100 -q --json=ct.json",
  "rt_test_version:": "2.40",
  "start_time": "Sun, 22 Nov 2026 05:49:01 +0000",
  "end_time": "Sun, 22 Nov 2026 05:49:03 +0000",
  "return_code": 0,
  "sysinfo": {"sysname": "Linux", "nodename": "vm", "release": "6.18.44", "version": "#1 SMP PREEMPT_DYNAMIC @0", "machine": "x86_64", "realtime": 0},
  "num_threads": 1,
  "resolution_in_ns": 0,
  "thread": {"0": {"histogram": {"9": 3, "10": 40, "11": 120, "12": 60, "13": 20, "15": 4, "22": 1, "40": 1}, "cycles": 250, "min": 9, "max": 140, "avg": 11.8, "cpu": 1, "node": 0}}
}
"##;
