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

/// A parent cgroup option (`measure --partition-parent`, `audit --parent`):
/// the one rule of [`rtshield_isolation::parent_syntax_error`], at parse
/// time (exit 2 naming the option, before anything is read or written).
pub(crate) fn parse_parent(s: &str) -> Result<String, String> {
    match rtshield_isolation::parent_syntax_error(s) {
        Some(why) => Err(format!(
            "must name a cgroup below the cpuset hierarchy's mount, {why}"
        )),
        None => Ok(s.to_string()),
    }
}

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
