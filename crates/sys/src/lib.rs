//! Foundation of rtshield: every `/proc` and `/sys` access goes through
//! [`Root`], so the whole tool can be pointed at a fake tree in tests, and
//! this crate is the only one that knows kernel file names and formats
//! (typed readers: [`task`], [`interrupts`], [`procstat`], [`loadavg`],
//! [`cpus`], [`cgroup`], [`power`], the [`sysinfo::SysInfo`] block embedded
//! in every result file; knob paths: [`kpath`]; the calls that go with
//! them: [`sched`], [`tracefs`]). See docs/architecture-sys.md.
//!
//! Kernel files only: the vocabulary is `rtshield-vocab` (re-exported
//! here under its old paths), the safe-file layer `rtshield-safefs`,
//! partitions and their state `rtshield-isolation`, test helpers
//! `rtshield-testkit`.

pub mod cgroup;
pub mod confine;
pub mod cpus;
pub mod interrupts;
pub mod kpath;
pub mod loadavg;
pub mod power;
pub mod procstat;
pub mod root;
pub mod sched;
pub mod shield;
pub mod sysinfo;
pub mod task;
pub mod tracefs;
pub mod workqueue;

// The pure vocabulary lives in `rtshield-vocab` (so the simulator can use it
// without linking this crate); re-exported under the paths it always had.
pub use root::Root;
pub use rtshield_vocab::{cpuset, error, units};
pub use rtshield_vocab::{CpuSet, InputError};
// Vocabulary that lived here before `sys` became kernel files only.
#[doc(hidden)]
pub use rtshield_vocab::{mode, programs}; // TEMP(phase1): remove in surface pass
                                          // The safe-file layer is its own crate, `rtshield-safefs`.
#[doc(hidden)]
pub use rtshield_safefs as safefs; // TEMP(phase1): remove in surface pass
#[doc(hidden)]
pub use rtshield_safefs::{DirPolicy, SafeDir, SafeError}; // TEMP(phase1): remove in surface pass
pub use sysinfo::SysInfo;
