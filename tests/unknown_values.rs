//! Issue 22 (items 1, 2, 3, 4, 8) and the consumer findings' new 1, 2, 3
//! and 5, seen from outside: rtshield reading files back (`report`, `runs
//! import` then `runs show` / `runs export`) says what the file says, a
//! bound where only a bound is known, and `?` / null / an empty cell where
//! the file says nothing. Black-box (the binary and its files only), so
//! each test runs as well against an older rtshield, where it fails.
//!
//! Real cyclictest 2.40 files made on this machine (Debian 12 VM, kernel
//! 6.18.44) with short runs of issue 22's scenario (c), as root:
//!
//! - `cyclictest-no-h.json`: `cyclictest -q -m -p 98 -i 200 -D 2 -a 1 -t 1
//!   --json=no-h.json` (no `-h`: `"histogram": {}`);
//! - `cyclictest-h1000.hist`: `cyclictest -q -m -p 98 -i 200 -D 2 -a 1 -t 1
//!   -h 1000 > h1000.hist` (its standard output, 3 overflows);
//! - `cyclictest-h1000.json`: `cyclictest -q -m -p 98 -i 200 -D 2 -a 1 -t 1
//!   -h 1000 --json=h1000.json`;
//!
//! rtshield's own files from a real 10 s run (`real/idle`: FIFO 98 at
//! 200 µs), and a small hand-made histogram where a case needs a given
//! share of overflow.

use crate::util::ok;
use std::path::{Path, PathBuf};
use std::process::Output;

fn fixture(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/report")
        .join(p)
}

/// `rtshield runs --store STORE ARGS`.
fn runs(store: &Path, args: &[&str]) -> Output {
    crate::util::command()
        .arg("runs")
        .arg("--store")
        .arg(store)
        .args(args)
        .output()
        .expect("run rtshield")
}

/// What the store says about `file` once imported: the run as `runs
/// export --format json` gives it, `runs show`'s text, and `runs export
/// --format csv` as (header, first record), read with the csv crate.
struct Stored {
    run: serde_json::Value,
    show: String,
    csv: (Vec<String>, Vec<String>),
}

fn import(dir: &Path, file: &Path) -> Stored {
    let db = dir.join("runs.db");
    let out = ok(runs(&db, &["import", file.to_str().unwrap()]));
    assert!(out.contains("1 stored"), "{out}");
    let json = ok(runs(&db, &["export", "id=1", "--format", "json"]));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let csv = ok(runs(&db, &["export", "id=1", "--format", "csv"]));
    let mut rd = csv::ReaderBuilder::new().from_reader(csv.as_bytes());
    let head: Vec<String> = rd.headers().unwrap().iter().map(str::to_string).collect();
    let rec = rd.records().next().expect("one record").unwrap();
    Stored {
        run: v[0].clone(),
        show: ok(runs(&db, &["show", "1"])),
        csv: (head, rec.iter().map(str::to_string).collect()),
    }
}

impl Stored {
    fn csv(&self, col: &str) -> &str {
        let i = self.csv.0.iter().position(|h| h == col).unwrap_or_else(|| {
            panic!("no column {col} in {:?}", self.csv.0);
        });
        &self.csv.1[i]
    }
    /// `runs show`'s first thread row, split in words.
    fn thread_row(&self) -> Vec<&str> {
        self.show
            .lines()
            .skip_while(|l| !l.trim_start().starts_with("thread"))
            .nth(1)
            .unwrap_or_else(|| panic!("{}", self.show))
            .split_whitespace()
            .collect()
    }
    /// The word after `key ` on `runs show`'s run lines.
    fn show_field(&self, key: &str) -> &str {
        let pat = format!("{key} ");
        let i = self
            .show
            .find(&pat)
            .unwrap_or_else(|| panic!("{}", self.show))
            + pat.len();
        self.show[i..].split_whitespace().next().unwrap()
    }
}

/// `rtshield report FILE --format csv,gnuplot`: summary.csv as (row name
/// → first column) and plot.gp.
fn report(dir: &Path, file: &Path) -> (Vec<(String, String)>, String) {
    let out = dir.join("rep");
    ok(crate::util::rtshield(&[
        "report",
        file.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--format",
        "csv,gnuplot",
    ]));
    let text = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    let mut rd = csv::ReaderBuilder::new().from_reader(text.as_bytes());
    let rows = rd
        .records()
        .map(|r| {
            let r = r.unwrap();
            (r[0].to_string(), r[1].to_string())
        })
        .collect();
    (rows, std::fs::read_to_string(out.join("plot.gp")).unwrap())
}

