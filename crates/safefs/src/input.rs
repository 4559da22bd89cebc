//! Files rtshield reads that someone else may have put in its way
//! (adversary round 5 (A), docs/security.md).
//!
//! Two kinds, two rules:
//!
//! - **Data inputs** (results.json, timeline.csv, cyclictest and systress
//!   files, a scenario to simulate): root shows what it reads in reports
//!   other users can read, so it must not read, for another user, a file
//!   that user could not read (F04). They are opened through the path
//!   layer: no symbolic link followed anywhere in the path (the path
//!   layer's resolve), the file itself `O_NOFOLLOW`. And in a directory
//!   that another user owns, or that others may write, the file is read
//!   only if every user may read it, or it is the directory owner's own
//!   file, or it is a file of root (or the caller) with a single link
//!   (root put it there): a hard link planted to a root-only file is
//!   refused.
//! - **Trusted inputs** (a `run` configuration, a campaign file, a
//!   scenario to run): they say what root executes and writes (F01/F07).
//!   As root, such a file is used only when it and every directory above
//!   it (through any link) are root's or the caller's and writable by
//!   nobody else (`trusted_path`), checked again on the descriptor that
//!   is read. Otherwise it is refused, or only warned about when nothing
//!   is run (`--check`, `--dry-run`) or the user said so
//!   (`--force-unsafe-dir`).

use crate::dir::trusted_owner;
use crate::error::{check_name, io_err, Result, SafeError};
use crate::read::{read_regular, readable_by_everyone};
use crate::resolve;
use rustix::fs::{self as rfs, Mode, OFlags, Stat};
use rustix::io::Errno;
use std::os::fd::OwnedFd;
use std::path::Path;

const READ_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::CLOEXEC)
    .union(OFlags::NONBLOCK)
    .union(OFlags::NOFOLLOW);

/// Open the data input `path`: no link followed anywhere in it, and the
/// rule of a directory others control (module doc). Refusals are
/// [`SafeError::BadPath`] naming the file (exit 2 for the callers).
pub(crate) fn open_data_input(path: &Path) -> Result<OwnedFd> {
    let (dir, name) = resolve::split_input_file(path).map_err(|e| match e {
        SafeError::BadPath { why, .. } => SafeError::BadPath {
            path: path.to_path_buf(),
            why: format!("{why} (an input must name a file)"),
        },
        e => e,
    })?;
    check_name(&name)?;
    let dfd = resolve::open_input_dir(&dir).map_err(|e| match e {
        // The message of the path layer speaks of writing.
        SafeError::BadPath { why, .. } => SafeError::BadPath {
            path: path.to_path_buf(),
            why: why.replace("a path it writes to", "a path it reads"),
        },
        e => e,
    })?;
    let fd = match rfs::openat(&dfd, name.as_str(), READ_FLAGS, Mode::empty()) {
        Ok(fd) => fd,
        Err(Errno::LOOP) => {
            return Err(SafeError::BadPath {
                path: path.to_path_buf(),
                why: "it is a symbolic link; rtshield follows no link to a file it reads \
                      (give the real path, e.g. the one `realpath` prints, if you trust \
                      every directory on it)"
                    .into(),
            })
        }
        Err(e) => return Err(io_err(path, e)),
    };
    let st = rfs::fstat(&fd).map_err(|e| io_err(path, e))?;
    let dst = rfs::fstat(&dfd).map_err(|e| io_err(&dir, e))?;
    check_foreign_dir(path, &dir, &st, &dst)?;
    Ok(fd)
}

/// A file in a directory others control is read only when the directory's
/// owner could read it themselves, or root put it there.
fn check_foreign_dir(path: &Path, dir: &Path, st: &Stat, dst: &Stat) -> Result<()> {
    let dmode = dst.st_mode & 0o7777;
    let dir_why = if !trusted_owner(dst.st_uid) {
        format!("is owned by uid {} (mode {dmode:o})", dst.st_uid)
    } else if dmode & 0o022 != 0 {
        format!("others may write into (mode {dmode:o})")
    } else {
        return Ok(());
    };
    let fmode = st.st_mode & 0o7777;
    let regular = st.st_mode & libc::S_IFMT == libc::S_IFREG;
    let everyone = fmode & 0o004 != 0;
    let dir_owners = st.st_uid == dst.st_uid && !trusted_owner(dst.st_uid);
    let ours_alone = trusted_owner(st.st_uid) && st.st_nlink == 1;
    // Not a regular file: refused later by the bounded reader (not here,
    // so the message stays "not a regular file").
    if !regular || everyone || dir_owners || ours_alone {
        return Ok(());
    }
    Err(SafeError::BadPath {
        path: path.to_path_buf(),
        why: format!(
            "refusing to read it: it is a file of uid {} (mode {fmode:o}, {} link(s)) in {}, \
             which {dir_why}: whoever controls that directory may have linked it there to \
             make rtshield show a file they cannot read (copy it to a directory of yours, \
             or make it readable by others if it holds nothing private)",
            st.st_uid,
            st.st_nlink,
            if dir.as_os_str().is_empty() {
                Path::new(".")
            } else {
                dir
            }
            .display()
        ),
    })
}

/// Read the data input `path` (module doc), at most `limit` bytes.
pub(crate) fn read_data(path: &Path, limit: u64) -> Result<Vec<u8>> {
    read_regular(open_data_input(path)?, path, limit)
}

