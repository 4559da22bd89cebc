//! Reading `results.json` back, with errors that name the file.

use crate::RunResult;
use rtshield_text::excerpt::{withhold, Quote};
use rtshield_vocab::InputError;
use std::path::{Path, PathBuf};

/// The schema major version this build reads and writes.
pub const SCHEMA_MAJOR: u32 = 1;
const SCHEMA_PREFIX: &str = "rtshield.results/";

/// Why a `results.json` could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The file could not be read (missing, not a regular file, too large, unreadable).
    #[error("cannot read {}: {source}", path.display())]
    Io {
        /// The file asked for.
        path: PathBuf,
        /// The reason, without the path.
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
    let (bytes, public) = rtshield_safefs::read_input_public(path, rtshield_safefs::INPUT_LIMIT)
        .map_err(|e| {
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
    parse_json(&text, path).map_err(|e| match e {
        // serde quotes what it found (`invalid type: string "…"`): only
        // from a file every user may read.
        ReadError::Invalid(InputError(m)) if !public => {
            let name = path.display().to_string();
            ReadError::Invalid(InputError(withhold(&m, &name, Quote::Withheld)))
        }
        e => e,
    })
}

/// [`read_json`] on text already read; `path` only names it in errors.
pub fn parse_json(text: &str, path: &Path) -> Result<RunResult, ReadError> {
    // The schema alone first (a results file of 20 000 threads is 64 MB:
    // no `serde_json::Value` tree of it, which took 1 GB).
    #[derive(serde::Deserialize)]
    struct Head {
        schema: Option<serde_json::Value>,
        /// How many threads, counted without reading them.
        #[serde(default, deserialize_with = "count")]
        threads: usize,
    }
    let head = match serde_json::from_str::<Head>(text) {
        Ok(h) => Some(h),
        // Valid JSON but not an object: no schema.
        Err(e) if e.is_data() => None,
        Err(e) => {
            return Err(invalid(
                path,
                e.line(),
                e.column(),
                format!("not valid JSON: {e}"),
            ))
        }
    };
    let schema = head
        .as_ref()
        .and_then(|h| h.schema.as_ref())
        .and_then(|s| s.as_str());
    let schema = schema.ok_or_else(|| {
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
                format!(
                    "unknown schema \"{}\" (expected \"{SCHEMA_PREFIX}{SCHEMA_MAJOR}\")",
                    rtshield_text::excerpt::quote(schema)
                ),
            )
        })?;
    let threads = head.as_ref().map_or(0, |h| h.threads);
    if threads > rtshield_limits::RESULT_MAX_THREADS {
        return Err(invalid(
            path,
            1,
            1,
            format!(
                "{threads} threads, more than the {} a results file may hold (docs/ranges.md)",
                rtshield_limits::RESULT_MAX_THREADS
            ),
        ));
    }
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
    let mut r: RunResult = serde_json::from_str(text)
        .map_err(|e| invalid(path, e.line(), e.column(), format!("bad results file: {e}")))?;
    // A file written by an older rtshield may hold a store's password in
    // its command line: it goes no further (report, export, store).
    r.command = rtshield_text::secret::redact_args(&r.command);
    if let Some(c) = &mut r.config {
        *c = rtshield_text::secret::redact(c).into_owned();
    }
    Ok(r)
}

/// The length of a JSON array, its elements skipped (not kept in memory).
fn count<'de, D: serde::Deserializer<'de>>(d: D) -> Result<usize, D::Error> {
    struct Count;
    impl<'de> serde::de::Visitor<'de> for Count {
        type Value = usize;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("an array")
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<usize, A::Error> {
            let mut n = 0;
            while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {
                n += 1;
            }
            Ok(n)
        }
    }
    d.deserialize_seq(Count)
}
