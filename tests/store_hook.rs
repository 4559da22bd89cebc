//! `measure` stores every finished run (with a UUID, the isolation in force
//! and the user's tags) unless `--no-store`; the store and the result file
//! agree on the run's identity.

use crate::util::*;

fn measure(args: &[&str]) -> std::process::Output {
    command()
        .env_remove("RTSHIELD_NO_STORE")
        .arg("measure")
        .args(["--cpus", "0", "--period", "1ms", "--samples", "50", "-q"])
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn measure_stores_the_run_with_its_tags_unless_told_not_to() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("runs.db");
    let out = d.path().join("out");
    let o = measure(&[
        "--out",
        out.to_str().unwrap(),
        "--store",
        db.to_str().unwrap(),
        "--tag",
        "board=test-1",
    ]);
    let text = ok(o);
    assert!(text.contains("stored as run 1"), "{text}");
    let r = json(&out.join("results.json"));
    let uuid = r["tags"]["uuid"].as_str().unwrap().to_string();
    assert_eq!(uuid.len(), 36);
    assert_eq!(r["tags"]["board"], "test-1");
    assert!(r["tags"]["isolation_detected"].is_string());

    let list = ok(command()
        .args(["runs", "--store", db.to_str().unwrap(), "list", "--json"])
        .output()
        .unwrap());
    let v: serde_json::Value = serde_json::from_str(&list).unwrap();
    let runs = v.as_array().unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0]["uuid"], uuid.as_str());
    assert_eq!(runs[0]["tags"]["board"], "test-1");

    // --no-store: the files, not the store.
    let out2 = d.path().join("out2");
    ok(measure(&[
        "--out",
        out2.to_str().unwrap(),
        "--store",
        db.to_str().unwrap(),
        "--no-store",
    ]));
    assert!(out2.join("results.json").is_file());
    let list = ok(command()
        .args(["runs", "--store", db.to_str().unwrap(), "list", "--json"])
        .output()
        .unwrap());
    let v: serde_json::Value = serde_json::from_str(&list).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 1);

    // uuid is rtshield's; a bad key is refused before measuring.
    for bad in ["uuid=x", "a b=c", "novalue"] {
        let o = measure(&["--out", d.path().join("o3").to_str().unwrap(), "--tag", bad]);
        assert_eq!(o.status.code(), Some(2), "--tag {bad}");
    }
}

#[test]
fn rtshield_no_store_env_keeps_the_run_out_of_the_store() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("runs.db");
    let out = d.path().join("out");
    let o = measure(&[
        "--out",
        out.to_str().unwrap(),
        "--store",
        db.to_str().unwrap(),
    ]);
    assert!(ok(o).contains("stored as run 1"));
    // The variable alone, with --store given, is --no-store.
    let out2 = d.path().join("out2");
    let o = command()
        .env("RTSHIELD_NO_STORE", "1")
        .arg("measure")
        .args(["--cpus", "0", "--period", "1ms", "--samples", "50", "-q"])
        .args([
            "--out",
            out2.to_str().unwrap(),
            "--store",
            db.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let text = ok(o);
    assert!(!text.contains("stored as run"), "{text}");
    assert!(out2.join("results.json").is_file());
    let list = ok(command()
        .args(["runs", "--store", db.to_str().unwrap(), "list", "--json"])
        .output()
        .unwrap());
    let v: serde_json::Value = serde_json::from_str(&list).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 1, "{list}");
}
