//! The store's schema: one ordered list of migrations that both backends
//! apply, from the version a database has to [`SCHEMA_VERSION`], in one
//! transaction under their lock. A new database starts at version 0 and
//! climbs the same ladder, so SQLite and PostgreSQL stores cannot drift.
//!
//! `refinery` was considered: it keeps its own history table (existing
//! stores record their version in `meta`) and runs SQL only, while the
//! version-2 step rebuilds rows from the stored results in Rust.

use crate::sql::Dialect;

/// The schema version this build writes. Older databases are migrated
/// forward when opened; a newer one is refused (an older rtshield must not
/// write into a schema it does not know).
pub const SCHEMA_VERSION: i64 = 5;

/// One step of the ladder.
#[derive(Debug)]
pub(crate) struct Migration {
    /// The version the step brings the database to.
    pub to: i64,
    /// The DDL, in both dialects: `{ID}`, `{INT}` and `{REAL}` stand for
    /// the row id, integer and float column types (PostgreSQL uses BIGINT
    /// everywhere an integer is stored, so a value round-trips as i64 in
    /// both backends).
    ddl: &'static str,
    /// SQL after the DDL, per dialect: data moved into what the DDL made
    /// (their JSON functions differ), or what only one dialect can say
    /// (SQLite cannot drop a NOT NULL: it rebuilds the table).
    fill_sqlite: &'static str,
    fill_postgres: &'static str,
    /// The rows derived from each stored result (its summary columns,
    /// tags and threads) are rebuilt from it (Rust code: the backend does
    /// it once, after the last step's SQL, with the final schema).
    pub rebuild_from_results: bool,
}

