//! Adversary round 5 (A): trusted inputs (F01/F07), data inputs through
//! links or others' directories (F04), directories created in others'
//! directories (F22). The owner cases need root (files are given away);
//! without root they check what they can.

use crate::*;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::Path;

const OTHER: u32 = 2345;

fn give(p: &Path, uid: u32) -> bool {
    rustix::fs::chown(p, Some(rustix::fs::Uid::from_raw(uid)), None).is_ok()
}

fn mode(p: &Path, m: u32) {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
}

fn root() -> bool {
    rustix::process::geteuid().is_root()
}

#[test]
fn f04_an_input_is_never_read_through_a_link() {
    let t = tempfile::tempdir().unwrap();
    std::fs::create_dir(t.path().join("real")).unwrap();
    std::fs::write(t.path().join("real/results.json"), "secret").unwrap();
    symlink("real/results.json", t.path().join("final")).unwrap();
    symlink("real", t.path().join("mid")).unwrap();
    for p in [t.path().join("final"), t.path().join("mid/results.json")] {
        let e = read_input(&p, 1 << 20).unwrap_err();
        assert!(e.is_refusal(), "{e}");
        assert!(e.to_string().contains("symbolic link"), "{e}");
        let e = read_input_public(&p, 1 << 20).unwrap_err();
        assert!(e.is_refusal(), "{e}");
    }
    assert_eq!(
        read_input(&t.path().join("real/results.json"), 1 << 20).unwrap(),
        b"secret"
    );
    // `..` climbs real directories only (`report ../run1`); after a link
    // the link is refused first.
    let up = t.path().join("real/../real/results.json");
    assert_eq!(read_input(&up, 1 << 20).unwrap(), b"secret");
    let e = read_input(&t.path().join("mid/../real/results.json"), 1 << 20).unwrap_err();
    assert!(e.to_string().contains("symbolic link"), "{e}");
}

