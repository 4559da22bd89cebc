//! The manifest of a run directory, `.rtshield-files` (adversary round 5
//! (A), F17): which files this run wrote, with their sizes.
//!
//! `measure --out DIR` or `run --out DIR` into a directory that already
//! holds files left the earlier run's (a `timer_thread01.txt` of a thread
//! this run does not have, a `timeline.csv` this run did not write, a
//! planted file of a name rtshield writes), and `report DIR` read them
//! back as part of the new run. So:
//!
//! - when a run opens its output directory ([`begin`]), the files the
//!   previous manifest names are removed (regular files only, of names a
//!   run writes, by `unlinkat`: a link is removed, never followed), and
//!   what is there then is noted (by inode);
//! - when the run has written its files ([`finish`]), the manifest is
//!   written last, atomically: every regular file that is new or
//!   replaced since [`begin`], with its size;
//! - a reader of a run directory ([`listed`]) reads a file beside
//!   results.json (the timeline) only when the manifest names it with the
//!   size it has; anything else is left out, and said. A directory without
//!   manifest (an older rtshield's, a cyclictest run) is read as before.

use rtshield_safefs::{FileId, SafeDir};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Mutex;

/// The manifest's name.
pub const RUN_MANIFEST: &str = ".rtshield-files";

/// Largest manifest read (a run of 8192 threads lists about 8200 files).
const MANIFEST_LIMIT: u64 = 1 << 20;

/// What [`begin`] saw in each directory, by the directory's identity: the
/// run's files are written through several handles to the directory
/// (timeline, exports, checkpoints), which share nothing else.
static BEFORE: Mutex<Option<HashMap<FileId, BTreeMap<String, FileId>>>> = Mutex::new(None);

/// Whether `name` is one a run writes, so that a manifest naming it may
/// get it removed on reuse (never a name the user chose: a planted
/// manifest in a directory opened with `--force-unsafe-dir` cannot get
/// `thesis.tex` deleted).
pub fn is_run_file_name(name: &str) -> bool {
    const FIXED: &[&str] = &[
        crate::JSON_FILE,
        crate::CSV_FILE,
        crate::HIST_FILE,
        crate::TIMELINE_FILE,
        crate::KCIDB_FILE,
        crate::JUNIT_FILE,
        crate::CYCLICTEST_JSON_FILE,
        crate::OPENMETRICS_FILE,
        crate::SPIKES_JSON,
        crate::SPIKES_TXT,
        crate::TRACE_TXT,
    ];
    if FIXED.contains(&name) {
        return true;
    }
    name.strip_prefix("timer_thread")
        .and_then(|r| r.strip_suffix(".txt"))
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The names and sizes a manifest lists (`NAME<TAB>SIZE` lines; `#`
/// comments).
pub fn parse_manifest(text: &str) -> BTreeMap<String, u64> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let (n, s) = l.rsplit_once('\t')?;
            Some((n.to_string(), s.parse().ok()?))
        })
        .collect()
}

/// A run starts writing into `dir`: remove the files of the previous
/// manifest (and the manifest), and note what is left. Returns the names
/// of what is left that a run writes (files of another origin, which no
/// reader takes as this run's): for a note.
pub fn begin(dir: &SafeDir) -> Vec<String> {
    if let Ok(bytes) = dir.read(RUN_MANIFEST, MANIFEST_LIMIT) {
        for name in parse_manifest(&String::from_utf8_lossy(&bytes)).keys() {
            if is_run_file_name(name) && dir.entry(name).is_some_and(|e| e.is_file) {
                let _ = dir.remove_file(name);
            }
        }
    }
    let _ = dir.remove_file(RUN_MANIFEST);
    let now = dir.regular_files().unwrap_or_default();
    let left = now
        .keys()
        .filter(|n| is_run_file_name(n))
        .cloned()
        .collect();
    if let Ok(id) = dir.id() {
        let ids = now.into_iter().map(|(n, (id, _))| (n, id)).collect();
        BEFORE
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_or_insert_with(HashMap::new)
            .insert(id, ids);
    }
    left
}

