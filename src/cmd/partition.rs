//! `rtshield partition ...`.

use crate::cli::Global;

#[derive(clap::Subcommand, Debug)]
pub enum Command {
    /// Create the rt and nrt partitions (not implemented yet).
    Create {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        rest: Vec<String>,
    },
}

pub fn run(_c: Command, _g: &Global) -> anyhow::Result<i32> {
    super::not_yet("partition")
}
