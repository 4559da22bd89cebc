//! `rtshield runs`: import real result files, list, select, show, export
//! and compare them, all from a private store.

use crate::util::{command, ok, refused};
use std::path::{Path, PathBuf};
use std::process::Output;

/// `rtshield runs --store STORE ARGS`, waited for.
fn rtshield(store: &Path, args: &[&str]) -> Output {
    crate::util::command()
        .arg("runs")
        .arg("--store")
        .arg(store)
        .args(args)
        .output()
        .expect("run rtshield")
}

fn fixture(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/report")
        .join(p)
}

#[test]
fn import_list_show_export_and_compare() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("sub/runs.db");
    let idle = fixture("real/idle");
    let hell = fixture("real/hell");
    let cyc = fixture("cyclictest-cpu1.json");
    let out = ok(rtshield(
        &db,
        &[
            "import",
            idle.to_str().unwrap(),
            hell.to_str().unwrap(),
            cyc.to_str().unwrap(),
        ],
    ));
    assert!(out.contains("3 stored, 0 already there"), "{out}");
    // Idempotent by UUID.
    let out = ok(rtshield(&db, &["import", idle.to_str().unwrap()]));
    assert!(out.contains("0 stored, 1 already there"), "{out}");

    let out = ok(rtshield(&db, &["list", "--json"]));
    let list: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(list.as_array().unwrap().len(), 3);
    let out = ok(rtshield(
        &db,
        &["list", "--where", "tool ~ cyclictest", "--json"],
    ));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 1);

    // What `show --json` gives back is the results.json that was imported
    // (as rtshield reads it: the fixture is a version-1 file, upgraded).
    let original =
        serde_json::to_value(rtshield_results::read_json(idle.join("results.json")).unwrap())
            .unwrap();
    let out = ok(rtshield(&db, &["show", "1", "--json"]));
    let shown: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(shown["threads"], original["threads"]);
    assert_eq!(shown["sysinfo"], original["sysinfo"]);
    // The table's max is the file's, in µs.
    let out = ok(rtshield(&db, &["show", "1"]));
    let max_us = original["threads"][0]["max_ns"].as_i64().unwrap() as f64 / 1000.0;
    assert!(out.contains(&format!("{max_us:.1}")), "{out}");

    // CSV export: one row per thread, figures from the stored run.
    let out = ok(rtshield(&db, &["export", "id=1", "--format", "csv"]));
    let rows: Vec<&str> = out.lines().collect();
    assert_eq!(
        rows.len(),
        1 + original["threads"].as_array().unwrap().len()
    );
    let p999 = original["threads"][0]["percentiles"]["99.9"]
        .as_i64()
        .unwrap();
    assert!(rows[1].contains(&format!(",{p999},")), "{}", rows[1]);

    // Compare idle with hell: fewer than 3 runs a side, so samples are
    // resampled, and the output says so.
    let out = ok(rtshield(
        &db,
        &["compare", "id=1", "id=2", "--stat", "p50,max", "--json"],
    ));
    let c: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(c["method"], "samples");
    assert_eq!(c["rows"].as_array().unwrap().len(), 2);
    let hell_r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(hell.join("results.json")).unwrap()).unwrap();
    let worst = |r: &serde_json::Value| {
        r["threads"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["max_ns"].as_i64().unwrap())
            .max()
            .unwrap()
    };
    assert_eq!(c["rows"][1]["a_ns"].as_i64().unwrap(), worst(&original));
    assert_eq!(c["rows"][1]["b_ns"].as_i64().unwrap(), worst(&hell_r));
    let out = ok(rtshield(&db, &["compare", "id=1", "id=2"]));
    assert!(out.contains("samples within the histograms"), "{out}");
}

