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

    /// Read a whole file; the error names the path.
    pub fn read(&self, abs: impl AsRef<Path>) -> io::Result<String> {
        let p = self.path(abs);
        fs::read_to_string(&p).map_err(|e| with_path(e, &p))
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
        self.path(abs).exists()
    }

    /// Write a value the way `echo value > file` does: one `write(2)` of the
    /// whole content, no truncation games, so kernel files accept it. Errors
    /// name the path and keep the OS error kind (EIO/EINVAL/EPERM matter).
    pub fn write(&self, abs: impl AsRef<Path>, value: &str) -> io::Result<()> {
        let p = self.path(abs);
        let mut f = fs::OpenOptions::new()
            .write(true)
            .truncate(!self.is_host())
            .create(!self.is_host())
            .open(&p)
            .map_err(|e| with_path(e, &p))?;
        f.write_all(value.as_bytes()).map_err(|e| with_path(e, &p))
    }

    /// Entries of a directory, sorted by name (deterministic output).
    pub fn read_dir_names(&self, abs: impl AsRef<Path>) -> io::Result<Vec<String>> {
        let p = self.path(abs);
        let mut v: Vec<String> = fs::read_dir(&p)
            .map_err(|e| with_path(e, &p))?
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
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
