//! The results store: every run rtshield measures (or imports) is indexed
//! so runs of different days, kernels and boards can be listed, selected
//! and compared. Result files stay the primary record; the store is an
//! index that `runs import` can rebuild from them.
//!
//! - [`Store`]: the storage interface: [`SqliteStore`] (the default, no
//!   server) and [`PgStore`] (PostgreSQL, shared by a lab of boards).
//! - [`Selector`]: `kernel ~ 6.18 and load = hell`.
//! - [`compare()`]: B versus A with bootstrap confidence intervals.
//!
//! It may not measure, parse result files (it stores the
//! [`rtshield_results::RunResult`] it is given) or render: `report` draws
//! its lists and comparisons. One migration list serves both backends.

#![deny(missing_docs)]
#![warn(unreachable_pub)]

mod compare;
mod noise_compare;
mod pg;
mod record;
mod schema;
mod select;
mod sql;
mod sqlite;
mod sqlite_file;
mod tls;

pub use compare::{
    compare, default_stats, Comparison, Method, Row, Stat, Verdict, ITERATIONS, MIN_RUNS,
};
pub use noise_compare::{compare_available, AvailableRow};
pub use pg::{is_pg_url, pgpass_lookup, PgStore};
pub use record::{
    is_key_byte, is_tag_key, mark_imported, mark_pushed, new_uuid, run_uuid, RunSummary,
    ThreadSummary, TAG_IMPORTED_FROM, TAG_UUID,
};
pub use schema::{sqlite_schema, SCHEMA_VERSION};
pub use select::{Cond, Op, SelectError, Selector, FIELDS};
pub use sql::{check_group_keys, Group};
pub use sqlite::SqliteStore;

use rtshield_results::RunResult;
use std::fmt;
use std::path::PathBuf;

/// The environment variable naming the store.
pub const STORE_ENV: &str = "RTSHIELD_STORE";

/// A store error, with the store or run it concerns in the message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreError {
    /// The message as printed, naming the store or run concerned.
    pub msg: String,
    /// The store's name itself is wrong (a URL that does not parse): the
    /// caller's input, exit 2, rather than a store that failed.
    pub bad_input: bool,
}

/// The store refuses what the reader refuses (docs/ranges.md): a run with
/// a number out of range is never stored, so no later `runs report` can
/// be made to fail on it (round-2 finding B1g).
fn check_in_range(r: &RunResult) -> Result<(), StoreError> {
    rtshield_results::check_result(r).map_err(|m| {
        let label = r.label.as_deref().unwrap_or("?");
        StoreError::bad_input(format!(
            "run {}: {m} (docs/ranges.md); not stored",
            rtshield_text::terminal::value(label)
        ))
    })
}

impl StoreError {
    /// A failure of the store itself (exit 1).
    pub fn new(msg: impl Into<String>) -> StoreError {
        StoreError {
            msg: msg.into(),
            bad_input: false,
        }
    }
    /// A wrong store name or URL given by the user (exit 2).
    pub fn bad_input(msg: impl Into<String>) -> StoreError {
        StoreError {
            msg: msg.into(),
            bad_input: true,
        }
    }
    fn db(e: rusqlite::Error) -> StoreError {
        StoreError::new(format!("store: {e}"))
    }
    fn json(e: serde_json::Error) -> StoreError {
        StoreError::new(format!("store: {e}"))
    }
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.msg)
    }
}

impl std::error::Error for StoreError {}

/// What storing a run did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Put {
    /// The run was new and is now stored.
    Stored {
        /// Its row number in this store.
        id: i64,
        /// Its identity (the same in every store it is copied to).
        uuid: String,
    },
    /// A run with the same UUID was already there: nothing written.
    AlreadyStored {
        /// The row number of the run already there.
        id: i64,
        /// The UUID both share.
        uuid: String,
    },
}

impl Put {
    /// The run's row number in this store, stored now or before.
    pub fn id(&self) -> i64 {
        match self {
            Put::Stored { id, .. } | Put::AlreadyStored { id, .. } => *id,
        }
    }
    /// The run's UUID, stored now or before.
    pub fn uuid(&self) -> &str {
        match self {
            Put::Stored { uuid, .. } | Put::AlreadyStored { uuid, .. } => uuid,
        }
    }
}

