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
    /// `cyclictest -h N` standard output (two or more columns of counts).
    CyclictestHist,
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
    } else {
        Format::CyclictestHist
    }
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
    let cmdline = s("cmdline").unwrap_or_default();
    let args: Vec<String> = cmdline.split_whitespace().map(str::to_string).collect();
    let res_ns = match obj.get("resolution_in_ns").and_then(|x| x.as_u64()) {
        Some(1) => 1, // --nsecs: every value is in ns
        _ => 1000,
    };
    let hist_size = arg_value(&args, "-h", "--histogram").or(arg_value(&args, "-H", "--histofall"));
    let period_us = arg_value(&args, "-i", "--interval").unwrap_or(1000);

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
        let cpu = t.get("cpu").and_then(|x| x.as_u64()).map(|c| c as u32);
        let mut counts = Vec::new();
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
                "thread {idx}: no histogram in the file (run cyclictest with -h N)"
            ));
        }
        counts.sort();
        let in_hist: u64 = counts.iter().map(|c| c[1]).sum();
        let buckets = hist_size.unwrap_or_else(|| counts.last().map_or(0, |c| c[0] + 1));
        let h = Histogram {
            resolution_ns: res_ns,
            buckets,
            counts,
            // The JSON has no overflow member: what the histogram misses is it.
            overflow: cycles.saturating_sub(in_hist),
            underflow: 0,
        };
        threads.push(thread_from_histogram(
            idx,
            cpu,
            period_us * 1000,
            cycles,
            min_ns,
            max_ns,
            avg_ns,
            h,
        ));
    }
    let sysinfo = match obj.get("sysinfo") {
        Some(si) => sysinfo_from_uname(si),
        None => SysInfo::default(),
    };
    Ok(imported(
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
    ))
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
    if summary.get("Max Latencies").map(Vec::len) != Some(n) {
        return Err(InputError::new(format!(
            "{source}: no `# Max Latencies:` line with {n} values after the histogram (truncated file?)"
        )));
    }
    let mut threads = Vec::new();
    for i in 0..n {
        let counts: Vec<[u64; 2]> = rows
            .iter()
            .filter(|r| r.1[i] > 0)
            .map(|r| [r.0, r.1[i]])
            .collect();
        let in_hist: u64 = counts.iter().map(|c| c[1]).sum();
        let overflow = col("Histogram Overflows", i).unwrap_or(0);
        let h = Histogram {
            resolution_ns: 1000,
            buckets: rows.last().map_or(0, |r| r.0 + 1),
            counts,
            overflow,
            underflow: 0,
        };
        let samples = in_hist + overflow;
        let hs = hist_stats(&h);
        let avg_ns = col("Avg Latencies", i).map_or(hs.avg_ns, |a| a as f64 * 1000.0);
        let min_ns = col("Min Latencies", i).map_or(0, |m| m as i64 * 1000);
        let max_ns = col("Max Latencies", i).unwrap_or(0) as i64 * 1000;
        threads.push(thread_from_histogram(
            i as u32, None, 0, samples, min_ns, max_ns, avg_ns, h,
        ));
    }
    let buckets = rows.last().map(|r| r.0 + 1);
    Ok(imported(
        "cyclictest".into(),
        String::new(),
        Vec::new(),
        1000,
        buckets,
        0,
        SysInfo::default(),
        vec![
            "imported from cyclictest histogram text: no CPU, period or system information".into(),
        ],
        threads,
    ))
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

    proptest::proptest! {
        #[test]
        fn readers_never_panic(s in "\\PC{0,300}") {
            let _ = read_cyclictest_hist(&s, "p");
            let _ = read_cyclictest_json(&s, "p");
            let _ = sniff(&s);
            let _ = sniff(&format!("{{{s}"));
        }

        #[test]
        fn hist_lines_never_panic(lines in proptest::collection::vec("[0-9# :A-Za-z]{0,30}", 0..20)) {
            let _ = read_cyclictest_hist(&lines.join("\n"), "p");
        }
    }
}
