//! Tests of the path layer (`resolve`), the checks of files root appends
//! to, and the private temporary places (`temp`).

use crate::resolve::{self, parse};
use crate::*;
use std::os::unix::fs::{symlink, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

fn names(p: &str) -> Vec<String> {
    parse(Path::new(p))
        .unwrap()
        .names
        .iter()
        .map(|n| String::from_utf8(n.clone()).unwrap())
        .collect()
}

#[test]
fn paths_are_cut_without_dots_and_dotdot_is_refused() {
    assert_eq!(names("a//b/./c/"), ["a", "b", "c"]);
    assert_eq!(names("a/."), ["a"]);
    assert!(parse(Path::new("/")).unwrap().names.is_empty());
    assert!(parse(Path::new("/x")).unwrap().absolute);
    assert!(!parse(Path::new("./x")).unwrap().absolute);
    for bad in ["..", "a/..", "a/../b", "/a/b/../../etc", ""] {
        let e = parse(Path::new(bad)).unwrap_err();
        assert!(e.is_refusal(), "{bad}: {e}");
    }
    let e = parse(Path::new("x/../y")).unwrap_err();
    assert!(e.to_string().contains("`..`"), "{e}");
}

#[test]
fn file_paths_split_after_normalisation() {
    let s = |p: &str| resolve::split_file(Path::new(p));
    assert_eq!(s("a/./f").unwrap(), (PathBuf::from("a"), "f".to_string()));
    assert_eq!(s("f").unwrap(), (PathBuf::from("."), "f".to_string()));
    assert_eq!(s("/f").unwrap(), (PathBuf::from("/"), "f".to_string()));
    assert_eq!(
        s("/a//b/f").unwrap(),
        (PathBuf::from("/a/b"), "f".to_string())
    );
    for bad in ["a/f/", "a/f/.", ".", "a/../f"] {
        assert!(s(bad).unwrap_err().is_refusal(), "{bad}");
    }
}

/// `t/real` (with `sub` inside) and `t/link` -> `t/real`.
fn linked_tree() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let real = t.path().join("real");
    std::fs::create_dir_all(real.join("sub")).unwrap();
    let link = t.path().join("link");
    symlink(&real, &link).unwrap();
    (t, real, link)
}

#[test]
fn a_link_anywhere_is_refused_by_openat2_and_by_the_walk() {
    let (_t, real, link) = linked_tree();
    let l = link.display().to_string();
    for p in [
        l.clone(),
        format!("{l}/"),
        format!("{l}/."),
        format!("{l}//./"),
        format!("{l}/sub"),
        format!("{l}/sub/"),
    ] {
        let p = Path::new(&p);
        let e = SafeDir::open(p, DirPolicy::AllowUnsafe).unwrap_err();
        assert!(e.is_refusal(), "{}: {e}", p.display());
        assert!(
            e.to_string().contains(&format!("{l} is a symbolic link")),
            "{}: {e}",
            p.display()
        );
        let parsed = parse(p).unwrap();
        let e = resolve::walk(p, &parsed).unwrap_err();
        assert!(e.is_refusal(), "walk {}: {e}", p.display());
    }
    // The real path opens both ways.
    SafeDir::open(&real.join("sub"), DirPolicy::Strict).unwrap();
    let sub = real.join("sub");
    resolve::walk(&sub, &parse(&sub).unwrap()).unwrap();
}

#[test]
fn creating_through_a_link_or_dotdot_creates_nothing() {
    let (_t, real, link) = linked_tree();
    for p in [
        link.join("new"),
        link.join("sub/new"),
        PathBuf::from(format!("{}/./new/", link.display())),
        real.join("sub/../new"),
    ] {
        let e = SafeDir::open_or_create(&p, 0o755, DirPolicy::AllowUnsafe).unwrap_err();
        assert!(e.is_refusal(), "{}: {e}", p.display());
        let e = write_file(&p.join("f"), b"x", DirPolicy::AllowUnsafe).unwrap_err();
        assert!(e.is_refusal(), "{}: {e}", p.display());
    }
    let mut left: Vec<_> = std::fs::read_dir(&real)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    left.sort();
    assert_eq!(left, ["sub"]);
    assert_eq!(std::fs::read_dir(real.join("sub")).unwrap().count(), 0);
}

