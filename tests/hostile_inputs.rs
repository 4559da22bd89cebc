//! Issue 21's findings of the classes ENC (encoders, terminal included),
//! SECRET, ERR and WORK, one test each, named after the case of
//! `bench/adversarial.sh` it replays (docs/security.md). Each failed on
//! the code before the fix.

use crate::util::{command, describe, refused, require_tool, rtshield};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Output;

const FIX: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/report/real");

/// The label an attacker gives a run: a formula, a table row, a script,
/// a CDATA end, terminal escapes.
const HOSTILE_LABEL: &str = "=HYPERLINK(\"http://evil.example/?x\",\"click\")|x\n| injected | row |\n</script><script>alert(1)</script>]]>\u{1b}]0;PWNED\u{7}\u{1b}[2J\u{9b}31m\u{202e}";

/// The fixture run `name` with `edit` applied, written to `dir/name/`
/// (with its timeline, when it has one); returns the directory.
fn run_dir(dir: &Path, name: &str, edit: impl FnOnce(&mut Value)) -> PathBuf {
    let mut v: Value = serde_json::from_str(
        &std::fs::read_to_string(format!("{FIX}/{name}/results.json")).unwrap(),
    )
    .unwrap();
    edit(&mut v);
    let d = dir.join(name);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("results.json"), serde_json::to_string(&v).unwrap()).unwrap();
    let tl = Path::new(FIX).join(name).join("timeline.csv");
    if tl.is_file() {
        std::fs::copy(tl, d.join("timeline.csv")).unwrap();
    }
    d
}

/// What a terminal would interpret in `s`: C0 controls but newline and
/// tab, DEL, C1 controls, bidirectional controls.
fn controls(s: &str) -> Vec<char> {
    s.chars()
        .filter(|&c| rtshield_text::terminal::is_control(c) && c != '\n' && c != '\t')
        .collect()
}

#[track_caller]
fn no_controls(o: &Output) {
    for (what, b) in [("stdout", &o.stdout), ("stderr", &o.stderr)] {
        let s = String::from_utf8_lossy(b);
        assert!(
            controls(&s).is_empty(),
            "{what} has {:?}: {}",
            controls(&s),
            describe(o)
        );
    }
}

/// n01: a label with a backquoted command, in `plot.gp` and
/// `timeline.gp`, run by the real gnuplot: the command never runs.
/// (Before: labels were double-quoted gnuplot strings, and gnuplot ran
/// the backquotes.)
#[test]
fn n01_gnuplot_never_runs_a_label() {
    if !require_tool("gnuplot", "--version") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let marker = d.path().join("PWNED");
    let label = format!("adv`touch {}`x'q\"\n@m", marker.display());
    let input = run_dir(d.path(), "cycle", |v| v["label"] = json!(label));
    let rep = d.path().join("rep");
    let o = command()
        .arg("report")
        .arg(&input)
        .arg("-o")
        .arg(&rep)
        .args(["--title", &label])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", describe(&o));
    for gp in ["plot.gp", "timeline.gp"] {
        let text = std::fs::read_to_string(rep.join(gp)).unwrap();
        // No backquote inside a double-quoted string, no label line of its own.
        for l in text.lines() {
            let dq: Vec<&str> = l.split('"').skip(1).step_by(2).collect();
            assert!(!dq.iter().any(|s| s.contains('`')), "{gp}: {l}");
        }
        let g = std::process::Command::new("gnuplot")
            .current_dir(&rep)
            .args(["-e", "set terminal svg; set output 'gp.svg'", gp])
            .output()
            .unwrap();
        assert!(g.status.success(), "gnuplot {gp}: {}", describe(&g));
        assert!(
            !marker.exists(),
            "gnuplot ran the label's command from {gp}"
        );
        let svg = std::fs::read_to_string(rep.join("gp.svg")).unwrap();
        assert!(
            svg.contains("touch"),
            "the label is shown as text in {gp}'s plot"
        );
    }
}

