//! `cyclictest --json=FILE` (rt-tests 2.x).

use super::{arg_value, imported};
use crate::histogram::thread_from_histogram;
use crate::{Histogram, RunResult, ThreadResult};
use rtshield_sys::SysInfo;
use rtshield_vocab::InputError;

/// Read `cyclictest --json` output. `source` names the file in errors.
pub fn read_cyclictest_json(text: &str, source: &str) -> Result<RunResult, InputError> {
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| {
        InputError::at(
            source,
            e.line(),
            e.column(),
            format!("not valid cyclictest JSON: {e}"),
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
    let cmdline = s("cmdline");
    let args: Vec<String> = cmdline
        .as_deref()
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_string)
        .collect();
    let res_ns = match obj.get("resolution_in_ns").and_then(|x| x.as_u64()) {
        Some(1) => 1, // --nsecs: every value is in ns
        _ => 1000,
    };
    let cmd = CyclictestArgs::parse(&args);
    let hist_size = cmd.histogram;
    let period_us = cmd.interval_us;

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
    let mut threads = Vec::new();
    let mut warnings = vec![
        "imported from cyclictest: percentiles, median, mode and std come from the histogram"
            .to_string(),
    ];
    for (idx, key) in keys {
        let (mut th, has_hist) =
            read_thread(&threads_v[key], idx, key, res_ns, &cmd, bad, &mut warnings)?;
        cmd.apply(&mut th, cmdline.is_some());
        if !has_hist {
            th.unknown.push("histogram".into());
        }
        threads.push(th);
    }
    let sysinfo = match obj.get("sysinfo") {
        Some(si) => sysinfo_from_uname(si),
        None => SysInfo::default(),
    };
    let mut r = imported(
        format!(
            "cyclictest {}",
            s("rt_test_version").unwrap_or_else(|| "?".into())
        ),
        s("start_time").unwrap_or_default(),
        args,
        res_ns,
        hist_size,
        period_us,
        sysinfo,
        warnings,
        threads,
    );
    r.settings.memlock = cmd.mlock;
    r.settings.requested_duration_ns = cmd.duration_ns;
    r.settings.requested_samples = cmd.loops;
    if let Some(a) = &cmd.affinity {
        r.tags.insert("affinity".into(), a.clone());
    }
    Ok(r)
}

/// One member of `thread`: exact figures, the histogram when cyclictest
/// kept one (`-h N`: the flag says whether it did), and a warning when it
/// did not.
fn read_thread(
    t: &serde_json::Value,
    idx: u32,
    key: &str,
    res_ns: u64,
    cmd: &CyclictestArgs,
    bad: &dyn Fn(&str) -> InputError,
    warnings: &mut Vec<String>,
) -> Result<(ThreadResult, bool), InputError> {
    let num = |k: &str| {
        t.get(k)
            .and_then(|x| x.as_f64())
            .ok_or_else(|| bad(&format!("thread {key}: missing number `{k}`")))
    };
    let cycles = num("cycles")? as u64;
    let scale = res_ns as f64;
    let min_ns = (num("min")? * scale) as i64;
    let max_ns = (num("max")? * scale) as i64;
    let avg_ns = num("avg")? * scale;
    let cpu = t
        .get("cpu")
        .and_then(|x| x.as_u64())
        .map(|c| c as u32)
        .or(cmd.single_cpu());
    let mut counts = Vec::new();
    let has_hist = t.get("histogram").and_then(|x| x.as_object()).is_some();
    if let Some(h) = t.get("histogram").and_then(|x| x.as_object()) {
        for (b, c) in h {
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
    } else {
        warnings.push(format!(
            "thread {idx}: no histogram in the file (cyclictest ran without -h N): min, avg and max only"
        ));
    }
    counts.sort();
    let in_hist: u64 = counts.iter().map(|c| c[1]).sum();
    let h = if has_hist {
        Histogram {
            resolution_ns: res_ns,
            buckets: cmd
                .histogram
                .unwrap_or_else(|| counts.last().map_or(0, |c| c[0] + 1)),
            counts,
            // The JSON has no overflow member: what the histogram misses is it.
            overflow: cycles.saturating_sub(in_hist),
            underflow: 0,
        }
    } else {
        // Nothing to count in: no bucket, no overflow, no percentile.
        Histogram {
            resolution_ns: res_ns,
            buckets: 0,
            counts: Vec::new(),
            overflow: 0,
            underflow: 0,
        }
    };
    let th = thread_from_histogram(
        idx,
        cpu,
        cmd.interval_us * 1000,
        cycles,
        min_ns,
        max_ns,
        avg_ns,
        h,
    );
    Ok((th, has_hist))
}

/// What a cyclictest command line says about the run (rt-tests 2.x
/// defaults where an option is absent).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CyclictestArgs {
    /// `-p N` / `--priority=N`.
    pub priority: Option<i32>,
    /// `--policy=NAME` (other, normal, batch, idle, fifo, rr).
    pub policy: Option<String>,
    /// `-i N` / `--interval=N`, µs (default 1000).
    pub interval_us: u64,
    /// `-a [CPUSET]` / `--affinity[=CPUSET]`; `all` when given without a set.
    pub affinity: Option<String>,
    /// `-m` / `--mlockall`.
    pub mlock: bool,
    /// `-h N` / `--histogram=N`, or `-H N` / `--histofall=N`.
    pub histogram: Option<u64>,
    /// `-D TIME` / `--duration=TIME` (s, or with an `m`, `h`, `d` suffix), ns.
    pub duration_ns: Option<u64>,
    /// `-l N` / `--loops=N`.
    pub loops: Option<u64>,
}

impl CyclictestArgs {
    /// Read cyclictest's options from its argv (unknown options are ignored; an unparsable value counts as absent).
    pub fn parse(args: &[String]) -> CyclictestArgs {
        let policy = arg_str(args, "--policy", "--policy").map(|p| p.to_ascii_lowercase());
        let affinity = match arg_str(args, "-a", "--affinity") {
            Some(v) => Some(v),
            None if args.iter().any(|a| a == "-a" || a == "--affinity") => Some("all".into()),
            None => None,
        };
        CyclictestArgs {
            priority: arg_value(args, "-p", "--priority").and_then(|p| i32::try_from(p).ok()),
            policy,
            interval_us: arg_value(args, "-i", "--interval").unwrap_or(1000),
            affinity,
            mlock: args.iter().any(|a| a == "-m" || a == "--mlockall"),
            histogram: arg_value(args, "-h", "--histogram").or(arg_value(
                args,
                "-H",
                "--histofall",
            )),
            duration_ns: arg_str(args, "-D", "--duration").and_then(|d| {
                let (n, mult) = match d.char_indices().last()? {
                    (i, 'm') => (&d[..i], 60),
                    (i, 'h') => (&d[..i], 3600),
                    (i, 'd') => (&d[..i], 86_400),
                    (i, 's') => (&d[..i], 1),
                    _ => (d.as_str(), 1),
                };
                n.parse::<u64>()
                    .ok()
                    .and_then(|n| n.checked_mul(mult * 1_000_000_000))
            }),
            loops: arg_value(args, "-l", "--loops").filter(|l| *l > 0),
        }
    }

    /// The CPU of every thread when the affinity is one CPU.
    fn single_cpu(&self) -> Option<u32> {
        self.affinity.as_deref().and_then(|a| a.parse().ok())
    }

    /// Set the thread's policy and priority as cyclictest chose them (a
    /// priority without `--policy` means FIFO; no priority, SCHED_OTHER);
    /// mark what the file does not say. Without a command line, the
    /// policy and priority are unknown too.
    pub fn apply(&self, t: &mut ThreadResult, have_cmdline: bool) {
        let rt = |p: &str| matches!(p, "fifo" | "rr");
        match (&self.policy, self.priority) {
            (Some(p), prio) => {
                t.policy = match p.as_str() {
                    "normal" => "OTHER".into(),
                    other => other.to_ascii_uppercase(),
                };
                t.priority = if rt(p) { prio.unwrap_or(0) } else { 0 };
            }
            (None, Some(p)) if p > 0 => {
                t.policy = "FIFO".into();
                t.priority = p;
            }
            (None, _) => {
                t.policy = "OTHER".into();
                t.priority = 0;
            }
        }
        if !have_cmdline {
            t.unknown
                .extend(["policy".to_string(), "priority".to_string()]);
        }
        // cyclictest counts none of these.
        t.unknown.extend(
            ["tid", "overruns", "missed_periods", "lost"]
                .iter()
                .map(|s| s.to_string()),
        );
    }
}

/// `-a 1-3`, `-a1`, `--affinity=1`, `--affinity 1`: the value, when it is
/// not the next option.
fn arg_str(args: &[String], short: &str, long: &str) -> Option<String> {
    let mut it = args.iter().peekable();
    while let Some(a) = it.next() {
        if a == short || a == long {
            if let Some(v) = it.peek().filter(|v| !v.starts_with('-')) {
                return Some((*v).clone());
            }
        } else if let Some(v) = a.strip_prefix(&format!("{long}=")) {
            return Some(v.to_string());
        } else if short != long
            && a.starts_with(short)
            && !a.starts_with("--")
            && a.len() > short.len()
        {
            return Some(a[short.len()..].trim_start_matches('=').to_string());
        }
    }
    None
}

/// cyclictest's `sysinfo` is uname(2); the preemption model shows in `version`.
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
