//! Foundation of rtshield: every `/proc` and `/sys` access goes through
//! [`Root`], so the whole tool can be pointed at a fake tree in tests, and
//! this crate is the only one that knows kernel file names and formats
//! (typed readers: [`task`], [`interrupts`], [`procstat`], [`loadavg`],
//! [`cpus`], [`cgroup`]; knob paths: [`kpath`]). See docs/architecture-sys.md.
//! Also the small shared vocabulary types: [`CpuSet`], durations, and the
//! [`sysinfo::SysInfo`] block embedded in every result file.

pub mod advice;
pub mod cgroup;
pub mod confine;
pub mod cpus;
pub mod cpuset;
pub mod error;
pub mod interrupts;
pub mod isolation;
pub mod kpath;
pub mod loadavg;
pub mod mode;
pub mod partstate;
pub mod procstat;
pub mod programs;
pub mod root;
pub mod safefs;
pub mod sched;
pub mod sysinfo;
pub mod task;
pub mod testenv;
pub mod tracefs;
pub mod units;
pub mod workqueue;

pub use cpuset::CpuSet;
pub use error::InputError;
pub use root::Root;
pub use safefs::{DirPolicy, SafeDir, SafeError};
pub use sysinfo::SysInfo;
