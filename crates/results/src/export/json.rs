//! `results.json`: the versioned schema, the file `report` reads.

use super::Exporter;
use crate::RunResult;

/// The name of the JSON file.
pub const JSON_FILE: &str = "results.json";

/// The `results.json` exporter: the versioned schema, always written (what `report` and `runs import` read).
pub struct Json;

impl Exporter for Json {
    fn name(&self) -> &'static str {
        "json"
    }
    fn files(&self, res: &RunResult) -> Vec<(String, String)> {
        vec![(JSON_FILE.into(), to_json(res))]
    }
}

/// `results.json`'s text: the [`RunResult`] pretty-printed, newline-terminated.
pub fn to_json(res: &RunResult) -> String {
    let mut s = serde_json::to_string_pretty(res).expect("RunResult serialises");
    s.push('\n');
    s
}
