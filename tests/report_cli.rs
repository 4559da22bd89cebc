//! `rtshield report` end to end, on real result files measured on the
//! development machine (tests/fixtures/report/real) and real cyclictest
//! output (tests/fixtures/report/cyclictest-*).

use crate::util::*;
use std::path::{Path, PathBuf};

fn fixture(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/report")
        .join(p)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn compares_real_runs_and_prints_the_table() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("cmp");
    let (idle, hell) = (fixture("real/idle"), fixture("real/hell"));
    let o = rtshield(&[
        "report",
        s(&idle),
        s(&hell),
        "--name",
        "idle",
        "hell",
        "-o",
        s(&out),
        "--title",
        "T",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stdout = String::from_utf8(o.stdout).unwrap();
    // The numbers come from the files: compare with results.json itself.
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(idle.join("results.json")).unwrap()).unwrap();
    let t = &r["threads"][0];
    let max_us = t["max_ns"].as_i64().unwrap() / 1000;
    let samples = t["samples"].as_u64().unwrap();
    assert!(stdout.contains("| | idle:cpu1 | hell:cpu1 |"), "{stdout}");
    assert!(
        stdout.contains(&format!("| samples | {samples} |")),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("| max (µs) | {max_us} |")),
        "{stdout}"
    );
    assert!(stdout.contains("| load | none | hell |"), "{stdout}");
    for f in [
        "latency.png",
        "latency.svg",
        "percentiles.png",
        "percentiles.svg",
        "report.html",
        "summary.md",
        "summary.csv",
        "plot.gp",
        "latency-idle_cpu1.dat",
        "latency-hell_cpu1.dat",
    ] {
        assert!(out.join(f).is_file(), "{f} missing");
    }
    assert_eq!(
        std::fs::read_to_string(out.join("summary.md")).unwrap(),
        stdout[..stdout.find("\n2 curves").unwrap()]
    );
}

