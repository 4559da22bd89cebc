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
    // Typed, as it is read: no `serde_json::Value` tree of the file (27 MB
    // of 9000 threads took 485 MB, 200 MB ran past 120 s at 3 GB), the
    // thread count bounded while the threads are read (F19).
    let f: CtFile = serde_json::from_str(text).map_err(|e| {
        InputError::at(
            source,
            e.line(),
            e.column(),
            format!("not valid cyclictest JSON: {}", crate::read::json_error(&e)),
        )
    })?;
    let bad = |what: &str| InputError::new(format!("{source}: cyclictest JSON: {what}"));
    let bad: &dyn Fn(&str) -> InputError = &bad;
    match f.file_version {
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
    // cyclictest 2.x writes these keys with a stray colon.
    let args: Vec<String> = f
        .cmdline
        .or(f.cmdline_c)
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_string)
        .collect();
    let version = f.rt_test_version.or(f.rt_test_version_c);
    let by_rtshield = version
        .as_deref()
        .is_some_and(|v| v.starts_with("rtshield"));
    let res_ns = match f.resolution_in_ns {
        Some(1) => 1, // --nsecs: every value is in ns
        _ => 1000,
    };
    let cmd = RunArgs::parse(&args, by_rtshield);
    let mut threads_v = f.thread.ok_or_else(|| bad("no `thread` object"))?.0;
    // Keys are "0", "1", ...: order numerically, not as strings.
    let mut keyed = Vec::with_capacity(threads_v.len());
    for (k, t) in threads_v.drain(..) {
        let n: u32 = k
            .parse()
            .map_err(|_| bad(&format!("thread key `{k}` is not a number")))?;
        keyed.push((n, k, t));
    }
    keyed.sort_by_key(|t| t.0);
    if let Some(w) = keyed.windows(2).find(|w| w[0].0 == w[1].0) {
        return Err(bad(&format!("thread {} appears twice", w[0].0)));
    }
    let mut warnings = vec![
        "imported from cyclictest JSON: percentiles, median, mode and std come from the histogram; a percentile beyond it is a bound".to_string(),
    ];
    warnings.extend(cmd.note.clone());
    let mut threads = Vec::new();
    for (pos, (idx, key, t)) in keyed.into_iter().enumerate() {
        let mut th = read_thread(t, idx, &key, res_ns, &cmd, bad)?;
        if th.histogram.is_none() {
            warnings.push(format!(
                "thread {idx}: no histogram in the file (cyclictest ran without -h N): min, avg and max only"
            ));
        }
        let a = cmd.thread(pos);
        (th.policy, th.priority, th.period_ns) = (a.policy, a.priority, a.period_ns);
        threads.push(th);
    }
    let sysinfo = f.sysinfo.map(sysinfo_from_uname).unwrap_or_default();
    let (start, end) = (f.start_time.or(f.start_time_c), f.end_time.or(f.end_time_c));
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
    super::in_range(r, source)
}

/// What the reader takes of a cyclictest JSON file; other members are
/// skipped without being kept.
#[derive(serde::Deserialize)]
struct CtFile {
    #[serde(default)]
    file_version: Option<u64>,
    #[serde(default)]
    cmdline: Option<String>,
    #[serde(default, rename = "cmdline:")]
    cmdline_c: Option<String>,
    #[serde(default)]
    rt_test_version: Option<String>,
    #[serde(default, rename = "rt_test_version:")]
    rt_test_version_c: Option<String>,
    #[serde(default)]
    start_time: Option<String>,
    #[serde(default, rename = "start_time:")]
    start_time_c: Option<String>,
    #[serde(default)]
    end_time: Option<String>,
    #[serde(default, rename = "end_time:")]
    end_time_c: Option<String>,
    #[serde(default)]
    resolution_in_ns: Option<u64>,
    #[serde(default)]
    sysinfo: Option<Uname>,
    #[serde(default)]
    thread: Option<Threads>,
}

/// cyclictest's `sysinfo` (uname(2)).
#[derive(serde::Deserialize, Default)]
struct Uname {
    #[serde(default)]
    nodename: Option<String>,
    #[serde(default)]
    release: Option<String>,
    #[serde(default)]
    version: Option<String>,
    #[serde(default)]
    machine: Option<String>,
}

/// One member of `thread`.
#[derive(serde::Deserialize)]
struct CtThread {
    #[serde(default)]
    cycles: Option<f64>,
    #[serde(default)]
    min: Option<f64>,
    #[serde(default)]
    max: Option<f64>,
    #[serde(default)]
    avg: Option<f64>,
    /// -1 (or absent) when the thread was not pinned.
    #[serde(default)]
    cpu: Option<i64>,
    #[serde(default)]
    histogram: Option<Buckets>,
}