/// n04: `--store postgres://u:PW@…`: the password is in no file of the
/// run, of its report or export, in the store or on `runs show`; nor when
/// a results.json written by an older rtshield holds it. (Before: in
/// results.json, results.csv, histogram.txt, timer_thread*.txt,
/// report.html, the exports and the stored run.)
#[test]
fn n04_a_store_password_reaches_no_file() {
    const PW: &str = "S3cretPW";
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("pw");
    let o = command()
        .args([
            "measure",
            "--duration",
            "1s",
            "--period",
            "1ms",
            "--policy",
            "other",
            "-q",
        ])
        .args(["--no-memlock", "--no-dma-latency", "--cpus", "0"])
        .args([
            "--store",
            &format!("postgres://u:{PW}@127.0.0.1:1/db?password={PW}"),
        ])
        .arg("--out")
        .arg(&out)
        .env_remove("RTSHIELD_NO_STORE")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", describe(&o));
    let all = |o: &Output| {
        format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    };
    assert!(!all(&o).contains(PW), "{}", describe(&o));
    let r: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    assert!(
        r["command"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a == "postgres://u:***@127.0.0.1:1/db?password=***"),
        "{}",
        r["command"]
    );
    // A results.json of an older rtshield, with the password in it.
    let old = run_dir(d.path(), "idle", |v| {
        v["command"] = json!([
            "rtshield",
            "measure",
            "--store",
            format!("postgres://u:{PW}@db/rt")
        ]);
        v["config"] = json!(format!(
            "program[0]\n{{\n  cmdline psql postgres://u:{PW}@db/rt\n}}\n"
        ));
    });
    let store = d.path().join("st/runs.db");
    let st = store.to_str().unwrap();
    for input in [&out, &old] {
        let i = input.to_str().unwrap();
        let rep = d.path().join(format!(
            "rep-{}",
            input.file_name().unwrap().to_str().unwrap()
        ));
        for args in [
            vec!["report", i, "-o", rep.to_str().unwrap()],
            vec!["export", i, "--format", "cyclictest-json"],
            vec!["export", i, "--format", "junit"],
            vec!["export", i, "--format", "kcidb"],
            vec!["runs", "import", i, "--store", st],
        ] {
            let o = rtshield(&args);
            assert!(o.status.success(), "{args:?}: {}", describe(&o));
            assert!(!all(&o).contains(PW), "{args:?}: {}", describe(&o));
        }
    }
    for args in [
        vec!["runs", "show", "1", "--store", st],
        vec!["runs", "show", "2", "--store", st],
        vec!["runs", "show", "2", "--json", "--store", st],
        vec![
            "runs",
            "export",
            "--format",
            "json",
            "--store",
            st,
            "tool~rtshield",
        ],
        vec![
            "runs",
            "export",
            "--format",
            "csv",
            "--store",
            st,
            "tool~rtshield",
        ],
    ] {
        let o = rtshield(&args);
        assert!(o.status.success(), "{args:?}: {}", describe(&o));
        assert!(!all(&o).contains(PW), "{args:?}: {}", describe(&o));
    }
    assert_no_file_holds(d.path(), &old.join("results.json"), PW);
}

/// n11a, n11c: escape sequences and a 5 MB token of a configuration
/// reach the terminal escaped, and cut. (Before: raw ESC/BEL, 5 MB.)
#[test]
fn n11a_n11c_config_errors_are_escaped_and_cut() {
    let d = tempfile::tempdir().unwrap();
    let esc = d.path().join("esc.cfg");
    std::fs::write(
        &esc,
        "main\n{\n  stats.period 100 \u{1b}]0;PWNED\u{7}\u{1b}[2J ms\n}\n",
    )
    .unwrap();
    let o = command()
        .arg("run")
        .arg("--check")
        .arg(&esc)
        .output()
        .unwrap();
    let err = refused(&o, "esc.cfg:3:");
    no_controls(&o);
    assert!(err.contains("\\x1b]0;PWNED\\x07"), "shown escaped: {err}");
    let big = d.path().join("big.cfg");
    std::fs::write(
        &big,
        format!(
            "main\n{{\n  stats.period {} ms\n}}\n",
            "9".repeat(5_000_000)
        ),
    )
    .unwrap();
    let o = command()
        .arg("run")
        .arg("--check")
        .arg(&big)
        .output()
        .unwrap();
    refused(&o, "big.cfg:3:");
    assert!(
        o.stderr.len() < 8192,
        "{} bytes on the terminal",
        o.stderr.len()
    );
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("bytes)"),
        "the cut says the length"
    );
}

