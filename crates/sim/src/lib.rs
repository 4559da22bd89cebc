//! rtshield-sim: see the README's architecture section.
