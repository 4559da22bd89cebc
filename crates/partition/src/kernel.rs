//! Every read and write `partition` makes, in one place: through a
//! [`Root`], optionally in dry-run mode (writes are logged, not made), and
//! optionally through a [`Backend`] that emulates the kernel's cgroup
//! semantics on a fake tree. The backend is always chosen by the caller
//! (tests pass `rtshield-fake-kernel`'s, which only test builds link):
//! nothing found on disk switches it on.

use rtshield_sys::Root;
use std::io;

/// A write that was stopped on purpose to simulate a killed `create`
/// (fake trees only, `kill_after_writes`). Never rolled back.
#[derive(Debug, thiserror::Error)]
#[error("simulated kill after {0} writes (fake tree)")]
pub(crate) struct SimulatedKill(pub usize);

/// What a write, `mkdir` or `rmdir` does besides changing a plain file:
/// the kernel's side effects, emulated on a fake tree.
pub trait Backend {
    /// Write `value` to `path`, with the kernel's side effects (moving a task, refusing an IRQ).
    fn write(&mut self, root: &Root, path: &str, value: &str) -> io::Result<()>;
    /// Create cgroup `path`, filling it with control files as the kernel does.
    fn mkdir(&mut self, root: &Root, path: &str) -> io::Result<()>;
    /// Remove cgroup `path`; fails like the kernel when it still holds tasks.
    fn rmdir(&mut self, root: &Root, path: &str) -> io::Result<()>;
    /// Fail every write after this many (a killed `create`).
    fn kill_after_writes(&self) -> Option<usize> {
        None
    }
    /// Set thread `tid`'s CPU affinity (`partition move -c`), as
    /// `sched_setaffinity` would. Unsupported unless the emulation says.
    fn set_affinity(&mut self, _root: &Root, _tid: u32, _cpus: &str) -> io::Result<()> {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "setting an affinity is not emulated on this tree",
        ))
    }
}

/// How long `undo` waits, at most, for the tasks still in a cgroup it
/// removes to finish exiting (`rmdir` fails with EBUSY meanwhile): 150
/// threads in `O_SYNC` writes take a while to die.
pub(crate) const BUSY_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Every read and write `partition` makes: below one root, in dry-run mode or for
/// real, through an optional emulation [`Backend`].
pub struct Kernel {
    /// The tree every path is resolved below.
    pub root: Root,
    /// Writes, `mkdir`s and `rmdir`s are logged in [`Kernel::log`], not made.
    pub dry_run: bool,
    /// What a dry run would have done, in order (`write PATH <- VALUE`).
    pub log: Vec<String>,
    /// How long `undo` waits for exiting tasks to leave a cgroup it
    /// removes ([`BUSY_WAIT`]; shorter in tests).
    pub busy_wait: std::time::Duration,
    backend: Option<Box<dyn Backend>>,
    writes: usize,
}

impl Kernel {
    /// Open `root` as plain kernel files (the host, or a fake tree without
    /// emulation). Never fails; `io::Result` keeps callers unchanged.
    pub fn open(root: Root, dry_run: bool) -> io::Result<Kernel> {
        Ok(Kernel {
            root,
            dry_run,
            log: vec![],
            busy_wait: BUSY_WAIT,
            backend: None,
            writes: 0,
        })
    }

    /// Open `root` with the kernel's side effects emulated by `backend`.
    pub fn with_backend(root: Root, dry_run: bool, backend: Box<dyn Backend>) -> Kernel {
        Kernel {
            root,
            dry_run,
            log: vec![],
            busy_wait: BUSY_WAIT,
            backend: Some(backend),
            writes: 0,
        }
    }

