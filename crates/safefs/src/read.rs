//! Bounded reads: a file of a [`SafeDir`] (never through a symlink), state
//! that root acts on (private files only), and user-given input files.

use crate::dir::{trusted_owner, SafeDir};
use crate::error::{check_name, io_err, Result, SafeError};
use rustix::fs::{self as rfs, Mode, OFlags};
use std::io::{self, Read};
use std::os::fd::OwnedFd;
use std::path::Path;

impl SafeDir {
    /// Open `name` for reading, never through a symlink and without
    /// blocking on a FIFO.
    fn open_to_read(&self, name: &str) -> rustix::io::Result<OwnedFd> {
        rfs::openat(
            &self.fd,
            name,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK,
            Mode::empty(),
        )
    }

    /// Read the regular file `name` (never through a symlink), at most
    /// `limit` bytes; a larger file is an error naming the limit.
    pub fn read(&self, name: &str, limit: u64) -> Result<Vec<u8>> {
        check_name(name)?;
        let p = self.path.join(name);
        let fd = self.open_to_read(name).map_err(|e| io_err(&p, e))?;
        read_regular(fd, &p, limit)
    }

    /// Read `name`, which root will act on: it must be a regular file (not
    /// a symlink), owned by root or the effective uid, with no permission
    /// for group or others (mode ≤ 0600), at most `limit` bytes. Anything
    /// else is [`SafeError::Untrusted`].
    pub fn read_private(&self, name: &str, limit: u64) -> Result<Vec<u8>> {
        check_name(name)?;
        let p = self.path.join(name);
        let fd = self.open_to_read(name).map_err(|e| match e {
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
}

/// Read an open file that must be regular, at most `limit` bytes.
pub(crate) fn read_regular(fd: OwnedFd, p: &Path, limit: u64) -> Result<Vec<u8>> {
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

/// Read a user-supplied data input (a result, a timeline, a cyclictest
/// file): it must be a regular file (a FIFO, device or directory is
/// refused without blocking), at most `limit` bytes; no symbolic link is
/// followed anywhere in `path`, and in a directory another user owns or
/// others may write, only a file that user could read is read (module
/// `input`; adversary round 5 (A), F04).
pub fn read_input(path: &Path, limit: u64) -> Result<Vec<u8>> {
    crate::input::read_data(path, limit)
}

/// [`read_input`], and whether every user of the machine may read the
/// file: it gives read permission to others and every directory above it
/// (its real path, checked to be the file opened) gives search permission
/// to others. Only such a file's text may be quoted in an error message
/// (crate `text`, module `excerpt`): root must not show, in a message
/// about a path another user chose, a file that user could not read.
pub fn read_input_public(path: &Path, limit: u64) -> Result<(Vec<u8>, bool)> {
    crate::input::read_data_public(path, limit)
}

/// Whether others may read the open file and search every directory
/// above it. The real path is the file opened only if it names the same
/// inode: a link swapped in between makes the answer "no" (nothing quoted).
pub(crate) fn readable_by_everyone(fd: &OwnedFd, path: &Path) -> bool {
    let Ok(st) = rfs::fstat(fd) else {
        return false;
    };
    if st.st_mode & 0o004 == 0 {
        return false;
    }
    let Ok(real) = std::fs::canonicalize(path) else {
        return false;
    };
    let same = rfs::stat(&real).is_ok_and(|r| (r.st_dev, r.st_ino) == (st.st_dev, st.st_ino));
    same && real
        .ancestors()
        .skip(1)
        .all(|d| rfs::stat(d).is_ok_and(|st| st.st_mode & 0o001 != 0))
}
