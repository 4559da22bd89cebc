//! Load-balancing scenarios (the lollobrigida format of the ARTiS thesis's annex B):
//! the task model and parser shared with `sim`, the real-kernel runner, and
//! the balance report shape both produce.

pub mod busy;
pub mod model;
pub mod parse;
pub mod plan;
pub mod report;
pub mod runner;
pub mod signal;

pub use parse::{parse_file, parse_str};
