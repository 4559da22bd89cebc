//! `rtshield measure`: cyclictest-like quick mode, no config file. The
//! options become a [`MeasureRequest`]; `rtshield_run::measure` does the
//! rest and tells [`TextPrinter`] what to print. `rtshield __measure` takes
//! the request as JSON on stdin (a campaign's cells).

use crate::cli::Global;
use rtshield_load::LoadArg;
use rtshield_measure::{display_units, display_units_avg};
use rtshield_measure::{IntervalStats, LiveDisplay, Mode, Observer};
use rtshield_results::{RunResult, DEEP_PERCENTILES, PERCENTILES};
use rtshield_run::{MeasureRequest, PartitionRequest, Plan, Printer, Summary, EXIT_FILES_MISSING};
use rtshield_sys::SysInfo;
use rtshield_text::outln;
use rtshield_vocab::InputError;
use rtshield_vocab::Policy;
use rtshield_vocab::{format_duration_ns, Dur};
use std::io::Read;
use std::path::{Path, PathBuf};

#[derive(clap::Args, Debug, Clone)]
pub(crate) struct Args {
    /// CPUs to measure on, one thread each: `1`, `2-3`, `0,2-3` or a hex mask `0x8` [default: the last online CPU].
    #[arg(long, alias = "cpu", value_name = "LIST")]
    pub(crate) cpus: Option<String>,
    /// Period of each measuring thread.
    #[arg(long, default_value = "1ms", value_name = "DUR")]
    pub(crate) period: Dur,
    /// Real-time priority (1..99) for fifo/rr.
    #[arg(long, alias = "priority", default_value_t = 98, value_name = "N")]
    pub(crate) prio: i32,
    /// Scheduling policy; fifo/rr fall back to other (and say so) when refused.
    #[arg(long, default_value = "fifo", value_name = "fifo|rr|other")]
    pub(crate) policy: Policy,
    /// How long to measure (`3s`, `1min`, `1h`); without it (and without --samples) until Ctrl-C.
    #[arg(long, value_name = "DUR")]
    pub(crate) duration: Option<Dur>,
    /// Stop each thread after N samples.
    #[arg(long, value_name = "N")]
    pub(crate) samples: Option<u64>,
    /// nanosleep (absolute clock_nanosleep), posix-timer (timer_create + signal) or interval (time between wake-ups).
    #[arg(long, default_value = "nanosleep", value_name = "MODE")]
    pub(crate) mode: Mode,
    /// What wakes the thread in interval mode: nanosleep (clock_nanosleep, the default) or posix
    /// (the signals of a periodic timer_create timer, as the torture article measures).
    #[arg(long, value_name = "nanosleep|posix")]
    pub(crate) timer: Option<String>,
    /// Largest latency kept in the histogram; above it samples count as overflow (still in min/max/avg and percentiles)
    /// [default: 1000us; in interval mode at least twice the period].
    #[arg(long, value_name = "DUR")]
    pub(crate) histo_size: Option<Dur>,
    /// Histogram and display unit: us or ns.
    #[arg(long, default_value = "us", value_name = "us|ns")]
    pub(crate) resolution: String,
    /// Refresh of the live table.
    #[arg(long, default_value = "1s", value_name = "DUR")]
    pub(crate) stats_period: Dur,
    /// Output directory [default: ./rtshield-results/<UTC timestamp>/].
    #[arg(long, value_name = "DIR")]
    pub(crate) out: Option<PathBuf>,
    /// Also write results.json to FILE.
    #[arg(long, value_name = "FILE")]
    pub(crate) json: Option<PathBuf>,
    /// Format of the --json file: rtshield (results.json) or cyclictest (the keys of `cyclictest --json`).
    #[arg(
        long,
        value_enum,
        default_value = "rtshield",
        requires = "json",
        value_name = "rtshield|cyclictest"
    )]
    pub(crate) json_format: JsonFormat,
    /// Rewrite FILE atomically every stats period with the latency so far, in Prometheus text
    /// format (node_exporter's textfile collector).
    #[arg(long, value_name = "FILE")]
    pub(crate) metrics_file: Option<PathBuf>,
    /// Write into --out (or next to --json) even if it is owned by another
    /// user or writable by others without the sticky bit.
    #[arg(long)]
    pub(crate) force_unsafe_dir: bool,
    /// Exit with status 3 when any thread's maximum exceeds DUR (for CI).
    #[arg(long, value_name = "DUR")]
    pub(crate) max_latency: Option<Dur>,
    /// No live display, only the final summary.
    #[arg(long, short)]
    pub(crate) quiet: bool,
    /// Do not lock memory (mlockall).
    #[arg(long)]
    pub(crate) no_memlock: bool,
    /// Do not hold /dev/cpu_dma_latency at 0 during the run.
    #[arg(long)]
    pub(crate) no_dma_latency: bool,
    /// Built-in load to run beside the measurement: cpu, memory, io, syscall, fork, net,
    /// hell, timers, syncio, or net:peer=ADDR (ICMP flood of another machine; root).
    #[arg(long, value_name = "NAME")]
    pub(crate) load: Option<LoadArg>,
    /// CPUs for the load, one worker per CPU [default: every online CPU not measured].
    #[arg(long, value_name = "LIST")]
    pub(crate) load_cpus: Option<String>,
    /// Measure inside a partition (cgroup v1): each measuring thread joins the `rt` cpuset, the
    /// process (main thread, built-in load) the `nrt` one; found as `run`'s `cgroup rt|nrt` is.
    #[arg(long)]
    pub(crate) partition: bool,
    /// With --partition: the rt/nrt sets under this parent cgroup (as `partition create --parent`).
    #[arg(long, value_name = "PATH", requires = "partition", value_parser = super::parse_parent)]
    pub(crate) partition_parent: Option<String>,
    /// Label of the run in reports [default: the output directory name].
    #[arg(long)]
    pub(crate) label: Option<String>,
    #[command(flatten)]
    pub(crate) store: super::StoreArgs,
    #[command(flatten)]
    pub(crate) trace: TraceArgs,
}

