//! The measuring mode: shared vocabulary of the measuring engine (which
//! implements it) and the configuration parser (which names it), kept here
//! so the parser does not depend on the engine.

/// How the measuring thread waits for its next period.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Mode {
    /// Absolute `clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME)`; the sample
    /// is wake-up − theoretical wake-up (cyclictest's default).
    #[default]
    Nanosleep,
    /// A periodic `timer_create` timer delivering a signal to this thread
    /// only (SIGEV_THREAD_ID), waited for with `sigwaitinfo` (the torture article).
    PosixTimer,
    /// Like `Nanosleep`, but the sample is the time between two consecutive
    /// wake-ups (the torture article's min/avg/max/max-max view).
    Interval,
    /// Like `PosixTimer` (a periodic timer's signal), but the sample is
    /// the time between two consecutive signals: the torture article's
    /// `fluctuations-timer` method exactly (`--mode interval --timer posix`).
    IntervalPosix,
}

impl Mode {
    /// The name `--mode`, configuration files and result files use
    /// (`posix-timer`); [`Mode::parse`] reads it back.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Nanosleep => "nanosleep",
            Mode::PosixTimer => "posix-timer",
            Mode::Interval => "interval",
            Mode::IntervalPosix => "interval-posix",
        }
    }

    /// The sample is the time between two wake-ups (not a latency).
    /// Read in the hot loop: inlined across crates.
    #[inline]
    pub fn is_interval(self) -> bool {
        matches!(self, Mode::Interval | Mode::IntervalPosix)
    }

    /// The thread waits for a POSIX timer's signal (not `clock_nanosleep`).
    #[inline]
    pub fn uses_timer(self) -> bool {
        matches!(self, Mode::PosixTimer | Mode::IntervalPosix)
    }

    /// A mode by name, case-insensitive, with the older spellings
    /// (`clock_nanosleep`, `posix_timer`, `timer`); `None` for any other.
    pub fn parse(s: &str) -> Option<Mode> {
        Some(match s.trim().to_ascii_lowercase().as_str() {
            "nanosleep" | "clock_nanosleep" => Mode::Nanosleep,
            "posix-timer" | "posix_timer" | "timer" => Mode::PosixTimer,
            "interval" => Mode::Interval,
            "interval-posix" | "interval_posix" => Mode::IntervalPosix,
            _ => return None,
        })
    }
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Mode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Mode::parse(s).ok_or_else(|| {
            format!(
                "unknown mode '{s}' (expected nanosleep, posix-timer, interval or interval-posix)"
            )
        })
    }
}
