//! The one way rtshield writes files.
//!
//! rtshield runs as root and writes into directories that other users may
//! control (a shared `/tmp`, a lab's result share). Every result, report,
//! checkpoint and state file is therefore written through a [`SafeDir`]:
//!
//! - the directory is opened once (`O_DIRECTORY|O_NOFOLLOW`) and every later
//!   operation is relative to that descriptor, so renaming or replacing the
//!   path afterwards cannot redirect a write;
//! - a directory owned by another user, or group/world-writable without the
//!   sticky bit, is refused unless the caller explicitly allows it;
//! - a file is written to a temporary name that nobody can predict, created
//!   with `O_CREAT|O_EXCL|O_NOFOLLOW`, fsynced, `renameat`ed over the final
//!   name and the directory is fsynced: readers see the old file or the new
//!   one, never half of one, and a planted symlink is never followed;
//! - names are single path components: `a/b`, `..` and NUL are refused.

use std::ffi::OsStr;
use std::fmt;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rustix::fs::{self as rfs, AtFlags, Mode, OFlags};

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
    pub is_file: bool,
    pub is_dir: bool,
    pub is_symlink: bool,
    pub uid: u32,
    /// Permission bits (`& 0o7777`).
    pub mode: u32,
}

/// Owners whose files root may trust: root itself and the effective uid
/// (which is root in production; the test's uid on fake trees).
fn trusted_owner(uid: u32) -> bool {
    uid == 0 || uid == rustix::process::geteuid().as_raw()
}

/// Why a directory or file operation was refused or failed. The message
/// names the path once.
#[derive(Debug)]
pub enum SafeError {
    /// The directory is not safe to write into as root.
    Unsafe { path: PathBuf, why: String },
    /// A file or directory root would act on (saved state) that others
    /// could have written or replaced.
    Untrusted { path: PathBuf, why: String },
    /// A name that is not a single path component.
    BadName { name: String },
    /// An I/O error on a path.
    Io { path: PathBuf, err: io::Error },
}

impl SafeError {
    /// True when the error is a refusal of the caller's input (exit 2), not
    /// a failure of the system.
    pub fn is_refusal(&self) -> bool {
        matches!(
            self,
            SafeError::Unsafe { .. } | SafeError::Untrusted { .. } | SafeError::BadName { .. }
        )
    }
    /// The underlying I/O error kind, if any.
    pub fn io_kind(&self) -> Option<io::ErrorKind> {
        match self {
            SafeError::Io { err, .. } => Some(err.kind()),
            _ => None,
        }
    }
}

impl fmt::Display for SafeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SafeError::Unsafe { path, why } => write!(
                f,
                "refusing to write into {}: {why} (a root process writing there could be \
                 tricked into overwriting other files; use a directory you own, or \
                 --force-unsafe-dir if you trust every user who can write there)",
                path.display()
            ),
            SafeError::Untrusted { path, why } => write!(
                f,
                "{}: not trusted as saved state: {why} (it must be a regular file of mode \
                 0600 or stricter, owned by root, in a directory of mode 0700)",
                path.display()
            ),
            SafeError::BadName { name } => {
                write!(
                    f,
                    "{name:?} is not a plain file name (no '/', '.', '..' or NUL)"
                )
            }
            SafeError::Io { path, err } => write!(f, "{}: {err}", path.display()),
        }
    }
}

impl std::error::Error for SafeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SafeError::Io { err, .. } => Some(err),
            _ => None,
        }
    }
}

impl From<SafeError> for io::Error {
    fn from(e: SafeError) -> io::Error {
        let kind = match &e {
            SafeError::Io { err, .. } => err.kind(),
            SafeError::Unsafe { .. } | SafeError::Untrusted { .. } => {
                io::ErrorKind::PermissionDenied
            }
            SafeError::BadName { .. } => io::ErrorKind::InvalidInput,
        };
        io::Error::new(kind, e.to_string())
    }
}

type Result<T> = std::result::Result<T, SafeError>;

fn io_err(path: &Path, err: impl Into<io::Error>) -> SafeError {
    SafeError::Io {
        path: path.to_path_buf(),
        err: err.into(),
    }
}

/// Check that `name` is one path component we may create.
pub fn check_name(name: &str) -> Result<()> {
    let bad = name.is_empty()
        || name == "."
        || name == ".."
        || name.contains('/')
        || name.contains('\0')
        || name.len() > 255;
    if bad {
        Err(SafeError::BadName {
            name: name.to_string(),
        })
    } else {
        Ok(())
    }
}

