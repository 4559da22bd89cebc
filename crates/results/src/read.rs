//! Reading `results.json` back, with errors that name the file.

use crate::RunResult;
use rtshield_vocab::InputError;
use std::path::{Path, PathBuf};

/// The schema major version this build reads and writes.
pub const SCHEMA_MAJOR: u32 = 1;
const SCHEMA_PREFIX: &str = "rtshield.results/";

#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("cannot read {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Not JSON, not a results file, or a schema this build does not know
    /// (an [`InputError`]: `FILE:LINE:COL: message`).
    #[error("{0}")]
    Invalid(#[source] InputError),
}

fn invalid(path: &Path, line: usize, col: usize, msg: impl std::fmt::Display) -> ReadError {
    ReadError::Invalid(InputError::at(&path.display().to_string(), line, col, msg))
}

/// Read a `results.json` (a regular file of at most
/// [`INPUT_LIMIT`](rtshield_safefs::INPUT_LIMIT) bytes). Refuses a file without a `schema`, another
/// tool's schema, or a major version other than [`SCHEMA_MAJOR`] (minor
/// additions are fields this reader ignores or defaults).
pub fn read_json(path: impl AsRef<Path>) -> Result<RunResult, ReadError> {
    let path = path.as_ref();
    // Bounded, regular files only: a FIFO or /dev/zero planted where a
    // result is expected (`run --resume DIR`) must not block or fill memory.
    let bytes = rtshield_safefs::read_input(path, rtshield_safefs::INPUT_LIMIT).map_err(|e| {
        ReadError::Io {
            path: path.to_path_buf(),
            // The variant names the path: keep only the reason, so the
            // message says the path once.
            source: match e {
                rtshield_safefs::SafeError::Io { err, .. } => err,
                other => std::io::Error::other(other.to_string()),
            },
        }
    })?;
    let text = rtshield_text::decode_utf8(bytes).map_err(|e| invalid(path, e.line, e.col, e))?;
    parse_json(&text, path)
}

/// [`read_json`] on text already read; `path` only names it in errors.
pub fn parse_json(text: &str, path: &Path) -> Result<RunResult, ReadError> {
    let v: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| invalid(path, e.line(), e.column(), format!("not valid JSON: {e}")))?;
    let schema = v.get("schema").and_then(|s| s.as_str()).ok_or_else(|| {
        invalid(
            path,
            1,
            1,
            format!(
                "not an rtshield results file (no \"schema\": \"{SCHEMA_PREFIX}{SCHEMA_MAJOR}\")"
            ),
        )
    })?;
    let major = schema
        .strip_prefix(SCHEMA_PREFIX)
        .and_then(|m| m.split('.').next())
        .and_then(|m| m.parse::<u32>().ok())
        .ok_or_else(|| {
            invalid(
                path,
                1,
                1,
                format!("unknown schema \"{schema}\" (expected \"{SCHEMA_PREFIX}{SCHEMA_MAJOR}\")"),
            )
        })?;
    if major != SCHEMA_MAJOR {
        return Err(invalid(
            path,
            1,
            1,
            format!(
                "schema \"{schema}\" has major version {major}; this rtshield reads version {SCHEMA_MAJOR} only"
            ),
        ));
    }
    serde_json::from_str(text)
        .map_err(|e| invalid(path, e.line(), e.column(), format!("bad results file: {e}")))
}
