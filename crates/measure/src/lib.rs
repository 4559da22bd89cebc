//! rtshield-measure: see the README's architecture section.
