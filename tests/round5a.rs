//! Adversary round 5 (A) (docs/security.md): as root, files another user
//! could change are not taken as what root runs (F01/F07), inputs are
//! not read through links or from others' directories for them (F04), no
//! directory is created inside another user's directory (F22), and an
//! output directory used again holds only what this run wrote (F17).
//! Every case needs root (files are given to another uid).

use crate::util::*;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

const OTHER: u32 = 2345;

fn give(p: &Path) {
    std::os::unix::fs::lchown(p, Some(OTHER), Some(OTHER)).unwrap();
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/report/real")
        .join(name)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A one-second configuration whose program touches `mark`.
fn cfg_touching(mark: &Path) -> String {
    format!(
        "main\n{{\n  stats.period 100 ms\n}}\ntimer_thread[0]\n{{\n  cpu_affinity 0\n  \
         sched.policy OTHER\n  period 1 ms\n  lifetime.duration 1 s\n}}\n\
         program[0]\n{{\n  cmdline /usr/bin/touch {}\n  cpu_affinity 0\n}}\n",
        mark.display()
    )
}

#[test]
fn f01_f07_root_refuses_run_campaign_and_scenario_files_others_could_change() {
    if !require_root("files are given to another uid") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let att = d.path().join("att");
    std::fs::create_dir(&att).unwrap();
    give(&att);
    let mark = d.path().join("ran");
    // Theirs; root's own but mode 666; root's own in their directory.
    let theirs = write_cfg(d.path(), "theirs.cfg", &cfg_touching(&mark));
    give(&theirs);
    let ww = write_cfg(d.path(), "ww.cfg", &cfg_touching(&mark));
    std::fs::set_permissions(&ww, std::fs::Permissions::from_mode(0o666)).unwrap();
    let inatt = write_cfg(&att, "r.cfg", &cfg_touching(&mark));
    for (cfg, why) in [
        (&theirs, "owned by uid 2345".to_string()),
        (&ww, "mode 666".to_string()),
        (&inatt, format!("{} is owned by uid 2345", att.display())),
    ] {
        let out = d.path().join("out");
        let o = run(&["run", "-q", s(cfg), "--out", s(&out)]);
        let t = describe(&o);
        assert_eq!(o.status.code(), Some(2), "{t}");
        assert!(t.contains(s(cfg)) && t.contains(&why), "{t}");
        assert!(
            t.contains("refusing to use it as root") && t.contains("--force-unsafe-dir"),
            "{t}"
        );
        assert!(!mark.exists() && !out.exists(), "{t}");
        // --resume with the same file: refused before anything is read there.
        let o = run(&["run", "-q", s(cfg), "--resume", s(d.path())]);
        assert_eq!(o.status.code(), Some(2), "{}", describe(&o));
        assert!(describe(&o).contains("refusing to use it as root"));
    }
    // Campaign and scenario files of another user.
    let toml = d.path().join("c.toml");
    std::fs::write(
        &toml,
        "name = \"c\"\ncpus = \"0\"\nduration = \"1s\"\nrepeat = 1\n[measure]\nperiod = \"1ms\"\n\
         policy = \"other\"\n[axes]\nload = [\"idle\"]\nisolation = [\"none\"]\n",
    )
    .unwrap();
    give(&toml);
    let store = d.path().join("st");
    std::fs::create_dir(&store).unwrap();
    std::fs::set_permissions(&store, std::fs::Permissions::from_mode(0o700)).unwrap();
    let cout = d.path().join("cout");
    let o = run(&[
        "campaign",
        s(&toml),
        "--store",
        s(&store.join("runs.db")),
        "--out",
        s(&cout),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", describe(&o));
    assert!(describe(&o).contains("owned by uid 2345") && !cout.exists());
    // --dry-run runs nothing: a warning only.
    let o = run(&["campaign", s(&toml), "--dry-run"]);
    assert_eq!(o.status.code(), Some(0), "{}", describe(&o));
    assert!(describe(&o).contains("warning") && describe(&o).contains("owned by uid 2345"));
    let scn = d.path().join("t.scn");
    std::fs::write(
        &scn,
        "loops_per_us = 1\ntimeout = 2s\n{\nname = w\nloop = 1000\ncount = 1\n}\n",
    )
    .unwrap();
    give(&scn);
    let json = d.path().join("b.json");
    let o = run(&["scenario", s(&scn), "--json", s(&json)]);
    assert_eq!(o.status.code(), Some(2), "{}", describe(&o));
    assert!(describe(&o).contains("owned by uid 2345") && !json.exists());
    let o = run(&["scenario", s(&scn), "--check"]);
    assert_eq!(o.status.code(), Some(0), "{}", describe(&o));
    // simulate runs nothing: the file is an input like any other.
    let o = run(&["simulate", s(&scn), "--duration", "10ms"]);
    assert_eq!(o.status.code(), Some(0), "{}", describe(&o));
    // With --force-unsafe-dir the user takes it: warned, and it runs.
    let o = run(&[
        "run",
        "-q",
        s(&theirs),
        "--force-unsafe-dir",
        "--out",
        s(&d.path().join("f")),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", describe(&o));
    assert!(describe(&o).contains("used anyway: --force-unsafe-dir") && mark.exists());
}

/// Root's private run: `dir` 0700, results.json 0600 labelled SECRET.
fn secret_run(dir: &Path) -> PathBuf {
    std::fs::create_dir(dir).unwrap();
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    let mut v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(fixture("idle/results.json")).unwrap()).unwrap();
    v["label"] = "R5A-SECRET".into();
    let f = dir.join("results.json");
    std::fs::write(&f, serde_json::to_vec(&v).unwrap()).unwrap();
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600)).unwrap();
    f
}

fn leaked(dir: &Path) -> bool {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .any(|e| {
            std::fs::read(e.path())
                .is_ok_and(|b| String::from_utf8_lossy(&b).contains("R5A-SECRET"))
        })
}

#[test]
fn f04_inputs_are_read_through_no_link_and_never_for_a_user_who_could_not_read_them() {
    if !require_root("files are given to another uid") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let secret = secret_run(&d.path().join("secret-run"));
    let att = d.path().join("att");
    std::fs::create_dir(&att).unwrap();
    give(&att);
    // A symbolic link (as the results.json of a run directory, and as a
    // file), and a hard link (where fs.protected_hardlinks=0 the user
    // makes it; root makes it here in their place).
    let sym = att.join("sym");
    std::fs::create_dir(&sym).unwrap();
    give(&sym);
    std::os::unix::fs::symlink(&secret, sym.join("results.json")).unwrap();
    give(&sym.join("results.json"));
    let hard = att.join("hard");
    std::fs::create_dir(&hard).unwrap();
    give(&hard);
    std::fs::hard_link(&secret, hard.join("results.json")).unwrap();
    let store = d.path().join("st");
    std::fs::create_dir(&store).unwrap();
    std::fs::set_permissions(&store, std::fs::Permissions::from_mode(0o700)).unwrap();
    for input in [
        sym.clone(),
        sym.join("results.json"),
        hard.clone(),
        hard.join("results.json"),
    ] {
        let out = d.path().join("o");
        let _ = std::fs::remove_dir_all(&out);
        for args in [
            vec!["report", s(&input), "-o", s(&out)],
            vec!["export", s(&input), "--format", "junit", "-o", "o/x.xml"],
            vec!["runs", "import", "--store", "st/runs.db", s(&input)],
        ] {
            let o = command()
                .args(&args)
                .current_dir(d.path())
                .output()
                .unwrap();
            let t = describe(&o);
            assert_eq!(o.status.code(), Some(2), "{args:?}: {t}");
            assert!(!t.contains("R5A-SECRET"), "{t}");
            assert!(
                t.contains("symbolic link") || t.contains("refusing to read it"),
                "{args:?}: {t}"
            );
        }
        assert!(!leaked(&out));
    }
    // A timeline.csv linked beside the user's own results.json.
    let tl = att.join("tl");
    std::fs::create_dir(&tl).unwrap();
    std::fs::copy(fixture("idle/results.json"), tl.join("results.json")).unwrap();
    give(&tl.join("results.json"));
    give(&tl);
    std::fs::write(d.path().join("secret-run/timeline.csv"), "elapsed_s\n").unwrap();
    std::os::unix::fs::symlink(
        d.path().join("secret-run/timeline.csv"),
        tl.join("timeline.csv"),
    )
    .unwrap();
    let o = run(&["report", s(&tl), "-o", s(&d.path().join("o2"))]);
    assert_eq!(o.status.code(), Some(2), "{}", describe(&o));
    assert!(
        describe(&o).contains("timeline.csv: it is a symbolic link"),
        "{}",
        describe(&o)
    );
    // What the user could read is read: their own file, and root's
    // world-readable one linked there.
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o644)).unwrap();
    let o = run(&["report", s(&hard), "-o", s(&d.path().join("o3"))]);
    assert_eq!(o.status.code(), Some(0), "{}", describe(&o));
}

