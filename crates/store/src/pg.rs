//! The PostgreSQL store: the same schema and queries as SQLite, on a
//! server a lab of boards shares (`postgres://user@db/rt`).
//!
//! - The password comes from the URL, else `PGPASSWORD`, else the password
//!   file (`PGPASSFILE`, else `~/.pgpass`), as libpq reads them: the file is
//!   ignored, with a warning, unless it is a regular file without group or
//!   world access (mode 0600 or less).
//! - TLS as libpq's `sslmode` says (`disable`, `prefer`, `require`,
//!   `verify-ca`, `verify-full`, with `sslrootcert=FILE`), on rustls: see
//!   the `tls` module for the table and the default.
//! - The schema is created or migrated under a transaction-scoped advisory
//!   lock, so boards connecting at once to a new database do not race.
//! - Each run is stored in its own transaction, `ON CONFLICT (uuid) DO
//!   NOTHING`: an interrupted push leaves whole runs only, and pushing again
//!   stores what is missing.

use crate::record::{RunSummary, ThreadSummary};
use crate::schema::{self, SCHEMA_VERSION};
use crate::select::Selector;
use crate::sql::{group_query, sort_groups, where_clause, Dialect, Group};
use crate::{tls, Put, Store, StoreError};
use postgres::types::ToSql;
use postgres::{Client, NoTls, Statement};
use rtshield_results::RunResult;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The advisory lock every rtshield takes while it creates or migrates
/// the schema ("rtshield" in ASCII).
const SCHEMA_LOCK: i64 = 0x7274_7368_6965_6c64;

/// Whether `spec` names a PostgreSQL store: a `postgres://` or
/// `postgresql://` URL, the scheme in any case (RFC 3986: schemes are
/// case-insensitive; `POSTGRES://u:PW@db` is never a SQLite path).
pub fn is_pg_url(spec: &str) -> bool {
    pg_scheme_len(spec).is_some()
}

/// The length of `spec`'s `postgres://` / `postgresql://` prefix, any case.
fn pg_scheme_len(spec: &str) -> Option<usize> {
    ["postgres://", "postgresql://"].iter().find_map(|p| {
        spec.get(..p.len())
            .filter(|h| h.eq_ignore_ascii_case(p))
            .map(|_| p.len())
    })
}

/// `url` with its scheme in lower case, as the driver expects it.
fn lower_scheme(url: &str) -> String {
    match pg_scheme_len(url) {
        Some(n) => format!("{}{}", url[..n].to_ascii_lowercase(), &url[n..]),
        None => url.to_string(),
    }
}

/// A store on a PostgreSQL server.
pub struct PgStore {
    client: Client,
    /// The URL without its password, for messages.
    location: String,
    ins_run: Statement,
    ins_tag: Statement,
    ins_thread: Statement,
}

fn now_secs() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// `url` with the password (if any) replaced by `***` (one rule for
/// every place a secret could be shown: crate text, module `secret`).
fn redact(url: &str) -> String {
    rtshield_text::secret::redact(url).into_owned()
}

/// The first message of a PostgreSQL error: the server's own for a
/// database error, else the client's with its cause.
fn describe(e: &postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        return format!("{}: {}", db.severity(), db.message());
    }
    let mut s = e.to_string();
    let mut src = std::error::Error::source(e);
    while let Some(c) = src {
        let t = c.to_string();
        if !s.contains(&t) {
            s = format!("{s}: {t}");
        }
        src = c.source();
    }
    s
}

