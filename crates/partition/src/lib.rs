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
mod names;
mod scope;
mod status;
mod tasks;
mod undo;

pub use create::{create, CreateOptions, CreateReport, Refusal};
pub use kernel::{errno_from_name, Backend, Kernel};
pub use knobs::{Keep, Knobs, Profile};
pub use names::SetNames;
pub use status::{
    check_cpu_subset, enter as enter_partition, list as list_partitions, move_threads,
    partition_dir, pick_parent, plan_move, status, Listed as ListedPartition, MoveOutcome,
    MovePlan, PartitionInfo, Status, TaskBrief,
};
pub use undo::{undo, UndoReport};

/// Whether reading saved state failed only because the caller may not
/// read [`rtshield_isolation::STATE_DIR`] (root's, mode 0700): read-only commands run
/// by another user go on without it and say so.
pub(crate) fn unreadable_state(e: &anyhow::Error) -> bool {
    use std::io::ErrorKind::PermissionDenied;
    e.chain().any(|c| {
        c.downcast_ref::<rtshield_safefs::SafeError>()
            .and_then(rtshield_safefs::SafeError::io_kind)
            == Some(PermissionDenied)
            || c.downcast_ref::<std::io::Error>().map(std::io::Error::kind)
                == Some(PermissionDenied)
    })
}
