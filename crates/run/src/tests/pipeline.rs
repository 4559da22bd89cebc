//! The result writer survives failed writes (issue 11 item 5): every file
//! is tried, failures are recorded, retried at the end, then written to a
//! fallback directory.

use crate::pipeline::ResultWriter;
use rtshield_results::{ExportManager, JSON_FILE};
use rtshield_safefs::{DirPolicy, SafeDir};
use std::rc::Rc;

fn dir(p: &std::path::Path) -> Rc<SafeDir> {
    Rc::new(SafeDir::open_or_create(p, 0o755, DirPolicy::Strict).unwrap())
}

#[test]
fn a_failed_write_is_retried_at_the_end() {
    let t = tempfile::tempdir().unwrap();
    let res = rtshield_results::example_result();
    let ex = ExportManager::all();
    let d = dir(&t.path().join("out"));
    let mut w = ResultWriter::new().with_fallback_parents(vec![t.path().join("fb")]);
    let mut tried = Vec::new();
    // The disk is "full" for the JSON file only: the others are written.
    w.write_with(&ex, &res, Some(d.clone()), d.path(), |d, name, bytes| {
        tried.push(name.to_string());
        if name == JSON_FILE {
            Err(format!("cannot write {}: No space left on device", name))
        } else {
            d.write(name, bytes).map_err(|e| e.to_string())
        }
    });
    assert_eq!(tried, ex.file_names(&res), "every file is tried");
    assert!(!d.exists(JSON_FILE));
    assert!(d.exists("results.csv"));
    assert_eq!(w.errors.len(), 1, "{:?}", w.errors);
    assert!(w.errors[0].contains("No space left"), "{:?}", w.errors);
    let missing = w.finish();
    assert!(missing.is_empty(), "the retry worked: {missing:?}");
    let json = std::fs::read_to_string(t.path().join("out").join(JSON_FILE)).unwrap();
    assert_eq!(json, rtshield_results::to_json(&res));
    assert!(!t.path().join("fb").exists(), "no fallback needed");
}

#[test]
fn what_cannot_be_retried_goes_to_the_fallback_directory() {
    let t = tempfile::tempdir().unwrap();
    let res = rtshield_results::example_result();
    let ex = ExportManager::all();
    let gone = t.path().join("gone");
    let d = dir(&gone);
    // The directory disappears: neither the write nor the retry can work.
    std::fs::remove_dir(&gone).unwrap();
    // The first fallback parent cannot be a directory (a regular file).
    std::fs::write(t.path().join("file"), "").unwrap();
    let mut w = ResultWriter::new()
        .with_fallback_parents(vec![t.path().join("file"), t.path().to_path_buf()]);
    w.write(&ex, &res, Some(d.clone()), &gone);
    let names = ex.file_names(&res);
    assert_eq!(w.errors.len(), names.len(), "{:?}", w.errors);
    let missing = w.finish();
    assert_eq!(missing.len(), names.len());
    for (m, name) in missing.iter().zip(&names) {
        assert_eq!(m.wanted, gone.join(name));
        let at = m.fallback.as_ref().expect("written to the fallback");
        // A fresh private directory with an unpredictable name, never a
        // fixed `rtshield-fallback` another user could have made first.
        let rel = at.strip_prefix(t.path()).unwrap();
        let top = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_str()
            .unwrap();
        let hex = top
            .strip_prefix("rtshield-fallback-")
            .unwrap_or_else(|| panic!("{}", at.display()));
        assert!(
            hex.len() == 16 && hex.bytes().all(|b| b.is_ascii_hexdigit()),
            "{}",
            at.display()
        );
        use std::os::unix::fs::MetadataExt;
        assert_eq!(
            std::fs::metadata(t.path().join(top)).unwrap().mode() & 0o7777,
            0o700
        );
        assert!(at.ends_with(format!("gone/{name}")), "{}", at.display());
    }
    let json = std::fs::read_to_string(missing[0].fallback.as_ref().unwrap()).unwrap();
    assert_eq!(json, rtshield_results::to_json(&res));
    // The error names the fallback file.
    let last = w.errors.last().unwrap();
    assert!(
        last.contains("written to") && last.contains("rtshield-fallback"),
        "{last}"
    );
}

#[test]
fn a_missing_directory_sends_the_files_to_the_fallback() {
    let t = tempfile::tempdir().unwrap();
    let res = rtshield_results::example_result();
    let ex = ExportManager::new();
    let mut w = ResultWriter::new().with_fallback_parents(vec![t.path().to_path_buf()]);
    w.write(&ex, &res, None, &t.path().join("part-3"));
    let missing = w.finish();
    assert_eq!(missing.len(), 1);
    let at = missing[0].fallback.as_ref().unwrap();
    assert!(at.ends_with("part-3/results.json"), "{}", at.display());
    assert!(at.is_file());
}

/// Issue 21 finding 6 (n06): another user made `rtshield-fallback` first
/// (in every candidate parent). The fallback is a fresh private directory
/// anyway: nothing goes into the squatted one and nothing is lost.
#[test]
fn a_squatted_fallback_name_is_never_used() {
    use std::os::unix::fs::PermissionsExt;
    let t = tempfile::tempdir().unwrap();
    let squat = t.path().join("rtshield-fallback");
    std::fs::create_dir(&squat).unwrap();
    std::fs::set_permissions(&squat, std::fs::Permissions::from_mode(0o777)).unwrap();
    // Another user's (as root); mode 0777 refuses it either way.
    let _ = std::os::unix::fs::chown(&squat, Some(2345), None);
    let res = rtshield_results::example_result();
    let ex = ExportManager::new();
    let mut w = ResultWriter::new().with_fallback_parents(vec![t.path().to_path_buf()]);
    w.write(&ex, &res, None, &t.path().join("out"));
    let missing = w.finish();
    let at = missing[0]
        .fallback
        .as_ref()
        .expect("results kept somewhere");
    assert!(at.is_file(), "{}", at.display());
    assert!(!at.starts_with(&squat), "{}", at.display());
    assert_eq!(std::fs::read_dir(&squat).unwrap().count(), 0);
}