impl PgStore {
    /// Connect to the server `url` names and create or migrate the schema.
    pub fn connect(url: &str) -> Result<PgStore, StoreError> {
        let url = &lower_scheme(url);
        let location = redact(url);
        let bad = |m: String| StoreError::new(format!("{location}: {m}"));
        let (url, tls_params) = tls::take_params(url)
            .map_err(|m| StoreError::bad_input(format!("{location}: not a PostgreSQL URL: {m}")))?;
        let mut cfg: postgres::Config = url.parse().map_err(|e: postgres::Error| {
            StoreError::bad_input(format!(
                "{location}: not a PostgreSQL URL: {}",
                redact(&describe(&e))
            ))
        })?;
        if cfg.get_hosts().is_empty() {
            let pghost = std::env::var("PGHOST").ok().filter(|h| !h.is_empty());
            cfg.host(&default_host(pghost, rustix::process::geteuid().is_root()));
        }
        if cfg.get_user().is_none() {
            let user = ["PGUSER", "USER", "LOGNAME"]
                .iter()
                .find_map(|v| std::env::var(v).ok().filter(|u| !u.is_empty()))
                .ok_or_else(|| bad("no user in the URL, and PGUSER and USER are unset".into()))?;
            cfg.user(&user);
        }
        if cfg.get_password().is_none() {
            if let Some(pw) = password_for(&cfg) {
                cfg.password(pw);
            }
        }
        // A message of the driver or the server may quote the password
        // (from the URL, PGPASSWORD or the password file): masked
        // wherever it appears, as well as in every form `redact` knows.
        let secret = cfg
            .get_password()
            .map(|p| String::from_utf8_lossy(p).into_owned());
        let bad = |m: String| {
            let m = rtshield_text::secret::redact_known(&m, secret.as_deref()).into_owned();
            StoreError::new(format!("{location}: {m}"))
        };
        if cfg.get_connect_timeout().is_none() {
            cfg.connect_timeout(Duration::from_secs(10));
        }
        cfg.application_name("rtshield");
        let mut client = connect_tls(&mut cfg, &tls_params).map_err(bad)?;
        migrate(&mut client).map_err(|e| bad(e.msg))?;
        let prep = |c: &mut Client, sql: &str| {
            c.prepare(sql)
                .map_err(|e| bad(format!("preparing statements: {}", describe(&e))))
        };
        let ins_run = prep(
            &mut client,
            "INSERT INTO runs (uuid, host, kernel, kernel_version, preempt, arch, cpu_model, tool,
                label, started, duration_s, end_reason, mode, source, stored_at, summary, result,
                machine_id)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)
             ON CONFLICT (uuid) DO NOTHING RETURNING id",
        )?;
        let ins_tag = prep(
            &mut client,
            "INSERT INTO tags (run_id, key, value) VALUES ($1, $2, $3)",
        )?;
        let ins_thread = prep(&mut client, INSERT_THREAD)?;
        Ok(PgStore {
            client,
            location,
            ins_run,
            ins_tag,
            ins_thread,
        })
    }

    fn err(&self, e: postgres::Error) -> StoreError {
        StoreError::new(format!("{}: {}", self.location, describe(&e)))
    }

    /// The schema version of the database.
    pub fn version(&mut self) -> Result<i64, StoreError> {
        let row = self
            .client
            .query_one("SELECT value FROM meta WHERE key = 'schema_version'", &[])
            .map_err(|e| self.err(e))?;
        Ok(row.get::<_, String>(0).parse().unwrap_or(0))
    }
}

/// Create the schema, or check its version, under the advisory lock.
fn migrate(client: &mut Client) -> Result<(), StoreError> {
    let e = |e: postgres::Error| StoreError::new(format!("schema: {}", describe(&e)));
    let mut tx = client.transaction().map_err(e)?;
    // Held until the transaction ends: a second board opening a new
    // database waits here, then finds the tables made.
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&SCHEMA_LOCK])
        .map_err(e)?;
    let has_meta: Option<String> = tx
        .query_one("SELECT to_regclass('meta')::text", &[])
        .map_err(e)?
        .get(0);
    let v: i64 = match has_meta {
        None => 0,
        Some(_) => tx
            .query_one("SELECT value FROM meta WHERE key = 'schema_version'", &[])
            .map_err(e)?
            .get::<_, String>(0)
            .parse()
            .unwrap_or(0),
    };
    let steps = schema::pending(v, "").map_err(StoreError::new)?;
    for m in steps {
        tx.batch_execute(&m.sql(Dialect::Postgres)).map_err(e)?;
    }
    // Once, with the final schema (as SQLite does).
    if steps.iter().any(|m| m.rebuild_from_results) {
        rebuild_children(&mut tx)?;
    }
    if !steps.is_empty() {
        tx.execute(
            "UPDATE meta SET value = $1 WHERE key = 'schema_version'",
            &[&SCHEMA_VERSION.to_string()],
        )
        .map_err(e)?;
    }
    tx.commit().map_err(e)
}