/// The `thread` object: (key, thread) as read, at most
/// `RESULT_MAX_THREADS` of them (the file is refused at the next one,
/// before it is read).
struct Threads(Vec<(String, CtThread)>);

impl<'de> serde::Deserialize<'de> for Threads {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Threads;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object of threads")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut m: A,
            ) -> Result<Threads, A::Error> {
                let mut out = Vec::new();
                while let Some(k) = m.next_key::<String>()? {
                    if out.len() == rtshield_limits::RESULT_MAX_THREADS {
                        return Err(serde::de::Error::custom(format!(
                            "more than {} threads, the most a results file may hold (docs/ranges.md)",
                            rtshield_limits::RESULT_MAX_THREADS
                        )));
                    }
                    out.push((k, m.next_value::<CtThread>()?));
                }
                Ok(Threads(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// A thread's `histogram` object (`"BUCKET": COUNT`), read into
/// (bucket, count) pairs as it is parsed; zero counts are not kept.
struct Buckets(Vec<[u64; 2]>);

impl<'de> serde::Deserialize<'de> for Buckets {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Buckets;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object of bucket counts")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut m: A,
            ) -> Result<Buckets, A::Error> {
                use serde::de::Error as _;
                let mut out = Vec::new();
                while let Some(BucketKey(k)) = m.next_key()? {
                    let b = k.map_err(|k| {
                        A::Error::custom(format!("histogram key `{k}` is not a number"))
                    })?;
                    let c: u64 = m.next_value()?;
                    if c > 0 {
                        out.push([b, c]);
                    }
                }
                Ok(Buckets(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// A histogram key, parsed where it lies in the text (no allocation per
/// bucket); what is not a bucket number is kept, cut, for the error.
struct BucketKey(Result<u64, String>);

impl<'de> serde::Deserialize<'de> for BucketKey {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = BucketKey;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a bucket number")
            }
            fn visit_str<E: serde::de::Error>(self, k: &str) -> Result<BucketKey, E> {
                Ok(BucketKey(
                    k.parse().map_err(|_| rtshield_text::excerpt::quote(k)),
                ))
            }
        }
        d.deserialize_str(V)
    }
}

/// One member of `thread`: exact figures, and the histogram when the run
/// kept one (`-h N` on its command line, or a non-empty `histogram`).
fn read_thread(
    t: CtThread,
    idx: u32,
    key: &str,
    res_ns: u64,
    cmd: &RunArgs,
    bad: &dyn Fn(&str) -> InputError,
) -> Result<ThreadResult, InputError> {
    let num = |v: Option<f64>, k: &str| {
        v.ok_or_else(|| bad(&format!("thread {key}: missing number `{k}`")))
    };
    let cycles = num(t.cycles, "cycles")?;
    if !(0.0..=crate::MAX_COUNT as f64).contains(&cycles) {
        return Err(bad(&format!(
            "thread {key}: `cycles` {cycles} is out of range (0 ..= {}, docs/ranges.md)",
            crate::MAX_COUNT
        )));
    }
    let cycles = cycles as u64;
    let scale = res_ns as f64;
    // A thread of 0 cycles has no min/max/avg (rtshield writes null);
    // otherwise each is required. Float to integer casts saturate: no
    // overflow on any number.
    let fig = |v: Option<f64>, k: &str| match (v, cycles) {
        (None, 0) => Ok(None),
        (v, _) => num(v, k).map(|x| Some(x * scale)),
    };
    let min_ns = fig(t.min, "min")?.map(|v| v as i64);
    let max_ns = fig(t.max, "max")?.map(|v| v as i64);
    let avg_ns = fig(t.avg, "avg")?;
    let cpu = t.cpu.and_then(|c| u32::try_from(c).ok()).or(cmd.single_cpu);
    let mut counts = t.histogram.map(|h| h.0).unwrap_or_default();
    counts.sort();
    if let Some(w) = counts.windows(2).find(|w| w[0][0] == w[1][0]) {
        return Err(bad(&format!(
            "thread {key}: histogram bucket {} appears twice",
            w[0][0]
        )));
    }
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
fn sysinfo_from_uname(si: Uname) -> SysInfo {
    let version = si.version.clone().unwrap_or_default();
    let model = ["PREEMPT_RT", "PREEMPT_LAZY", "PREEMPT "]
        .iter()
        .find(|m| version.contains(*m))
        .map(|m| m.trim().to_string());
    SysInfo {
        hostname: si.nodename,
        kernel_release: si.release,
        kernel_version: si.version,
        arch: si.machine.unwrap_or_default(),
        preempt_model: model,
        preempt_dynamic: version.contains("PREEMPT_DYNAMIC"),
        ..Default::default()
    }
}
