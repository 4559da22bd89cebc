//! The filesystem root through which all kernel files are read and written.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// A filesystem root (default `/`). Every kernel path (`/proc/...`,
/// `/sys/...`) is resolved below it, so tests can run the real code against
/// a fake tree in a temp dir.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Root {
    base: PathBuf,
    /// Whether `base` is the real `/` (also when spelled `//` or `/.`):
    /// decides whether writes may create files and whether root is needed.
    host: bool,
}

impl Default for Root {
    fn default() -> Self {
        Root::host()
    }
}

impl Root {
    /// The real machine.
    pub fn host() -> Self {
        Root {
            base: PathBuf::from("/"),
            host: true,
        }
    }

    /// A fake tree rooted at `base`.
    pub fn new(base: impl Into<PathBuf>) -> Self {
        let base = base.into();
        let host = base
            .canonicalize()
            .map(|p| p == Path::new("/"))
            .unwrap_or(false);
        Root { base, host }
    }

    /// Whether this is the real machine's `/` (writes there need root and never create files).
    pub fn is_host(&self) -> bool {
        self.host
    }

    /// The directory kernel paths are resolved below (`/` on the host).
    pub fn base(&self) -> &Path {
        &self.base
    }

    /// Resolve an absolute kernel path (`/proc/irq/1/smp_affinity`) below the root.
    pub fn path(&self, abs: impl AsRef<Path>) -> PathBuf {
        let abs = abs.as_ref();
        let rel = abs.strip_prefix("/").unwrap_or(abs);
        self.base.join(rel)
    }

    /// The path made relative to the root (for [`crate::beneath`]).
    fn rel(abs: &Path) -> &Path {
        abs.strip_prefix("/").unwrap_or(abs)
    }

    /// Open a kernel file for reading. Below a fake tree no link inside
    /// the tree is followed ([`crate::beneath`], adversary round 5, F18);
    /// the error names the path.
    pub fn open(&self, abs: impl AsRef<Path>) -> io::Result<fs::File> {
        let abs = abs.as_ref();
        let p = self.path(abs);
        if self.host {
            return fs::File::open(&p).map_err(|e| with_path(e, &p));
        }
        crate::beneath::open(&self.base, Self::rel(abs), rustix::fs::OFlags::RDONLY, 0)
            .map(fs::File::from)
            .map_err(|e| with_path(e, &p))
    }

    /// Read a whole file; the error names the path.
    pub fn read(&self, abs: impl AsRef<Path>) -> io::Result<String> {
        let abs = abs.as_ref();
        if self.host {
            let p = self.path(abs);
            return fs::read_to_string(&p).map_err(|e| with_path(e, &p));
        }
        let mut s = String::new();
        io::Read::read_to_string(&mut self.open(abs)?, &mut s)
            .map_err(|e| with_path(e, &self.path(abs)))?;
        Ok(s)
    }

    /// Read a file and trim surrounding white space (most sysfs values).
    pub fn read_trim(&self, abs: impl AsRef<Path>) -> io::Result<String> {
        Ok(self.read(abs)?.trim().to_string())
    }

    /// Read a file, `None` when it does not exist or cannot be read.
    pub fn read_opt(&self, abs: impl AsRef<Path>) -> Option<String> {
        self.read_trim(abs).ok()
    }

    /// Whether the kernel path exists below the root (a symlink counts when its target exists).
    pub fn exists(&self, abs: impl AsRef<Path>) -> bool {
        let abs = abs.as_ref();
        if self.host {
            return self.path(abs).exists();
        }
        // Below a fake tree a link is not followed: it is not there.
        // (O_PATH|O_NOFOLLOW would open the link itself: ask what it is.)
        crate::beneath::open(&self.base, Self::rel(abs), rustix::fs::OFlags::PATH, 0)
            .and_then(|fd| rustix::fs::fstat(&fd).map_err(io::Error::from))
            .is_ok_and(|st| st.st_mode & libc::S_IFMT != libc::S_IFLNK)
    }

