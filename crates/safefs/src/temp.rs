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
    /// The owner record ([`OWNER_FILE`]) this process holds locked, for a
    /// directory made with [`PrivateDir::create_owned_in`].
    _owner: Option<OwnedFd>,
}

/// The owner record inside a private directory: a file the process that
/// made the directory holds with an exclusive `flock` while it lives.
/// Unlike a pid, a lock names its holder across PID namespaces and
/// reboots; the kernel drops it when the holder dies, however it died
/// (adversary round 5, F11: an io load's directory, up to 64 GiB per
/// worker, stayed in `/tmp` after SIGKILL and was never reaped).
pub const OWNER_FILE: &str = ".owner";

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
        Ok(PrivateDir {
            parent,
            name,
            dir,
            _owner: None,
        })
    }

    /// [`PrivateDir::create_in`], with its owner record ([`OWNER_FILE`])
    /// made and locked at once: until this value is dropped (or the
    /// process dies), [`reap_dead`] leaves the directory alone.
    pub fn create_owned_in(parent: SafeDir, prefix: &str) -> Result<PrivateDir> {
        let mut d = PrivateDir::create_in(parent, prefix)?;
        let f = d.dir.create_new_file(OWNER_FILE, 0o600, false)?;
        let fd = OwnedFd::from(f);
        rfs::flock(&fd, rfs::FlockOperation::NonBlockingLockExclusive)
            .map_err(|e| io_err(&d.dir.display_path(OWNER_FILE), e))?;
        d._owner = Some(fd);
        Ok(d)
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

/// Remove the private directories `PREFIX<16 hex>` in `parent` whose owner
/// is provably dead: a directory of the caller's, mode 0700, holding an
/// [`OWNER_FILE`] nobody holds locked (the lock is taken, for a moment,
/// to know). One without a record (an older rtshield's, or being made
/// right now) or with its record held is left alone. Returns the names
/// removed.
pub fn reap_dead(parent: &SafeDir, prefix: &str) -> Vec<String> {
    let mut gone = Vec::new();
    for name in parent.list().unwrap_or_default() {
        let Some(hex) = name.strip_prefix(prefix) else {
            continue;
        };
        if hex.len() != 16 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            continue;
        }
        let Ok(d) = parent.open_subdir(&name, DirPolicy::Private) else {
            continue;
        };
        let dead = d
            .open_regular(OWNER_FILE)
            .is_ok_and(|fd| rfs::flock(&fd, rfs::FlockOperation::NonBlockingLockExclusive).is_ok());
        if dead && parent.remove_tree(&name).is_ok() {
            gone.push(name);
        }
    }
    gone
}

impl SafeDir {
    /// Open the regular file `name` of this directory read-only (never
    /// through a link, never blocking on a FIFO): a descriptor for `flock`
    /// or `fstat`.
    pub fn open_regular(&self, name: &str) -> Result<OwnedFd> {
        check_name(name)?;
        let p = self.display_path(name);
        let fd = rfs::openat(
            &self.fd,
            name,
            rustix::fs::OFlags::RDONLY
                | rustix::fs::OFlags::NOFOLLOW
                | rustix::fs::OFlags::NONBLOCK
                | rustix::fs::OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| io_err(&p, e))?;
        let st = rfs::fstat(&fd).map_err(|e| io_err(&p, e))?;
        if st.st_mode & libc::S_IFMT != libc::S_IFREG {
            return Err(SafeError::Unsafe {
                path: p,
                why: "it is not a regular file".into(),
            });
        }
        Ok(fd)
    }

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

#[cfg(test)]
mod owner_tests {
    use super::*;

    /// An owned private directory is reaped only once its owner record is
    /// free: never while held (by this value, or another holder), never
    /// without a record.
    #[test]
    fn only_directories_of_dead_owners_are_reaped() {
        let t = tempfile::tempdir().unwrap();
        let parent = || SafeDir::open(t.path(), DirPolicy::Strict).unwrap();
        let live = PrivateDir::create_owned_in(parent(), "rtshield-io-").unwrap();
        live.dir().write("load-1.dat", b"x").unwrap();
        let dead = PrivateDir::create_owned_in(parent(), "rtshield-io-").unwrap();
        let dead_name = dead.path().file_name().unwrap().to_owned();
        drop(dead); // its owner is gone: the lock with it
        let (unrecorded, _) = parent().create_private_subdir("rtshield-io-").unwrap();
        let gone = reap_dead(&parent(), "rtshield-io-");
        assert_eq!(gone, [dead_name.to_string_lossy().into_owned()]);
        assert!(live.path().join("load-1.dat").is_file());
        assert!(unrecorded.path().is_dir());
        assert!(!t.path().join(&dead_name).exists());
        live.remove().unwrap();
    }
}
