//! [`SafeDir`]: opening, checking and creating directories, and looking at
//! their entries. Writes are in `file`, reads in `read`.

use crate::error::{check_name, io_err, Result, SafeError};
use crate::resolve;
use rustix::fs::{self as rfs, AtFlags, Mode, OFlags};
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};

/// What to accept when opening an existing directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DirPolicy {
    /// Refuse a directory owned by another user (other than root), or
    /// writable by group/others without the sticky bit.
    #[default]
    Strict,
    /// Accept it anyway (`--force-unsafe-dir`).
    AllowUnsafe,
    /// For state that root acts on later (`/run/rtshield`): owned by root
    /// or by the effective uid (fake trees in tests), and no permission at
    /// all for group or others (mode ≤ 0700). See also
    /// [`SafeDir::open_private`], which tightens an older 0755 directory.
    Private,
}

/// What [`SafeDir::entry`] saw at a name (never following a symlink).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// A regular file.
    pub is_file: bool,
    /// A directory.
    pub is_dir: bool,
    /// A symbolic link (reported, never followed).
    pub is_symlink: bool,
    /// Its owner.
    pub uid: u32,
    /// Permission bits (`& 0o7777`).
    pub mode: u32,
}

/// Owners whose files root may trust: root itself and the effective uid
/// (which is root in production; the test's uid on fake trees).
pub(crate) fn trusted_owner(uid: u32) -> bool {
    uid == 0 || uid == rustix::process::geteuid().as_raw()
}

/// An open directory that every write goes through.
#[derive(Debug)]
pub struct SafeDir {
    pub(crate) fd: OwnedFd,
    pub(crate) path: PathBuf,
}

pub(crate) const DIR_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);

/// Check the directory open at `fd` (shown as `path`) against `policy`.
pub(crate) fn check_fd(fd: impl AsFd, path: &Path, policy: DirPolicy) -> Result<()> {
    if policy == DirPolicy::AllowUnsafe {
        return Ok(());
    }
    let st = rfs::fstat(fd).map_err(|e| io_err(path, e))?;
    let me = rustix::process::geteuid().as_raw();
    let mode = st.st_mode;
    if policy == DirPolicy::Private {
        let why = if !trusted_owner(st.st_uid) {
            format!(
                "it is owned by uid {}, not by root or you (uid {me})",
                st.st_uid
            )
        } else if mode & 0o077 != 0 {
            format!("it is mode {:o}", mode & 0o7777)
        } else {
            return Ok(());
        };
        return Err(SafeError::Untrusted {
            path: path.to_path_buf(),
            why,
        });
    }
    if !trusted_owner(st.st_uid) {
        return Err(SafeError::Unsafe {
            path: path.to_path_buf(),
            why: format!("it is owned by uid {}, not by you (uid {me})", st.st_uid),
        });
    }
    let sticky = mode & 0o1000 != 0;
    if mode & 0o022 != 0 && !sticky {
        return Err(SafeError::Unsafe {
            path: path.to_path_buf(),
            why: format!(
                "it is writable by {} (mode {:o}) and has no sticky bit",
                if mode & 0o002 != 0 {
                    "everyone"
                } else {
                    "its group"
                },
                mode & 0o7777
            ),
        });
    }
    Ok(())
}

/// The directories above an existing directory, under the strict policy
/// and as root only (see `ancestors`).
fn check_above(fd: impl AsFd, path: &Path, policy: DirPolicy) -> Result<()> {
    if policy == DirPolicy::Strict && crate::ancestors::applies() {
        crate::ancestors::check(fd, path)?;
    }
    Ok(())
}

impl SafeDir {
    /// Open an existing directory through the path layer: no symbolic
    /// link followed anywhere in `path` (a trailing `/` or `/.` names the
    /// last component itself), `..` refused; then its ownership and mode
    /// are checked according to `policy`.
    ///
    /// As root, under [`DirPolicy::Strict`], the directories above it are
    /// checked too: each must be root's (or the caller's) and writable by
    /// nobody else, or sticky — else another user could have renamed one of
    /// root's directories to this name (see `ancestors`).
    pub fn open(path: &Path, policy: DirPolicy) -> Result<SafeDir> {
        let fd = resolve::open_dir(path)?;
        check_fd(&fd, path, policy)?;
        check_above(&fd, path, policy)?;
        Ok(SafeDir {
            fd,
            path: path.to_path_buf(),
        })
    }

