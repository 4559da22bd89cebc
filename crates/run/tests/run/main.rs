//! Tests of rtshield-run's entry points and pipeline through its public API.
//!
//! The crate's one integration test binary (every tests/*/main.rs or
//! tests/*.rs is a binary of its own: tests/layering.rs allows one per
//! crate): one module per subject, sharing rtshield-testkit's helpers.

mod entry_points;
mod pipeline;
mod runner_parts;