fn row<'a>(rows: &'a [(String, String)], name: &str) -> &'a str {
    &rows
        .iter()
        .find(|r| r.0 == name)
        .unwrap_or_else(|| panic!("no row {name}: {rows:?}"))
        .1
}

/// rtshield's own cyclictest JSON of the real FIFO 98 / 200 µs / 10 s run.
fn own_cyclictest_json(dir: &Path) -> PathBuf {
    let f = dir.join("own-cyclictest.json");
    ok(crate::util::rtshield(&[
        "export",
        fixture("real/idle").to_str().unwrap(),
        "--format",
        "cyclictest-json",
        "-o",
        f.to_str().unwrap(),
    ]));
    f
}

/// Issue 22 #1: rtshield's own cyclictest JSON read back gives the run's
/// policy, priority, period and duration (its command line is rtshield's:
/// `--period 200us`, default fifo 98), not cyclictest's defaults (OTHER 0,
/// 1000 µs) nor cycles × 1000 µs (49 s).
#[test]
fn own_cyclictest_json_reads_back_policy_period_and_duration() {
    let d = tempfile::tempdir().unwrap();
    let f = own_cyclictest_json(d.path());
    let (rows, _) = report(d.path(), &f);
    assert_eq!(row(&rows, "policy"), "fifo 98");
    assert_eq!(row(&rows, "period (µs)"), "200");
    let s = import(d.path(), &f);
    let t = &s.run["threads"][0];
    assert_eq!(t["policy"], "fifo");
    assert_eq!(t["priority"], 98);
    assert_eq!(t["period_ns"], 200_000);
    // results.json: 10.017 s; the file's start and end are whole seconds.
    let dur = s.run["duration_s"].as_f64().expect("a duration");
    assert!((dur - 10.017).abs() <= 1.0, "{dur}");
}

/// Issue 22 #2: cyclictest `--json` without `-h` has no histogram: no
/// percentile (never the max, never `≥0`), no `_H` statistic, no overflow
/// count (never every sample), in the report, the store and the plot.
#[test]
fn cyclictest_json_without_histogram_has_unknown_percentiles() {
    let d = tempfile::tempdir().unwrap();
    let f = fixture("cyclictest-no-h.json");
    let (rows, gp) = report(d.path(), &f);
    for r in [
        "p50 (µs)",
        "p99 (µs)",
        "p99.9 (µs)",
        "Samples_H",
        "L_med_H (µs)",
        "L_std_H (µs)",
        "L_mode_H (µs)",
        "overflows",
    ] {
        assert_eq!(row(&rows, r), "?", "{r}");
    }
    // 9923 samples: no p99.99 row at all (it needs 10⁴).
    assert!(!rows.iter().any(|r| r.0 == "p99.99 (µs)"), "{rows:?}");
    assert_eq!(row(&rows, "samples"), "9923");
    assert_eq!(row(&rows, "max (µs)"), "2190");
    assert!(!gp.contains("overflow"), "{gp}");
    assert!(gp.contains("max 2190 us, no histogram"), "{gp}");
    let s = import(d.path(), &f);
    let t = &s.run["threads"][0];
    assert_eq!(t["percentiles"], serde_json::json!({}), "{t}");
    assert!(t["histogram"].is_null() && t["hist_stats"].is_null(), "{t}");
    assert!(t["corrected"].is_null(), "{t}");
    for c in ["p50_ns", "p99_ns", "p99.9_ns", "p99.99_ns"] {
        assert_eq!(s.csv(c), "", "{c}");
    }
    // runs show: p50 … p99.9 unknown, p99.99 `-` (not enough samples).
    let r = s.thread_row();
    assert_eq!(&r[5..9], ["?", "?", "?", "-"], "{}", s.show);
}