#[test]
fn missing_directories_are_created_with_the_mode_asked() {
    let t = tempfile::tempdir().unwrap();
    let p = t.path().join("a/b/c/");
    let d = SafeDir::open_or_create(&p, 0o750, DirPolicy::Strict).unwrap();
    d.write("f", b"x").unwrap();
    for q in ["a", "a/b", "a/b/c"] {
        let m = std::fs::metadata(t.path().join(q)).unwrap().mode() & 0o7777;
        assert_eq!(m, 0o750, "{q}");
    }
    // Opening it again finds the same directory.
    SafeDir::open_or_create(&p, 0o750, DirPolicy::Strict).unwrap();
    assert!(t.path().join("a/b/c/f").is_file());
}

#[test]
fn a_directory_is_created_in_another_place_as_our_own_and_checked_when_it_exists() {
    let t = tempfile::tempdir().unwrap();
    let open = t.path().join("open");
    std::fs::create_dir(&open).unwrap();
    // Sticky, like /tmp: a directory others can write, where one may be
    // created (a non-sticky one is refused since round 5 (A), F22).
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o1777)).unwrap();
    // The new directory is ours (mode as asked) and held by descriptor.
    let d = SafeDir::open_or_create(&open.join("new/deeper"), 0o755, DirPolicy::Strict).unwrap();
    d.write("f", b"x").unwrap();
    assert_eq!(
        std::fs::metadata(open.join("new")).unwrap().mode() & 0o7777,
        0o755
    );
    // An existing one that fails the policy is refused.
    std::fs::set_permissions(open.join("new"), std::fs::Permissions::from_mode(0o777)).unwrap();
    let e = SafeDir::open_or_create(&open.join("new"), 0o755, DirPolicy::Strict).unwrap_err();
    assert!(e.is_refusal() && e.to_string().contains("mode 777"), "{e}");
}

/// An attacker swaps `x` (a real directory holding `sub`) and `l` (a link
/// to the victim directory, which holds `sub` too) thousands of times a
/// second: whatever the timing, nothing lands in the victim.
#[test]
fn a_directory_swapped_for_a_link_never_redirects_a_write() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let t = tempfile::tempdir().unwrap();
    let att = t.path().join("att");
    let victim = t.path().join("victim");
    std::fs::create_dir_all(att.join("x/sub")).unwrap();
    std::fs::create_dir_all(victim.join("sub")).unwrap();
    symlink(&victim, att.join("l")).unwrap();
    let stop = AtomicBool::new(false);
    let (mut ok, mut refused) = (0, 0);
    let mut other = Vec::new();
    std::thread::scope(|s| {
        s.spawn(|| {
            let d = rustix::fs::open(
                &att,
                rustix::fs::OFlags::DIRECTORY,
                rustix::fs::Mode::empty(),
            )
            .unwrap();
            while !stop.load(Ordering::Relaxed) {
                let _ =
                    rustix::fs::renameat_with(&d, "x", &d, "l", rustix::fs::RenameFlags::EXCHANGE);
            }
        });
        for i in 0..3000 {
            let target = att.join("x/sub");
            let r = if i % 2 == 0 {
                SafeDir::open_or_create(&target, 0o755, DirPolicy::Strict)
                    .and_then(|d| d.write("f", b"attack"))
            } else {
                write_file(&target.join("g"), b"attack", DirPolicy::Strict)
            };
            match r {
                Ok(()) => ok += 1,
                Err(e) if e.is_refusal() => refused += 1,
                // (asserted after the swapper stopped: a panic here would
                // leave it spinning and the scope waiting forever)
                Err(e) => other.push(e.to_string()),
            }
        }
        stop.store(true, Ordering::Relaxed);
    });
    assert!(other.is_empty(), "errors that are not refusals: {other:?}");
    assert_eq!(std::fs::read_dir(victim.join("sub")).unwrap().count(), 0);
    assert!(
        ok > 0 && refused > 0,
        "the race was not run: {ok} ok, {refused} refused"
    );
}

