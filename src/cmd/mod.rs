//! One file per subcommand: argument definitions and printing only.

pub(crate) mod audit;
pub(crate) mod campaign;
pub(crate) mod demo;
pub(crate) mod export;
pub(crate) mod load_worker;
pub(crate) mod measure;
pub(crate) mod noise;
pub(crate) mod partition;
pub(crate) mod partrt;
pub(crate) mod report;
pub(crate) mod run;
pub(crate) mod runs;
pub(crate) mod scenario;
pub(crate) mod simulate;
pub(crate) mod stat;
pub(crate) mod sysinfo;

/// Where a finished run is stored, and its tags (`measure`, `run`).
#[derive(clap::Args, Debug, Clone, Default)]
pub(crate) struct StoreArgs {
    /// Tag the run (repeatable): stored in results.json and in the results store, e.g. `--tag board=pi3-a`.
    #[arg(long = "tag", value_name = "KEY=VALUE", value_parser = rtshield_run::parse_tag)]
    pub(crate) tags: Vec<(String, String)>,
    /// The results store: a SQLite file or a postgres:// URL [default: $RTSHIELD_STORE, else $XDG_DATA_HOME/rtshield/runs.db].
    #[arg(long, value_name = "PATH|URL")]
    pub(crate) store: Option<String>,
    /// Do not add the run to the results store (the files are written as always).
    #[arg(long, env = "RTSHIELD_NO_STORE", value_parser = clap::builder::FalseyValueParser::new())]
    pub(crate) no_store: bool,
}
