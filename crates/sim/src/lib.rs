//! rtshield-sim: a deterministic discrete-event simulator of an SMP machine
//! running lollobrigida scenarios under pluggable load balancers (Linux 2.6
//! O(1), FreeBSD ULE, and the ARTiS asymmetric real-time model of the ARTiS
//! thesis).
//!
//! Its one job: [`simulate`] a scenario under a [`SimConfig`] and hand back
//! the balance report with the simulator's extras ([`SimOutcome`]), plus
//! the renderings only a simulation has: a comparison table
//! ([`render_comparison`]), a Gantt chart ([`render_gantt_svg`]) and the
//! event trace ([`trace_to_csv`]).
//!
//! What it may not do: read a clock, call the OS or touch a file. The same
//! scenario, configuration and seed always give the same [`SimOutcome`],
//! byte for byte once serialised. The compiler enforces it: the crate
//! forbids `unsafe` and links only pure crates (`rtshield-scenario`,
//! `rtshield-vocab`, `rtshield-text`; the purity test checks the
//! dependency graph).

#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![warn(unreachable_pub)]

mod balancer;
mod config;
mod engine;
mod gantt;
mod stats;
mod table;
mod trace;

pub use config::{
    BalancerKind, Placement, SimConfig, SimError, DEFAULT_MAX_EVENTS, MAX_EVENTS_RANGE,
};
pub use engine::{simulate, slice_ms as linux26_slice_ms, SimOutcome};
pub use gantt::render_svg as render_gantt_svg;
pub use stats::SimExtra;
pub use table::render as render_comparison;
pub use trace::{to_csv as trace_to_csv, Segment, SegmentKind, TraceRow};
