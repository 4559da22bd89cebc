//! Unit tests of the whole layer (they use private helpers of several modules).

use crate::*;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{symlink, PermissionsExt};

#[test]
fn write_replaces_atomically_and_leaves_no_temp() {
    let t = tempfile::tempdir().unwrap();
    let d = SafeDir::open(t.path(), DirPolicy::Strict).unwrap();
    d.write("a.txt", b"one").unwrap();
    d.write("a.txt", b"two").unwrap();
    assert_eq!(std::fs::read(t.path().join("a.txt")).unwrap(), b"two");
    assert_eq!(d.list().unwrap(), vec!["a.txt".to_string()]);
}

#[test]
fn planted_symlink_is_replaced_not_followed() {
    let t = tempfile::tempdir().unwrap();
    let victim = t.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    let out = t.path().join("out");
    std::fs::create_dir(&out).unwrap();
    symlink(&victim, out.join("results.json")).unwrap();
    let d = SafeDir::open(&out, DirPolicy::Strict).unwrap();
    d.write("results.json", b"{}").unwrap();
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    assert!(!std::fs::symlink_metadata(out.join("results.json"))
        .unwrap()
        .file_type()
        .is_symlink());
}

#[test]
fn symlinked_directory_is_refused() {
    let t = tempfile::tempdir().unwrap();
    std::fs::create_dir(t.path().join("real")).unwrap();
    symlink(t.path().join("real"), t.path().join("link")).unwrap();
    let e = SafeDir::open(&t.path().join("link"), DirPolicy::Strict).unwrap_err();
    assert!(e.to_string().contains("link"), "{e}");
}

#[test]
fn world_writable_without_sticky_is_refused_unless_allowed() {
    let t = tempfile::tempdir().unwrap();
    let p = t.path().join("open");
    std::fs::create_dir(&p).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o777)).unwrap();
    let e = SafeDir::open(&p, DirPolicy::Strict).unwrap_err();
    assert!(e.is_refusal());
    assert!(e.to_string().contains("mode 777"), "{e}");
    SafeDir::open(&p, DirPolicy::AllowUnsafe).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o1777)).unwrap();
    SafeDir::open(&p, DirPolicy::Strict).unwrap();
}

#[test]
fn bad_names_are_refused() {
    let t = tempfile::tempdir().unwrap();
    let d = SafeDir::open(t.path(), DirPolicy::Strict).unwrap();
    for n in ["", ".", "..", "a/b", "a\0b", &"x".repeat(256)] {
        assert!(
            matches!(d.write(n, b""), Err(SafeError::BadName { .. })),
            "{n:?}"
        );
    }
}

#[test]
fn unique_subdirs_never_reuse_a_name() {
    let t = tempfile::tempdir().unwrap();
    let d = SafeDir::open(t.path(), DirPolicy::Strict).unwrap();
    let (_, a) = d.create_unique_subdir("run", 0o755).unwrap();
    let (_, b) = d.create_unique_subdir("run", 0o755).unwrap();
    // A planted symlink with the next name is skipped, not followed.
    symlink("/", t.path().join("run-2")).unwrap();
    let (_, c) = d.create_unique_subdir("run", 0o755).unwrap();
    assert_eq!(
        (a.as_str(), b.as_str(), c.as_str()),
        ("run", "run-1", "run-3")
    );
}

#[test]
fn create_subdir_ignores_umask() {
    // Changing the umask here would race with the other tests' temp
    // dirs; the process umask (022 under cargo) would strip 0o022 from
    // a plain mkdir, so an exact 0o777 proves the explicit chmod.
    let t = tempfile::tempdir().unwrap();
    let d = SafeDir::open(t.path(), DirPolicy::Strict).unwrap();
    d.create_subdir("shared", 0o777).unwrap();
    d.create_subdir("state", 0o700).unwrap();
    let mode = |n: &str| {
        std::fs::metadata(t.path().join(n))
            .unwrap()
            .permissions()
            .mode()
            & 0o7777
    };
    assert_eq!((mode("shared"), mode("state")), (0o777, 0o700));
}