/// [`read_data`], and whether every user may read the file (its text may
/// then be quoted in an error).
pub(crate) fn read_data_public(path: &Path, limit: u64) -> Result<(Vec<u8>, bool)> {
    let fd = open_data_input(path)?;
    let public = readable_by_everyone(&fd, path);
    Ok((read_regular(fd, path, limit)?, public))
}

/// What to do, as root, with a file that chooses what root runs or
/// writes when it fails the trust rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputTrust {
    /// Refuse it (exit 2): it would be run (`run`, `campaign`, `scenario`).
    Refuse,
    /// Warn and read it as a data input (no link, the directory rule):
    /// nothing is run (`--check`, `--dry-run`).
    Warn,
    /// Warn and read it as given: `--force-unsafe-dir`.
    Accept,
}

/// A trusted input as read.
#[derive(Debug)]
pub struct TrustedInput {
    /// Its bytes.
    pub bytes: Vec<u8>,
    /// Whether every user may read it (errors may quote it).
    pub public: bool,
    /// Why it is not trusted, when it was read anyway (to print as a warning).
    pub warning: Option<String>,
}

/// Read `path`, a file that says what root runs or writes (`what`: "its
/// programs, loads and outputs", …), at most `limit` bytes. As root it
/// must pass [`crate::trusted_path`] (every component, through links,
/// root's or the caller's and writable by nobody else), and the file
/// opened must be a regular file of root or the caller that nobody else
/// may write (checked on the descriptor read: a file created after the
/// walk is caught). Otherwise `trust` decides. Another caller than root
/// reads it as before: it runs nothing with more rights than its own.
pub fn read_trusted_input(
    path: &Path,
    limit: u64,
    trust: InputTrust,
    what: &str,
) -> Result<TrustedInput> {
    if !rustix::process::geteuid().is_root() {
        let (bytes, public) = read_any(path, limit)?;
        return Ok(TrustedInput {
            bytes,
            public,
            warning: None,
        });
    }
    let why = match crate::trusted_path(path) {
        Ok(()) => {
            let fd = rfs::open(path, READ_FLAGS.difference(OFlags::NOFOLLOW), Mode::empty())
                .map_err(|e| io_err(path, e))?;
            match fd_untrusted(&fd, path)? {
                None => {
                    let public = readable_by_everyone(&fd, path);
                    let bytes = read_regular(fd, path, limit)?;
                    return Ok(TrustedInput {
                        bytes,
                        public,
                        warning: None,
                    });
                }
                Some(why) => why,
            }
        }
        Err(why) => why,
    };
    let about = describe(path);
    let msg = format!(
        "{what} come from this file, and {why}: whoever can change it chooses what root \
         runs and writes"
    );
    match trust {
        InputTrust::Refuse => Err(SafeError::BadPath {
            path: path.to_path_buf(),
            why: format!(
                "{about}; refusing to use it as root: {msg} (copy it to a directory only root \
                 can write, e.g. `install -m 600 FILE /root/`, or give --force-unsafe-dir if \
                 you trust every user who can change it)"
            ),
        }),
        InputTrust::Warn => {
            let (bytes, public) = read_data_public(path, limit)?;
            Ok(TrustedInput {
                bytes,
                public,
                warning: Some(format!(
                    "{}: {about}: {msg} (as root it is refused unless --force-unsafe-dir is \
                     given)",
                    path.display()
                )),
            })
        }
        InputTrust::Accept => {
            let (bytes, public) = read_any(path, limit)?;
            Ok(TrustedInput {
                bytes,
                public,
                warning: Some(format!(
                    "{}: {about}: {msg} (used anyway: --force-unsafe-dir)",
                    path.display()
                )),
            })
        }
    }
}

/// The file's owner and mode, for the message (`owned by uid 1001, mode
/// 644`). Of the path itself (`lstat`): a link another user planted must
/// not make root describe the file it points to.
fn describe(path: &Path) -> String {
    match rfs::lstat(path) {
        Ok(st) if st.st_mode & libc::S_IFMT == libc::S_IFLNK => {
            format!("it is a symbolic link of uid {}", st.st_uid)
        }
        Ok(st) => format!(
            "it is owned by uid {}, mode {:o}",
            st.st_uid,
            st.st_mode & 0o7777
        ),
        Err(_) => "it cannot be checked".into(),
    }
}

/// Why the open trusted input may not be trusted after all (it changed
/// after the walk), if so.
fn fd_untrusted(fd: &OwnedFd, path: &Path) -> Result<Option<String>> {
    let st = rfs::fstat(fd).map_err(|e| io_err(path, e))?;
    let mode = st.st_mode & 0o7777;
    Ok(if st.st_mode & libc::S_IFMT != libc::S_IFREG {
        None // the bounded reader says "not a regular file"
    } else if !trusted_owner(st.st_uid) {
        Some(format!(
            "the file opened is owned by uid {}, not by root or you",
            st.st_uid
        ))
    } else if mode & 0o022 != 0 {
        Some(format!(
            "the file opened is mode {mode:o}: others may write it"
        ))
    } else {
        None
    })
}

/// Read `path` as given (links followed): a regular file only, bounded.
fn read_any(path: &Path, limit: u64) -> Result<(Vec<u8>, bool)> {
    let fd = rfs::open(path, READ_FLAGS.difference(OFlags::NOFOLLOW), Mode::empty())
        .map_err(|e| io_err(path, e))?;
    let public = readable_by_everyone(&fd, path);
    Ok((read_regular(fd, path, limit)?, public))
}
