//! One file per subcommand: argument definitions and printing only.

pub mod audit;
pub mod campaign;
pub mod demo;
pub mod load_worker;
pub mod measure;
pub mod partition;
pub mod report;
pub mod run;
pub mod runs;
pub mod scenario;
pub mod simulate;
pub mod stat;
pub mod sysinfo;
