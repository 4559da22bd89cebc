//! Foundation of rtshield: every `/proc` and `/sys` access goes through
//! [`Root`], so the whole tool can be pointed at a fake tree in tests.
//! Also the small shared vocabulary types: [`CpuSet`], durations, and the
//! [`sysinfo::SysInfo`] block embedded in every result file.

pub mod cpuset;
pub mod error;
pub mod mode;
pub mod procstat;
pub mod programs;
pub mod root;
pub mod safefs;
pub mod sched;
pub mod sysinfo;
pub mod units;

pub use cpuset::CpuSet;
pub use error::InputError;
pub use root::Root;
pub use safefs::{DirPolicy, SafeDir, SafeError};
pub use sysinfo::SysInfo;