/// n11d, n11e (and e-md-summary-all-formats, e-term-report,
/// e-5mb-label): a hostile label keeps `summary.md`'s table one row per
/// line, is no formula in `summary.csv`, reaches the terminal escaped,
/// and a 5 MB one is cut. (Before: the table broke, `=HYPERLINK(` was a
/// cell, raw ESC on the terminal, a 5 MB error.)
#[test]
fn n11d_n11e_report_tables_keep_their_shape() {
    let d = tempfile::tempdir().unwrap();
    let input = run_dir(d.path(), "idle", |v| v["label"] = json!(HOSTILE_LABEL));
    let rep = d.path().join("rep");
    let o = command()
        .arg("report")
        .arg(&input)
        .arg("-o")
        .arg(&rep)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", describe(&o));
    no_controls(&o);
    let md = std::fs::read_to_string(rep.join("summary.md")).unwrap();
    assert!(controls(&md).is_empty(), "{md}");
    let lines: Vec<&str> = md.lines().collect();
    let head = lines
        .iter()
        .position(|l| l.starts_with("| |"))
        .expect("a table");
    assert!(lines[head + 1].starts_with("|---"), "{md}");
    // Every line of the table is a row of the same number of cells.
    let cells = |l: &str| {
        l.replace("\\\\", "")
            .replace("\\|", "")
            .matches('|')
            .count()
    };
    for l in lines[head..].iter().take_while(|l| !l.is_empty()) {
        assert!(l.starts_with('|') && cells(l) == cells(lines[head]), "{l}");
    }
    let csv = std::fs::read_to_string(rep.join("summary.csv")).unwrap();
    let mut r = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(csv.as_bytes());
    for rec in r.records() {
        for f in rec.unwrap().iter() {
            let formula =
                f.starts_with(['=', '+', '-', '@', '\t', '\r']) && f.parse::<f64>().is_err();
            assert!(!formula, "a formula cell: {f:?}");
        }
    }
    // A 5 MB label: a report, not a 5 MB error.
    let big = run_dir(&d.path().join("big"), "idle", |v| {
        v["label"] = json!("L".repeat(5_000_000))
    });
    let o = command()
        .arg("report")
        .arg(&big)
        .arg("-o")
        .arg(d.path().join("rep5"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", &describe(&o)[..2000]);
    assert!(
        o.stdout.len() + o.stderr.len() < 64 << 10,
        "{} bytes on the terminal",
        o.stdout.len()
    );
}

/// n11f: `measure --label '=HYPERLINK(…)'`: no formula in results.csv
/// (the label's cell and the recorded command line). (Before: the first
/// cell started with `=`.)
#[test]
fn n11f_results_csv_has_no_formula() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("o");
    let o = command()
        .args([
            "measure",
            "--duration",
            "1s",
            "--period",
            "1ms",
            "--policy",
            "other",
            "-q",
        ])
        .args(["--no-memlock", "--no-dma-latency", "--cpus", "0"])
        .args(["--label", "=HYPERLINK(\"http://evil.example/\",\"x\")"])
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", describe(&o));
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    let mut r = csv::ReaderBuilder::new().from_reader(csv.as_bytes());
    let mut seen = false;
    for rec in r.records() {
        for f in rec.unwrap().iter() {
            seen |= f.contains("HYPERLINK");
            let formula =
                f.starts_with(['=', '+', '-', '@', '\t', '\r']) && f.parse::<f64>().is_err();
            assert!(!formula, "a formula cell: {f:?}");
        }
    }
    assert!(seen, "the label is in results.csv: {csv}");
}

/// n12a, n12b, x-run-check-echoes-root-file: a parse error about a file
/// readable by its owner only (here reached through a link, as an
/// attacker would plant) shows its position, never its text. (Before:
/// `…found root:$y$j9T$SECRETHASH…`.)
#[test]
fn n12_x_parse_errors_never_quote_a_private_file() {
    use std::os::unix::fs::PermissionsExt;
    let d = tempfile::tempdir().unwrap();
    let secret = d.path().join("secret");
    std::fs::write(&secret, "root:$y$j9T$SECRETHASH:19000::::::\n").unwrap();
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o600)).unwrap();
    let link = d.path().join("link");
    std::os::unix::fs::symlink(&secret, &link).unwrap();
    let l = link.to_str().unwrap();
    for args in [
        vec!["simulate", l],
        vec!["scenario", "--check", l],
        vec!["run", "--check", l],
        vec!["campaign", "--dry-run", l],
        vec!["report", l, "-o", d.path().join("r").to_str().unwrap()],
        vec!["export", l, "--format", "junit"],
    ] {
        let o = rtshield(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", describe(&o));
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(
            !all.contains("SECRETHASH") && !all.contains("19000"),
            "{args:?}: {all}"
        );
        assert!(all.contains(l), "{args:?} names the file: {all}");
    }
    // A file every user may read (and reach: the test's directory opened
    // to others) is quoted, short and escaped.
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode();
    let public = d.path().ancestors().all(|p| mode(p) & 0o001 != 0);
    let o = rtshield(&["run", "--check", l]);
    let err = refused(&o, l);
    assert_eq!(err.contains("SECRETHASH"), public, "{err}");
}

