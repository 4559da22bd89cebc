//! rtshield-scenario: load-balancing scenarios (the lollobrigida format of
//! the ARTiS thesis's annex B): the task model, the parser and the balance
//! report shape, shared by the simulator (`rtshield-sim`) and the
//! real-kernel runner (`rtshield-scenario-run`).
//!
//! Its one job: say what a scenario is ([`Scenario`], [`parse_str`]) and
//! what a run of one produced ([`BalanceReport`], [`render_balance`]), so
//! that a simulated and a real run print the same report.
//!
//! What it may not do: call the OS (no `unsafe`, no libc, no file:
//! reading a file is the caller's job, [`parse_bytes`] takes its
//! contents) or run anything; the compiler keeps it that way, since the
//! crate depends on nothing that talks to the kernel.

#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![warn(unreachable_pub)]

mod model;
mod parse;
mod report;

pub use model::{Globals, Scenario, TaskSpec, ANNEX_B_RT_SHARE, RT_SHARE_RANGE};
pub use parse::{parse_bytes, parse_str, MAX_ITERATIONS, MAX_SLEEP_NS};
pub use report::{
    fmt_ns, group_reports, render_text as render_balance, table_with_text_cols, BalanceReport,
    CpuReport, GroupReport, LatencySummary, RunSummary, TaskReport, SCHEMA as BALANCE_SCHEMA,
};
