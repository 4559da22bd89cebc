//! rtshield-audit: see the README's architecture section.
