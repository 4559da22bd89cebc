//! The state file lives in `rtshield_sys::partstate` (audit reads it too);
//! re-exported here under its old name.

pub use rtshield_sys::partstate::*;
