//! Report tests through the public API: rendering, the output directory's
//! safety, the spike section, the campaign report.
//!
//! The crate's one integration test binary (every tests/*/main.rs or
//! tests/*.rs is a binary of its own: tests/layering.rs allows one per
//! crate): one module per subject, sharing rtshield-testkit's helpers.

mod campaign;
mod out_dir_safety;
mod render;
mod spikes;