/// A results file of 8 193 threads (one more than the limit).
fn many_threads(dir: &Path, n: usize) -> PathBuf {
    run_dir(dir, "idle", |v| {
        let t = v["threads"][0].clone();
        v["threads"] = Value::Array(vec![t; n]);
    })
}

/// n13, w-export-20000-threads, w-runs-import-20000-threads: a results
/// file of more threads than any machine measures is refused at once
/// (exit 2, docs/ranges.md); a report of more curves than a plot can
/// show too. (Before: `report` of 20 000 threads ran past 60 s; export
/// and import took 1.1 GB.)
#[test]
fn n13_w_work_is_bounded() {
    let d = tempfile::tempdir().unwrap();
    let big = many_threads(
        &d.path().join("big"),
        rtshield_limits::RESULT_MAX_THREADS + 1,
    );
    let b = big.to_str().unwrap();
    let st = d.path().join("st/runs.db");
    for args in [
        vec!["report", b, "-o", d.path().join("r").to_str().unwrap()],
        vec!["export", b, "--format", "junit"],
        vec!["runs", "import", b, "--store", st.to_str().unwrap()],
    ] {
        refused(&rtshield(&args), "8193 threads, more than the 8192");
    }
    let curves = many_threads(
        &d.path().join("curves"),
        rtshield_limits::REPORT_MAX_CURVES + 1,
    );
    let o = command()
        .arg("report")
        .arg(&curves)
        .arg("-o")
        .arg(d.path().join("r2"))
        .output()
        .unwrap();
    refused(&o, "513 measuring threads");
    assert!(!d.path().join("r2").exists());
}

/// e-term-runs-list, e-term-runs-show, e-csv-runs-export: a stored run
/// with a hostile label, host and tags: `runs list`/`show` print it
/// escaped, `runs export --format csv` holds no formula. (Before: raw
/// ESC/BEL, `=HYPERLINK(` cells.)
#[test]
fn e_runs_of_a_hostile_file_print_escaped() {
    let d = tempfile::tempdir().unwrap();
    let input = run_dir(d.path(), "idle", |v| {
        v["label"] = json!(HOSTILE_LABEL);
        v["sysinfo"]["hostname"] = json!("h\u{1b}]0;T\u{7}<b>");
        v["tags"] = json!({"board": "=cmd|x\u{1b}[31m", "k\u{1b}": "v\n@SUM(1)"});
    });
    let st = d.path().join("st/runs.db");
    let st = st.to_str().unwrap();
    let o = rtshield(&["runs", "import", input.to_str().unwrap(), "--store", st]);
    assert!(o.status.success(), "{}", describe(&o));
    for args in [
        ["runs", "list", "--store", st].as_slice(),
        &["runs", "show", "1", "--store", st],
    ] {
        let o = rtshield(args);
        assert!(o.status.success(), "{args:?}: {}", describe(&o));
        no_controls(&o);
        let out = String::from_utf8_lossy(&o.stdout);
        // `list` shows the label, `show` the host and tags.
        assert!(
            out.contains("\\x1b]0;PWNED\\x07") || out.contains("h\\x1b]0;T\\x07"),
            "{}",
            describe(&o)
        );
    }
    let o = rtshield(&[
        "runs",
        "export",
        "--format",
        "csv",
        "--store",
        st,
        "tool~rtshield",
    ]);
    let mut r = csv::ReaderBuilder::new().from_reader(&o.stdout[..]);
    for rec in r.records() {
        for f in rec.unwrap().iter() {
            let formula =
                f.starts_with(['=', '+', '-', '@', '\t', '\r']) && f.parse::<f64>().is_err();
            assert!(!formula, "a formula cell: {f:?}");
        }
    }
}