    /// Create a new directory at `path` (its parent must exist) with
    /// `mode` exactly (the umask is not applied), failing if it exists.
    /// The parent is opened through the path layer, unchecked.
    pub fn create_new(path: &Path, mode: u32) -> Result<SafeDir> {
        let (parent, name) = resolve::split_file(path)?;
        let parent = SafeDir::open(&parent, DirPolicy::AllowUnsafe)?;
        let mut d = parent.create_subdir(&name, mode)?;
        d.path = path.to_path_buf();
        Ok(d)
    }

    /// [`SafeDir::create_new`], creating missing parents first (each with
    /// `mode`, through the path layer). Under any `policy` but
    /// [`DirPolicy::AllowUnsafe`], every directory is created only in a
    /// parent that passes the rules of an output directory (F22).
    pub fn create_new_with_parents(path: &Path, mode: u32, policy: DirPolicy) -> Result<SafeDir> {
        let (parent, name) = resolve::split_file(path)?;
        let guard = policy != DirPolicy::AllowUnsafe;
        let (fd, _) = resolve::open_or_create_dir(&parent, mode, guard)?;
        if guard {
            resolve::check_mkdir_parent(&fd, &parent, path)?;
        }
        let parent = SafeDir { fd, path: parent };
        let mut d = parent.create_subdir(&name, mode)?;
        d.path = path.to_path_buf();
        Ok(d)
    }

    /// Open `path` if it is a directory, or create it (and missing parents,
    /// each with `mode`) if it does not exist, through the path layer (no
    /// link followed, `..` refused). The final directory is checked against
    /// `policy` (one just created is the caller's own and passes); one that
    /// existed has the directories above it checked as in [`SafeDir::open`].
    /// Under any `policy` but [`DirPolicy::AllowUnsafe`], a missing
    /// directory is created only in a parent that passes the rules of an
    /// output directory (owned by root or the caller, not writable by
    /// others unless sticky; adversary round 5 (A), F22).
    pub fn open_or_create(path: &Path, mode: u32, policy: DirPolicy) -> Result<SafeDir> {
        let (fd, created) =
            resolve::open_or_create_dir(path, mode, policy != DirPolicy::AllowUnsafe)?;
        check_fd(&fd, path, policy)?;
        if !created {
            check_above(&fd, path, policy)?;
        }
        Ok(SafeDir {
            fd,
            path: path.to_path_buf(),
        })
    }

    /// Open (creating it and missing parents 0700, whatever the umask) a
    /// directory of state root acts on later; see [`SafeDir::open_private`].
    pub fn open_private_or_create(path: &Path) -> Result<SafeDir> {
        // One resolution: the directory created (or found) is the one
        // checked and used.
        SafeDir::open_or_create(path, 0o700, DirPolicy::AllowUnsafe)?.into_private()
    }

    /// Open an existing directory of state root acts on later
    /// (`/run/rtshield`). It must be owned by root or the effective uid and
    /// writable by nobody else. One an older version created with the
    /// umask's mode (0755) is tightened to 0700 when it is ours; a group-
    /// or world-writable one (0777 under `umask 000`) is refused, since
    /// anyone could have planted or hard-linked files into it. Files read
    /// from it still go through [`SafeDir::read_private`].
    pub fn open_private(path: &Path) -> Result<SafeDir> {
        SafeDir::open(path, DirPolicy::AllowUnsafe)?.into_private()
    }

    /// The checks of [`SafeDir::open_private`] on an open directory.
    fn into_private(self) -> Result<SafeDir> {
        let d = self;
        let (uid, mode) = d.owner_mode()?;
        let me = rustix::process::geteuid().as_raw();
        let why = if !trusted_owner(uid) {
            format!("it is owned by uid {uid}, not by root or you (uid {me})")
        } else if mode & 0o022 != 0 {
            format!("it is mode {mode:o}: others may have written into it")
        } else {
            if mode & 0o077 != 0 && uid == me {
                d.set_mode(0o700)?;
            }
            return Ok(d);
        };
        Err(SafeError::Untrusted { path: d.path, why })
    }

    /// The path this directory was opened at (for messages only: every
    /// operation goes through the descriptor).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Path of `name` inside this directory, for messages.
    pub fn display_path(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }

    /// Create a new subdirectory `name` with exactly `mode`; fail if it
    /// exists.
    pub fn create_subdir(&self, name: &str, mode: u32) -> Result<SafeDir> {
        check_name(name)?;
        let p = self.path.join(name);
        rfs::mkdirat(&self.fd, name, Mode::from_raw_mode(mode)).map_err(|e| io_err(&p, e))?;
        let fd =
            rfs::openat(&self.fd, name, DIR_FLAGS, Mode::empty()).map_err(|e| io_err(&p, e))?;
        // mkdir applies the umask; set the mode we were asked for (on our
        // own directory only: in a directory others can write, it may have
        // been swapped between mkdir and open).
        resolve::set_own_dir_mode(&fd, &p, mode)?;
        let _ = rfs::fsync(&self.fd);
        Ok(SafeDir { fd, path: p })
    }

