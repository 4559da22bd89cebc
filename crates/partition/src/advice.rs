//! Boot-parameter advice and warnings about other managers live in
//! `rtshield_isolation` (audit gives them too); re-exported here.

pub use rtshield_isolation::{boot_advice, manager_warnings, BootParam};
