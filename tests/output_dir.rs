//! Where `measure` and `run` write: an unsafe `--out` is refused with exit 2
//! unless `--force-unsafe-dir`, and the default directory is always fresh.

use crate::util::describe;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Output;

/// `rtshield ARGS` run in `cwd`, waited for.
fn rtshield(cwd: &Path, args: &[&str]) -> Output {
    crate::util::command()
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap()
}

const MEASURE: &[&str] = &["measure", "-q", "--samples", "20", "--period", "1ms"];

#[test]
fn a_world_writable_out_is_refused_unless_forced() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("shared");
    std::fs::create_dir(&out).unwrap();
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o777)).unwrap();
    let out_s = out.to_str().unwrap();

    let mut a = MEASURE.to_vec();
    a.extend(["--out", out_s]);
    let o = rtshield(t.path(), &a);
    assert_eq!(o.status.code(), Some(2), "{}", describe(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("refusing to write into"), "{err}");
    assert!(err.contains("--force-unsafe-dir"), "{err}");
    assert!(
        !String::from_utf8_lossy(&o.stdout).contains("rtshield measure:"),
        "refused before measuring"
    );
    assert!(
        std::fs::read_dir(&out).unwrap().next().is_none(),
        "nothing written"
    );

    a.push("--force-unsafe-dir");
    let o = rtshield(t.path(), &a);
    assert_eq!(o.status.code(), Some(0), "{}", describe(&o));
    assert!(out.join("results.json").is_file());

    // `run` too.
    let cfg = t.path().join("t.cfg");
    std::fs::write(
        &cfg,
        "timer_thread[0]\n{\n  cpu_affinity 0\n  lifetime.samples 20\n}\n",
    )
    .unwrap();
    let cfg_s = cfg.to_str().unwrap();
    let o = rtshield(t.path(), &["run", "-q", cfg_s, "--out", out_s]);
    assert_eq!(o.status.code(), Some(2), "{}", describe(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("refusing to write into"));
    let o = rtshield(
        t.path(),
        &["run", "-q", cfg_s, "--out", out_s, "--force-unsafe-dir"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", describe(&o));
}

#[test]
fn the_default_directory_is_fresh_every_time() {
    let t = tempfile::tempdir().unwrap();
    for _ in 0..2 {
        let o = rtshield(t.path(), MEASURE);
        assert_eq!(o.status.code(), Some(0), "{}", describe(&o));
    }
    let mut dirs: Vec<String> = std::fs::read_dir(t.path().join("rtshield-results"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    dirs.sort();
    assert_eq!(dirs.len(), 2, "{dirs:?}");
    for d in &dirs {
        assert!(
            t.path()
                .join("rtshield-results")
                .join(d)
                .join("results.json")
                .is_file(),
            "{d}"
        );
    }
}

/// `simulate --json/--trace/--gantt` and `scenario --json/--out` write
/// through safefs too: a symlink planted at the file name is never
/// followed (it is replaced, its target stays intact) and a world-writable directory is
/// refused with exit 2 unless --force-unsafe-dir.
#[test]
fn simulate_and_scenario_outputs_never_follow_a_link() {
    let t = tempfile::tempdir().unwrap();
    let victim = t.path().join("victim");
    std::fs::write(&victim, "precious\n").unwrap();
    let scn = crate::util::example("scenarios/fairness.scn");
    let scn = scn.to_str().unwrap();
    for (i, opt) in ["--json", "--trace", "--gantt"].iter().enumerate() {
        let link = t.path().join(format!("link{i}"));
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let o = rtshield(
            t.path(),
            &["simulate", scn, "--cpus", "2", opt, link.to_str().unwrap()],
        );
        // The link is replaced by the new file (rename), never written through.
        assert_eq!(o.status.code(), Some(0), "{opt}: {}", describe(&o));
        assert_eq!(
            std::fs::read_to_string(&victim).unwrap(),
            "precious\n",
            "{opt}"
        );
        let m = std::fs::symlink_metadata(&link).unwrap();
        assert!(m.file_type().is_file(), "{opt}: the link was replaced");
    }
    // A world-writable directory: refused (exit 2), then allowed when forced.
    let shared = t.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o777)).unwrap();
    let j = shared.join("sim.json");
    let j = j.to_str().unwrap();
    let o = rtshield(t.path(), &["simulate", scn, "--cpus", "2", "--json", j]);
    assert_eq!(o.status.code(), Some(2), "{}", describe(&o));
    assert!(!shared.join("sim.json").exists());
    let o = rtshield(
        t.path(),
        &[
            "simulate",
            scn,
            "--cpus",
            "2",
            "--json",
            j,
            "--force-unsafe-dir",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", describe(&o));
    assert!(shared.join("sim.json").is_file());
    // scenario --check never writes; --out with a world-writable parent
    // directory given as --out itself is refused before anything runs.
    let o = rtshield(
        t.path(),
        &[
            "scenario",
            scn,
            "--scale",
            "0.001",
            "--out",
            shared.to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", describe(&o));
    assert!(!shared.join("balance.json").exists());
}