/// The ladder, oldest first.
pub(crate) const MIGRATIONS: &[Migration] = &[
    // Version 1: runs only.
    Migration {
        to: 1,
        ddl: "
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE runs (
    id {ID},
    uuid TEXT NOT NULL UNIQUE,
    host TEXT NOT NULL,
    kernel TEXT NOT NULL,
    kernel_version TEXT NOT NULL,
    preempt TEXT NOT NULL,
    arch TEXT NOT NULL,
    cpu_model TEXT NOT NULL,
    tool TEXT NOT NULL,
    label TEXT NOT NULL,
    started TEXT NOT NULL,
    duration_s {REAL} NOT NULL,
    end_reason TEXT NOT NULL,
    mode TEXT NOT NULL,
    source TEXT,
    stored_at {INT} NOT NULL,
    summary TEXT NOT NULL,
    result TEXT NOT NULL
);
INSERT INTO meta (key, value) VALUES ('schema_version', '1');
",
        fill_sqlite: "",
        fill_postgres: "",
        rebuild_from_results: false,
    },
    // Version 2: queryable tags and per-thread figures, rebuilt from the
    // lossless result of every stored run.
    Migration {
        to: 2,
        ddl: "
CREATE TABLE tags (
    run_id {INT} NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (run_id, key)
);
CREATE INDEX tags_key_value ON tags (key, value);
CREATE TABLE threads (
    run_id {INT} NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    idx {INT} NOT NULL,
    cpu {INT},
    samples {INT} NOT NULL,
    min_ns {INT} NOT NULL,
    avg_ns {REAL} NOT NULL,
    max_ns {INT} NOT NULL,
    p50_ns {INT},
    p99_ns {INT},
    p999_ns {INT},
    p9999_ns {INT},
    overruns {INT} NOT NULL,
    missed_periods {INT} NOT NULL,
    lost {INT} NOT NULL,
    PRIMARY KEY (run_id, idx)
);
CREATE INDEX runs_host_kernel ON runs (host, kernel);
",
        fill_sqlite: "",
        fill_postgres: "",
        rebuild_from_results: true,
    },
    // Version 3: the machine id (`/etc/machine-id`), backfilled from the
    // stored results (empty for runs measured before it was recorded).
    Migration {
        to: 3,
        ddl: "
ALTER TABLE runs ADD COLUMN machine_id TEXT NOT NULL DEFAULT '';
CREATE INDEX runs_machine_id ON runs (machine_id);
",
        fill_sqlite: "
UPDATE runs SET machine_id = COALESCE(json_extract(result, '$.sysinfo.machine_id'), '');
",
        fill_postgres: "
UPDATE runs SET machine_id = COALESCE(result::jsonb -> 'sysinfo' ->> 'machine_id', '')
    WHERE result::jsonb -> 'sysinfo' ? 'machine_id';
",
        rebuild_from_results: false,
    },
    // Version 4: unknown is NULL, never a placeholder. A run's start,
    // duration, end reason and mode, and a thread's sample count,
    // overruns, missed periods and lost samples may be NULL (a source
    // that does not record them). SQLite cannot drop NOT NULL: the tables
    // are made again and filled from the stored results, which are
    // upgraded to results schema 2 on the way (placeholders of version 1
    // become unknown, a percentile beyond an import's histogram a bound,
    // one spelling of the policy).
    Migration {
        to: 4,
        ddl: "",
        fill_sqlite: "
CREATE TABLE runs_v4 (
    id INTEGER PRIMARY KEY,
    uuid TEXT NOT NULL UNIQUE,
    host TEXT NOT NULL,
    kernel TEXT NOT NULL,
    kernel_version TEXT NOT NULL,
    preempt TEXT NOT NULL,
    arch TEXT NOT NULL,
    cpu_model TEXT NOT NULL,
    tool TEXT NOT NULL,
    label TEXT NOT NULL,
    started TEXT,
    duration_s REAL,
    end_reason TEXT,
    mode TEXT,
    source TEXT,
    stored_at INTEGER NOT NULL,
    summary TEXT NOT NULL,
    result TEXT NOT NULL,
    machine_id TEXT NOT NULL DEFAULT ''
);
INSERT INTO runs_v4 (id, uuid, host, kernel, kernel_version, preempt, arch, cpu_model, tool,
    label, started, duration_s, end_reason, mode, source, stored_at, summary, result, machine_id)
SELECT id, uuid, host, kernel, kernel_version, preempt, arch, cpu_model, tool,
    label, started, duration_s, end_reason, mode, source, stored_at, summary, result, machine_id
FROM runs;
DROP TABLE threads;
DROP TABLE tags;
DROP TABLE runs;
ALTER TABLE runs_v4 RENAME TO runs;
CREATE INDEX runs_host_kernel ON runs (host, kernel);
CREATE INDEX runs_machine_id ON runs (machine_id);
CREATE TABLE tags (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (run_id, key)
);
CREATE INDEX tags_key_value ON tags (key, value);
CREATE TABLE threads (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    idx INTEGER NOT NULL,
    cpu INTEGER,
    samples INTEGER,
    min_ns INTEGER NOT NULL,
    avg_ns REAL NOT NULL,
    max_ns INTEGER NOT NULL,
    p50_ns INTEGER,
    p99_ns INTEGER,
    p999_ns INTEGER,
    p9999_ns INTEGER,
    overruns INTEGER,
    missed_periods INTEGER,
    lost INTEGER,
    PRIMARY KEY (run_id, idx)
);
",
        fill_postgres: "
ALTER TABLE runs ALTER COLUMN started DROP NOT NULL,
    ALTER COLUMN duration_s DROP NOT NULL,
    ALTER COLUMN end_reason DROP NOT NULL,
    ALTER COLUMN mode DROP NOT NULL;
ALTER TABLE threads ALTER COLUMN samples DROP NOT NULL,
    ALTER COLUMN overruns DROP NOT NULL,
    ALTER COLUMN missed_periods DROP NOT NULL,
    ALTER COLUMN lost DROP NOT NULL;
DELETE FROM threads;
DELETE FROM tags;
",
        rebuild_from_results: true,
    },
    // Version 5: a thread that measured nothing has no minimum, mean or
    // maximum: NULL, never 0. SQLite makes the threads table again; its
    // rows, like every summary, are rebuilt from the stored results,
    // whose zero-sample threads read as unknown (older rtshields wrote 0).
    Migration {
        to: 5,
        ddl: "",
        fill_sqlite: "
DROP TABLE threads;
CREATE TABLE threads (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    idx INTEGER NOT NULL,
    cpu INTEGER,
    samples INTEGER,
    min_ns INTEGER,
    avg_ns REAL,
    max_ns INTEGER,
    p50_ns INTEGER,
    p99_ns INTEGER,
    p999_ns INTEGER,
    p9999_ns INTEGER,
    overruns INTEGER,
    missed_periods INTEGER,
    lost INTEGER,
    PRIMARY KEY (run_id, idx)
);
",
        fill_postgres: "
ALTER TABLE threads ALTER COLUMN min_ns DROP NOT NULL,
    ALTER COLUMN avg_ns DROP NOT NULL,
    ALTER COLUMN max_ns DROP NOT NULL;
DELETE FROM threads;
DELETE FROM tags;
",
        rebuild_from_results: true,
    },
];

