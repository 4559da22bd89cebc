//! Why an operation was refused or failed ([`SafeError`]), and the name
//! check every operation starts with.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// Why a directory or file operation was refused or failed. The message
/// names the path once.
#[derive(Debug)]
pub enum SafeError {
    /// The directory is not safe to write into as root.
    Unsafe {
        /// The directory.
        path: PathBuf,
        /// What makes it unsafe (owner, mode).
        why: String,
    },
    /// A file or directory root would act on (saved state) that others
    /// could have written or replaced.
    Untrusted {
        /// The file or directory.
        path: PathBuf,
        /// What makes it untrusted (owner, mode, file type).
        why: String,
    },
    /// A path the layer refuses to resolve: a symbolic link in it, `..`,
    /// or no name where one is needed.
    BadPath {
        /// The path as given.
        path: PathBuf,
        /// What is wrong with it.
        why: String,
    },
    /// A name that is not a single path component.
    BadName {
        /// The name as given.
        name: String,
    },
    /// Another error, with the option (or variable) that gave the path:
    /// the message starts `--out: `.
    For {
        /// `--out`, `-o`, `--store`, `TMPDIR`...
        option: String,
        /// What went wrong.
        inner: Box<SafeError>,
    },
    /// An I/O error on a path.
    Io {
        /// The path operated on.
        path: PathBuf,
        /// What the system said.
        err: io::Error,
    },
}

impl SafeError {
    /// True when the error is a refusal of the caller's input (exit 2), not
    /// a failure of the system.
    pub fn is_refusal(&self) -> bool {
        if let SafeError::For { inner, .. } = self {
            return inner.is_refusal();
        }
        matches!(
            self,
            SafeError::Unsafe { .. }
                | SafeError::Untrusted { .. }
                | SafeError::BadPath { .. }
                | SafeError::BadName { .. }
        )
    }
    /// What is wrong, without the path and the advice of the full message
    /// (for a message that names the path its own way, e.g. `TMPDIR=...`).
    pub fn why(&self) -> String {
        match self {
            SafeError::Unsafe { why, .. }
            | SafeError::Untrusted { why, .. }
            | SafeError::BadPath { why, .. } => why.clone(),
            SafeError::BadName { .. } => self.to_string(),
            SafeError::For { inner, .. } => inner.why(),
            SafeError::Io { err, .. } => err.to_string(),
        }
    }

    /// This error, its message starting with the option (or variable)
    /// that gave the path (`--out: ...`).
    pub fn for_option(self, option: &str) -> SafeError {
        SafeError::For {
            option: option.to_string(),
            inner: Box::new(self),
        }
    }

    /// The underlying I/O error kind, if any.
    pub fn io_kind(&self) -> Option<io::ErrorKind> {
        match self {
            SafeError::Io { err, .. } => Some(err.kind()),
            SafeError::For { inner, .. } => inner.io_kind(),
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
            SafeError::BadPath { path, why } => write!(f, "{}: {why}", path.display()),
            SafeError::BadName { name } if name.len() > 255 => {
                let head: String = name.chars().take(40).collect();
                write!(
                    f,
                    "{head:?}… ({} bytes) is too long for a file name (at most 255 bytes)",
                    name.len()
                )
            }
            SafeError::BadName { name } => {
                write!(
                    f,
                    "{name:?} is not a plain file name (no '/', '.', '..' or NUL)"
                )
            }
            SafeError::For { option, inner } => write!(f, "{option}: {inner}"),
            SafeError::Io { path, err } => write!(f, "{}: {err}", path.display()),
        }
    }
}

impl std::error::Error for SafeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SafeError::Io { err, .. } => Some(err),
            SafeError::For { inner, .. } => inner.source(),
            _ => None,
        }
    }
}

impl From<SafeError> for io::Error {
    fn from(e: SafeError) -> io::Error {
        let kind = match &e {
            SafeError::For { inner, .. } => inner.io_kind().unwrap_or(if inner.is_refusal() {
                io::ErrorKind::PermissionDenied
            } else {
                io::ErrorKind::Other
            }),
            SafeError::Io { err, .. } => err.kind(),
            SafeError::Unsafe { .. } | SafeError::Untrusted { .. } => {
                io::ErrorKind::PermissionDenied
            }
            SafeError::BadName { .. } | SafeError::BadPath { .. } => io::ErrorKind::InvalidInput,
        };
        io::Error::new(kind, e.to_string())
    }
}

/// What every operation of this crate returns.
pub type Result<T> = std::result::Result<T, SafeError>;

/// An I/O error on `path`.
pub(crate) fn io_err(path: &Path, err: impl Into<io::Error>) -> SafeError {
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
