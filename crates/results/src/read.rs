//! Reading `results.json` back, with errors that name the file.

use crate::RunResult;
use rtshield_text::excerpt::{withhold, Quote};
use rtshield_vocab::InputError;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The schema major version this build writes. It reads this one and
/// [`OLDEST_MAJOR`]..: older files are upgraded as they are read.
pub const SCHEMA_MAJOR: u32 = 2;

/// The oldest major version this build reads (version 1: placeholders
/// for unknown values, listed in each thread's `unknown`).
pub const OLDEST_MAJOR: u32 = 1;
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

/// serde's message, which quotes what it found (`unknown variant
/// `…``), with every control escaped as on the terminal (a newline in a
/// quoted value would otherwise start a forged line of output).
pub(crate) fn json_error(e: &serde_json::Error) -> String {
    let m = e.to_string();
    let mut o = String::with_capacity(m.len());
    for c in m.chars() {
        if rtshield_text::terminal::is_control(c) {
            rtshield_text::terminal::push_escaped(&mut o, c);
        } else {
            o.push(c);
        }
    }
    o
}

fn invalid(path: &Path, line: usize, col: usize, msg: impl std::fmt::Display) -> ReadError {
    ReadError::Invalid(InputError::at(&path.display().to_string(), line, col, msg))
}

/// Read a `results.json` (a regular file of at most
/// [`INPUT_LIMIT`](rtshield_safefs::INPUT_LIMIT) bytes). Refuses a file without a `schema`, another
/// tool's schema, or a major version it does not know (minor additions
/// are fields this reader ignores or defaults); a version-1 file is
/// upgraded ([`upgrade_v1`]).
pub fn read_json(path: impl AsRef<Path>) -> Result<RunResult, ReadError> {
    let path = path.as_ref();
    // Bounded, regular files only: a FIFO or /dev/zero planted where a
    // result is expected (`run --resume DIR`) must not block or fill memory.
    let (bytes, public) = rtshield_safefs::read_input_public(path, rtshield_safefs::INPUT_LIMIT)
        .map_err(|e| match e {
            // A link, or a file planted in a directory others control
            // (round 5 (A), F04): the path layer's refusal, an input error.
            e if e.is_refusal() => ReadError::Invalid(InputError(e.to_string())),
            e => ReadError::Io {
                path: path.to_path_buf(),
                // The variant names the path: keep only the reason, so the
                // message says the path once.
                source: match e {
                    rtshield_safefs::SafeError::Io { err, .. } => err,
                    other => std::io::Error::other(other.to_string()),
                },
            },
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
                format!("not valid JSON: {}", json_error(&e)),
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
                "{} (docs/ranges.md)",
                crate::ranges::too_many_threads(threads)
            ),
        ));
    }
    if !(OLDEST_MAJOR..=SCHEMA_MAJOR).contains(&major) {
        return Err(invalid(
            path,
            1,
            1,
            format!(
                "schema \"{schema}\" has major version {major}; this rtshield reads versions {OLDEST_MAJOR} to {SCHEMA_MAJOR}"
            ),
        ));
    }
    let mut r: RunResult = if major == 1 {
        // Version 1 is upgraded as a tree: files of that age are small
        // (and the thread count was bounded above).
        let mut v: Value = serde_json::from_str(text).map_err(|e| {
            invalid(
                path,
                e.line(),
                e.column(),
                format!("not valid JSON: {}", json_error(&e)),
            )
        })?;
        upgrade_v1(&mut v);
        serde_json::from_value(v).map_err(|e| {
            invalid(
                path,
                1,
                1,
                format!("bad results file (version 1): {}", json_error(&e)),
            )
        })?
    } else {
        serde_json::from_str(text).map_err(|e| {
            invalid(
                path,
                e.line(),
                e.column(),
                format!("bad results file: {}", json_error(&e)),
            )
        })?
    };
    // Every number in range (docs/ranges.md): nothing downstream (report,
    // export, store, a resumed run) can overflow on it.
    crate::ranges::check_result(&r).map_err(|m| {
        ReadError::Invalid(InputError::new(format!(
            "{}: {m} (docs/ranges.md)",
            path.display()
        )))
    })?;
    for t in &mut r.threads {
        t.forget_placeholders();
    }
    // A CPU without a gap has no longest gap (older files wrote 0).
    if let Some(n) = &mut r.noise {
        for c in n.cpus.iter_mut().filter(|c| c.events == 0) {
            c.max_single_ns = None;
        }
    }
    // A file written by an older rtshield may hold a store's password in
    // its command line: it goes no further (report, export, store).
    r.redact_secrets();
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

