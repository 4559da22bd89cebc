//! The ranges of every `rtshield noise` value (docs/ranges.md), checked
//! before anything starts; an error names the option.

use crate::NoiseSpec;
use rtshield_vocab::format_duration_ns as fmt;
use rtshield_vocab::InputError;
use std::ops::RangeInclusive;

/// `--threshold` default: 1 µs, as oslat's smallest bucket.
pub(crate) const DEFAULT_THRESHOLD_NS: u64 = 1_000;
/// `--threshold` range: above the loop's own cost (a clock read is
/// 20..60 ns), up to 1 s.
pub(crate) const THRESHOLD_NS: RangeInclusive<u64> = 100..=1_000_000_000;
/// `--duration` range: 10 ms .. 365 days.
pub(crate) const DURATION_NS: RangeInclusive<u64> = 10_000_000..=365 * 86_400_000_000_000;
/// `--period` default (and `--runtime` default without `--prio`).
pub const DEFAULT_PERIOD_NS: u64 = 1_000_000_000;
/// `--period` and `--runtime` range: 1 ms .. 1 h.
pub(crate) const WINDOW_NS: RangeInclusive<u64> = 1_000_000..=3_600_000_000_000;
/// With `--prio`, the thread spins at most this share of each period
/// (the kernel's default RT throttling leaves 5 % too), and at most
/// [`MAX_RT_RUNTIME_NS`] at a time.
pub const MAX_RT_SHARE_PCT: u64 = 95;
/// With `--prio`, the longest window: a real-time busy loop gives the CPU
/// back at least every 10 s.
pub(crate) const MAX_RT_RUNTIME_NS: u64 = 10_000_000_000;
/// `--prio` range (SCHED_FIFO).
pub(crate) const PRIORITY: RangeInclusive<i32> = 1..=99;
/// `--trace-buffer-kb` default (per CPU; the trace is read every 20 ms).
pub(crate) const DEFAULT_TRACE_BUFFER_KB: u32 = 2048;
/// The 1 µs linear histogram covers noise up to 10 ms (10 001 buckets).
pub(crate) const DEFAULT_HISTO_SIZE_NS: u64 = 10_000_000;

fn within<T: PartialOrd + Copy>(
    opt: &str,
    v: T,
    r: &RangeInclusive<T>,
    show: impl Fn(T) -> String,
) -> Result<(), InputError> {
    if r.contains(&v) {
        Ok(())
    } else {
        Err(InputError::new(format!(
            "{opt} {}: must be within {}..{}",
            show(v),
            show(*r.start()),
            show(*r.end())
        )))
    }
}

/// Check `s` against the ranges above.
pub(crate) fn check(s: &NoiseSpec) -> Result<(), InputError> {
    if s.cpus.is_empty() {
        return Err(InputError::new("--cpus: no CPU to measure"));
    }
    within("--threshold", s.threshold_ns, &THRESHOLD_NS, fmt)?;
    if let Some(d) = s.duration_ns {
        within("--duration", d, &DURATION_NS, fmt)?;
    }
    within("--period", s.period_ns, &WINDOW_NS, fmt)?;
    within("--runtime", s.runtime_ns, &WINDOW_NS, fmt)?;
    if s.runtime_ns > s.period_ns {
        return Err(InputError::new(format!(
            "--runtime {} is longer than --period {}",
            fmt(s.runtime_ns),
            fmt(s.period_ns)
        )));
    }
    if let Some(p) = s.priority {
        within("--prio", p, &PRIORITY, |v| v.to_string())?;
        // Integer arithmetic: runtime/period <= 95 %.
        if u128::from(s.runtime_ns) * 100 > u128::from(s.period_ns) * u128::from(MAX_RT_SHARE_PCT) {
            return Err(InputError::new(format!(
                "--runtime {} of --period {}: with --prio the spinning thread (SCHED_FIFO) may use at most {MAX_RT_SHARE_PCT} % of each period",
                fmt(s.runtime_ns),
                fmt(s.period_ns)
            )));
        }
        if s.runtime_ns > MAX_RT_RUNTIME_NS {
            return Err(InputError::new(format!(
                "--runtime {}: with --prio at most {} at a time",
                fmt(s.runtime_ns),
                fmt(MAX_RT_RUNTIME_NS)
            )));
        }
    }
    within(
        "--trace-buffer-kb",
        s.trace_buffer_kb,
        &rtshield_sys::TRACE_BUFFER_KB_RANGE,
        |v| v.to_string(),
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtshield_vocab::CpuSet;

    fn spec() -> NoiseSpec {
        NoiseSpec::new(CpuSet::single(1))
    }

    fn refused(f: impl Fn(&mut NoiseSpec)) -> String {
        let mut s = spec();
        f(&mut s);
        check(&s).unwrap_err().to_string()
    }

    #[test]
    fn defaults_pass_and_each_bound_is_named() {
        assert!(check(&spec()).is_ok());
        let mut rt = spec();
        rt.priority = Some(50);
        // The binary's `--runtime` default with `--prio`: 90 % of the 1 s period.
        rt.runtime_ns = 900_000_000;
        assert!(check(&rt).is_ok());
        assert!(refused(|s| s.cpus = CpuSet::new()).starts_with("--cpus"));
        assert_eq!(
            refused(|s| s.threshold_ns = 99),
            "--threshold 99ns: must be within 100ns..1s"
        );
        assert!(refused(|s| s.duration_ns = Some(1_000)).starts_with("--duration 1us"));
        assert!(refused(|s| s.runtime_ns = 0).starts_with("--runtime 0s"));
        assert!(refused(|s| s.period_ns = 7_200_000_000_000).starts_with("--period 2h"));
        assert_eq!(
            refused(|s| s.runtime_ns = 2_000_000_000),
            "--runtime 2s is longer than --period 1s"
        );
        assert!(refused(|s| s.priority = Some(0)).starts_with("--prio 0"));
        assert!(refused(|s| s.priority = Some(100)).starts_with("--prio 100"));
        assert!(refused(|s| s.trace_buffer_kb = 0).starts_with("--trace-buffer-kb 0"));
    }

    #[test]
    fn a_real_time_spinner_always_sleeps() {
        // Without --prio, no pause is fine; with it, at most 95 % and 10 s.
        let msg = refused(|s| s.priority = Some(10));
        assert!(msg.contains("at most 95 %"), "{msg}");
        let ok = |runtime, period| {
            let mut s = spec();
            s.priority = Some(10);
            s.runtime_ns = runtime;
            s.period_ns = period;
            check(&s).is_ok()
        };
        assert!(ok(950_000_000, 1_000_000_000));
        assert!(!ok(950_000_001, 1_000_000_000));
        assert!(ok(9_500_000_000, 10_000_000_000));
        assert!(!ok(11_000_000_000, 20_000_000_000));
    }
}
