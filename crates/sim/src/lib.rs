//! rtshield-sim: a deterministic discrete-event simulator of an SMP machine
//! running lollobrigida scenarios under pluggable load balancers (Linux 2.6
//! O(1), FreeBSD ULE, and the ARTiS asymmetric real-time model of the ARTiS thesis).
//!
//! Pure computation: no clock, no OS calls, no files. The same scenario,
//! configuration and seed always give the same [`SimOutcome`], byte for byte
//! once serialised. The compiler enforces it: the crate forbids `unsafe`
//! and links only pure crates (`rtshield-scenario`, `rtshield-vocab`;
//! tests/purity.rs checks the dependency graph).

#![forbid(unsafe_code)]

pub mod balancer;
pub mod config;
pub mod engine;
pub mod gantt;
pub mod stats;
pub mod table;
pub mod trace;

pub use config::{BalancerKind, Placement, SimConfig, SimError};
pub use engine::{simulate, SimOutcome};
pub use stats::SimExtra;
pub use trace::{Segment, SegmentKind, TraceRow};
