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
#[cfg(feature = "testing")]
pub mod fake;
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

/// How the binary opens the kernel. Builds with the `testing` feature (the
/// test suite's: it is enabled from dev-dependencies only) emulate the
/// kernel on a fake `--sysroot` tree when the test asks for it with
/// `RTSHIELD_FAKE_KERNEL=1`; release builds contain no emulation at all.
pub fn open_kernel(root: rtshield_sys::Root, dry_run: bool) -> std::io::Result<Kernel> {
    #[cfg(feature = "testing")]
    if std::env::var_os("RTSHIELD_FAKE_KERNEL").is_some() {
        return fake::kernel(root, dry_run);
    }
    Kernel::open(root, dry_run)
}
