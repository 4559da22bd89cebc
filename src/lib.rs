//! rtshield: the command line, and only it. Its one job is to turn
//! arguments into a request for one domain crate, make one call, and print
//! what comes back: each subcommand lives in `cmd/<name>.rs` (its clap
//! arguments and its printing), `cli` parses and dispatches and maps
//! errors to exit codes (2 for bad input, 1 otherwise, 141 on a closed
//! pipe).
//!
//! It may not decide the order of a measurement's steps (`rtshield-run`
//! does), read kernel or cgroup files, know a file format or render a
//! report: the work is done by the crates under `crates/`
//! (docs/architecture.md). Only this crate and `xtask` depend on clap.

#![deny(missing_docs)]
#![warn(unreachable_pub)]

mod cli;
mod cmd;

pub use crate::cli::{command, main};