#[test]
fn format_selects_outputs() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("r");
    let o = rtshield(&[
        "report",
        s(&fixture("real/idle")),
        "--format",
        "csv,gnuplot",
        "-o",
        s(&out),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            ".rtshield-report",
            "latency-idle_cpu1.dat",
            "plot.gp",
            "summary.csv"
        ]
    );
    // A format it does not know is a usage error.
    let o = rtshield(&["report", s(&fixture("real/idle")), "--format", "pdf"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn cyclictest_files_next_to_rtshield_runs() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("r");
    let o = rtshield(&[
        "report",
        s(&fixture("real/idle")),
        s(&fixture("cyclictest-cpu1.json")),
        s(&fixture("cyclictest-2threads.hist")),
        "-o",
        s(&out),
        "--format",
        "csv,svg",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let csv = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    let header = csv.lines().next().unwrap();
    assert_eq!(
        header,
        "metric,idle:cpu1,cyclictest-cpu1:cpu1,cyclictest-2threads:t0,cyclictest-2threads:t1"
    );
    // Values read from the cyclictest files (see the fixtures).
    let row = |name: &str| {
        csv.lines()
            .find(|l| l.starts_with(name))
            .unwrap()
            .to_string()
    };
    assert!(
        row("samples,").ends_with(",9868,2000,2000"),
        "{}",
        row("samples,")
    );
    assert!(
        row("max (µs),").ends_with(",6226,361,363"),
        "{}",
        row("max (µs),")
    );
    assert!(
        row("overflows,").ends_with(",100,129,67"),
        "{}",
        row("overflows,")
    );
    let svg = std::fs::read_to_string(out.join("latency.svg")).unwrap();
    assert!(svg.contains("cyclictest-2threads:t1"));
}

#[test]
fn bad_input_exits_2_naming_the_file_and_writes_nothing() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("r");
    let missing = d.path().join("missing.json");
    let o = rtshield(&[
        "report",
        s(&fixture("real/idle")),
        s(&missing),
        "-o",
        s(&out),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(s(&missing)), "{err}");
    assert!(!out.exists());

    let cut = d.path().join("cut.json");
    let text = std::fs::read_to_string(fixture("real/idle/results.json")).unwrap();
    std::fs::write(&cut, &text[..1000]).unwrap();
    let o = rtshield(&["report", s(&cut), "-o", s(&out)]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(&format!("{}:", s(&cut))), "{err}");
    assert!(!out.exists());

    let v9 = d.path().join("v9.json");
    std::fs::write(
        &v9,
        text.replace("rtshield.results/1", "rtshield.results/9"),
    )
    .unwrap();
    let o = rtshield(&["report", s(&v9), "-o", s(&out)]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(s(&v9)) && err.contains("rtshield.results/9"),
        "{err}"
    );
    assert!(!out.exists());

    let o = rtshield(&[
        "report",
        s(&fixture("real/idle")),
        "--name",
        "a",
        "b",
        "-o",
        s(&out),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("2 --name labels for 1 results"));
}

/// Several good runs and one bad one (last, first, middle; truncated JSON
/// or a bad timeline.csv): exit 2 naming the bad file, no output at all.
#[test]
fn one_bad_run_among_several_writes_nothing() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("r");
    let text = std::fs::read_to_string(fixture("real/hell/results.json")).unwrap();
    let cut = d.path().join("cut.json");
    std::fs::write(&cut, &text[..text.len() - 10]).unwrap();
    // A copy of the real cycle run whose timeline.csv has a bad line 3.
    let badtl = d.path().join("badtl");
    std::fs::create_dir(&badtl).unwrap();
    std::fs::copy(
        fixture("real/cycle/results.json"),
        badtl.join("results.json"),
    )
    .unwrap();
    let tl = std::fs::read_to_string(fixture("real/cycle/timeline.csv")).unwrap();
    let mut lines: Vec<&str> = tl.lines().collect();
    lines[2] = "2.036,load,0,1,9795,4915,9836,33852,oops,3987145,100,0,100.0,100.0,100.0";
    std::fs::write(badtl.join("timeline.csv"), lines.join("\n")).unwrap();
    let (idle, hell, cycle) = (
        fixture("real/idle"),
        fixture("real/hell"),
        fixture("real/cycle"),
    );
    let bad_tl_name = format!("{}:3:", badtl.join("timeline.csv").display());
    for (args, names) in [
        (vec![&idle, &hell, &cut], s(&cut)),
        (vec![&cut, &idle, &hell], s(&cut)),
        (vec![&idle, &badtl, &cycle], bad_tl_name.as_str()),
    ] {
        let mut a = vec!["report"];
        a.extend(args.iter().map(|p| s(p)));
        a.extend(["-o", s(&out)]);
        let o = rtshield(&a);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{a:?}: {err}");
        assert!(err.contains(names), "{a:?}: {err}");
        assert!(!out.exists(), "{a:?}: a report was written");
        let left: Vec<_> = std::fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .filter(|n| n.to_string_lossy().contains(".tmp-"))
            .collect();
        assert!(left.is_empty(), "temporary files left: {left:?}");
    }
}

/// Rewriting a report directory: the earlier report's extra curves go; a
/// directory holding other files is refused (exit 2) and left alone.
#[test]
fn rewrite_keeps_only_the_new_report() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("r");
    let (idle, hell) = (fixture("real/idle"), fixture("real/hell"));
    let o = rtshield(&["report", s(&idle), s(&hell), "-o", s(&out)]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.join("latency-loaded_cpu1.dat").is_file());
    let o = rtshield(&["report", s(&idle), "-o", s(&out)]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(!out.join("latency-loaded_cpu1.dat").exists());
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("removed 1 files of the earlier report: latency-loaded_cpu1.dat"),
        "{stdout}"
    );

    let mine = d.path().join("mine");
    std::fs::create_dir(&mine).unwrap();
    std::fs::write(mine.join("thesis.tex"), "x").unwrap();
    let o = rtshield(&["report", s(&idle), "-o", s(&mine)]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(s(&mine)) && err.contains("did not write (thesis.tex)"),
        "{err}"
    );
    let left: Vec<_> = std::fs::read_dir(&mine).unwrap().collect();
    assert_eq!(left.len(), 1);
}

/// Adversary round 3 (N2): a run directory whose timeline.csv is a FIFO or
/// a directory is reported without its timeline, and the report says so,
/// naming the file (it was left out silently); nothing blocks on the FIFO.
#[test]
fn a_timeline_that_is_not_a_regular_file_is_left_out_with_a_warning() {
    let d = tempfile::tempdir().unwrap();
    for kind in ["fifo", "dir"] {
        let run = d.path().join(kind);
        std::fs::create_dir(&run).unwrap();
        std::fs::copy(fixture("real/cycle/results.json"), run.join("results.json")).unwrap();
        let tl = run.join("timeline.csv");
        if kind == "fifo" {
            let c = std::ffi::CString::new(tl.as_os_str().as_encoded_bytes()).unwrap();
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        } else {
            std::fs::create_dir(&tl).unwrap();
        }
        let out = d.path().join(format!("r-{kind}"));
        let o = rtshield(&["report", s(&run), "-o", s(&out)]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{kind}: {err}");
        let what = if kind == "fifo" {
            "a FIFO"
        } else {
            "a directory"
        };
        assert!(
            err.contains(&format!(
                "warning: {}: not a regular file ({what}); the run's timeline is left out of the report",
                tl.display()
            )),
            "{kind}: {err}"
        );
        assert!(!out.join("timeline.png").exists());
    }
}

/// A real `rtshield run` directory (load.cycle 20 s / 10 s, stats every
/// second): its timeline.csv becomes timeline.png and gnuplot data.
#[test]
fn run_directory_timeline() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("r");
    let run = fixture("real/cycle");
    let o = rtshield(&["report", s(&run), "-o", s(&out)]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let png = std::fs::read(out.join("timeline.png")).unwrap();
    assert_eq!(&png[1..4], b"PNG");
    // One data row per interval that had samples (ival_max_ns not empty).
    let csv = std::fs::read_to_string(run.join("timeline.csv")).unwrap();
    let rows: Vec<Vec<&str>> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    let with_max: Vec<&Vec<&str>> = rows.iter().filter(|r| !r[8].is_empty()).collect();
    let dat = std::fs::read_to_string(out.join("timeline-cycle_cpu1.dat")).unwrap();
    let data: Vec<&str> = dat.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(data.len(), with_max.len());
    // First row: elapsed_s, ival_max_ns and max_max_ns converted to µs.
    let first: Vec<f64> = data[0].split(' ').map(|v| v.parse().unwrap()).collect();
    let r0 = with_max[0];
    assert_eq!(first[0], r0[0].parse::<f64>().unwrap());
    assert_eq!(first[1], r0[8].parse::<f64>().unwrap() / 1000.0);
    assert_eq!(first[2], r0[9].parse::<f64>().unwrap() / 1000.0);
    // timeline.gp shades each stretch of `load` rows (20 s on, 10 s off).
    let mut stretches: Vec<(f64, f64)> = Vec::new();
    let mut prev_t = 0.0;
    let mut prev_phase = "";
    for r in &rows {
        let t: f64 = r[0].parse().unwrap();
        if r[1] == "load" {
            if prev_phase == "load" {
                stretches.last_mut().unwrap().1 = t;
            } else {
                stretches.push((prev_t, t));
            }
        }
        (prev_t, prev_phase) = (t, r[1]);
    }
    assert!(stretches.len() >= 4, "{stretches:?}");
    let gp = std::fs::read_to_string(out.join("timeline.gp")).unwrap();
    let rects: Vec<&str> = gp.lines().filter(|l| l.contains(" rect from ")).collect();
    assert_eq!(rects.len(), stretches.len(), "{gp}");
    for (k, (a, b)) in stretches.iter().enumerate() {
        assert!(
            rects[k].starts_with(&format!(
                "set object {} rect from {a}, graph 0 to {b}, graph 1 ",
                k + 1
            )),
            "{}",
            rects[k]
        );
    }
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("<h2>Timeline</h2>") && html.contains("data:image/png;base64,"));
    assert!(
        html.contains("load.cycle 20 s 10 s"),
        "the run's configuration is shown"
    );
}

/// The text files `measure` writes are report inputs too: the systress
/// `timer_thread00.txt` and `histogram.txt` of a real 10 s run give the
/// same numbers, under rtshield's name, with the run's overruns.
#[test]
fn reads_its_own_text_files() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("txt");
    let o = ok(rtshield(&[
        "report",
        s(&fixture("measure-txt/timer_thread00.txt")),
        s(&fixture("measure-txt/histogram.txt")),
        "--name",
        "txt",
        "hist",
        "-o",
        s(&out),
    ]));
    for row in [
        "| samples | 49812 | 49812 |",
        "| max (µs) | 11732 | 11732 |",
        "| overflows | 12 | 12 |",
        "| overruns | 42 | 42 |",
        "| L_mode_H (µs) | 16 | 16 |",
    ] {
        assert!(o.contains(row), "{row}\n{o}");
    }
    let csv = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    assert!(!csv.contains("cyclictest"), "{csv}");
}

#[test]
fn x_max_out_of_range_is_exit_2() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("x");
    let o = rtshield(&[
        "report",
        s(&fixture("real/idle")),
        "--x-max",
        "0",
        "-o",
        s(&out),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", describe(&o));
    assert!(all_text(&o).contains("--x-max"), "{}", describe(&o));
    assert!(!out.exists());
}
