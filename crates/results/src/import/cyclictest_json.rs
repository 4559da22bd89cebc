//! `cyclictest --json=FILE` (rt-tests 2.x), and the same format as
//! rtshield writes it (`measure --json-format cyclictest`, `export
//! --format cyclictest-json`).

use super::cmdline::{cyclictest_time, RunArgs};
use super::Imported;
use crate::histogram::{thread_from_histogram, thread_without_histogram};
use crate::{Histogram, RunResult, ThreadResult};
use rtshield_sys::SysInfo;
use rtshield_vocab::InputError;

/// Read `cyclictest --json` output. `source` names the file in errors.
///
/// What the file holds is read; what its command line says (cyclictest's
/// options by rt-tests' rules, or rtshield's own when rtshield wrote the
/// file) gives policy, priority, period, mode and the histogram's size;
/// the duration is `end_time − start_time` (whole seconds). Without a
/// histogram (cyclictest without `-h`: `"histogram": {}`) there is no
/// percentile, no `_H` statistic and no overflow count: unknown.
pub fn read_cyclictest_json(text: &str, source: &str) -> Result<RunResult, InputError> {
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| {
        InputError::at(
            source,
            e.line(),
            e.column(),
            format!("not valid cyclictest JSON: {}", crate::read::json_error(&e)),
        )
    })?;
    let bad = |what: &str| InputError::new(format!("{source}: cyclictest JSON: {what}"));
    let bad: &dyn Fn(&str) -> InputError = &bad;
    let obj = v
        .as_object()
        .ok_or_else(|| bad("top level is not an object"))?;
    match obj.get("file_version").and_then(|x| x.as_u64()) {
        Some(1) => {}
        Some(n) => {
            return Err(bad(&format!(
                "unknown file_version {n} (this reader knows 1)"
            )))
        }
        None => {
            return Err(bad(
                "no `file_version` member: is this cyclictest --json output?",
            ))
        }
    }
    // cyclictest 2.x writes these two keys with a stray colon.
    let s = |k: &str| {
        obj.get(k)
            .or_else(|| obj.get(&format!("{k}:")))
            .and_then(|x| x.as_str())
            .map(str::to_string)
    };
    let args: Vec<String> = s("cmdline")
        .as_deref()
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_string)
        .collect();
    let version = s("rt_test_version");
    let by_rtshield = version
        .as_deref()
        .is_some_and(|v| v.starts_with("rtshield"));
    let res_ns = match obj.get("resolution_in_ns").and_then(|x| x.as_u64()) {
        Some(1) => 1, // --nsecs: every value is in ns
        _ => 1000,
    };
    let cmd = RunArgs::parse(&args, by_rtshield);
    let threads_v = obj
        .get("thread")
        .and_then(|x| x.as_object())
        .ok_or_else(|| bad("no `thread` object"))?;
    // Keys are "0", "1", ...: order numerically, not as strings.
    let mut keys: Vec<(u32, &String)> = Vec::new();
    for k in threads_v.keys() {
        let n = k
            .parse()
            .map_err(|_| bad(&format!("thread key `{k}` is not a number")))?;
        keys.push((n, k));
    }
    keys.sort();
    let mut warnings = vec![
        "imported from cyclictest JSON: percentiles, median, mode and std come from the histogram; a percentile beyond it is a bound".to_string(),
    ];
    warnings.extend(cmd.note.clone());
    let mut threads = Vec::new();
    for (pos, (idx, key)) in keys.into_iter().enumerate() {
        let mut th = read_thread(&threads_v[key], idx, key, res_ns, &cmd, bad)?;
        if th.histogram.is_none() {
            warnings.push(format!(
                "thread {idx}: no histogram in the file (cyclictest ran without -h N): min, avg and max only"
            ));
        }
        let a = cmd.thread(pos);
        (th.policy, th.priority, th.period_ns) = (a.policy, a.priority, a.period_ns);
        threads.push(th);
    }
    let sysinfo = match obj.get("sysinfo") {
        Some(si) => sysinfo_from_uname(si),
        None => SysInfo::default(),
    };
    let (start, end) = (s("start_time"), s("end_time"));
    let duration_s = match (
        start.as_deref().and_then(cyclictest_time),
        end.as_deref().and_then(cyclictest_time),
    ) {
        (Some(a), Some(b)) if b >= a => Some((b - a) as f64),
        _ => None,
    };
    let mut r = Imported {
        tool: match &version {
            Some(v) if by_rtshield => v.clone(),
            Some(v) => format!("cyclictest {v}"),
            None => "cyclictest".into(),
        },
        started_at: start,
        duration_s,
        command: args,
        res_ns,
        buckets: threads
            .iter()
            .find_map(|t| t.histogram.as_ref().map(|h| h.buckets)),
        mode: cmd.mode.clone(),
        sysinfo,
        warnings,
        kind: if by_rtshield {
            "rtshield-cyclictest-json"
        } else {
            "cyclictest"
        },
    }
    .into_result(threads);
    r.settings.memlock = cmd.memlock;
    r.settings.requested_duration_ns = cmd.duration_ns;
    r.settings.requested_samples = cmd.loops;
    if let Some(a) = &cmd.affinity {
        r.tags.insert("affinity".into(), a.clone());
    }
    Ok(r)
}

