//! rtshield-report: see the README's architecture section.
