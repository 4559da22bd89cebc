//! Where `measure` and `run` write: an unsafe `--out` is refused with exit 2
//! unless `--force-unsafe-dir`, and the default directory is always fresh.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Output;

fn rtshield(cwd: &Path, args: &[&str]) -> Output {
    crate::util::command()
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "status {:?}\nstdout {}\nstderr {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
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
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
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
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
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
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("refusing to write into"));
    let o = rtshield(
        t.path(),
        &["run", "-q", cfg_s, "--out", out_s, "--force-unsafe-dir"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

#[test]
fn the_default_directory_is_fresh_every_time() {
    let t = tempfile::tempdir().unwrap();
    for _ in 0..2 {
        let o = rtshield(t.path(), MEASURE);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
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