/// e-term-stat-thread-name: a process whose name holds ESC sequences
/// (any user can name its threads): `stat` shows the name escaped.
/// (Before: raw.)
#[test]
fn e_term_stat_thread_name_is_escaped() {
    let d = tempfile::tempdir().unwrap();
    // The kernel names a process after its executable's file name; `yes`
    // keeps it running (for the half second stat looks), so it is listed.
    let exe = d.path().join("y\u{1b}]0;PWN\u{7}\u{1b}[2J");
    std::fs::copy("/usr/bin/yes", &exe).unwrap();
    let mut child = std::process::Command::new(&exe)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id().to_string();
    let o = rtshield(&[
        "stat",
        "--count",
        "2",
        "--interval",
        "300ms",
        "--pids",
        &pid,
    ]);
    let _ = child.kill();
    let _ = child.wait();
    assert!(o.status.success(), "{}", describe(&o));
    no_controls(&o);
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("\\x1b]0;PWN"),
        "{}",
        describe(&o)
    );
}

/// How a case changes the fixture.
type Edit = Box<dyn FnOnce(&mut Value)>;

/// Round-2 finding B1 (repro-B1-overflow-panic.sh): numbers near 2^64 in
/// a results.json, a cyclictest --json or a cyclictest -h text made
/// `report` and `export` panic (exit 101), and `runs import` stored such
/// a run so every later `runs report` over it panicked. Now every reader
/// refuses them (exit 2, naming the file and the field, or FILE:LINE:COL
/// in a text format) and the store never holds one.
#[test]
fn b1_numbers_near_2_64_are_refused_by_every_reader() {
    let d = tempfile::tempdir().unwrap();
    let max = u64::MAX;
    let cases: Vec<(&str, Edit, &str)> = vec![
        (
            "idx",
            Box::new(move |v| v["threads"][0]["histogram"]["counts"] = json!([[max, 1]])),
            "threads[0].histogram.counts[0]",
        ),
        (
            "cnt",
            Box::new(move |v| v["threads"][0]["histogram"]["counts"] = json!([[1, max], [2, max]])),
            "threads[0].histogram.counts[0]",
        ),
        (
            "res",
            Box::new(move |v| {
                v["threads"][0]["histogram"]["resolution_ns"] = json!(max);
                v["settings"]["resolution_ns"] = json!(max);
            }),
            "resolution_ns",
        ),
        (
            "dur",
            Box::new(|v| {
                v["duration_s"] = json!(1e308);
                v["settings"]["stats_period_ns"] = json!(0);
            }),
            "duration_s",
        ),
    ];
    let st = d.path().join("st/runs.db");
    let st = st.to_str().unwrap();
    for (name, edit, field) in cases {
        let dir = run_dir(&d.path().join(name), "idle", edit);
        let f = dir.join("results.json");
        let f = f.to_str().unwrap();
        let out = d.path().join(format!("o-{name}"));
        for args in [
            vec!["report", f, "-o", out.to_str().unwrap()],
            vec!["export", "--format", "openmetrics", f],
            vec!["export", "--format", "cyclictest-json", f],
            vec!["runs", "import", f, "--store", st],
        ] {
            let e = refused(&rtshield(&args), field);
            assert!(e.contains(f), "{args:?}: {e}");
        }
        assert!(!out.exists());
    }
    // Nothing was stored: `runs report` over the store has nothing to
    // panic on.
    let o = rtshield(&["runs", "list", "--store", st]);
    assert!(
        !String::from_utf8_lossy(&o.stdout).contains("idle"),
        "{}",
        describe(&o)
    );
    let ct1 = d.path().join("ct1.json");
    std::fs::write(
        &ct1,
        r#"{"file_version":1,"cmdline":"cyclictest -p 99 -h 18446744073709551615 -i 1000","rt_test_version":"2.5","num_threads":1,"resolution_in_ns":0,"thread":{"0":{"histogram":{"0":1,"18446744073709551614":5},"cycles":10,"min":0,"max":18446744073709551615,"avg":1.5,"cpu":0,"node":0}}}"#,
    )
    .unwrap();
    let ct2 = d.path().join("ct2.txt");
    std::fs::write(
        &ct2,
        "# Histogram\n000000 000001\n18446744073709551615 000005\n# Total: 000000006\n\
         # Min Latencies: 00000\n# Max Latencies: 99999999999999\n",
    )
    .unwrap();
    let o = rtshield(&[
        "report",
        ct1.to_str().unwrap(),
        "-o",
        d.path().join("o-ct1").to_str().unwrap(),
    ]);
    refused(&o, "out of range");
    let o = rtshield(&[
        "report",
        ct2.to_str().unwrap(),
        "-o",
        d.path().join("o-ct2").to_str().unwrap(),
    ]);
    refused(&o, &format!("{}:3:1: ", ct2.display()));
}

