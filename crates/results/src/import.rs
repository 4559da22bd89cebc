//! Readers for files other tools wrote (cyclictest `--json` and `-h`
//! histogram text), turned into [`crate::RunResult`] so `report` can put
//! rtshield and cyclictest runs on one graph.
//!
//! cyclictest gives less than rtshield measures: no percentiles beyond the
//! histogram, no overrun count, often no CPU number. What it does not give
//! is derived from the histogram (percentiles, median, mode, std) or left
//! at zero, and a warning on the run says so.

use crate::{
    Corrected, HistStats, Histogram, RunResult, Settings, ThreadResult, PERCENTILES, SCHEMA,
};
use rtshield_sys::{InputError, SysInfo};
use std::collections::BTreeMap;

/// What a result file looks like, from its first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// rtshield's `results.json` (has a `schema` member).
    Rtshield,
    /// `cyclictest --json=FILE`.
    CyclictestJson,
    /// `cyclictest -h N` standard output (two or more columns of counts),
    /// or rtshield's own `histogram.txt` (the same layout).
    CyclictestHist,
    /// The systress article's `timer_threadNN.txt`: a two-column histogram
    /// and a `#` SUMMARY block (as systress and rtshield write it).
    SystressTxt,
    /// The torture article's fluctuation log: `[t] Min.= …, Moy.= …,
    /// Max.= …,  Max.Max.= …` every 5 s.
    FluctuationLog,
}

/// Guess the format of `text`: JSON objects with `schema` are rtshield's,
/// other JSON objects cyclictest's, anything else histogram text.
pub fn sniff(text: &str) -> Format {
    let t = text.trim_start();
    if let Some(body) = t.strip_prefix('{') {
        // Cheap look without a full parse: a truncated file must still be
        // routed to the reader that reports it well. Both tools write their
        // marker first (`schema`, `file_version`); a hand-edited file may
        // not, so fall back to looking for rtshield's marker anywhere.
        let first_key = body
            .trim_start()
            .strip_prefix('"')
            .and_then(|k| k.split('"').next());
        match first_key {
            Some("schema") => Format::Rtshield,
            Some("file_version") => Format::CyclictestJson,
            _ if t.contains("\"schema\"") => Format::Rtshield,
            _ => Format::CyclictestJson,
        }
    } else if t.lines().any(is_summary_header) {
        Format::SystressTxt
    } else if t.lines().any(|l| parse_fluct_line(l).is_some()) {
        Format::FluctuationLog
    } else {
        Format::CyclictestHist
    }
}

/// `# Index    TID  Samples  L_min … Samples_H …`.
fn is_summary_header(l: &str) -> bool {
    l.strip_prefix('#')
        .map(str::trim_start)
        .is_some_and(|r| r.starts_with("Index") && r.contains("Samples_H"))
}

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
        let t = &threads_v[key];
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
                buckets: hist_size.unwrap_or_else(|| counts.last().map_or(0, |c| c[0] + 1)),
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
        let mut th = thread_from_histogram(
            idx,
            cpu,
            period_us * 1000,
            cycles,
            min_ns,
            max_ns,
            avg_ns,
            h,
        );
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