/// Issue 22 #3: a percentile whose rank falls among the samples beyond the
/// histogram is only known to be at least the histogram's end: stored as
/// a bound, never as the maximum. 10 000 samples, 2 beyond a 1000 µs
/// histogram, max 5000 µs: p99.99 (rank 9999) is ≥ 1000 µs; p99.9 (rank
/// 9990) is inside the histogram.
#[test]
fn percentiles_past_the_histogram_are_bounds() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("ovf.hist");
    let mut text = String::from("# Histogram\n");
    for b in 0..1000 {
        let c = match b {
            20 => 9_000,
            50 => 990,
            900 => 8,
            _ => 0,
        };
        text.push_str(&format!("{b:06} {c:06}\n"));
    }
    text.push_str(
        "# Total: 000009998\n# Min Latencies: 00020\n# Avg Latencies: 00024\n\
         # Max Latencies: 05000\n# Histogram Overflows: 00002\n\
         # Histogram Overflow at cycle number:\n# Thread 0: 01234 05678\n\n",
    );
    std::fs::write(&f, text).unwrap();
    let (rows, _) = report(d.path(), &f);
    assert_eq!(row(&rows, "p99.9 (µs)"), "900");
    assert_eq!(row(&rows, "p99.99 (µs)"), "≥1000");
    let s = import(d.path(), &f);
    let t = &s.run["threads"][0];
    assert_eq!(t["percentiles"]["99.9"], 900_000);
    assert!(t["percentiles"].get("99.99").is_none(), "{t}");
    assert_eq!(t["percentile_bounds"]["99.99"]["at_least_ns"], 1_000_000);
    assert_eq!(s.csv("p99.99_ns"), ">=1000000");
    assert_eq!(s.thread_row()[8], "≥1000.0", "{}", s.show);
}

/// Issue 22 #4: what a cyclictest `-h` text does not record (time, end
/// reason, mode, overruns, missed periods, lost samples) is unknown in
/// `runs show` and `runs export`, never 0, `duration 0.0 s`, `end
/// duration` or `mode nanosleep`.
#[test]
fn a_cyclictest_histogram_text_invents_nothing() {
    let d = tempfile::tempdir().unwrap();
    let s = import(d.path(), &fixture("cyclictest-h1000.hist"));
    assert_eq!(s.show_field("duration"), "?", "{}", s.show);
    assert_eq!(s.show_field("end"), "?", "{}", s.show);
    assert_eq!(s.show_field("mode"), "?", "{}", s.show);
    assert_eq!(s.thread_row().last().copied(), Some("?"), "{}", s.show);
    for c in ["overruns", "missed_periods", "lost"] {
        assert_eq!(s.csv(c), "", "{c}");
    }
    let r = &s.run;
    assert!(
        r["duration_s"].is_null() && r["end_reason"].is_null(),
        "{r}"
    );
    assert!(r["settings"]["mode"].is_null(), "{r}");
    for k in ["overruns", "missed_periods", "lost", "policy", "period_ns"] {
        assert!(r["threads"][0][k].is_null(), "{k}: {r}");
    }
    // What it does record is there: 9926 in the histogram, 3 overflows.
    assert_eq!(r["threads"][0]["samples"], 9_929);
    assert_eq!(r["threads"][0]["histogram"]["overflow"], 3);
    assert_eq!(r["threads"][0]["max_ns"], 2_379_000);
}

/// Issue 22 #4, the other sources: a cyclictest JSON records no overruns
/// either (`runs show` says `?`, the CSV export an empty cell).
#[test]
fn cyclictest_json_overruns_are_unknown() {
    let d = tempfile::tempdir().unwrap();
    let s = import(d.path(), &fixture("cyclictest-no-h.json"));
    assert_eq!(s.thread_row().last().copied(), Some("?"), "{}", s.show);
    assert_eq!(s.csv("overruns"), "");
    assert!(s.run["threads"][0]["overruns"].is_null());
}

/// Issue 22 #8: `runs export --format csv` is RFC 4180: cyclictest's
/// `start_time` (`Wed, 25 Nov 2026 00:18:39 +0000`) stays one field.
#[test]
fn runs_export_csv_keeps_commas_in_their_field() {
    let d = tempfile::tempdir().unwrap();
    let s = import(d.path(), &fixture("cyclictest-no-h.json"));
    assert_eq!(s.csv.0.len(), s.csv.1.len(), "{:?}", s.csv);
    assert_eq!(s.csv("started"), "Wed, 25 Nov 2026 00:18:39 +0000");
    assert_eq!(s.csv("samples"), "9923");
}

