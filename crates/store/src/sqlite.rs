//! The embedded SQLite store (the default: no server needed).

use crate::record::{RunSummary, ThreadSummary};
use crate::schema::{self, SCHEMA_VERSION};
use crate::select::Selector;
use crate::sql::{group_query, sort_groups, where_clause, Dialect, Group};
use crate::sqlite_file::{vfs, StorePlace};
use crate::{Put, Store, StoreError};
use rtshield_results::RunResult;
use rusqlite::{params, Connection, OpenFlags, OptionalExtension};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A SQLite store at a path.
pub struct SqliteStore {
    // Dropped first: SQLite's files are closed before their directory is.
    conn: Connection,
    path: PathBuf,
    /// The checked directory SQLite reaches the files through (None: in memory).
    _place: Option<StorePlace>,
}

/// Seconds since the epoch, when the run was stored.
fn now_secs() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// SQLITE_BUSY or SQLITE_LOCKED: another connection holds the lock.
fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

impl SqliteStore {
    /// Open (creating it if needed) the database at `path` (given by
    /// `--store`). See [`SqliteStore::open_from`].
    pub fn open(path: &Path) -> Result<SqliteStore, StoreError> {
        SqliteStore::open_from(path, "--store")
    }

    /// Open (creating it if needed, mode 0600 in a 0700 directory) the
    /// database at `path`, which `source` gave (`--store`,
    /// `RTSHIELD_STORE`, `HOME`...). Only a store that is the caller's own
    /// is opened, and SQLite reaches it through the checked directory's
    /// descriptor, never by the path again (see [`crate::sqlite_file`]).
    /// A refusal is a [`StoreError::bad_input`] naming `source`.
    pub fn open_from(path: &Path, source: &str) -> Result<SqliteStore, StoreError> {
        let place = StorePlace::open(path, source)?;
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NOFOLLOW
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags_and_vfs(place.sqlite_name()?, flags, vfs()?)
            .map_err(|e| {
                StoreError::new(format!("{}: cannot open the store: {e}", path.display()))
            })?;
        let mut s = SqliteStore {
            conn,
            path: path.to_path_buf(),
            _place: None,
        };
        place.verify_after_open(path, source)?;
        s.setup()?;
        place.verify_after_open(path, source)?;
        s._place = Some(place);
        Ok(s)
    }

    /// An in-memory store (tests, benchmarks).
    pub fn memory() -> Result<SqliteStore, StoreError> {
        let conn = Connection::open_in_memory().map_err(StoreError::db)?;
        let mut s = SqliteStore {
            conn,
            path: PathBuf::from(":memory:"),
            _place: None,
        };
        s.setup()?;
        Ok(s)
    }

