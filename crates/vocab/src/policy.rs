//! Scheduling policies by name (`fifo`, `FIFO`, `SCHED_FIFO`). The kernel's
//! numbers for them live in `rtshield_sys::sched`, next to the calls.

/// A scheduling policy as users write it (`fifo`, `FIFO`, `SCHED_FIFO`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Policy {
    /// `SCHED_OTHER` (also written `normal`): the fair time-sharing class.
    Other,
    /// `SCHED_FIFO`: real-time, runs until it blocks or a higher priority
    /// wakes.
    Fifo,
    /// `SCHED_RR`: real-time like `Fifo`, with a time slice among equals.
    Rr,
    /// `SCHED_BATCH`: fair class, treated as CPU-bound (no wake-up boost).
    Batch,
    /// `SCHED_IDLE`: runs only when nothing else wants the CPU.
    Idle,
    /// `SCHED_DEADLINE`: named so it can be reported; rtshield never sets it.
    Deadline,
}

impl Policy {
    /// A policy by name, case-insensitive, with or without the `sched_`
    /// prefix; `None` for any other name.
    pub fn parse(s: &str) -> Option<Policy> {
        let s = s.trim().to_ascii_lowercase();
        let s = s.strip_prefix("sched_").unwrap_or(&s);
        Some(match s {
            "other" | "normal" => Policy::Other,
            "fifo" => Policy::Fifo,
            "rr" => Policy::Rr,
            "batch" => Policy::Batch,
            "idle" => Policy::Idle,
            "deadline" => Policy::Deadline,
            _ => return None,
        })
    }

    /// Whether it is a real-time policy (`Fifo`, `Rr`), the ones that take a
    /// priority 1..99.
    pub fn is_rt(self) -> bool {
        matches!(self, Policy::Fifo | Policy::Rr)
    }

    /// The lower-case name rtshield writes (`fifo`), which [`Policy::parse`]
    /// and serde read back.
    pub fn name(self) -> &'static str {
        match self {
            Policy::Other => "other",
            Policy::Fifo => "fifo",
            Policy::Rr => "rr",
            Policy::Batch => "batch",
            Policy::Idle => "idle",
            Policy::Deadline => "deadline",
        }
    }
}

impl std::fmt::Display for Policy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Policy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Policy::parse(s).ok_or_else(|| {
            format!("unknown policy '{s}' (expected fifo, rr, other, batch or idle)")
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policy_names() {
        assert_eq!(Policy::parse("SCHED_FIFO"), Some(Policy::Fifo));
        assert_eq!(Policy::parse("rr"), Some(Policy::Rr));
        assert_eq!(Policy::parse("OTHER"), Some(Policy::Other));
        assert_eq!(Policy::parse("edf"), None);
        assert_eq!("normal".parse::<Policy>(), Ok(Policy::Other));
        assert!(Policy::Fifo.is_rt() && !Policy::Batch.is_rt());
    }
}