/// New finding 1: a duration is the file's own (rtshield's first `#` line
/// says 10.006 s; cyclictest's start and end times are 2 s apart), not
/// samples × period (9.97 s, 1.98 s: missed periods make it short).
#[test]
fn durations_come_from_the_file_not_samples_times_period() {
    let d = tempfile::tempdir().unwrap();
    let a = import(&d.path().join("a"), &fixture("measure-txt/histogram.txt"));
    assert_eq!(a.run["duration_s"], 10.006);
    assert_eq!(a.run["end_reason"], "duration");
    let b = import(&d.path().join("b"), &fixture("cyclictest-no-h.json"));
    assert_eq!(b.run["duration_s"], 2.0);
    assert_eq!(b.show_field("duration"), "2.0", "{}", b.show);
}

/// New finding 2: one spelling of the policy in the store: an imported
/// cyclictest run is `fifo`, as a measured one.
#[test]
fn the_store_spells_the_policy_one_way() {
    let d = tempfile::tempdir().unwrap();
    let a = import(&d.path().join("a"), &fixture("cyclictest-no-h.json"));
    assert_eq!(a.run["threads"][0]["policy"], "fifo");
    assert_eq!(a.run["threads"][0]["priority"], 98);
    let b = import(&d.path().join("b"), &fixture("real/idle"));
    assert_eq!(b.run["threads"][0]["policy"], "fifo");
}

/// New finding 3: a percentile q needs 1/(1 − q) samples; with fewer it
/// would only repeat the maximum. The real 10 s run has 49 045 samples:
/// no p99.999 (10⁵) nor p99.9999 (10⁶) in the store or the exports, and
/// p99.99 (10⁴) is there.
#[test]
fn too_few_samples_give_no_deep_percentile() {
    let d = tempfile::tempdir().unwrap();
    let s = import(d.path(), &fixture("real/idle"));
    let p = &s.run["threads"][0]["percentiles"];
    assert!(p.get("99.99").is_some(), "{p}");
    assert!(
        p.get("99.999").is_none() && p.get("99.9999").is_none(),
        "{p}"
    );
    // An export (KCIDB: one test per statistic) has none either.
    let out = ok(crate::util::rtshield(&[
        "export",
        fixture("real/idle").to_str().unwrap(),
        "--format",
        "kcidb",
    ]));
    let k: serde_json::Value = serde_json::from_str(&out).unwrap();
    let paths: Vec<&str> = k["tests"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["path"].as_str())
        .collect();
    assert!(paths.contains(&"rtshield.latency.t0.p99_99"), "{paths:?}");
    assert!(
        !paths
            .iter()
            .any(|p| p.ends_with("p99_999") || p.ends_with("p99_9999")),
        "{paths:?}"
    );
}

/// New finding 5: `report` and `runs show` describe the preemption of the
/// same file the same way (cyclictest's `uname -v` says
/// `PREEMPT_DYNAMIC`: the kernel can switch, the mode that ran is not
/// recorded).
#[test]
fn report_and_runs_show_agree_on_preemption() {
    let d = tempfile::tempdir().unwrap();
    let f = fixture("cyclictest-no-h.json");
    let (rows, _) = report(d.path(), &f);
    let s = import(d.path(), &f);
    let line = s
        .show
        .lines()
        .find(|l| l.contains(" preempt "))
        .unwrap_or_else(|| panic!("{}", s.show));
    let shown = line
        .split("  preempt ")
        .nth(1)
        .and_then(|r| r.split("  arch ").next())
        .unwrap_or_else(|| panic!("{line}"));
    assert_eq!(shown, row(&rows, "preemption"));
    assert_eq!(shown, "dynamic (mode ?)");
}

