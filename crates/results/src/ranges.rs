//! The ranges every number of a result must lie in (docs/ranges.md,
//! "Result files"), checked once when a result is read — `results.json`,
//! a stored run, a checkpoint, an import — so that no renderer, export or
//! merge can overflow on a hostile file (round-2 finding B1): a value out
//! of range is an input error (exit 2) naming the file and the field.
//!
//! The bounds are far beyond any real run and small enough that every sum
//! and product the renderers take fits: a count is at most [`MAX_COUNT`]
//! (8192 threads × 10^15 < 2^64), a histogram has at most
//! [`MAX_BUCKETS`] buckets of at most [`MAX_RESOLUTION_NS`] (its edges fit
//! an `i64`, and a format that lists every bucket stays bounded), a period
//! at most [`MAX_SPAN_NS`], a duration at most [`MAX_DURATION_S`].

use crate::{Histogram, NoiseResult, RunResult, ThreadResult};

/// Largest count of samples (or events) one thread, one histogram or one
/// bucket may hold: 10^15, 31 years at a sample every microsecond.
pub const MAX_COUNT: u64 = 1_000_000_000_000_000;
/// Widest histogram bucket: 1 s.
pub const MAX_RESOLUTION_NS: u64 = 1_000_000_000;
/// Most buckets a histogram may have: those of the largest histogram
/// `measure` makes (10 million, `rtshield_limits::MAX_BUCKETS`, plus the
/// bucket of the histogram size itself). With [`MAX_RESOLUTION_NS`], a
/// histogram covers at most 10^16 ns, far below `i64::MAX`.
pub const MAX_BUCKETS: u64 = rtshield_limits::MAX_BUCKETS + 1;
/// Largest latency a histogram may cover (`buckets × resolution_ns`), and
/// largest period: 10^18 ns, 31 years.
pub const MAX_SPAN_NS: u64 = 1_000_000_000_000_000_000;
/// Longest run: 10^9 s, 31 years.
pub const MAX_DURATION_S: f64 = 1e9;

/// Sum of counts, or `None` past [`MAX_COUNT`] (never wraps).
pub fn sum_counts(it: impl IntoIterator<Item = u64>) -> Option<u64> {
    let mut acc: u64 = 0;
    for c in it {
        acc = acc.checked_add(c).filter(|a| *a <= MAX_COUNT)?;
    }
    Some(acc)
}

/// A latency (or any signed time a thread reports, ns): within
/// ±[`MAX_SPAN_NS`] (31 years; adversary round 5, F10: 9·10^18 ns was
/// read and shown as it was).
pub fn check_latency(field: &str, v: i64) -> Result<(), String> {
    if v.unsigned_abs() > MAX_SPAN_NS {
        return Err(format!(
            "{field} = {v} is out of range (a latency is at most {MAX_SPAN_NS} ns either way)"
        ));
    }
    Ok(())
}

/// A mean latency: a finite number within ±[`MAX_SPAN_NS`].
pub fn check_mean(field: &str, v: f64) -> Result<(), String> {
    if !v.is_finite() || v.abs() > MAX_SPAN_NS as f64 {
        return Err(format!(
            "{field} = {v} is out of range (a finite number of at most {MAX_SPAN_NS} ns either way)"
        ));
    }
    Ok(())
}

/// A count (samples, events, overruns ...): at most [`MAX_COUNT`].
pub fn check_count(field: &str, v: u64) -> Result<(), String> {
    count(field, v)
}

fn count(field: &str, v: u64) -> Result<(), String> {
    if v > MAX_COUNT {
        return Err(format!(
            "{field} = {v} is out of range (a count is at most {MAX_COUNT})"
        ));
    }
    Ok(())
}

fn opt_count(field: &str, v: Option<u64>) -> Result<(), String> {
    v.map_or(Ok(()), |v| count(field, v))
}

/// A histogram's ranges: resolution 1 ns ..= 1 s, at most
/// [`MAX_BUCKETS`] buckets and every bucket number below it, every count and the total (underflow, buckets, overflow) at most
/// [`MAX_COUNT`].
pub fn check_histogram(field: &str, h: &Histogram) -> Result<(), String> {
    if !(1..=MAX_RESOLUTION_NS).contains(&h.resolution_ns) {
        return Err(format!(
            "{field}.resolution_ns = {} is out of range (1 ..= {MAX_RESOLUTION_NS} ns)",
            h.resolution_ns
        ));
    }
    if h.buckets > MAX_BUCKETS {
        return Err(format!(
            "{field}.buckets = {} is out of range (at most {MAX_BUCKETS}, as `measure` makes)",
            h.buckets
        ));
    }
    for (i, [b, c]) in h.counts.iter().enumerate() {
        // A bucket past `buckets` is read as before (a split part may
        // hold one), within the same bound.
        if *b >= MAX_BUCKETS {
            return Err(format!(
                "{field}.counts[{i}]: bucket {b} is out of range (below {MAX_BUCKETS})"
            ));
        }
        count(&format!("{field}.counts[{i}]"), *c)?;
    }
    let all = h
        .counts
        .iter()
        .map(|c| c[1])
        .chain([h.overflow, h.underflow]);
    if sum_counts(all).is_none() {
        return Err(format!(
            "{field}: underflow + counts + overflow is more than {MAX_COUNT} samples"
        ));
    }
    Ok(())
}

