//! Scheduling policies by name (`fifo`, `FIFO`, `SCHED_FIFO`). The kernel's
//! numbers for them live in `rtshield_sys::sched`, next to the calls.

/// A scheduling policy as users write it (`fifo`, `FIFO`, `SCHED_FIFO`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Policy {
    Other,
    Fifo,
    Rr,
    Batch,
    Idle,
    Deadline,
}

impl Policy {
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

    pub fn is_rt(self) -> bool {
        matches!(self, Policy::Fifo | Policy::Rr)
    }

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
