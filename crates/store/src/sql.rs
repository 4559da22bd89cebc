//! The SQL both backends share: selectors become `WHERE` clauses and
//! `--group-by` becomes one aggregate query. The two dialects differ only
//! in how a parameter is written (`?1` / `$1`) and in the substring
//! function (`instr` / `strpos`), so the same selector selects the same
//! runs in SQLite and PostgreSQL.

use crate::select::{Op, Selector};
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    Sqlite,
    Postgres,
}

impl Dialect {
    fn param(self, n: usize) -> String {
        match self {
            Dialect::Sqlite => format!("?{n}"),
            Dialect::Postgres => format!("${n}"),
        }
    }
    /// `needle` occurs in `hay` (both SQL expressions).
    fn contains(self, hay: &str, needle: &str) -> String {
        match self {
            Dialect::Sqlite => format!("instr({hay}, {needle}) > 0"),
            Dialect::Postgres => format!("strpos({hay}, {needle}) > 0"),
        }
    }
}

/// Column of a selector key that is a field of the runs table.
pub(crate) fn column(key: &str) -> Option<&'static str> {
    Some(match key {
        "id" => "CAST(runs.id AS TEXT)",
        "uuid" => "runs.uuid",
        "host" => "runs.host",
        "machine_id" => "runs.machine_id",
        "kernel" => "runs.kernel",
        "kernel_version" => "runs.kernel_version",
        "preempt" => "runs.preempt",
        "arch" => "runs.arch",
        "cpu_model" => "runs.cpu_model",
        "tool" => "runs.tool",
        "label" => "runs.label",
        "started" => "runs.started",
        "end" => "runs.end_reason",
        "mode" => "runs.mode",
        _ => return None,
    })
}

/// Fields that are NULL when the run's source did not record them: a
/// missing value matches as a missing tag does (`=` to nothing, `!=`,
/// `!~`), as in [`Selector::matches`].
fn nullable(key: &str) -> bool {
    matches!(key, "started" | "end" | "mode")
}

/// ` WHERE …` and its bound values for a selector (empty when it selects
/// everything). Tags are matched through the tags table; a missing tag
/// matches `!=` and `!~` only, as in [`Selector::matches`].
pub(crate) fn where_clause(sel: &Selector, d: Dialect) -> (String, Vec<String>) {
    let mut binds = Vec::new();
    let parts = conditions(sel, d, &mut binds);
    if parts.is_empty() {
        (String::new(), binds)
    } else {
        (format!(" WHERE {}", parts.join(" AND ")), binds)
    }
}

fn conditions(sel: &Selector, d: Dialect, binds: &mut Vec<String>) -> Vec<String> {
    let mut parts = Vec::new();
    for c in &sel.conds {
        binds.push(c.value.clone());
        let n = d.param(binds.len());
        let part = match column(&c.key) {
            Some(col) if nullable(&c.key) => match c.op {
                Op::Eq if c.value.is_empty() => format!("({col} IS NULL OR {col} = {n})"),
                Op::Eq => format!("{col} = {n}"),
                Op::Ne => format!("({col} IS NULL OR {col} <> {n})"),
                Op::Contains => d.contains(col, &n),
                Op::NotContains => format!("({col} IS NULL OR NOT ({}))", d.contains(col, &n)),
            },
            Some(col) => match c.op {
                Op::Eq => format!("{col} = {n}"),
                Op::Ne => format!("{col} <> {n}"),
                Op::Contains => d.contains(col, &n),
                Op::NotContains => format!("NOT ({})", d.contains(col, &n)),
            },
            None => {
                binds.push(c.key.clone());
                let k = d.param(binds.len());
                let tag = |cond: &str| {
                    format!("EXISTS (SELECT 1 FROM tags t WHERE t.run_id = runs.id AND t.key = {k} AND {cond})")
                };
                match c.op {
                    Op::Eq if c.value.is_empty() => format!(
                        "NOT EXISTS (SELECT 1 FROM tags t WHERE t.run_id = runs.id AND t.key = {k} AND t.value <> {n})"
                    ),
                    Op::Eq => tag(&format!("t.value = {n}")),
                    Op::Ne => format!("NOT {}", tag(&format!("t.value = {n}"))),
                    Op::Contains => tag(&d.contains("t.value", &n)),
                    Op::NotContains => format!("NOT {}", tag(&d.contains("t.value", &n))),
                }
            }
        };
        parts.push(part);
    }
    parts
}

/// One row of `runs list --group-by`: the group's key values, its number
/// of runs and the worst p99.9 and maximum over every thread of its runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Group {
    /// The group's value of each `--group-by` key, in the order given (`?` for a run without the tag).
    pub keys: Vec<String>,
    /// Runs in the group.
    pub runs: u64,
    /// Largest p99.9 over every thread of the group's runs, ns; `None` when no thread has one.
    pub worst_p999_ns: Option<i64>,
    /// Largest maximum over every thread of the group's runs, ns; `None` for a group without threads.
    pub worst_max_ns: Option<i64>,
}

/// The keys `--group-by` accepts: the fields of [`column`] and any tag
/// (a run without the tag is grouped under `?`).
pub(crate) fn group_query(sel: &Selector, by: &[String], d: Dialect) -> (String, Vec<String>) {
    let mut binds = Vec::new();
    let mut keys = Vec::new();
    for (i, k) in by.iter().enumerate() {
        let expr = match column(k) {
            // An unknown value is grouped under `?`, as a missing tag is.
            Some(col) if nullable(k) => format!("COALESCE({col}, '?')"),
            Some(col) => col.to_string(),
            None => {
                binds.push(k.clone());
                format!(
                    "COALESCE((SELECT g.value FROM tags g WHERE g.run_id = runs.id AND g.key = {}), '?')",
                    d.param(binds.len())
                )
            }
        };
        keys.push(format!("{expr} AS g{i}"));
    }
    let conds = conditions(sel, d, &mut binds);
    // The selector's parameters come after the group keys' ones.
    let clause = if conds.is_empty() {
        String::new()
    } else {
        format!(" WHERE {}", conds.join(" AND "))
    };
    let gcols: Vec<String> = (0..by.len()).map(|i| format!("g{i}")).collect();
    // Inner: one row per run with its worst thread figures (the threads
    // table, indexed by run); outer: one row per group.
    let sql = format!(
        "SELECT {g}, count(*), max(wp), max(wm) FROM (
            SELECT {keys},
                (SELECT max(t.p999_ns) FROM threads t WHERE t.run_id = runs.id) AS wp,
                (SELECT max(t.max_ns) FROM threads t WHERE t.run_id = runs.id) AS wm
            FROM runs{clause}) per_run
         GROUP BY {g}",
        g = gcols.join(", "),
        keys = keys.join(", "),
    );
    (sql, binds)
}

/// Groups in a collation-independent order (byte order of the keys), so
/// both backends print the same table whatever the server's locale.
pub(crate) fn sort_groups(mut g: Vec<Group>) -> Vec<Group> {
    g.sort_by(|a, b| a.keys.cmp(&b.keys));
    g
}

/// Check `--group-by` keys: known fields or tag-like names.
pub fn check_group_keys(by: &[String]) -> Result<(), String> {
    if by.is_empty() {
        return Err("--group-by: give at least one key (e.g. host,kernel)".into());
    }
    if by.len() > 8 {
        return Err("--group-by: at most 8 keys".into());
    }
    for k in by {
        if !crate::is_tag_key(k) {
            return Err(format!(
                "--group-by: `{k}` is not a key (a field such as host or kernel, or a tag name)"
            ));
        }
    }
    Ok(())
}