/// Issue 22 #2–#4 on a cyclictest `--json` with `-h 1000` (9973 cycles,
/// 9971 in the histogram, 2 overflows): the store keeps what the file
/// holds (the histogram, its overflow, percentiles from it), the run's
/// own times (2 s), and no overrun count; p99.99 needs 10⁴ samples: none.
#[test]
fn cyclictest_json_with_a_histogram_stores_what_it_holds() {
    let d = tempfile::tempdir().unwrap();
    let s = import(d.path(), &fixture("cyclictest-h1000.json"));
    let t = &s.run["threads"][0];
    assert_eq!(t["samples"], 9_973);
    assert_eq!(t["histogram"]["overflow"], 2);
    assert_eq!(
        (t["policy"].as_str(), t["priority"].as_i64()),
        (Some("fifo"), Some(98))
    );
    assert_eq!(t["period_ns"], 200_000);
    assert!(t["percentiles"]["99.9"].as_i64().is_some(), "{t}");
    assert!(t["percentiles"].get("99.99").is_none(), "{t}");
    assert!(
        t["percentiles"]["99.9"].as_i64() < t["max_ns"].as_i64(),
        "{t}"
    );
    assert!(t["overruns"].is_null() && t["lost"].is_null(), "{t}");
    assert_eq!(s.run["duration_s"], 2.0);
    assert_eq!(s.csv("overruns"), "");
}

