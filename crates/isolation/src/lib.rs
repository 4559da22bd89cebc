//! What isolates which CPU: the one owner of "where are the shielded (rt)
//! and housekeeping (nrt) sets, whose are they (rtshield's, partrt's,
//! cset's), under which parent" ([`Partitions`]), of the machine-wide view
//! (`isolcpus=`, `nohz_full=` too: [`Isolation`]), of the isolation tag a
//! run is stored with ([`Isolation::tag`]), of rtshield's partition state
//! files ([`State`]) and of the advice that goes with a partition
//! ([`boot_advice`], [`manager_warnings`]).
//!
//! Its one job: answer "what isolates this CPU, and whose is it" in one
//! place, so `run`, `campaign`, `audit`, `partition` and the binary ask it
//! and none of them reads cgroup files itself.
//!
//! What it may not do: change the machine. It reads kernel files only
//! through `rtshield-sys` and writes only its state files, through
//! `rtshield-safefs`; making and undoing partitions is
//! `rtshield-partition`'s.

#![deny(missing_docs)]
#![warn(unreachable_pub)]

mod advice;
mod detect;
mod parent;
mod partitions;
mod state;
mod tag;

pub use advice::{boot_advice, manager_warnings, BootParam};
pub use detect::{foreign_partition, ForeignPartition, Found, Isolation};
pub use parent::{parent_dir, parent_syntax_error, RootParent};
pub use partitions::{Owner, Partition, Partitions, Set};
pub use state::{state_path, FileChange, Knob, Phase, State, TaskMove, STATE_DIR, STATE_VERSION};
pub use tag::Placement;