/// Kernel tracing (docs/trace.md): root, a private tracefs instance.
#[derive(clap::Args, Debug, Clone, Default)]
pub(crate) struct TraceArgs {
    /// Explain every wake-up later than DUR (1us..1s) from kernel trace events: spikes.json and spikes.txt in the output directory (root).
    #[arg(long, value_name = "DUR")]
    pub(crate) trace_on: Option<Dur>,
    /// With --trace-on: stop tracing and the run at the first such wake-up and keep the trace (trace.txt), like cyclictest -b.
    #[arg(long)]
    pub(crate) trace_stop: bool,
    /// Split every wake-up into timer IRQ latency and thread latency (trace events; root): two more histograms per thread in every result file.
    #[arg(long)]
    pub(crate) split: bool,
    /// Per-CPU trace buffer in KiB, 1..1048576 [default: sized from the period, at least 256]; each explained spike reads all of it.
    #[arg(long, value_name = "KIB")]
    pub(crate) trace_buffer_kb: Option<u32>,
}

impl TraceArgs {
    /// The request's tracing part (checked with the rest of the request).
    pub(crate) fn request(&self) -> rtshield_run::TraceRequest {
        rtshield_run::TraceRequest {
            on_latency_ns: self.trace_on.map(|d| d.ns()),
            stop: self.trace_stop,
            split: self.split,
            buffer_kb: self.trace_buffer_kb,
        }
    }
}

/// What `--json FILE` holds.
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum JsonFormat {
    /// results.json.
    #[default]
    Rtshield,
    /// The keys of `cyclictest --json` 2.x.
    Cyclictest,
}