    fn setup(&mut self) -> Result<(), StoreError> {
        // WAL: readers never block the writer; NORMAL sync is durable at
        // each checkpoint and keeps ingest fast. busy_timeout: two
        // rtshield processes storing at once wait instead of failing.
        // temp_store=MEMORY: no temporary file in $TMPDIR, which may be
        // another user's under `sudo -E`.
        // The timeout first: switching a new file to WAL takes a lock that
        // another process opening it at the same moment may hold.
        self.conn
            .busy_timeout(std::time::Duration::from_secs(10))
            .map_err(|e| self.err(e))?;
        // SQLite does not call the busy handler while it switches a new
        // file to WAL, so that one step is retried here, for as long as
        // the busy timeout (the mode is stored in the file: only the
        // processes that open a brand-new store race for it).
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            match self.conn.execute_batch(
                "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON; \
                 PRAGMA temp_store=MEMORY;",
            ) {
                Ok(()) => break,
                Err(e) if is_busy(&e) && std::time::Instant::now() < deadline => {
                    std::thread::sleep(std::time::Duration::from_millis(5));
                }
                Err(e) => return Err(self.err(e)),
            }
        }
        self.migrate()
    }

    fn err(&self, e: rusqlite::Error) -> StoreError {
        StoreError::new(format!("{}: {e}", self.path.display()))
    }

    /// The schema version of the open database.
    pub fn version(&self) -> Result<i64, StoreError> {
        let v: Option<String> = self
            .conn
            .query_row(
                "SELECT value FROM meta WHERE key = 'schema_version'",
                [],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.err(e))?;
        Ok(v.and_then(|s| s.parse().ok()).unwrap_or(0))
    }

    fn migrate(&mut self) -> Result<(), StoreError> {
        // IMMEDIATE: two processes opening a new store at once do not both
        // create the tables. Whether the tables exist is asked inside the
        // transaction: asked before it, both could see "no table" and the
        // second would fail with "table meta already exists".
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(StoreError::db)?;
        let has_meta: bool = tx
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE type='table' AND name='meta'",
                [],
                |r| r.get::<_, i64>(0),
            )
            .map_err(StoreError::db)?
            > 0;
        let v: i64 = if has_meta {
            tx.query_row(
                "SELECT value FROM meta WHERE key = 'schema_version'",
                [],
                |r| r.get::<_, String>(0),
            )
            .map_err(StoreError::db)?
            .parse()
            .unwrap_or(0)
        } else {
            0
        };
        let steps =
            schema::pending(v, &format!("{}: ", self.path.display())).map_err(StoreError::new)?;
        for m in steps {
            tx.execute_batch(&m.sql(Dialect::Sqlite))
                .map_err(StoreError::db)?;
        }
        // Once, with the final schema: the rows are what this build writes.
        if steps.iter().any(|m| m.rebuild_from_results) {
            rebuild_children(&tx)?;
        }
        if !steps.is_empty() {
            tx.execute(
                "UPDATE meta SET value = ?1 WHERE key = 'schema_version'",
                [SCHEMA_VERSION.to_string()],
            )
            .map_err(StoreError::db)?;
        }
        tx.commit().map_err(StoreError::db)
    }

    fn put_tx(
        tx: &rusqlite::Transaction,
        r: &RunResult,
        source: Option<&str>,
    ) -> Result<Put, StoreError> {
        // No password is stored (the result's texts, rtshield_results::secrets).
        let r = &*r.without_secrets();
        crate::check_in_range(r)?;
        let s = RunSummary::of(r);
        let exists: Option<(i64, Option<String>)> = tx
            .query_row(
                "SELECT id, result FROM runs WHERE uuid = ?1",
                [&s.uuid],
                |row| Ok((row.get(0)?, row.get(1).ok())),
            )
            .optional()
            .map_err(StoreError::db)?;
        if let Some((id, stored)) = exists {
            // The same UUID is the same run only with the same content.
            let same = stored.is_some_and(|t| crate::record::same_content(&t, r));
            return Ok(if same {
                Put::AlreadyStored { id, uuid: s.uuid }
            } else {
                Put::Conflict { id, uuid: s.uuid }
            });
        }
        let summary = serde_json::to_string(&(&s.threads, &s.tags)).map_err(StoreError::json)?;
        let result = serde_json::to_string(r).map_err(StoreError::json)?;
        tx.execute(
            "INSERT INTO runs (uuid, host, kernel, kernel_version, preempt, arch, cpu_model, tool,
                label, started, duration_s, end_reason, mode, source, stored_at, summary, result,
                machine_id)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)",
            params![
                s.uuid,
                s.host,
                s.kernel,
                s.kernel_version,
                s.preempt,
                s.arch,
                s.cpu_model,
                s.tool,
                s.label,
                s.started,
                s.duration_s,
                s.end,
                s.mode,
                source,
                now_secs(),
                summary,
                result,
                s.machine_id
            ],
        )
        .map_err(StoreError::db)?;
        let id = tx.last_insert_rowid();
        insert_children(tx, id, &s)?;
        Ok(Put::Stored { id, uuid: s.uuid })
    }
}

