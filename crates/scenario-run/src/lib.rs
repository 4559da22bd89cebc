//! Runs a lollobrigida scenario (the ARTiS thesis's annex B format) on the
//! real kernel: the plan for this machine (masks trimmed to the CPUs
//! present, `--scale`, the dangerous task refused), one thread per task with
//! its policy and mask, the busy loop, and SIGINT/SIGTERM handling. The
//! scenario model, parser and report shape are in the pure
//! `rtshield-scenario`, shared with the simulator.

pub mod busy;
pub mod plan;
pub mod runner;
