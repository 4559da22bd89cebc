//! Durations with units, as written in systress configs and on the command
//! line: `200us`, `1500 ms`, `2 s`, `1 min`, `10 min`, `1 h`, `1 d`.
//! Kept as integer nanoseconds: latencies are never rounded before output.

use std::fmt;

/// A duration that does not parse; its message quotes the input, says what
/// is wrong and lists the units accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid duration '{input}': {reason} (expected a number and a unit: ns, us, ms, s, min, h, d, e.g. 200us or '1 min')")]
pub struct DurationError {
    /// The text as given, untrimmed.
    pub input: String,
    /// What is wrong (`no number`, `unknown unit 'x'`, `too large`).
    pub reason: String,
}

/// Nanoseconds per unit, for every unit name accepted.
pub fn unit_ns(unit: &str) -> Option<u64> {
    Some(match unit {
        "ns" | "nsec" => 1,
        "us" | "µs" | "usec" => 1_000,
        "ms" | "msec" => 1_000_000,
        "s" | "sec" | "secs" => 1_000_000_000,
        "min" | "mins" | "m" => 60_000_000_000,
        "h" | "hour" | "hours" => 3_600_000_000_000,
        "d" | "day" | "days" => 86_400_000_000_000,
        _ => return None,
    })
}

/// Parse a duration to nanoseconds. A bare number takes `default_unit`
/// (`None`: a unit is required).
pub fn parse_duration_ns(s: &str, default_unit: Option<&str>) -> Result<u64, DurationError> {
    let err = |reason: &str| DurationError {
        input: s.to_string(),
        reason: reason.to_string(),
    };
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let unit = unit.trim();
    if num.is_empty() {
        return Err(err("no number"));
    }
    let unit = if unit.is_empty() {
        default_unit.ok_or_else(|| err("missing unit"))?
    } else {
        unit
    };
    let mult = unit_ns(unit).ok_or_else(|| err(&format!("unknown unit '{unit}'")))?;
    let value = if let Some((i, f)) = num.split_once('.') {
        let i: u64 = if i.is_empty() {
            0
        } else {
            i.parse().map_err(|_| err("bad number"))?
        };
        if f.is_empty() || f.contains('.') {
            return Err(err("bad number"));
        }
        let f = &f[..f.len().min(18)];
        let frac: u64 = f.parse().map_err(|_| err("bad number"))?;
        let scale = 10u128.pow(f.len() as u32);
        let whole = (i as u128) * (mult as u128) + (frac as u128) * (mult as u128) / scale;
        u64::try_from(whole).map_err(|_| err("too large"))?
    } else {
        let i: u64 = num.parse().map_err(|_| err("bad number"))?;
        i.checked_mul(mult).ok_or_else(|| err("too large"))?
    };
    Ok(value)
}

/// A parsed duration, for clap arguments (`--period 200us`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Dur(
    /// The length in nanoseconds (exact: no unit is rounded).
    pub u64,
);

impl Dur {
    /// The length in nanoseconds.
    pub fn ns(self) -> u64 {
        self.0
    }
    /// The same length as a `std::time::Duration`, for sleeps and timeouts.
    pub fn as_std(self) -> std::time::Duration {
        std::time::Duration::from_nanos(self.0)
    }
    /// The length in seconds, for rates and display (loses precision past
    /// 2^53 ns, about 104 days).
    pub fn secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
}

impl std::str::FromStr for Dur {
    type Err = DurationError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse_duration_ns(s, None).map(Dur)
    }
}

impl fmt::Display for Dur {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format_duration_ns(self.0))
    }
}

/// The largest unit that divides exactly: `200us`, `1min`, `1500ms`.
pub fn format_duration_ns(ns: u64) -> String {
    if ns == 0 {
        return "0s".into();
    }
    for (unit, m) in [
        ("d", 86_400_000_000_000u64),
        ("h", 3_600_000_000_000),
        ("min", 60_000_000_000),
        ("s", 1_000_000_000),
        ("ms", 1_000_000),
        ("us", 1_000),
    ] {
        // `%`, not `u64::is_multiple_of`: that is Rust 1.87, the MSRV is 1.85.
        #[allow(clippy::manual_is_multiple_of)]
        if ns % m == 0 {
            return format!("{}{unit}", ns / m);
        }
    }
    format!("{ns}ns")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_systress_article_units() {
        assert_eq!(parse_duration_ns("1500 ms", None).unwrap(), 1_500_000_000);
        assert_eq!(parse_duration_ns("2 s", None).unwrap(), 2_000_000_000);
        assert_eq!(parse_duration_ns("1 min", None).unwrap(), 60_000_000_000);
        assert_eq!(parse_duration_ns("20 us", None).unwrap(), 20_000);
        assert_eq!(parse_duration_ns("200us", None).unwrap(), 200_000);
        assert_eq!(parse_duration_ns("1.5ms", None).unwrap(), 1_500_000);
        assert_eq!(
            parse_duration_ns("1d", None).unwrap(),
            86_400 * 1_000_000_000
        );
        assert_eq!(parse_duration_ns("5000", Some("us")).unwrap(), 5_000_000);
    }

    #[test]
    fn refuses_bad_durations() {
        for bad in [
            "",
            "ms",
            "10",
            "10 parsecs",
            "1.2.3s",
            "99999999999999999999d",
        ] {
            assert!(parse_duration_ns(bad, None).is_err(), "{bad}");
        }
    }

    #[test]
    fn formats_with_largest_exact_unit() {
        assert_eq!(format_duration_ns(200_000), "200us");
        assert_eq!(format_duration_ns(60_000_000_000), "1min");
        assert_eq!(format_duration_ns(1_500_000_000), "1500ms");
        assert_eq!(format_duration_ns(1), "1ns");
    }

    proptest::proptest! {
        #[test]
        fn never_panics(s in ".{0,24}") { let _ = parse_duration_ns(&s, Some("us")); }
    }
}