/// An open directory that every write goes through.
#[derive(Debug)]
pub struct SafeDir {
    fd: OwnedFd,
    path: PathBuf,
}

const DIR_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);

impl SafeDir {
    /// Open an existing directory. The last component must not be a
    /// symlink; ownership and mode are checked according to `policy`.
    pub fn open(path: &Path, policy: DirPolicy) -> Result<SafeDir> {
        let fd = rfs::open(path, DIR_FLAGS, Mode::empty()).map_err(|e| io_err(path, e))?;
        let d = SafeDir {
            fd,
            path: path.to_path_buf(),
        };
        d.check(policy)?;
        Ok(d)
    }

    /// Create a new directory at `path` (its parent must exist) with
    /// `mode` exactly (the umask is not applied), failing if it exists.
    pub fn create_new(path: &Path, mode: u32) -> Result<SafeDir> {
        let (parent, name) = split(path)?;
        let parent = SafeDir::open(&parent, DirPolicy::AllowUnsafe)?;
        parent.create_subdir(&name, mode)
    }

    /// Open `path` if it is a directory, or create it (and missing parents,
    /// each with `mode`) if it does not exist. The final directory is
    /// checked against `policy`.
    pub fn open_or_create(path: &Path, mode: u32, policy: DirPolicy) -> Result<SafeDir> {
        match SafeDir::open(path, policy) {
            Ok(d) => Ok(d),
            Err(SafeError::Io { err, .. }) if err.kind() == io::ErrorKind::NotFound => {
                if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                    if !parent.exists() {
                        SafeDir::open_or_create(parent, mode, DirPolicy::AllowUnsafe)?;
                    }
                }
                match SafeDir::create_new(path, mode) {
                    Ok(d) => Ok(d),
                    // Lost a race with another creator: open what is there.
                    Err(SafeError::Io { err, .. })
                        if err.kind() == io::ErrorKind::AlreadyExists =>
                    {
                        SafeDir::open(path, policy)
                    }
                    Err(e) => Err(e),
                }
            }
            Err(e) => Err(e),
        }
    }

    /// Open (creating it and missing parents 0700, whatever the umask) a
    /// directory of state root acts on later; see [`SafeDir::open_private`].
    pub fn open_private_or_create(path: &Path) -> Result<SafeDir> {
        match SafeDir::open_private(path) {
            Err(e) if e.io_kind() == Some(io::ErrorKind::NotFound) => {
                match SafeDir::open_or_create(path, 0o700, DirPolicy::AllowUnsafe) {
                    Ok(_) => SafeDir::open_private(path),
                    Err(e) => Err(e),
                }
            }
            r => r,
        }
    }

    /// Open an existing directory of state root acts on later
    /// (`/run/rtshield`). It must be owned by root or the effective uid and
    /// writable by nobody else. One an older version created with the
    /// umask's mode (0755) is tightened to 0700 when it is ours; a group-
    /// or world-writable one (0777 under `umask 000`) is refused, since
    /// anyone could have planted or hard-linked files into it. Files read
    /// from it still go through [`SafeDir::read_private`].
    pub fn open_private(path: &Path) -> Result<SafeDir> {
        let d = SafeDir::open(path, DirPolicy::AllowUnsafe)?;
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
        Err(SafeError::Untrusted {
            path: path.to_path_buf(),
            why,
        })
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

    fn check(&self, policy: DirPolicy) -> Result<()> {
        if policy == DirPolicy::AllowUnsafe {
            return Ok(());
        }
        let st = rfs::fstat(&self.fd).map_err(|e| io_err(&self.path, e))?;
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
                path: self.path.clone(),
                why,
            });
        }
        if !trusted_owner(st.st_uid) {
            return Err(SafeError::Unsafe {
                path: self.path.clone(),
                why: format!("it is owned by uid {}, not by you (uid {me})", st.st_uid),
            });
        }
        let sticky = mode & 0o1000 != 0;
        if mode & 0o022 != 0 && !sticky {
            return Err(SafeError::Unsafe {
                path: self.path.clone(),
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

    /// Create a new subdirectory `name` with exactly `mode`; fail if it
    /// exists.
    pub fn create_subdir(&self, name: &str, mode: u32) -> Result<SafeDir> {
        check_name(name)?;
        let p = self.path.join(name);
        rfs::mkdirat(&self.fd, name, Mode::from_raw_mode(mode)).map_err(|e| io_err(&p, e))?;
        let fd =
            rfs::openat(&self.fd, name, DIR_FLAGS, Mode::empty()).map_err(|e| io_err(&p, e))?;
        // mkdir applies the umask; set the mode we were asked for.
        rfs::fchmod(&fd, Mode::from_raw_mode(mode)).map_err(|e| io_err(&p, e))?;
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
        let d = SafeDir { fd, path: p };
        d.check(policy)?;
        Ok(d)
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

    /// Atomically replace `name` with `bytes` (mode 0644).
    pub fn write(&self, name: &str, bytes: &[u8]) -> Result<()> {
        self.write_with_mode(name, 0o644, |w| w.write_all(bytes))
    }

    /// Atomically replace `name` with what `fill` writes, file mode `mode`.
    /// The temporary file is removed if `fill` or any later step fails.
    pub fn write_with_mode<F>(&self, name: &str, mode: u32, fill: F) -> Result<()>
    where
        F: FnOnce(&mut dyn Write) -> io::Result<()>,
    {
        check_name(name)?;
        let final_path = self.path.join(name);
        let (tmp_name, fd) = self.create_temp(name, mode)?;
        let result = (|| -> io::Result<()> {
            let mut f = std::fs::File::from(fd);
            {
                let mut w = io::BufWriter::new(&mut f);
                fill(&mut w)?;
                w.flush()?;
            }
            f.sync_all()?;
            drop(f);
            rfs::renameat(&self.fd, tmp_name.as_str(), &self.fd, name)?;
            Ok(())
        })();
        match result {
            Ok(()) => {
                rfs::fsync(&self.fd).map_err(|e| io_err(&self.path, e))?;
                Ok(())
            }
            Err(e) => {
                let _ = rfs::unlinkat(&self.fd, tmp_name.as_str(), AtFlags::empty());
                Err(io_err(&final_path, e))
            }
        }
    }

    /// Atomically replace `name`, filled by `fill`, mode 0644.
    pub fn write_with<F>(&self, name: &str, fill: F) -> Result<()>
    where
        F: FnOnce(&mut dyn Write) -> io::Result<()>,
    {
        self.write_with_mode(name, 0o644, fill)
    }

    fn create_temp(&self, name: &str, mode: u32) -> Result<(String, OwnedFd)> {
        let flags = OFlags::WRONLY
            .union(OFlags::CREATE)
            .union(OFlags::EXCL)
            .union(OFlags::NOFOLLOW)
            .union(OFlags::CLOEXEC);
        // Keep the temp name within NAME_MAX whatever `name` is.
        let stem: String = name.chars().take(200).collect();
        for _ in 0..16 {
            let tmp = format!(".{stem}.{}.tmp", random_hex());
            match rfs::openat(&self.fd, tmp.as_str(), flags, Mode::from_raw_mode(mode)) {
                Ok(fd) => {
                    rfs::fchmod(&fd, Mode::from_raw_mode(mode))
                        .map_err(|e| io_err(&self.path.join(&tmp), e))?;
                    return Ok((tmp, fd));
                }
                Err(rustix::io::Errno::EXIST) => continue,
                Err(e) => return Err(io_err(&self.path.join(name), e)),
            }
        }
        Err(io_err(
            &self.path.join(name),
            io::Error::new(io::ErrorKind::AlreadyExists, "no free temporary name"),
        ))
    }

    /// Create `name` for appending (a log-like file such as `timeline.csv`,
    /// written row by row, so not atomically): an existing entry is removed
    /// first (a symlink is removed, never followed), then the file is
    /// created with `O_CREAT|O_EXCL|O_NOFOLLOW` relative to the directory
    /// descriptor, mode 0644.
    pub fn create_appendable(&self, name: &str) -> Result<std::fs::File> {
        check_name(name)?;
        self.remove_file(name)?;
        let flags = OFlags::WRONLY
            .union(OFlags::CREATE)
            .union(OFlags::EXCL)
            .union(OFlags::NOFOLLOW)
            .union(OFlags::APPEND)
            .union(OFlags::CLOEXEC);
        let fd = rfs::openat(&self.fd, name, flags, Mode::from_raw_mode(0o644))
            .map_err(|e| io_err(&self.path.join(name), e))?;
        rfs::fchmod(&fd, Mode::from_raw_mode(0o644))
            .map_err(|e| io_err(&self.path.join(name), e))?;
        Ok(std::fs::File::from(fd))
    }

    /// Open `name` for appending, creating it (mode 0644) if missing; a
    /// symlink is refused (`O_NOFOLLOW`), never followed. For logs that
    /// outlive one writer (a respawned program's output).
    pub fn open_append(&self, name: &str) -> Result<std::fs::File> {
        check_name(name)?;
        let flags = OFlags::WRONLY
            .union(OFlags::CREATE)
            .union(OFlags::NOFOLLOW)
            .union(OFlags::APPEND)
            .union(OFlags::CLOEXEC);
        let fd = rfs::openat(&self.fd, name, flags, Mode::from_raw_mode(0o644))
            .map_err(|e| io_err(&self.path.join(name), e))?;
        Ok(std::fs::File::from(fd))
    }

    /// Remove the file `name` (a symlink is removed, never followed).
    /// Missing files are not an error.
    pub fn remove_file(&self, name: &str) -> Result<()> {
        check_name(name)?;
        match rfs::unlinkat(&self.fd, name, AtFlags::empty()) {
            Ok(()) | Err(rustix::io::Errno::NOENT) => Ok(()),
            Err(e) => Err(io_err(&self.path.join(name), e)),
        }
    }

    /// Remove the empty subdirectory `name` (a symlink is never followed).
    pub fn remove_dir(&self, name: &str) -> Result<()> {
        check_name(name)?;
        match rfs::unlinkat(&self.fd, name, AtFlags::REMOVEDIR) {
            Ok(()) | Err(rustix::io::Errno::NOENT) => Ok(()),
            Err(e) => Err(io_err(&self.path.join(name), e)),
        }
    }

    /// Read the regular file `name` (never through a symlink), at most
    /// `limit` bytes; a larger file is an error naming the limit.
    pub fn read(&self, name: &str, limit: u64) -> Result<Vec<u8>> {
        check_name(name)?;
        let p = self.path.join(name);
        let fd = rfs::openat(
            &self.fd,
            name,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK,
            Mode::empty(),
        )
        .map_err(|e| io_err(&p, e))?;
        read_regular(fd, &p, limit)
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

    /// Read `name`, which root will act on: it must be a regular file (not
    /// a symlink), owned by root or the effective uid, with no permission
    /// for group or others (mode ≤ 0600), at most `limit` bytes. Anything
    /// else is [`SafeError::Untrusted`].
    pub fn read_private(&self, name: &str, limit: u64) -> Result<Vec<u8>> {
        check_name(name)?;
        let p = self.path.join(name);
        let fd = rfs::openat(
            &self.fd,
            name,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK,
            Mode::empty(),
        )
        .map_err(|e| match e {
            rustix::io::Errno::LOOP => SafeError::Untrusted {
                path: p.clone(),
                why: "it is a symbolic link".into(),
            },
            e => io_err(&p, e),
        })?;
        let st = rfs::fstat(&fd).map_err(|e| io_err(&p, e))?;
        let unsafe_because = |why: String| SafeError::Untrusted {
            path: p.clone(),
            why,
        };
        if st.st_mode & libc::S_IFMT != libc::S_IFREG {
            return Err(unsafe_because("it is not a regular file".into()));
        }
        if !trusted_owner(st.st_uid) {
            return Err(unsafe_because(format!(
                "it is owned by uid {}, not by root or you (uid {})",
                st.st_uid,
                rustix::process::geteuid().as_raw()
            )));
        }
        if st.st_mode & 0o077 != 0 {
            return Err(unsafe_because(format!(
                "it is mode {:o}, not 0600 or stricter",
                st.st_mode & 0o7777
            )));
        }
        read_regular(fd, &p, limit)
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
    let (dir, name) = split_file_path(path);
    SafeDir::open(&dir, policy)?.write(&name, bytes)
}

/// The final name a temporary file of [`SafeDir::write`] was for
/// (`.NAME.<16 hex>.tmp` → `NAME`): a leftover of an interrupted write.
pub fn temp_target(name: &str) -> Option<&str> {
    let rest = name.strip_prefix('.')?.strip_suffix(".tmp")?;
    let (stem, hex) = rest.rsplit_once('.')?;
    let ok = hex.len() == 16 && hex.bytes().all(|b| b.is_ascii_hexdigit()) && !stem.is_empty();
    ok.then_some(stem)
}

/// Read an open file that must be regular, at most `limit` bytes.
fn read_regular(fd: OwnedFd, p: &Path, limit: u64) -> Result<Vec<u8>> {
    let st = rfs::fstat(&fd).map_err(|e| io_err(p, e))?;
    if st.st_mode & libc::S_IFMT != libc::S_IFREG {
        return Err(io_err(
            p,
            io::Error::new(io::ErrorKind::InvalidInput, "not a regular file"),
        ));
    }
    let size = st.st_size as u64;
    if size > limit {
        return Err(io_err(
            p,
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("file is {size} bytes, more than the limit of {limit} bytes"),
            ),
        ));
    }
    let mut f = std::fs::File::from(fd);
    let mut buf = Vec::with_capacity(size as usize);
    // Read one byte past the limit so a file that grows is still caught.
    (&mut f)
        .take(limit + 1)
        .read_to_end(&mut buf)
        .map_err(|e| io_err(p, e))?;
    if buf.len() as u64 > limit {
        return Err(io_err(
            p,
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("file grew past the limit of {limit} bytes"),
            ),
        ));
    }
    Ok(buf)
}

/// Default size limit for user input files (report inputs, configurations, imports): 256 MiB.
pub const INPUT_LIMIT: u64 = 256 << 20;

/// Read a user-supplied input file: it must be a regular file (a FIFO,
/// device or directory is refused without blocking), at most `limit` bytes.
pub fn read_input(path: &Path, limit: u64) -> Result<Vec<u8>> {
    let fd = rfs::open(
        path,
        OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NONBLOCK,
        Mode::empty(),
    )
    .map_err(|e| io_err(path, e))?;
    read_regular(fd, path, limit)
}

/// Split a path into its parent directory and last component.
fn split(path: &Path) -> Result<(PathBuf, String)> {
    let name = path
        .file_name()
        .and_then(OsStr::to_str)
        .ok_or_else(|| SafeError::BadName {
            name: String::from_utf8_lossy(path.as_os_str().as_bytes()).into_owned(),
        })?;
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    Ok((parent, name.to_string()))
}

/// 64 random bits as hex, for temporary names nobody can predict.
fn random_hex() -> String {
    let mut b = [0u8; 8];
    let mut filled = 0;
    while filled < b.len() {
        match rustix::rand::getrandom(&mut b[filled..], rustix::rand::GetRandomFlags::empty()) {
            Ok(n) => filled += n,
            Err(rustix::io::Errno::INTR) => {}
            // getrandom(2) exists since Linux 3.17; fall back to time and
            // pid, which still makes collisions unlikely, and O_EXCL keeps
            // a collision safe.
            Err(_) => {
                let t = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_nanos() as u64)
                    .unwrap_or(0);
                b = (t ^ ((std::process::id() as u64) << 32)).to_le_bytes();
                break;
            }
        }
    }
    b.iter().map(|x| format!("{x:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{symlink, PermissionsExt};

    #[test]
    fn write_replaces_atomically_and_leaves_no_temp() {
        let t = tempfile::tempdir().unwrap();
        let d = SafeDir::open(t.path(), DirPolicy::Strict).unwrap();
        d.write("a.txt", b"one").unwrap();
        d.write("a.txt", b"two").unwrap();
        assert_eq!(std::fs::read(t.path().join("a.txt")).unwrap(), b"two");
        assert_eq!(d.list().unwrap(), vec!["a.txt".to_string()]);
    }

    #[test]
    fn planted_symlink_is_replaced_not_followed() {
        let t = tempfile::tempdir().unwrap();
        let victim = t.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let out = t.path().join("out");
        std::fs::create_dir(&out).unwrap();
        symlink(&victim, out.join("results.json")).unwrap();
        let d = SafeDir::open(&out, DirPolicy::Strict).unwrap();
        d.write("results.json", b"{}").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        assert!(!std::fs::symlink_metadata(out.join("results.json"))
            .unwrap()
            .file_type()
            .is_symlink());
    }

    #[test]
    fn symlinked_directory_is_refused() {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir(t.path().join("real")).unwrap();
        symlink(t.path().join("real"), t.path().join("link")).unwrap();
        let e = SafeDir::open(&t.path().join("link"), DirPolicy::Strict).unwrap_err();
        assert!(e.to_string().contains("link"), "{e}");
    }

    #[test]
    fn world_writable_without_sticky_is_refused_unless_allowed() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("open");
        std::fs::create_dir(&p).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = SafeDir::open(&p, DirPolicy::Strict).unwrap_err();
        assert!(e.is_refusal());
        assert!(e.to_string().contains("mode 777"), "{e}");
        SafeDir::open(&p, DirPolicy::AllowUnsafe).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o1777)).unwrap();
        SafeDir::open(&p, DirPolicy::Strict).unwrap();
    }

    #[test]
    fn bad_names_are_refused() {
        let t = tempfile::tempdir().unwrap();
        let d = SafeDir::open(t.path(), DirPolicy::Strict).unwrap();
        for n in ["", ".", "..", "a/b", "a\0b", &"x".repeat(256)] {
            assert!(
                matches!(d.write(n, b""), Err(SafeError::BadName { .. })),
                "{n:?}"
            );
        }
    }

    #[test]
    fn unique_subdirs_never_reuse_a_name() {
        let t = tempfile::tempdir().unwrap();
        let d = SafeDir::open(t.path(), DirPolicy::Strict).unwrap();
        let (_, a) = d.create_unique_subdir("run", 0o755).unwrap();
        let (_, b) = d.create_unique_subdir("run", 0o755).unwrap();
        // A planted symlink with the next name is skipped, not followed.
        symlink("/", t.path().join("run-2")).unwrap();
        let (_, c) = d.create_unique_subdir("run", 0o755).unwrap();
        assert_eq!(
            (a.as_str(), b.as_str(), c.as_str()),
            ("run", "run-1", "run-3")
        );
    }

    #[test]
    fn create_subdir_ignores_umask() {
        // Changing the umask here would race with the other tests' temp
        // dirs; the process umask (022 under cargo) would strip 0o022 from
        // a plain mkdir, so an exact 0o777 proves the explicit chmod.
        let t = tempfile::tempdir().unwrap();
        let d = SafeDir::open(t.path(), DirPolicy::Strict).unwrap();
        d.create_subdir("shared", 0o777).unwrap();
        d.create_subdir("state", 0o700).unwrap();
        let mode = |n: &str| {
            std::fs::metadata(t.path().join(n))
                .unwrap()
                .permissions()
                .mode()
                & 0o7777
        };
        assert_eq!((mode("shared"), mode("state")), (0o777, 0o700));
    }

    #[test]
    fn read_refuses_fifo_symlink_and_oversize() {
        let t = tempfile::tempdir().unwrap();
        let fifo = t.path().join("fifo");
        let c = std::ffi::CString::new(fifo.as_os_str().as_bytes()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = read_input(&fifo, 100).unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
        std::fs::write(t.path().join("big"), vec![b'x'; 101]).unwrap();
        let e = read_input(&t.path().join("big"), 100).unwrap_err();
        assert!(e.to_string().contains("limit of 100 bytes"), "{e}");
        assert_eq!(read_input(&t.path().join("big"), 101).unwrap().len(), 101);
        symlink(t.path().join("big"), t.path().join("ln")).unwrap();
        let d = SafeDir::open(t.path(), DirPolicy::Strict).unwrap();
        assert!(d.read("ln", 1000).is_err());
        assert_eq!(d.read("big", 1000).unwrap().len(), 101);
    }

    #[test]
    fn failed_fill_leaves_old_file_and_no_temp() {
        let t = tempfile::tempdir().unwrap();
        let d = SafeDir::open(t.path(), DirPolicy::Strict).unwrap();
        d.write("f", b"old").unwrap();
        let e = d
            .write_with("f", |w| {
                w.write_all(b"partial")?;
                Err(io::Error::other("disk full"))
            })
            .unwrap_err();
        assert!(e.to_string().contains("disk full"));
        assert_eq!(std::fs::read(t.path().join("f")).unwrap(), b"old");
        assert_eq!(d.list().unwrap(), vec!["f".to_string()]);
    }

    #[test]
    fn output_dir_is_fresh_by_default_and_checked_when_given() {
        let t = tempfile::tempdir().unwrap();
        let parent = t.path().join("rtshield-results");
        let a = output_dir(None, &parent, "20261122-000000", DirPolicy::Strict).unwrap();
        let b = output_dir(None, &parent, "20261122-000000", DirPolicy::Strict).unwrap();
        assert_eq!(a.path(), parent.join("20261122-000000"));
        assert_eq!(b.path(), parent.join("20261122-000000-1"));
        let given = t.path().join("x/y");
        output_dir(Some(&given), &parent, "s", DirPolicy::Strict).unwrap();
        assert!(given.is_dir());
        std::fs::set_permissions(&given, std::fs::Permissions::from_mode(0o757)).unwrap();
        let e = output_dir(Some(&given), &parent, "s", DirPolicy::Strict).unwrap_err();
        assert!(e.is_refusal(), "{e}");
    }

    #[test]
    fn remove_never_follows_symlinks() {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir(t.path().join("keep")).unwrap();
        std::fs::write(t.path().join("keep/x"), "x").unwrap();
        let out = t.path().join("out");
        std::fs::create_dir(&out).unwrap();
        symlink(t.path().join("keep/x"), out.join("x")).unwrap();
        let d = SafeDir::open(&out, DirPolicy::Strict).unwrap();
        d.remove_file("x").unwrap();
        assert!(t.path().join("keep/x").exists());
        assert!(d.remove_file("x").is_ok());
    }

    #[test]
    fn private_dir_and_file_checks() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("state");
        std::fs::create_dir(&p).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        let e = SafeDir::open(&p, DirPolicy::Private).unwrap_err();
        assert!(e.is_refusal() && e.to_string().contains("mode 755"), "{e}");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o700)).unwrap();
        let d = SafeDir::open(&p, DirPolicy::Private).unwrap();
        d.write_with_mode("s.json", 0o600, |w| w.write_all(b"{}"))
            .unwrap();
        assert_eq!(d.entry("s.json").unwrap().mode, 0o600);
        assert_eq!(d.read_private("s.json", 100).unwrap(), b"{}");
        d.write("loose.json", b"{}").unwrap();
        let e = d.read_private("loose.json", 100).unwrap_err();
        assert!(e.is_refusal() && e.to_string().contains("mode 644"), "{e}");
        symlink(p.join("s.json"), p.join("ln.json")).unwrap();
        let e = d.read_private("ln.json", 100).unwrap_err();
        assert!(
            e.is_refusal() && e.to_string().contains("symbolic link"),
            "{e}"
        );
        let fifo = std::ffi::CString::new(p.join("f").as_os_str().as_bytes()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        let e = d.read_private("f", 100).unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
        let l = d.entry("ln.json").unwrap();
        assert!(l.is_symlink && !l.is_file);
        assert!(d.entry("nope").is_none());
    }

    #[test]
    fn foreign_owner_is_refused_for_private_reads() {
        if !rustix::process::geteuid().is_root() {
            eprintln!("SKIP foreign_owner_is_refused_for_private_reads: needs root to chown");
            return;
        }
        let t = tempfile::tempdir().unwrap();
        let d = SafeDir::open(t.path(), DirPolicy::Strict).unwrap();
        d.write_with_mode("s.json", 0o600, |w| w.write_all(b"{}"))
            .unwrap();
        std::os::unix::fs::chown(t.path().join("s.json"), Some(65534), Some(65534)).unwrap();
        let e = d.read_private("s.json", 100).unwrap_err();
        assert!(e.to_string().contains("owned by uid 65534"), "{e}");
    }

    #[test]
    fn temp_names_map_back_to_their_target() {
        assert_eq!(
            temp_target(".summary.md.0123456789abcdef.tmp"),
            Some("summary.md")
        );
        assert_eq!(temp_target(".summary.md.0123.tmp"), None);
        assert_eq!(temp_target("summary.md"), None);
        assert_eq!(temp_target("..0123456789abcdef.tmp"), None);
    }

    #[test]
    fn private_dir_is_created_0700_and_tightened() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("run/rtshield");
        let d = SafeDir::open_private_or_create(&p).unwrap();
        assert_eq!(d.owner_mode().unwrap().1, 0o700);
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        SafeDir::open_private_or_create(&p).unwrap();
        let m = std::fs::metadata(&p).unwrap().permissions().mode() & 0o7777;
        assert_eq!(m, 0o700);
        SafeDir::open(&p, DirPolicy::Private).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = SafeDir::open_private_or_create(&p).unwrap_err();
        assert!(e.is_refusal() && e.to_string().contains("mode 777"), "{e}");
        let e = SafeDir::open_private(&p).unwrap_err();
        assert!(e.to_string().contains("others may have written"), "{e}");
    }
}
