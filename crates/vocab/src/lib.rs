//! The small vocabulary every rtshield crate speaks: CPU sets
//! ([`CpuSet`]), durations with units ([`units`]), scheduling policy names
//! ([`Policy`]), the measuring mode ([`Mode`]), the names of supervised
//! programs' settings and built-in loads ([`programs`]) and the "you asked
//! for something wrong" error ([`InputError`]).
//!
//! Pure: no OS calls, no `unsafe`, no libc. It sits below `rtshield-sys`
//! (which re-exports it under its old paths) so that pure crates (the
//! scenario model, the simulator) can use these types without linking the
//! crate that talks to the kernel.

#![forbid(unsafe_code)]

pub mod cpuset;
pub mod error;
pub mod mode;
pub mod policy;
pub mod programs;
pub mod units;

pub use cpuset::CpuSet;
pub use error::InputError;
pub use mode::Mode;
pub use policy::Policy;