    /// Pin thread `tid` to `cpus` (`partition move -c`, partrt's `taskset
    /// -p`): logged in a dry run, emulated on a fake tree (never a real
    /// process's affinity from a fake tree), `sched_setaffinity` on the host.
    pub fn set_affinity(&mut self, tid: u32, cpus: &rtshield_vocab::CpuSet) -> io::Result<()> {
        if self.dry_run {
            self.log
                .push(format!("sched_setaffinity {tid} <- {}", cpus.to_list()));
            return Ok(());
        }
        let fake = self.is_fake();
        match &mut self.backend {
            Some(b) => b.set_affinity(&self.root, tid, &cpus.to_list()),
            None if fake => Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "a fake tree without the kernel's emulation: no affinity is set",
            )),
            None => rtshield_sys::set_affinity(tid as i32, cpus),
        }
    }

    /// Whether the root is a fake tree (`--sysroot`), where no root privilege is needed.
    pub fn is_fake(&self) -> bool {
        !self.root.is_host()
    }

    /// Read a kernel file; the error names the path.
    pub fn read(&self, p: &str) -> io::Result<String> {
        self.root.read(p)
    }

    /// Read a kernel file, `None` when it cannot be read.
    pub fn read_opt(&self, p: &str) -> Option<String> {
        self.root.read(p).ok()
    }

    /// Whether a kernel path exists.
    pub fn exists(&self, p: &str) -> bool {
        self.root.exists(p)
    }

    /// The entries of a kernel directory.
    pub fn dir_names(&self, p: &str) -> io::Result<Vec<String>> {
        self.root.read_dir_names(p)
    }

    fn count(&mut self) -> io::Result<()> {
        if let Some(f) = &self.backend {
            if f.kill_after_writes() == Some(self.writes) {
                return Err(io::Error::other(SimulatedKill(self.writes)));
            }
        }
        self.writes += 1;
        Ok(())
    }

    /// Write `value` the way `echo value > path` does.
    pub fn write(&mut self, p: &str, value: &str) -> io::Result<()> {
        if self.dry_run {
            self.log
                .push(format!("write {p} <- {}", value.trim_end_matches('\n')));
            return Ok(());
        }
        self.count()?;
        match &mut self.backend {
            Some(f) => f.write(&self.root, p, value),
            None => self.root.write(p, value),
        }
    }

    /// Create a cgroup directory (the kernel fills it with control files).
    pub fn mkdir(&mut self, p: &str) -> io::Result<()> {
        if self.dry_run {
            self.log.push(format!("mkdir {p}"));
            return Ok(());
        }
        self.count()?;
        match &mut self.backend {
            Some(f) => f.mkdir(&self.root, p),
            None => self
                .root
                .create_dir(p)
                .map_err(|e| io::Error::new(e.kind(), format!("mkdir {p}: {e}"))),
        }
    }

    /// Remove a cgroup directory (fails with EBUSY while it holds tasks).
    pub fn rmdir(&mut self, p: &str) -> io::Result<()> {
        if self.dry_run {
            self.log.push(format!("rmdir {p}"));
            return Ok(());
        }
        match &mut self.backend {
            Some(f) => f.rmdir(&self.root, p),
            None => self.root.remove_dir(p),
        }
    }
}

/// Whether `e` is (or wraps) a [`SimulatedKill`].
pub(crate) fn is_simulated_kill(e: &io::Error) -> bool {
    e.get_ref()
        .is_some_and(|i| i.downcast_ref::<SimulatedKill>().is_some())
}

/// The errno of an error from [`Kernel`], looking through path wrappers.
pub(crate) fn errno(e: &io::Error) -> Option<i32> {
    rtshield_sys::os_code(e)
}

/// `EIO`, `EINVAL`, ... for messages.
pub(crate) fn errno_name(code: i32) -> &'static str {
    match code {
        libc::EPERM => "EPERM",
        libc::ENOENT => "ENOENT",
        libc::ESRCH => "ESRCH",
        libc::EIO => "EIO",
        libc::EACCES => "EACCES",
        libc::EBUSY => "EBUSY",
        libc::EEXIST => "EEXIST",
        libc::EINVAL => "EINVAL",
        libc::ENOSPC => "ENOSPC",
        libc::EOPNOTSUPP => "EOPNOTSUPP",
        libc::ENODEV => "ENODEV",
        _ => "E?",
    }
}

/// The errno a name such as `EIO` stands for (the ten the fake kernel can be told
/// to return); `None` for any other name.
pub fn errno_from_name(s: &str) -> Option<i32> {
    Some(match s {
        "EPERM" => libc::EPERM,
        "ENOENT" => libc::ENOENT,
        "ESRCH" => libc::ESRCH,
        "EIO" => libc::EIO,
        "EACCES" => libc::EACCES,
        "EBUSY" => libc::EBUSY,
        "EINVAL" => libc::EINVAL,
        "ENOSPC" => libc::ENOSPC,
        "EOPNOTSUPP" => libc::EOPNOTSUPP,
        "ENODEV" => libc::ENODEV,
        _ => return None,
    })
}