#[test]
fn read_refuses_fifo_symlink_and_oversize() {
    let t = tempfile::tempdir().unwrap();
    let fifo = t.path().join("fifo");
    let c = std::ffi::CString::new(fifo.as_os_str().as_bytes()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let e = read_input(&fifo, 100).unwrap_err();
    assert!(e.to_string().contains("not a regular file"), "{e}");
    std::fs::write(t.path().join("big"), vec![b'x'; 101]).unwrap();
    let e = read_input(&t.path().join("big"), 100).unwrap_err();
    assert!(e.to_string().contains("limit of 100 bytes"), "{e}");
    assert_eq!(read_input(&t.path().join("big"), 101).unwrap().len(), 101);
    symlink(t.path().join("big"), t.path().join("ln")).unwrap();
    let d = SafeDir::open(t.path(), DirPolicy::Strict).unwrap();
    assert!(d.read("ln", 1000).is_err());
    assert_eq!(d.read("big", 1000).unwrap().len(), 101);
}

#[test]
fn failed_fill_leaves_old_file_and_no_temp() {
    let t = tempfile::tempdir().unwrap();
    let d = SafeDir::open(t.path(), DirPolicy::Strict).unwrap();
    d.write("f", b"old").unwrap();
    let e = d
        .write_with("f", |w| {
            w.write_all(b"partial")?;
            Err(io::Error::other("disk full"))
        })
        .unwrap_err();
    assert!(e.to_string().contains("disk full"));
    assert_eq!(std::fs::read(t.path().join("f")).unwrap(), b"old");
    assert_eq!(d.list().unwrap(), vec!["f".to_string()]);
}

#[test]
fn output_dir_is_fresh_by_default_and_checked_when_given() {
    let t = tempfile::tempdir().unwrap();
    let parent = t.path().join("rtshield-results");
    let a = output_dir(None, &parent, "20261122-000000", DirPolicy::Strict).unwrap();
    let b = output_dir(None, &parent, "20261122-000000", DirPolicy::Strict).unwrap();
    assert_eq!(a.path(), parent.join("20261122-000000"));
    assert_eq!(b.path(), parent.join("20261122-000000-1"));
    let given = t.path().join("x/y");
    output_dir(Some(&given), &parent, "s", DirPolicy::Strict).unwrap();
    assert!(given.is_dir());
    std::fs::set_permissions(&given, std::fs::Permissions::from_mode(0o757)).unwrap();
    let e = output_dir(Some(&given), &parent, "s", DirPolicy::Strict).unwrap_err();
    assert!(e.is_refusal(), "{e}");
}

#[test]
fn remove_never_follows_symlinks() {
    let t = tempfile::tempdir().unwrap();
    std::fs::create_dir(t.path().join("keep")).unwrap();
    std::fs::write(t.path().join("keep/x"), "x").unwrap();
    let out = t.path().join("out");
    std::fs::create_dir(&out).unwrap();
    symlink(t.path().join("keep/x"), out.join("x")).unwrap();
    let d = SafeDir::open(&out, DirPolicy::Strict).unwrap();
    d.remove_file("x").unwrap();
    assert!(t.path().join("keep/x").exists());
    assert!(d.remove_file("x").is_ok());
}

#[test]
fn private_dir_and_file_checks() {
    let t = tempfile::tempdir().unwrap();
    let p = t.path().join("state");
    std::fs::create_dir(&p).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    let e = SafeDir::open(&p, DirPolicy::Private).unwrap_err();
    assert!(e.is_refusal() && e.to_string().contains("mode 755"), "{e}");
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o700)).unwrap();
    let d = SafeDir::open(&p, DirPolicy::Private).unwrap();
    d.write_with_mode("s.json", 0o600, |w| w.write_all(b"{}"))
        .unwrap();
    assert_eq!(d.entry("s.json").unwrap().mode, 0o600);
    assert_eq!(d.read_private("s.json", 100).unwrap(), b"{}");
    d.write("loose.json", b"{}").unwrap();
    let e = d.read_private("loose.json", 100).unwrap_err();
    assert!(e.is_refusal() && e.to_string().contains("mode 644"), "{e}");
    symlink(p.join("s.json"), p.join("ln.json")).unwrap();
    let e = d.read_private("ln.json", 100).unwrap_err();
    assert!(
        e.is_refusal() && e.to_string().contains("symbolic link"),
        "{e}"
    );
    let fifo = std::ffi::CString::new(p.join("f").as_os_str().as_bytes()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    let e = d.read_private("f", 100).unwrap_err();
    assert!(e.to_string().contains("not a regular file"), "{e}");
    let l = d.entry("ln.json").unwrap();
    assert!(l.is_symlink && !l.is_file);
    assert!(d.entry("nope").is_none());
}

#[test]
fn foreign_owner_is_refused_for_private_reads() {
    if !rtshield_testkit::require_root("chowns a file to another user") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let d = SafeDir::open(t.path(), DirPolicy::Strict).unwrap();
    d.write_with_mode("s.json", 0o600, |w| w.write_all(b"{}"))
        .unwrap();
    std::os::unix::fs::chown(t.path().join("s.json"), Some(65534), Some(65534)).unwrap();
    let e = d.read_private("s.json", 100).unwrap_err();
    assert!(e.to_string().contains("owned by uid 65534"), "{e}");
}

#[test]
fn temp_names_map_back_to_their_target() {
    assert_eq!(
        temp_target(".summary.md.0123456789abcdef.tmp"),
        Some("summary.md")
    );
    assert_eq!(temp_target(".summary.md.0123.tmp"), None);
    assert_eq!(temp_target("summary.md"), None);
    assert_eq!(temp_target("..0123456789abcdef.tmp"), None);
}

#[test]
fn private_dir_is_created_0700_and_tightened() {
    let t = tempfile::tempdir().unwrap();
    let p = t.path().join("run/rtshield");
    let d = SafeDir::open_private_or_create(&p).unwrap();
    assert_eq!(d.owner_mode().unwrap().1, 0o700);
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    SafeDir::open_private_or_create(&p).unwrap();
    let m = std::fs::metadata(&p).unwrap().permissions().mode() & 0o7777;
    assert_eq!(m, 0o700);
    SafeDir::open(&p, DirPolicy::Private).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o777)).unwrap();
    let e = SafeDir::open_private_or_create(&p).unwrap_err();
    assert!(e.is_refusal() && e.to_string().contains("mode 777"), "{e}");
    let e = SafeDir::open_private(&p).unwrap_err();
    assert!(e.to_string().contains("others may have written"), "{e}");
}