/// Tags, threads and the summary columns of every stored run, rebuilt
/// from its result upgraded to the results schema this build writes (the
/// version-4 step; a new database has no run). The UUID stays.
fn rebuild_children(tx: &mut postgres::Transaction) -> Result<(), StoreError> {
    let e = |e: postgres::Error| StoreError::new(format!("schema: {}", describe(&e)));
    let rows: Vec<(i64, String)> = tx
        .query("SELECT id, result FROM runs ORDER BY id", &[])
        .map_err(e)?
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    tx.batch_execute("DELETE FROM tags; DELETE FROM threads;")
        .map_err(e)?;
    let ins_tag = tx
        .prepare("INSERT INTO tags (run_id, key, value) VALUES ($1, $2, $3)")
        .map_err(e)?;
    let ins_thread = tx.prepare(INSERT_THREAD).map_err(e)?;
    for (id, text) in rows {
        let r = rtshield_results::from_stored_json(&text)
            .map_err(|m| StoreError::new(format!("run {id}: stored result unreadable: {m}")))?;
        let s = RunSummary::of(&r);
        let summary = serde_json::to_string(&(&s.threads, &s.tags)).map_err(StoreError::json)?;
        let result = serde_json::to_string(&r).map_err(StoreError::json)?;
        tx.execute(
            "UPDATE runs SET summary = $1, result = $2, started = $3, duration_s = $4,
                end_reason = $5, mode = $6 WHERE id = $7",
            &[
                &summary,
                &result,
                &s.started,
                &s.duration_s,
                &s.end,
                &s.mode,
                &id,
            ],
        )
        .map_err(e)?;
        insert_children(tx, &ins_tag, &ins_thread, id, &s).map_err(e)?;
    }
    Ok(())
}

/// A run's tags and threads (NULL where unknown).
fn insert_children(
    tx: &mut postgres::Transaction,
    ins_tag: &Statement,
    ins_thread: &Statement,
    id: i64,
    s: &RunSummary,
) -> Result<(), postgres::Error> {
    for (k, v) in &s.tags {
        tx.execute(ins_tag, &[&id, k, v])?;
    }
    for (i, t) in s.threads.iter().enumerate() {
        let p = |k: &str| t.percentiles.get(k).copied();
        let n = |v: Option<u64>| v.map(|v| v as i64);
        tx.execute(
            ins_thread,
            &[
                &id,
                &(i as i64),
                &t.cpu.map(i64::from),
                &n(t.samples),
                &t.min_ns,
                &t.avg_ns,
                &t.max_ns,
                &p("50"),
                &p("99"),
                &p("99.9"),
                &p("99.99"),
                &n(t.overruns),
                &n(t.missed_periods),
                &n(t.lost),
            ],
        )?;
    }
    Ok(())
}

/// One thread row.
const INSERT_THREAD: &str =
    "INSERT INTO threads (run_id, idx, cpu, samples, min_ns, avg_ns, max_ns, p50_ns, p99_ns,
        p999_ns, p9999_ns, overruns, missed_periods, lost)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)";

/// Connect with the TLS `p` asks for (module `tls`: libpq's `sslmode`,
/// `prefer` on this machine and `require` elsewhere by default).
fn connect_tls(cfg: &mut postgres::Config, p: &tls::TlsParams) -> Result<Client, String> {
    use postgres::config::SslMode as Pg;
    let mode = tls::effective_mode(p, cfg);
    let why = |e: postgres::Error| {
        let mut m = format!("cannot connect: {}", describe(&e));
        if p.mode.is_none() && mode == tls::SslMode::Require {
            m.push_str(
                " (without sslmode in the URL, rtshield requires TLS for a server on another \
                 machine, so that the password never crosses the network in clear; \
                 ?sslmode=disable connects without it)",
            );
        }
        m
    };
    if mode == tls::SslMode::Disable {
        cfg.ssl_mode(Pg::Disable);
        return cfg.connect(NoTls).map_err(why);
    }
    cfg.ssl_mode(if mode == tls::SslMode::Prefer {
        Pg::Prefer
    } else {
        Pg::Require
    });
    let tls = tls::client_config(mode, p.rootcert.as_deref())?;
    cfg.connect(tokio_postgres_rustls::MakeRustlsConnect::new(tls))
        .map_err(why)
}