#[test]
fn f22_no_directory_is_created_inside_another_users_directory() {
    if !require_root("a directory is given to another uid") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let att = d.path().join("att");
    std::fs::create_dir(&att).unwrap();
    give(&att);
    let new = att.join("new");
    let sub = new.join("sub");
    for args in [
        vec!["report", s(&fixture("idle")), "-o", s(&sub)],
        vec![
            "runs",
            "import",
            s(&fixture("idle")),
            "--store",
            "ATT/new/sub/runs.db",
        ],
        vec![
            "measure",
            "--duration",
            "1s",
            "--period",
            "1ms",
            "--policy",
            "other",
            "-q",
            "--no-memlock",
            "--no-dma-latency",
            "--no-store",
            "--cpus",
            "0",
            "--out",
            s(&sub),
        ],
    ] {
        let args: Vec<String> = args.iter().map(|a| a.replace("ATT", s(&att))).collect();
        let o = command().args(&args).output().unwrap();
        let t = describe(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {t}");
        assert!(
            t.contains("would be created in") && t.contains("owned by uid 2345"),
            "{t}"
        );
        assert!(!new.exists(), "{args:?}");
    }
    // --force-unsafe-dir: the user trusts that directory.
    let o = run(&[
        "report",
        s(&fixture("idle")),
        "-o",
        s(&sub),
        "--force-unsafe-dir",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", describe(&o));
    assert!(sub.join("summary.md").exists());
}

fn measure_into(out: &Path, cpus: &str, secs: &str) -> std::process::Output {
    run(&[
        "measure",
        "--duration",
        secs,
        "--period",
        "1ms",
        "--policy",
        "other",
        "-q",
        "--no-memlock",
        "--no-dma-latency",
        "--no-store",
        "--cpus",
        cpus,
        "--out",
        s(out),
    ])
}

#[test]
fn f17_an_output_directory_used_again_holds_and_gives_only_what_the_new_run_wrote() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("out");
    let online = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap_or_default();
    let two = if online.trim() == "0" { "0" } else { "0,1" };
    let o = measure_into(&out, two, "1s");
    assert!(o.status.success(), "{}", describe(&o));
    let m = std::fs::read_to_string(out.join(".rtshield-files")).unwrap();
    assert!(
        m.contains("results.json\t") && m.contains("timeline.csv\t"),
        "{m}"
    );
    let stale = std::fs::read(out.join("timeline.csv")).unwrap();
    // A file of a name rtshield writes, put there by hand.
    std::fs::write(out.join("timer_thread07.txt"), "planted").unwrap();
    let o = measure_into(&out, "0", "1s");
    assert!(o.status.success(), "{}", describe(&o));
    // The earlier run's second thread is gone; the planted file is left,
    // said, and not listed.
    assert!(two == "0" || !out.join("timer_thread01.txt").exists());
    assert!(describe(&o).contains("timer_thread07.txt that this run did not write"));
    let m = std::fs::read_to_string(out.join(".rtshield-files")).unwrap();
    assert!(
        !m.contains("timer_thread07") && !m.contains("timer_thread01"),
        "{m}"
    );
    for (name, size) in m.lines().skip(1).filter_map(|l| l.split_once('\t')) {
        let real = std::fs::metadata(out.join(name)).unwrap().len();
        assert_eq!(real.to_string(), size, "{name}");
    }
    // The earlier run's timeline put back: the report leaves it out.
    std::fs::write(out.join("timeline.csv"), [stale.as_slice(), b"\n"].concat()).unwrap();
    let rep = d.path().join("rep");
    let o = run(&["report", s(&out), "-o", s(&rep)]);
    assert!(o.status.success(), "{}", describe(&o));
    assert!(
        describe(&o).contains("changed since the run wrote it"),
        "{}",
        describe(&o)
    );
    assert!(!rep.join("timeline.gp").exists());
    // Without a manifest (an older rtshield's directory) it is read as before.
    std::fs::remove_file(out.join(".rtshield-files")).unwrap();
    let o = run(&["report", s(&out), "-o", s(&d.path().join("rep2"))]);
    assert!(o.status.success(), "{}", describe(&o));
    assert!(d.path().join("rep2/timeline.gp").exists());
}
