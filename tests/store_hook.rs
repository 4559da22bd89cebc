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

fn runs_cmd(db: &std::path::Path, args: &[&str]) -> std::process::Output {
    command()
        .args(["runs", "--store", db.to_str().unwrap()])
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn plain_runs_carry_isolation_and_load_and_compare_by_them() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("runs.db");
    // Two fake trees: nothing isolated, and isolcpus + nohz_full of CPU 1
    // on the kernel command line; both runs measure CPU 1.
    let plain = fake_root("0-1");
    let iso = fake_root("0-1");
    put(
        iso.path(),
        "/proc/cmdline",
        "BOOT_IMAGE=x isolcpus=1 nohz_full=1\n",
    );
    let mid = "0123456789abcdef0123456789abcdef";
    put(iso.path(), "/etc/machine-id", &format!("{mid}\n"));
    for (name, root) in [("plain", &plain), ("iso", &iso)] {
        let out = d.path().join(name);
        ok(command()
            .env_remove("RTSHIELD_NO_STORE")
            .args(["--sysroot", root.path().to_str().unwrap(), "measure"])
            .args(["--cpus", "1", "--period", "1ms", "--samples", "50", "-q"])
            .args(["--out", out.to_str().unwrap()])
            .args(["--store", db.to_str().unwrap()])
            .output()
            .unwrap());
        let r = json(&out.join("results.json"));
        let want = if name == "iso" {
            "isolcpus+nohz_full"
        } else {
            "none"
        };
        assert_eq!(r["tags"]["isolation"], want, "{name}");
        assert_eq!(r["tags"]["isolation_detected"], want, "{name}");
        assert_eq!(r["tags"]["load"], "idle", "{name}");
    }
    let list = ok(runs_cmd(&db, &["list"]));
    let rows: Vec<&str> = list.lines().filter(|l| l.contains(" idle ")).collect();
    assert_eq!(rows.len(), 2, "{list}");
    assert!(rows[0].contains(" none "), "{list}");
    assert!(rows[1].contains(" isolcpus+nohz_full "), "{list}");
    let o = runs_cmd(
        &db,
        &["compare", "isolation=none", "isolation=isolcpus+nohz_full"],
    );
    let text = ok(o);
    assert!(text.contains("(1 runs, 50 samples)"), "{text}");
    // The machine id is stored, shown and selectable.
    let show = ok(runs_cmd(&db, &["show", "2"]));
    assert!(show.contains(&format!("machine id {mid}")), "{show}");
    let show = ok(runs_cmd(&db, &["show", "1"]));
    assert!(show.contains("machine id ?"), "{show}");
    let sel = format!("machine_id={mid}");
    let list = ok(runs_cmd(&db, &["list", "--where", &sel]));
    assert!(
        list.contains("1 run in") && list.contains(" iso\n"),
        "{list}"
    );

    // The isolation of CPU 1 says nothing about a run on CPU 0.
    let out = d.path().join("cpu0");
    ok(command()
        .args(["--sysroot", iso.path().to_str().unwrap(), "measure"])
        .args(["--cpus", "0", "--period", "1ms", "--samples", "50", "-q"])
        .args(["--out", out.to_str().unwrap(), "--no-store"])
        .output()
        .unwrap());
    let r = json(&out.join("results.json"));
    assert_eq!(r["tags"]["isolation"], "none");
    assert_eq!(r["tags"]["isolation_detected"], "none");

    // A user's --tag wins over the detected value.
    let out = d.path().join("tagged");
    ok(command()
        .env_remove("RTSHIELD_NO_STORE")
        .args(["--sysroot", iso.path().to_str().unwrap(), "measure"])
        .args(["--cpus", "1", "--period", "1ms", "--samples", "50", "-q"])
        .args(["--out", out.to_str().unwrap(), "--no-store"])
        .args(["--tag", "isolation=partition", "--tag", "load=mine"])
        .output()
        .unwrap());
    let r = json(&out.join("results.json"));
    assert_eq!(r["tags"]["isolation"], "partition");
    assert_eq!(r["tags"]["load"], "mine");
    assert_eq!(r["tags"]["isolation_detected"], "isolcpus+nohz_full");

    // An older result without `isolation`: the import falls back to what
    // was detected at its start.
    let mut r = json(&d.path().join("plain/results.json"));
    let tags = r["tags"].as_object_mut().unwrap();
    tags.remove("isolation");
    tags.remove("uuid");
    tags.insert("isolation_detected".into(), "cpuset".into());
    let old = d.path().join("old.json");
    std::fs::write(&old, serde_json::to_string(&r).unwrap()).unwrap();
    ok(runs_cmd(&db, &["import", old.to_str().unwrap()]));
    let list = ok(runs_cmd(&db, &["list", "--where", "isolation=cpuset"]));
    assert!(list.contains("1 run "), "{list}");
    assert!(list.contains(" cpuset "), "{list}");
}

