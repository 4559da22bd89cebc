// CI's setup scripts stop loudly: scripts/ci-cache.sh's functions, called
// the way .ci/run and scripts/msrv-env.sh call them (a plain command under
// `set -euo pipefail`), fail with a line naming the step when an input is
// missing or a step fails, and never remove the cache they would start from.
// Failures are made with stand-ins first on PATH (a `rustc`, `cp` or
// `flock` that fails); the cache lives in the test's own temp dir.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output};

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/ci-cache.sh");

/// `bash -c 'set -euo pipefail; . ci-cache.sh; BODY; echo "dir=$CI_CACHE_DIR"'`
/// with the cache in `dir/cache` and `dir/bin` first on PATH.
fn run(dir: &Path, body: &str) -> Output {
    let script = format!("set -euo pipefail\n. '{SCRIPT}'\n{body}\necho \"dir=$CI_CACHE_DIR\"\n");
    let path = format!(
        "{}:{}",
        dir.join("bin").display(),
        std::env::var("PATH").unwrap()
    );
    Command::new("bash")
        .arg("-c")
        .arg(script)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("RTSHIELD_CI_CACHE", dir.join("cache"))
        .env("PATH", path)
        .output()
        .expect("bash runs")
}

/// A program of that name, first on PATH, that fails.
fn failing(dir: &Path, name: &str) {
    let bin = dir.join("bin");
    fs::create_dir_all(&bin).unwrap();
    let p = bin.join(name);
    fs::write(&p, "#!/bin/sh\necho \"$0: made to fail\" >&2\nexit 1\n").unwrap();
    fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The NAME-* directories of the cache.
fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir.join("cache"))
        .map(|d| {
            d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.retain(|n| !n.starts_with('.'));
    v.sort();
    v
}

#[track_caller]
fn failed(o: &Output, needle: &str) {
    assert!(!o.status.success(), "expected a failure, got {o:?}");
    assert!(
        !String::from_utf8_lossy(&o.stdout).contains("dir="),
        "the script went on after the failure: {o:?}"
    );
    assert!(
        stderr(o).contains(needle),
        "stderr lacks {needle:?}: {}",
        stderr(o)
    );
}

#[test]
fn a_new_key_starts_from_the_previous_cache_and_replaces_it() {
    let t = tempfile::tempdir().unwrap();
    let o = run(
        t.path(),
        "ci_cache_dir t a b; touch \"$CI_CACHE_DIR/built\"",
    );
    assert!(o.status.success(), "{o:?}");
    let first = entries(t.path());
    assert_eq!(first.len(), 1, "{first:?}");
    let o = run(
        t.path(),
        "ci_cache_dir t a c; test -f \"$CI_CACHE_DIR/built\"",
    );
    assert!(o.status.success(), "{o:?}");
    let second = entries(t.path());
    assert_eq!(second.len(), 1, "the older key is removed: {second:?}");
    assert_ne!(first, second);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains(&format!(
            "dir={}",
            t.path().join("cache").join(&second[0]).display()
        )),
        "{out}"
    );
}

#[test]
fn an_empty_key_input_stops_ci_naming_it() {
    // What `$(rustc -vV)` gave when rustc failed: an empty string, whose
    // hash was a valid-looking key.
    let t = tempfile::tempdir().unwrap();
    failed(
        &run(t.path(), "ci_cache_dir t a \"\""),
        "t: input 2 of the cache key is empty",
    );
    assert!(entries(t.path()).is_empty());
}

#[test]
fn a_failing_rustc_stops_ci_naming_it() {
    let t = tempfile::tempdir().unwrap();
    failing(t.path(), "rustc");
    failed(&run(t.path(), "ci_host_target_dir"), "'rustc -vV' failed");
    assert!(entries(t.path()).is_empty());
}

#[test]
fn a_failed_copy_stops_ci_and_keeps_the_previous_cache() {
    let t = tempfile::tempdir().unwrap();
    assert!(run(t.path(), "ci_cache_dir t a b").status.success());
    let before = entries(t.path());
    failing(t.path(), "cp");
    failed(&run(t.path(), "ci_cache_dir t a c"), "copying");
    assert_eq!(entries(t.path()), before, "the cache to start from is kept");
}

#[test]
fn a_failed_lock_stops_ci_even_under_a_callers_or() {
    // `f || die` turns errexit off inside f: each step is checked anyway.
    let t = tempfile::tempdir().unwrap();
    failing(t.path(), "flock");
    let o = run(
        t.path(),
        "ci_cache_dir t a b || { echo caller saw it >&2; exit 1; }",
    );
    failed(&o, "flock");
    assert!(stderr(&o).contains("caller saw it"), "{}", stderr(&o));
    assert!(entries(t.path()).is_empty());
}