fn check_thread(field: &str, t: &ThreadResult) -> Result<(), String> {
    opt_count(&format!("{field}.samples"), t.samples)?;
    opt_count(&format!("{field}.overruns"), t.overruns)?;
    opt_count(&format!("{field}.missed_periods"), t.missed_periods)?;
    opt_count(&format!("{field}.lost"), t.lost)?;
    if let Some(p) = t.period_ns.filter(|p| *p > MAX_SPAN_NS) {
        return Err(format!(
            "{field}.period_ns = {p} is out of range (at most {MAX_SPAN_NS} ns)"
        ));
    }
    // Null (unknown: a thread that measured nothing) is in range.
    if let Some(a) = t.avg_ns {
        if !a.is_finite() {
            return Err(format!("{field}.avg_ns is not a finite number"));
        }
        check_mean(&format!("{field}.avg_ns"), a)?;
    }
    if let Some(m) = t.min_ns {
        check_latency(&format!("{field}.min_ns"), m)?;
    }
    if let Some(m) = t.max_ns {
        check_latency(&format!("{field}.max_ns"), m)?;
    }
    if let Some(c) = t.cur_ns {
        check_latency(&format!("{field}.cur_ns"), c)?;
    }
    for (k, v) in &t.percentiles {
        check_latency(&format!("{field}.percentiles.{k}"), *v)?;
    }
    for (k, b) in &t.percentile_bounds {
        check_latency(&format!("{field}.percentile_bounds.{k}"), b.at_least_ns)?;
    }
    if let Some(h) = &t.histogram {
        check_histogram(&format!("{field}.histogram"), h)?;
    }
    if let Some(hs) = &t.hist_stats {
        count(&format!("{field}.hist_stats.samples"), hs.samples)?;
    }
    if let Some(c) = &t.corrected {
        count(&format!("{field}.corrected.samples"), c.samples)?;
    }
    if let Some(s) = &t.split {
        count(&format!("{field}.split.samples"), s.samples)?;
        check_histogram(&format!("{field}.split.irq.histogram"), &s.irq.histogram)?;
        check_histogram(
            &format!("{field}.split.thread.histogram"),
            &s.thread.histogram,
        )?;
    }
    for (i, [_, c]) in t.le_counts.iter().flatten().enumerate() {
        count(&format!("{field}.le_counts[{i}]"), *c)?;
    }
    Ok(())
}

/// Every range of a result (see the module's documentation). The error
/// names the field (`threads[0].histogram.resolution_ns = …`); the caller
/// adds the file.
pub fn check_result(r: &RunResult) -> Result<(), String> {
    // The one thread bound of every reader (results.json, cyclictest
    // JSON and `-h` text, a stored run): a run that gets here with more
    // is refused wherever it came from (adversary round 5, F19: the
    // cyclictest readers skipped it and `runs import` stored a run
    // `runs show` then refused).
    if r.threads.len() > rtshield_limits::RESULT_MAX_THREADS {
        return Err(too_many_threads(r.threads.len()));
    }
    if let Some(d) = r.duration_s {
        if !(0.0..=MAX_DURATION_S).contains(&d) {
            return Err(format!(
                "duration_s = {d} is out of range (0 ..= {MAX_DURATION_S} s)"
            ));
        }
    }
    let s = &r.settings;
    if s.resolution_ns > MAX_RESOLUTION_NS {
        return Err(format!(
            "settings.resolution_ns = {} is out of range (at most {MAX_RESOLUTION_NS} ns)",
            s.resolution_ns
        ));
    }
    for (name, v) in [
        ("stats_period_ns", s.stats_period_ns),
        ("requested_duration_ns", s.requested_duration_ns),
    ] {
        if let Some(v) = v.filter(|v| *v > MAX_SPAN_NS) {
            return Err(format!(
                "settings.{name} = {v} is out of range (at most {MAX_SPAN_NS} ns)"
            ));
        }
    }
    opt_count("settings.requested_samples", s.requested_samples)?;
    if let Some(b) = s.histo_buckets.filter(|b| *b > MAX_BUCKETS) {
        return Err(format!(
            "settings.histo_buckets = {b} is out of range (at most {MAX_BUCKETS})"
        ));
    }
    for (i, t) in r.threads.iter().enumerate() {
        check_thread(&format!("threads[{i}]"), t)?;
    }
    if let Some(t) = &r.trace {
        count("trace.spikes_seen", t.spikes_seen)?;
        count("trace.spikes_not_analysed", t.spikes_not_analysed)?;
    }
    if let Some(n) = &r.noise {
        check_noise(n)?;
    }
    Ok(())
}

