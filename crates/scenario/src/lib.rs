//! Load-balancing scenarios (the lollobrigida format of seed 004 annex B):
//! the task model and parser shared with `sim`, the real-kernel runner, and
//! the balance report shape both produce.

pub mod model;
pub mod report;