impl Args {
    /// The request these options describe (checked by `rtshield_run::measure`).
    pub(crate) fn request(&self) -> MeasureRequest {
        MeasureRequest {
            cpus: self.cpus.clone(),
            period_ns: self.period.ns(),
            priority: self.prio,
            policy: self.policy,
            duration_ns: self.duration.map(|d| d.ns()),
            samples: self.samples,
            mode: self.mode,
            timer: self.timer.clone(),
            histo_size_ns: self.histo_size.map(|d| d.ns()),
            resolution: self.resolution.clone(),
            stats_period_ns: self.stats_period.ns(),
            out: self.out.clone(),
            json: self.json.clone(),
            json_format: match self.json_format {
                JsonFormat::Rtshield => rtshield_run::JsonFormat::Rtshield,
                JsonFormat::Cyclictest => rtshield_run::JsonFormat::Cyclictest,
            },
            metrics_file: self.metrics_file.clone(),
            force_unsafe_dir: self.force_unsafe_dir,
            max_latency_ns: self.max_latency.map(|d| d.ns()),
            quiet: self.quiet,
            memlock: !self.no_memlock,
            cpu_dma_latency: !self.no_dma_latency,
            load: self.load,
            load_cpus: self.load_cpus.clone(),
            partition: self.partition.then(|| PartitionRequest {
                parent: self.partition_parent.clone(),
            }),
            label: self.label.clone(),
            tags: self.store.tags.clone(),
            identify: true,
            store: self.store.store.clone(),
            no_store: self.store.no_store,
            trace: self.trace.request(),
            // A password in a store URL never reaches a file (issue 21).
            command: rtshield_text::secret::redact_args(std::env::args()),
        }
    }
}

pub(crate) fn run(args: Args, g: &Global) -> anyhow::Result<i32> {
    let request = args.request();
    with_load_swept(&request, || {
        rtshield_run::measure(
            &request,
            &g.root(),
            &mut TextPrinter::new("measure", args.quiet),
        )
    })
}

/// `f`, and with a load (whose workers are processes), rtshield as the
/// child subreaper of what they start and every descendant still running
/// after `f` ended and named (`rtshield_load::end_descendants`).
fn with_load_swept(
    request: &MeasureRequest,
    f: impl FnOnce() -> anyhow::Result<i32>,
) -> anyhow::Result<i32> {
    if request.load.is_none() {
        return f();
    }
    rtshield_load::become_subreaper()
        .map_err(|e| anyhow::anyhow!("prctl(PR_SET_CHILD_SUBREAPER): {e}"))?;
    let r = f();
    if let Some(s) = rtshield_load::end_descendants_summary() {
        rtshield_text::errln!("rtshield: measure: {s}");
    }
    r
}

/// `rtshield __measure`: one [`MeasureRequest`] as JSON on stdin (how a
/// campaign runs each cell), carried out as `measure` would.
pub(crate) fn run_request(g: &Global) -> anyhow::Result<i32> {
    // A campaign's cell: a second stop signal must not exit at once. The
    // terminal's Ctrl-C reaches the campaign and this child alike, and the
    // campaign passes it on: two at once, and the cell would be lost. The
    // campaign waits for this child, which ends on the first.
    rtshield_signals::install(rtshield_signals::Second::Waits);
    let mut text = String::new();
    std::io::stdin()
        .take(1 << 20)
        .read_to_string(&mut text)
        .map_err(|e| InputError::new(format!("__measure: cannot read the request: {e}")))?;
    let request: MeasureRequest = serde_json::from_str(&text)
        .map_err(|e| InputError::new(format!("__measure: not a measure request: {e}")))?;
    let quiet = request.quiet;
    with_load_swept(&request, || {
        rtshield_run::measure(&request, &g.root(), &mut TextPrinter::new("measure", quiet))
    })
}

/// The text of `measure` and `demo`: a header, the live table, a summary.
pub(crate) struct TextPrinter {
    /// `measure` or `demo`, in the header.
    what: &'static str,
    display: LiveDisplay,
}

impl TextPrinter {
    pub(crate) fn new(what: &'static str, quiet: bool) -> TextPrinter {
        TextPrinter {
            what,
            display: LiveDisplay::new(quiet),
        }
    }
}

impl Printer for TextPrinter {
    fn header(&mut self, plan: &Plan, sysinfo: &SysInfo) {
        print_header(plan, sysinfo, self.what);
    }

    fn interval(&mut self, s: &IntervalStats) -> bool {
        self.display.interval(s)
    }

    fn live_end(&mut self) {
        self.display.finish();
    }