/// Tags, threads and the summary columns of every stored run, rebuilt
/// from its lossless result, which is upgraded to the results schema this
/// build writes (the version-2 and version-4 steps). The UUID stays.
fn rebuild_children(tx: &rusqlite::Transaction) -> Result<(), StoreError> {
    let rows: Vec<(i64, String)> = {
        let mut st = tx
            .prepare("SELECT id, result FROM runs")
            .map_err(StoreError::db)?;
        let it = st
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(StoreError::db)?;
        it.collect::<Result<_, _>>().map_err(StoreError::db)?
    };
    tx.execute_batch("DELETE FROM tags; DELETE FROM threads;")
        .map_err(StoreError::db)?;
    for (id, text) in rows {
        let r = rtshield_results::from_stored_json(&text)
            .map_err(|e| StoreError::new(format!("run {id}: stored result unreadable: {e}")))?;
        let s = RunSummary::of(&r);
        insert_children(tx, id, &s)?;
        // The summary row is rebuilt from the lossless result too, so
        // selection by tags and the summary agree.
        let summary = serde_json::to_string(&(&s.threads, &s.tags)).map_err(StoreError::json)?;
        let result = serde_json::to_string(&r).map_err(StoreError::json)?;
        tx.execute(
            "UPDATE runs SET summary = ?1, result = ?2, started = ?3, duration_s = ?4,
                end_reason = ?5, mode = ?6 WHERE id = ?7",
            params![summary, result, s.started, s.duration_s, s.end, s.mode, id],
        )
        .map_err(StoreError::db)?;
    }
    Ok(())
}

fn insert_children(tx: &rusqlite::Transaction, id: i64, s: &RunSummary) -> Result<(), StoreError> {
    let mut tag = tx
        .prepare_cached("INSERT INTO tags (run_id, key, value) VALUES (?1, ?2, ?3)")
        .map_err(StoreError::db)?;
    for (k, v) in &s.tags {
        tag.execute(params![id, k, v]).map_err(StoreError::db)?;
    }
    let mut th = tx
        .prepare_cached(
            "INSERT INTO threads (run_id, idx, cpu, samples, min_ns, avg_ns, max_ns, p50_ns, p99_ns,
                p999_ns, p9999_ns, overruns, missed_periods, lost)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
        )
        .map_err(StoreError::db)?;
    for (i, t) in s.threads.iter().enumerate() {
        let p = |k: &str| t.percentiles.get(k).copied();
        let n = |v: Option<u64>| v.map(|v| v as i64);
        th.execute(params![
            id,
            i as i64,
            t.cpu.map(i64::from),
            n(t.samples),
            t.min_ns,
            t.avg_ns,
            t.max_ns,
            p("50"),
            p("99"),
            p("99.9"),
            p("99.99"),
            n(t.overruns),
            n(t.missed_periods),
            n(t.lost)
        ])
        .map_err(StoreError::db)?;
    }
    Ok(())
}

type SummaryExtra = (Vec<ThreadSummary>, BTreeMap<String, String>);

fn parse_summary(text: &str) -> Result<SummaryExtra, StoreError> {
    serde_json::from_str(text).map_err(StoreError::json)
}

const SUMMARY_COLS: &str = "id, uuid, host, kernel, kernel_version, preempt, arch, cpu_model, tool,
    label, started, duration_s, end_reason, mode, summary, machine_id";

/// A row's id (when it reads) and its summary columns: a column of the
/// wrong type fails this row only.
type SummaryRow = (Option<i64>, rusqlite::Result<(RunSummary, String)>);

fn summary_row(r: &rusqlite::Row) -> rusqlite::Result<SummaryRow> {
    Ok((r.get(0).ok(), summary_cols(r)))
}

fn summary_cols(r: &rusqlite::Row) -> rusqlite::Result<(RunSummary, String)> {
    Ok((
        RunSummary {
            id: r.get(0)?,
            uuid: r.get(1)?,
            host: r.get(2)?,
            machine_id: r.get(15)?,
            kernel: r.get(3)?,
            kernel_version: r.get(4)?,
            preempt: r.get(5)?,
            arch: r.get(6)?,
            cpu_model: r.get(7)?,
            tool: r.get(8)?,
            label: r.get(9)?,
            started: r.get(10)?,
            duration_s: r.get(11)?,
            end: r.get(12)?,
            mode: r.get(13)?,
            tags: BTreeMap::new(),
            threads: Vec::new(),
        },
        r.get(14)?,
    ))
}

