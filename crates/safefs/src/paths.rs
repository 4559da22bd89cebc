//! Paths the user gives: the output directory of a run, a single output
//! file, and the leftovers of interrupted writes.

use crate::dir::{DirPolicy, SafeDir};
use crate::error::Result;
use std::path::{Path, PathBuf};

/// Open the directory results go to.
///
/// - `out` given and existing: opened and checked against `policy` (a
///   directory owned by someone else, or writable by others without the
///   sticky bit, is refused under [`DirPolicy::Strict`]);
/// - `out` given and missing: created (with missing parents), mode 0755;
/// - `out` not given: `default_parent` (e.g. `rtshield-results`) is opened or
///   created and checked, then a fresh subdirectory `stamp`, `stamp-1`, … is
///   created with `mkdir`, so the directory is always new and the caller's.
pub fn output_dir(
    out: Option<&Path>,
    default_parent: &Path,
    stamp: &str,
    policy: DirPolicy,
) -> Result<SafeDir> {
    match out {
        Some(p) => SafeDir::open_or_create(p, 0o755, policy),
        None => {
            let parent = SafeDir::open_or_create(default_parent, 0o755, policy)?;
            let (d, _) = parent.create_unique_subdir(stamp, 0o755)?;
            Ok(d)
        }
    }
}

/// Split `path` into the directory to open (`.` for a bare name) and the
/// file name to write there.
pub fn split_file_path(path: &Path) -> (PathBuf, String) {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    (dir, name)
}

/// Write `bytes` to the file `path` the one safe way: its directory opened
/// and checked against `policy`, then [`SafeDir::write`] (temporary file,
/// fsync, rename, directory fsync). For the single-file options
/// (`--json FILE`, `export -o FILE`, `stat --record FILE`).
pub fn write_file(path: &Path, bytes: &[u8], policy: DirPolicy) -> Result<()> {
    let (dir, name) = crate::resolve::split_file(path)?;
    SafeDir::open(&dir, policy)?.write(&name, bytes)
}

/// The directory and the name of the file `path`, as the path layer cuts
/// it: `a/./f` is `a` + `f`, a bare `f` is `.` + `f`; a path ending in
/// `/` or `/.`, or holding `..`, is refused.
pub fn file_parts(path: &Path) -> Result<(PathBuf, String)> {
    let (dir, name) = crate::resolve::split_file(path)?;
    crate::error::check_name(&name)?;
    Ok((dir, name))
}

/// Open the directory of the file `path` through the path layer (checked
/// against `policy`) and return it with the file's name: for a file that is
/// written more than once (`--metrics-file`, a program's output), so every
/// write goes through the one descriptor. `a/./f` is `a` + `f`; a path
/// ending in `/` or `/.` is refused (it names no file).
pub fn open_file_dir(path: &Path, policy: DirPolicy) -> Result<(SafeDir, String)> {
    let (dir, name) = file_parts(path)?;
    Ok((SafeDir::open(&dir, policy)?, name))
}

/// The final name a temporary file of [`SafeDir::write`] was for
/// (`.NAME.<16 hex>.tmp` → `NAME`): a leftover of an interrupted write.
pub fn temp_target(name: &str) -> Option<&str> {
    let rest = name.strip_prefix('.')?.strip_suffix(".tmp")?;
    let (stem, hex) = rest.rsplit_once('.')?;
    let ok = hex.len() == 16 && hex.bytes().all(|b| b.is_ascii_hexdigit()) && !stem.is_empty();
    ok.then_some(stem)
}
