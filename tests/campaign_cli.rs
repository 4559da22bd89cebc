//! `rtshield campaign` file checks that need no root: every cell goes
//! through `rtshield measure`'s own validation at parse time, and the
//! refusal points at the value that set it. Also `measure --partition`'s
//! refusals (the option the campaign's partition cells use).

use crate::util::*;
use std::fs;

/// `rtshield campaign C.TOML --dry-run` on a campaign file holding `text`.
fn dry_run(text: &str) -> (tempfile::TempDir, std::path::PathBuf, std::process::Output) {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("c.toml");
    fs::write(&f, text).unwrap();
    let o = command()
        .arg("campaign")
        .arg(&f)
        .arg("--dry-run")
        .output()
        .unwrap();
    (d, f, o)
}

/// The campaign file `text` is refused (exit 2, the file named, nothing
/// planned); its stderr, with the file's path shortened to `c.toml`.
fn refused(text: &str) -> String {
    let (_d, f, o) = dry_run(text);
    let path = f.display().to_string();
    let err = crate::util::refused(&o, &path);
    assert!(o.stdout.is_empty(), "nothing planned: {}", describe(&o));
    err.replace(&path, "c.toml")
}

#[test]
fn campaign_refuses_at_parse_time_what_measure_refuses() {
    let head = "name = \"x\"\ncpus = \"1\"\nduration = \"2s\"\n";
    // The file's own range: the histogram up to 1 s, as measure's.
    let e = refused(&format!(
        "{head}[measure]\nhisto_size = \"2s\"\n[axes]\nisolation = [\"none\"]\n"
    ));
    assert!(
        e.contains("c.toml:5:14: histo_size `2s` out of range 1 us .. 1 s"),
        "{e}"
    );
    // Within every single range, refused by measure for the combination:
    // 1 s at ns resolution is more than 10 million buckets.
    let e = refused(&format!(
        "{head}[measure]\nresolution = \"ns\"\nhisto_size = \"1s\"\n[axes]\nisolation = [\"none\"]\n"
    ));
    assert!(
        e.contains("c.toml:6:14: cell isolation=none: `rtshield measure` refuses --histo-size 1s: more than 10 million buckets"),
        "{e}"
    );
    // priority 0 with fifo, in an axis: the error points at the 0.
    let e = refused(&format!(
        "{head}[measure]\npolicy = \"fifo\"\n[axes]\nisolation = [\"none\"]\npriority = [50, 0]\n"
    ));
    assert!(
        e.contains("c.toml:8:17: cell isolation=none,priority=0: `rtshield measure` refuses --prio 0: must be within 1..99 for fifo"),
        "{e}"
    );
    // The same priority with policy other is fine (measure ignores it).
    let (_d, _, o) = dry_run(&format!(
        "{head}[measure]\npolicy = \"other\"\n[axes]\npriority = [0]\n"
    ));
    assert!(ok(o).contains("--policy other --prio 0"));
}

#[test]
fn campaign_top_level_errors_point_at_the_value() {
    let e = refused(
        "name = \"x\"\ncpus = \"1\"\nduration = \"0.5s\"\n[axes]\nisolation = [\"none\"]\n",
    );
    assert!(
        e.contains("c.toml:3:12: duration `0.5s` out of range"),
        "{e}"
    );
    let e = refused("name = \"x\"\ncpus = \"1\"\nduration = \"2s\"\nrepeat = 0\n[axes]\nisolation = [\"none\"]\n");
    assert!(e.contains("c.toml:4:10: repeat 0 out of range"), "{e}");
}

/// A bare number in `duration` is seconds, as `measure --duration 10`
/// (issue 23: the docs promised it, the file refused it): planned as
/// `--duration 10s`; out of range, negative or not a number, refused at
/// the value.
#[test]
fn campaign_bare_duration_is_seconds() {
    let file = |d: &str| {
        format!("name = \"x\"\ncpus = \"1\"\nduration = {d}\n[axes]\nisolation = [\"none\"]\n")
    };
    let (_d, _, o) = dry_run(&file("10"));
    let out = ok(o);
    assert!(
        out.contains("rtshield measure --cpus 1 --duration 10s"),
        "{out}"
    );
    let (_d, _, o) = dry_run(&file("2.5"));
    let out = ok(o);
    assert!(out.contains("--duration 2500ms"), "{out}");
    let e = refused(&file("700000"));
    assert!(
        e.contains("c.toml:3:12: duration 700000 out of range 1 s .. 7 d"),
        "{e}"
    );
    let e = refused(&file("-10"));
    assert!(
        e.contains(
            "c.toml:3:12: duration -10 out of range 1 s .. 7 d (a duration is not negative)"
        ),
        "{e}"
    );
    let e = refused(&file("{ s = 10 }"));
    assert!(e.contains("c.toml:3:12: duration: expected a duration with its unit (\"20s\") or a number of seconds, not a TOML table"), "{e}");
}

