//! rtshield-partition: shield CPUs with cpuset partitions (cgroup v1, with
//! or without the `cpuset.` prefix, and cgroup v2), move IRQs, workqueues
//! and a few sysctls away from them, and put everything back exactly.
//!
//! Its one job: change the machine for a partition and undo it
//! ([`create`], [`undo`], [`status`], moving a process in or out). The
//! order of `create` is what makes it safe: check everything (nothing
//! written on refusal), plan every change from the current values, save the
//! plan to the state file (fsync + rename), and only then write. `undo`
//! works from that file alone, so a create killed half-way can be undone.
//!
//! What it may not do: find partitions or read the state file's format
//! itself (both are `rtshield-isolation`'s, which `run`, `audit` and the
//! isolation tag share), or name a kernel file outside `rtshield-sys`. Every
//! write goes through one [`Kernel`], whose [`Backend`] the test kit swaps
//! for an emulation of the kernel on fake trees.

#![deny(missing_docs)]
#![warn(unreachable_pub)]

mod create;
mod kernel;
mod knobs;
mod status;
mod tasks;
mod undo;

pub use create::{create, CreateOptions, CreateReport, Refusal};
pub use kernel::{errno_from_name, Backend, Kernel};
pub use knobs::{Knobs, Profile};
pub use status::{
    enter as enter_partition, move_process, partition_dir, pick_parent, status, MoveOutcome,
    PartitionInfo, Status, TaskBrief,
};
pub use undo::{undo, UndoReport};
