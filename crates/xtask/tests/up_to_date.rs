//! The committed man pages and completions (dist/) are what the current
//! CLI generates, byte for byte.

use std::path::Path;

const HINT: &str = "dist/ is out of date: run `cargo run -p rtshield-xtask -- dist` and commit it";

#[test]
fn dist_is_up_to_date() {
    let dist = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../dist");
    let tmp = tempfile::tempdir().unwrap();
    rtshield_xtask::write(tmp.path()).unwrap();
    for sub in ["man", "completions"] {
        let fresh = list(&tmp.path().join(sub));
        let committed = list(&dist.join(sub));
        assert_eq!(fresh, committed, "{HINT} (file list of dist/{sub})");
        for name in &fresh {
            let a = std::fs::read(tmp.path().join(sub).join(name)).unwrap();
            let b = std::fs::read(dist.join(sub).join(name)).unwrap();
            assert!(a == b, "{HINT} (dist/{sub}/{name} differs)");
        }
    }
}

#[test]
fn pages_cover_every_subcommand_and_key() {
    let tree = rtshield_xtask::generate().unwrap();
    let man = &tree.iter().find(|(d, _)| *d == "man").unwrap().1;
    let names: Vec<&str> = man.iter().map(|(n, _)| n.as_str()).collect();
    for want in [
        "rtshield.1",
        "rtshield-measure.1",
        "rtshield-run.1",
        "rtshield-simulate.1",
        "rtshield-partition.1",
        "rtshield-partition-create.1",
        "rtshield.conf.5",
    ] {
        assert!(names.contains(&want), "{want} missing from {names:?}");
    }
    // The internal worker subcommand is hidden: no page for it.
    assert!(!names.iter().any(|n| n.contains("__load")), "{names:?}");
    let conf = String::from_utf8(
        man.iter()
            .find(|(n, _)| n == "rtshield.conf.5")
            .unwrap()
            .1
            .clone(),
    )
    .unwrap();
    assert!(conf.contains("\n.TH RTSHIELD.CONF 5 "), "no title line");
    for k in rtshield_config::KEYS {
        assert!(
            conf.contains(&format!("\\fB{}\\fR", k.key)),
            "key {} missing",
            k.key
        );
    }
    let comp = &tree.iter().find(|(d, _)| *d == "completions").unwrap().1;
    let bash = String::from_utf8(
        comp.iter()
            .find(|(n, _)| n == "rtshield.bash")
            .unwrap()
            .1
            .clone(),
    )
    .unwrap();
    assert!(
        bash.contains("complete -F _rtshield"),
        "bash completion registers no function"
    );
    assert!(
        bash.contains("simulate"),
        "bash completion lacks subcommands"
    );
}

/// File names in `dir`, sorted (empty when `dir` does not exist).
fn list(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}
