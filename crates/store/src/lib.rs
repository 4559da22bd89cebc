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
    content_digest, is_key_byte, is_tag_key, mark_imported, mark_pushed, new_uuid, run_uuid,
    RunSummary, ThreadSummary, RESERVED_TAGS, TAG_IMPORTED_FROM, TAG_UUID,
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
    /// One stored run does not read back (out of range, not JSON): the
    /// store works, that row is bad ([`Store::readable_results`] leaves
    /// it out).
    pub bad_row: bool,
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

/// A summary row as read from a store, checked with the ranges of a
/// results file (docs/ranges.md): the store may be shared, and a row
/// another lab member inserted by hand is input like any file
/// (adversary round 5, F10: `samples = -1` broke `runs list`, `show` and
/// `export` for the whole store; 9·10^18 was shown as it was).
pub(crate) fn check_summary(s: &RunSummary) -> Result<(), String> {
    use rtshield_results::{check_count, check_latency, check_mean};
    if s.threads.len() > rtshield_limits::RESULT_MAX_THREADS {
        return Err(format!(
            "{} threads, more than the {} a results file may hold",
            s.threads.len(),
            rtshield_limits::RESULT_MAX_THREADS
        ));
    }
    if let Some(d) = s.duration_s {
        if !(0.0..=rtshield_results::MAX_DURATION_S).contains(&d) {
            return Err(format!("duration_s = {d} is out of range"));
        }
    }
    for (i, t) in s.threads.iter().enumerate() {
        let f = |n: &str| format!("threads[{i}].{n}");
        for (n, v) in [
            ("samples", t.samples),
            ("overruns", t.overruns),
            ("missed_periods", t.missed_periods),
            ("lost", t.lost),
        ] {
            v.map_or(Ok(()), |v| check_count(&f(n), v))?;
        }
        // NULL (a thread that measured nothing) is in range.
        t.min_ns
            .map_or(Ok(()), |v| check_latency(&f("min_ns"), v))?;
        t.max_ns
            .map_or(Ok(()), |v| check_latency(&f("max_ns"), v))?;
        t.avg_ns.map_or(Ok(()), |v| check_mean(&f("avg_ns"), v))?;
        for (k, v) in t.percentiles.iter().chain(&t.percentile_bounds) {
            check_latency(&f(&format!("percentiles.{k}")), *v)?;
        }
    }
    Ok(())
}

/// Say that row `id` of `location` is left out, and why: one bad row
/// never hides the others.
pub(crate) fn skip_row(location: &str, id: Option<i64>, why: &str) {
    let id = id.map_or("?".to_string(), |i| i.to_string());
    rtshield_text::errln!(
        "rtshield: warning: {location}: run {id} left out: {} (docs/ranges.md)",
        rtshield_text::terminal::value(why)
    );
}

impl StoreError {
    /// A failure of the store itself (exit 1).
    pub fn new(msg: impl Into<String>) -> StoreError {
        StoreError {
            msg: msg.into(),
            bad_input: false,
            bad_row: false,
        }
    }
    /// A wrong store name or URL given by the user (exit 2).
    pub fn bad_input(msg: impl Into<String>) -> StoreError {
        StoreError {
            msg: msg.into(),
            bad_input: true,
            bad_row: false,
        }
    }
    /// Run `id` is stored but does not read back.
    pub(crate) fn unreadable(id: i64, why: impl fmt::Display) -> StoreError {
        StoreError {
            msg: format!("run {id}: stored result unreadable: {why}"),
            bad_input: false,
            bad_row: true,
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
    /// The same run (same UUID, same content) was already there:
    /// nothing written.
    AlreadyStored {
        /// The row number of the run already there.
        id: i64,
        /// The UUID both share.
        uuid: String,
    },
    /// A *different* run (another content, [`content_digest`]) is stored
    /// under this UUID: nothing written, and the caller must say so and
    /// fail (never "already stored": adversary round 5, F03).
    Conflict {
        /// The row number of the run already there.
        id: i64,
        /// The UUID both claim.
        uuid: String,
    },
}

impl Put {
    /// The run's row number in this store, stored now or before.
    pub fn id(&self) -> i64 {
        match self {
            Put::Stored { id, .. } | Put::AlreadyStored { id, .. } | Put::Conflict { id, .. } => {
                *id
            }
        }
    }
    /// The run's UUID, stored now or before.
    pub fn uuid(&self) -> &str {
        match self {
            Put::Stored { uuid, .. }
            | Put::AlreadyStored { uuid, .. }
            | Put::Conflict { uuid, .. } => uuid,
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

    /// The full results of the runs `sums` lists (from [`Store::list`]),
    /// leaving out, with a warning naming each, the rows that do not read
    /// back (out of range, not a result: a shared store's rows are input
    /// like any file, F10): the summaries kept and their results, in
    /// order. A store that fails is an error.
    fn readable_results(
        &mut self,
        sums: Vec<RunSummary>,
    ) -> Result<(Vec<RunSummary>, Vec<RunResult>), StoreError> {
        let (mut keep, mut out) = (Vec::new(), Vec::new());
        for s in sums {
            match self.results(&[s.id]) {
                Ok(mut r) => {
                    out.push(r.remove(0));
                    keep.push(s);
                }
                Err(e) if e.bad_row => skip_row(&self.location(), Some(s.id), &e.msg),
                Err(e) => return Err(e),
            }
        }
        Ok((keep, out))
    }

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

/// The absolute data directory (`$XDG_DATA_HOME`, else
/// `$HOME/.local/share`) and the variable it came from: where the default
/// store and a campaign's record of its runs live.
pub fn data_home() -> Option<(PathBuf, &'static str)> {
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
