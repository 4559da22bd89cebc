//! The directories above an existing output directory (round-2 finding
//! B6). Checking the output directory itself is not enough: a user who can
//! write one of the directories above it (a lab share, their own
//! directory under `/tmp`) cannot touch root's files, but can *rename*
//! root's earlier directory (`r0`) to the name root is about to use
//! (`r1`); root would then replace or delete its own earlier results. So,
//! as root, an **existing** directory is used only when every directory
//! above it is root's (or the caller's) and writable by nobody else, or
//! sticky (`/tmp`: others cannot rename root's entries). A directory that
//! rtshield has just created is its own and needs no such check.

use crate::dir::{trusted_owner, DIR_FLAGS};
use crate::error::{io_err, Result, SafeError};
use crate::resolve;
use rustix::fs::{self as rfs, Mode, CWD};
use std::ffi::OsStr;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// Whether the rule applies: only a root process turns another user's
/// rename into the loss of data that user could not touch.
pub(crate) fn applies() -> bool {
    rustix::process::geteuid().is_root()
}

/// Check the directories above the existing directory open at `fd`,
/// which was reached by `path`. The path is made absolute (the current
/// directory's path from the kernel), then walked from `/` one
/// descriptor at a time (no link followed), each directory checked before
/// the next is opened from it; the last one reached must be `fd`'s
/// directory (else something moved while checking: refused too).
pub(crate) fn check(fd: impl AsFd, path: &Path) -> Result<()> {
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .map_err(|e| io_err(Path::new("."), e))?
            .join(path)
    };
    let p = resolve::parse(&abs)?;
    let mut cur: OwnedFd =
        rfs::openat(CWD, "/", DIR_FLAGS, Mode::empty()).map_err(|e| io_err(&abs, e))?;
    for (i, name) in p.names.iter().enumerate() {
        check_one(&cur, &p.prefix(i), path)?;
        cur = rfs::openat(&cur, OsStr::from_bytes(name), DIR_FLAGS, Mode::empty())
            .map_err(|_| moved(path))?;
    }
    let (a, b) = (
        rfs::fstat(&cur).map_err(|e| io_err(path, e))?,
        rfs::fstat(fd).map_err(|e| io_err(path, e))?,
    );
    if (a.st_dev, a.st_ino) != (b.st_dev, b.st_ino) {
        return Err(moved(path));
    }
    Ok(())
}

/// One directory above `dir` (shown as `shown`).
fn check_one(above: &OwnedFd, shown: &Path, dir: &Path) -> Result<()> {
    let st = rfs::fstat(above).map_err(|e| io_err(shown, e))?;
    let mode = st.st_mode & 0o7777;
    let sticky = mode & 0o1000 != 0;
    let who = if !trusted_owner(st.st_uid) {
        format!("is owned by uid {} (mode {mode:o})", st.st_uid)
    } else if mode & 0o022 != 0 && !sticky {
        let by = if mode & 0o002 != 0 {
            "everyone"
        } else {
            "its group"
        };
        format!("is writable by {by} (mode {mode:o}) and has no sticky bit")
    } else {
        return Ok(());
    };
    Err(SafeError::Unsafe {
        path: dir.to_path_buf(),
        why: format!(
            "it already exists and the directory above it, {}, {who}: that user could \
             have renamed another of your directories to this name, and its files would \
             be replaced (give a new directory, which rtshield creates, or one below \
             directories only root can change)",
            shown.display()
        ),
    })
}

fn moved(path: &Path) -> SafeError {
    SafeError::Unsafe {
        path: path.to_path_buf(),
        why: "it or a directory above it was moved while being checked".into(),
    }
}
