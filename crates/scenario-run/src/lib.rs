//! rtshield-scenario-run: runs a lollobrigida scenario (the ARTiS thesis's
//! annex B format) on the real kernel.
//!
//! Its one job: the plan for this machine ([`plan`]: masks trimmed to the
//! CPUs present, `--scale`, the dangerous task refused), then the run
//! ([`run`]): one thread per task with its policy and mask, the busy loop,
//! and SIGINT/SIGTERM handling, reported in `rtshield-scenario`'s shape.
//!
//! What it may not do: parse the scenario or shape the report (the pure
//! `rtshield-scenario` does, shared with the simulator), or let real-time
//! tasks that never sleep, or work more than [`MAX_RT_DUTY`] of the time
//! between their sleeps, hold every CPU (the plan refuses them unless
//! `--force`).

#![deny(missing_docs)]
#![warn(unreachable_pub)]

mod busy;
mod plan;
mod runner;

pub use plan::{plan, Plan, PlanOptions, PlannedTask, MAX_RT_DUTY};
pub use runner::{run, RunOptions, RunOutcome};
