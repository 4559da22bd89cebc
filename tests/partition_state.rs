//! `rtshield partition undo` with a state file that leads outside the
//! places `create` writes: exit 2 naming the entry, nothing changed.

use crate::util::rtshield_at as rtshield;
use rtshield_isolation::{FileChange, Knob, Phase, State};
use rtshield_sys::Hierarchy;
use rtshield_sys::Root;
use rtshield_testkit::{snapshot_tree, FakeSpec, FakeStyle};

#[test]
fn undo_refuses_a_state_that_escapes_with_exit_2() {
    let d = tempfile::tempdir().unwrap();
    let base = d.path().join("tree");
    FakeSpec::standard(FakeStyle::V2).build(&base).unwrap();
    let victim = d.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    let root = Root::new(&base);
    let h = Hierarchy::detect(&root).unwrap();
    let m = h.mount.clone();
    let state = State {
        version: 1,
        phase: Phase::Complete,
        created_unix: 0,
        hierarchy: h,
        parent: m.clone(),
        rt_dir: format!("{m}/rt"),
        nrt_dir: format!("{m}/nrt"),
        rt_cpus: "3".into(),
        nrt_cpus: "0-2".into(),
        dirs: vec![],
        files: vec![FileChange {
            knob: Knob::Irq,
            path: "/proc/irq/../../../victim".into(),
            old: Some("pwned\n".into()),
            new: "x\n".into(),
            restore: None,
        }],
        tasks: vec![],
        refused: Default::default(),
    };
    state.save(&root, "/run/rtshield/partition.json").unwrap();
    let before = snapshot_tree(&base);
    let o = rtshield(&base, &["partition", "undo"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("files[0].path \"/proc/irq/../../../victim\": path contains `..`")
            && err.contains("nothing was changed"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    assert!(rtshield_testkit::diff_trees(&before, &snapshot_tree(&base)).is_empty());
    assert!(
        base.join("run/rtshield/partition.json").is_file(),
        "state kept"
    );
}
