//! The cpuset hierarchy lives in `rtshield_sys::cgroup` (audit and `run`
//! need it too); re-exported here under its old name.

pub use rtshield_sys::cgroup::{Hierarchy, HierarchyError, Kind};