impl Migration {
    /// The step's SQL in dialect `d`.
    pub(crate) fn sql(&self, d: Dialect) -> String {
        let (id, int, real, fill) = match d {
            Dialect::Sqlite => ("INTEGER PRIMARY KEY", "INTEGER", "REAL", self.fill_sqlite),
            Dialect::Postgres => (
                "BIGSERIAL PRIMARY KEY",
                "BIGINT",
                "DOUBLE PRECISION",
                self.fill_postgres,
            ),
        };
        let ddl = self
            .ddl
            .replace("{ID}", id)
            .replace("{INT}", int)
            .replace("{REAL}", real);
        format!("{ddl}{fill}")
    }
}

/// The steps a database at `version` still needs, or the refusal of a
/// database newer than this build (`what` names it in the message).
pub(crate) fn pending(version: i64, what: &str) -> Result<&'static [Migration], String> {
    if version > SCHEMA_VERSION {
        return Err(format!(
            "{what}store schema version {version} is newer than this rtshield knows ({SCHEMA_VERSION}); upgrade rtshield"
        ));
    }
    let from = MIGRATIONS.partition_point(|m| m.to <= version);
    Ok(&MIGRATIONS[from..])
}

/// The SQLite SQL that builds a database at `version` (tests build the
/// stores older rtshields wrote with it).
pub fn sqlite_schema(version: i64) -> String {
    MIGRATIONS
        .iter()
        .filter(|m| m.to <= version)
        .map(|m| m.sql(Dialect::Sqlite))
        .collect::<String>()
        + &format!("UPDATE meta SET value = '{version}' WHERE key = 'schema_version';")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ladder_climbs_one_version_a_step_to_the_current_one() {
        for (i, m) in MIGRATIONS.iter().enumerate() {
            assert_eq!(m.to, i as i64 + 1);
        }
        assert_eq!(MIGRATIONS.last().map(|m| m.to), Some(SCHEMA_VERSION));
        assert_eq!(pending(0, "").unwrap().len(), 5);
        assert_eq!(pending(2, "").unwrap()[0].to, 3);
        assert_eq!(pending(3, "").unwrap()[0].to, 4);
        assert_eq!(pending(4, "").unwrap()[0].to, 5);
        assert!(pending(SCHEMA_VERSION, "").unwrap().is_empty());
        assert!(pending(99, "x: ")
            .unwrap_err()
            .starts_with("x: store schema version 99 is newer"));
        // Every placeholder is replaced in both dialects.
        for m in MIGRATIONS {
            for d in [Dialect::Sqlite, Dialect::Postgres] {
                assert!(!m.sql(d).contains('{'), "{}", m.sql(d));
            }
        }
        assert!(MIGRATIONS[0]
            .sql(Dialect::Postgres)
            .contains("id BIGSERIAL PRIMARY KEY"));
        assert!(MIGRATIONS[0]
            .sql(Dialect::Sqlite)
            .contains("id INTEGER PRIMARY KEY,"));
    }
}