#[test]
fn measure_partition_refusals() {
    // --partition-parent alone: --partition is required.
    let o = rtshield(&["measure", "--partition-parent", "x", "--duration", "1s"]);
    assert_eq!(o.status.code(), Some(2), "{}", describe(&o));
    // No such partition (or no cgroup v1 cpuset hierarchy): exit 2,
    // nothing measured.
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("out");
    let o = rtshield(&[
        "measure",
        "--partition",
        "--partition-parent",
        "rtshield-no-such-parent-for-test",
        "--duration",
        "1s",
        "--no-store",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", describe(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--partition: "), "{err}");
    assert!(!out.join("results.json").exists());
}

/// A campaign's cell reaches its child as a measure request on stdin
/// (`rtshield __measure`): checked exactly as `measure`'s options are,
/// before anything is made.
#[test]
fn measure_request_on_stdin_is_checked_like_measure() {
    use std::io::Write;
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("out");
    let run = |input: &str| {
        let mut child = command()
            .arg("__measure")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        child.wait_with_output().unwrap()
    };
    let o = run("not json");
    assert_eq!(o.status.code(), Some(2), "{}", describe(&o));
    assert!(all_text(&o).contains("__measure: not a measure request"));
    let mut r = rtshield_run::MeasureRequest::new(1_000_000);
    r.priority = 0;
    r.out = Some(out.clone());
    r.no_store = true;
    let o = run(&serde_json::to_string(&r).unwrap());
    assert_eq!(o.status.code(), Some(2), "{}", describe(&o));
    assert!(
        all_text(&o).contains("--prio 0: must be within 1..99 for fifo"),
        "{}",
        describe(&o)
    );
    assert!(o.stdout.is_empty());
    assert!(!out.exists());
}

/// A campaign's `max_latency` is measure's `--max-latency` for every cell
/// (each cell's results.json records the limit and its verdict; the
/// campaign exits 3 when a run failed it): shown in the plan, its range
/// checked at parse time.
#[test]
fn campaign_max_latency_is_measures_limit() {
    let head = "name = \"x\"\ncpus = \"1\"\nduration = \"2s\"\n";
    let (_d, _f, o) = dry_run(&format!(
        "{head}[measure]\nmax_latency = \"100us\"\n[axes]\nisolation = [\"none\"]\n"
    ));
    assert!(o.status.success(), "{}", describe(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("--max-latency 100us"),
        "{}",
        describe(&o)
    );
    for bad in ["\"2h\"", "\"100\""] {
        let e = refused(&format!(
            "{head}[measure]\nmax_latency = {bad}\n[axes]\nisolation = [\"none\"]\n"
        ));
        assert!(e.contains("max_latency"), "{bad}: {e}");
    }
}

/// Adversary round 3, C14: `campaign --out DIR` replaced root's own
/// `DIR/report/summary.md` and `report/runs/run-1.json` without the check
/// `report -o` makes. Refused now, exit 2, before any cell is measured,
/// both files untouched.
#[test]
fn campaign_refuses_a_report_directory_holding_files_it_did_not_write() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("c.toml");
    fs::write(
        &f,
        "name = \"c14\"\ncpus = \"0\"\nduration = \"1s\"\nrepeat = 1\n[measure]\nperiod = \"1ms\"\n\
         [axes]\nload = [\"idle\"]\nisolation = [\"none\"]\n",
    )
    .unwrap();
    let out = d.path().join("out");
    fs::create_dir_all(out.join("report/runs")).unwrap();
    fs::write(out.join("report/summary.md"), "MY THESIS SUMMARY\n").unwrap();
    fs::write(out.join("report/runs/run-1.json"), "MY RUN NOTES\n").unwrap();
    let o = command()
        .arg("campaign")
        .arg(&f)
        .arg("--store")
        .arg(d.path().join("st/runs.db"))
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{}", describe(&o));
    assert!(
        err.contains("did not write")
            && err.contains("runs/run-1.json")
            && err.contains("summary.md"),
        "{err}"
    );
    assert_eq!(
        fs::read_to_string(out.join("report/summary.md")).unwrap(),
        "MY THESIS SUMMARY\n"
    );
    assert_eq!(
        fs::read_to_string(out.join("report/runs/run-1.json")).unwrap(),
        "MY RUN NOTES\n"
    );
    let cells: Vec<_> = fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(cells, ["report"], "nothing measured");
}