/// Read the text cyclictest prints with `-h N` (`-q` recommended): lines of
/// `BUCKET COUNT COUNT…`, then `# Total:`, `# Min Latencies:` … one column
/// per thread. Other lines (status lines without `-q`) are ignored.
pub fn read_cyclictest_hist(text: &str, source: &str) -> Result<RunResult, InputError> {
    let mut rows: Vec<(u64, Vec<u64>)> = Vec::new();
    let mut summary: BTreeMap<&str, Vec<u64>> = BTreeMap::new();
    let mut ncols: Option<usize> = None;
    for (ln, line) in text.lines().enumerate() {
        let lno = ln + 1;
        let t = line.trim();
        if let Some(rest) = t.strip_prefix('#') {
            let rest = rest.trim();
            for key in [
                "Total",
                "Min Latencies",
                "Avg Latencies",
                "Max Latencies",
                "Histogram Overflows",
            ] {
                if let Some(v) = rest.strip_prefix(key).and_then(|r| r.strip_prefix(':')) {
                    let mut vals = Vec::new();
                    for w in v.split_whitespace() {
                        let n = w.parse().map_err(|_| {
                            InputError::at(
                                source,
                                lno,
                                col_of(line, w),
                                format!("`{w}` is not a count in `# {key}:`"),
                            )
                        })?;
                        vals.push(n);
                    }
                    summary.insert(key, vals);
                }
            }
            continue;
        }
        if !t.starts_with(|c: char| c.is_ascii_digit()) {
            continue; // blank line or a status line
        }
        let mut words = t.split_whitespace();
        let first = words.next().unwrap_or_default();
        let bucket: u64 = first.parse().map_err(|_| {
            InputError::at(
                source,
                lno,
                col_of(line, first),
                format!("`{first}` is not a bucket number"),
            )
        })?;
        let mut counts = Vec::new();
        for w in words {
            counts.push(w.parse().map_err(|_| {
                InputError::at(
                    source,
                    lno,
                    col_of(line, w),
                    format!("`{w}` is not a sample count"),
                )
            })?);
        }
        match ncols {
            None if counts.is_empty() => {
                return Err(InputError::at(
                    source,
                    lno,
                    line.len() + 1,
                    "expected `BUCKET COUNT…`",
                ));
            }
            None => ncols = Some(counts.len()),
            Some(n) if n != counts.len() => {
                return Err(InputError::at(
                    source,
                    lno,
                    line.len() + 1,
                    format!(
                        "{} counts on this line, {n} on the first histogram line (truncated file?)",
                        counts.len()
                    ),
                ));
            }
            _ => {}
        }
        rows.push((bucket, counts));
    }
    let n = ncols.ok_or_else(|| {
        InputError::new(format!(
            "{source}: no histogram lines (`BUCKET COUNT…`): not cyclictest -h output"
        ))
    })?;
    let col = |key: &str, i: usize| summary.get(key).and_then(|v| v.get(i)).copied();
    // `-H` (histofall) adds a last column summing every thread, and a last
    // value to `# Total:`, `# Max Latencies:` and `# Histogram Overflows:`
    // (not to Min/Avg): that column is not a thread.
    let threads_n = match summary.get("Min Latencies").map(Vec::len) {
        Some(m) if m + 1 == n && n > 2 => m,
        _ => n,
    };
    let max_len = summary.get("Max Latencies").map(Vec::len);
    if max_len != Some(n) && max_len != Some(threads_n) {
        return Err(InputError::new(format!(
            "{source}: no `# Max Latencies:` line with {n} values after the histogram (truncated file?)"
        )));
    }
    // rtshield's own histogram.txt: its provenance says what it is, the
    // resolution its numbers are in, and each thread's counters.
    let prov = Provenance::parse(text);
    let res = prov.resolution_ns.unwrap_or(1000);
    let mut threads = Vec::new();
    for i in 0..threads_n {
        let counts: Vec<[u64; 2]> = rows
            .iter()
            .filter(|r| r.1[i] > 0)
            .map(|r| [r.0, r.1[i]])
            .collect();
        let in_hist: u64 = counts.iter().map(|c| c[1]).sum();
        let tl = prov.threads.get(i);
        let overflow = col("Histogram Overflows", i).unwrap_or(0);
        let h = Histogram {
            resolution_ns: res,
            buckets: rows.last().map_or(0, |r| r.0 + 1),
            counts,
            overflow,
            underflow: tl.and_then(|t| t.underflow).unwrap_or(0),
        };
        let samples = in_hist + overflow + h.underflow;
        let hs = hist_stats(&h);
        let avg_ns = col("Avg Latencies", i).map_or(hs.avg_ns, |a| (a * res) as f64);
        let min_ns = col("Min Latencies", i).map_or(0, |m| (m * res) as i64);
        let max_ns = (col("Max Latencies", i).unwrap_or(0) * res) as i64;
        let mut t = thread_from_histogram(i as u32, None, 0, samples, min_ns, max_ns, avg_ns, h);
        match tl {
            Some(l) => l.apply(&mut t),
            None => t.unknown.extend(
                [
                    "policy",
                    "priority",
                    "tid",
                    "overruns",
                    "missed_periods",
                    "lost",
                ]
                .iter()
                .map(|s| s.to_string()),
            ),
        }
        threads.push(t);
    }
    let buckets = rows.last().map(|r| r.0 + 1);
    let (tool, tag, warning) = match &prov.tool {
        Some(t) => (
            t.clone(),
            "rtshield-histogram",
            "read from rtshield's histogram.txt: min/avg/max in whole resolution units; percentiles, median, mode and std from the histogram",
        ),
        None => (
            "cyclictest".to_string(),
            "cyclictest",
            "imported from cyclictest histogram text: no CPU, period or system information",
        ),
    };
    let mut r = imported(
        tool,
        prov.started.clone().unwrap_or_default(),
        prov.command.clone(),
        res,
        buckets,
        0,
        prov.sysinfo.clone(),
        vec![warning.into()],
        threads,
    );
    r.tags.insert("imported".into(), tag.into());
    if let Some(m) = &prov.mode {
        r.settings.mode = m.clone();
    }
    Ok(r)
}

/// What rtshield writes as `#` comments above its text files (see
/// `export::provenance` and the per-thread line): enough to read the
/// numbers right and to say where they come from.
#[derive(Debug, Clone, Default)]
struct Provenance {
    /// `rtshield 0.1.0` when the file is rtshield's.
    tool: Option<String>,
    started: Option<String>,
    command: Vec<String>,
    sysinfo: SysInfo,
    mode: Option<String>,
    resolution_ns: Option<u64>,
    /// `# thread N: …` lines, in order.
    threads: Vec<ThreadLine>,
    /// `# percentiles (us): p50=3 …` in resolution units.
    percentiles: BTreeMap<String, u64>,
}

/// `# thread 0: tid 4242 cpu 1 policy FIFO priority 98 period 200000 ns;
/// overflow 1 underflow 0 overruns 0 missed_periods 0 lost 0`.
#[derive(Debug, Clone, Default)]
struct ThreadLine {
    tid: Option<i32>,
    cpu: Option<u32>,
    policy: Option<String>,
    priority: Option<i32>,
    period_ns: Option<u64>,
    underflow: Option<u64>,
    overruns: Option<u64>,
    missed: Option<u64>,
    lost: Option<u64>,
}

impl ThreadLine {
    fn parse(rest: &str) -> ThreadLine {
        let words: Vec<&str> = rest
            .split_whitespace()
            .map(|w| w.trim_end_matches([';', ',']))
            .collect();
        let get = |k: &str| {
            words
                .iter()
                .position(|w| *w == k)
                .and_then(|i| words.get(i + 1))
                .copied()
        };
        let num = |k: &str| get(k).and_then(|v| v.parse::<u64>().ok());
        ThreadLine {
            tid: get("tid").and_then(|v| v.parse().ok()),
            cpu: get("cpu").and_then(|v| v.parse().ok()),
            policy: get("policy").map(str::to_string),
            priority: get("priority").and_then(|v| v.parse().ok()),
            period_ns: num("period"),
            underflow: num("underflow"),
            overruns: num("overruns"),
            missed: num("missed_periods"),
            lost: num("lost"),
        }
    }

