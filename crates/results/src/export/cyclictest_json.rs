//! `cyclictest.json`: the JSON `cyclictest --json=FILE` (rt-tests 2.x)
//! writes, key for key, so tools written for cyclictest read rtshield's
//! runs unchanged (Linaro test-definitions' `parse_rt_tests_results.py`
//! used by LAVA reads `num_threads`, `thread.N.{min,avg,max}` and
//! `return_code`).
//!
//! rt-tests writes `cmdline:` and `rt_test_version:` with a stray colon in
//! the key; so does this file, since parsers were written against it. The
//! version is a number as rt-tests prints it (`%1.2f`): that of the rt-tests
//! release whose layout the file follows ([`RT_TESTS_FORMAT_VERSION`]);
//! rtshield's own name is in `cmdline:`. Values are in µs
//! (`resolution_in_ns` 0), or in ns when the run's resolution is 1 ns
//! (`resolution_in_ns` 1, as `cyclictest --nsecs`). `return_code` comes
//! from the run's verdict ([`crate::Verdict`]).

use super::Exporter;
use crate::{effective_verdict, Limits, RunResult, ThreadResult};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The file name when written beside the other result files.
pub const CYCLICTEST_JSON_FILE: &str = "cyclictest.json";

/// The `rt_test_version:` value: the rt-tests release (cyclictest 2.40,
/// Debian 12's) whose `--json` layout this file follows, key for key. A
/// number, as `rt_write_json` prints it, since readers parse it as one.
pub(crate) const RT_TESTS_FORMAT_VERSION: &str = "2.40";

/// The cyclictest-json exporter; `limits` are given at export time and
/// replace the recorded ones of the same kind (`export --max-latency`).
#[derive(Debug, Clone, Copy, Default)]
pub struct CyclictestJson {
    /// Export-time limits.
    pub limits: Limits,
}

impl Exporter for CyclictestJson {
    fn name(&self) -> &'static str {
        "cyclictest-json"
    }
    fn files(&self, res: &RunResult) -> Vec<(String, String)> {
        vec![(
            CYCLICTEST_JSON_FILE.into(),
            to_cyclictest_json(res, &self.limits),
        )]
    }
}