#[test]
fn f04_a_hard_link_to_a_private_file_in_another_users_directory_is_refused() {
    if !root() {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let secret = t.path().join("secret.json");
    std::fs::write(&secret, "secret").unwrap();
    mode(&secret, 0o600);
    let att = t.path().join("att");
    std::fs::create_dir(&att).unwrap();
    assert!(give(&att, OTHER));
    std::fs::hard_link(&secret, att.join("results.json")).unwrap();
    let e = read_input(&att.join("results.json"), 1 << 20).unwrap_err();
    assert!(e.is_refusal(), "{e}");
    let m = e.to_string();
    assert!(
        m.contains("refusing to read it") && m.contains("owned by uid 2345"),
        "{m}"
    );
    assert!(m.contains("2 link(s)") && m.contains("mode 600"), "{m}");
    // The same in a sticky directory everyone may write (like /tmp).
    let sticky = t.path().join("sticky");
    std::fs::create_dir(&sticky).unwrap();
    mode(&sticky, 0o1777);
    std::fs::hard_link(&secret, sticky.join("r.json")).unwrap();
    assert!(read_input(&sticky.join("r.json"), 1 << 20)
        .unwrap_err()
        .is_refusal());
    // Readable by everyone: the user could read it anyway.
    mode(&secret, 0o644);
    assert_eq!(
        read_input(&att.join("results.json"), 1 << 20).unwrap(),
        b"secret"
    );
    // The directory owner's own private file: theirs to show.
    let own = att.join("own.json");
    std::fs::write(&own, "theirs").unwrap();
    mode(&own, 0o600);
    assert!(give(&own, OTHER));
    assert_eq!(read_input(&own, 1 << 20).unwrap(), b"theirs");
    // Root's own file with one link there (root wrote it there).
    let mine = att.join("mine.json");
    std::fs::write(&mine, "mine").unwrap();
    mode(&mine, 0o600);
    assert_eq!(read_input(&mine, 1 << 20).unwrap(), b"mine");
}

#[test]
fn f01_a_trusted_input_others_could_change_is_refused_as_root() {
    let t = tempfile::tempdir().unwrap();
    let ok = t.path().join("mine.cfg");
    std::fs::write(&ok, "main").unwrap();
    mode(&ok, 0o644);
    let r = read_trusted_input(&ok, 1 << 20, InputTrust::Refuse, "its programs").unwrap();
    assert_eq!(r.bytes, b"main");
    assert!(r.warning.is_none());
    if !root() {
        return;
    }
    // Group/world-writable file.
    let ww = t.path().join("ww.cfg");
    std::fs::write(&ww, "main").unwrap();
    mode(&ww, 0o666);
    let e = read_trusted_input(&ww, 1 << 20, InputTrust::Refuse, "its programs").unwrap_err();
    assert!(e.is_refusal(), "{e}");
    let m = e.to_string();
    assert!(
        m.contains("mode 666") && m.contains("--force-unsafe-dir"),
        "{m}"
    );
    assert!(m.contains(&ww.display().to_string()), "{m}");
    // Another user's file, and a root file in another user's directory.
    let theirs = t.path().join("theirs.cfg");
    std::fs::write(&theirs, "main").unwrap();
    assert!(give(&theirs, OTHER));
    let e = read_trusted_input(&theirs, 1 << 20, InputTrust::Refuse, "x").unwrap_err();
    assert!(e.to_string().contains("owned by uid 2345"), "{e}");
    let att = t.path().join("att");
    std::fs::create_dir(&att).unwrap();
    std::fs::write(att.join("r.cfg"), "main").unwrap();
    assert!(give(&att, OTHER));
    let e = read_trusted_input(&att.join("r.cfg"), 1 << 20, InputTrust::Refuse, "x").unwrap_err();
    assert!(e.to_string().contains("owned by uid 2345"), "{e}");
    // A world-writable directory above, without sticky.
    let ww_dir = t.path().join("wwd");
    std::fs::create_dir(&ww_dir).unwrap();
    std::fs::write(ww_dir.join("r.cfg"), "main").unwrap();
    mode(&ww_dir, 0o777);
    assert!(read_trusted_input(&ww_dir.join("r.cfg"), 1 << 20, InputTrust::Refuse, "x").is_err());
    // Warn (--check): read, with the reason; Accept (--force-unsafe-dir) too.
    for trust in [InputTrust::Warn, InputTrust::Accept] {
        let r = read_trusted_input(&theirs, 1 << 20, trust, "its programs").unwrap();
        assert_eq!(r.bytes, b"main");
        assert!(r.warning.unwrap().contains("owned by uid 2345"));
    }
    // Warn reads as a data input: a link in another user's directory
    // to a root-only file is refused, never shown.
    let secret = t.path().join("secret");
    std::fs::write(&secret, "secret").unwrap();
    mode(&secret, 0o600);
    let link = att.join("link.cfg");
    symlink(&secret, &link).unwrap();
    assert!(read_trusted_input(&link, 1 << 20, InputTrust::Warn, "x").is_err());
    // Root's own file in a root sticky directory (like /tmp) is trusted.
    let sticky = t.path().join("sticky");
    std::fs::create_dir(&sticky).unwrap();
    mode(&sticky, 0o1777);
    std::fs::write(sticky.join("r.cfg"), "main").unwrap();
    mode(&sticky.join("r.cfg"), 0o644);
    read_trusted_input(&sticky.join("r.cfg"), 1 << 20, InputTrust::Refuse, "x").unwrap();
}

#[test]
fn f22_no_directory_is_created_in_a_directory_others_control() {
    let t = tempfile::tempdir().unwrap();
    let ww = t.path().join("ww");
    std::fs::create_dir(&ww).unwrap();
    mode(&ww, 0o777);
    let new = ww.join("new/sub");
    for r in [
        SafeDir::open_or_create(&new, 0o755, DirPolicy::Strict).map(|_| ()),
        SafeDir::create_new_with_parents(&new, 0o755, DirPolicy::Strict).map(|_| ()),
        output_dir(Some(&new), t.path(), "s", DirPolicy::Strict).map(|_| ()),
    ] {
        let e = r.unwrap_err();
        assert!(e.is_refusal(), "{e}");
        assert!(e.to_string().contains("would be created in"), "{e}");
    }
    assert!(!ww.join("new").exists());
    // A sticky one (/tmp) is fine, and so is --force-unsafe-dir.
    let sticky = t.path().join("sticky");
    std::fs::create_dir(&sticky).unwrap();
    mode(&sticky, 0o1777);
    SafeDir::open_or_create(&sticky.join("a/b"), 0o755, DirPolicy::Strict).unwrap();
    SafeDir::open_or_create(&new, 0o755, DirPolicy::AllowUnsafe).unwrap();
    if !root() {
        return;
    }
    // Another user's directory, even 0755: not there either.
    let att = t.path().join("att");
    std::fs::create_dir(&att).unwrap();
    assert!(give(&att, OTHER));
    let e = SafeDir::create_new_with_parents(&att.join("new/sub"), 0o755, DirPolicy::Strict)
        .unwrap_err();
    assert!(e.to_string().contains("owned by uid 2345"), "{e}");
    assert!(!att.join("new").exists());
}
