//! rtshield-partition: shield CPUs with cpuset partitions (cgroup v1, with
//! or without the `cpuset.` prefix, and cgroup v2), move IRQs, workqueues
//! and a few sysctls away from them, and put everything back exactly.
//!
//! The order of `create` is what makes it safe: check everything (nothing
//! written on refusal), plan every change from the current values, save the
//! plan to the state file (fsync + rename), and only then write. `undo`
//! works from that file alone, so a create killed half-way can be undone.

pub mod advice;
pub mod create;
pub mod hier;
pub mod kernel;
pub mod knobs;
pub mod state;
pub mod status;
pub mod tasks;
pub mod undo;

pub use create::{create, CreateOptions, CreateReport};
pub use hier::{Hierarchy, Kind};
pub use kernel::Kernel;
pub use knobs::Knobs;
pub use state::State;
pub use status::{status, Status};
pub use undo::{undo, UndoReport};
