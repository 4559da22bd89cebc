//! Load-balancing scenarios (the lollobrigida format of the ARTiS thesis's
//! annex B): the task model, the parser and the balance report shape, shared
//! by the simulator (`rtshield-sim`) and the real-kernel runner
//! (`rtshield-scenario-run`).
//!
//! Pure: no OS calls, no `unsafe`, no libc. Reading a file is the caller's
//! job ([`parse_bytes`] takes its contents); the compiler keeps it that way,
//! since the crate depends on nothing that talks to the kernel.

#![forbid(unsafe_code)]

pub mod model;
pub mod parse;
pub mod report;

pub use parse::{parse_bytes, parse_str};
