//! The simulator's tests, one binary: analytic results the ARTiS thesis
//! predicts, determinism, the golden outputs of the examples, invariants
//! over generated scenarios (proptest), the configuration limits, and the
//! purity of the crate's dependency graph. `common` builds scenarios
//! without the parser.

mod analytic;
mod common;
mod determinism;
mod golden;
mod invariants;
mod limits;
mod purity;
