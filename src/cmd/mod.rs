//! One file per subcommand: argument definitions and printing only.

pub mod audit;
pub mod campaign;
pub mod demo;
pub mod export;
pub mod load_worker;
pub mod measure;
pub mod noise;
pub mod partition;
pub mod report;
pub mod run;
pub mod runs;
pub mod scenario;
pub mod simulate;
pub mod stat;
pub mod sysinfo;

/// Where a finished run is stored, and its tags (`measure`, `run`).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct StoreArgs {
    /// Tag the run (repeatable): stored in results.json and in the results store, e.g. `--tag board=pi3-a`.
    #[arg(long = "tag", value_name = "KEY=VALUE", value_parser = rtshield_run::parse_tag)]
    pub tags: Vec<(String, String)>,
    /// The results store: a SQLite file or a postgres:// URL [default: $RTSHIELD_STORE, else $XDG_DATA_HOME/rtshield/runs.db].
    #[arg(long, value_name = "PATH|URL")]
    pub store: Option<String>,
    /// Do not add the run to the results store (the files are written as always).
    #[arg(long, env = "RTSHIELD_NO_STORE", value_parser = clap::builder::FalseyValueParser::new())]
    pub no_store: bool,
}