    /// Create a fresh subdirectory named `base`, or `base-1`, `base-2`, …
    /// whichever is the first that does not exist. Returns it and its name.
    pub fn create_unique_subdir(&self, base: &str, mode: u32) -> Result<(SafeDir, String)> {
        check_name(base)?;
        for i in 0..10_000u32 {
            let name = if i == 0 {
                base.to_string()
            } else {
                format!("{base}-{i}")
            };
            match self.create_subdir(&name, mode) {
                Ok(d) => return Ok((d, name)),
                Err(SafeError::Io { err, .. }) if err.kind() == io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(e),
            }
        }
        Err(io_err(
            &self.path.join(base),
            io::Error::new(
                io::ErrorKind::AlreadyExists,
                "no free name after 10000 tries",
            ),
        ))
    }

    /// Open an existing subdirectory (not following a symlink), checked
    /// against `policy`.
    pub fn open_subdir(&self, name: &str, policy: DirPolicy) -> Result<SafeDir> {
        check_name(name)?;
        let p = self.path.join(name);
        let fd =
            rfs::openat(&self.fd, name, DIR_FLAGS, Mode::empty()).map_err(|e| io_err(&p, e))?;
        check_fd(&fd, &p, policy)?;
        Ok(SafeDir { fd, path: p })
    }

    /// Open `name` as a subdirectory, creating it (with `mode`) if missing.
    pub fn subdir(&self, name: &str, mode: u32) -> Result<SafeDir> {
        match self.open_subdir(name, DirPolicy::Strict) {
            Err(SafeError::Io { err, .. }) if err.kind() == io::ErrorKind::NotFound => {
                match self.create_subdir(name, mode) {
                    Err(SafeError::Io { err, .. })
                        if err.kind() == io::ErrorKind::AlreadyExists =>
                    {
                        self.open_subdir(name, DirPolicy::Strict)
                    }
                    r => r,
                }
            }
            r => r,
        }
    }

    /// Whether `name` exists in this directory (without following it).
    pub fn exists(&self, name: &str) -> bool {
        check_name(name).is_ok() && rfs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW).is_ok()
    }

    /// Names in this directory (not `.`/`..`), sorted.
    pub fn list(&self) -> Result<Vec<String>> {
        let fd = rfs::openat(&self.fd, ".", DIR_FLAGS, Mode::empty())
            .map_err(|e| io_err(&self.path, e))?;
        let mut dir = rfs::Dir::read_from(&fd).map_err(|e| io_err(&self.path, e))?;
        let mut out = Vec::new();
        for ent in dir.by_ref() {
            let ent = ent.map_err(|e| io_err(&self.path, e))?;
            let n = ent.file_name().to_bytes();
            if n != b"." && n != b".." {
                out.push(String::from_utf8_lossy(n).into_owned());
            }
        }
        out.sort();
        Ok(out)
    }

    /// What `name` is (a symlink is reported as such, never followed);
    /// `None` when it does not exist or is not a valid name.
    pub fn entry(&self, name: &str) -> Option<Entry> {
        check_name(name).ok()?;
        let st = rfs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW).ok()?;
        let fmt = st.st_mode & libc::S_IFMT;
        Some(Entry {
            is_file: fmt == libc::S_IFREG,
            is_dir: fmt == libc::S_IFDIR,
            is_symlink: fmt == libc::S_IFLNK,
            uid: st.st_uid,
            mode: st.st_mode & 0o7777,
        })
    }

    /// Set this directory's permission bits (e.g. tighten a state
    /// directory an older version created with the umask's mode).
    pub fn set_mode(&self, mode: u32) -> Result<()> {
        rfs::fchmod(&self.fd, Mode::from_raw_mode(mode)).map_err(|e| io_err(&self.path, e))
    }

    /// Owner and permission bits of this directory.
    pub fn owner_mode(&self) -> Result<(u32, u32)> {
        let st = rfs::fstat(&self.fd).map_err(|e| io_err(&self.path, e))?;
        Ok((st.st_uid, st.st_mode & 0o7777))
    }

    /// The descriptor, for `*at` calls this module does not wrap.
    pub fn fd(&self) -> impl AsFd + '_ {
        &self.fd
    }
}
