//! Boot-parameter advice and warnings about other managers live in
//! `rtshield_sys::advice` (audit gives them too); re-exported here.

pub use rtshield_sys::advice::*;