    fn summary(&mut self, s: &Summary<'_>) {
        print_summary(s.measurement, s.result, s.out, s.json, s.missing);
        // What un-shielded the measured CPUs during the run (nothing
        // printed when nothing changed: results.json says it was watched).
        if !s.result.drift.events().is_empty() {
            outln!("{}", s.result.drift.summary());
            for e in s.result.drift.events() {
                outln!("  {}", e.line());
            }
        }
        if s.files_missing {
            outln!(
                "WARNING: some result files are not in {} (see the messages above; exit status {})",
                s.out.display(),
                EXIT_FILES_MISSING
            );
        }
        if let Some(limit) = s.max_latency_ns {
            let worst = s.measurement.max_latency_ns();
            // The verdict recorded in results.json (a thread that measured
            // nothing fails too).
            let failed = s.result.verdict.as_ref().is_some_and(|v| !v.passed);
            if failed {
                outln!(
                    "FAIL: maximum latency {} exceeds --max-latency {} (exit status 3)",
                    fmt_ns(worst),
                    format_duration_ns(limit)
                );
            } else {
                outln!(
                    "OK: maximum latency {} within --max-latency {}",
                    fmt_ns(worst),
                    format_duration_ns(limit)
                );
            }
        }
    }
}

/// What is about to be measured, and the warnings that change its meaning.
fn print_header(plan: &Plan, sysinfo: &SysInfo, what: &str) {
    let spec = &plan.spec;
    let t0 = &spec.threads[0];
    let cpus: Vec<String> = spec
        .threads
        .iter()
        .map(|t| t.cpu.map_or("-".into(), |c| c.to_string()))
        .collect();
    outln!(
        "rtshield {what}: {} thread{} on CPU {}, period {}, SCHED_{}{}, {} mode, {}",
        spec.threads.len(),
        if spec.threads.len() == 1 { "" } else { "s" },
        cpus.join(","),
        format_duration_ns(t0.period_ns),
        t0.policy.name().to_uppercase(),
        if t0.policy.is_rt() {
            format!(" {}", t0.priority)
        } else {
            String::new()
        },
        spec.mode,
        match (spec.duration_ns, spec.samples) {
            (Some(d), _) => format!("for {}", format_duration_ns(d)),
            (None, Some(n)) => format!("{n} samples per thread"),
            (None, None) => "until Ctrl-C".into(),
        }
    );
    if t0.policy.is_rt() && sysinfo.fifo_permitted == Some(false) {
        outln!(
            "WARNING: SCHED_{} is not permitted: measuring under SCHED_OTHER. {}",
            t0.policy.name().to_uppercase(),
            sysinfo.fifo_refusal.as_deref().unwrap_or("")
        );
    }
    if let Some(l) = &plan.load {
        outln!(
            "load: built-in '{}' on CPU {}",
            l.kind,
            l.cpus.as_ref().map_or("all".into(), |c| c.to_list())
        );
    }
}

fn fmt_ns(ns: i64) -> String {
    if ns.abs() >= 10_000 {
        format!("{:.1}us", ns as f64 / 1000.0)
    } else {
        format!("{ns}ns")
    }
}

/// The end-of-run spike summary: one line per explained spike.
fn print_trace(r: &RunResult) {
    let Some(t) = &r.trace else { return };
    outln!();
    outln!("Trace: {}", rtshield_results::spikes_summary(t));
    for (i, s) in t.spikes.iter().enumerate().take(10) {
        outln!(
            "  spike {}: thread `{}` (tid {}) CPU {}, late {}: {}",
            i + 1,
            s.comm,
            s.pid,
            s.cpu,
            rtshield_trace::fmt_ns(s.latency_ns),
            s.verdict
        );
    }
    if t.spikes.len() > 10 {
        outln!("  ... {} more in spikes.txt", t.spikes.len() - 10);
    }
    for e in t.errors.iter().take(3) {
        outln!("  not explained: {e}");
    }
    if t.split {
        for th in &r.threads {
            if let Some(line) = split_line(th) {
                outln!("{line}");
            }
        }
    }
}

