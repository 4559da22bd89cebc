//! The one integration test binary (`autotests = false` in Cargo.toml):
//! every former `tests/*.rs` binary is a module here, and `util` holds the
//! helpers they share. A new CLI test file must be declared below.

mod util;

mod audit_cli;
mod campaign_cli;
mod campaign_live;
mod ci_scripts;
mod consumer_conformance;
mod docs_links;
mod docs_numbers;
mod drift_live;
mod env_vars;
mod export_cli;
mod full_disk;
mod hostile_inputs;
mod layering;
mod load_net_peer;
mod measure_cli;
mod measure_demo;
mod measure_live;
mod measure_stop;
mod noise_cli;
mod noise_live;
mod output_dir;
mod partition_cli;
mod partition_live;
mod partition_nonroot;
mod partition_scope;
mod partition_state;
mod partrt_compat;
mod path_layer;
mod ranges_cli;
mod reaper_live;
mod report_cli;
mod report_out_dir;
mod run_check;
mod run_cpuset_live;
mod run_examples;
mod run_longrun;
mod run_programs;
mod runs_cli;
mod runs_pg;
mod runs_pg_tls;
mod scenario_cli;
mod signals_live;
mod simulate_cli;
mod stat_cli;
mod store_hook;
mod store_owner;
mod sysinfo_cli;
mod temp_places;
mod trace_cli;
mod trace_live;
mod unknown_values;
mod values;
