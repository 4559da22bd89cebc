//! Read-only partition commands work without root (issue 23 item 7):
//! `partition status`, `list` and `create --dry-run` failed for another
//! user with `/run/rtshield: Permission denied` (the state directory is
//! root's, mode 0700). They now show what the cgroups say and note what
//! only root can read; the commands that change something say in one
//! line that they need root. Run as `nobody` through `setpriv`.

use crate::util::*;
use rtshield_testkit::{FakeSpec, FakeStyle as Style};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Output;

const NOBODY: &str = "65534";

/// `rtshield ARGS` as user `nobody` (no groups), in the kit's private
/// environment (its home is root's, closed to nobody: nothing reads it).
fn as_nobody(args: &[&str]) -> Output {
    wrapped(&[
        "setpriv",
        "--reuid",
        NOBODY,
        "--regid",
        NOBODY,
        "--clear-groups",
        "--",
    ])
    .args(args)
    .output()
    .expect("run setpriv")
}

fn no_permission_error(o: &Output) {
    let t = all_text(o);
    assert!(!t.contains("Permission denied"), "{t}");
}

/// A fake tree nobody may read, with root's state directory (0700).
fn readable_tree(d: &Path) -> String {
    std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755)).unwrap();
    FakeSpec::standard(Style::V1Prefix).build(d).unwrap();
    d.to_str().unwrap().to_string()
}

#[test]
fn status_list_and_dry_run_work_for_another_user_on_a_fake_tree() {
    if !require_root("setpriv to another user") || !require_tool("setpriv", "--version") {
        return;
    }
    // A partitioned tree: its state is root's.
    let a = tempfile::tempdir().unwrap();
    let t = readable_tree(a.path());
    let o = rtshield_at(a.path(), &["partition", "create", "3"]);
    assert!(o.status.success(), "{}", all_text(&o));
    let run = a.path().join("run/rtshield");
    assert_eq!(
        std::fs::metadata(&run).unwrap().permissions().mode() & 0o777,
        0o700
    );

    let o = as_nobody(&["--sysroot", &t, "partition", "status"]);
    assert_eq!(o.status.code(), Some(0), "{}", all_text(&o));
    no_permission_error(&o);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("state: unknown"), "{out}");
    assert!(out.contains("rt   CPUs 3"), "{out}");
    assert!(out.contains("readable by root only"), "{out}");

    let o = as_nobody(&["--sysroot", &t, "partition", "list"]);
    assert_eq!(o.status.code(), Some(0), "{}", all_text(&o));
    no_permission_error(&o);
    assert!(all_text(&o).contains("rt 3  nrt 0-2"), "{}", all_text(&o));
    assert!(
        all_text(&o).contains("state not readable"),
        "{}",
        all_text(&o)
    );

    // An unpartitioned tree with root's (empty) state directory.
    let b = tempfile::tempdir().unwrap();
    let t = readable_tree(b.path());
    std::fs::create_dir_all(b.path().join("run/rtshield")).unwrap();
    std::fs::set_permissions(
        b.path().join("run/rtshield"),
        std::fs::Permissions::from_mode(0o700),
    )
    .unwrap();
    let o = as_nobody(&["--sysroot", &t, "partition", "create", "3", "--dry-run"]);
    assert_eq!(o.status.code(), Some(0), "{}", all_text(&o));
    no_permission_error(&o);
    assert!(all_text(&o).contains("Would partition"), "{}", all_text(&o));
    assert!(
        all_text(&o).contains("readable by root only"),
        "{}",
        all_text(&o)
    );
}

#[test]
fn on_this_machine_another_user_reads_and_is_told_what_needs_root() {
    if !require_root("setpriv to another user") || !require_tool("setpriv", "--version") {
        return;
    }
    for args in [
        vec!["partition", "status"],
        vec!["partition", "list"],
        vec!["partition", "list", "--json"],
    ] {
        let o = as_nobody(&args);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", all_text(&o));
        no_permission_error(&o);
    }
    // A dry run of the whole machine changes nothing and needs no root.
    let o = as_nobody(&["partition", "create", "1", "--dry-run"]);
    no_permission_error(&o);
    assert!(all_text(&o).contains("Dry run"), "{}", all_text(&o));
    // What writes says so, in one line.
    for (args, what) in [
        (
            vec!["partition", "create", "1"],
            "partition create needs root",
        ),
        (vec!["partition", "undo"], "partition undo needs root"),
        (
            vec!["partition", "move", "rt", "1"],
            "partition move needs root",
        ),
        (
            vec!["partition", "run", "rt", "--", "true"],
            "partition run needs root",
        ),
    ] {
        let o = as_nobody(&args);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", all_text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(what), "{args:?}: {err}");
    }
}