/// `runs import rtshield-results/*/` after a campaign (the README's
/// example): a directory without results.json of its own but with run
/// directories (a campaign's `--out`, whose `report/` is no run) imports
/// each of them; one with no run directory is still refused (exit 2).
#[test]
fn a_campaign_directory_is_imported_run_by_run() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("runs.db");
    let camp = d.path().join("campaign-x");
    for (src, dst) in [("real/idle", "001-cell1-r1"), ("real/hell", "002-cell2-r1")] {
        let to = camp.join(dst);
        std::fs::create_dir_all(&to).unwrap();
        for e in std::fs::read_dir(fixture(src)).unwrap().flatten() {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
    std::fs::create_dir_all(camp.join("report/plots")).unwrap();
    let out = ok(rtshield(&db, &["import", camp.to_str().unwrap()]));
    assert!(out.contains("2 stored, 0 already there"), "{out}");
    assert!(
        out.contains("001-cell1-r1") && out.contains("002-cell2-r1"),
        "{out}"
    );
    let o = rtshield(&db, &["import", camp.join("report").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    // A resumed campaign's new directory (its report only) adds nothing.
    let resumed = d.path().join("campaign-x-resumed/report");
    std::fs::create_dir_all(&resumed).unwrap();
    std::fs::write(resumed.join(".rtshield-campaign-report"), "").unwrap();
    let both = [
        camp.to_str().unwrap(),
        resumed.parent().unwrap().to_str().unwrap(),
    ];
    let out = ok(rtshield(&db, &["import", both[0], both[1]]));
    assert!(out.contains("0 stored, 2 already there"), "{out}");
}

#[test]
fn bad_selectors_and_unknown_runs_are_exit_2() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("runs.db");
    let o = rtshield(&db, &["list", "--where", "kernel 6.18"]);
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains("column 8") && e.contains("expected =, !=, ~ or !~"),
        "{e}"
    );
    let o = rtshield(&db, &["show", "42"]);
    assert_eq!(o.status.code(), Some(2));
    let o = rtshield(&db, &["compare", "host=a", "host=b"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("selects no run"));
    let o = rtshield(&db, &["compare", "host=a", "host=b", "--stat", "p100"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn a_store_spec_with_a_password_never_becomes_a_file_or_is_shown() {
    // Adversary round 2, B2: an upper-case scheme is a PostgreSQL URL; a
    // libpq key=value string with a password is refused; neither shows it.
    let d = tempfile::tempdir().unwrap();
    for spec in [
        "POSTGRES://u:PW1SECRET@127.0.0.1:9/db",
        "PostgreSQL://u:PW1SECRET@127.0.0.1:9/db",
    ] {
        let o = command()
            .current_dir(d.path())
            .args(["runs", "--store", spec, "list"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{spec}: {err}");
        assert!(err.contains("127.0.0.1") && err.contains("***"), "{err}");
        assert!(!err.contains("PW1SECRET"), "{err}");
    }
    let o = command()
        .current_dir(d.path())
        .args([
            "runs",
            "--store",
            "host=127.0.0.1 port=9 password='PA SS2' dbname=x",
            "list",
        ])
        .output()
        .unwrap();
    let err = refused(&o, "only a postgres:// URL may hold a password");
    assert!(!err.contains("PA SS2"), "{err}");
    let left: Vec<_> = std::fs::read_dir(d.path()).unwrap().collect();
    assert!(
        left.is_empty(),
        "files created in the current directory: {left:?}"
    );
}

#[test]
fn no_absolute_home_means_no_default_store_and_nothing_created() {
    // Adversary round 2, B4: a relative XDG_DATA_HOME is ignored (XDG base
    // directory spec); with an empty or relative HOME there is no default
    // store, and `runs list` creates nothing in the current directory.
    let d = tempfile::tempdir().unwrap();
    for (xdg, home) in [("rel", ""), ("", ""), ("rel", "relhome"), ("", "relhome")] {
        let o = command()
            .current_dir(d.path())
            .env("XDG_DATA_HOME", xdg)
            .env("HOME", home)
            .args(["runs", "list"])
            .output()
            .unwrap();
        refused(&o, "no default store");
        let left: Vec<_> = std::fs::read_dir(d.path()).unwrap().collect();
        assert!(
            left.is_empty(),
            "XDG_DATA_HOME={xdg:?} HOME={home:?}: {left:?}"
        );
    }
    // A relative XDG_DATA_HOME falls back to an absolute HOME.
    let home = tempfile::tempdir().unwrap();
    let o = command()
        .current_dir(d.path())
        .env("XDG_DATA_HOME", "rel")
        .env("HOME", home.path())
        .args(["runs", "list"])
        .output()
        .unwrap();
    ok(o);
    assert!(home.path().join(".local/share/rtshield/runs.db").exists());
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
}

/// Adversary round 3 (C15): every run `runs import` or `runs push` stores
/// is tagged `imported_from` (the file or store it came from), whatever
/// the file says, so a campaign never takes it for its own measurement;
/// importing it again is still the same run.
#[test]
fn imported_and_pushed_runs_are_marked_whatever_the_file_says() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("a/runs.db");
    let run = d.path().join("lab/r");
    std::fs::create_dir_all(&run).unwrap();
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("real/idle/results.json")).unwrap())
            .unwrap();
    v["tags"]["imported_from"] = "measured here, honest".into();
    v["tags"]["campaign_id"] = "0123456789abcdef".into();
    std::fs::write(run.join("results.json"), v.to_string()).unwrap();
    let out = ok(rtshield(&db, &["import", run.to_str().unwrap()]));
    assert!(out.contains("1 stored"), "{out}");
    let out = ok(rtshield(&db, &["import", run.to_str().unwrap()]));
    assert!(out.contains("0 stored, 1 already there"), "{out}");
    let list: serde_json::Value =
        serde_json::from_str(&ok(rtshield(&db, &["list", "--json"]))).unwrap();
    let file = std::fs::canonicalize(run.join("results.json")).unwrap();
    assert_eq!(
        list[0]["tags"]["imported_from"].as_str(),
        Some(file.to_str().unwrap()),
        "{list}"
    );
    // Pushed on: still marked with the file it first came from (the
    // source store is the caller's own; its mark is kept, never dropped).
    let db2 = d.path().join("b/runs.db");
    ok(rtshield(&db, &["push", "--to", db2.to_str().unwrap()]));
    let list: serde_json::Value =
        serde_json::from_str(&ok(rtshield(&db2, &["list", "--json"]))).unwrap();
    assert_eq!(
        list[0]["tags"]["imported_from"].as_str(),
        Some(file.to_str().unwrap()),
        "{list}"
    );
}

/// Adversary round 5, F03: a colleague's results.json reusing the UUID of
/// root's world-readable run (its figures forged), imported first, made
/// root's own import of its run say "already stored" and kept the forged
/// figures under root's UUID. A UUID is the same run only with the same
/// content: root's file is reported as a conflict, exit 1; the same run
/// imported again is still "already stored".
#[test]
fn f03_a_uuid_squatted_by_other_content_is_a_conflict() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("rs2").join("runs.db");
    let mut real: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("real/idle/results.json")).unwrap())
            .unwrap();
    real["tags"]["uuid"] = "db70c0de-5a5a-4000-8000-00000000f003".into();
    let mut forged = real.clone();
    forged["label"] = "colleague-run".into();
    for t in forged["threads"].as_array_mut().unwrap() {
        t["max_ns"] = 5000.into();
    }
    let (rp, fp) = (d.path().join("rno.json"), d.path().join("share.json"));
    std::fs::write(&rp, real.to_string()).unwrap();
    std::fs::write(&fp, forged.to_string()).unwrap();
    let o = rtshield(&db, &["import", fp.to_str().unwrap(), rp.to_str().unwrap()]);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(1), "{out}{err}");
    assert!(
        out.contains("CONFLICT") && !out.contains("already stored  "),
        "{out}"
    );
    assert!(
        out.contains("1 stored, 0 already there, 1 in conflict"),
        "{out}"
    );
    assert!(err.contains("carry the UUID of a different run"), "{err}");
    // The same file again: the same run, already stored.
    let o = rtshield(&db, &["import", fp.to_str().unwrap()]);
    assert!(ok(o).contains("already stored"));
}
