//! No hidden switches (issue 21 finding 9, adversary cases n09 and v-*):
//! every `RTSHIELD_*` variable the code reads is in the one table of
//! docs/security.md, the test-only ones are not in release builds, and
//! the ones `sudo -E` could pass from another user cannot bring that
//! user's files in.

use crate::util::*;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every file whose text is searched for variable names: the code of the
/// binary and the crates (tests included: the test harness reads some),
/// and the scripts.
fn code_files() -> Vec<PathBuf> {
    let mut out = vec![];
    let mut stack = vec![
        repo().join("src"),
        repo().join("crates"),
        repo().join("tests"),
        repo().join("scripts"),
        repo().join("bench"),
        repo().join(".ci"),
    ];
    while let Some(d) = stack.pop() {
        let Ok(rd) = fs::read_dir(&d) else { continue };
        for e in rd.flatten() {
            let p = e.path();
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            if p.is_dir() {
                if name != "fixtures" && name != "target" {
                    stack.push(p);
                }
            } else if name == "env_vars.rs" {
                // This file's own examples are not variables.
            } else if name.ends_with(".rs")
                || name.ends_with(".sh")
                || name.ends_with(".py")
                || name == "run"
            {
                out.push(p);
            }
        }
    }
    out
}

/// `RTSHIELD_[A-Z0-9_]*` names in `text` (ending in a letter or digit).
fn names_in(text: &str) -> Vec<String> {
    let b = text.as_bytes();
    let mut out = vec![];
    let mut i = 0;
    while let Some(at) = text[i..].find("RTSHIELD_") {
        let start = i + at;
        let before_ok =
            start == 0 || !(b[start - 1].is_ascii_alphanumeric() || b[start - 1] == b'_');
        let mut end = start + "RTSHIELD_".len();
        while end < b.len()
            && (b[end].is_ascii_uppercase() || b[end].is_ascii_digit() || b[end] == b'_')
        {
            end += 1;
        }
        let name = text[start..end].trim_end_matches('_');
        if before_ok && name.len() > "RTSHIELD".len() {
            out.push(name.to_string());
        }
        i = end.max(start + 1);
    }
    out
}

/// The variables of docs/security.md's table: its rows' first cells.
fn documented() -> Vec<String> {
    let doc = fs::read_to_string(repo().join("docs/security.md")).unwrap();
    doc.lines()
        .filter_map(|l| l.strip_prefix("| `RTSHIELD_"))
        .map(|l| format!("RTSHIELD_{}", l.split('`').next().unwrap()))
        .collect()
}

/// v-variables-documented: one table holds every name, and nothing else.
#[test]
fn every_variable_the_code_reads_is_in_the_one_table() {
    let mut found: Vec<String> = code_files()
        .iter()
        .flat_map(|p| names_in(&fs::read_to_string(p).unwrap_or_default()))
        .collect();
    found.sort();
    found.dedup();
    // A Python constant of the consumers' self-test, not a variable.
    found.retain(|n| n != "RTSHIELD_LIKE");
    // The scan must see the binary's own ones, or it proves nothing.
    for n in ["RTSHIELD_SYSROOT", "RTSHIELD_STORE", "RTSHIELD_NO_STORE"] {
        assert!(found.iter().any(|f| f == n), "{n} not found: {found:?}");
    }
    let mut doc = documented();
    doc.sort();
    let missing: Vec<&String> = found.iter().filter(|n| !doc.contains(n)).collect();
    let stale: Vec<&String> = doc.iter().filter(|n| !found.contains(n)).collect();
    assert!(
        missing.is_empty(),
        "not in docs/security.md's table: {missing:?}"
    );
    assert!(stale.is_empty(), "in the table but read nowhere: {stale:?}");
    let readme = fs::read_to_string(repo().join("README.md")).unwrap();
    assert!(
        readme.contains("docs/security.md#environment-variables"),
        "README must link the table"
    );
}

#[test]
fn names_are_found_as_whole_words() {
    assert_eq!(
        names_in("x RTSHIELD_STORE=1 $RTSHIELD_NO_STORE MY_RTSHIELD_X RTSHIELD_ \"RTSHIELD_A_\""),
        vec!["RTSHIELD_STORE", "RTSHIELD_NO_STORE", "RTSHIELD_A"]
    );
}