/// The refusal of a file of `n` threads (more than
/// `RESULT_MAX_THREADS`): the same words from every reader.
pub(crate) fn too_many_threads(n: usize) -> String {
    format!(
        "{n} threads, more than the {} a results file may hold",
        rtshield_limits::RESULT_MAX_THREADS
    )
}

fn span(field: &str, v: u64) -> Result<(), String> {
    if v > MAX_SPAN_NS {
        return Err(format!(
            "{field} = {v} is out of range (at most {MAX_SPAN_NS} ns)"
        ));
    }
    Ok(())
}

fn share(field: &str, v: Option<f64>, max: f64) -> Result<(), String> {
    match v {
        Some(x) if !(0.0..=max).contains(&x) => {
            Err(format!("{field} = {x} is out of range (0 ..= {max})"))
        }
        _ => Ok(()),
    }
}

/// A noise run's ranges (`rtshield noise`): durations at most
/// [`MAX_SPAN_NS`], counts at most [`MAX_COUNT`], at most
/// `RESULT_MAX_THREADS` CPUs, `available_pct` 0 ..= 100.
fn check_noise(n: &NoiseResult) -> Result<(), String> {
    if n.cpus.len() > rtshield_limits::RESULT_MAX_THREADS {
        return Err(format!(
            "noise.cpus: {} CPUs is out of range (at most {})",
            n.cpus.len(),
            rtshield_limits::RESULT_MAX_THREADS
        ));
    }
    span("noise.threshold_ns", n.threshold_ns)?;
    span("noise.runtime_ns", n.runtime_ns)?;
    span("noise.period_ns", n.period_ns)?;
    if let Some(t) = &n.trace {
        count("noise.trace.lost_events", t.lost_events)?;
        count("noise.trace.lost_notes_uncounted", t.lost_notes_uncounted)?;
        count("noise.trace.bad_lines", t.bad_lines)?;
    }
    for (i, c) in n.cpus.iter().enumerate() {
        let f = |name: &str| format!("noise.cpus[{i}].{name}");
        for (name, v) in [
            ("runtime_ns", Some(c.runtime_ns)),
            ("noise_ns", Some(c.noise_ns)),
            ("max_single_ns", c.max_single_ns),
            ("min_gap_ns", c.min_gap_ns),
            ("steal_ns", c.steal_ns),
            ("unexplained_ns", c.unexplained_ns),
            ("lost_ns", c.lost_ns),
        ] {
            v.map_or(Ok(()), |v| span(&f(name), v))?;
        }
        for (name, v) in [
            ("events", c.events),
            ("lost", c.lost),
            ("iterations", c.iterations),
            ("windows", c.windows),
            ("windows_missed", c.windows_missed),
        ] {
            count(&f(name), v)?;
        }
        share(&f("available_pct"), c.available_pct, 100.0)?;
        share(&f("iterations_per_us"), c.iterations_per_us, 1e12)?;
        for (k, v) in c.classes.iter().flatten() {
            count(&f(&format!("classes.{k}")), *v)?;
        }
        for v in c.by_class.iter().flat_map(|m| m.values()) {
            count(&f("by_class"), *v)?;
        }
        for v in c.class_ns.iter().flat_map(|m| m.values()) {
            span(&f("class_ns"), *v)?;
        }
        for (j, o) in c.offenders.iter().flatten().enumerate() {
            let g = f(&format!("offenders[{j}]"));
            span(&format!("{g}.ns"), o.total.ns)?;
            span(&format!("{g}.max_ns"), o.total.max_ns)?;
            count(&format!("{g}.runs"), o.total.runs)?;
            count(&format!("{g}.gaps"), o.total.gaps)?;
        }
        for (j, e) in c.longest.iter().enumerate() {
            span(&f(&format!("longest[{j}].len_ns")), e.event.len_ns)?;
        }
        if let Some(h) = &c.tail {
            check_histogram(&f("tail"), h)?;
        }
    }
    Ok(())
}
