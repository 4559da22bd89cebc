//! rtshield-audit: what can still disturb a CPU (`audit`), and a
//! vmstat/pidstat-like sampler of interrupts and context switches (`stat`).

pub mod audit;
mod noise_fix;
pub mod power;
pub mod procfs;
pub mod stat;

pub use audit::{audit, render, Audit, AuditOptions};
pub use noise_fix::{noise_fix, NoiseCause};
