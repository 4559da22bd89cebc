//! The path layer: a path the user gave (or a default one) turned into a
//! directory descriptor without following any symbolic link.
//!
//! Root writes where other users may have planted links: a link as the last
//! component (`--out LINK`), in the middle (`--out ATT/mid/sub`), hidden by
//! a trailing `/` or `/.` (which makes `O_NOFOLLOW` look at nothing), or
//! reached by `..` after a link (`ATT/sub/../victim`). So:
//!
//! - the path is cut into components first: empty ones and `.` are dropped
//!   (so `LINK/` and `LINK/.` name `LINK` itself), and `..` is refused;
//! - the components are resolved with `openat2(RESOLVE_NO_SYMLINKS |
//!   RESOLVE_NO_MAGICLINKS)`, or, on kernels without `openat2` (before
//!   5.6), one `openat(O_NOFOLLOW|O_DIRECTORY)` per component from the
//!   previous one's descriptor: a link anywhere is refused, never followed;
//! - the caller keeps the descriptor and does everything else relative to
//!   it, so renaming or swapping the path afterwards redirects nothing.

use crate::dir::DIR_FLAGS;
use crate::error::{io_err, Result, SafeError};
use rustix::fs::{self as rfs, AtFlags, Mode, ResolveFlags, CWD};
use rustix::io::Errno;
use std::ffi::OsStr;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// A path cut into the components that are resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Parsed {
    /// Starts at `/` (else at the current directory).
    pub absolute: bool,
    /// The components, without empty ones and `.`.
    pub names: Vec<Vec<u8>>,
}

impl Parsed {
    /// The path made of the first `n` components (for messages).
    pub(crate) fn prefix(&self, n: usize) -> PathBuf {
        let mut s: Vec<u8> = if self.absolute {
            b"/".to_vec()
        } else {
            Vec::new()
        };
        for (i, c) in self.names.iter().take(n).enumerate() {
            if i > 0 {
                s.push(b'/');
            }
            s.extend_from_slice(c);
        }
        if s.is_empty() {
            s.push(b'.');
        }
        PathBuf::from(OsStr::from_bytes(&s))
    }

    /// The components joined (the path given to `openat2`).
    fn joined(&self) -> PathBuf {
        self.prefix(self.names.len())
    }
}

/// Cut `path` into components: `""` and `.` dropped, `..` refused, an
/// empty path refused.
pub(crate) fn parse(path: &Path) -> Result<Parsed> {
    parse_with(path, false)
}

/// [`parse`] for a path that is only read: `..` is kept as a component.
/// No link is followed anywhere, so a `..` climbs only real directories
/// (it cannot climb out of where a link led); `report ../run1` is common.
pub(crate) fn parse_input(path: &Path) -> Result<Parsed> {
    parse_with(path, true)
}

fn parse_with(path: &Path, dotdot: bool) -> Result<Parsed> {
    let bytes = path.as_os_str().as_bytes();
    if bytes.is_empty() {
        return Err(bad(path, "an empty path names no directory"));
    }
    let mut names = Vec::new();
    for c in bytes.split(|b| *b == b'/') {
        match c {
            b"" | b"." => {}
            b".." if dotdot => names.push(c.to_vec()),
            b".." => {
                return Err(bad(
                    path,
                    "it contains `..`; give the path without `..` (rtshield resolves no \
                     `..` in a path it writes to, since it would climb out of a link)",
                ))
            }
            _ => names.push(c.to_vec()),
        }
    }
    Ok(Parsed {
        absolute: bytes[0] == b'/',
        names,
    })
}

fn bad(path: &Path, why: &str) -> SafeError {
    SafeError::BadPath {
        path: path.to_path_buf(),
        why: why.to_string(),
    }
}

/// The refusal of a path with a link at component `n` (0-based).
fn link_refusal(path: &Path, p: &Parsed, n: usize) -> SafeError {
    SafeError::BadPath {
        path: path.to_path_buf(),
        why: format!(
            "{} is a symbolic link; rtshield follows no link in a path it writes to \
             (give the real path, e.g. the one `realpath` prints, if you trust every \
             directory on it)",
            p.prefix(n + 1).display()
        ),
    }
}

/// Set when `openat2` is missing (Linux before 5.6, or filtered by a
/// seccomp policy): the component walk is used from then on.
static NO_OPENAT2: AtomicBool = AtomicBool::new(false);

/// The start of a path: `/` or the current directory.
fn start(p: &Parsed, path: &Path) -> Result<OwnedFd> {
    let at = if p.absolute { "/" } else { "." };
    rfs::openat(CWD, at, DIR_FLAGS, Mode::empty()).map_err(|e| io_err(path, e))
}

/// Open the existing directory `path`, following no link anywhere in it.
pub(crate) fn open_dir(path: &Path) -> Result<OwnedFd> {
    open_parsed(path, &parse(path)?)
}