/// Every example campaign parses and plans (`--dry-run` exits 0); the
/// partitioning article's matrix is 18 cells of isolation × period × load.
#[test]
fn example_campaigns_plan() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/campaigns");
    let mut seen = 0;
    for e in fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_none_or(|x| x != "toml") {
            continue;
        }
        let o = command()
            .arg("campaign")
            .arg(&p)
            .arg("--dry-run")
            .output()
            .unwrap();
        let out = ok(o);
        seen += 1;
        if p.ends_with("partitioning.toml") {
            assert!(
                out.starts_with("campaign partitioning (18 cells x "),
                "{out}"
            );
            assert!(
                out.contains("[isolation=partition,period=1000us,load=syncio]"),
                "{out}"
            );
        }
    }
    assert!(seen >= 2, "{seen} example campaigns");
}

/// `samples = N` (cyclictest's `-l`) instead of a duration: each cell
/// runs `measure --samples N`; the plan's time is samples × each period.
#[test]
fn campaign_samples_instead_of_duration() {
    let (_d, _, o) = dry_run(
        "name = \"x\"\ncpus = \"1\"\nsamples = 1000000\n[axes]\nperiod = [\"300us\", \"1000us\"]\n",
    );
    let out = ok(o);
    assert!(
        out.starts_with("campaign x (2 cells x 1 repeats = 2 runs of 1000000 samples (period x samples); measuring time 1300s)"),
        "{out}"
    );
    assert!(
        out.contains("rtshield measure --cpus 1 --samples 1000000 --period 300us"),
        "{out}"
    );
    assert!(
        out.ends_with("report: nothing pooled (every axis and the kernel kept apart)\n"),
        "{out}"
    );
    let (_d, _, o) = dry_run(
        "name = \"x\"\ncpus = \"1\"\nsamples = 1000000\npool = [\"period\"]\n[axes]\nperiod = [\"300us\", \"1000us\"]\n",
    );
    assert!(ok(o).ends_with("report: pooled as asked: period\n"));
    let e = refused("name = \"x\"\ncpus = \"1\"\nsamples = 1000000\npool = [\"period\"]\n[axes]\nload = [\"idle\"]\n");
    assert!(
        e.contains("c.toml:4:9: pool `period` is not a declared axis"),
        "{e}"
    );
}

/// Issue 25 item 5: `split = true` (in `[measure]` or as an axis) makes
/// each cell `measure --split`, so Table 1.1 can come out of a campaign;
/// `false` leaves the option out; anything else is refused at its value.
#[test]
fn campaign_split_setting_becomes_measures_split() {
    let head = "name = \"x\"\ncpus = \"1\"\nduration = \"2s\"\n";
    let out = ok(dry_run(&format!(
        "{head}[measure]\nsplit = true\n[axes]\nisolation = [\"none\"]\n"
    ))
    .2);
    assert!(
        out.contains("rtshield measure --cpus 1 --duration 2s --split\n"),
        "{out}"
    );
    let out = ok(dry_run(&format!("{head}[axes]\nsplit = [false, true]\n")).2);
    let lines: Vec<&str> = out
        .lines()
        .filter(|l| l.contains("rtshield measure"))
        .collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(
        !lines[0].contains("--split") && lines[1].contains("--split"),
        "{out}"
    );
    let e = refused(&format!(
        "{head}[measure]\nsplit = \"maybe\"\n[axes]\nisolation = [\"none\"]\n"
    ));
    assert!(
        e.contains("c.toml:5:9: split `maybe`: expected true or false"),
        "{e}"
    );
}

