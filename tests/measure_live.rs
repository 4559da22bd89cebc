//! Live measurements on this machine (root, CPU 1): sample counts, file
//! contents, the SCHED_OTHER fallback, SIGINT, --max-latency.
//! Skipped with a visible message when not root or without CPU 1 (a
//! failure under RTSHIELD_REQUIRE_ROOT=1).

use crate::util::describe as text;
use crate::util::*;
use std::path::Path;
use std::process::{Command, Stdio};

fn cannot_run() -> bool {
    !require_root("live measurement runs SCHED_FIFO")
        || !require_cpus_0_and_1("live measurement on CPU 1")
}

/// Histogram rows of a systress txt file, summed.
fn systress_rows(p: &Path) -> (usize, u64, String) {
    let s = std::fs::read_to_string(p).unwrap();
    let mut rows = 0;
    let mut total = 0;
    for l in s.lines().take_while(|l| !l.is_empty()) {
        let mut it = l.split_whitespace();
        let i: usize = it.next().unwrap().parse().unwrap();
        assert_eq!(i, rows);
        total += it.next().unwrap().parse::<u64>().unwrap();
        rows += 1;
    }
    let summary = s.lines().last().unwrap().to_string();
    (rows, total, summary)
}

#[test]
fn two_second_measurement_on_cpu1() {
    if cannot_run() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("res");
    let j = d.path().join("out.json");
    let o = command()
        .args([
            "measure",
            "--cpus",
            "1",
            "--period",
            "1ms",
            "--samples",
            "2000",
            "--prio",
            "80",
        ])
        .arg("--out")
        .arg(&out)
        .arg("--json")
        .arg(&j)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("Index     TID  Samples    L_min    L_max    L_cur    L_avg"));
    assert!(stdout.contains("Total elapsed time:"));

    let v = json(&out.join("results.json"));
    assert_eq!(v, json(&j), "--json is the same document");
    assert_eq!(v["schema"], "rtshield.results/2");
    assert_eq!(v["end_reason"], "samples");
    let t = &v["threads"][0];
    assert_eq!(t["samples"], 2000);
    assert_eq!(t["cpu"], 1);
    assert_eq!(t["policy"], "fifo");
    assert_eq!(t["priority"], 80);
    let (min, max) = (t["min_ns"].as_i64().unwrap(), t["max_ns"].as_i64().unwrap());
    assert!(0 <= min && min <= max);
    let avg = t["avg_ns"].as_f64().unwrap();
    assert!(min as f64 <= avg && avg <= max as f64);
    // Every sample went through the ring: histogram + overflow = samples.
    assert_eq!(t["lost"], 0);
    let in_hist: u64 = t["histogram"]["counts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c[1].as_u64().unwrap())
        .sum();
    let overflow = t["histogram"]["overflow"].as_u64().unwrap();
    assert_eq!(in_hist + overflow, 2000);
    assert_eq!(t["hist_stats"]["samples"].as_u64().unwrap(), in_hist);
    // Percentiles ordered and bounded by the exact extremes.
    let p: Vec<i64> = ["50", "90", "99", "99.9"]
        .iter()
        .map(|k| t["percentiles"][k].as_i64().unwrap())
        .collect();
    // 2000 samples cannot support a deeper percentile: absent, not guessed.
    for k in ["99.99", "99.999", "99.9999"] {
        assert!(t["percentiles"].get(k).is_none(), "p{k} from 2000 samples");
    }
    assert!(p.windows(2).all(|w| w[0] <= w[1]), "{p:?}");
    assert!(*p.last().unwrap() <= max);
    assert_eq!(
        t["corrected"]["samples"].as_u64().unwrap(),
        2000 + t["missed_periods"].as_u64().unwrap()
    );
    assert!(v["sysinfo"]["kernel_release"].is_string());

    // The systress file: 1001 rows (0..=1000 us) summing to Samples_H,
    // then the SUMMARY line with the same figures.
    let (rows, total, summary) = systress_rows(&out.join("timer_thread00.txt"));
    assert_eq!(rows, 1001);
    assert_eq!(total, in_hist);
    let f: Vec<i64> = summary
        .trim_start_matches('#')
        .split_whitespace()
        .map(|x| x.parse().unwrap())
        .collect();
    assert_eq!(f[0], 0);
    assert_eq!(f[1], t["tid"].as_i64().unwrap());
    assert_eq!(f[2], 2000);
    assert_eq!(f[3], min / 1000);
    assert_eq!(f[4], max / 1000);
    assert_eq!(f[6] as u64, in_hist);

    // cyclictest-format histogram and CSV.
    let h = std::fs::read_to_string(out.join("histogram.txt")).unwrap();
    assert!(h.contains("# Histogram\n000000 "));
    assert!(h.contains(&format!("# Total: {in_hist:09}\n")));
    assert!(h.contains(&format!("# Max Latencies: {:05}\n", max / 1000)));
    assert!(h.contains(&format!("# Histogram Overflows: {overflow:05}\n")));
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    assert_eq!(csv.lines().count(), 2);
    assert!(csv
        .lines()
        .nth(1)
        .unwrap()
        .contains(",fifo,80,,1000000,nanosleep,2000,"));
}

