//! rtshield-config: the systress configuration format of the systress
//! article, and only it. Its one job is to turn a configuration file into a
//! checked, typed [`Config`] (every value range-checked through
//! `rtshield-limits`, every error an [`InputError`] naming FILE:LINE:COL),
//! to document its keys ([`KEYS`]) and to print the effective settings
//! ([`render_effective`]).
//!
//! It may not run anything, start threads or programs, or touch the
//! kernel: `rtshield-run` executes a [`Config`]. Campaign files are
//! `rtshield-campaign`'s.
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
//! Inside: `syntax` splits the file into stanzas (with positions), `model`
//! checks every value and builds a [`Config`] (`check` and `stanzas` hold
//! the per-key checks), `keys` documents every key, `render` prints the
//! effective settings.

#![deny(missing_docs)]
#![warn(unreachable_pub)]

mod check;
mod keys;
mod model;
mod render;
mod stanzas;
mod syntax;

pub use crate::keys::{markdown_table, KeyDoc, Section, KEYS};
pub use crate::model::{
    parse, Action, Config, CpuLoadShow, Cycle, Format, Machine, Main, Mode, Partition, Program,
    Sched, Timer, Trace, RESERVED_FILES,
};
pub use crate::render::effective as render_effective;

use rtshield_sys::Root;
use rtshield_text::excerpt::{withhold, Quote};
use rtshield_vocab::InputError;
use std::path::Path;

impl Machine {
    /// The online CPUs of the machine behind `root`.
    pub fn from_root(root: &Root, fold_cpus: bool) -> std::io::Result<Machine> {
        let online = rtshield_sys::online_cpus(root)?;
        Ok(Machine { online, fold_cpus })
    }
}

/// Read and check a configuration file (as [`load_trusted`] with
/// [`InputTrust::Accept`](rtshield_safefs::InputTrust), its warning dropped).
pub fn load(path: &Path, machine: &Machine) -> anyhow::Result<Config> {
    Ok(load_trusted(path, machine, rtshield_safefs::InputTrust::Accept)?.0)
}

/// Read and check a configuration file. It names the programs, loads and
/// output paths root runs and writes, so as root it is a trusted input
/// (`rtshield_safefs::read_trusted_input`, adversary round 5 (A), F01):
/// one another user could change is refused under
/// [`InputTrust::Refuse`](rtshield_safefs::InputTrust), else read with the
/// warning returned.
pub fn load_trusted(
    path: &Path,
    machine: &Machine,
    trust: rtshield_safefs::InputTrust,
) -> anyhow::Result<(Config, Option<String>)> {
    let name = path.display().to_string();
    // A regular file only, bounded: a FIFO or device is refused without blocking.
    let input = rtshield_safefs::read_trusted_input(
        path,
        rtshield_safefs::INPUT_LIMIT,
        trust,
        "its programs, loads and output paths",
    )
    .map_err(|e| InputError::new(e.to_string()))?;
    let text = rtshield_text::decode_utf8(input.bytes)
        .map_err(|e| InputError::at(&name, e.line, e.col, e))?;
    // An error quotes the file only if every user may read it.
    let quote = if input.public {
        Quote::Allowed
    } else {
        Quote::Withheld
    };
    let cfg = model::parse(&name, &text, machine)
        .map_err(|e| InputError::new(withhold(&e.0, &name, quote)))?;
    Ok((cfg, input.warning))
}
