//! What isolates which CPU: the one owner of "where are the shielded (rt)
//! and housekeeping (nrt) sets, whose are they (rtshield's, partrt's,
//! cset's), under which parent" ([`Partitions`]), of the machine-wide view
//! (`isolcpus=`, `nohz_full=` too: [`Isolation`]), of the isolation tag a
//! run is stored with ([`Isolation::tag`]), of rtshield's partition state
//! files ([`State`]) and of the advice that goes with a partition
//! ([`boot_advice`], [`manager_warnings`]).
//!
//! It reads kernel files only through `rtshield-sys` and writes only its
//! state files, through `rtshield-safefs`. `run`, `campaign`, `audit` and
//! the binary ask it; none of them reads cgroup files itself.

#![deny(missing_docs)]

mod advice;
mod detect;
mod partitions;
mod state;
mod tag;

pub use advice::{boot_advice, manager_warnings, BootParam};
pub use detect::{foreign_partition, ForeignPartition, Found, Isolation};
pub use partitions::{Owner, Partition, Partitions, Set};
pub use state::{
    legacy_state_path, state_path, FileChange, Knob, Phase, State, TaskMove, STATE_DIR,
    STATE_LIMIT, STATE_VERSION,
};
pub use tag::Placement;