impl Store for SqliteStore {
    fn put(&mut self, r: &RunResult, source: Option<&str>) -> Result<Put, StoreError> {
        let tx = self.conn.transaction().map_err(StoreError::db)?;
        let p = SqliteStore::put_tx(&tx, r, source)?;
        tx.commit().map_err(StoreError::db)?;
        Ok(p)
    }

    fn put_many(&mut self, runs: &[(RunResult, Option<String>)]) -> Result<Vec<Put>, StoreError> {
        let tx = self.conn.transaction().map_err(StoreError::db)?;
        let mut out = Vec::with_capacity(runs.len());
        for (r, src) in runs {
            out.push(SqliteStore::put_tx(&tx, r, src.as_deref())?);
        }
        tx.commit().map_err(StoreError::db)?;
        Ok(out)
    }

    fn list(&mut self, sel: &Selector) -> Result<Vec<RunSummary>, StoreError> {
        // The selector becomes SQL so only the matching rows' summaries
        // are decoded (a store of 10 000 runs lists in milliseconds).
        let (clause, binds) = where_clause(sel, Dialect::Sqlite);
        let sql = format!("SELECT {SUMMARY_COLS} FROM runs{clause} ORDER BY id");
        let mut st = self.conn.prepare_cached(&sql).map_err(StoreError::db)?;
        let rows = st
            .query_map(rusqlite::params_from_iter(binds.iter()), summary_row)
            .map_err(StoreError::db)?;
        let mut out = Vec::new();
        let loc = self.path.display().to_string();
        for row in rows {
            // A row that does not read, or reads out of range, is left
            // out with a warning naming it (F10).
            let (id, row) = row.map_err(StoreError::db)?;
            let checked = row.map_err(|e| e.to_string()).and_then(|(mut s, extra)| {
                let (threads, tags) = parse_summary(&extra).map_err(|e| e.msg)?;
                s.threads = threads;
                s.tags = tags;
                crate::check_summary(&s)?;
                Ok(s)
            });
            let s = match checked {
                Ok(s) => s,
                Err(why) => {
                    crate::skip_row(&loc, id, &why);
                    continue;
                }
            };
            // The SQL and the in-memory matcher must agree; the latter is
            // the definition.
            debug_assert!(sel.matches(&s), "SQL selection disagrees for run {}", s.id);
            out.push(s);
        }
        Ok(out)
    }

    fn results(&mut self, ids: &[i64]) -> Result<Vec<RunResult>, StoreError> {
        let mut st = self
            .conn
            .prepare_cached("SELECT result FROM runs WHERE id = ?1")
            .map_err(StoreError::db)?;
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            let text: String = st.query_row([id], |r| r.get(0)).map_err(|e| match e {
                // The row is there, its result is not text: that row is bad.
                rusqlite::Error::InvalidColumnType(..)
                | rusqlite::Error::FromSqlConversionFailure(..) => StoreError::unreadable(*id, e),
                e => StoreError::db(e),
            })?;
            out.push(
                rtshield_results::from_stored_json(&text)
                    .map_err(|e| StoreError::unreadable(*id, e))?,
            );
        }
        Ok(out)
    }

    fn groups(&mut self, sel: &Selector, by: &[String]) -> Result<Vec<Group>, StoreError> {
        let (sql, binds) = group_query(sel, by, Dialect::Sqlite);
        let n = by.len();
        let mut st = self.conn.prepare(&sql).map_err(StoreError::db)?;
        let rows = st
            .query_map(rusqlite::params_from_iter(binds.iter()), |r| {
                let mut keys = Vec::with_capacity(n);
                for i in 0..n {
                    keys.push(r.get::<_, String>(i)?);
                }
                Ok(Group {
                    keys,
                    runs: r.get::<_, i64>(n)? as u64,
                    worst_p999_ns: r.get(n + 1)?,
                    worst_max_ns: r.get(n + 2)?,
                })
            })
            .map_err(StoreError::db)?;
        let out = rows
            .collect::<Result<Vec<_>, _>>()
            .map_err(StoreError::db)?;
        Ok(sort_groups(out))
    }

    fn location(&self) -> String {
        self.path.display().to_string()
    }
}
