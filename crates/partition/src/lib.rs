//! rtshield-partition: see the README's architecture section.
