//! Kernel files of a fake tree (`--sysroot T`, `RTSHIELD_SYSROOT`),
//! opened *beneath* the tree without following any link inside it.
//!
//! The tree itself must pass `trusted_path` (whoever could change it
//! chooses what root writes), but a link *inside* it — one a colleague's
//! tarball carried, or planted in a subdirectory of the tree they own —
//! was followed: `partition create` wrote `0` through
//! `cpuset.sched_load_balance -> /victim` (adversary round 5, F18). Every
//! open, mkdir and rmdir of a kernel path below a sysroot other than `/`
//! resolves here: `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
//! RESOLVE_NO_MAGICLINKS)` from the tree's descriptor, or, where openat2 is
//! missing (before Linux 5.6, or refused by a seccomp filter), one
//! `openat(O_NOFOLLOW)` per component with `..` refused. A link anywhere
//! below the tree is an error (`ELOOP`) naming the path; nothing is
//! followed. The host's `/` keeps the kernel's own links (`/proc/self`,
//! `/sys/bus/*/devices/*`) and is not resolved here.

use rustix::fs::{self as rfs, Mode, OFlags, ResolveFlags};
use rustix::io::Errno;
use std::ffi::OsStr;
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Component, Path};

/// The tree's directory (its own path may hold links: it was checked).
fn base_fd(base: &Path) -> io::Result<OwnedFd> {
    rfs::open(
        base,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(io::Error::from)
}

/// The components of `rel` (a kernel path made relative), `.` dropped;
/// `..` refused.
fn names(rel: &Path) -> io::Result<Vec<&OsStr>> {
    let mut out = Vec::new();
    for c in rel.components() {
        match c {
            Component::Normal(n) => out.push(n),
            Component::CurDir | Component::RootDir => {}
            Component::ParentDir | Component::Prefix(_) => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "`..` in a kernel path below a fake tree",
                ))
            }
        }
    }
    Ok(out)
}

/// Open `rel` below `base` with `flags` (and `mode` when creating),
/// following no link below `base`.
pub(crate) fn open(base: &Path, rel: &Path, flags: OFlags, mode: u32) -> io::Result<OwnedFd> {
    let dir = base_fd(base)?;
    let names = names(rel)?;
    // openat2 refuses a mode without O_CREAT.
    let mode = if flags.contains(OFlags::CREATE) {
        Mode::from_raw_mode(mode)
    } else {
        Mode::empty()
    };
    let flags = flags | OFlags::CLOEXEC | OFlags::NOFOLLOW;
    if names.is_empty() {
        return rfs::openat(&dir, ".", flags, mode).map_err(io::Error::from);
    }
    let joined: std::path::PathBuf = names.iter().collect();
    let how = ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
    match rfs::openat2(&dir, &joined, flags, mode, how) {
        Err(Errno::NOSYS | Errno::PERM) => walk(&dir, &names, flags, mode),
        // EAGAIN: openat2 asks to retry when a rename raced it.
        Err(Errno::AGAIN) => walk(&dir, &names, flags, mode),
        r => r.map_err(io::Error::from),
    }
}

/// One `openat(O_NOFOLLOW)` per component from `dir`.
fn walk(dir: &OwnedFd, names: &[&OsStr], flags: OFlags, mode: Mode) -> io::Result<OwnedFd> {
    let (last, parents) = names.split_last().expect("at least one component");
    let mut cur: Option<OwnedFd> = None;
    for n in parents {
        let from = cur.as_ref().unwrap_or(dir);
        let next = rfs::openat(
            from,
            n.as_bytes(),
            OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| match e {
            // O_PATH|O_NOFOLLOW on a link to a directory: ENOTDIR.
            Errno::NOTDIR if is_link(from, n) => io::Error::from(Errno::LOOP),
            e => io::Error::from(e),
        })?;
        cur = Some(next);
    }
    let from = cur.as_ref().unwrap_or(dir);
    rfs::openat(from, last.as_bytes(), flags, mode).map_err(io::Error::from)
}

fn is_link(dir: &OwnedFd, name: &OsStr) -> bool {
    rfs::statat(dir, name.as_bytes(), rfs::AtFlags::SYMLINK_NOFOLLOW)
        .is_ok_and(|s| s.st_mode & libc::S_IFMT == libc::S_IFLNK)
}

/// The parent directory of `rel` below `base` (no link followed) and the
/// last component's name.
fn parent(base: &Path, rel: &Path) -> io::Result<(OwnedFd, std::ffi::OsString)> {
    let names = names(rel)?;
    let (last, dirs) = names
        .split_last()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "the tree itself"))?;
    let p: std::path::PathBuf = dirs.iter().collect();
    let fd = open(base, &p, OFlags::PATH | OFlags::DIRECTORY, 0)?;
    Ok((fd, last.to_os_string()))
}

/// `mkdir` of `rel` below `base` (its parents resolved without links).
pub(crate) fn mkdir(base: &Path, rel: &Path, mode: u32) -> io::Result<()> {
    let (dir, name) = parent(base, rel)?;
    rfs::mkdirat(&dir, name.as_bytes(), Mode::from_raw_mode(mode)).map_err(io::Error::from)
}

/// `rmdir` of `rel` below `base`: a link of that name is not a directory
/// and is not removed.
pub(crate) fn rmdir(base: &Path, rel: &Path) -> io::Result<()> {
    let (dir, name) = parent(base, rel)?;
    rfs::unlinkat(&dir, name.as_bytes(), rfs::AtFlags::REMOVEDIR).map_err(io::Error::from)
}

/// The names in directory `rel` below `base`.
pub(crate) fn list(base: &Path, rel: &Path) -> io::Result<Vec<String>> {
    let fd = open(base, rel, OFlags::RDONLY | OFlags::DIRECTORY, 0)?;
    let mut out = Vec::new();
    for e in rfs::Dir::read_from(&fd).map_err(io::Error::from)? {
        let e = e.map_err(io::Error::from)?;
        let n = e.file_name().to_bytes();
        if n != b"." && n != b".." {
            out.push(String::from_utf8_lossy(n).into_owned());
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fallback walk (kernels without openat2) refuses the same
    /// links: one in the middle of the path, one as the last component.
    #[test]
    fn the_walk_follows_no_link_either() {
        let d = tempfile::tempdir().unwrap();
        let out = tempfile::tempdir().unwrap();
        std::fs::write(out.path().join("v"), "precious").unwrap();
        std::fs::create_dir_all(d.path().join("a/b")).unwrap();
        std::fs::write(d.path().join("a/b/ok"), "1").unwrap();
        std::os::unix::fs::symlink(out.path(), d.path().join("a/mid")).unwrap();
        std::os::unix::fs::symlink(out.path().join("v"), d.path().join("a/b/last")).unwrap();
        let dir = base_fd(d.path()).unwrap();
        let w = |p: &str| {
            let n = names(Path::new(p)).unwrap();
            walk(
                &dir,
                &n,
                OFlags::WRONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::empty(),
            )
        };
        assert!(w("a/b/ok").is_ok());
        assert_eq!(w("a/mid/v").unwrap_err().raw_os_error(), Some(libc::ELOOP));
        assert_eq!(w("a/b/last").unwrap_err().raw_os_error(), Some(libc::ELOOP));
        assert!(names(Path::new("a/../b")).is_err());
        assert_eq!(
            std::fs::read_to_string(out.path().join("v")).unwrap(),
            "precious"
        );
    }
}