    /// Fill `t` with what the line says; what it lacks is unknown.
    fn apply(&self, t: &mut ThreadResult) {
        let mut unknown = |f: &str, known: bool| {
            if !known {
                t.unknown.push(f.to_string());
            }
        };
        unknown("tid", self.tid.is_some());
        unknown("policy", self.policy.is_some());
        unknown("priority", self.priority.is_some());
        unknown("overruns", self.overruns.is_some());
        unknown("missed_periods", self.missed.is_some());
        unknown("lost", self.lost.is_some());
        t.tid = self.tid.unwrap_or(0);
        t.cpu = self.cpu.or(t.cpu);
        if let Some(p) = &self.policy {
            t.policy = p.clone();
        }
        t.priority = self.priority.unwrap_or(0);
        t.period_ns = self.period_ns.unwrap_or(t.period_ns);
        t.overruns = self.overruns.unwrap_or(0);
        t.missed_periods = self.missed.unwrap_or(0);
        t.lost = self.lost.unwrap_or(0);
    }
}

impl Provenance {
    fn parse(text: &str) -> Provenance {
        let mut p = Provenance::default();
        for line in text.lines().filter(|l| l.starts_with('#')) {
            let l = line[1..].trim();
            if let Some(rest) = l.strip_prefix("rtshield ") {
                // `rtshield 0.1.0 (rtshield.results/1), started T, 1.0 s, ended by X`
                if rest.contains("(rtshield.results/") && p.tool.is_none() {
                    let version = rest.split_whitespace().next().unwrap_or("?");
                    p.tool = Some(format!("rtshield {version}"));
                    p.started = rest
                        .split(", started ")
                        .nth(1)
                        .and_then(|r| r.split(',').next())
                        .map(str::to_string);
                }
            } else if let Some(c) = l.strip_prefix("command:") {
                p.command = c.split_whitespace().map(str::to_string).collect();
            } else if let Some(k) = l.strip_prefix("kernel:") {
                let mut w = k.split_whitespace();
                p.sysinfo.kernel_release = w.next().filter(|v| *v != "?").map(str::to_string);
                p.sysinfo.arch = w.next().unwrap_or_default().to_string();
                for kv in w {
                    if let Some(v) = kv.strip_prefix("preempt=").filter(|v| *v != "?") {
                        p.sysinfo.preempt_mode = Some(v.to_string());
                    }
                }
            } else if let Some(c) = l.strip_prefix("cmdline:") {
                p.sysinfo.cmdline = Some(c.trim().to_string());
            } else if let Some(st) = l.strip_prefix("settings:") {
                for kv in st.split_whitespace() {
                    if let Some(m) = kv.strip_prefix("mode=") {
                        p.mode = Some(m.to_string());
                    } else if let Some(r) = kv.strip_prefix("resolution=") {
                        p.resolution_ns = r.trim_end_matches("ns").parse().ok().filter(|r| *r > 0);
                    }
                }
            } else if let Some(rest) = l.strip_prefix("thread ") {
                if rest.contains("tid ") {
                    p.threads.push(ThreadLine::parse(rest));
                }
            } else if let Some(rest) = l.strip_prefix("percentiles") {
                for kv in rest.split_whitespace() {
                    if let Some((k, v)) = kv.strip_prefix('p').and_then(|x| x.split_once('=')) {
                        if let Ok(v) = v.parse() {
                            p.percentiles.insert(k.to_string(), v);
                        }
                    }
                }
            }
        }
        p
    }
}

/// Read the systress article's `timer_threadNN.txt` (as systress and
/// rtshield write it): `INDEX COUNT` lines for every bucket, then `#`
/// lines ending with the SUMMARY block
/// (`# Index TID Samples L_min L_max L_avg Samples_H L_avg_H L_med_H
/// L_std_H L_mode_H` and one line of values, in the histogram's unit).
/// The overflow is `Samples − Samples_H` unless rtshield's per-thread
/// line gives it.
pub fn read_systress_txt(text: &str, source: &str) -> Result<RunResult, InputError> {
    let prov = Provenance::parse(text);
    let res = prov.resolution_ns.unwrap_or(1000);
    let mut counts: Vec<[u64; 2]> = Vec::new();
    let mut last_bucket: Option<u64> = None;
    let mut summary: Option<Vec<u64>> = None;
    let mut after_header = false;
    for (ln, line) in text.lines().enumerate() {
        let lno = ln + 1;
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        if let Some(rest) = t.strip_prefix('#') {
            if is_summary_header(t) {
                after_header = true;
            } else if after_header && summary.is_none() && !rest.trim().is_empty() {
                let mut vals = Vec::new();
                for w in rest.split_whitespace().take(11) {
                    vals.push(w.parse::<u64>().map_err(|_| {
                        InputError::at(
                            source,
                            lno,
                            col_of(line, w),
                            format!("`{w}` is not a number in the SUMMARY line"),
                        )
                    })?);
                }
                if vals.len() < 11 {
                    return Err(InputError::at(
                        source,
                        lno,
                        line.len() + 1,
                        format!("{} values in the SUMMARY line, 11 expected", vals.len()),
                    ));
                }
                summary = Some(vals);
            }
            continue;
        }
        let mut words = t.split_whitespace();
        let (Some(b), Some(c), None) = (words.next(), words.next(), words.next()) else {
            return Err(InputError::at(
                source,
                lno,
                1,
                "expected `BUCKET COUNT` (two columns)",
            ));
        };
        let num = |w: &str, what: &str| {
            w.parse::<u64>().map_err(|_| {
                InputError::at(source, lno, col_of(line, w), format!("`{w}` is not {what}"))
            })
        };
        let (b, c) = (num(b, "a bucket number")?, num(c, "a sample count")?);
        if last_bucket.is_some_and(|l| b <= l) {
            return Err(InputError::at(
                source,
                lno,
                col_of(line, t),
                format!(
                    "bucket {b} after bucket {}: not ascending",
                    last_bucket.unwrap_or(0)
                ),
            ));
        }
        last_bucket = Some(b);
        if c > 0 {
            counts.push([b, c]);
        }
    }
    let Some(sm) = summary else {
        return Err(InputError::new(format!(
            "{source}: no SUMMARY line after `# Index … Samples_H …` (truncated file?)"
        )));
    };
    let [index, tid, samples, l_min, l_max, l_avg, samples_h, ..] = sm[..] else {
        unreachable!("11 values checked above")
    };
    let tl = prov.threads.first();
    let overflow = samples.saturating_sub(samples_h);
    let underflow = tl.and_then(|t| t.underflow).unwrap_or(0);
    let h = Histogram {
        resolution_ns: res,
        buckets: last_bucket.map_or(0, |b| b + 1),
        counts,
        overflow: overflow.saturating_sub(underflow),
        underflow,
    };
    let mut t = thread_from_histogram(
        index as u32,
        None,
        0,
        samples,
        (l_min * res) as i64,
        (l_max * res) as i64,
        (l_avg * res) as f64,
        h,
    );
    match tl {
        Some(l) => l.apply(&mut t),
        None => t.unknown.extend(
            ["policy", "priority", "overruns", "missed_periods", "lost"]
                .iter()
                .map(|s| s.to_string()),
        ),
    }
    t.tid = tid as i32;
    for (k, v) in &prov.percentiles {
        t.percentiles.insert(k.clone(), (*v * res) as i64);
    }
    let mut warnings = vec![format!(
        "read from a systress text file: L_min/L_max/L_avg in whole {} units",
        if res == 1000 {
            "µs".to_string()
        } else {
            format!("{res} ns")
        }
    )];
    if t.hist_stats.samples != samples_h {
        warnings.push(format!(
            "the histogram holds {} samples, its SUMMARY says Samples_H {samples_h} (lines left out?)",
            t.hist_stats.samples
        ));
    }
    let mut r = imported(
        prov.tool.clone().unwrap_or_else(|| "systress".into()),
        prov.started.clone().unwrap_or_default(),
        prov.command.clone(),
        res,
        last_bucket.map(|b| b + 1),
        0,
        prov.sysinfo.clone(),
        warnings,
        vec![t],
    );
    r.tags.insert("imported".into(), "systress-txt".into());
    if let Some(m) = &prov.mode {
        r.settings.mode = m.clone();
    }
    Ok(r)
}

