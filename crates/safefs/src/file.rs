//! Writing through a [`SafeDir`]: atomic replacement (temporary name
//! nobody can predict, fsync, `renameat`, directory fsync), append-only
//! logs, and removal that never follows a symlink.

use crate::dir::{trusted_owner, SafeDir};
use crate::error::{check_name, io_err, Result, SafeError};
use rustix::fs::{self as rfs, AtFlags, Mode, OFlags};
use std::io::{self, Write};
use std::os::fd::OwnedFd;

impl SafeDir {
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
    /// written row by row, so not atomically): an existing file or link is
    /// removed first (a link is removed, never followed; anything else, a
    /// device or a FIFO, is refused), then the file is
    /// created with `O_CREAT|O_EXCL|O_NOFOLLOW` relative to the directory
    /// descriptor, mode 0644.
    pub fn create_appendable(&self, name: &str) -> Result<std::fs::File> {
        check_name(name)?;
        // Only a file or a link is replaced: never a device (`/dev/tty`),
        // a FIFO or a socket someone named as an output.
        if let Ok(st) = rfs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            let fmt = st.st_mode & libc::S_IFMT;
            if fmt != libc::S_IFREG && fmt != libc::S_IFLNK {
                return Err(SafeError::Unsafe {
                    path: self.path.join(name),
                    why: "it is not a regular file (only a file is replaced)".into(),
                });
            }
        }
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
    /// symlink is refused (`O_NOFOLLOW`), never followed. An existing file
    /// must be a regular file of root or the caller with one link: a hard
    /// link another user made to one of root's files (possible where
    /// `fs.protected_hardlinks=0`) would otherwise be appended to. For logs
    /// that outlive one writer (a respawned program's output).
    pub fn open_append(&self, name: &str) -> Result<std::fs::File> {
        check_name(name)?;
        let p = self.path.join(name);
        let flags = OFlags::WRONLY
            .union(OFlags::CREATE)
            .union(OFlags::NOFOLLOW)
            .union(OFlags::APPEND)
            .union(OFlags::CLOEXEC)
            .union(OFlags::NONBLOCK);
        let fd = rfs::openat(&self.fd, name, flags, Mode::from_raw_mode(0o644))
            .map_err(|e| io_err(&p, e))?;
        check_own_file(&fd, &p)?;
        Ok(std::fs::File::from(fd))
    }

    /// Create the new file `name` (`O_CREAT|O_EXCL|O_NOFOLLOW`, exactly
    /// `mode`, `O_SYNC` if `sync`): fails if anything, even a dangling
    /// link, has that name. For scratch files in a private directory (the
    /// io loads').
    pub fn create_new_file(&self, name: &str, mode: u32, sync: bool) -> Result<std::fs::File> {
        check_name(name)?;
        let p = self.path.join(name);
        let mut flags = OFlags::RDWR
            .union(OFlags::CREATE)
            .union(OFlags::EXCL)
            .union(OFlags::NOFOLLOW)
            .union(OFlags::CLOEXEC);
        if sync {
            flags |= OFlags::SYNC;
        }
        let fd = rfs::openat(&self.fd, name, flags, Mode::from_raw_mode(mode))
            .map_err(|e| io_err(&p, e))?;
        rfs::fchmod(&fd, Mode::from_raw_mode(mode)).map_err(|e| io_err(&p, e))?;
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
}

/// Which file a path led to: device and inode (to check that two opens
/// reached the same file).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FileId {
    /// Device.
    pub dev: u64,
    /// Inode.
    pub ino: u64,
}

impl SafeDir {
    /// Check that the entry `name` (never followed if a link) is a file
    /// only the caller controls: a regular file owned by the effective
    /// uid, writable by nobody else, with a single link (a hard link to
    /// another file would make writes land there). `Ok(None)`: no such
    /// entry. Anything else is [`SafeError::Untrusted`].
    pub fn own_file(&self, name: &str) -> Result<Option<FileId>> {
        check_name(name)?;
        let p = self.path.join(name);
        let st = match rfs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => st,
            Err(rustix::io::Errno::NOENT) => return Ok(None),
            Err(e) => return Err(io_err(&p, e)),
        };
        let me = rustix::process::geteuid().as_raw();
        let fmt = st.st_mode & libc::S_IFMT;
        let why = if fmt == libc::S_IFLNK {
            "it is a symbolic link".to_string()
        } else if fmt != libc::S_IFREG {
            "it is not a regular file".to_string()
        } else if st.st_uid != me {
            format!("it is owned by uid {}, not by you (uid {me})", st.st_uid)
        } else if st.st_mode & 0o022 != 0 {
            format!("it is mode {:o}: others may write it", st.st_mode & 0o7777)
        } else if st.st_nlink != 1 {
            format!("it has {} hard links", st.st_nlink)
        } else {
            return Ok(Some(FileId {
                dev: st.st_dev,
                ino: st.st_ino,
            }));
        };
        Err(SafeError::Untrusted { path: p, why })
    }

    /// The regular files of this directory (never following a link), each
    /// with its identity and size: what a run directory's manifest is made
    /// of (crate `results`, module `run_files`).
    pub fn regular_files(&self) -> Result<std::collections::BTreeMap<String, (FileId, u64)>> {
        let mut out = std::collections::BTreeMap::new();
        for name in self.list()? {
            if check_name(&name).is_err() {
                continue;
            }
            if let Ok(st) = rfs::statat(&self.fd, name.as_str(), AtFlags::SYMLINK_NOFOLLOW) {
                if st.st_mode & libc::S_IFMT == libc::S_IFREG {
                    let id = FileId {
                        dev: st.st_dev,
                        ino: st.st_ino,
                    };
                    out.insert(name, (id, st.st_size as u64));
                }
            }
        }
        Ok(out)
    }

    /// This directory's device and inode.
    pub fn id(&self) -> Result<FileId> {
        let st = rfs::fstat(&self.fd).map_err(|e| io_err(&self.path, e))?;
        Ok(FileId {
            dev: st.st_dev,
            ino: st.st_ino,
        })
    }
}

/// Refuse to write into an open file unless it is a regular file of root
/// or the caller, with a single link (see [`SafeDir::open_append`]).
pub(crate) fn check_own_file(fd: &OwnedFd, p: &std::path::Path) -> Result<()> {
    let st = rfs::fstat(fd).map_err(|e| io_err(p, e))?;
    let why = if st.st_mode & libc::S_IFMT != libc::S_IFREG {
        "it is not a regular file".to_string()
    } else if !trusted_owner(st.st_uid) {
        format!("it is owned by uid {}", st.st_uid)
    } else if st.st_nlink != 1 {
        format!(
            "it has {} hard links (another name for it may be a file you did not mean to write)",
            st.st_nlink
        )
    } else {
        return Ok(());
    };
    Err(SafeError::Unsafe {
        path: p.to_path_buf(),
        why,
    })
}

/// 64 random bits as hex, for temporary names nobody can predict.
pub(crate) fn random_hex() -> String {
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
