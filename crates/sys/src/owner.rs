//! Who owns a kernel object rtshield made (a trace instance, its private
//! tracefs mount): a lock file the live owner holds.
//!
//! Objects are named after the owner's pid (`rtshield-<pid>`), but a pid
//! names a process only in its own PID namespace and until the next boot:
//! two runs in two containers are both pid 2, and the reaper of one took
//! the other's live instance and mount for a dead process's (adversary
//! round 5, F08). So every object also has a record,
//! `/run/rtshield-owners/<name>.lock` (a 0700 directory of root's; below
//! the tree on a fake one), created before the object and held with an
//! exclusive `flock` by the process that made it for as long as it lives.
//! The kernel drops the lock when the process dies, whatever namespace it
//! ran in, and nothing survives a reboot (`/run` is a tmpfs). The record
//! also says, for people, the boot id, the PID namespace and the pid.
//!
//! An object is the owner's while its lock is held ([`state`]: `Alive`),
//! a leftover once the lock can be taken (`Dead`), and of unknown owner
//! when there is no record (an older rtshield's, or one made with another
//! `/run`): then its pid is trusted only in the initial PID namespace,
//! where a pid is the whole machine's.

use crate::Root;
use rustix::fs::{self as rfs, FlockOperation, Mode, OFlags};
use std::io;
use std::os::fd::OwnedFd;
use std::sync::Mutex;

/// Where the records live (below the root).
pub(crate) const OWNERS_DIR: &str = "/run/rtshield-owners";

/// The records this process holds: (root base, name, the locked file).
static HELD: Mutex<Vec<(std::path::PathBuf, String, OwnedFd)>> = Mutex::new(Vec::new());

/// What a record says of its object's owner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Owner {
    /// The lock is held: the owner lives (this process, or another in any
    /// PID namespace).
    Alive,
    /// The lock was free: the owner is gone.
    Dead,
    /// No record.
    Unknown,
}

/// The records' directory: made 0700 if missing; it must be a real
/// directory of ours closed to others (never a link).
fn dir(root: &Root) -> io::Result<OwnedFd> {
    let p = root.path(OWNERS_DIR);
    if !root.is_host() {
        // A fake tree may have no /run yet.
        let _ = std::fs::create_dir_all(root.path("/run"));
    }
    if let Err(e) = rfs::mkdir(&p, Mode::from_raw_mode(0o700)) {
        if e != rustix::io::Errno::EXIST {
            return Err(io::Error::new(
                io::Error::from(e).kind(),
                format!("{}: {e}", p.display()),
            ));
        }
    }
    let fd = rfs::open(
        &p,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    let st = rfs::fstat(&fd)?;
    if st.st_uid != rustix::process::geteuid().as_raw() || st.st_mode & 0o077 != 0 {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "{}: not a private directory of this user (owner uid {}, mode {:o})",
                p.display(),
                st.st_uid,
                st.st_mode & 0o7777
            ),
        ));
    }
    Ok(fd)
}

fn lock_name(name: &str) -> io::Result<String> {
    if name.is_empty() || name.contains('/') || name.starts_with('.') {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "bad owner name",
        ));
    }
    Ok(format!("{name}.lock"))
}

/// Take the record of object `name` for this process, before making the
/// object: false when another live process holds it (the name is taken:
/// choose another).
pub(crate) fn hold(root: &Root, name: &str) -> io::Result<bool> {
    let d = dir(root)?;
    let f = lock_name(name)?;
    let fd = rfs::openat(
        &d,
        f.as_str(),
        OFlags::RDWR | OFlags::CREATE | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o600),
    )?;
    let st = rfs::fstat(&fd)?;
    if st.st_mode & libc::S_IFMT != libc::S_IFREG || st.st_nlink != 1 {
        return Err(io::Error::other(format!(
            "{OWNERS_DIR}/{f}: not a plain file"
        )));
    }
    match rfs::flock(&fd, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => {}
        Err(rustix::io::Errno::WOULDBLOCK) => return Ok(false),
        Err(e) => return Err(e.into()),
    }
    // For people: whose it is (the lock is what counts).
    let note = format!(
        "pid {} pidns {} boot {}\n",
        std::process::id(),
        std::fs::read_link("/proc/self/ns/pid")
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| "?".into()),
        std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|_| "?".into()),
    );
    let _ = rfs::ftruncate(&fd, 0);
    let _ = rustix::io::pwrite(&fd, note.as_bytes(), 0);
    HELD.lock().unwrap_or_else(|e| e.into_inner()).push((
        root.base().to_path_buf(),
        name.to_string(),
        fd,
    ));
    Ok(true)
}

/// Give up the record of `name` (the object is gone): the file removed,
/// the lock dropped.
pub(crate) fn release(root: &Root, name: &str) {
    let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(i) = held
        .iter()
        .position(|(b, n, _)| b == root.base() && n == name)
    {
        if let (Ok(d), Ok(f)) = (dir(root), lock_name(name)) {
            let _ = rfs::unlinkat(&d, f.as_str(), rfs::AtFlags::empty());
        }
        held.remove(i);
    }
}

/// Whether this process holds the record of `name`.
pub(crate) fn held_here(root: &Root, name: &str) -> bool {
    HELD.lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .any(|(b, n, _)| b == root.base() && n == name)
}

/// The owner of object `name`, by its record.
pub(crate) fn state(root: &Root, name: &str) -> Owner {
    if held_here(root, name) {
        return Owner::Alive;
    }
    let (Ok(d), Ok(f)) = (dir(root), lock_name(name)) else {
        return Owner::Unknown;
    };
    let Ok(fd) = rfs::openat(
        &d,
        f.as_str(),
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK,
        Mode::empty(),
    ) else {
        return Owner::Unknown;
    };
    match rfs::flock(&fd, FlockOperation::NonBlockingLockExclusive) {
        // Ours for a moment: nobody holds it, the owner is gone. (Closing
        // the descriptor drops the lock again.)
        Ok(()) => Owner::Dead,
        Err(_) => Owner::Alive,
    }
}

/// Remove the record of a dead owner's object, once the object is gone.
pub(crate) fn forget(root: &Root, name: &str) {
    if state(root, name) == Owner::Dead {
        if let (Ok(d), Ok(f)) = (dir(root), lock_name(name)) {
            let _ = rfs::unlinkat(&d, f.as_str(), rfs::AtFlags::empty());
        }
    }
}

/// Whether this process runs in the initial PID namespace (inode
/// `PROC_PID_INIT_INO`, 0xEFFFFFFC), where a pid names a process of the
/// whole machine. On a fake tree, its `/proc/self/ns/pid` says.
pub(crate) fn in_initial_pid_namespace(root: &Root) -> bool {
    const INIT: &str = "pid:[4026531836]";
    if root.is_host() {
        return std::fs::read_link("/proc/self/ns/pid").is_ok_and(|l| l.as_os_str() == INIT);
    }
    // A fake tree is one machine unless it says otherwise.
    root.read_opt("/proc/self/ns/pid").is_none_or(|l| l == INIT)
}