/// One line of the torture article's fluctuation log.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FluctRow {
    /// `[t]`: `time(NULL)` when the line was printed.
    pub t: i64,
    pub min_us: f64,
    pub avg_us: f64,
    pub max_us: f64,
    pub maxmax_us: f64,
}

/// `[86566] Min.= 0, Moy.= 99.7, Max.= 213,  Max.Max.= 3173`.
pub fn parse_fluct_line(l: &str) -> Option<FluctRow> {
    let rest = l.trim().strip_prefix('[')?;
    let (t, rest) = rest.split_once(']')?;
    let t: i64 = t.trim().parse().ok()?;
    let field = |name: &str| -> Option<f64> {
        let i = rest.find(name)? + name.len();
        let v = rest[i..].trim_start();
        let end = v.find([',', ' ']).unwrap_or(v.len());
        v[..end].parse().ok().filter(|x: &f64| x.is_finite())
    };
    // "Max.Max.=" contains "Max.=" only as its tail: find " Max.=" first.
    Some(FluctRow {
        t,
        min_us: field("Min.=")?,
        avg_us: field("Moy.=")?,
        max_us: field(", Max.=")?,
        maxmax_us: field("Max.Max.=")?,
    })
}

/// A fluctuation log read: the run it summarises (one thread, min/avg/max
/// only) and its rows as a timeline.
#[derive(Debug, Clone)]
pub struct FluctLog {
    pub result: RunResult,
    /// (seconds since the start, row).
    pub rows: Vec<(f64, FluctRow)>,
    /// `##[t] text` marks: (seconds, text), e.g. `Periode de charge`.
    pub marks: Vec<(f64, String)>,
}

