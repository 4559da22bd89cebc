//! rtshield-run: the pipeline of every measurement, in one place.
//!
//! Two entry points, each called once by the command line: [`measure`]
//! (`rtshield measure`, `demo`, a campaign cell: a [`MeasureRequest`]) and
//! [`run_config`] (`rtshield run CONFIG`). Each decides the order of the
//! steps and tells a [`Printer`] / [`ConfigPrinter`] what to show.
//!
//! `rtshield-config` turns a systress file into a typed [`rtshield_config::Config`];
//! this crate executes it: starts the timer (measuring) threads, supervises
//! programs and built-in loads, drives load/rest cycles, writes checkpoints,
//! rotates parts, records the timeline and writes the result files.
//! See docs/architecture-run.md.

mod config_run;
pub mod metrics;
mod observer;
pub mod pipeline;
pub mod print;
pub mod request;
pub mod resume;
pub mod runner;
mod segments;
pub mod single;
pub mod store;
mod supervisor;
pub mod timeline;
pub mod tracing;

// The orchestrator reads the parser's typed model.

pub use config_run::{check_warnings, run_config, ConfigRequest};
pub use print::{ConfigPrinter, Printer, Summary};
pub use request::{
    JsonFormat, MeasureRequest, PartitionRequest, Plan, Refusal, Setting, TraceRequest,
};
pub use single::measure;
