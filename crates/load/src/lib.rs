//! rtshield-load: see the README's architecture section.
