//! `rtshield report -o DIR` refuses output directories others could
//! redirect (exit 2), and `--force-unsafe-dir` accepts a shared one.

use crate::util::rtshield;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};

fn idle() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/report/real/idle")
}

#[test]
fn shared_or_linked_output_dirs_are_refused_unless_forced() {
    let d = tempfile::tempdir().unwrap();
    let input = idle();
    let input = input.to_str().unwrap();
    let shared = d.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o777)).unwrap();
    let s = shared.to_str().unwrap();

    let o = rtshield(&["report", input, "-o", s, "--format", "md"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("mode 777") && err.contains("--force-unsafe-dir"),
        "{err}"
    );
    assert_eq!(std::fs::read_dir(&shared).unwrap().count(), 0);

    let o = rtshield(&[
        "report",
        input,
        "-o",
        s,
        "--format",
        "md",
        "--force-unsafe-dir",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(shared.join("summary.md").is_file());

    // A link is refused even when forced: it is never written through.
    let link = d.path().join("link");
    symlink(&shared, &link).unwrap();
    let before = std::fs::read(shared.join("summary.md")).unwrap();
    let o = rtshield(&[
        "report",
        input,
        "-o",
        link.to_str().unwrap(),
        "--format",
        "csv",
        "--force-unsafe-dir",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("symbolic link"), "{err}");
    assert!(!shared.join("summary.csv").exists());
    assert_eq!(std::fs::read(shared.join("summary.md")).unwrap(), before);
}