fn q(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

/// The unit of the file's values, in ns: 1 for ns runs, else 1000 (µs).
fn unit_ns(res: &RunResult) -> u64 {
    if res.settings.resolution_ns == 1 {
        1
    } else {
        1000
    }
}

/// The histogram in file units: bucket value → count, non-zero only (as
/// cyclictest), merging buckets when the run's resolution is finer. Only
/// the buckets below the histogram size: cyclictest's `-h N` keeps
/// `0..N-1` and counts a sample of N or more as an overflow (`cycles`
/// minus the histogram's total), so rtshield's last bucket (N) is left out.
fn histogram(t: &ThreadResult, unit: u64) -> BTreeMap<u64, u64> {
    let mut h = BTreeMap::new();
    // No histogram: `{}`, as cyclictest without -h writes it.
    if let Some(th) = &t.histogram {
        let n = th.buckets.saturating_sub(1);
        for &[i, c] in th.counts.iter().filter(|b| b[0] < n) {
            let e = h
                .entry(i.saturating_mul(th.resolution_ns) / unit)
                .or_insert(0);
            *e = u64::saturating_add(*e, c);
        }
    }
    h
}

/// [`crate::EXIT_LIMIT_EXCEEDED`] (what `measure --max-latency`
/// exits with) when the run failed its limits (`extra` given at export
/// time replace the recorded ones of the same kind), else `1` when a
/// thread measured nothing (cyclictest's status for a run that could not
/// measure; a thread whose sample count is unknown but has figures did
/// measure), else `0`: cyclictest's `return_code` is its exit status.
pub(crate) fn return_code(res: &RunResult, extra: &Limits) -> i32 {
    if effective_verdict(res, *extra).is_some_and(|v| !v.passed) {
        crate::EXIT_LIMIT_EXCEEDED
    } else if !res.threads.is_empty() && res.threads.iter().all(|t| t.samples != Some(0)) {
        0
    } else {
        1
    }
}

/// The file's text; `extra`: limits given at export time.
pub fn to_cyclictest_json(res: &RunResult, extra: &Limits) -> String {
    let unit = unit_ns(res);
    let si = &res.sysinfo;
    let (start, end) = times(res.started_at.as_deref(), res.duration_s);
    let rt = si.preempt_model.as_deref() == Some("PREEMPT_RT")
        || si
            .kernel_version
            .as_deref()
            .is_some_and(|v| v.contains("PREEMPT_RT"));
    let opt = |o: &Option<String>| q(o.as_deref().unwrap_or(""));
    let mut s = String::from("{\n");
    let _ = writeln!(s, "  \"file_version\": 1,");
    let _ = writeln!(s, "  \"cmdline:\": {},", q(&res.command.join(" ")));
    let _ = writeln!(s, "  \"rt_test_version:\": \"{RT_TESTS_FORMAT_VERSION}\",");
    let _ = writeln!(s, "  \"start_time\": {},", q(&start));
    let _ = writeln!(s, "  \"end_time\": {},", q(&end));
    let _ = writeln!(s, "  \"return_code\": {},", return_code(res, extra));
    s.push_str("  \"sysinfo\": {\n");
    let _ = writeln!(s, "    \"sysname\": \"Linux\",");
    let _ = writeln!(s, "    \"nodename\": {},", opt(&si.hostname));
    let _ = writeln!(s, "    \"release\": {},", opt(&si.kernel_release));
    let _ = writeln!(s, "    \"version\": {},", opt(&si.kernel_version));
    let _ = writeln!(s, "    \"machine\": {},", q(&si.arch));
    let _ = writeln!(s, "    \"realtime\": {}", u8::from(rt));
    s.push_str("  },\n");
    let _ = writeln!(s, "  \"num_threads\": {},", res.threads.len());
    let _ = writeln!(s, "  \"resolution_in_ns\": {},", u8::from(unit == 1));
    s.push_str("  \"thread\": {\n");
    for (n, t) in res.threads.iter().enumerate() {
        let _ = writeln!(s, "    \"{n}\": {{");
        s.push_str("      \"histogram\": {");
        let h = histogram(t, unit);
        let body: Vec<String> = h.iter().map(|(b, c)| format!("\"{b}\": {c}")).collect();
        s.push_str(&body.join(", "));
        s.push_str("},\n");
        // A source without a sample count (a fluctuation log): null.
        let cycles = t.samples.map_or("null".into(), |n| n.to_string());
        let _ = writeln!(s, "      \"cycles\": {cycles},");
        // A thread that measured nothing: null (cyclictest would print
        // its initial values, not figures).
        let fig =
            |v: Option<i64>| v.map_or("null".into(), |v| v.div_euclid(unit as i64).to_string());
        let _ = writeln!(s, "      \"min\": {},", fig(t.min_ns));
        let _ = writeln!(s, "      \"max\": {},", fig(t.max_ns));
        let avg = t
            .avg_ns
            .map_or("null".into(), |a| format!("{:.2}", a / unit as f64));
        let _ = writeln!(s, "      \"avg\": {avg},");
        // An unpinned thread: -1, as rt-tests prints an unknown CPU.
        let _ = writeln!(s, "      \"cpu\": {},", t.cpu.map_or(-1, i64::from));
        // rtshield does not bind memory to a NUMA node: cyclictest's 0.
        let _ = writeln!(s, "      \"node\": 0");
        let comma = if n + 1 < res.threads.len() { "," } else { "" };
        let _ = writeln!(s, "    }}{comma}");
    }
    s.push_str("  }\n}\n");
    s
}

/// cyclictest's time stamps (`strftime("%a, %d %b %Y %T %z")`, UTC) of
/// the start and of start + duration (rounded to the second); the text as
/// it is when `started` is not RFC 3339; empty when unknown (and the end
/// too when the duration is).
fn times(started: Option<&str>, duration_s: Option<f64>) -> (String, String) {
    let started = started.unwrap_or_default();
    match (parse_rfc3339(started), duration_s) {
        (Some(t), Some(d)) => (
            format_2822(t),
            format_2822(t.saturating_add(d.max(0.0).round() as i64)),
        ),
        (Some(t), None) => (format_2822(t), String::new()),
        (None, _) => (started.to_string(), started.to_string()),
    }
}

/// Seconds since the epoch of `YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)`.
pub(crate) fn parse_rfc3339(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || (b[10] != b'T' && b[10] != b' ') {
        return None;
    }
    let n = |r: std::ops::Range<usize>| s.get(r)?.parse::<i64>().ok();
    let (y, mo, d) = (n(0..4)?, n(5..7)?, n(8..10)?);
    let (h, mi, sec) = (n(11..13)?, n(14..16)?, n(17..19)?);
    let mut rest = &s[19..];
    if let Some(r) = rest.strip_prefix('.') {
        rest = r.trim_start_matches(|c: char| c.is_ascii_digit());
    }
    let off = match rest {
        "Z" | "z" => 0,
        r if r.len() == 6 && (r.starts_with('+') || r.starts_with('-')) => {
            let v = r[1..3].parse::<i64>().ok()? * 3600 + r[4..6].parse::<i64>().ok()? * 60;
            if r.starts_with('-') {
                -v
            } else {
                v
            }
        }
        _ => return None,
    };
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || sec > 60 {
        return None;
    }
    Some(days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec - off)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

pub(crate) fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719468;
    let era = z.div_euclid(146097);
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

fn format_2822(t: i64) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let days = t.div_euclid(86400);
    let secs = t.rem_euclid(86400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{}, {:02} {} {} {:02}:{:02}:{:02} +0000",
        DAYS[days.rem_euclid(7) as usize],
        d,
        MONTHS[(m - 1) as usize],
        y,
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_stamps_as_cyclictest() {
        let t = parse_rfc3339("2026-11-22T05:49:01Z").unwrap();
        assert_eq!(format_2822(t), "Sun, 22 Nov 2026 05:49:01 +0000");
        assert_eq!(format_2822(0), "Thu, 01 Jan 1970 00:00:00 +0000");
        assert_eq!(
            parse_rfc3339("2026-11-22T06:49:01.5+01:00"),
            Some(t),
            "offsets and fractions"
        );
        assert_eq!(parse_rfc3339("yesterday"), None);
        let (a, b) = times(Some("2024-02-29T23:59:30Z"), Some(45.0));
        assert_eq!(a, "Thu, 29 Feb 2024 23:59:30 +0000");
        assert_eq!(b, "Fri, 01 Mar 2024 00:00:15 +0000");
    }
}
