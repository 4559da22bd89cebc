//! What rtshield's tests share: fake kernel trees ([`FakeSpec`]: the tree
//! builder with the kernel paths it writes, [`snapshot_tree`] and
//! [`diff_trees`] to compare them, and [`fake_kernel`], the cgroup
//! emulation of `rtshield-fake-kernel`), the preconditions of live tests
//! ([`require`], [`require_root`], [`PrivateParent`], [`TracefsMount`]),
//! the environment a test owns ([`rtshield()`] and [`isolate`]: commands
//! with a private home and no store; [`register`]: every kernel object a
//! test makes is registered, and undone by [`reap`] even after the test
//! process is killed), the allocation probe of the no-allocation tests
//! ([`AllocProbe`]), and the checks every CLI and library test repeats (exit
//! status, refusals, input errors, files).
//!
//! Its one job: hold what more than one test binary needs, once, so no
//! test copies a helper. What it may not do: ship. It is a dev-dependency
//! only: no shipped crate depends on it (the layering test checks), so the
//! release binary holds none of it. Besides `rtshield-sys`, it is the one
//! crate that names kernel files (to build fake trees).

#![deny(missing_docs)]
#![warn(unreachable_pub)]

mod alloc;
mod check;
mod cmd;
mod fake;
mod live;
mod reaper;
mod testenv;

pub use alloc::{count_allocations, AllocProbe};
pub use check::{alive, all_text, describe, file_text, input_error, json, ok, put, refused, text};
pub use cmd::{isolate, private_home, rtshield, wrapped, HOME_VARS};
pub use fake::{
    diff as diff_trees, snapshot as snapshot_tree, FakeSpec, FakeTask, Style as FakeStyle,
};
pub use live::{
    has_cpus_0_and_1, instance_exists, instance_records, online_cpus, require_cpus_0_and_1,
    require_cpuset_v1_two_cpus, with_instances, PrivateParent, TracefsMount, CPUSET_MOUNT,
};
pub use reaper::{
    is_mount_point, reap, reap_once, register, registered_by, Object as KernelObject, Registration,
};
pub use rtshield_fake_kernel::{kernel as fake_kernel, FakeConfig, MARKER as FAKE_MARKER};
pub use testenv::{python3, require, require_root, require_tool};
