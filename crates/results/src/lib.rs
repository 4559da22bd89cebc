//! The result schema: what `measure`/`run` write and `report` reads.
//! JSON (`results.json`, versioned), CSV, the systress text file and
//! cyclictest's histogram text are all written and read here, in one place.
//!
//! All latencies are integer nanoseconds; output formats round to the
//! run's resolution only when printing.

pub mod drift;
#[cfg(any(test, feature = "testing"))]
pub mod example;
pub mod export;
pub mod histogram;
pub mod import;
pub mod merge;
pub mod read;
pub mod schema;
pub mod statrec;
mod verdict;

pub use export::{
    file_names, systress_file_name, to_csv, to_cyclictest_hist, to_json, to_systress_txt,
    write_all, write_json, ExportManager, Exporter, CSV_FILE, HIST_FILE, JSON_FILE, SPIKES_JSON,
    SPIKES_TXT,
};
pub use histogram::{pool_threads, LeCounter, MinMaxSum};
pub use read::{parse_json, read_json, ReadError, SCHEMA_MAJOR};
pub use schema::*;
pub use verdict::{
    effective_verdict, LimitFailure, Limits, ThreadVerdict, Verdict, EXIT_LIMIT_EXCEEDED,
};