/// A short SCHED_OTHER run (no root needed) into `dir`, then a second
/// thread added that measured nothing (a run stopped before its first
/// wake-up on that CPU): with `zeros`, as rtshield before the figures
/// became optional wrote it (`min_ns`, `max_ns`, `avg_ns`, `cur_ns` and
/// the corrected maximum 0 beside `samples` 0), else with null figures.
pub(crate) fn run_with_an_empty_thread(dir: &Path, zeros: bool) -> PathBuf {
    let run = dir.join("run");
    ok(crate::util::command()
        .args(["measure", "--policy", "other", "--period", "100us"])
        .args(["--samples", "300", "-q", "--no-dma-latency", "--no-memlock"])
        .arg("--out")
        .arg(&run)
        .output()
        .unwrap());
    let f = run.join("results.json");
    let mut r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
    let mut t = r["threads"][0].clone();
    let fig = |v: serde_json::Value| if zeros { v } else { serde_json::Value::Null };
    t["index"] = 1.into();
    t["cpu"] = 2.into();
    t["samples"] = 0.into();
    t["min_ns"] = fig(0.into());
    t["max_ns"] = fig(0.into());
    t["avg_ns"] = fig(0.0.into());
    t["cur_ns"] = fig(0.into());
    t["overruns"] = 0.into();
    t["missed_periods"] = 0.into();
    t["percentiles"] = serde_json::json!({});
    t["worst_cases"] = serde_json::json!([]);
    t["overflow_cycles"] = serde_json::json!([]);
    t["histogram"]["counts"] = serde_json::json!([]);
    t["histogram"]["overflow"] = 0.into();
    t["corrected"] = serde_json::json!({"samples": 0, "max_ns": fig(0.into()), "percentiles": {}});
    let le: Vec<serde_json::Value> = t["le_counts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| serde_json::json!([p[0], 0]))
        .collect();
    t["le_counts"] = le.into();
    r["threads"].as_array_mut().unwrap().push(t);
    std::fs::write(&f, serde_json::to_string_pretty(&r).unwrap()).unwrap();
    run
}

fn export_text(run: &Path, format: &str) -> String {
    ok(crate::util::command()
        .arg("export")
        .arg(run)
        .args(["--format", format])
        .output()
        .unwrap())
}

/// Issue 22, "a number rtshield did not measure is unknown": a thread
/// that measured nothing has no minimum, mean or maximum. Read back
/// (results.json with null figures, or an older one with 0 beside
/// `samples` 0), it is null in results.json, `?` in `report`'s tables and
/// `runs show`, an empty cell in `runs export --format csv`, null in
/// cyclictest JSON, and no property, sample line or test in JUnit,
/// OpenMetrics and KCIDB. (Before: 0 everywhere, but in the CI exports.)
#[test]
fn a_thread_without_samples_has_unknown_figures_everywhere() {
    for zeros in [true, false] {
        let d = tempfile::tempdir().unwrap();
        let run = run_with_an_empty_thread(d.path(), zeros);
        let case = if zeros { "zeros" } else { "nulls" };
        // results.json as rtshield reads it (`export --format json`).
        let v: serde_json::Value = serde_json::from_str(&export_text(&run, "json")).unwrap();
        let t = &v["threads"][1];
        for k in ["min_ns", "max_ns", "avg_ns", "cur_ns"] {
            assert!(t[k].is_null(), "{case}: {k} = {}", t[k]);
        }
        assert!(t["corrected"]["max_ns"].is_null(), "{case}: {t}");
        assert!(v["threads"][0]["max_ns"].as_i64().unwrap() > 0, "{case}");
        // report: summary.csv and summary.md, one column per thread.
        let out = d.path().join("rep");
        ok(crate::util::rtshield(&[
            "report",
            run.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--format",
            "csv,md",
        ]));
        let text = std::fs::read_to_string(out.join("summary.csv")).unwrap();
        let mut rd = csv::ReaderBuilder::new().from_reader(text.as_bytes());
        let rows: Vec<csv::StringRecord> = rd.records().map(Result::unwrap).collect();
        let cell = |name: &str, col: usize| {
            rows.iter()
                .find(|r| &r[0] == name)
                .unwrap_or_else(|| panic!("no row {name}: {text}"))[col]
                .to_string()
        };
        for name in ["min (µs)", "avg (µs)", "max (µs)"] {
            assert_eq!(cell(name, 2), "?", "{case}: {name}: {text}");
            assert_ne!(cell(name, 1), "?", "{case}: {name}: {text}");
        }
        assert_eq!(cell("samples", 2), "0", "{case}");
        let md = std::fs::read_to_string(out.join("summary.md")).unwrap();
        let md_max = md.lines().find(|l| l.starts_with("| max (µs)")).unwrap();
        assert!(md_max.trim_end().ends_with("| ? |"), "{case}: {md_max}");
        // The store: runs show and runs export.
        let s = import(d.path(), &run.join("results.json"));
        let row = s
            .show
            .lines()
            .skip_while(|l| !l.trim_start().starts_with("thread"))
            .nth(2)
            .unwrap_or_else(|| panic!("{}", s.show));
        let w: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(
            (w[2], w[3], w[4], w[9]),
            ("0", "?", "?", "?"),
            "{case}: {row}"
        );
        let t = &s.run["threads"][1];
        for k in ["min_ns", "max_ns", "avg_ns"] {
            assert!(t[k].is_null(), "{case}: stored {k} = {}", t[k]);
        }
        let db = d.path().join("runs.db");
        let csv_text = ok(runs(&db, &["export", "id=1", "--format", "csv"]));
        let mut rd = csv::ReaderBuilder::new().from_reader(csv_text.as_bytes());
        let head = rd.headers().unwrap().clone();
        let rec = rd.records().nth(1).expect("a second thread").unwrap();
        for k in ["min_ns", "avg_ns", "max_ns"] {
            let i = head.iter().position(|h| h == k).unwrap();
            assert_eq!(&rec[i], "", "{case}: {k} in {csv_text}");
        }
        // The CI exports.
        let ct: serde_json::Value =
            serde_json::from_str(&export_text(&run, "cyclictest-json")).unwrap();
        for k in ["min", "max", "avg"] {
            assert!(
                ct["thread"]["1"][k].is_null(),
                "{case}: {k}: {}",
                ct["thread"]["1"]
            );
            assert!(ct["thread"]["0"][k].is_number(), "{case}");
        }
        let junit = export_text(&run, "junit");
        for k in ["min_ns", "avg_ns", "max_ns"] {
            assert!(!junit.contains(&format!("thread1.{k}")), "{case}: {junit}");
            assert!(junit.contains(&format!("thread0.{k}")), "{case}");
        }
        let om = export_text(&run, "openmetrics");
        for g in [
            "rtshield_latency_max_seconds",
            "rtshield_latency_min_seconds",
        ] {
            assert!(
                !om.contains(&format!("{g}{{cpu=\"2\",thread=\"1\"}}")),
                "{case}: {om}"
            );
            assert!(
                om.contains(&format!("{g}{{cpu=\"1\",thread=\"0\"}}")),
                "{case}: {om}"
            );
        }
        let k: serde_json::Value = serde_json::from_str(&export_text(&run, "kcidb")).unwrap();
        let paths: Vec<&str> = k["tests"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["path"].as_str().unwrap())
            .collect();
        for s in ["min", "avg", "max"] {
            assert!(
                !paths.contains(&format!("rtshield.latency.t1.{s}").as_str()),
                "{case}: {paths:?}"
            );
            assert!(
                paths.contains(&format!("rtshield.latency.t0.{s}").as_str()),
                "{case}"
            );
        }
    }
}
