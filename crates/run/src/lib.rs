//! rtshield-run: the `rtshield run` orchestrator.
//!
//! `rtshield-config` turns a systress file into a typed [`rtshield_config::Config`];
//! this crate executes it: starts the timer (measuring) threads, supervises
//! programs and built-in loads, drives load/rest cycles, writes checkpoints,
//! rotates parts, records the timeline and writes the result files.
//! See docs/architecture-run.md.

pub mod metrics;
pub mod pipeline;
pub mod resume;
pub mod runner;
pub mod single;
pub mod store;
pub mod timeline;
pub mod tracing;

// The orchestrator reads the parser's typed model.
use rtshield_config::model;
