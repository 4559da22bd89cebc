//! How a value that may be unknown is written in a text cell: one rule
//! per kind of output, so every writer says "unknown" the same way
//! (docs/formats.md, "What rtshield writes when a value is unknown").

use crate::{Pct, ThreadResult};
use std::fmt::Display;

/// `v`, or `unknown` (`""` in CSV, `?` in tables and `#` lines).
pub fn or<T: Display>(v: Option<T>, unknown: &str) -> String {
    v.map_or_else(|| unknown.to_string(), |v| v.to_string())
}

/// Percentile `key` of `t` in a CSV cell, in ns: the value when exact,
/// `>=N` when only a bound is known, empty when unknown or when the
/// sample count does not support it.
pub(crate) fn pct_csv(t: &ThreadResult, key: &str) -> String {
    match t.pct(key) {
        Pct::Exact(v) => v.to_string(),
        Pct::AtLeast(v, _) => format!(">={v}"),
        Pct::NotEnoughSamples | Pct::Unknown => String::new(),
    }
}
