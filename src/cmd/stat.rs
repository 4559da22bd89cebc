//! `rtshield stat [--interval 1s] [--count N] [--pids …] [--json]`,
//! `stat --record FILE --duration 60s`, `stat --compare A B`.

use crate::cli::Global;
use rtshield_audit::{render_sample, summarize, Sample, Sampler};
use rtshield_results::{compare_stat_records, Metric, StatRecord, ThreadMean, STAT_SCHEMA};
use rtshield_sys::SysInfo;
use rtshield_text::{errln, out, outln};
use rtshield_vocab::Dur;
use rtshield_vocab::InputError;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// Time between samples (`1s`, `200ms`).
    #[arg(long, value_name = "DURATION", default_value = "1s")]
    pub(crate) interval: Dur,
    /// Stop after N samples (default: until interrupted).
    #[arg(long, value_name = "N")]
    pub(crate) count: Option<u64>,
    /// Only these processes' threads (comma-separated PIDs).
    #[arg(long, value_delimiter = ',', value_name = "PID,…")]
    pub(crate) pids: Option<Vec<u32>>,
    /// How many threads to list per sample, busiest first (0 = every one that switched).
    #[arg(long, value_name = "N", default_value_t = 15)]
    pub(crate) top: usize,
    /// One JSON object per sample and line (JSON Lines).
    #[arg(long)]
    pub(crate) json: bool,
    /// Record the mean of every figure over --duration into FILE (schema rtshield.stat/1), for --compare.
    #[arg(
        long,
        value_name = "FILE",
        requires = "duration",
        conflicts_with = "compare"
    )]
    pub(crate) record: Option<PathBuf>,
    /// How long to record (with --record): `60s`, `5min`.
    #[arg(long, value_name = "DUR", requires = "record")]
    pub(crate) duration: Option<Dur>,
    /// Name of the recording in comparisons [default: kernel release and preemption model].
    #[arg(long, requires = "record")]
    pub(crate) label: Option<String>,
    /// Compare two recordings: a table of each figure in A and B and the ratio B/A.
    #[arg(long, num_args = 2, value_names = ["A", "B"])]
    pub(crate) compare: Option<Vec<PathBuf>>,
}

/// `--interval` range, `--count` and `--top` maxima (docs/ranges.md).
const MIN_INTERVAL_NS: u64 = 10_000_000;
const MAX_INTERVAL_NS: u64 = 3_600_000_000_000;
const MAX_COUNT: u64 = 1_000_000_000;
const MAX_TOP: usize = 100_000;

/// Longest recording (docs/ranges.md).
const MAX_RECORD_NS: u64 = 7 * 86_400_000_000_000;

pub(crate) fn run(args: Args, g: &Global) -> anyhow::Result<i32> {
    if let Some(files) = &args.compare {
        let a = StatRecord::read(&files[0])?;
        let b = StatRecord::read(&files[1])?;
        out!("{}", compare_stat_records(&a, &b));
        return Ok(0);
    }
    let root = g.root();
    let count = checked_count(&args, &root)?;
    // The record's directory is opened and checked before anything is
    // sampled (adversary round 5, F14: one that would be refused was
    // refused after the whole --duration), and written through later.
    let record = match &args.record {
        Some(f)
            if f.parent()
                .is_some_and(|d| !d.as_os_str().is_empty() && !d.is_dir()) =>
        {
            return Err(
                InputError::new(format!("--record {}: no such directory", f.display())).into(),
            )
        }
        Some(f) => Some(
            rtshield_safefs::open_file_dir(f, rtshield_safefs::DirPolicy::Strict)
                .map_err(|e| rtshield_run::refusal(e.for_option("--record")))?,
        ),
        None => None,
    };
    // A stop signal ends the sampling like `measure`'s: what was sampled
    // is recorded, and the signal named (F05: each of them killed it, no
    // file, no message). A second one while the file is written exits.
    let stop = rtshield_signals::install(rtshield_signals::Second::Exits);
    let started = std::time::SystemTime::now();
    let t0 = std::time::Instant::now();
    let mut s = Sampler::new(root.clone(), args.pids, args.top);
    let mut kept = Vec::new();
    let mut n = 0;
    while !matches!(count, Some(c) if n >= c) {
        if !sleep_unless_stopped(args.interval.as_std(), stop) {
            break;
        }
        let sample = s.sample();
        if args.json {
            println!("{}", serde_json::to_string(&sample)?);
        } else {
            outln!("{}", render_sample(&sample));
        }
        if args.record.is_some() {
            kept.push(sample);
        }
        n += 1;
    }
    if let Some(sig) = rtshield_signals::received() {
        errln!(
            "rtshield: stopped by {} after {n} sample(s){}",
            rtshield_signals::name(sig).unwrap_or("a signal"),
            if record.is_some() {
                "; recording what was sampled"
            } else {
                ""
            }
        );
    }
    if let (Some(file), Some((dir, name))) = (&args.record, &record) {
        write_record(
            file,
            (dir, name),
            args.label.clone(),
            &root,
            started,
            t0,
            &kept,
        )?;
    }
    Ok(0)
}

