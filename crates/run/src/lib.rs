//! rtshield-run: the pipeline of every measurement, in one place. Its one
//! job is to carry a validated request down to the engine and back: two
//! entry points, each called once by the command line, [`measure`]
//! (`rtshield measure`, `demo`, a campaign cell: a [`MeasureRequest`]) and
//! [`run_config`] (`rtshield run CONFIG`: a [`ConfigRequest`]). Each decides
//! the order of the steps (partition, output directory, tags, header,
//! measurement, result files, store, summary) and tells a [`Printer`] /
//! [`ConfigPrinter`] what to show; the caller only prints.
//!
//! For a configuration it starts the timer (measuring) threads through
//! `rtshield-measure`, supervises programs and built-in loads
//! (`rtshield-load`), drives load/rest cycles, writes checkpoints, rotates
//! parts, records the timeline and writes the result files
//! (`rtshield-results`) into a directory of the safe-file layer.
//!
//! It may not parse command lines (clap stays in the binary), read cgroup
//! files itself (partitions are `rtshield-isolation`'s answers), know a
//! file format (`rtshield-results`) or render a report (`rtshield-report`).
//! See docs/architecture.md for how a measure walks down.

#![deny(missing_docs)]
#![warn(unreachable_pub)]

mod config_run;
mod metrics;
mod observer;
mod pipeline;
mod print;
mod request;
mod resume;
mod runner;
mod segments;
mod single;
mod store;
mod supervisor;
#[cfg(test)]
mod tests;
mod timeline;
mod tracing;

pub use crate::config_run::{check_warnings, run_config, ConfigRequest};
pub use crate::pipeline::{refusal, Missing, EXIT_FILES_MISSING};
pub use crate::print::{ConfigPrinter, Printer, Summary};
pub use crate::request::{
    JsonFormat, MeasureRequest, PartitionRequest, Plan, Refusal, Setting, TraceRequest,
};
pub use crate::runner::RunOutcome;
pub use crate::single::measure;
pub use crate::store::{parse_tag, store_runs};
pub use crate::tracing::remove_leftovers as remove_trace_leftovers;
