//! The partition crate's tests, one binary: the whole create/undo cycle
//! on fake trees (`fake_cycle`), the sysctl profiles (`profiles`), the
//! state file's safety (`state_safety`, `state_umask`), undo waiting for
//! dying tasks (`undo_busy`).

mod fake_cycle;
mod profiles;
mod state_safety;
mod state_umask;
mod undo_busy;