/// A thread's `--split` line of the summary: each part's p50, p99 and
/// maximum (`?` when unknown: a percentile needs 100 split samples for p99,
/// a maximum at least one), then the samples not split, by reason.
fn split_line(th: &rtshield_results::ThreadResult) -> Option<String> {
    let sp = th.split.as_ref()?;
    let part = |p: &rtshield_results::LatencyPart| {
        let pct = |k: &str| p.percentiles.get(k).map_or("?".into(), |v| fmt_ns(*v));
        format!(
            "p50 {} p99 {} max {}",
            pct("50"),
            pct("99"),
            p.max_ns.map_or("?".into(), fmt_ns)
        )
    };
    let mut line = format!(
        "  thread {} split over {} wake-ups: IRQ latency {}; thread latency {}",
        th.index,
        sp.samples,
        part(&sp.irq),
        part(&sp.thread)
    );
    match &sp.unsplit {
        Some(u) if u.values().any(|n| *n > 0) => {
            let by: Vec<String> = u
                .iter()
                .filter(|(_, n)| **n > 0)
                .map(|(why, n)| format!("{n} {why}"))
                .collect();
            line.push_str(&format!("; not split: {}", by.join(", ")));
        }
        Some(_) => line.push_str("; not split: none"),
        None => {}
    }
    Some(line)
}

/// Where the results are, never claiming a file is in `out` when it is
/// not: the files missing there are named, with where they went.
fn results_line(out: &Path, json: Option<&Path>, missing: &[rtshield_run::Missing]) -> String {
    let also = json.map_or(String::new(), |j| format!(", and {}", j.display()));
    let files = [
        "results.json",
        "results.csv",
        "histogram.txt",
        "timeline.csv",
    ];
    let lost = |f: &str| {
        missing
            .iter()
            .any(|m| m.wanted.file_name() == Some(f.as_ref()))
    };
    let there: Vec<&str> = files.iter().copied().filter(|f| !lost(f)).collect();
    if missing.is_empty() {
        return format!("Results in {}/ ({}){also}", out.display(), there.join(", "));
    }
    let mut s = if there.is_empty() {
        format!("No result file in {}/", out.display())
    } else {
        format!("Some results in {}/ ({})", out.display(), there.join(", "))
    };
    s.push_str(&also);
    for m in missing {
        let name = m
            .wanted
            .file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default();
        match &m.fallback {
            Some(at) => s.push_str(&format!("\n  {name}: written to {} instead", at.display())),
            None => s.push_str(&format!("\n  {name}: LOST (see the messages above)")),
        }
    }
    s
}