/// Sleep `d`, in slices, unless a stop signal comes: false when one did.
fn sleep_unless_stopped(d: std::time::Duration, stop: &std::sync::atomic::AtomicBool) -> bool {
    use std::sync::atomic::Ordering;
    let end = std::time::Instant::now() + d;
    loop {
        if stop.load(Ordering::SeqCst) {
            return false;
        }
        let now = std::time::Instant::now();
        if now >= end {
            return true;
        }
        std::thread::sleep((end - now).min(std::time::Duration::from_millis(50)));
    }
}

/// The number of samples to take (`None`: until interrupted), once every
/// option is checked against its range (bad input: exit 2, nothing
/// sampled).
fn checked_count(args: &Args, root: &rtshield_sys::Root) -> anyhow::Result<Option<u64>> {
    if args.interval.ns() < MIN_INTERVAL_NS || args.interval.ns() > MAX_INTERVAL_NS {
        return Err(InputError::new(format!(
            "--interval {}: must be between 10ms and 1h",
            args.interval
        ))
        .into());
    }
    if let Some(c) = args.count {
        if c == 0 || c > MAX_COUNT {
            return Err(
                InputError::new(format!("--count {c}: must be between 1 and {MAX_COUNT}")).into(),
            );
        }
    }
    if args.top > MAX_TOP {
        return Err(InputError::new(format!(
            "--top {}: must be at most {MAX_TOP} (0 = every thread)",
            args.top
        ))
        .into());
    }
    for p in args.pids.iter().flatten() {
        if !rtshield_sys::task_exists(root, *p) {
            return Err(InputError::new(format!("--pids: no process {p}")).into());
        }
    }
    let mut count = args.count;
    if let Some(d) = args.duration {
        if d.ns() == 0 || d.ns() > MAX_RECORD_NS {
            return Err(
                InputError::new(format!("--duration {d}: must be > 0 and at most 7d")).into(),
            );
        }
        if d.ns() < args.interval.ns() {
            return Err(InputError::new(format!(
                "--duration {d}: shorter than --interval {}",
                args.interval
            ))
            .into());
        }
        count = Some(d.ns() / args.interval.ns());
    }
    Ok(count)
}

/// Write the `--record` file: the samples' summary, labelled.
fn write_record(
    file: &std::path::Path,
    (dir, name): (&rtshield_safefs::SafeDir, &String),
    label: Option<String>,
    root: &rtshield_sys::Root,
    started: std::time::SystemTime,
    t0: std::time::Instant,
    kept: &[Sample],
) -> anyhow::Result<()> {
    let si = SysInfo::collect(root, false);
    let sum = summarize(kept);
    let rec = StatRecord {
        schema: STAT_SCHEMA.into(),
        label: label.unwrap_or_else(|| {
            format!(
                "{} {}",
                si.kernel_release.as_deref().unwrap_or("?"),
                si.preempt_model.as_deref().unwrap_or("?")
            )
        }),
        started_at: rtshield_measure::rfc3339_utc(started),
        duration_s: t0.elapsed().as_secs_f64(),
        samples: kept.len() as u64,
        kernel_release: si.kernel_release.clone(),
        preempt_model: si.preempt_model.clone(),
        metrics: sum
            .metrics
            .into_iter()
            .map(|(name, value)| Metric { name, value })
            .collect(),
        threads: sum
            .threads
            .into_iter()
            .take(50)
            .map(|(name, cpu_pct, cswch_per_s, nvcswch_per_s)| ThreadMean {
                name,
                cpu_pct,
                cswch_per_s,
                nvcswch_per_s,
            })
            .collect(),
    };
    dir.write(name, rec.to_json().as_bytes())
        .map_err(|e| rtshield_run::refusal(e.for_option("--record")))?;
    errln!(
        "rtshield: recorded {} sample(s) to {} (compare with `rtshield stat --compare A B`)",
        rec.samples,
        file.display()
    );
    Ok(())
}
