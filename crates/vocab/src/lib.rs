//! rtshield-vocab: the small vocabulary every rtshield crate speaks.
//!
//! Its one job: name the values that cross crate boundaries, with their
//! parsers and their one spelling on output: CPU sets ([`CpuSet`], the
//! kernel's list and mask formats and partrt's hex masks), durations with
//! units ([`parse_duration_ns`], [`format_duration_ns`], [`Dur`]),
//! scheduling policies ([`Policy`]), the measuring mode ([`Mode`]), the
//! settings of supervised programs and the built-in loads ([`Output`],
//! [`Termination`], [`Builtin`]), and the "you asked for something wrong"
//! error ([`InputError`], exit status 2).
//!
//! What it may not do: call the OS (no `unsafe`, no libc, no file), or
//! depend on any other rtshield crate. Pure crates (the scenario model, the
//! simulator) use it without linking the crate that talks to the kernel;
//! the kernel's numbers for these names (a policy's `SCHED_*` value) belong
//! to `rtshield-sys`.

#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![warn(unreachable_pub)]

mod cpuset;
mod error;
mod mode;
mod policy;
mod programs;
mod units;

pub use cpuset::{CpuSet, CpuSetError, MAX_CPU};
pub use error::InputError;
pub use mode::Mode;
pub use policy::Policy;
pub use programs::{parse_size, Builtin, Output, Termination, LOAD_THREADS_MAX};
pub use units::{format_duration_ns, parse_duration_ns, unit_ns, Dur, DurationError};