/// Round-2 finding B3 (repro-B3-timeline-slug-collision.sh): two runs
/// labelled `lab/run` and `lab?run` (a label comes from the results file)
/// have the same slug. Their timeline data files and timeline plots are
/// now de-duplicated like `latency-*.dat` (`SLUG`, `SLUG-2`): each curve
/// has its own file holding its own data, and the manifest lists each
/// name once. (Before: one `timeline-lab_run_cpu0.dat`, the first run's
/// overwritten, listed twice.)
#[test]
fn b3_timeline_files_of_labels_with_the_same_slug_are_distinct() {
    let d = tempfile::tempdir().unwrap();
    let a = run_dir(&d.path().join("a"), "cycle", |v| {
        v["label"] = json!("lab/run")
    });
    let b = run_dir(&d.path().join("b"), "cycle", |v| {
        v["label"] = json!("lab?run")
    });
    let rep = d.path().join("rep");
    let o = rtshield(&[
        "report",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "-o",
        rep.to_str().unwrap(),
        "--format",
        "gnuplot,png",
    ]);
    assert!(o.status.success(), "{}", describe(&o));
    let mut tl_dat: Vec<String> = std::fs::read_dir(&rep)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with("timeline-") && n.ends_with(".dat"))
        .collect();
    tl_dat.sort();
    assert!(tl_dat.len() >= 2 && tl_dat.len() % 2 == 0, "{tl_dat:?}");
    let heads: Vec<String> = tl_dat
        .iter()
        .map(|n| {
            let t = std::fs::read_to_string(rep.join(n)).unwrap();
            t.lines().next().unwrap().to_string()
        })
        .collect();
    let of = |l: &str| {
        heads
            .iter()
            .filter(|h| h.starts_with(&format!("# {l}:")))
            .count()
    };
    assert_eq!(of("lab/run"), tl_dat.len() / 2, "{heads:?}");
    assert_eq!(of("lab?run"), tl_dat.len() / 2, "{heads:?}");
    for png in ["timeline-lab_run.png", "timeline-lab_run-2.png"] {
        assert!(rep.join(png).is_file(), "{png} missing");
    }
    let manifest = std::fs::read_to_string(rep.join(".rtshield-report")).unwrap();
    let mut names: Vec<&str> = manifest
        .lines()
        .filter(|l| l.starts_with("timeline-"))
        .collect();
    let n = names.len();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), n, "{manifest}");
}

