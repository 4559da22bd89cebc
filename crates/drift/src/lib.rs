//! rtshield-drift: the drift watch. A shield set at the start of a long
//! run does not stay set (irqbalance moves an IRQ back, a service's
//! threads join the shielded set, a cpuset is rewritten, a governor
//! changes); this crate notices, while the run goes on, and says when.
//!
//! [`Watch`] holds the last value of everything that shields the measured
//! CPUs and, at each [`Watch::tick`], re-reads it (bounded: one file per
//! value, at most [`TASK_BUDGET`] task status files) and returns one
//! [`DriftEvent`] per change. [`Watcher`] runs a `Watch` on its own thread,
//! kept off the measured CPUs at SCHED_OTHER (nothing is read on them, and
//! the measuring loop is never touched), every stats period, until
//! [`Watcher::finish`] gives the run's [`Drift`] for `results.json`.
//!
//! Kernel files are read through `rtshield_sys` (mostly
//! the drift readers of `rtshield_sys`), partitions are found by
//! `rtshield_isolation::Partitions::discover`, the event's format is
//! `rtshield_results`'s ([`Drift`]).

#![deny(missing_docs)]
#![warn(unreachable_pub)]

mod snapshot;
mod watch;
mod watcher;

pub use watch::{Watch, WatchSpec, TASK_BUDGET};
pub use watcher::{Feed, Watcher};

pub use rtshield_results::{Drift, DriftEffect as Effect, DriftEvent, DriftWatch};