/// The server of a URL that names none: `PGHOST`, else libpq's default on
/// Debian (the local server's socket directory). As root `PGHOST` is not
/// used (a note says so): under `sudo -E` it is another user's, and a
/// socket they listen on, or a host they name, would be handed root's
/// password (adversary round 6, G08); root names the server in the URL.
fn default_host(pghost: Option<String>, as_root: bool) -> String {
    const SYSTEM_SOCKET_DIR: &str = "/var/run/postgresql";
    match pghost {
        Some(h) if !as_root => h,
        Some(h) => {
            rtshield_text::errln!(
                "rtshield: note: PGHOST={} is not used as root (another user could have set it); the store's URL names no host, so the system's socket directory {SYSTEM_SOCKET_DIR} is used: name the server in the URL (postgres://USER@HOST/DB, or ?host=/socket/dir)",
                rtshield_text::terminal::value(&h)
            );
            SYSTEM_SOCKET_DIR.into()
        }
        None => SYSTEM_SOCKET_DIR.into(),
    }
}

/// The password for `cfg` from `PGPASSWORD`, else the password file.
fn password_for(cfg: &postgres::Config) -> Option<String> {
    if let Some(pw) = std::env::var("PGPASSWORD").ok().filter(|p| !p.is_empty()) {
        return Some(pw);
    }
    let file = match std::env::var_os("PGPASSFILE").filter(|f| !f.is_empty()) {
        Some(f) => PathBuf::from(f),
        None => PathBuf::from(std::env::var_os("HOME")?).join(".pgpass"),
    };
    let host = match cfg.get_hosts().first() {
        Some(postgres::config::Host::Tcp(h)) => h.clone(),
        Some(postgres::config::Host::Unix(p)) => p.display().to_string(),
        None => "localhost".into(),
    };
    let port = cfg.get_ports().first().copied().unwrap_or(5432);
    let user = cfg.get_user().unwrap_or_default().to_string();
    let db = cfg.get_dbname().unwrap_or(&user).to_string();
    let text = read_pgpass(&file)?;
    pgpass_lookup(&text, &host, port, &db, &user).or_else(|| {
        // libpq matches `localhost` for its default socket directory.
        let default_socket = host == "/var/run/postgresql" || host == "/run/postgresql";
        default_socket
            .then(|| pgpass_lookup(&text, "localhost", port, &db, &user))
            .flatten()
    })
}

/// The password file's text, if it may be used: a regular file without
/// group or world access (mode 0600 or less, as libpq asks), owned by root
/// or the caller, on a path only root and the caller can change
/// (`rtshield_safefs::trusted_path`: under `sudo -E`, `HOME` and
/// `PGPASSFILE` are another user's, who would choose the password root
/// sends, and to which server). Else it is not used, saying why.
fn read_pgpass(file: &Path) -> Option<String> {
    use std::io::Read;
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let warn = |why: &str| {
        rtshield_text::errln!(
            "rtshield: warning: password file {}: {why}: not used",
            file.display()
        );
    };
    if std::fs::symlink_metadata(file).is_err() {
        return None;
    }
    if let Err(e) = rtshield_safefs::trusted_path(file) {
        warn(&format!("not trusted ({e})"));
        return None;
    }
    let mut f = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags((rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK).bits() as i32)
        .open(file)
    {
        Ok(f) => f,
        Err(e) => {
            warn(&e.to_string());
            return None;
        }
    };
    let meta = f.metadata().ok()?;
    let me = rustix::process::geteuid().as_raw();
    if !meta.is_file() {
        warn("not a plain file");
        return None;
    }
    if meta.uid() != 0 && meta.uid() != me {
        warn(&format!(
            "owned by uid {}, not by root or you (uid {me})",
            meta.uid()
        ));
        return None;
    }
    if meta.mode() & 0o077 != 0 {
        warn("has group or world access; permissions should be u=rw (0600) or less");
        return None;
    }
    let mut bytes = Vec::new();
    f.by_ref().take(1 << 20).read_to_end(&mut bytes).ok()?;
    String::from_utf8(bytes).ok()
}

