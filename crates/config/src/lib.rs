//! rtshield-config: see the README's architecture section.