/// The run has written its files into `dir`: write the manifest, last and
/// atomically, naming every regular file new or replaced since [`begin`]
/// (all of them when [`begin`] was not called here: a resumed run, whose
/// directory is its own). Temporary files and the manifest are not listed.
pub fn finish(dir: &SafeDir) -> Result<(), rtshield_safefs::SafeError> {
    let before = dir.id().ok().and_then(|id| {
        BEFORE
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()?
            .get(&id)
            .cloned()
    });
    let mut text = String::from(
        "# rtshield: the files this run wrote here (name, bytes); readers take no other\n",
    );
    for (name, (id, size)) in dir.regular_files()? {
        let old = before.as_ref().and_then(|b| b.get(&name)) == Some(&id);
        let temp = rtshield_safefs::temp_target(&name).is_some();
        if old || temp || name == RUN_MANIFEST {
            continue;
        }
        text.push_str(&format!("{name}\t{size}\n"));
    }
    dir.write(RUN_MANIFEST, text.as_bytes())
}

/// What the manifest of the run directory `dir` lists (name → size), or
/// `None` when there is none (an older rtshield's directory: read as
/// before). The manifest is an input like any other (no link, the rule of
/// a directory others control).
pub fn listed(dir: &Path) -> Option<BTreeMap<String, u64>> {
    let bytes = rtshield_safefs::read_input(&dir.join(RUN_MANIFEST), MANIFEST_LIMIT).ok()?;
    Some(parse_manifest(&String::from_utf8_lossy(&bytes)))
}

/// Whether the run of `dir` (its manifest `listed`) wrote `name` as it is
/// now (same size): `Ok(())`, or why not, for a message.
pub fn check_listed(listed: &BTreeMap<String, u64>, name: &str, size: u64) -> Result<(), String> {
    match listed.get(name) {
        None => Err(format!(
            "not one of the files the run wrote (not in {RUN_MANIFEST})"
        )),
        Some(s) if *s != size => Err(format!(
            "changed since the run wrote it ({size} bytes, {RUN_MANIFEST} says {s})"
        )),
        Some(_) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f17_a_reused_directory_keeps_only_what_the_new_run_wrote() {
        let t = tempfile::tempdir().unwrap();
        let d = SafeDir::open(t.path(), rtshield_safefs::DirPolicy::Strict).unwrap();
        // An earlier run: two threads and a timeline, its manifest.
        begin(&d);
        for n in [
            "results.json",
            "timer_thread00.txt",
            "timer_thread01.txt",
            "timeline.csv",
        ] {
            d.write(n, b"old").unwrap();
        }
        finish(&d).unwrap();
        let m = listed(t.path()).unwrap();
        assert_eq!(m.len(), 4, "{m:?}");
        // Foreign files: the user's notes, a planted run file.
        std::fs::write(t.path().join("notes.txt"), "mine").unwrap();
        // The next run, with one thread and no timeline.
        begin(&d);
        assert!(!t.path().join("timer_thread01.txt").exists());
        assert!(!t.path().join("timeline.csv").exists());
        assert!(t.path().join("notes.txt").exists());
        std::fs::write(t.path().join("spikes.txt"), "planted").unwrap();
        d.write("results.json", b"new").unwrap();
        d.write("timer_thread00.txt", b"new!").unwrap();
        finish(&d).unwrap();
        let m = listed(t.path()).unwrap();
        // spikes.txt appeared after begin (not ours, but new): listed;
        // what was there before begin and untouched is not.
        assert_eq!(m.get("results.json"), Some(&3));
        assert_eq!(m.get("timer_thread00.txt"), Some(&4));
        assert!(!m.contains_key("notes.txt") && !m.contains_key("timeline.csv"));
        assert!(check_listed(&m, "timeline.csv", 3).is_err());
        assert!(check_listed(&m, "results.json", 9)
            .unwrap_err()
            .contains("changed"));
        // A manifest naming someone's file gets nothing but run files removed.
        d.write(RUN_MANIFEST, b"notes.txt\t4\n../x\t1\n").unwrap();
        begin(&d);
        assert!(t.path().join("notes.txt").exists());
    }

    #[test]
    fn run_file_names() {
        for n in [
            "results.json",
            "timer_thread00.txt",
            "timer_thread8191.txt",
            "timeline.csv",
        ] {
            assert!(is_run_file_name(n), "{n}");
        }
        for n in [
            "timer_thread.txt",
            "timer_threadx.txt",
            "notes.txt",
            "../results.json",
        ] {
            assert!(!is_run_file_name(n), "{n}");
        }
    }
}