/// The password of the first line of a `.pgpass` text matching
/// `host:port:database:user` (`*` matches anything; `\:` and `\\` escape).
pub fn pgpass_lookup(text: &str, host: &str, port: u16, db: &str, user: &str) -> Option<String> {
    let port = port.to_string();
    for line in text.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let mut fields = Vec::with_capacity(5);
        let mut cur = String::new();
        let mut chars = line.chars();
        while let Some(c) = chars.next() {
            match c {
                '\\' => {
                    if let Some(n) = chars.next() {
                        cur.push(n);
                    }
                }
                ':' if fields.len() < 4 => fields.push(std::mem::take(&mut cur)),
                c => cur.push(c),
            }
        }
        fields.push(cur);
        if fields.len() != 5 {
            continue;
        }
        let m = |f: &str, v: &str| f == "*" || f == v;
        if m(&fields[0], host) && m(&fields[1], &port) && m(&fields[2], db) && m(&fields[3], user) {
            return Some(fields[4].clone());
        }
    }
    None
}

type Params<'a> = Vec<&'a (dyn ToSql + Sync)>;

fn params(binds: &[String]) -> Params<'_> {
    binds.iter().map(|b| b as &(dyn ToSql + Sync)).collect()
}

impl PgStore {
    fn put_one(&mut self, r: &RunResult, source: Option<&str>) -> Result<Put, StoreError> {
        // No password is stored (the result's texts, rtshield_results::secrets).
        let r = &*r.without_secrets();
        crate::check_in_range(r)?;
        let s = RunSummary::of(r);
        let summary = serde_json::to_string(&(&s.threads, &s.tags)).map_err(StoreError::json)?;
        let result = serde_json::to_string(r).map_err(StoreError::json)?;
        let loc = self.location.clone();
        let e = |e: postgres::Error| StoreError::new(format!("{loc}: {}", describe(&e)));
        let PgStore {
            client,
            ins_run,
            ins_tag,
            ins_thread,
            ..
        } = self;
        let mut tx = client.transaction().map_err(e)?;
        let row = tx
            .query_opt(
                &*ins_run,
                &[
                    &s.uuid,
                    &s.host,
                    &s.kernel,
                    &s.kernel_version,
                    &s.preempt,
                    &s.arch,
                    &s.cpu_model,
                    &s.tool,
                    &s.label,
                    &s.started,
                    &s.duration_s,
                    &s.end,
                    &s.mode,
                    &source,
                    &now_secs(),
                    &summary,
                    &result,
                    &s.machine_id,
                ],
            )
            .map_err(e)?;
        let Some(row) = row else {
            // Already there (perhaps stored by another board a moment ago:
            // the insert waited for its commit, then did nothing).
            let row = tx
                .query_one("SELECT id, result FROM runs WHERE uuid = $1", &[&s.uuid])
                .map_err(e)?;
            tx.commit().map_err(e)?;
            let id: i64 = row.try_get(0).unwrap_or(-1);
            // The same UUID is the same run only with the same content:
            // in a shared store another user may have written the row.
            let same = row
                .try_get::<_, &str>(1)
                .is_ok_and(|t| crate::record::same_content(t, r));
            return Ok(if same {
                Put::AlreadyStored { id, uuid: s.uuid }
            } else {
                Put::Conflict { id, uuid: s.uuid }
            });
        };
        let id: i64 = row.get(0);
        insert_children(&mut tx, ins_tag, ins_thread, id, &s).map_err(e)?;
        tx.commit().map_err(e)?;
        Ok(Put::Stored { id, uuid: s.uuid })
    }
}

type SummaryExtra = (Vec<ThreadSummary>, BTreeMap<String, String>);

/// The summary of one `runs` row; every column read with `try_get` (a
/// NULL or a column of another type in a shared store is an error for
/// this row, never a panic).
fn summary_of(r: &postgres::Row) -> Result<RunSummary, String> {
    fn col<'a, T: postgres::types::FromSql<'a>>(
        r: &'a postgres::Row,
        i: usize,
    ) -> Result<T, String> {
        r.try_get(i)
            .map_err(|e| format!("column {}: {e}", r.columns()[i].name()))
    }
    let (threads, tags): SummaryExtra =
        serde_json::from_str(col::<&str>(r, 14)?).map_err(|e| format!("summary: {e}"))?;
    Ok(RunSummary {
        id: col(r, 0)?,
        uuid: col(r, 1)?,
        host: col(r, 2)?,
        machine_id: col(r, 15)?,
        kernel: col(r, 3)?,
        kernel_version: col(r, 4)?,
        preempt: col(r, 5)?,
        arch: col(r, 6)?,
        cpu_model: col(r, 7)?,
        tool: col(r, 8)?,
        label: col(r, 9)?,
        started: col(r, 10)?,
        duration_s: col(r, 11)?,
        end: col(r, 12)?,
        mode: col(r, 13)?,
        tags,
        threads,
    })
}

