//! Writers: `results.json`, `results.csv`, seed 000's `timer_threadNN.txt`
//! and cyclictest's `-h` histogram text. Each file is written to a temporary
//! file in the same directory, synced, then renamed: a reader (or a crash)
//! only ever sees a complete file.

use crate::{RunResult, ThreadResult, PERCENTILES};
use std::fmt::Write as _;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Names of the files [`write_all`] writes.
pub const JSON_FILE: &str = "results.json";
pub const CSV_FILE: &str = "results.csv";
pub const HIST_FILE: &str = "histogram.txt";

/// `timer_thread00.txt` for thread index 0 (seed 000's name).
pub fn systress_file_name(index: u32) -> String {
    format!("timer_thread{index:02}.txt")
}

/// Write every file of a run into `dir` (created if needed): results.json,
/// results.csv, histogram.txt and one timer_threadNN.txt per thread.
/// See [`file_names`] for the list.
pub fn write_all(res: &RunResult, dir: &Path) -> io::Result<()> {
    std::fs::create_dir_all(dir)
        .map_err(|e| io::Error::new(e.kind(), format!("cannot create {}: {e}", dir.display())))?;
    let put = |name: String, text: String| write_atomic(&dir.join(name), text.as_bytes());
    put(JSON_FILE.into(), to_json(res))?;
    put(CSV_FILE.into(), to_csv(res))?;
    put(HIST_FILE.into(), to_cyclictest_hist(res))?;
    for t in &res.threads {
        put(systress_file_name(t.index), to_systress_txt(res, t))?;
    }
    Ok(())
}

/// The files [`write_all`] writes for `res`, in order.
pub fn file_names(res: &RunResult) -> Vec<String> {
    let mut v = vec![JSON_FILE.to_string(), CSV_FILE.into(), HIST_FILE.into()];
    v.extend(res.threads.iter().map(|t| systress_file_name(t.index)));
    v
}

/// Write `results.json` alone to `path` (for `--json FILE`).
pub fn write_json(res: &RunResult, path: &Path) -> io::Result<()> {
    write_atomic(path, to_json(res).as_bytes())
}

/// Temp file in the same directory + fsync + rename.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into());
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let tmp = dir.join(format!(".{name}.tmp{}", std::process::id()));
    let ctx = |e: io::Error, what: &Path| {
        io::Error::new(e.kind(), format!("cannot write {}: {e}", what.display()))
    };
    let res = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if let Err(e) = res {
        let _ = std::fs::remove_file(&tmp);
        return Err(ctx(e, path));
    }
    Ok(())
}

pub fn to_json(res: &RunResult) -> String {
    let mut s = serde_json::to_string_pretty(res).expect("RunResult serialises");
    s.push('\n');
    s
}

/// A value in resolution units, floored like the histogram buckets.
fn units(ns: i64, res: u64) -> i64 {
    ns.div_euclid(res.max(1) as i64)
}

fn units_round(ns: f64, res: u64) -> i64 {
    (ns / res.max(1) as f64).round() as i64
}

/// Short provenance lines, each starting with `# `.
fn provenance(res: &RunResult) -> String {
    let si = &res.sysinfo;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# {} ({}), started {}, {:.3} s, ended by {}",
        res.tool,
        crate::SCHEMA,
        res.started_at,
        res.duration_s,
        res.end_reason
    );
    if !res.command.is_empty() {
        let _ = writeln!(s, "# command: {}", res.command.join(" "));
    }
    let _ = writeln!(
        s,
        "# kernel: {} {} preempt={} hz={} clocksource={} cpus={} isolated={} model={}",
        si.kernel_release.as_deref().unwrap_or("?"),
        si.arch,
        si.preempt_mode
            .as_deref()
            .or(si.preempt_model.as_deref())
            .unwrap_or("?"),
        si.hz.map_or("?".into(), |h| h.to_string()),
        si.clocksource.as_deref().unwrap_or("?"),
        si.cpus_online.as_deref().unwrap_or("?"),
        si.cpus_isolated
            .as_deref()
            .filter(|s| !s.is_empty())
            .unwrap_or("none"),
        si.cpu_model.as_deref().unwrap_or("?"),
    );
    if let Some(cl) = &si.cmdline {
        let _ = writeln!(s, "# cmdline: {cl}");
    }
    let st = &res.settings;
    let _ = writeln!(
        s,
        "# settings: mode={} resolution={}ns buckets={} memlock={} cpu_dma_latency={}",
        st.mode,
        st.resolution_ns,
        st.histo_buckets,
        st.memlock,
        st.cpu_dma_latency.map_or("off".into(), |v| v.to_string())
    );
    if let Some(cfg) = &res.config {
        let _ = writeln!(s, "# config:");
        for l in cfg.lines() {
            let _ = writeln!(s, "#   {l}");
        }
    }
    for w in &res.warnings {
        let _ = writeln!(s, "# WARNING: {w}");
    }
    s
}