/// A result stored as JSON text (the store keeps them): any version this
/// build reads, upgraded.
pub fn from_stored_json(text: &str) -> Result<RunResult, String> {
    parse_json(text, Path::new("stored result")).map_err(|e| e.to_string())
}

/// Thread fields version 1 wrote placeholders for when a thread's
/// `unknown` list named them.
const V1_UNKNOWABLE: &[&str] = &[
    "tid",
    "policy",
    "priority",
    "overruns",
    "missed_periods",
    "lost",
    "samples",
];

/// A version-1 result as version 2 writes it: the placeholders of
/// unknown values become null, and what version-1 readers of other
/// tools' files invented becomes unknown again (an import's end reason,
/// its duration computed as samples × period, its live-table period, its
/// `mode` and `memlock` when the file had no provenance, its last sample
/// and coordinated-omission view, a period of 0). An import's percentiles
/// are taken again from its histogram, so a rank beyond the histogram is
/// a bound and no longer the maximum; every thread's percentiles its
/// sample count does not support are dropped.
pub(crate) fn upgrade_v1(v: &mut Value) {
    v["schema"] = Value::from(crate::SCHEMA);
    let kind = v["tags"]["imported"].as_str().map(str::to_string);
    let tool = v["tool"].as_str().unwrap_or_default().to_string();
    if v["started_at"].as_str() == Some("") {
        v["started_at"] = Value::Null;
    }
    if let Some(kind) = &kind {
        if kind != "fluctuation-log" {
            v["duration_s"] = Value::Null;
        }
        v["end_reason"] = Value::Null;
        let Some(st) = v.get_mut("settings").filter(|s| s.is_object()) else {
            return;
        };
        st["stats_period_ns"] = Value::Null;
        if st["histo_buckets"].as_u64() == Some(0) {
            st["histo_buckets"] = Value::Null;
        }
        // Only a cyclictest command line (-m) said whether memory was locked.
        if !tool.starts_with("cyclictest ") {
            st["memlock"] = Value::Null;
        }
        // Text without rtshield's provenance: the mode was a default.
        if tool == "cyclictest" || tool == "systress" {
            st["mode"] = Value::Null;
        }
    }
    let Some(threads) = v.get_mut("threads").and_then(Value::as_array_mut) else {
        return;
    };
    for t in threads {
        upgrade_v1_thread(t, kind.is_some());
    }
}

fn upgrade_v1_thread(t: &mut Value, imported: bool) {
    let unknown: Vec<String> = t["unknown"]
        .as_array()
        .map(|u| {
            u.iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    if let Some(o) = t.as_object_mut() {
        o.remove("unknown");
    }
    for f in V1_UNKNOWABLE {
        if unknown.iter().any(|u| u == f) {
            t[*f] = Value::Null;
        }
    }
    if t["period_ns"].as_u64() == Some(0) {
        t["period_ns"] = Value::Null;
    }
    let no_hist = unknown.iter().any(|u| u == "histogram");
    if no_hist {
        t["histogram"] = Value::Null;
        t["hist_stats"] = Value::Null;
        t["percentiles"] = Value::Object(Default::default());
    }
    if imported {
        t["cur_ns"] = Value::Null;
        t["corrected"] = Value::Null;
        if !no_hist {
            rebound_from_histogram(t);
        }
    }
    let n = t["samples"].as_u64();
    let keep = |k: &String| n.is_some_and(|n| crate::percentile_supported(k, n));
    if let Some(p) = t["percentiles"].as_object_mut() {
        p.retain(|k, _| keep(k));
    }
    let n = t["corrected"]["samples"].as_u64();
    if let Some(p) = t["corrected"]["percentiles"].as_object_mut() {
        p.retain(|k, _| n.is_some_and(|n| crate::percentile_supported(k, n)));
    }
}

/// Version 1 stored a percentile whose rank fell beyond an import's
/// histogram as the maximum: where the histogram says so (and the value
/// is that maximum), it becomes the bound it is.
fn rebound_from_histogram(t: &mut Value) {
    let Ok(h) = serde_json::from_value::<crate::Histogram>(t["histogram"].clone()) else {
        return;
    };
    let max = t["max_ns"].as_i64();
    let (_, bounds) = crate::histogram::hist_percentiles(&h);
    let mut out = serde_json::Map::new();
    if let Some(p) = t["percentiles"].as_object_mut() {
        for (k, b) in bounds {
            if p.get(&k).and_then(Value::as_i64) == max {
                p.remove(&k);
                out.insert(k, serde_json::to_value(b).unwrap_or(Value::Null));
            }
        }
    }
    if !out.is_empty() {
        t["percentile_bounds"] = Value::Object(out);
    }
}