#[test]
fn appending_refuses_a_hard_link_and_a_fifo() {
    let t = tempfile::tempdir().unwrap();
    let d = SafeDir::open(t.path(), DirPolicy::Strict).unwrap();
    std::fs::write(t.path().join("victim"), "precious").unwrap();
    std::fs::hard_link(t.path().join("victim"), t.path().join("out.log")).unwrap();
    let e = d.open_append("out.log").unwrap_err();
    assert!(e.to_string().contains("2 hard links"), "{e}");
    let fifo = t.path().join("fifo");
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o644),
        0,
    )
    .unwrap();
    // Refused at once (no reader: ENXIO), never blocking.
    assert!(d.open_append("fifo").is_err());
    assert_eq!(
        std::fs::read_to_string(t.path().join("victim")).unwrap(),
        "precious"
    );
    // A file of its own is appended to.
    use std::io::Write;
    d.open_append("mine.log").unwrap().write_all(b"a").unwrap();
    d.open_append("mine.log").unwrap().write_all(b"b").unwrap();
    assert_eq!(
        std::fs::read_to_string(t.path().join("mine.log")).unwrap(),
        "ab"
    );
}

#[test]
fn appending_refuses_another_users_file() {
    let t = tempfile::tempdir().unwrap();
    let d = SafeDir::open(t.path(), DirPolicy::Strict).unwrap();
    let f = t.path().join("theirs.log");
    std::fs::write(&f, "").unwrap();
    let me = rustix::process::geteuid().as_raw();
    let other = if me == 0 { 2345 } else { 0 };
    match rustix::fs::chown(&f, Some(rustix::fs::Uid::from_raw(other)), None) {
        Ok(()) => {
            let e = d.open_append("theirs.log").unwrap_err();
            assert!(
                e.to_string().contains(&format!("owned by uid {other}")),
                "{e}"
            );
        }
        // Only root can give a file away; without root, the owner check
        // is covered by the root run of the suite.
        Err(_) => assert_ne!(me, 0),
    }
}

#[test]
fn new_files_are_exclusive_and_never_through_a_link() {
    let t = tempfile::tempdir().unwrap();
    let d = SafeDir::open(t.path(), DirPolicy::Strict).unwrap();
    std::fs::write(t.path().join("victim"), "precious").unwrap();
    symlink(t.path().join("victim"), t.path().join("load.dat")).unwrap();
    assert!(d.create_new_file("load.dat", 0o600, false).is_err());
    symlink(t.path().join("nowhere"), t.path().join("dangling")).unwrap();
    assert!(d.create_new_file("dangling", 0o600, true).is_err());
    assert!(!t.path().join("nowhere").exists());
    d.create_new_file("fresh.dat", 0o600, false).unwrap();
    let m = std::fs::metadata(t.path().join("fresh.dat"))
        .unwrap()
        .mode()
        & 0o7777;
    assert_eq!(m, 0o600);
    assert_eq!(
        std::fs::read_to_string(t.path().join("victim")).unwrap(),
        "precious"
    );
}

#[test]
fn private_dirs_are_fresh_0700_and_removed_without_following_links() {
    let t = tempfile::tempdir().unwrap();
    let outside = t.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    std::fs::write(outside.join("keep"), "precious").unwrap();
    let parent = SafeDir::open(t.path(), DirPolicy::Strict).unwrap();
    let a = PrivateDir::create_in(parent, "rtshield-x-").unwrap();
    let parent = SafeDir::open(t.path(), DirPolicy::Strict).unwrap();
    let b = PrivateDir::create_in(parent, "rtshield-x-").unwrap();
    assert_ne!(a.path(), b.path());
    let name = a.path().file_name().unwrap().to_str().unwrap().to_string();
    let hex = name.strip_prefix("rtshield-x-").unwrap();
    assert!(
        hex.len() == 16 && hex.bytes().all(|c| c.is_ascii_hexdigit()),
        "{name}"
    );
    assert_eq!(std::fs::metadata(a.path()).unwrap().mode() & 0o7777, 0o700);
    // A child opens it again and checks it is private.
    SafeDir::open(a.path(), DirPolicy::Private).unwrap();
    a.dir().write("f", b"1").unwrap();
    a.dir().create_subdir("d", 0o700).unwrap();
    symlink(&outside, a.path().join("d/link")).unwrap();
    a.remove().unwrap();
    b.remove().unwrap();
    assert!(!a.path().exists() && !b.path().exists());
    assert_eq!(
        std::fs::read_to_string(outside.join("keep")).unwrap(),
        "precious"
    );
}