/// Seed 000's `timer_threadNN.txt`: the two-column histogram (every bucket
/// from 0), then (as `#` comments) the provenance and the SUMMARY block
/// exactly as systress prints it, in resolution units.
pub fn to_systress_txt(res: &RunResult, t: &ThreadResult) -> String {
    let h = &t.histogram;
    let r = h.resolution_ns;
    let mut s = String::new();
    let mut counts = h.counts.iter().peekable();
    for i in 0..h.buckets {
        let c = match counts.peek() {
            Some([b, c]) if *b == i => {
                let c = *c;
                counts.next();
                c
            }
            _ => 0,
        };
        let _ = writeln!(s, "{i:>8} {c:>8}");
    }
    s.push('\n');
    s.push_str(&provenance(res));
    let _ = writeln!(
        s,
        "# thread {}: tid {} cpu {} policy {} priority {} period {} ns; overflow {} underflow {} overruns {} missed_periods {} lost {}",
        t.index,
        t.tid,
        t.cpu.map_or("-".into(), |c| c.to_string()),
        t.policy,
        t.priority,
        t.period_ns,
        h.overflow,
        h.underflow,
        t.overruns,
        t.missed_periods,
        t.lost
    );
    let pct: Vec<String> = PERCENTILES
        .iter()
        .map(|k| format!("p{k}={}", t.percentiles.get(*k).map_or(0, |v| units(*v, r))))
        .collect();
    let _ = writeln!(s, "# percentiles ({}): {}", unit_name(r), pct.join(" "));
    s.push_str("#                            SUMMARY\n#\n");
    s.push_str("# Index    TID  Samples  L_min  L_max  L_avg  Samples_H  L_avg_H  L_med_H  L_std_H  L_mode_H\n#\n");
    let hs = &t.hist_stats;
    let _ = writeln!(
        s,
        "#{:>7} {:>5} {:>8} {:>6} {:>6} {:>6} {:>10} {:>8} {:>8} {:>8} {:>9}",
        t.index,
        t.tid,
        t.samples,
        units(t.min_ns, r),
        units(t.max_ns, r),
        units_round(t.avg_ns, r),
        hs.samples,
        units_round(hs.avg_ns, r),
        units(hs.median_ns, r),
        units_round(hs.std_ns, r),
        units(hs.mode_ns, r)
    );
    s
}

fn unit_name(res: u64) -> String {
    match res {
        1 => "ns".into(),
        1000 => "us".into(),
        1_000_000 => "ms".into(),
        r => format!("x{r}ns"),
    }
}

/// cyclictest's `-h` output: `# Histogram`, one zero-padded row per bucket
/// with one tab-separated column per thread, then the `# Total:` (samples
/// inside the histogram), `# Min/Avg/Max Latencies:`, `# Histogram
/// Overflows:` and `# Histogram Overflow at cycle number:` lines and an
/// empty line, byte for byte as cyclictest 2.x prints them. Values in
/// resolution units (µs by default, like cyclictest). One difference: the
/// rows are those of the systress histogram, `0..=histo_size` (cyclictest's
/// `-h N` prints `0..N-1`), and no cycle numbers are recorded.
pub fn to_cyclictest_hist(res: &RunResult) -> String {
    let mut s = provenance(res);
    s.push_str("# Histogram\n");
    let rows = res
        .threads
        .iter()
        .map(|t| t.histogram.buckets)
        .max()
        .unwrap_or(0);
    let per_thread: Vec<Vec<u64>> = res
        .threads
        .iter()
        .map(|t| {
            let mut v = vec![0u64; rows as usize];
            for [b, c] in &t.histogram.counts {
                // try_from: an index past usize (32-bit) is out of range,
                // not wrapped into a low row.
                if let Some(x) = usize::try_from(*b).ok().and_then(|b| v.get_mut(b)) {
                    *x = *c;
                }
            }
            v
        })
        .collect();
    for i in 0..rows as usize {
        let cols: Vec<String> = per_thread.iter().map(|v| format!("{:06}", v[i])).collect();
        let _ = writeln!(s, "{i:06} {}", cols.join("\t"));
    }
    let line = |s: &mut String, name: &str, f: &dyn Fn(&ThreadResult) -> String| {
        s.push_str(name);
        for t in &res.threads {
            s.push(' ');
            s.push_str(&f(t));
        }
        s.push('\n');
    };
    line(&mut s, "# Total:", &|t| {
        format!(
            "{:09}",
            t.histogram.counts.iter().map(|c| c[1]).sum::<u64>()
        )
    });
    line(&mut s, "# Min Latencies:", &|t| {
        format!("{:05}", units(t.min_ns, t.histogram.resolution_ns))
    });
    // cyclictest truncates the average.
    line(&mut s, "# Avg Latencies:", &|t| {
        format!(
            "{:05}",
            (t.avg_ns / t.histogram.resolution_ns.max(1) as f64) as i64
        )
    });
    line(&mut s, "# Max Latencies:", &|t| {
        format!("{:05}", units(t.max_ns, t.histogram.resolution_ns))
    });
    line(&mut s, "# Histogram Overflows:", &|t| {
        format!("{:05}", t.histogram.overflow)
    });
    s.push_str("# Histogram Overflow at cycle number:\n");
    for (i, t) in res.threads.iter().enumerate() {
        let _ = write!(s, "# Thread {i}:");
        if t.histogram.overflow > 0 {
            let _ = write!(s, " # {:05} others", t.histogram.overflow);
        }
        s.push('\n');
    }
    // cyclictest ends with an empty line too.
    s.push('\n');
    s
}

