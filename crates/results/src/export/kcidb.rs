//! `kcidb.json`: KCIDB I/O schema v5 test entries, so latency figures can
//! join KernelCI's common database (`kcidb-submit`). One test per thread
//! and statistic, its `number` the value (`{"value", "unit", "prefix"}`;
//! latencies in seconds with a metric prefix, counts without a unit), its
//! path `rtshield.latency.t<thread>.<stat>`. Status: `DONE` (a measurement),
//! except each thread's `max` which is `PASS` or `FAIL` by the run's verdict
//! ([`crate::Verdict`], recorded or with a limit given at export time) when
//! there is one. A figure the source did not record has no test entry
//! (KCIDB forbids null).
//!
//! KCIDB requires every test to name its build (`build_id`); rtshield does
//! not build kernels, so the caller gives it (`--build-id`), else it is
//! `rtshield:<kernel release>`.

use super::Exporter;
use crate::unknown::or;
use crate::{effective_verdict, Limits, RunResult, ThreadResult};
use serde_json::{json, Value};

/// The name of the KCIDB file.
pub const KCIDB_FILE: &str = "kcidb.json";
/// The schema version written.
pub(crate) const KCIDB_MAJOR: u64 = 5;
pub(crate) const KCIDB_MINOR: u64 = 0;
/// The origin (CI system) name.
pub(crate) const ORIGIN: &str = "rtshield";

/// The KCIDB exporter: one test per thread and statistic (see [`to_kcidb`]).
#[derive(Debug, Clone, Default)]
pub struct Kcidb {
    /// Export-time limits: they replace the recorded ones of the same kind.
    pub limits: Limits,
    /// The KCIDB build the tests belong to (`--build-id`, `ORIGIN:ID`);
    /// `None`: `rtshield:<kernel release>`.
    pub build_id: Option<String>,
}

impl Exporter for Kcidb {
    fn name(&self) -> &'static str {
        "kcidb"
    }
    fn files(&self, res: &RunResult) -> Vec<(String, String)> {
        vec![(
            KCIDB_FILE.into(),
            to_kcidb(res, &self.limits, self.build_id.as_deref()),
        )]
    }
}

/// A KCIDB id part: what the schema's dot-separated path allows
/// (`[a-zA-Z0-9_-]`), everything else `_`.
fn token(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The run's identity: the `uuid` tag rtshield stores, else its start.
fn run_id(res: &RunResult) -> String {
    res.tags
        .get("uuid")
        .cloned()
        .unwrap_or_else(|| token(res.started_at.as_deref().unwrap_or("unknown")))
}

/// The default build id: `rtshield:<kernel release>`.
pub(crate) fn default_build_id(res: &RunResult) -> String {
    format!(
        "{ORIGIN}:{}",
        res.sysinfo.kernel_release.as_deref().unwrap_or("unknown")
    )
}

/// (statistic, value, is a latency in ns): the figures the result knows;
/// min, avg and max have no value when the thread measured nothing; a
/// statistic the source did not record (or only bounded) has no test.
fn stats(t: &ThreadResult) -> Vec<(String, Option<f64>, bool)> {
    let mut v = vec![
        ("min".to_string(), t.min_ns.map(|v| v as f64), true),
        ("avg".to_string(), t.avg_ns, true),
        ("max".to_string(), t.max_ns.map(|v| v as f64), true),
    ];
    for (k, p) in &t.percentiles {
        v.push((format!("p{}", k.replace('.', "_")), Some(*p as f64), true));
    }
    for (name, n) in [
        ("samples", t.samples),
        ("overruns", t.overruns),
        ("missed_periods", t.missed_periods),
        ("lost", t.lost),
    ] {
        if let Some(n) = n {
            v.push((name.into(), Some(n as f64), false));
        }
    }
    v
}

/// The file's text: `{"version": {"major": 5, "minor": 0}, "tests": [...]}`;
/// `extra`: limits given at export time.
pub fn to_kcidb(res: &RunResult, extra: &Limits, build_id: Option<&str>) -> String {
    let verdict = effective_verdict(res, *extra);
    let limit = verdict.as_ref().and_then(|v| v.limits.max_latency_ns);
    let si = &res.sysinfo;
    let build = build_id.map_or_else(|| default_build_id(res), str::to_string);
    let rid = run_id(res);
    let host = si.hostname.clone().unwrap_or_else(|| "unknown".into());
    let mut tests = Vec::new();
    for t in &res.threads {
        let passed = verdict
            .as_ref()
            .and_then(|v| v.thread(t.index))
            .map(|v| v.passed);
        for (stat, value, latency) in stats(t) {
            let status = match (stat.as_str(), passed) {
                ("max", Some(false)) => "FAIL",
                ("max", Some(true)) => "PASS",
                _ => "DONE",
            };
            // No value and no verdict to carry: no entry (KCIDB has no null).
            if value.is_none() && status == "DONE" {
                continue;
            }
            let number = match (value, latency) {
                (None, _) => None,
                (Some(v), true) => Some(json!({"value": v / 1e9, "unit": "s", "prefix": "metric"})),
                (Some(v), false) => Some(json!({"value": v})),
            };
            let mut misc = json!({
                "thread": t.index,
                // KCIDB allows no null anywhere: unknown is "?".
                "policy": or(t.policy, "?"),
                "priority": t.priority.map_or(json!("?"), |p| json!(p)),
                "period_ns": t.period_ns.map_or(json!("?"), |p| json!(p)),
                "kernel_release": si.kernel_release.as_deref().unwrap_or("?"),
                "preempt": si.preempt_model.as_deref().unwrap_or("?"),
                "tool": res.tool,
                "run": rid,
            });
            if let (Some(c), Value::Object(m)) = (t.cpu, &mut misc) {
                m.insert("cpu".into(), json!(c));
            }
            if let (Some(l), Value::Object(m)) = (limit, &mut misc) {
                m.insert("max_latency_ns".into(), json!(l));
            }
            let mut test = json!({
                "id": format!("{ORIGIN}:{}.t{}.{stat}", token(&rid), t.index),
                "origin": ORIGIN,
                "build_id": build,
                "path": format!("rtshield.latency.t{}.{stat}", t.index),
                "status": status,
                "environment": {
                    "comment": format!("{host} ({} {})", si.arch, si.cpu_model.as_deref().unwrap_or("?")),
                    "misc": {"host": host, "tags": res.tags},
                },
                "misc": misc,
            });
            if let Value::Object(m) = &mut test {
                if let Some(n) = number {
                    m.insert("number".into(), n);
                }
                // Unknown start or duration: the optional key is left out.
                if let Some(st) = &res.started_at {
                    m.insert("start_time".into(), json!(st));
                }
                if let Some(d) = res.duration_s {
                    m.insert("duration".into(), json!(d.max(0.0)));
                }
            }
            tests.push(test);
        }
    }
    let doc = json!({
        "version": {"major": KCIDB_MAJOR, "minor": KCIDB_MINOR},
        "tests": tests,
    });
    serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n"
}