impl Store for PgStore {
    fn put(&mut self, r: &RunResult, source: Option<&str>) -> Result<Put, StoreError> {
        self.put_one(r, source)
    }

    /// One transaction per run (not one for the batch as in SQLite): runs
    /// from many boards interleave, and an interrupted import keeps what it
    /// stored.
    fn put_many(&mut self, runs: &[(RunResult, Option<String>)]) -> Result<Vec<Put>, StoreError> {
        runs.iter()
            .map(|(r, src)| self.put_one(r, src.as_deref()))
            .collect()
    }

    fn list(&mut self, sel: &Selector) -> Result<Vec<RunSummary>, StoreError> {
        let (clause, binds) = where_clause(sel, Dialect::Postgres);
        let sql = format!(
            "SELECT id, uuid, host, kernel, kernel_version, preempt, arch, cpu_model, tool,
                label, started, duration_s, end_reason, mode, summary, machine_id FROM runs{clause}
                ORDER BY id"
        );
        let rows = self
            .client
            .query(&sql, &params(&binds))
            .map_err(|e| self.err(e))?;
        let mut out = Vec::with_capacity(rows.len());
        for r in rows {
            // A row another lab member wrote by hand is input: one that
            // does not read (a NULL, another type) or is out of range is
            // left out with a warning naming it, never the listing (F10).
            match summary_of(&r).and_then(|s| crate::check_summary(&s).map(|()| s)) {
                Ok(s) => {
                    debug_assert!(sel.matches(&s), "SQL selection disagrees for run {}", s.id);
                    out.push(s);
                }
                Err(why) => crate::skip_row(&self.location, r.try_get(0).ok(), &why),
            }
        }
        Ok(out)
    }

    fn results(&mut self, ids: &[i64]) -> Result<Vec<RunResult>, StoreError> {
        let want: Vec<i64> = ids.to_vec();
        let rows = self
            .client
            .query("SELECT id, result FROM runs WHERE id = ANY($1)", &[&want])
            .map_err(|e| self.err(e))?;
        let mut by_id: BTreeMap<i64, &str> = BTreeMap::new();
        for r in &rows {
            if let (Ok(id), Ok(text)) = (r.try_get(0), r.try_get(1)) {
                by_id.insert(id, text);
            }
        }
        ids.iter()
            .map(|id| {
                let text = by_id
                    .get(id)
                    .ok_or_else(|| StoreError::new(format!("{}: no run {id}", self.location)))?;
                rtshield_results::from_stored_json(text).map_err(|e| StoreError::unreadable(*id, e))
            })
            .collect()
    }

    fn groups(&mut self, sel: &Selector, by: &[String]) -> Result<Vec<Group>, StoreError> {
        let (sql, binds) = group_query(sel, by, Dialect::Postgres);
        let rows = self
            .client
            .query(&sql, &params(&binds))
            .map_err(|e| self.err(e))?;
        let n = by.len();
        let out = rows
            .iter()
            // try_get: a column of another type in a shared store drops
            // its group, never panics.
            .filter_map(|r| {
                Some(Group {
                    keys: (0..n)
                        .map(|i| r.try_get::<_, String>(i).ok())
                        .collect::<Option<_>>()?,
                    runs: r.try_get::<_, i64>(n).ok()?.max(0) as u64,
                    worst_p999_ns: r.try_get(n + 1).ok()?,
                    worst_max_ns: r.try_get(n + 2).ok()?,
                })
            })
            .collect();
        Ok(sort_groups(out))
    }