    /// Create a (cgroup) directory; below a fake tree its parents are
    /// resolved without following a link.
    pub fn create_dir(&self, abs: impl AsRef<Path>) -> io::Result<()> {
        let abs = abs.as_ref();
        let p = self.path(abs);
        if self.host {
            return fs::create_dir(&p).map_err(|e| with_path(e, &p));
        }
        crate::beneath::mkdir(&self.base, Self::rel(abs), 0o755).map_err(|e| with_path(e, &p))
    }

    /// Remove a (cgroup) directory; below a fake tree never through a link.
    pub fn remove_dir(&self, abs: impl AsRef<Path>) -> io::Result<()> {
        let abs = abs.as_ref();
        let p = self.path(abs);
        if self.host {
            return fs::remove_dir(&p).map_err(|e| with_path(e, &p));
        }
        crate::beneath::rmdir(&self.base, Self::rel(abs)).map_err(|e| with_path(e, &p))
    }

    /// Write a value the way `echo value > file` does: one `write(2)` of the
    /// whole content, no truncation games, so kernel files accept it. Errors
    /// name the path and keep the OS error kind (EIO/EINVAL/EPERM matter).
    pub fn write(&self, abs: impl AsRef<Path>, value: &str) -> io::Result<()> {
        let abs = abs.as_ref();
        let p = self.path(abs);
        let mut f = if self.host {
            fs::OpenOptions::new()
                .write(true)
                .open(&p)
                .map_err(|e| with_path(e, &p))?
        } else {
            // A fake tree: created if missing, and never through a link
            // inside the tree (F18: `cpuset.sched_load_balance -> /victim`
            // was written).
            use rustix::fs::OFlags;
            let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::TRUNC;
            fs::File::from(
                crate::beneath::open(&self.base, Self::rel(abs), flags, 0o644)
                    .map_err(|e| with_path(e, &p))?,
            )
        };
        f.write_all(value.as_bytes()).map_err(|e| with_path(e, &p))
    }

    /// Entries of a directory, sorted by name (deterministic output).
    pub fn read_dir_names(&self, abs: impl AsRef<Path>) -> io::Result<Vec<String>> {
        let abs = abs.as_ref();
        let p = self.path(abs);
        let mut v: Vec<String> = if self.host {
            fs::read_dir(&p)
                .map_err(|e| with_path(e, &p))?
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        } else {
            crate::beneath::list(&self.base, Self::rel(abs)).map_err(|e| with_path(e, &p))?
        };
        v.sort_by(|a, b| natural_cmp(a, b));
        Ok(v)
    }
}

/// Keep the error kind and raw OS code, add the path to the message.
fn with_path(e: io::Error, p: &Path) -> io::Error {
    match e.raw_os_error() {
        // Keep raw OS errors matchable (EIO for IRQs that refuse, ...).
        Some(code) => io::Error::new(
            e.kind(),
            OsErrorAt {
                code,
                path: p.to_path_buf(),
            },
        ),
        None => io::Error::new(e.kind(), format!("{}: {e}", p.display())),
    }
}

/// An OS error together with the path it happened on; `raw_os_error()` of
/// the wrapping `io::Error` is lost, so use [`os_code`] to get it back.
#[derive(Debug)]
pub struct OsErrorAt {
    /// The errno (`EIO`, `EINVAL`…) the OS returned.
    pub code: i32,
    /// The file it happened on, as resolved below the root.
    pub path: PathBuf,
}

impl std::fmt::Display for OsErrorAt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: {}",
            self.path.display(),
            io::Error::from_raw_os_error(self.code)
        )
    }
}

impl std::error::Error for OsErrorAt {}

/// The errno behind an error returned by [`Root`], if any.
pub fn os_code(e: &io::Error) -> Option<i32> {
    e.raw_os_error().or_else(|| {
        e.get_ref()
            .and_then(|inner| inner.downcast_ref::<OsErrorAt>())
            .map(|o| o.code)
    })
}

