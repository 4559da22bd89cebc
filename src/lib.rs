//! The `rtshield` command line. Each subcommand lives in `cmd/<name>.rs`
//! and only parses arguments and prints; the work is done by the domain
//! crates under `crates/`.

pub mod cli;
pub mod cmd;
