//! Result file tests through the public API: every format written and read back, the CI formats checked by their consumers' rules, the trace and split fields.
//!
//! The crate's one integration test binary (every tests/*/main.rs or
//! tests/*.rs is a binary of its own: tests/layering.rs allows one per
//! crate): one module per subject, sharing rtshield-testkit's helpers.

mod ci_formats;
mod formats;
mod ranges;
mod round_trip;
mod trace;