/// Round 5 (A), F02/F06: every form a password takes — a URL whose
/// password holds `?`, `#`, `@` or a space, the scheme in capitals, a
/// percent-encoded `password` query key, libpq's escaped and quoted
/// values, `--db-password X`, `env PGPASSWORD=… cmd` — reaches no file,
/// no store and no terminal, from a run's own command line and from an
/// older results.json's command, programs, configuration, label and tags.
/// (Before: `u:S3cret?x@host`, `?pass%77ord=`, `password=a\ b`,
/// `--db-password X` and `PGPASSWORD="a b"` kept all or part of it.)
#[test]
fn f02_every_form_of_a_password_reaches_no_file() {
    const PW: &str = "S3cretF02";
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("pw");
    let o = command()
        .args([
            "measure",
            "--duration",
            "1s",
            "--period",
            "1ms",
            "--policy",
            "other",
            "-q",
        ])
        .args(["--no-memlock", "--no-dma-latency", "--cpus", "0"])
        .args([
            "--store",
            &format!("POSTGRESQL://u:{PW}?x#y@127.0.0.1:1/db?pass%77ord={PW}"),
        ])
        .args(["--tag", &format!("note=--db-password {PW}")])
        .arg("--out")
        .arg(&out)
        .env_remove("RTSHIELD_NO_STORE")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", describe(&o));
    let all = |o: &Output| {
        format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    };
    assert!(!all(&o).contains(PW), "{}", describe(&o));
    let old = run_dir(d.path(), "idle", |v| {
        v["command"] = json!([
            "psql",
            format!("postgres://u:{PW} x@db/rt"),
            "--db-password",
            PW
        ]);
        v["config"] = json!(format!(
            "program[0]\n{{\n  cmdline env PGPASSWORD=\"{PW} x\" psql 'host=db password=a\\ {PW}'\n}}\n"
        ));
        v["label"] = json!(format!("{{\"password\": \"x {PW}\"}}"));
        v["tags"]["load"] = json!(format!("cmd:pgbench postgres://u:a@b{PW}@db/rt"));
        v["programs"] = json!([{
            "index": 0,
            "command": format!("env PGPASSWORD='a {PW}' psql -h db"),
            "cpus": null, "spawns": 1, "exits_ok": 1, "exits_ko": 0,
        }]);
    });
    let store = d.path().join("st/runs.db");
    let st = store.to_str().unwrap();
    for input in [&out, &old] {
        let i = input.to_str().unwrap();
        let rep = d.path().join(format!(
            "rep-{}",
            input.file_name().unwrap().to_str().unwrap()
        ));
        for args in [
            vec![
                "report",
                i,
                "-o",
                rep.to_str().unwrap(),
                "--format",
                "html,md,csv",
            ],
            vec!["export", i, "--format", "cyclictest-json"],
            vec!["export", i, "--format", "junit"],
            vec!["export", i, "--format", "kcidb"],
            vec!["export", i, "--format", "openmetrics"],
            vec!["runs", "import", i, "--store", st],
        ] {
            let o = rtshield(&args);
            assert!(!all(&o).contains(PW), "{args:?}: {}", describe(&o));
        }
    }
    for args in [
        vec!["runs", "show", "1", "--json", "--store", st],
        vec!["runs", "show", "2", "--json", "--store", st],
        vec![
            "runs",
            "export",
            "--format",
            "json",
            "--store",
            st,
            "tool~rtshield",
        ],
    ] {
        let o = rtshield(&args);
        assert!(!all(&o).contains(PW), "{args:?}: {}", describe(&o));
    }
    assert_no_file_holds(d.path(), &old.join("results.json"), PW);
}

/// Round 5 (A), F09: a label of bidirectional controls, a character
/// reference to one, invisible characters, NUL and a trimmed formula
/// reaches report.html, summary.md, summary.csv and the terminal shown
/// escaped, never as the character. (Before: HTML and CSV kept U+202E,
/// U+2066, U+200B and NUL; Markdown kept `&#x202e;`; CSV kept ` =1+1`.)
#[test]
fn f09_bidi_and_invisible_characters_are_shown_escaped_everywhere() {
    let d = tempfile::tempdir().unwrap();
    let label = " =1+1\u{202e}evil\u{2066}x\u{2069}\u{200b}&#x202e;\0end";
    let run = run_dir(d.path(), "idle", |v| v["label"] = json!(label));
    let rep = d.path().join("rep");
    let o = rtshield(&[
        "report",
        run.to_str().unwrap(),
        "-o",
        rep.to_str().unwrap(),
        "--format",
        "html,md,csv",
    ]);
    assert!(o.status.success(), "{}", describe(&o));
    no_controls(&o);
    let bad = |c: char| rtshield_text::terminal::is_control(c) && !"\n\t\r".contains(c);
    for f in ["report.html", "summary.md", "summary.csv"] {
        let t = std::fs::read_to_string(rep.join(f)).unwrap();
        assert!(
            !t.chars().any(bad),
            "{f}: {:?}",
            t.chars().filter(|c| bad(*c)).collect::<Vec<_>>()
        );
        assert!(t.contains("\\u{202e}evil"), "{f}");
    }
    let md = std::fs::read_to_string(rep.join("summary.md")).unwrap();
    assert!(
        md.contains("\\&#x202e;") && !md.contains(" &#x202e;"),
        "{md}"
    );
    let csv = std::fs::read_to_string(rep.join("summary.csv")).unwrap();
    assert!(csv.contains("' =1+1"), "{csv}");
}

/// No file anywhere under `dir` but `except` (the run the test planted
/// the password in) holds `pw`.
fn assert_no_file_holds(dir: &std::path::Path, except: &std::path::Path, pw: &str) {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(p) = stack.pop() {
        for e in std::fs::read_dir(&p).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p != except {
                let b = std::fs::read(&p).unwrap();
                assert!(
                    !b.windows(pw.len()).any(|w| w == pw.as_bytes()),
                    "{} holds the password",
                    p.display()
                );
            }
        }
    }
}
