//! Issue 21 finding 5 and the s-* cases: root's store is root's own. A
//! database another user made (with a trigger), a `-wal`, hot `-journal`
//! or `-shm` another user planted beside root's store, or a store
//! directory swapped while root opens it (`HOME` of another user under
//! `sudo -E`): refused or never reached, nothing of the attacker's used.
//! The forgeries are real SQLite files, made with Python's sqlite3 module
//! as `bench/adversarial.sh` makes them.

use crate::util::{command, describe, require_tool};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Output;

fn fixture(name: &str) -> String {
    format!(
        "{}/tests/fixtures/report/real/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

fn rt(args: &[&str]) -> Output {
    command().args(args).output().unwrap()
}

fn python(script: &str, args: &[&Path]) {
    let o = std::process::Command::new("python3")
        .arg("-c")
        .arg(script)
        .args(args)
        .output()
        .unwrap();
    assert!(o.status.success(), "python: {}", describe(&o));
}

/// Another user's file: uid 2345 as root; writable by everyone anyway.
fn give_away(p: &Path) {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o666)).unwrap();
    let _ = std::os::unix::fs::chown(p, Some(2345), Some(2345));
}

/// Root's store with one run, in `dir` (made 0700 unless it exists).
fn roots_store(dir: &Path) -> PathBuf {
    let db = dir.join("runs.db");
    let o = rt(&[
        "runs",
        "import",
        &fixture("idle"),
        "--store",
        db.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", describe(&o));
    db
}

fn sticky(t: &Path) -> PathBuf {
    let s = t.join("sticky");
    std::fs::create_dir(&s).unwrap();
    std::fs::set_permissions(&s, std::fs::Permissions::from_mode(0o1777)).unwrap();
    s
}

/// A copy of `db` whose labels are all `label`, at `to`.
fn forged_copy(db: &Path, to: &Path, label: &str) {
    python(
        &format!(
            "import shutil,sqlite3,sys; shutil.copy(sys.argv[1], sys.argv[2]); \
             c=sqlite3.connect(sys.argv[2]); c.execute(\"update runs set label='{label}'\"); \
             c.commit()"
        ),
        &[db, to],
    );
}

#[test]
fn another_users_database_with_a_trigger_is_refused() {
    if !require_tool("python3", "--version") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let tpl = roots_store(&t.path().join("tpl"));
    let att_db = sticky(t.path()).join("att.db");
    python(
        "import shutil,sqlite3,sys; shutil.copy(sys.argv[1], sys.argv[2]); \
         c=sqlite3.connect(sys.argv[2]); c.execute('create table pwn (w)'); \
         c.execute('create trigger t after insert on runs begin insert into pwn values (1); end'); \
         c.commit()",
        &[&tpl, &att_db],
    );
    give_away(&att_db);
    let before = std::fs::read(&att_db).unwrap();
    for (args, env) in [
        (
            vec![
                "runs",
                "import",
                &fixture("hell"),
                "--store",
                att_db.to_str().unwrap(),
            ],
            None,
        ),
        (
            vec!["runs", "import", &fixture("hell")],
            Some(att_db.as_path()),
        ),
    ] {
        let mut c = command();
        c.args(&args);
        if let Some(p) = env {
            c.env("RTSHIELD_STORE", p);
        }
        let o = c.output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{}", describe(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        let source = if env.is_some() {
            "RTSHIELD_STORE"
        } else {
            "--store"
        };
        // (RTSHIELD_STORE is refused before the store's own checks: the
        // path rule for variables, docs/security.md "Environment variables".)
        assert!(err.contains(source) && err.contains("refusing"), "{err}");
    }
    // `campaign` needs its store: it refuses to start (exit 2, not 1),
    // before running anything.
    let out = t.path().join("campaign-out");
    let o = rt(&[
        "campaign",
        &format!(
            "{}/examples/campaigns/isolation.toml",
            env!("CARGO_MANIFEST_DIR")
        ),
        "--store",
        att_db.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", describe(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--store") && err.contains("refusing to open the store"),
        "{err}"
    );
    assert!(!out.exists(), "nothing run");
    assert_eq!(
        std::fs::read(&att_db).unwrap(),
        before,
        "the attacker's file is untouched"
    );
}

/// Plant `bytes` as `db` + `suffix`, as another user.
fn plant(db: &Path, suffix: &str, bytes: &[u8]) -> PathBuf {
    let p = PathBuf::from(format!("{}{suffix}", db.display()));
    std::fs::write(&p, bytes).unwrap();
    give_away(&p);
    p
}

/// `runs list` of `db`: refused (exit 2) naming `needle`, the attacker's
/// label nowhere.
fn list_refused(db: &Path, needle: &str) {
    let o = rt(&["runs", "list", "--store", db.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", describe(&o));
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(all.contains(needle), "{all}");
    assert!(!all.contains("FORGED"), "{all}");
}

#[test]
fn a_forged_wal_journal_or_shm_beside_roots_store_is_never_used() {
    if !require_tool("python3", "--version") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let forge = t.path().join("forge");
    std::fs::create_dir(&forge).unwrap();
    // In a sticky shared directory (as /tmp) and in root's own directory.
    let dirs = [sticky(t.path()), t.path().join("private")];
    std::fs::create_dir(&dirs[1]).unwrap();
    std::fs::set_permissions(&dirs[1], std::fs::Permissions::from_mode(0o700)).unwrap();
    for (i, dir) in dirs.iter().enumerate() {
        let db = roots_store(&dir.join(format!("s{i}")));
        if i == 0 {
            // (made in a private directory, then moved to the shared one)
            let moved = dir.join("root.db");
            std::fs::rename(&db, &moved).unwrap();
        }
        let db = if i == 0 { dir.join("root.db") } else { db };
        let before = std::fs::read(&db).unwrap();
        // n05b: an uncheckpointed WAL that rewrites every label.
        let c = forge.join(format!("w{i}.db"));
        python(
            "import shutil,sqlite3,os,sys; shutil.copy(sys.argv[1], sys.argv[2]); \
             c=sqlite3.connect(sys.argv[2], isolation_level=None); \
             c.execute('PRAGMA journal_mode=WAL'); c.execute('PRAGMA wal_autocheckpoint=0'); \
             c.execute(\"update runs set label='FORGED-WAL'\"); \
             shutil.copy(sys.argv[2]+'-wal', sys.argv[3]); os._exit(0)",
            &[&db, &c, &PathBuf::from(format!("{}-wal", db.display()))],
        );
        give_away(&PathBuf::from(format!("{}-wal", db.display())));
        list_refused(&db, "refusing to open the store");
        std::fs::remove_file(format!("{}-wal", db.display())).unwrap();
        // New finding 3: a hot rollback journal.
        let c = forge.join(format!("j{i}.db"));
        python(
            "import shutil,sqlite3,os,sys; shutil.copy(sys.argv[1], sys.argv[2]); \
             c=sqlite3.connect(sys.argv[2], isolation_level=None); \
             c.execute('PRAGMA journal_mode=DELETE'); \
             c.execute(\"update runs set label='FORGED-JOURNAL'\"); \
             c.execute('PRAGMA cache_size=1'); c.execute('BEGIN'); \
             c.execute(\"update runs set label='x', result=''\"); c.execute('delete from threads'); \
             [c.execute('insert into meta values (?, ?)', ('k%d' % k, 'y' * 2000)) for k in range(200)]; \
             shutil.copy(sys.argv[2]+'-journal', sys.argv[3]); os._exit(0)",
            &[&db, &c, &PathBuf::from(format!("{}-journal", db.display()))],
        );
        give_away(&PathBuf::from(format!("{}-journal", db.display())));
        list_refused(&db, "refusing to open the store");
        std::fs::remove_file(format!("{}-journal", db.display())).unwrap();
        // New finding 4: another user's -shm (the WAL index).
        let shm = plant(&db, "-shm", &[0u8; 32768]);
        let o = rt(&[
            "runs",
            "import",
            &fixture("hell"),
            "--store",
            db.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(2), "{}", describe(&o));
        std::fs::remove_file(shm).unwrap();
        assert_eq!(
            std::fs::read(&db).unwrap(),
            before,
            "root's store unchanged"
        );
    }
}

/// n05c: `HOME` is another user's (`sudo -E`); that user renames the
/// `rtshield` directory root creates in its `~/.local/share` and puts its
/// own (holding its own runs.db) in its place, as fast as it can. Root
/// never lists the attacker's runs.
#[test]
fn a_store_directory_swapped_under_root_is_never_used() {
    use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
    if !require_tool("python3", "--version") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let tpl = roots_store(&t.path().join("tpl"));
    let evil = t.path().join("evil.db");
    forged_copy(&tpl, &evil, "FORGED-HOME");
    let home = t.path().join("home");
    let share = home.join(".local/share");
    std::fs::create_dir_all(&share).unwrap();
    for p in [&home, &home.join(".local"), &share] {
        let _ = std::os::unix::fs::chown(p, Some(2345), Some(2345));
    }
    let stop = AtomicBool::new(false);
    let swaps = AtomicU32::new(0);
    let mut hits = 0;
    std::thread::scope(|s| {
        s.spawn(|| {
            let at = share.join("rtshield");
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) {
                // Root's new directory appeared: swap it for the attacker's.
                if std::fs::symlink_metadata(at.join("runs.db")).is_err() && at.is_dir() {
                    n += 1;
                    let mine = share.join(format!("prep-{n}"));
                    std::fs::create_dir(&mine).unwrap();
                    std::fs::copy(&evil, mine.join("runs.db")).unwrap();
                    for p in [mine.clone(), mine.join("runs.db")] {
                        let _ = std::os::unix::fs::chown(&p, Some(2345), Some(2345));
                    }
                    if std::fs::rename(&at, share.join(format!("gone-{n}"))).is_ok()
                        && std::fs::rename(&mine, &at).is_ok()
                    {
                        swaps.fetch_add(1, Ordering::Relaxed);
                    }
                }
                std::hint::spin_loop();
            }
        });
        for _ in 0..20 {
            // Each try starts with no `rtshield` directory: root makes one.
            let _ = std::fs::remove_dir_all(share.join("rtshield"));
            let o = command()
                .args(["runs", "list"])
                .env("HOME", &home)
                .env_remove("XDG_DATA_HOME")
                .output()
                .unwrap();
            if String::from_utf8_lossy(&o.stdout).contains("FORGED") {
                hits += 1;
            }
        }
        stop.store(true, Ordering::Relaxed);
    });
    assert_eq!(
        hits,
        0,
        "root listed the attacker's runs ({} swaps)",
        swaps.load(Ordering::Relaxed)
    );
}