/// RTSHIELD_FAKE_KERNEL is read only in test builds: under the binary's
/// `fake-kernel` feature (which only its dev-dependency enables; the
/// layering test checks nothing enables it by default).
#[test]
fn the_fake_kernel_switch_is_compiled_only_into_test_builds() {
    let mut reads = 0;
    for p in code_files().iter().filter(|p| {
        p.extension().is_some_and(|e| e == "rs")
            && (p.starts_with(repo().join("src")) || p.starts_with(repo().join("crates")))
            && !p.components().any(|c| c.as_os_str() == "tests")
    }) {
        let text = fs::read_to_string(p).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (i, l) in lines.iter().enumerate() {
            if l.contains("\"RTSHIELD_FAKE_KERNEL\"") {
                reads += 1;
                let gated = lines[i.saturating_sub(3)..i]
                    .iter()
                    .any(|g| g.contains("#[cfg(feature = \"fake-kernel\")]"));
                assert!(gated, "{}:{}: read outside the feature", p.display(), i + 1);
            }
        }
    }
    assert_eq!(reads, 1, "one read of RTSHIELD_FAKE_KERNEL expected");
}

/// n09: `RTSHIELD_LOAD_EXE` made root run another user's program as its
/// load worker. No variable names the worker's executable any more.
#[test]
fn no_variable_picks_the_load_workers_program() {
    let d = tempfile::tempdir().unwrap();
    let marker = d.path().join("ran");
    let evil = d.path().join("evil");
    fs::write(
        &evil,
        format!("#!/bin/sh\nid -u >> {}\nexit 0\n", marker.display()),
    )
    .unwrap();
    fs::set_permissions(&evil, fs::Permissions::from_mode(0o755)).unwrap();
    let out = d.path().join("out");
    let o = command()
        .env("RTSHIELD_LOAD_EXE", &evil)
        .args([
            "measure",
            "--cpus",
            "0",
            "--period",
            "1ms",
            "--duration",
            "1s",
            "--policy",
            "other",
            "--no-memlock",
            "--no-dma-latency",
            "-q",
            "--load",
            "cpu",
            "--load-cpus",
            "0",
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", all_text(&o));
    assert!(out.join("results.json").is_file());
    assert!(
        !marker.exists(),
        "the program RTSHIELD_LOAD_EXE named ran as the load"
    );
}

/// RTSHIELD_LOAD_WORKER is a handshake, not a switch: `__load` runs only
/// when it names the parent, which only rtshield's supervisor sets.
#[test]
fn the_worker_handshake_is_not_a_switch() {
    let o = command()
        .env("RTSHIELD_LOAD_WORKER", "1")
        .args(["__load", "cpu"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", all_text(&o));
    assert!(all_text(&o).contains("internal"), "{}", all_text(&o));
}

/// A fake tree whose `timer_migration` is a link to `victim`, as an
/// attacker would plant it.
fn trap_tree(base: &Path, victim: &Path) {
    rtshield_testkit::FakeSpec::standard(rtshield_testkit::FakeStyle::V1Prefix)
        .build(base)
        .unwrap();
    let tm = base.join("proc/sys/kernel/timer_migration");
    let _ = fs::remove_file(&tm);
    std::os::unix::fs::symlink(victim, &tm).unwrap();
}

fn chown_tree(p: &Path, uid: u32) {
    let s = std::process::Command::new("chown")
        .args(["-R", "-h", &format!("{uid}:{uid}")])
        .arg(p)
        .status()
        .unwrap();
    assert!(s.success());
}

/// v-sysroot-env-sudo-E (new finding 2): with `RTSHIELD_SYSROOT` another
/// user's tree, root's `partition create` followed the tree's links and
/// wrote into root's files. A tree (or any directory above it) that
/// others can write, or that another user owns, is refused (exit 2),
/// whether named by the variable or by `--sysroot`.
#[test]
fn a_sysroot_others_could_have_made_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let victim = d.path().join("victim");
    fs::write(&victim, "precious\n").unwrap();
    // Writable by others (anyone may run this part).
    let shared = d.path().join("shared");
    fs::create_dir(&shared).unwrap();
    let tree = shared.join("tree");
    trap_tree(&tree, &victim);
    fs::set_permissions(&shared, fs::Permissions::from_mode(0o777)).unwrap();
    let via_env = command()
        .env("RTSHIELD_SYSROOT", &tree)
        .args(["partition", "create", "3"])
        .output()
        .unwrap();
    let via_opt = command()
        .arg("--sysroot")
        .arg(&tree)
        .args(["partition", "create", "3"])
        .output()
        .unwrap();
    for o in [&via_env, &via_opt] {
        assert_eq!(o.status.code(), Some(2), "{}", all_text(o));
        assert!(all_text(o).contains("mode 777"), "{}", all_text(o));
    }
    assert_eq!(fs::read_to_string(&victim).unwrap(), "precious\n");
    fs::set_permissions(&shared, fs::Permissions::from_mode(0o755)).unwrap();

    // Owned by another user (as under `sudo -E`): root only.
    if !require_root("chown a tree to another user") {
        return;
    }
    let theirs = d.path().join("theirs");
    trap_tree(&theirs, &victim);
    chown_tree(&theirs, 65534);
    let o = command()
        .env("RTSHIELD_SYSROOT", &theirs)
        .args(["partition", "create", "3"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", all_text(&o));
    assert!(
        all_text(&o).contains("owned by uid 65534"),
        "{}",
        all_text(&o)
    );
    assert_eq!(fs::read_to_string(&victim).unwrap(), "precious\n");
    // The same tree, ours: accepted (the link then is ours to answer for).
    chown_tree(&theirs, 0);
    fs::remove_file(theirs.join("proc/sys/kernel/timer_migration")).unwrap();
    fs::write(theirs.join("proc/sys/kernel/timer_migration"), "1\n").unwrap();
    let o = command()
        .env("RTSHIELD_SYSROOT", &theirs)
        .args(["partition", "create", "3", "--dry-run"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", all_text(&o));
}

fn runs_list_with_env(store: &Path) -> std::process::Output {
    command()
        .env_remove("RTSHIELD_NO_STORE")
        .env("RTSHIELD_STORE", store)
        .args(["runs", "list"])
        .output()
        .unwrap()
}

/// v-store-env-sudo-E: `RTSHIELD_STORE` naming a store others can write
/// (or, as root, one another user owns) is refused before it is opened;
/// the caller's own private store is used.
#[test]
fn a_store_from_the_environment_must_be_the_callers() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("runs.db");
    let o = runs_list_with_env(&db);
    assert!(o.status.success(), "{}", all_text(&o));
    assert!(db.is_file());
    // A store file everyone may write.
    fs::set_permissions(&db, fs::Permissions::from_mode(0o666)).unwrap();
    let before = fs::read(&db).unwrap();
    let o = runs_list_with_env(&db);
    assert_eq!(o.status.code(), Some(2), "{}", all_text(&o));
    assert!(all_text(&o).contains("RTSHIELD_STORE="), "{}", all_text(&o));
    assert!(all_text(&o).contains("mode 666"), "{}", all_text(&o));
    assert_eq!(fs::read(&db).unwrap(), before);
    fs::set_permissions(&db, fs::Permissions::from_mode(0o600)).unwrap();
    // A directory everyone may write, not sticky: the file could be swapped.
    let open = d.path().join("open");
    fs::create_dir(&open).unwrap();
    fs::set_permissions(&open, fs::Permissions::from_mode(0o777)).unwrap();
    let o = runs_list_with_env(&open.join("runs.db"));
    assert_eq!(o.status.code(), Some(2), "{}", all_text(&o));
    assert!(!open.join("runs.db").exists());

    if !require_root("chown a store to another user") {
        return;
    }
    // Another user's store in a sticky directory (like /tmp).
    let sticky = d.path().join("sticky");
    fs::create_dir(&sticky).unwrap();
    fs::set_permissions(&sticky, fs::Permissions::from_mode(0o1777)).unwrap();
    let theirs = sticky.join("att.db");
    fs::copy(&db, &theirs).unwrap();
    chown_tree(&theirs, 65534);
    let before = fs::read(&theirs).unwrap();
    let o = runs_list_with_env(&theirs);
    assert_eq!(o.status.code(), Some(2), "{}", all_text(&o));
    assert!(
        all_text(&o).contains("owned by uid 65534"),
        "{}",
        all_text(&o)
    );
    assert_eq!(fs::read(&theirs).unwrap(), before);
}

/// Adversary round 6, G08: under `sudo -E`, `PGHOST` is another user's: a
/// socket they listened on received root's password. As root, a store
/// URL without a host no longer takes it from `PGHOST` (a note says so);
/// the listener here is never connected to.
#[test]
fn root_does_not_send_a_store_password_to_the_server_pghost_names() {
    if !require_root("PGHOST is only ignored as root") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let listener = std::os::unix::net::UnixListener::bind(d.path().join(".s.PGSQL.5432")).unwrap();
    listener.set_nonblocking(true).unwrap();
    let mut child = command()
        .env("PGHOST", d.path())
        .args(["runs", "list", "--store", "postgres://rtu:G08-PW@/rt"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Poll: the old code connected and then waited for the server forever.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        if listener.accept().is_ok() {
            let _ = child.kill();
            let _ = child.wait();
            panic!("rtshield connected to the socket PGHOST names");
        }
        if child.try_wait().unwrap().is_some() || std::time::Instant::now() > deadline {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let _ = child.kill();
    let o = child.wait_with_output().unwrap();
    let text = all_text(&o);
    assert!(
        text.contains("PGHOST=") && text.contains("not used as root"),
        "{text}"
    );
    assert!(!text.contains("G08-PW"), "{text}");
}
