//! The result schema: what `measure`/`run` write and `report` reads.
//! JSON (`results.json`, versioned), CSV, the systress text file and
//! cyclictest's histogram text are all written and read here, in one place.
//!
//! All latencies are integer nanoseconds; output formats round to the
//! run's resolution only when printing.

pub mod import;
pub mod schema;

pub use schema::*;