    fn location(&self) -> String {
        self.location.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pgpass_matches_like_libpq() {
        let text = "# comment\n\
                    db.lab:5432:rt:alice:s3cr\\:et\n\
                    *:*:*:bob:b\\\\pw\n\
                    /tmp/sock:5433:*:carol:c\n";
        assert_eq!(
            pgpass_lookup(text, "db.lab", 5432, "rt", "alice").as_deref(),
            Some("s3cr:et")
        );
        assert_eq!(pgpass_lookup(text, "db.lab", 5433, "rt", "alice"), None);
        assert_eq!(
            pgpass_lookup(text, "x", 1, "y", "bob").as_deref(),
            Some("b\\pw")
        );
        assert_eq!(
            pgpass_lookup(text, "/tmp/sock", 5433, "any", "carol").as_deref(),
            Some("c")
        );
        assert_eq!(pgpass_lookup("a:b:c\n", "a", 1, "c", "d"), None);
    }

    #[test]
    fn a_group_readable_pgpass_is_ignored() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("pgpass");
        std::fs::write(&f, "*:*:*:*:pw\n").unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o640)).unwrap();
        assert_eq!(read_pgpass(&f), None);
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(read_pgpass(&f).as_deref(), Some("*:*:*:*:pw\n"));
    }

    /// Round 5 (A), F06: under `sudo -E`, `HOME` and `PGPASSFILE` are
    /// another user's: root uses no password file that user owns or could
    /// replace.
    #[test]
    fn f06_a_password_file_of_another_user_is_not_used() {
        use std::os::unix::fs::PermissionsExt;
        if !rustix::process::geteuid().is_root() {
            return; // chown needs root (the suite runs as root)
        }
        let d = tempfile::tempdir().unwrap();
        let other = Some(rustix::process::Uid::from_raw(1001));
        let f = d.path().join("pgpass");
        std::fs::write(&f, "*:*:*:*:pw\n").unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert!(read_pgpass(&f).is_some());
        // The file is the other user's.
        rustix::fs::chown(&f, other, None).unwrap();
        assert_eq!(read_pgpass(&f), None);
        // Root's own file, in a directory the other user owns.
        let home = d.path().join("home");
        std::fs::create_dir(&home).unwrap();
        let g = home.join(".pgpass");
        std::fs::write(&g, "*:*:*:*:pw\n").unwrap();
        std::fs::set_permissions(&g, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert!(read_pgpass(&g).is_some());
        rustix::fs::chown(&home, other, None).unwrap();
        assert_eq!(read_pgpass(&g), None);
        // A link to root's own file, planted in a world-writable directory.
        let pub_dir = d.path().join("pub");
        std::fs::create_dir(&pub_dir).unwrap();
        std::fs::set_permissions(&pub_dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        let l = pub_dir.join("pgpass");
        std::os::unix::fs::symlink(&g, &l).unwrap();
        assert_eq!(read_pgpass(&l), None);
    }

    #[test]
    fn passwords_are_redacted() {
        assert_eq!(
            redact("postgres://u:secret@db/rt"),
            "postgres://u:***@db/rt"
        );
        // Adversary round 2, B2: the scheme in any case is a URL.
        assert!(is_pg_url("POSTGRES://u:PW@db/rt") && is_pg_url("PostgreSQL://db/rt"));
        assert!(!is_pg_url("postgres:/x") && !is_pg_url("runs.db"));
        assert_eq!(
            lower_scheme("POSTGRESQL://U:PW@db/rt"),
            "postgresql://U:PW@db/rt"
        );
        assert_eq!(
            redact("postgres://u:secret@db/rt"),
            "postgres://u:***@db/rt"
        );
        assert_eq!(redact("postgres://u@db/rt"), "postgres://u@db/rt");
        assert_eq!(
            redact("postgresql://db/rt?host=/tmp"),
            "postgresql://db/rt?host=/tmp"
        );
    }

    #[test]
    fn root_does_not_take_the_server_from_pghost() {
        // Adversary round 6, G08: under sudo -E another user's PGHOST (a
        // socket they listen on) received root's password.
        let theirs = Some("/tmp/theirs".to_string());
        assert_eq!(default_host(theirs.clone(), true), "/var/run/postgresql");
        assert_eq!(default_host(theirs, false), "/tmp/theirs");
        assert_eq!(default_host(None, true), "/var/run/postgresql");
        assert_eq!(default_host(None, false), "/var/run/postgresql");
    }
}