fn print_summary(
    m: &rtshield_measure::Measurement,
    r: &RunResult,
    out: &Path,
    json: Option<&Path>,
    missing: &[rtshield_run::Missing],
) {
    let res = r.settings.resolution_ns;
    let unit = if res == 1 { "ns" } else { "us" };
    outln!();
    // The live table's layout, `?` where the result does not say.
    outln!("{}", rtshield_measure::TABLE_HEADER);
    for t in &r.threads {
        outln!("{}", rtshield_measure::result_row(t, res));
    }
    outln!();
    // The deep percentiles only when a thread had the samples for them.
    let keys: Vec<&str> = PERCENTILES
        .iter()
        .chain(
            DEEP_PERCENTILES
                .iter()
                .filter(|k| r.threads.iter().any(|t| t.percentiles.contains_key(**k))),
        )
        .copied()
        .collect();
    let mut head = format!("Percentiles ({unit})      ");
    for k in &keys {
        head.push_str(&format!(" {:>8}", format!("p{k}")));
    }
    head.push_str(&format!(" {:>8}", "max"));
    outln!("{head}");
    for t in &r.threads {
        let mut row = format!(
            "  thread {:<2} CPU {:<6}",
            t.index,
            t.cpu.map_or("-".into(), |c| c.to_string())
        );
        for k in &keys {
            let v = t
                .percentiles
                .get(*k)
                .map_or("-".into(), |v| display_units(*v, res).to_string());
            row.push_str(&format!(" {v:>8}"));
        }
        // A thread that measured nothing: `?`, never 0.
        let max = t
            .max_ns
            .map_or("?".into(), |m| display_units(m, res).to_string());
        row.push_str(&format!(" {max:>8}"));
        outln!("{row}");
    }
    outln!();
    for t in &r.threads {
        let (Some(h), Some(hist), Some(c)) = (&t.hist_stats, &t.histogram, &t.corrected) else {
            continue;
        };
        outln!(
            "thread {}: histogram 0..{} {unit}: Samples_H {} L_avg_H {} L_med_H {} L_std_H {} L_mode_H {}, overflow {}",
            t.index,
            hist.buckets.saturating_sub(1),
            h.samples,
            display_units_avg(h.avg_ns, res),
            display_units(h.median_ns, res),
            display_units_avg(h.std_ns, res),
            display_units(h.mode_ns, res),
            hist.overflow
        );
        // "-": too few samples for the percentile.
        let cp = |k: &str| {
            c.percentiles
                .get(k)
                .map_or("-".into(), |v| display_units(*v, res).to_string())
        };
        let q = |v: Option<u64>| rtshield_results::or_unknown(v, "?");
        outln!(
            "          overruns {} (missed periods {}), lost {}; corrected for missed periods: {} samples, p99.9 {} {unit}, p99.99 {} {unit}",
            q(t.overruns),
            q(t.missed_periods),
            q(t.lost),
            c.samples,
            cp("99.9"),
            cp("99.99"),
        );
        outln!(
            "          policy {}{}",
            rtshield_results::or_unknown(t.policy, "?"),
            t.requested_policy
                .as_ref()
                .map_or(String::new(), |p| format!(" (asked {p}: FALLBACK)"))
        );
    }
    for w in &r.warnings {
        outln!("WARNING: {w}");
    }
    print_trace(r);
    outln!();
    for t in &r.threads {
        outln!(
            "Statistics for timer_thread[{}] in '{}'",
            t.index,
            out.join(rtshield_results::systress_file_name(t.index))
                .display()
        );
    }
    outln!("{}", results_line(out, json, missing));
    let secs = m.elapsed_ns / 1_000_000_000;
    outln!(
        "Total elapsed time: {} s, {} nanoseconds (ended by {})",
        secs,
        m.elapsed_ns % 1_000_000_000,
        rtshield_results::or_unknown(r.end_reason.as_ref(), "?")
    );
}

#[cfg(test)]
mod tests {
    use super::split_line;
    use rtshield_results::{example_result, LatencyPart, SplitResult};

    fn part(n: u64) -> LatencyPart {
        let mut h = rtshield_measure::ThreadHistograms::new(100_000, 1000);
        let mut e = rtshield_results::MinMaxSum::default();
        for i in 0..n {
            h.record(1000 + i as i64, 0, 0);
            e.add(1000 + i as i64);
        }
        LatencyPart {
            min_ns: e.min(),
            max_ns: e.max(),
            avg_ns: e.mean(),
            histogram: h.to_histogram(),
            percentiles: h.percentiles(),
        }
    }

    /// Issue 22 item 10 (review): with fewer than 100 split samples p99 is
    /// absent from the result (schema 2), and with none every figure is:
    /// the summary says `?` where it used to panic on the missing key.
    #[test]
    fn a_split_of_few_or_no_samples_prints_unknown_and_the_reasons() {
        let mut r = example_result();
        let t = &mut r.threads[0];
        t.split = Some(SplitResult {
            samples: 50,
            unsplit: Some([("lost_events".to_string(), 7), ("overrun".to_string(), 0)].into()),
            irq: part(50),
            thread: part(50),
        });
        let line = split_line(t).unwrap();
        assert!(
            line.contains(" p99 ? max 1049ns; thread latency p50 "),
            "{line}"
        );
        assert!(!line.contains("p50 ?"), "{line}");
        assert!(line.ends_with("; not split: 7 lost_events"), "{line}");
        t.split = Some(SplitResult {
            samples: 0,
            unsplit: Some([("not_traced".to_string(), 50)].into()),
            irq: part(0),
            thread: part(0),
        });
        let line = split_line(t).unwrap();
        assert!(
            line.contains("split over 0 wake-ups: IRQ latency p50 ? p99 ? max ?; thread latency p50 ? p99 ? max ?"),
            "{line}"
        );
        assert!(line.ends_with("; not split: 50 not_traced"), "{line}");
    }
}
