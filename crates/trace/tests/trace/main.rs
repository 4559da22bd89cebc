//! The trace crate's tests, one binary: the analyser on hand-written
//! traces (`analyse`) and on traces recorded on the development VM
//! (`recorded`), the noise attribution (`noise`), parsers that never panic
//! (`never_panics`), the pairing of engine samples with their wake-ups
//! (`pair`), and a live tracing session (`live`, root).

mod analyse;
mod live;
mod never_panics;
mod noise;
mod pair;
mod recorded;

use rtshield_trace::{parse, Record};

/// The records of `tests/fixtures/NAME`.
fn fixture(name: &str) -> Vec<Record> {
    let p = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    parse(&std::fs::read_to_string(p).unwrap()).unwrap()
}
