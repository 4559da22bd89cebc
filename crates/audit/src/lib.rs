//! rtshield-audit: what can still disturb a CPU (`rtshield audit`), and a
//! vmstat/pidstat-like sampler of interrupts, context switches and CPU
//! time (`rtshield stat`).
//!
//! Its one job: look at a machine and say, per CPU, what runs or fires
//! there, how much it matters ([`CpuAudit`]'s score) and what would fix
//! it ([`Fix`]), or sample the counters over time ([`Sampler`]).
//!
//! What it may not do: change anything (a fix is a command line for the
//! user, never run), read kernel files other than through `rtshield-sys`,
//! or decide what a partition is (that is `rtshield-isolation`'s).

#![deny(missing_docs)]
#![warn(unreachable_pub)]

mod audit;
mod noise_fix;
mod power;
mod procfs;
mod stat;

pub use audit::{
    audit, render as render_audit, Audit, AuditOptions, Counts, CpuAudit, Fix, IrqOnCpu, Penalty,
};
pub use noise_fix::{noise_fix, NoiseCause};
pub use stat::{
    render as render_sample, summarize, CpuRow, Sample, Sampler, Summary, ThreadRow, TimeRow,
};