/// Adversary round 5, F13: C15 by another door. A colleague stored a run
/// straight into the (shared) store with the campaign's tags (`measure
/// --tag campaign_id=… --tag cell=… --tag repeat=…`, or any client of the
/// server): `campaign --resume` skipped the cell and reported it, a fresh
/// campaign pooled it in. `--tag` refuses those keys now (exit 2), and a
/// run stored under them by any other means is not the campaign's: only
/// the runs its own record lists count.
#[test]
fn f13_a_run_stored_with_the_campaign_s_tags_is_never_its_own() {
    let d = tempfile::tempdir().unwrap();
    let toml = d.path().join("c5.toml");
    std::fs::write(
        &toml,
        "name = \"c5\"\ncpus = \"0\"\nduration = \"1s\"\nrepeat = 1\n\
         [measure]\npolicy = \"other\"\n[axes]\nload = [\"idle\"]\nisolation = [\"none\"]\n",
    )
    .unwrap();
    let db = d.path().join("st").join("runs.db");
    let fp = {
        let text = std::fs::read_to_string(&toml).unwrap();
        rtshield_campaign::parse_checked(&text, "c5.toml")
            .unwrap()
            .fingerprint
    };
    // (Into the test's own directory: the code before this fix measured.)
    let never = d.path().join("never");
    for tag in [
        "campaign_id=x",
        "cell=load=idle,isolation=none",
        "repeat=1",
        "step=1",
    ] {
        let o = rtshield(&[
            "measure",
            "--samples",
            "1",
            "--out",
            never.to_str().unwrap(),
            "--tag",
            tag,
        ]);
        assert_eq!(o.status.code(), Some(2), "--tag {tag}: {}", describe(&o));
        assert!(
            all_text(&o).contains("is set by rtshield"),
            "{}",
            describe(&o)
        );
        assert!(!never.exists(), "measured with --tag {tag}");
    }
    // The colleague's run, stored as any client of the store can.
    let mut forged = rtshield_results::read_json(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/report/real/idle/results.json"),
    )
    .unwrap();
    forged.label = Some("FORGED".into());
    for (k, v) in [
        ("uuid", rtshield_store::new_uuid()),
        ("campaign", "c5".into()),
        ("campaign_id", fp),
        ("cell", "load=idle,isolation=none".into()),
        ("repeat", "1".into()),
        ("step", "1".into()),
    ] {
        forged.tags.insert(k.into(), v);
    }
    forged.tags.insert(
        "kernel_id".into(),
        rtshield_results::kernel_id(&rtshield_sys::SysInfo::collect(
            &rtshield_sys::Root::host(),
            false,
        )),
    );
    {
        let mut st = rtshield_store::open(Some(db.to_str().unwrap())).unwrap();
        st.put(&forged, None).unwrap();
    }
    let out = d.path().join("c5b");
    let o = command()
        .arg("campaign")
        .arg(&toml)
        .args(["--resume", "--store", db.to_str().unwrap(), "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let text = all_text(&o);
    assert!(o.status.success(), "{}", describe(&o));
    assert!(!text.contains("already stored (resume)"), "{text}");
    assert!(text.contains("1 stored, 0 already stored"), "{text}");
    let summary = std::fs::read_to_string(out.join("report/summary.md")).unwrap();
    assert!(!summary.contains("FORGED"), "{summary}");
    // (runs/ also holds the per-load pools of figure 12.)
    let runs: Vec<_> = std::fs::read_dir(out.join("report/runs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("run-"))
        .collect();
    assert_eq!(runs.len(), 1, "only the campaign's own run: {runs:?}");
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&runs[0]).unwrap()).unwrap();
    assert_ne!(r["label"], "FORGED");
}

/// Round 5 (A), F21: a `cmd:` load that daemonises (double fork, new
/// session) ends with its cell, named in the campaign's messages and in
/// the cell's warnings, and never outlives the campaign. (Before: it ran
/// on as root, re-parented to init.)
#[test]
fn f21_a_daemonised_load_ends_with_its_cell() {
    let d = tempfile::tempdir().unwrap();
    let pid_file = d.path().join("daemon.pid");
    let left = Leftover {
        pid_file: pid_file.clone(),
        marker: "7773",
    };
    let f = d.path().join("c.toml");
    fs::write(
        &f,
        format!(
            "name = \"f21\"\ncpus = \"0\"\nduration = \"1s\"\n[measure]\nperiod = \"1ms\"\npolicy = \"other\"\n\
             [axes]\nload = [\"cmd:setsid -f sh -c 'echo $$ > {}; exec sleep 7773'; exec sleep 3600\"]\n",
            pid_file.display()
        ),
    )
    .unwrap();
    let o = command()
        .arg("campaign")
        .arg(&f)
        .arg("--store")
        .arg(d.path().join("st/runs.db"))
        .arg("--out")
        .arg(d.path().join("out"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", describe(&o));
    assert!(
        pid_file.exists(),
        "the load never started: {}",
        describe(&o)
    );
    // The sweep reaped it before the campaign returned: no wait needed.
    assert_eq!(
        left.live(),
        None,
        "the daemon outlived the campaign: {}",
        describe(&o)
    );
    let pid = fs::read_to_string(&pid_file).unwrap().trim().to_string();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!("ended 1 process left running: {pid} (sleep)")),
        "{}",
        describe(&o)
    );
    let cell = fs::read_dir(d.path().join("out"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.join("results.json").exists())
        .unwrap();
    let r = fs::read_to_string(cell.join("results.json")).unwrap();
    assert!(
        r.contains("campaign: at the end of the cell, ended 1 process"),
        "{r}"
    );
}
