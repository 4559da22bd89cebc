//! What rtshield's tests share: fake kernel trees ([`fake`]: the tree
//! builder with the kernel paths it writes, and the cgroup emulation of
//! `rtshield-fake-kernel`), the preconditions of live tests ([`testenv`],
//! [`live`]), the environment a test owns ([`cmd`]: commands with a
//! private home and no store; [`reaper`]: every kernel object a test
//! makes is registered, and undone even after the test process is
//! killed), and the checks every CLI and library test repeats (exit
//! status, refusals, input errors, files).
//!
//! A dev-dependency only: no shipped crate depends on it (the layering
//! test checks), so the release binary holds none of it. Besides
//! `rtshield-sys`, it is the one crate that names kernel files.

#![deny(missing_docs)]

pub mod cmd;
pub mod fake;
pub mod live;
pub mod reaper;
pub mod testenv;

mod check;

pub use check::{all_text, describe, input_error, json, ok, put, refused, text};