/// [`open_dir`] for a directory only read from: `..` allowed
/// ([`parse_input`]).
pub(crate) fn open_input_dir(path: &Path) -> Result<OwnedFd> {
    open_parsed(path, &parse_input(path)?)
}

fn open_parsed(path: &Path, p: &Parsed) -> Result<OwnedFd> {
    if p.names.is_empty() {
        return start(p, path);
    }
    if !NO_OPENAT2.load(Ordering::Relaxed) {
        let how = ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
        match rfs::openat2(CWD, p.joined(), DIR_FLAGS, Mode::empty(), how) {
            Ok(fd) => return Ok(fd),
            // ENOSYS: no openat2; EPERM: a seccomp filter refusing it
            // (containers); E2BIG: an older openat2 that does not know
            // these flags. The walk gives the same guarantee.
            Err(Errno::NOSYS | Errno::PERM | Errno::TOOBIG) => {
                NO_OPENAT2.store(true, Ordering::Relaxed)
            }
            // A link: ELOOP in the middle, ENOTDIR (O_DIRECTORY) at the end.
            Err(e @ (Errno::LOOP | Errno::NOTDIR)) => return Err(explain(path, p, e)),
            Err(e) => return Err(io_err(path, e)),
        }
    }
    walk(path, p)
}

/// [`open_dir`] by the component walk only (what kernels without
/// `openat2` get; tested on its own).
pub(crate) fn walk(path: &Path, p: &Parsed) -> Result<OwnedFd> {
    let mut cur = start(p, path)?;
    for (i, name) in p.names.iter().enumerate() {
        cur = step(&cur, name, path, p, i)?;
    }
    Ok(cur)
}

/// Open component `i` (`name`) below `cur`, never through a link.
fn step(cur: &OwnedFd, name: &[u8], path: &Path, p: &Parsed, i: usize) -> Result<OwnedFd> {
    match rfs::openat(cur, OsStr::from_bytes(name), DIR_FLAGS, Mode::empty()) {
        Ok(fd) => Ok(fd),
        Err(Errno::LOOP) => Err(link_refusal(path, p, i)),
        // O_DIRECTORY|O_NOFOLLOW on a link gives ENOTDIR on some kernels;
        // a directory there now was a link a moment ago (swapped back).
        Err(Errno::NOTDIR) if is_link(cur, name) || is_dir(cur, name) => {
            Err(link_refusal(path, p, i))
        }
        // Not a directory (a file, or swapped again since): the path is
        // not one of directories, refused like a link (exit 2, nothing
        // opened), never an I/O error.
        Err(Errno::NOTDIR) => Err(SafeError::BadPath {
            path: path.to_path_buf(),
            why: format!(
                "{} exists and is not a directory",
                p.prefix(i + 1).display()
            ),
        }),
        Err(e) => Err(io_err(&p.prefix(i + 1), e)),
    }
}

fn is_dir(dir: &OwnedFd, name: &[u8]) -> bool {
    rfs::statat(dir, OsStr::from_bytes(name), AtFlags::SYMLINK_NOFOLLOW)
        .is_ok_and(|st| st.st_mode & libc::S_IFMT == libc::S_IFDIR)
}

fn is_link(dir: &OwnedFd, name: &[u8]) -> bool {
    rfs::statat(dir, OsStr::from_bytes(name), AtFlags::SYMLINK_NOFOLLOW)
        .is_ok_and(|st| st.st_mode & libc::S_IFMT == libc::S_IFLNK)
}

/// `openat2` failed with `e` (ELOOP or ENOTDIR): find the link, or the
/// component that is not a directory, for the message (nothing is opened
/// through it).
fn explain(path: &Path, p: &Parsed, e: Errno) -> SafeError {
    match walk(path, p) {
        Err(w) => w,
        // Every component a directory now, but openat2 met a link (ELOOP,
        // or ENOTDIR with O_DIRECTORY): replaced meanwhile, still refused.
        Ok(_) => {
            let _ = e;
            SafeError::BadPath {
                path: path.to_path_buf(),
                why: "a component was a symbolic link (it changed while being checked)".into(),
            }
        }
    }
}

