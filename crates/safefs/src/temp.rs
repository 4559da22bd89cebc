//! Private temporary places: where root puts the io load's files and the
//! results a full disk kept out of their directory.
//!
//! A fixed or guessable name in a shared directory (`/tmp/rtshield-fallback`,
//! `$TMPDIR/rtshield-io-PID-N`) can be taken first by another user, or
//! swapped for a link while root works in it. So a temporary place is
//! always a **fresh** directory, mode 0700, whose name ends in 64 random
//! bits, made with `mkdir` (which fails rather than reuse anything) in a
//! parent that passes the path rules; everything in it is done through its
//! descriptor. `$TMPDIR` is used only when it passes those rules too (under
//! `sudo -E` it may be another user's directory).

use crate::dir::{DirPolicy, SafeDir, DIR_FLAGS};
use crate::error::{check_name, io_err, Result, SafeError};
use crate::file::random_hex;
use rustix::fs::{self as rfs, AtFlags, Mode};
use rustix::io::Errno;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};

/// Directories temporary places may be made in, best first, each opened
/// through the path layer and checked like an output directory
/// ([`DirPolicy::Strict`]).
#[derive(Debug)]
pub struct TempParents {
    /// `$TMPDIR` (when set and it passes), `/tmp`, `/dev/shm` (those that pass).
    pub dirs: Vec<SafeDir>,
    /// Why a candidate was not used (`TMPDIR=...: it is owned by uid 1000`),
    /// for a message; missing `/tmp` or `/dev/shm` are not mentioned.
    pub skipped: Vec<String>,
}

/// The candidates for temporary places: `$TMPDIR` if set and it passes the
/// path rules, then `/tmp`, then `/dev/shm`.
pub fn temp_parents() -> TempParents {
    let mut dirs = Vec::new();
    let mut skipped = Vec::new();
    if let Some(t) = std::env::var_os("TMPDIR").filter(|t| !t.is_empty()) {
        let p = PathBuf::from(&t);
        match SafeDir::open(&p, DirPolicy::Strict) {
            Ok(d) => dirs.push(d),
            Err(e) => skipped.push(format!("TMPDIR={} not used: {}", p.display(), e.why())),
        }
    }
    for p in ["/tmp", "/dev/shm"] {
        match SafeDir::open(Path::new(p), DirPolicy::Strict) {
            Ok(d) => dirs.push(d),
            Err(e) if e.io_kind() == Some(std::io::ErrorKind::NotFound) => {}
            Err(e) => skipped.push(format!("{p} not used: {}", e.why())),
        }
    }
    TempParents { dirs, skipped }
}

/// A fresh private directory (mode 0700, random name) and the parent it
/// was made in. Removed with [`PrivateDir::remove`] (never on drop: the
/// full-disk fallback keeps its results).
#[derive(Debug)]
pub struct PrivateDir {
    parent: SafeDir,
    name: String,
    dir: SafeDir,
}

impl PrivateDir {
    /// Make `PREFIX<16 hex digits>` in the first of [`temp_parents`] where
    /// it can be made.
    pub fn create(prefix: &str) -> Result<PrivateDir> {
        let parents = temp_parents();
        let mut last = None;
        for parent in parents.dirs {
            match PrivateDir::create_in(parent, prefix) {
                Ok(d) => return Ok(d),
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| {
            io_err(
                Path::new("/tmp"),
                std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    format!(
                        "no directory for temporary files ({})",
                        parents.skipped.join("; ")
                    ),
                ),
            )
        }))
    }

    /// Make `PREFIX<16 hex digits>` in `parent`.
    pub fn create_in(parent: SafeDir, prefix: &str) -> Result<PrivateDir> {
        let (dir, name) = parent.create_private_subdir(prefix)?;
        Ok(PrivateDir { parent, name, dir })
    }

    /// The directory, for every operation in it.
    pub fn dir(&self) -> &SafeDir {
        &self.dir
    }

    /// Where it is (for messages, and for a child process that opens it
    /// again with [`DirPolicy::Private`]).
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Remove it and everything in it, through the descriptors (nothing is
    /// resolved by path, no link followed).
    pub fn remove(&self) -> Result<()> {
        self.parent.remove_tree(&self.name)
    }
}

impl SafeDir {
    /// Create a fresh subdirectory `PREFIX<16 hex digits>`, mode 0700:
    /// `mkdir` fails on anything already there, so it is new and ours.
    pub fn create_private_subdir(&self, prefix: &str) -> Result<(SafeDir, String)> {
        for _ in 0..16 {
            let name = format!("{prefix}{}", random_hex());
            match self.create_subdir(&name, 0o700) {
                Ok(d) => return Ok((d, name)),
                Err(e) if e.io_kind() == Some(std::io::ErrorKind::AlreadyExists) => {}
                Err(e) => return Err(e),
            }
        }
        Err(io_err(
            &self.display_path(prefix),
            std::io::Error::new(std::io::ErrorKind::AlreadyExists, "no free name"),
        ))
    }

    /// Remove the entry `name` and, if it is a directory, everything in it
    /// (depth at most 16), each step relative to a descriptor: a link is
    /// removed, never followed. Missing is not an error.
    pub fn remove_tree(&self, name: &str) -> Result<()> {
        check_name(name)?;
        remove_at(&self.fd, name, &self.display_path(name), 0)
    }
}

fn remove_at(dir: &OwnedFd, name: &str, shown: &Path, depth: u32) -> Result<()> {
    let sub = match rfs::openat(dir, name, DIR_FLAGS, Mode::empty()) {
        Ok(fd) => fd,
        Err(Errno::NOENT) => return Ok(()),
        // A file or a link: unlinked as such.
        Err(Errno::LOOP | Errno::NOTDIR) => {
            return match rfs::unlinkat(dir, name, AtFlags::empty()) {
                Ok(()) | Err(Errno::NOENT) => Ok(()),
                Err(e) => Err(io_err(shown, e)),
            }
        }
        Err(e) => return Err(io_err(shown, e)),
    };
    if depth >= 16 {
        return Err(SafeError::BadPath {
            path: shown.to_path_buf(),
            why: "nested too deep to remove".into(),
        });
    }
    let d = SafeDir {
        fd: sub,
        path: shown.to_path_buf(),
    };
    for n in d.list()? {
        remove_at(&d.fd, &n, &d.display_path(&n), depth + 1)?;
    }
    match rfs::unlinkat(dir.as_fd(), name, AtFlags::REMOVEDIR) {
        Ok(()) | Err(Errno::NOENT) => Ok(()),
        Err(e) => Err(io_err(shown, e)),
    }
}