/// The CSV columns, in order.
pub fn csv_header() -> Vec<String> {
    let mut h: Vec<String> = [
        "label",
        "index",
        "tid",
        "cpu",
        "policy",
        "priority",
        "requested_policy",
        "period_ns",
        "mode",
        "samples",
        "min_ns",
        "max_ns",
        "avg_ns",
        "cur_ns",
        "samples_h",
        "avg_h_ns",
        "median_h_ns",
        "std_h_ns",
        "mode_h_ns",
        "overflow",
        "underflow",
        "overruns",
        "missed_periods",
        "lost",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    h.extend(PERCENTILES.iter().map(|k| format!("p{k}_ns")));
    h.push("corrected_samples".into());
    h.extend(PERCENTILES.iter().map(|k| format!("corrected_p{k}_ns")));
    h.extend(
        [
            "started_at",
            "duration_s",
            "end_reason",
            "kernel_release",
            "preempt",
            "hostname",
            "command",
            "warnings",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    h
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// `results.csv`: a header and one row per thread; the last columns repeat
/// the run's provenance so a row is never orphaned.
pub fn to_csv(res: &RunResult) -> String {
    let mut s = csv_header().join(",");
    s.push('\n');
    let si = &res.sysinfo;
    for t in &res.threads {
        let hs = &t.hist_stats;
        let mut row: Vec<String> = vec![
            res.label.clone().unwrap_or_default(),
            t.index.to_string(),
            t.tid.to_string(),
            t.cpu.map_or(String::new(), |c| c.to_string()),
            t.policy.clone(),
            t.priority.to_string(),
            t.requested_policy.clone().unwrap_or_default(),
            t.period_ns.to_string(),
            res.settings.mode.clone(),
            t.samples.to_string(),
            t.min_ns.to_string(),
            t.max_ns.to_string(),
            format!("{:.1}", t.avg_ns),
            t.cur_ns.to_string(),
            hs.samples.to_string(),
            format!("{:.1}", hs.avg_ns),
            hs.median_ns.to_string(),
            format!("{:.1}", hs.std_ns),
            hs.mode_ns.to_string(),
            t.histogram.overflow.to_string(),
            t.histogram.underflow.to_string(),
            t.overruns.to_string(),
            t.missed_periods.to_string(),
            t.lost.to_string(),
        ];
        row.extend(PERCENTILES.iter().map(|k| {
            t.percentiles
                .get(*k)
                .map_or(String::new(), |v| v.to_string())
        }));
        row.push(t.corrected.samples.to_string());
        row.extend(PERCENTILES.iter().map(|k| {
            t.corrected
                .percentiles
                .get(*k)
                .map_or(String::new(), |v| v.to_string())
        }));
        row.push(res.started_at.clone());
        row.push(format!("{:.3}", res.duration_s));
        row.push(res.end_reason.clone());
        row.push(si.kernel_release.clone().unwrap_or_default());
        row.push(
            si.preempt_mode
                .clone()
                .or(si.preempt_model.clone())
                .unwrap_or_default(),
        );
        row.push(si.hostname.clone().unwrap_or_default());
        row.push(res.command.join(" "));
        row.push(res.warnings.join(" | "));
        let row: Vec<String> = row.iter().map(|f| csv_field(f)).collect();
        s.push_str(&row.join(","));
        s.push('\n');
    }
    s
}