/// Open `path`, creating the missing directories (each with exactly
/// `mode`, owned by the caller). Every directory is opened without
/// following a link, from its parent's descriptor. A directory created
/// here that is found replaced by someone else's before it was opened is
/// refused (the caller checks the final one against its policy anyway).
/// Also says whether the last directory was created here (else it existed,
/// or someone else created it meanwhile).
///
/// With `guard`, a directory is created only in a parent that passes the
/// rules of an output directory (owned by root or the caller, not
/// writable by others unless sticky; adversary round 5 (A), F22): in
/// another user's directory, that user could rename or replace what root
/// made there, and the next command to use the path would get theirs.
pub(crate) fn open_or_create_dir(path: &Path, mode: u32, guard: bool) -> Result<(OwnedFd, bool)> {
    match open_dir(path) {
        Err(e) if e.io_kind() == Some(std::io::ErrorKind::NotFound) => {}
        r => return r.map(|fd| (fd, false)),
    }
    let p = parse(path)?;
    let mut cur = start(&p, path)?;
    let mut made_last = false;
    for (i, name) in p.names.iter().enumerate() {
        match step(&cur, name, path, &p, i) {
            Ok(fd) => {
                cur = fd;
                made_last = false;
                continue;
            }
            Err(e) if e.io_kind() == Some(std::io::ErrorKind::NotFound) => {}
            Err(e) => return Err(e),
        }
        if guard {
            check_mkdir_parent(&cur, &p.prefix(i), path)?;
        }
        let made = match rfs::mkdirat(&cur, OsStr::from_bytes(name), Mode::from_raw_mode(mode)) {
            Ok(()) => true,
            // Created meanwhile by someone else: opened (and checked by the
            // caller) like any existing directory.
            Err(Errno::EXIST) => false,
            Err(e) => return Err(io_err(&p.prefix(i + 1), e)),
        };
        let fd = step(&cur, name, path, &p, i)?;
        if made {
            set_own_dir_mode(&fd, &p.prefix(i + 1), mode)?;
            let _ = rfs::fsync(&cur);
        }
        made_last = made;
        cur = fd;
    }
    Ok((cur, made_last))
}

/// Refuse to create a directory (the missing part of `path`) inside the
/// open directory `parent` (shown as `shown`) unless it is root's or the
/// caller's and writable by nobody else, or sticky.
pub(crate) fn check_mkdir_parent(parent: &OwnedFd, shown: &Path, path: &Path) -> Result<()> {
    let st = rfs::fstat(parent).map_err(|e| io_err(shown, e))?;
    let mode = st.st_mode & 0o7777;
    let who = if !crate::dir::trusted_owner(st.st_uid) {
        format!("is owned by uid {} (mode {mode:o})", st.st_uid)
    } else if mode & 0o022 != 0 && mode & 0o1000 == 0 {
        format!("is writable by others (mode {mode:o}) and has no sticky bit")
    } else {
        return Ok(());
    };
    Err(SafeError::Unsafe {
        path: path.to_path_buf(),
        why: format!(
            "it does not exist and would be created in {}, which {who}: that user could \
             rename or replace what rtshield creates there",
            shown.display()
        ),
    })
}

/// Give a directory this process just made exactly `mode` (mkdir applies
/// the umask), after checking it is still ours: one swapped in between
/// `mkdir` and `open` (in a directory others can write) is refused, and
/// its mode is left alone.
pub(crate) fn set_own_dir_mode(fd: &OwnedFd, shown: &Path, mode: u32) -> Result<()> {
    let st = rfs::fstat(fd).map_err(|e| io_err(shown, e))?;
    let me = rustix::process::geteuid().as_raw();
    if st.st_uid != me {
        return Err(SafeError::Unsafe {
            path: shown.to_path_buf(),
            why: format!(
                "it was replaced by a directory of uid {} while being created",
                st.st_uid
            ),
        });
    }
    rfs::fchmod(fd, Mode::from_raw_mode(mode)).map_err(|e| io_err(shown, e))
}

/// Split a file path into its directory (resolved by the layer) and its
/// last component, after the same normalisation: `a/./b` is `a` + `b`, a
/// trailing `/` or `/.` is refused (a file name is needed), `..` refused.
pub(crate) fn split_file(path: &Path) -> Result<(PathBuf, String)> {
    split_parsed(path, parse(path)?)
}

/// [`split_file`] for a file only read: `..` allowed in its directory.
pub(crate) fn split_input_file(path: &Path) -> Result<(PathBuf, String)> {
    split_parsed(path, parse_input(path)?)
}

fn split_parsed(path: &Path, p: Parsed) -> Result<(PathBuf, String)> {
    let bytes = path.as_os_str().as_bytes();
    let ends_as_dir = bytes.ends_with(b"/") || bytes.ends_with(b"/.") || bytes == b".";
    let Some(last) = p
        .names
        .last()
        .filter(|l| !ends_as_dir && l.as_slice() != b"..")
    else {
        return Err(bad(path, "it names a directory, not a file"));
    };
    let name = std::str::from_utf8(last)
        .map_err(|_| bad(path, "the file name is not valid UTF-8"))?
        .to_string();
    let dir = Parsed {
        absolute: p.absolute,
        names: p.names[..p.names.len() - 1].to_vec(),
    };
    Ok((dir.prefix(dir.names.len()), name))
}
