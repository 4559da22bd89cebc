//! `report -o DIR` as root in a directory others may have prepared: a
//! planted manifest, a symlink in place of DIR or of one of its files, a
//! directory others can write to. Nothing outside DIR may be removed or
//! overwritten.

use rtshield_report::{
    generate, is_report_file, synth_run_result, synth_timeline_csv, write_synth_run_dir, Format,
    Options, MANIFEST,
};
use rtshield_safefs::DirPolicy;
use rtshield_testkit::input_error;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};

fn run_dir(d: &Path) -> PathBuf {
    let a = d.join("idle");
    let r = synth_run_result("idle", 1, &[1], 1000, 10.0, 0.0, 100);
    write_synth_run_dir(&a, &r, Some(&synth_timeline_csv(3, 10, &[1]))).unwrap();
    a
}

fn opts(input: &Path, out: &Path, policy: DirPolicy) -> Options {
    Options {
        inputs: vec![input.to_path_buf()],
        names: vec![],
        out_dir: out.to_path_buf(),
        formats: vec![Format::Md, Format::Csv, Format::Gnuplot],
        title: "T".into(),
        policy,
        x_max_us: None,
    }
}

/// A directory prepared by someone else holding their file and a manifest
/// that lists it: the old code trusted the manifest and deleted the file as
/// "stale". Only names the report itself writes may come from a manifest.
#[test]
fn a_planted_manifest_cannot_make_the_report_delete_a_foreign_file() {
    let d = tempfile::tempdir().unwrap();
    let input = run_dir(d.path());
    let out = d.path().join("out");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("thesis.tex"), "precious").unwrap();
    std::fs::write(out.join(MANIFEST), "thesis.tex\n").unwrap();
    let r = generate(&opts(&input, &out, DirPolicy::Strict));
    assert_eq!(
        std::fs::read_to_string(out.join("thesis.tex")).unwrap(),
        "precious"
    );
    let msg = input_error(&r.unwrap_err());
    assert!(msg.contains("(thesis.tex)"), "{msg}");
}

/// DIR itself is a symlink to another directory that holds a manifest and
/// a file named like a report file: the old code followed the link,
/// wrote the report there and removed the file. Refused, nothing touched.
#[test]
fn a_symlink_as_the_output_directory_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let input = run_dir(d.path());
    let elsewhere = d.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    std::fs::write(elsewhere.join("latency-victim.dat"), "precious").unwrap();
    std::fs::write(elsewhere.join(MANIFEST), "latency-victim.dat\n").unwrap();
    let out = d.path().join("out");
    symlink(&elsewhere, &out).unwrap();
    let msg = input_error(&generate(&opts(&input, &out, DirPolicy::Strict)).unwrap_err());
    assert!(msg.contains("symbolic link"), "{msg}");
    let mut names: Vec<String> = std::fs::read_dir(&elsewhere)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, [MANIFEST, "latency-victim.dat"]);
    assert_eq!(
        std::fs::read_to_string(elsewhere.join("latency-victim.dat")).unwrap(),
        "precious"
    );
}

/// A report file of an earlier report replaced by a symlink to a file
/// outside: listed as foreign (the `@` mark), never followed, nothing
/// outside changes.
#[test]
fn a_symlinked_report_file_is_never_followed() {
    let d = tempfile::tempdir().unwrap();
    let input = run_dir(d.path());
    let out = d.path().join("out");
    generate(&opts(&input, &out, DirPolicy::Strict)).unwrap();
    let victim = d.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    std::fs::remove_file(out.join("summary.md")).unwrap();
    symlink(&victim, out.join("summary.md")).unwrap();
    let msg = input_error(&generate(&opts(&input, &out, DirPolicy::Strict)).unwrap_err());
    assert!(msg.contains("(summary.md@)"), "{msg}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
}

/// A group/world-writable DIR without the sticky bit is refused (others
/// could swap files in it) unless the caller forces it.
#[test]
fn a_world_writable_directory_needs_force() {
    let d = tempfile::tempdir().unwrap();
    let input = run_dir(d.path());
    let out = d.path().join("shared");
    std::fs::create_dir(&out).unwrap();
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o777)).unwrap();
    let msg = input_error(&generate(&opts(&input, &out, DirPolicy::Strict)).unwrap_err());
    assert!(
        msg.contains("mode 777") && msg.contains("--force-unsafe-dir"),
        "{msg}"
    );
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 0);
    generate(&opts(&input, &out, DirPolicy::AllowUnsafe)).unwrap();
    assert!(out.join("summary.md").is_file());
}

/// Leftover temporary files of an interrupted report are recognised and
/// cleaned; every name the report writes passes `is_report_file`.
#[test]
fn leftover_temps_are_cleaned_and_names_are_recognised() {
    let d = tempfile::tempdir().unwrap();
    let input = run_dir(d.path());
    let out = d.path().join("out");
    let all = Options {
        formats: Format::ALL.to_vec(),
        ..opts(&input, &out, DirPolicy::Strict)
    };
    let o = generate(&all).unwrap();
    for f in &o.files {
        assert!(is_report_file(f), "{f}");
    }
    for bad in [
        "../x",
        "notes.txt",
        "latency-.dat",
        "timeline-.hidden.png",
        "/etc/passwd",
    ] {
        assert!(!is_report_file(bad), "{bad}");
    }
    std::fs::write(out.join(".summary.md.0123456789abcdef.tmp"), "half").unwrap();
    generate(&all).unwrap();
    assert!(!out.join(".summary.md.0123456789abcdef.tmp").exists());
}