#[test]
fn duration_run_accounts_for_every_period() {
    if cannot_run() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let o = command()
        .args([
            "measure",
            "--cpus",
            "1",
            "--period",
            "2ms",
            "--duration",
            "1s",
            "--quiet",
            "--mode",
            "posix-timer",
        ])
        .arg("--out")
        .arg(d.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let v = json(&d.path().join("results.json"));
    assert_eq!(v["end_reason"], "duration");
    assert_eq!(v["settings"]["mode"], "posix-timer");
    let t = &v["threads"][0];
    // Each of the 500 periods is either measured or counted as missed.
    assert_eq!(
        t["samples"].as_u64().unwrap() + t["missed_periods"].as_u64().unwrap(),
        500
    );
}

#[test]
fn fifo_refused_falls_back_to_other_and_says_so() {
    if cannot_run() {
        return;
    }
    if !require_tool("setpriv", "--version") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    // A child without CAP_SYS_NICE and with RLIMIT_RTPRIO 0: the kernel
    // refuses SCHED_FIFO to it (nothing machine-wide changes).
    let o = wrapped(&[
        "setpriv",
        "--bounding-set=-sys_nice",
        "prlimit",
        "--rtprio=0",
        "--",
    ])
    .args([
        "measure",
        "--cpus",
        "1",
        "--period",
        "1ms",
        "--samples",
        "300",
        "--quiet",
    ])
    .arg("--out")
    .arg(d.path())
    .output()
    .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("WARNING: SCHED_FIFO is not permitted: measuring under SCHED_OTHER"),
        "{stdout}"
    );
    assert!(stdout.contains("(asked fifo: FALLBACK)"), "{stdout}");
    let v = json(&d.path().join("results.json"));
    let t = &v["threads"][0];
    assert_eq!(t["samples"], 300);
    assert_eq!(t["policy"], "other");
    assert_eq!(t["requested_policy"], "fifo");
    assert_eq!(t["priority"], 0);
    let warnings = v["warnings"].to_string();
    assert!(
        warnings.contains("SCHED_FIFO refused, measured under SCHED_OTHER")
            && warnings.contains("CAP_SYS_NICE"),
        "{warnings}"
    );
    assert_eq!(v["sysinfo"]["fifo_permitted"], false);
    // Every file says so.
    let txt = std::fs::read_to_string(d.path().join("timer_thread00.txt")).unwrap();
    assert!(txt.contains("# WARNING: thread 0: SCHED_FIFO refused"));
    let h = std::fs::read_to_string(d.path().join("histogram.txt")).unwrap();
    assert!(h.contains("# WARNING: thread 0: SCHED_FIFO refused"));
    let csv = std::fs::read_to_string(d.path().join("results.csv")).unwrap();
    assert!(csv.contains("SCHED_FIFO refused"));
}

/// Start a long run, wait until the live table shows samples, send
/// `sig` (to our own child only), and check every file is written.
fn signal_ends_early_and_writes_every_file(sig: &str, end_reason: &str, name: &str) {
    if cannot_run() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let mut child = command()
        .args([
            "measure",
            "--cpus",
            "1",
            "--period",
            "1ms",
            "--stats-period",
            "100ms",
            // Far beyond the test, only so a broken build cannot hang it.
            "--duration",
            "2min",
        ])
        .arg("--out")
        .arg(d.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Plain lines (stdout is a pipe): the first line is printed once the
    // handler is installed, then one row per stats period. Wait for a row
    // with samples, however long a loaded machine takes to get there.
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(child.stdout.take().unwrap()));
    let first = lines.next().unwrap().unwrap();
    assert!(first.starts_with("rtshield measure:"), "{first}");
    let mut seen = Vec::new();
    for l in lines.by_ref() {
        let l = l.unwrap();
        // "    0.1s     0   23548       97       12 ..." : Time Index TID Samples
        let f: Vec<&str> = l.split_whitespace().collect();
        let measuring =
            f.len() == 8 && f[0].ends_with('s') && f[3].parse::<u64>().is_ok_and(|n| n > 0);
        seen.push(l);
        if measuring {
            break;
        }
    }
    let k = Command::new("kill")
        .args([sig, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(k.success());
    // Read the rest (the summary) so the child never blocks on a full pipe.
    seen.extend(lines.map_while(Result::ok));
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}\n{}", seen.join("\n"), text(&o));
    assert!(seen.iter().any(|l| l.starts_with("Total elapsed time:")));
    let v = json(&d.path().join("results.json"));
    assert_eq!(v["end_reason"], end_reason);
    assert!(v["threads"][0]["samples"].as_u64().unwrap() > 0);
    assert!(v["warnings"]
        .to_string()
        .contains(&format!("interrupted by {name}")));
    for f in ["results.csv", "histogram.txt", "timer_thread00.txt"] {
        let t = std::fs::read_to_string(d.path().join(f)).unwrap();
        assert!(t.contains(&format!("interrupted by {name}")), "{f}");
    }
}

#[test]
fn sigint_ends_early_and_writes_every_file() {
    signal_ends_early_and_writes_every_file("-INT", "sigint", "SIGINT");
}

#[test]
fn sigterm_ends_early_and_writes_every_file() {
    signal_ends_early_and_writes_every_file("-TERM", "sigterm", "SIGTERM");
}

#[test]
fn max_latency_exit_status() {
    if cannot_run() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let run = |limit: &str| {
        command()
            .args([
                "measure",
                "--cpus",
                "1",
                "--period",
                "1ms",
                "--samples",
                "50",
                "--quiet",
                "--max-latency",
                limit,
            ])
            .arg("--out")
            .arg(d.path())
            .output()
            .unwrap()
    };
    // No wake-up is ever exactly on time to the nanosecond.
    let o = run("1ns");
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("exceeds --max-latency 1ns"));
    assert!(
        d.path().join("results.json").is_file(),
        "files written before the verdict"
    );
    // A 50 ms run cannot see a 1 h latency.
    let o = run("1h");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("within --max-latency 1h"));
}