/// Every leaf of `a` and `b` (objects key by key, arrays index by index),
/// with its path, where they differ.
fn differences(path: &str, a: &serde_json::Value, b: &serde_json::Value, out: &mut Vec<String>) {
    use serde_json::Value;
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for k in keys {
                match (x.get(k), y.get(k)) {
                    (Some(u), Some(v)) => differences(&format!("{path}.{k}"), u, v, out),
                    (u, v) => out.push(format!("{path}.{k}: {u:?} vs {v:?}")),
                }
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (u, v)) in x.iter().zip(y).enumerate() {
                differences(&format!("{path}[{i}]"), u, v, out);
            }
        }
        _ if a == b => {}
        _ => out.push(format!("{path}: {a} vs {b}")),
    }
}

/// A real measurement: the stored run (`runs show --json`) and its
/// results.json agree field by field, and the summary `runs list` shows
/// is the file's.
#[test]
fn a_stored_run_and_its_results_json_agree_field_by_field() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("runs.db");
    let out = d.path().join("out");
    ok(command()
        .env_remove("RTSHIELD_NO_STORE")
        .arg("measure")
        .args(["--cpus", "1", "--duration", "1s", "--policy", "other", "-q"])
        .args(["--no-dma-latency", "--no-memlock", "--tag", "board=x"])
        .args(["--out", out.to_str().unwrap()])
        .args(["--store", db.to_str().unwrap()])
        .output()
        .unwrap());
    let file = json(&out.join("results.json"));
    assert!(file["threads"][0]["samples"].as_u64().unwrap() > 0);
    let shown: serde_json::Value =
        serde_json::from_str(&ok(runs_cmd(&db, &["show", "1", "--json"]))).unwrap();
    let mut diff = Vec::new();
    differences("", &file, &shown, &mut diff);
    assert!(
        diff.is_empty(),
        "stored run and results.json differ:\n{}",
        diff.join("\n")
    );

    let list: serde_json::Value =
        serde_json::from_str(&ok(runs_cmd(&db, &["list", "--json"]))).unwrap();
    let s = &list[0];
    let si = &file["sysinfo"];
    assert_eq!(s["uuid"], file["tags"]["uuid"]);
    assert_eq!(s["host"], si["hostname"]);
    assert_eq!(
        s["machine_id"],
        si.get("machine_id").cloned().unwrap_or("".into())
    );
    assert_eq!(s["kernel"], si["kernel_release"]);
    assert_eq!(s["kernel_version"], si["kernel_version"]);
    assert_eq!(s["arch"], si["arch"]);
    assert_eq!(s["started"], file["started_at"]);
    assert_eq!(s["duration_s"], file["duration_s"]);
    assert_eq!(s["end"], file["end_reason"]);
    assert_eq!(s["label"], file["label"]);
    assert_eq!(s["tags"], file["tags"]);
    let (st, ft) = (&s["threads"][0], &file["threads"][0]);
    for k in [
        "cpu",
        "samples",
        "min_ns",
        "avg_ns",
        "max_ns",
        "percentiles",
        "overruns",
        "lost",
    ] {
        assert_eq!(st[k], ft[k], "threads[0].{k}");
    }
}
