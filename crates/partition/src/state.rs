//! The state file lives in `rtshield_isolation` (audit and the isolation
//! tag read it too); re-exported here under its old name.

pub use rtshield_isolation::{
    legacy_state_path, state_path, FileChange, Knob, Phase, State, TaskMove, STATE_DIR,
    STATE_LIMIT, STATE_VERSION,
};