/// Read the torture article's fluctuation log: `[t] Min.= …, Moy.= …,
/// Max.= …,  Max.Max.= …` lines (one per 5 s), `##[t] text` marks, other
/// lines ignored (the shell prompt, `(Contrôle-C)`). Values are intervals
/// between timer signals in µs (its method: `--mode interval`). `t` is
/// read as seconds since the start when it is small (the article's board
/// had no clock: `[16718]` is 16718 s into the run), and made relative to
/// the first line (minus one interval) when it is an epoch time.
pub fn read_fluctuation_log(text: &str, source: &str) -> Result<FluctLog, InputError> {
    let mut rows: Vec<FluctRow> = Vec::new();
    let mut marks: Vec<(i64, String)> = Vec::new();
    for (ln, line) in text.lines().enumerate() {
        let t = line.trim();
        if let Some(m) = t.strip_prefix("##[") {
            if let Some((ts, txt)) = m.split_once(']') {
                if let Ok(ts) = ts.trim().parse() {
                    marks.push((ts, txt.trim().to_string()));
                }
            }
            continue;
        }
        if t.starts_with('[') && t.contains("Min.=") {
            let r = parse_fluct_line(t).ok_or_else(|| {
                InputError::at(
                    source,
                    ln + 1,
                    1,
                    "expected `[t] Min.= N, Moy.= N, Max.= N,  Max.Max.= N`",
                )
            })?;
            rows.push(r);
        }
    }
    let first = rows.first().ok_or_else(|| {
        InputError::new(format!(
            "{source}: no `[t] Min.= …, Moy.= …, Max.= …,  Max.Max.= …` line"
        ))
    })?;
    let step = rows.get(1).map_or(5, |r| (r.t - first.t).max(1));
    let base = if first.t > 1_000_000_000 {
        first.t - step
    } else {
        0
    };
    let rel = |t: i64| (t - base) as f64;
    let min = rows.iter().map(|r| r.min_us).fold(f64::MAX, f64::min);
    let max = rows
        .iter()
        .map(|r| r.max_us.max(r.maxmax_us))
        .fold(0.0, f64::max);
    let avg = rows.iter().map(|r| r.avg_us).sum::<f64>() / rows.len() as f64;
    let h = Histogram {
        resolution_ns: 1000,
        buckets: 0,
        counts: Vec::new(),
        overflow: 0,
        underflow: 0,
    };
    let mut t = thread_from_histogram(
        0,
        None,
        0,
        0,
        (min * 1000.0) as i64,
        (max * 1000.0) as i64,
        avg * 1000.0,
        h,
    );
    t.unknown.extend(
        [
            "samples",
            "histogram",
            "policy",
            "priority",
            "tid",
            "overruns",
            "missed_periods",
            "lost",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    let end = rel(rows.last().map_or(first.t, |r| r.t));
    let mut result = imported(
        "fluctuations-timer".into(),
        String::new(),
        Vec::new(),
        1000,
        None,
        0,
        SysInfo::default(),
        vec![
            "read from a fluctuation log: intervals between timer signals (µs), 5 s minima, means and maxima only; avg is the mean of the 5 s means".into(),
        ],
        vec![t],
    );
    result.duration_s = end;
    result.settings.mode = "interval".into();
    result
        .tags
        .insert("imported".into(), "fluctuation-log".into());
    Ok(FluctLog {
        rows: rows.iter().map(|r| (rel(r.t), *r)).collect(),
        marks: marks.into_iter().map(|(t, m)| (rel(t), m)).collect(),
        result,
    })
}

/// 1-based column of `word` (a sub-slice of `line`).
fn col_of(line: &str, word: &str) -> usize {
    (word.as_ptr() as usize).saturating_sub(line.as_ptr() as usize) + 1
}

/// `-i 200`, `-i200`, `--interval=200`, `--interval 200`.
fn arg_value(args: &[String], short: &str, long: &str) -> Option<u64> {
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let v = if a == short || a == long {
            it.next().map(String::as_str)
        } else if let Some(v) = a.strip_prefix(&format!("{long}=")) {
            Some(v)
        } else if a.starts_with(short) && !a.starts_with("--") && a.len() > short.len() {
            Some(&a[short.len()..])
        } else {
            None
        };
        if let Some(n) = v.and_then(|v| v.trim_start_matches('=').parse().ok()) {
            return Some(n);
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

#[allow(clippy::too_many_arguments)]
fn imported(
    tool: String,
    started_at: String,
    command: Vec<String>,
    res_ns: u64,
    buckets: Option<u64>,
    period_us: u64,
    sysinfo: SysInfo,
    warnings: Vec<String>,
    threads: Vec<ThreadResult>,
) -> RunResult {
    RunResult {
        schema: SCHEMA.to_string(),
        tool,
        label: None,
        started_at,
        duration_s: threads
            .iter()
            .map(|t| t.samples as f64 * t.period_ns as f64 / 1e9)
            .fold(0.0, f64::max),
        command,
        config: None,
        settings: Settings {
            mode: "nanosleep".into(),
            resolution_ns: res_ns,
            histo_buckets: buckets.unwrap_or(0),
            stats_period_ns: 0,
            requested_duration_ns: None,
            requested_samples: None,
            memlock: false,
            cpu_dma_latency: None,
        },
        sysinfo,
        warnings,
        end_reason: "duration".into(),
        threads,
        programs: Vec::new(),
        tags: BTreeMap::from([("imported".to_string(), "cyclictest".to_string())])
            .into_iter()
            .chain((period_us > 0).then(|| ("period".to_string(), format!("{period_us}us"))))
            .collect(),
        trace: None,
    }
}

/// Build a thread result from a histogram and the exact min/max/avg the
/// tool reported: `_H` statistics and percentiles are computed from the
/// histogram (bucket lower edges); a percentile that falls into the
/// overflow is reported as the exact maximum.
#[allow(clippy::too_many_arguments)]
pub fn thread_from_histogram(
    index: u32,
    cpu: Option<u32>,
    period_ns: u64,
    samples: u64,
    min_ns: i64,
    max_ns: i64,
    avg_ns: f64,
    h: Histogram,
) -> ThreadResult {
    let percentiles = hist_percentiles(&h, max_ns);
    ThreadResult {
        index,
        tid: 0,
        cpu,
        policy: "FIFO".into(),
        priority: 0,
        requested_policy: None,
        period_ns,
        samples,
        min_ns,
        max_ns,
        cur_ns: 0,
        avg_ns,
        overruns: 0,
        missed_periods: 0,
        lost: 0,
        hist_stats: hist_stats(&h),
        corrected: Corrected {
            samples,
            max_ns,
            percentiles: percentiles.clone(),
        },
        percentiles,
        histogram: h,
        worst_cases: Vec::new(),
        unknown: Vec::new(),
        split: None,
    }
}

/// The systress article's `_H` statistics over the samples inside the histogram.
pub fn hist_stats(h: &Histogram) -> HistStats {
    HistStats::from_buckets(h.counts.iter().map(|c| (c[0], c[1])), h.resolution_ns)
}

/// Percentiles over all samples (histogram + overflow): the lower edge of
/// the bucket holding the p-th sample, or `max_ns` when it is an overflow.
pub fn hist_percentiles(h: &Histogram, max_ns: i64) -> BTreeMap<String, i64> {
    let total: u64 = h.counts.iter().map(|c| c[1]).sum::<u64>() + h.overflow;
    let mut out = BTreeMap::new();
    if total == 0 {
        return out;
    }
    for key in PERCENTILES {
        let p: f64 = key.parse().unwrap_or(100.0);
        // Rank of the sample: ceil(p% of total), at least 1.
        let rank = ((p / 100.0 * total as f64).ceil() as u64).max(1);
        let mut acc = 0;
        let mut v = max_ns;
        for c in &h.counts {
            acc += c[1];
            if acc >= rank {
                v = (c[0] * h.resolution_ns) as i64;
                break;
            }
        }
        out.insert((*key).to_string(), v);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const JSON: &str = r##"{
  "file_version": 1,
  "cmdline:": "cyclictest -m -p 98 -a 1 -t 1 -i 200 -D 2 -h 100 -q --json=one.json",
  "rt_test_version:": "2.40",
  "start_time": "Sun, 22 Nov 2026 05:49:01 +0000",
  "end_time": "Sun, 22 Nov 2026 05:49:03 +0000",
  "return_code": 0,
  "sysinfo": {"sysname": "Linux", "nodename": "vm", "release": "6.18.44",
              "version": "#1 SMP PREEMPT_DYNAMIC @0", "machine": "x86_64", "realtime": 0},
  "num_threads": 2,
  "resolution_in_ns": 0,
  "thread": {
    "10": {"histogram": {"3": 2}, "cycles": 2, "min": 3, "max": 3, "avg": 3.0, "cpu": 0, "node": 0},
    "2": {"histogram": {"12": 1, "10": 6, "11": 2}, "cycles": 10, "min": 10, "max": 250,
          "avg": 34.5, "cpu": 1, "node": 0}
  }
}"##;

    #[test]
    fn json_threads_histogram_and_stats() {
        let r = read_cyclictest_json(JSON, "one.json").unwrap();
        assert_eq!(r.tool, "cyclictest 2.40");
        assert_eq!(r.threads.len(), 2);
        // Numeric order of thread keys: 2 before 10.
        let t = &r.threads[0];
        assert_eq!(t.index, 2);
        assert_eq!(t.cpu, Some(1));
        assert_eq!(t.period_ns, 200_000);
        assert_eq!(t.samples, 10);
        assert_eq!((t.min_ns, t.max_ns), (10_000, 250_000));
        assert_eq!(t.avg_ns, 34_500.0);
        assert_eq!(t.histogram.counts, vec![[10, 6], [11, 2], [12, 1]]);
        assert_eq!(t.histogram.buckets, 100);
        // 10 cycles, 9 in the histogram: one overflow.
        assert_eq!(t.histogram.overflow, 1);
        // Median of 6×10, 2×11, 1×12 is 10; mode 10; mean 10.444 µs.
        assert_eq!(t.hist_stats.median_ns, 10_000);
        assert_eq!(t.hist_stats.mode_ns, 10_000);
        assert!((t.hist_stats.avg_ns - 94_000.0 / 9.0).abs() < 1e-6);
        // p90 = 9th of 10 samples = 12 µs; p99 = 10th = the overflow = max.
        assert_eq!(t.percentiles["90"], 12_000);
        assert_eq!(t.percentiles["99"], 250_000);
        assert_eq!(r.sysinfo.kernel_release.as_deref(), Some("6.18.44"));
        assert!(r.sysinfo.preempt_dynamic);
        assert_eq!(r.tags["period"], "200us");
    }

    /// `cyclictest --nsecs`: `resolution_in_ns: 1`, every value and the
    /// histogram index in ns (checked against rt-tests 2.40).
    #[test]
    fn json_nsecs() {
        let text = r#"{"file_version": 1, "cmdline:": "cyclictest --nsecs -h 100000 -i 500",
            "resolution_in_ns": 1, "thread": {"0": {"histogram": {"11294": 1, "35000": 2},
            "cycles": 4, "min": 11294, "max": 767870, "avg": 35143.87, "cpu": 1}}}"#;
        let r = read_cyclictest_json(text, "ns.json").unwrap();
        let t = &r.threads[0];
        assert_eq!(r.settings.resolution_ns, 1);
        assert_eq!((t.min_ns, t.max_ns), (11_294, 767_870));
        assert_eq!(t.avg_ns, 35_143.87);
        assert_eq!(t.histogram.counts, vec![[11294, 1], [35000, 2]]);
        assert_eq!(t.histogram.overflow, 1);
        assert_eq!(t.hist_stats.median_ns, 35_000);
        assert_eq!(t.period_ns, 500_000);
    }

    #[test]
    fn truncated_json_names_file_line_col() {
        let e = read_cyclictest_json(&JSON[..200], "cut.json")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("cut.json:"), "{e}");
        assert!(e.contains("not valid cyclictest JSON"), "{e}");
    }

    #[test]
    fn unknown_file_version() {
        let e = read_cyclictest_json(
            &JSON.replace("\"file_version\": 1", "\"file_version\": 7"),
            "x.json",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("x.json") && e.contains("file_version 7"), "{e}");
    }

    const HIST: &str = "# /dev/cpu_dma_latency set to 0us\n# Histogram\n000000 000000 000000\n000001 000004 000000\n000002 000001 000003\n000003 000000 000001\n# Total: 000000005 000000004\n# Min Latencies: 00001 00002\n# Avg Latencies: 00001 00002\n# Max Latencies: 00009 00003\n# Histogram Overflows: 00002 00000\n# Histogram Overflow at cycle number:\n# Thread 0: 00003 00010\n# Thread 1:\n";

    #[test]
    fn hist_text_two_threads() {
        let r = read_cyclictest_hist(HIST, "h.txt").unwrap();
        assert_eq!(r.threads.len(), 2);
        let t0 = &r.threads[0];
        assert_eq!(t0.histogram.counts, vec![[1, 4], [2, 1]]);
        assert_eq!(t0.histogram.overflow, 2);
        assert_eq!(t0.histogram.buckets, 4);
        assert_eq!(t0.samples, 7);
        assert_eq!((t0.min_ns, t0.max_ns), (1000, 9000));
        let t1 = &r.threads[1];
        assert_eq!(t1.histogram.counts, vec![[2, 3], [3, 1]]);
        assert_eq!(t1.samples, 4);
        assert_eq!(t1.hist_stats.mode_ns, 2000);
    }

    #[test]
    fn hist_text_errors_name_line_and_column() {
        let bad = HIST.replace("000002 000001 000003", "000002 00x001 000003");
        let e = read_cyclictest_hist(&bad, "h.txt").unwrap_err().to_string();
        assert_eq!(e, "h.txt:5:8: `00x001` is not a sample count");
        let short = HIST.replace("000003 000000 000001", "000003 000000");
        let e = read_cyclictest_hist(&short, "h.txt")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("h.txt:6:14: 1 counts"), "{e}");
        let cut = &HIST[..HIST.find("# Max").unwrap()];
        let e = read_cyclictest_hist(cut, "h.txt").unwrap_err().to_string();
        assert!(e.contains("h.txt") && e.contains("truncated"), "{e}");
        let e = read_cyclictest_hist("hello\n", "h.txt")
            .unwrap_err()
            .to_string();
        assert!(e.contains("no histogram lines"), "{e}");
    }

    #[test]
    fn sniffing() {
        assert_eq!(sniff(JSON), Format::CyclictestJson);
        assert_eq!(
            sniff("{\"schema\": \"rtshield.results/1\""),
            Format::Rtshield
        );
        assert_eq!(sniff(HIST), Format::CyclictestHist);
        // A config text mentioning the other tool does not confuse it.
        assert_eq!(
            sniff(
                "{\n  \"schema\": \"rtshield.results/1\", \"config\": \"\\\"rt_test_version\\\"\"}"
            ),
            Format::Rtshield
        );
        assert_eq!(
            sniff("{\"num_threads\": 1, \"schema\": 2}"),
            Format::Rtshield
        );
        assert_eq!(sniff("{}"), Format::CyclictestJson);
    }

    /// The systress article's `timer_thread00.txt` (its figure, verbatim
    /// but for the elided `[...]` line): histogram 0..=20 µs, SUMMARY
    /// Samples 60000, Samples_H 55431 → 4569 beyond 20 µs.
    #[test]
    fn systress_txt_from_the_article() {
        let text = include_str!("../tests/fixtures/systress-timer_thread00.txt");
        assert_eq!(sniff(text), Format::SystressTxt);
        let r = read_systress_txt(text, "timer_thread00.txt").unwrap();
        assert_eq!(r.tool, "systress");
        assert_eq!(r.tags["imported"], "systress-txt");
        let t = &r.threads[0];
        assert_eq!((t.index, t.tid, t.samples), (0, 13029, 60000));
        assert_eq!((t.min_ns, t.max_ns, t.avg_ns), (2000, 100_000, 17_000.0));
        assert_eq!(t.histogram.buckets, 21);
        assert_eq!(t.histogram.overflow, 4569);
        assert_eq!(t.histogram.counts[0], [2, 8]);
        assert_eq!(t.hist_stats.mode_ns, 17_000);
        assert!(t.unknown.contains(&"overruns".to_string()));
        // The elided lines: the histogram holds fewer than Samples_H.
        assert!(
            r.warnings.iter().any(|w| w.contains("Samples_H 55431")),
            "{:?}",
            r.warnings
        );
    }

    #[test]
    fn systress_txt_errors_name_line_and_column() {
        let text = include_str!("../tests/fixtures/systress-timer_thread00.txt");
        let e = read_systress_txt(&text.replace("    3114", "    31x4"), "t.txt").unwrap_err();
        assert_eq!(e.to_string(), "t.txt:6:14: `31x4` is not a sample count");
        let cut = &text[..text.find("#      0 13029").unwrap()];
        let e = read_systress_txt(cut, "t.txt").unwrap_err().to_string();
        assert!(e.contains("no SUMMARY line"), "{e}");
    }

    /// rtshield's own files read back: its name, its resolution, its
    /// per-thread counters (overruns 3, not 0).
    #[test]
    fn rtshield_text_files_read_back() {
        let mut res = crate::example::example_result();
        res.threads[0].overruns = 3;
        res.threads[0].missed_periods = 5;
        let hist = crate::to_cyclictest_hist(&res);
        let r = read_cyclictest_hist(&hist, "histogram.txt").unwrap();
        assert_eq!(r.tool, res.tool);
        assert_eq!(r.tags["imported"], "rtshield-histogram");
        let (t, e) = (&r.threads[0], &res.threads[0]);
        assert_eq!((t.overruns, t.missed_periods), (3, 5));
        assert_eq!((t.policy.as_str(), t.priority, t.tid), ("fifo", 98, 4242));
        assert_eq!(t.cpu, Some(1));
        assert_eq!(t.histogram.counts, e.histogram.counts);
        assert_eq!(t.histogram.overflow, e.histogram.overflow);
        assert!(t.unknown.is_empty(), "{:?}", t.unknown);
        assert_eq!(r.sysinfo.kernel_release.as_deref(), Some("6.18.0"));

        let txt = crate::to_systress_txt(&res, &res.threads[0]);
        assert_eq!(sniff(&txt), Format::SystressTxt);
        let r = read_systress_txt(&txt, "timer_thread00.txt").unwrap();
        let t = &r.threads[0];
        assert_eq!(r.tool, res.tool);
        assert_eq!((t.overruns, t.tid, t.samples), (3, 4242, 10));
        assert_eq!(t.histogram.counts, e.histogram.counts);
        assert_eq!(t.histogram.overflow, 1);
        assert_eq!(t.max_ns, 150_000);
        assert!(r.warnings.len() == 1, "{:?}", r.warnings);
    }

    /// `cyclictest -H`: the last column sums the threads; not a thread.
    #[test]
    fn histofall_column_is_not_a_thread() {
        let text = "# Histogram\n000000 000000\t000000\t000000\n000001 000004\t000002\t000006\n000002 000001\t000003\t000004\n# Total: 000000005 000000005 000000010\n# Min Latencies: 00001 00001\n# Avg Latencies: 00001 00001\n# Max Latencies: 00002 00002 00002\n# Histogram Overflows: 00000 00000 00000\n# Histogram Overflow at cycle number:\n# Thread 0:\n# Thread 1:\n";
        let r = read_cyclictest_hist(text, "h.txt").unwrap();
        assert_eq!(r.threads.len(), 2);
        assert_eq!(r.threads[1].histogram.counts, vec![[1, 2], [2, 3]]);
        assert_eq!(r.tool, "cyclictest");
        assert!(r.threads[0].unknown.contains(&"overruns".to_string()));
    }

    #[test]
    fn cyclictest_command_line() {
        let a = |s: &str| {
            CyclictestArgs::parse(&s.split_whitespace().map(str::to_string).collect::<Vec<_>>())
        };
        let c = a("cyclictest -m -p98 -a 1 -t 1 -i 200 -h 100 -q");
        assert_eq!(
            c,
            CyclictestArgs {
                priority: Some(98),
                policy: None,
                interval_us: 200,
                affinity: Some("1".into()),
                mlock: true,
                histogram: Some(100),
                duration_ns: None,
                loops: None,
            }
        );
        let c = a("cyclictest -D 2m -l 5000");
        assert_eq!(
            (c.duration_ns, c.loops),
            (Some(120_000_000_000), Some(5000))
        );
        assert_eq!(
            a("cyclictest --duration=90").duration_ns,
            Some(90_000_000_000)
        );
        let c = a("cyclictest --policy=rr --priority=80 -a -H 50 --interval=500");
        assert_eq!(c.policy.as_deref(), Some("rr"));
        assert_eq!(
            (c.priority, c.interval_us, c.histogram),
            (Some(80), 500, Some(50))
        );
        assert_eq!(c.affinity.as_deref(), Some("all"));
        assert!(!c.mlock);
        let mut t = thread_from_histogram(
            0,
            None,
            0,
            0,
            0,
            0,
            0.0,
            Histogram {
                resolution_ns: 1000,
                buckets: 0,
                counts: vec![],
                overflow: 0,
                underflow: 0,
            },
        );
        c.apply(&mut t, true);
        assert_eq!((t.policy.as_str(), t.priority), ("RR", 80));
        a("cyclictest -i 100").apply(&mut t, true);
        assert_eq!((t.policy.as_str(), t.priority), ("OTHER", 0));
    }

    /// The cmdline's `-p98` is the priority (not `FIFO 0`); the counters
    /// cyclictest does not keep are unknown.
    #[test]
    fn json_priority_and_unknowns() {
        let r = read_cyclictest_json(JSON, "one.json").unwrap();
        let t = &r.threads[0];
        assert_eq!((t.policy.as_str(), t.priority), ("FIFO", 98));
        for f in ["overruns", "missed_periods", "lost", "tid"] {
            assert!(t.unknown.contains(&f.to_string()), "{f}");
        }
        assert!(!t.unknown.contains(&"policy".to_string()));
        assert!(r.settings.memlock);
        assert_eq!(r.tags["affinity"], "1");
        // Serialised, the list says which values are placeholders.
        let j = serde_json::to_value(t).unwrap();
        assert_eq!(j["unknown"][0], "tid");
    }

    /// Without `-h` the JSON has no histogram: min/avg/max only, not a
    /// median of 0 and every sample counted as overflow.
    #[test]
    fn json_without_histogram() {
        let text = r#"{"file_version": 1, "cmdline": "cyclictest -p 90 -i 1000",
            "thread": {"0": {"cycles": 5000, "min": 3, "max": 80, "avg": 6.5, "cpu": 0}}}"#;
        let r = read_cyclictest_json(text, "nohist.json").unwrap();
        let t = &r.threads[0];
        assert_eq!(t.histogram.overflow, 0);
        assert!(t.histogram.counts.is_empty());
        assert!(t.percentiles.is_empty());
        assert!(t.unknown.contains(&"histogram".to_string()));
        assert_eq!((t.samples, t.min_ns, t.max_ns), (5000, 3000, 80_000));
    }

    /// The torture article's fluctuation logs, verbatim.
    #[test]
    fn fluctuation_logs_from_the_article() {
        let day2 = include_str!("../tests/fixtures/fluctuations-day2-tail.txt");
        assert_eq!(sniff(day2), Format::FluctuationLog);
        let log = read_fluctuation_log(day2, "day2.txt").unwrap();
        assert_eq!(log.rows.len(), 9);
        assert_eq!(log.rows[0].0, 29230.0);
        assert_eq!(
            log.rows[6].1,
            FluctRow {
                t: 29260,
                min_us: 0.0,
                avg_us: 99.9,
                max_us: 396.0,
                maxmax_us: 6072.0
            }
        );
        assert_eq!(log.marks, vec![(29257.0, "Periode de charge".to_string())]);
        let t = &log.result.threads[0];
        assert_eq!((t.min_ns, t.max_ns), (0, 6_072_000));
        assert_eq!(log.result.settings.mode, "interval");
        assert!(t.unknown.contains(&"samples".to_string()));

        // The first run printed time(NULL): epoch times become seconds
        // from the start (the first line closes the first 5 s).
        let first = include_str!("../tests/fixtures/fluctuations-first-run.txt");
        let log = read_fluctuation_log(first, "first.txt").unwrap();
        let ts: Vec<f64> = log.rows.iter().map(|r| r.0).collect();
        assert_eq!(ts, [5.0, 10.0, 15.0, 20.0, 25.0, 30.0]);
        assert_eq!(log.rows[0].1.min_us, 0.0); // `Min.= 00`

        let e = read_fluctuation_log("[12] Min.= x, Moy.= 1, Max.= 2,  Max.Max.= 2\n", "f.txt")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("f.txt:1:1: expected `[t] Min.="), "{e}");
    }

    proptest::proptest! {
        #[test]
        fn readers_never_panic(s in "\\PC{0,300}") {
            let _ = read_cyclictest_hist(&s, "p");
            let _ = read_cyclictest_json(&s, "p");
            let _ = read_systress_txt(&s, "p");
            let _ = read_fluctuation_log(&s, "p");
            let _ = sniff(&s);
            let _ = sniff(&format!("{{{s}"));
        }

        #[test]
        fn hist_lines_never_panic(lines in proptest::collection::vec("[0-9# :A-Za-z]{0,30}", 0..20)) {
            let _ = read_cyclictest_hist(&lines.join("\n"), "p");
        }
    }
}
