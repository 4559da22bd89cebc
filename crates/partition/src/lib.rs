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
pub mod scope;
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

/// Whether reading saved state failed only because the caller may not
/// read [`state::STATE_DIR`] (root's, mode 0700): read-only commands run
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
