//! `rtshield __load` (internal worker of built-in loads).

use crate::cli::Global;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Arguments (not implemented yet).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub rest: Vec<String>,
}

pub fn run(_args: Args, _g: &Global) -> anyhow::Result<i32> {
    super::not_yet("__load")
}