/// Order `irq/10` after `irq/9`: numbers compare as numbers.
pub(crate) fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    match (a.parse::<u64>(), b.parse::<u64>()) {
        (Ok(x), Ok(y)) => x.cmp(&y),
        (Ok(_), Err(_)) => std::cmp::Ordering::Less,
        (Err(_), Ok(_)) => std::cmp::Ordering::Greater,
        _ => a.cmp(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_below_base_and_keeps_errno() {
        let d = tempfile::tempdir().unwrap();
        let r = Root::new(d.path());
        assert_eq!(r.path("/proc/cmdline"), d.path().join("proc/cmdline"));
        std::fs::create_dir_all(d.path().join("proc")).unwrap();
        r.write("/proc/cmdline", "quiet isolcpus=1\n").unwrap();
        assert_eq!(r.read_trim("/proc/cmdline").unwrap(), "quiet isolcpus=1");
        let e = r.read("/proc/nope").unwrap_err();
        assert_eq!(os_code(&e), Some(libc::ENOENT));
        assert!(e.to_string().contains("proc/nope"), "{e}");
    }

    /// Adversary round 5, F18: only the path *to* a fake tree was
    /// checked; `partition create` wrote through a link inside it
    /// (`cpuset.sched_load_balance -> /victim`, or a linked directory).
    /// Below a sysroot other than `/` no link is followed, by any read,
    /// write, listing, mkdir or rmdir; the victim is untouched.
    #[test]
    fn f18_no_link_inside_a_fake_tree_is_followed() {
        let d = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let victim = outside.path().join("victim4.txt");
        std::fs::write(
            &victim,
            "precious4
",
        )
        .unwrap();
        std::fs::create_dir(outside.path().join("vdir")).unwrap();
        let cs = d.path().join("sys/fs/cgroup/cpuset");
        std::fs::create_dir_all(&cs).unwrap();
        std::os::unix::fs::symlink(&victim, cs.join("cpuset.sched_load_balance")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("vdir"), cs.join("rt")).unwrap();
        std::os::unix::fs::symlink(outside.path(), d.path().join("proc")).unwrap();
        let r = Root::new(d.path());
        let f = "/sys/fs/cgroup/cpuset/cpuset.sched_load_balance";
        let e = r.write(f, "0").unwrap_err();
        assert_eq!(os_code(&e), Some(libc::ELOOP), "{e}");
        assert!(r.read(f).is_err() && !r.exists(f));
        // A linked directory in the middle of the path, and as the tree's
        // `/proc`.
        assert!(r
            .write("/sys/fs/cgroup/cpuset/rt/cpuset.cpus", "1")
            .is_err());
        assert!(r.create_dir("/sys/fs/cgroup/cpuset/rt/sub").is_err());
        assert!(r.remove_dir("/sys/fs/cgroup/cpuset/rt").is_err());
        assert!(r.read("/proc/victim4.txt").is_err());
        assert!(r.read_dir_names("/proc").is_err());
        assert!(r.write("/proc/victim4.txt", "0").is_err());
        assert_eq!(
            std::fs::read_to_string(&victim).unwrap(),
            "precious4
"
        );
        assert!(outside.path().join("vdir").is_dir());
        assert!(!outside.path().join("vdir/cpuset.cpus").exists());
        // Plain files and directories of the tree still work.
        r.write(
            "/sys/fs/cgroup/cpuset/cpuset.cpus",
            "0-1
",
        )
        .unwrap();
        assert_eq!(
            r.read_trim("/sys/fs/cgroup/cpuset/cpuset.cpus").unwrap(),
            "0-1"
        );
        r.create_dir("/sys/fs/cgroup/cpuset/nrt").unwrap();
        assert!(r.exists("/sys/fs/cgroup/cpuset/nrt"));
        r.remove_dir("/sys/fs/cgroup/cpuset/nrt").unwrap();
        assert!(r.read("/sys/../etc/passwd").is_err());
    }

    #[test]
    fn any_spelling_of_slash_is_the_host() {
        for p in ["/", "//", "/.", "/proc/.."] {
            assert!(Root::new(p).is_host(), "{p}");
        }
        let d = tempfile::tempdir().unwrap();
        assert!(!Root::new(d.path()).is_host());
        assert!(Root::host().is_host());
    }

    #[test]
    fn dir_names_sort_naturally() {
        let d = tempfile::tempdir().unwrap();
        for n in ["10", "9", "default_smp_affinity", "1"] {
            std::fs::create_dir_all(d.path().join("irq").join(n)).unwrap();
        }
        let r = Root::new(d.path());
        assert_eq!(
            r.read_dir_names("/irq").unwrap(),
            vec!["1", "9", "10", "default_smp_affinity"]
        );
    }
}