#[test]
fn long_names_are_refused_without_echoing_them_whole() {
    let t = tempfile::tempdir().unwrap();
    let d = SafeDir::open(t.path(), DirPolicy::Strict).unwrap();
    let long = "L".repeat(100_000);
    let e = d.write(&long, b"x").unwrap_err();
    let msg = e.to_string();
    assert!(msg.len() < 200, "{} bytes", msg.len());
    assert!(msg.contains("100000 bytes"), "{msg}");
}

/// Round-2 finding B6: root's earlier directory `r0`, renamed to `r1` by
/// the user who owns the directory above it, is not reused by root: an
/// existing directory under a directory another user may write (owned by
/// them, or group/world-writable without the sticky bit) is refused, for
/// `open`, `open_or_create` and a file's directory; a new one is created
/// there as before, and a sticky parent (`/tmp`) is fine.
#[test]
fn an_existing_directory_below_a_directory_others_can_write_is_refused_as_root() {
    let t = tempfile::tempdir().unwrap();
    let lab = t.path().join("lab");
    std::fs::create_dir_all(lab.join("r1")).unwrap();
    std::fs::write(lab.join("r1/results.json"), "precious").unwrap();
    let root = rustix::process::geteuid().is_root();
    for mode in [0o777, 0o775] {
        std::fs::set_permissions(&lab, std::fs::Permissions::from_mode(mode)).unwrap();
        let opened = [
            SafeDir::open(&lab.join("r1"), DirPolicy::Strict).map(|_| ()),
            SafeDir::open_or_create(&lab.join("r1"), 0o755, DirPolicy::Strict).map(|_| ()),
            write_file(&lab.join("r1/results.json"), b"new", DirPolicy::Strict),
            output_dir(Some(&lab.join("r1")), t.path(), "s", DirPolicy::Strict).map(|_| ()),
        ];
        for r in opened {
            if root {
                let e = r.unwrap_err();
                assert!(e.is_refusal(), "{e}");
                let m = e.to_string();
                assert!(m.contains("already exists") && m.contains(&format!("mode {mode:o}")));
                assert!(m.contains(&lab.display().to_string()), "{m}");
            } else {
                // The rule is root's: only a root process turns another
                // user's rename into a loss of data that user could not
                // touch.
                r.unwrap();
                std::fs::write(lab.join("r1/results.json"), "precious").unwrap();
            }
        }
        assert_eq!(
            std::fs::read_to_string(lab.join("r1/results.json")).unwrap(),
            "precious"
        );
        // A new directory is not made there either (round 5 (A), F22:
        // whoever can write `lab` could rename or replace it), but
        // `--force-unsafe-dir` allows both.
        let new = lab.join(format!("new-{mode:o}"));
        let e = SafeDir::open_or_create(&new, 0o755, DirPolicy::Strict).unwrap_err();
        assert!(e.to_string().contains("would be created in"), "{e}");
        assert!(!new.exists());
        SafeDir::open_or_create(&new, 0o755, DirPolicy::AllowUnsafe).unwrap();
        SafeDir::open(&lab.join("r1"), DirPolicy::AllowUnsafe).unwrap();
    }
    // Sticky (like /tmp): others cannot rename root's entries.
    std::fs::set_permissions(&lab, std::fs::Permissions::from_mode(0o1777)).unwrap();
    SafeDir::open(&lab.join("r1"), DirPolicy::Strict).unwrap();
    // Owned by another user, even 0755.
    std::fs::set_permissions(&lab, std::fs::Permissions::from_mode(0o755)).unwrap();
    SafeDir::open(&lab.join("r1"), DirPolicy::Strict).unwrap();
    if root {
        rustix::fs::chown(&lab, Some(rustix::fs::Uid::from_raw(2345)), None).unwrap();
        let e = SafeDir::open(&lab.join("r1"), DirPolicy::Strict).unwrap_err();
        assert!(e.to_string().contains("owned by uid 2345"), "{e}");
    }
}