/// Where runs are kept. Each run is stored in one transaction: an
/// interrupted store leaves no half-stored run, and storing again is a
/// no-op (runs are identified by UUID).
pub trait Store {
    /// Store one run; `source` is where it was read from, if anywhere.
    fn put(&mut self, r: &RunResult, source: Option<&str>) -> Result<Put, StoreError>;
    /// Store many runs in one transaction (imports).
    fn put_many(&mut self, runs: &[(RunResult, Option<String>)]) -> Result<Vec<Put>, StoreError>;
    /// Summaries of the runs `sel` selects, in storage order.
    fn list(&mut self, sel: &Selector) -> Result<Vec<RunSummary>, StoreError>;
    /// The full results of runs by local id.
    fn results(&mut self, ids: &[i64]) -> Result<Vec<RunResult>, StoreError>;
    /// One row per value of the `by` keys among the runs `sel` selects
    /// (`runs list --group-by`), in byte order of the keys.
    fn groups(&mut self, sel: &Selector, by: &[String]) -> Result<Vec<Group>, StoreError>;
    /// Where the store is, for messages.
    fn location(&self) -> String;

    /// One run by local id or (a unique prefix of) its UUID.
    fn find(&mut self, id: &str) -> Result<RunSummary, StoreError> {
        let all = self.list(&Selector::all())?;
        let hits: Vec<&RunSummary> = match id.parse::<i64>() {
            Ok(n) => all.iter().filter(|r| r.id == n).collect(),
            Err(_) => all.iter().filter(|r| r.uuid.starts_with(id)).collect(),
        };
        match hits.as_slice() {
            [one] => Ok((*one).clone()),
            [] => Err(StoreError::new(format!(
                "no run {id:?} in {} (see `rtshield runs list`)",
                self.location()
            ))),
            many => Err(StoreError::new(format!(
                "{id:?} matches {} runs; give more of the UUID",
                many.len()
            ))),
        }
    }
}

/// The default store path: `$XDG_DATA_HOME/rtshield/runs.db`, else
/// `$HOME/.local/share/rtshield/runs.db`. Only absolute directories count:
/// the XDG base directory spec says a relative `XDG_DATA_HOME` is invalid
/// and ignored, and an empty or relative `HOME` (`sudo -E`) would put
/// root's store under whatever the current directory is. None without one.
pub fn default_path() -> Option<PathBuf> {
    Some(data_home()?.0.join("rtshield").join("runs.db"))
}

/// The absolute data directory and the variable it came from.
fn data_home() -> Option<(PathBuf, &'static str)> {
    let absolute = |v: &str| {
        std::env::var_os(v)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    absolute("XDG_DATA_HOME")
        .map(|p| (p, "XDG_DATA_HOME"))
        .or_else(|| absolute("HOME").map(|h| (h.join(".local/share"), "HOME")))
}

/// A store path from [`STORE_ENV`]: the environment may be another
/// user's (`sudo -E`, an `env_keep` of `RTSHIELD_*`), so the path must be
/// one only root or the caller could have made — every component owned by
/// them, and writable by no one else (see `rtshield_safefs::trusted_path`).
fn env_path(s: &str) -> Result<PathBuf, StoreError> {
    let path = PathBuf::from(s);
    rtshield_safefs::trusted_path(&path).map_err(|why| {
        StoreError::bad_input(format!(
            "{STORE_ENV}={s}: refusing this store: {why} (a store named by the \
             environment must be yours or root's, and writable by no one else)"
        ))
    })?;
    Ok(path)
}

/// Open the store named by `spec` (a path or a `postgres://` URL), else
/// `$RTSHIELD_STORE`, else the default path. A SQLite store's directory is
/// created (0700) if missing, its file (0600) too; one that is not the
/// caller's own (see [`SqliteStore::open_from`]) is refused, naming where
/// its path came from.
pub fn open(spec: Option<&str>) -> Result<Box<dyn Store>, StoreError> {
    let (spec, source) = match spec {
        Some(s) => (Some(s.to_string()), "--store"),
        None => (
            std::env::var(STORE_ENV).ok().filter(|s| !s.is_empty()),
            STORE_ENV,
        ),
    };
    let (path, source) = match spec {
        Some(s) if is_pg_url(&s) => return Ok(Box::new(PgStore::connect(&s)?)),
        // A password anywhere else (a libpq `key=value` string, another
        // scheme's URL) would become a file name and be printed: refused.
        Some(s) if rtshield_text::secret::redact(&s) != s => {
            return Err(StoreError::bad_input(format!(
                "{source} {}: not a store: only a postgres:// URL may hold a password \
                 (libpq key=value strings are not accepted; put the password in \
                 ~/.pgpass or PGPASSWORD)",
                rtshield_text::secret::redact(&s)
            )))
        }
        Some(s) if source == STORE_ENV => (env_path(&s)?, source),
        Some(s) => (PathBuf::from(s), source),
        None => {
            let (home, from) = data_home().ok_or_else(|| {
                StoreError::bad_input(
                    "no default store: neither XDG_DATA_HOME nor HOME is an absolute \
                     directory (a relative or empty one is ignored, as the XDG base \
                     directory spec says); give --store or set RTSHIELD_STORE",
                )
            })?;
            (home.join("rtshield").join("runs.db"), from)
        }
    };
    Ok(Box::new(SqliteStore::open_from(&path, source)?))
}
