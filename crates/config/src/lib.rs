//! rtshield-config: the systress configuration format of the systress article.
//!
//! ```text
//! main
//! {
//!   cpu_affinity 0-6         # main thread on cores 0 to 6
//!   stats.period 1500 ms
//! }
//! timer_thread[0]
//! {
//!   sched.policy FIFO
//!   sched.priority 99
//!   cpu_affinity 7
//!   lifetime.duration 1 min
//!   stats.histo_size 20 us
//! }
//! program[0]
//! {
//!   cmdline sh -c "find / -type d -print0 | tar --null -cvzf - -T -"
//!   output.out /dev/null
//!   termination.ko RESPAWN
//! }
//! ```
//!
//! [`syntax`] splits the file into stanzas (with positions), [`model`]
//! checks every value and builds a [`Config`]; every error is an
//! [`InputError`] `FILE:LINE:COL: message (expected ...)`. [`keys::KEYS`]
//! documents every key. [`render`] prints the effective settings.

mod check;
pub mod keys;
pub mod model;
pub mod render;
mod stanzas;
pub mod syntax;

pub use model::{
    Action, Config, CpuLoadShow, Cycle, Format, Machine, Main, Mode, Partition, Program, Sched,
    Timer,
};

use rtshield_sys::Root;
use rtshield_vocab::InputError;
use std::path::Path;

impl Machine {
    /// The online CPUs of the machine behind `root`.
    pub fn from_root(root: &Root, fold_cpus: bool) -> std::io::Result<Machine> {
        let online = rtshield_sys::online_cpus(root)?;
        Ok(Machine { online, fold_cpus })
    }
}

/// Read and check a configuration file.
pub fn load(path: &Path, machine: &Machine) -> anyhow::Result<Config> {
    let name = path.display().to_string();
    // A regular file only, bounded: a FIFO or device is refused without blocking.
    let bytes = rtshield_safefs::read_input(path, rtshield_safefs::INPUT_LIMIT)
        .map_err(|e| InputError::new(e.to_string()))?;
    let text =
        rtshield_text::decode_utf8(bytes).map_err(|e| InputError::at(&name, e.line, e.col, e))?;
    Ok(model::parse(&name, &text, machine)?)
}