/// One member of `thread`: exact figures, and the histogram when the run
/// kept one (`-h N` on its command line, or a non-empty `histogram`).
fn read_thread(
    t: &serde_json::Value,
    idx: u32,
    key: &str,
    res_ns: u64,
    cmd: &RunArgs,
    bad: &dyn Fn(&str) -> InputError,
) -> Result<ThreadResult, InputError> {
    let num = |k: &str| {
        t.get(k)
            .and_then(|x| x.as_f64())
            .ok_or_else(|| bad(&format!("thread {key}: missing number `{k}`")))
    };
    let cycles = num("cycles")?;
    if !(0.0..=crate::MAX_COUNT as f64).contains(&cycles) {
        return Err(bad(&format!(
            "thread {key}: `cycles` {cycles} is out of range (0 ..= {}, docs/ranges.md)",
            crate::MAX_COUNT
        )));
    }
    let cycles = cycles as u64;
    let scale = res_ns as f64;
    let min_ns = (num("min")? * scale) as i64;
    let max_ns = (num("max")? * scale) as i64;
    let avg_ns = num("avg")? * scale;
    let cpu = t
        .get("cpu")
        .and_then(|x| x.as_u64())
        .map(|c| c as u32)
        .or(cmd.single_cpu);
    let mut counts = Vec::new();
    let members = t.get("histogram").and_then(|x| x.as_object());
    for (b, c) in members.into_iter().flatten() {
        let b: u64 = b.parse().map_err(|_| {
            bad(&format!(
                "thread {key}: histogram key `{b}` is not a number"
            ))
        })?;
        let c = c.as_u64().ok_or_else(|| {
            bad(&format!(
                "thread {key}: histogram count for {b} is not a number"
            ))
        })?;
        if c > 0 {
            counts.push([b, c]);
        }
    }
    counts.sort();
    // cyclictest writes `"histogram": {}` without -h: an empty object is
    // no histogram unless the command line asked for one.
    let has_hist = match cmd.has_histogram {
        Some(h) => h || !counts.is_empty(),
        None => !counts.is_empty(),
    };
    if !has_hist {
        return Ok(thread_without_histogram(
            idx,
            cpu,
            Some(cycles),
            min_ns,
            max_ns,
            avg_ns,
        ));
    }
    let range = |m: String| bad(&format!("thread {key}: {m} (docs/ranges.md)"));
    let in_hist = crate::ranges::sum_counts(counts.iter().map(|c| c[1]))
        .ok_or_else(|| range(format!("more than {} samples", crate::MAX_COUNT)))?;
    let last = counts.last().map_or(0, |c| c[0].saturating_add(1));
    let h = Histogram {
        resolution_ns: res_ns,
        // The size the command line gave (never less than the keys
        // seen), else just past the largest key: overflow samples are at
        // least there.
        buckets: cmd.histogram_buckets.map_or(last, |b| b.max(last)),
        counts,
        // The JSON has no overflow member: what the histogram misses is it.
        overflow: cycles.saturating_sub(in_hist),
        underflow: 0,
    };
    crate::ranges::check_histogram("histogram", &h).map_err(range)?;
    Ok(thread_from_histogram(
        idx, cpu, None, cycles, min_ns, max_ns, avg_ns, h,
    ))
}

/// cyclictest's `sysinfo` is uname(2). `version` shows the preemption
/// model the kernel was built with (`PREEMPT_RT`, `PREEMPT`, …);
/// `PREEMPT_DYNAMIC` says the model can be switched at boot, not which
/// one ran: the mode in force stays unknown.
fn sysinfo_from_uname(si: &serde_json::Value) -> SysInfo {
    let s = |k: &str| si.get(k).and_then(|x| x.as_str()).map(str::to_string);
    let version = s("version").unwrap_or_default();
    let model = ["PREEMPT_RT", "PREEMPT_LAZY", "PREEMPT "]
        .iter()
        .find(|m| version.contains(*m))
        .map(|m| m.trim().to_string());
    SysInfo {
        hostname: s("nodename"),
        kernel_release: s("release"),
        kernel_version: s("version"),
        arch: s("machine").unwrap_or_default(),
        preempt_model: model,
        preempt_dynamic: version.contains("PREEMPT_DYNAMIC"),
        ..Default::default()
    }
}
