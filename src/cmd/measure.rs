//! `rtshield measure`: cyclictest-like quick mode, no config file.

use crate::cli::Global;
use rtshield_load::{LoadArg, LoadSpec};
use rtshield_measure::display::{render_table, units, units_avg};
use rtshield_measure::{signals, LiveDisplay, MeasureSpec, Measurement, Mode};
use rtshield_results::{RunResult, DEEP_PERCENTILES, PERCENTILES};
use rtshield_run::{pipeline, single};
use rtshield_sys::sched::Policy;
use rtshield_sys::units::{format_duration_ns, Dur};
use rtshield_sys::{CpuSet, DirPolicy, InputError, SysInfo};
use std::path::{Path, PathBuf};

#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// CPUs to measure on, one thread each: `1`, `2-3`, `0,2-3` or a hex mask `0x8` [default: the last online CPU].
    #[arg(long, alias = "cpu", value_name = "LIST")]
    pub cpus: Option<String>,
    /// Period of each measuring thread.
    #[arg(long, default_value = "1ms", value_name = "DUR")]
    pub period: Dur,
    /// Real-time priority (1..99) for fifo/rr.
    #[arg(long, alias = "priority", default_value_t = 98, value_name = "N")]
    pub prio: i32,
    /// Scheduling policy; fifo/rr fall back to other (and say so) when refused.
    #[arg(long, default_value = "fifo", value_name = "fifo|rr|other")]
    pub policy: Policy,
    /// How long to measure (`3s`, `1min`, `1h`); without it (and without --samples) until Ctrl-C.
    #[arg(long, value_name = "DUR")]
    pub duration: Option<Dur>,
    /// Stop each thread after N samples.
    #[arg(long, value_name = "N")]
    pub samples: Option<u64>,
    /// nanosleep (absolute clock_nanosleep), posix-timer (timer_create + signal) or interval (time between wake-ups).
    #[arg(long, default_value = "nanosleep", value_name = "MODE")]
    pub mode: Mode,
    /// What wakes the thread in interval mode: nanosleep (clock_nanosleep, the default) or posix
    /// (the signals of a periodic timer_create timer, as the torture article measures).
    #[arg(long, value_name = "nanosleep|posix")]
    pub timer: Option<String>,
    /// Largest latency kept in the histogram; above it samples count as overflow (still in min/max/avg and percentiles)
    /// [default: 1000us; in interval mode at least twice the period].
    #[arg(long, value_name = "DUR")]
    pub histo_size: Option<Dur>,
    /// Histogram and display unit: us or ns.
    #[arg(long, default_value = "us", value_name = "us|ns")]
    pub resolution: String,
    /// Refresh of the live table.
    #[arg(long, default_value = "1s", value_name = "DUR")]
    pub stats_period: Dur,
    /// Output directory [default: ./rtshield-results/<UTC timestamp>/].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Also write results.json to FILE.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Format of the --json file: rtshield (results.json) or cyclictest (the keys of `cyclictest --json`).
    #[arg(
        long,
        value_enum,
        default_value = "rtshield",
        requires = "json",
        value_name = "rtshield|cyclictest"
    )]
    pub json_format: JsonFormat,
    /// Rewrite FILE atomically every stats period with the latency so far, in Prometheus text
    /// format (node_exporter's textfile collector).
    #[arg(long, value_name = "FILE")]
    pub metrics_file: Option<PathBuf>,
    /// Write into --out (or next to --json) even if it is owned by another
    /// user or writable by others without the sticky bit.
    #[arg(long)]
    pub force_unsafe_dir: bool,
    /// Exit with status 3 when any thread's maximum exceeds DUR (for CI).
    #[arg(long, value_name = "DUR")]
    pub max_latency: Option<Dur>,
    /// No live display, only the final summary.
    #[arg(long, short)]
    pub quiet: bool,
    /// Do not lock memory (mlockall).
    #[arg(long)]
    pub no_memlock: bool,
    /// Do not hold /dev/cpu_dma_latency at 0 during the run.
    #[arg(long)]
    pub no_dma_latency: bool,
    /// Built-in load to run beside the measurement: cpu, memory, io, syscall, fork, net,
    /// hell, timers, syncio, or net:peer=ADDR (ICMP flood of another machine; root).
    #[arg(long, value_name = "NAME")]
    pub load: Option<LoadArg>,
    /// CPUs for the load, one worker per CPU [default: every online CPU not measured].
    #[arg(long, value_name = "LIST")]
    pub load_cpus: Option<String>,
    /// Measure inside a partition (cgroup v1): each measuring thread joins the `rt` cpuset, the
    /// process (main thread, built-in load) the `nrt` one; found as `run`'s `cgroup rt|nrt` is.
    #[arg(long)]
    pub partition: bool,
    /// With --partition: the rt/nrt sets under this parent cgroup (as `partition create --parent`).
    #[arg(long, value_name = "PATH", requires = "partition")]
    pub partition_parent: Option<String>,
    /// Label of the run in reports [default: the output directory name].
    #[arg(long)]
    pub label: Option<String>,
    #[command(flatten)]
    pub store: super::StoreArgs,
    #[command(flatten)]
    pub trace: TraceArgs,
}

/// Kernel tracing (docs/trace.md): root, a private tracefs instance.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct TraceArgs {
    /// Explain every wake-up later than DUR (1us..1s) from kernel trace events: spikes.json and spikes.txt in the output directory (root).
    #[arg(long, value_name = "DUR")]
    pub trace_on: Option<Dur>,
    /// With --trace-on: stop tracing and the run at the first such wake-up and keep the trace (trace.txt), like cyclictest -b.
    #[arg(long)]
    pub trace_stop: bool,
    /// Split every wake-up into timer IRQ latency and thread latency (trace events; root): two more histograms per thread in every result file.
    #[arg(long)]
    pub split: bool,
    /// Per-CPU trace buffer in KiB, 1..1048576 [default: 256]; each explained spike reads all of it.
    #[arg(long, value_name = "KIB")]
    pub trace_buffer_kb: Option<u32>,
}

impl TraceArgs {
    /// The engine's tracing request, checked against docs/ranges.md.
    pub fn spec(&self) -> anyhow::Result<Option<rtshield_measure::TraceSpec>> {
        use rtshield_config::model as m;
        if let Some(d) = self.trace_on {
            if !(m::TRACE_LATENCY_MIN_NS..=m::TRACE_LATENCY_MAX_NS).contains(&d.ns()) {
                return Err(
                    InputError::new(format!("--trace-on {d}: must be within 1us..1s")).into(),
                );
            }
        }
        if self.trace_stop && self.trace_on.is_none() {
            return Err(InputError::new("--trace-stop needs --trace-on DUR").into());
        }
        if let Some(kb) = self.trace_buffer_kb {
            if !(m::TRACE_BUFFER_KB_MIN..=m::TRACE_BUFFER_KB_MAX).contains(&kb) {
                return Err(InputError::new(format!(
                    "--trace-buffer-kb {kb}: must be within {}..{}",
                    m::TRACE_BUFFER_KB_MIN,
                    m::TRACE_BUFFER_KB_MAX
                ))
                .into());
            }
            if self.trace_on.is_none() && !self.split {
                return Err(
                    InputError::new("--trace-buffer-kb needs --trace-on DUR or --split").into(),
                );
            }
        }
        Ok(
            (self.trace_on.is_some() || self.split).then(|| rtshield_measure::TraceSpec {
                on_latency_ns: self.trace_on.map(|d| d.ns()),
                stop: self.trace_stop,
                split: self.split,
                buffer_kb: self
                    .trace_buffer_kb
                    .unwrap_or(rtshield_measure::TraceSpec::DEFAULT_BUFFER_KB),
            }),
        )
    }
}

/// What `--json FILE` holds.
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum JsonFormat {
    /// results.json.
    #[default]
    Rtshield,
    /// The keys of `cyclictest --json` 2.x.
    Cyclictest,
}

/// The CPUs this process may run on (its affinity mask, which `taskset`
/// or a cpuset may have narrowed), not the machine's online CPUs.
fn allowed_cpus() -> CpuSet {
    rtshield_sys::cpus::allowed().unwrap_or_else(|_| CpuSet::single(0))
}

fn parse_cpus(flag: &str, s: &str) -> anyhow::Result<CpuSet> {
    let set = CpuSet::parse(s).map_err(|e| InputError::new(format!("{flag} {s}: {e}")))?;
    if set.is_empty() {
        return Err(InputError::new(format!("{flag} {s}: empty CPU list")).into());
    }
    Ok(set)
}

/// Everything `execute` needs, from `measure` or `demo`.
pub struct Plan {
    pub spec: MeasureSpec,
    /// None: a fresh `rtshield-results/<UTC timestamp>[-N]`.
    pub out: Option<PathBuf>,
    pub policy: DirPolicy,
    pub json: Option<PathBuf>,
    pub json_format: JsonFormat,
    /// `--metrics-file`.
    pub metrics_file: Option<PathBuf>,
    pub max_latency_ns: Option<u64>,
    pub quiet: bool,
    pub load: Option<LoadSpec>,
    pub label: Option<String>,
    pub tags: std::collections::BTreeMap<String, String>,
    /// Where the finished run is stored (`--store`, `--no-store`).
    pub store: super::StoreArgs,
}

/// Documented ranges (docs/ranges.md), checked before anything starts.
const MAX_PERIOD_NS: u64 = 3_600_000_000_000;
const MAX_DURATION_NS: u64 = 365 * 86_400_000_000_000;
const MAX_HISTO_SIZE_NS: u64 = 1_000_000_000;
const MAX_SAMPLES: u64 = 1_000_000_000_000;

impl Args {
    /// `--mode` combined with `--timer`: `interval` + `posix` is the
    /// torture article's method (interval between a timer's signals).
    pub fn mode(&self) -> anyhow::Result<Mode> {
        let posix = match self.timer.as_deref().map(str::trim) {
            None => return Ok(self.mode),
            Some("posix" | "posix-timer") => true,
            Some("nanosleep" | "clock_nanosleep") => false,
            Some(other) => {
                return Err(InputError::new(format!(
                    "--timer {other}: expected nanosleep or posix"
                ))
                .into())
            }
        };
        match (self.mode, posix) {
            (Mode::Interval | Mode::IntervalPosix, true) => Ok(Mode::IntervalPosix),
            (Mode::Interval | Mode::IntervalPosix, false) => Ok(Mode::Interval),
            (Mode::Nanosleep | Mode::PosixTimer, true) => Ok(Mode::PosixTimer),
            (Mode::Nanosleep | Mode::PosixTimer, false) => Ok(Mode::Nanosleep),
        }
    }

    pub fn plan(&self) -> anyhow::Result<Plan> {
        let allowed = allowed_cpus();
        let cpus = match &self.cpus {
            Some(s) => parse_cpus("--cpus", s)?,
            None => CpuSet::single(allowed.last().unwrap_or(0)),
        };
        // --partition: this process may be in nrt already; the measured
        // CPUs are the rt set's (checked when each thread pins itself).
        if let Some(bad) = cpus
            .iter()
            .find(|c| !self.partition && !allowed.contains(*c))
        {
            return Err(InputError::new(format!(
                "--cpus: CPU {bad} is not available (allowed to this process: {})",
                allowed.to_list()
            ))
            .into());
        }
        let period = self.period.ns();
        if period < 1_000 {
            return Err(
                InputError::new(format!("--period {}: must be at least 1us", self.period)).into(),
            );
        }
        let resolution_ns = match self.resolution.trim() {
            "us" | "µs" => 1_000,
            "ns" => 1,
            other => {
                return Err(
                    InputError::new(format!("--resolution {other}: expected us or ns")).into(),
                )
            }
        };
        if self.policy.is_rt() && !(1..=99).contains(&self.prio) {
            return Err(InputError::new(format!(
                "--prio {}: must be within 1..99 for {}",
                self.prio, self.policy
            ))
            .into());
        }
        if !matches!(self.policy, Policy::Fifo | Policy::Rr | Policy::Other) {
            return Err(InputError::new(format!(
                "--policy {}: expected fifo, rr or other",
                self.policy
            ))
            .into());
        }
        if period > MAX_PERIOD_NS {
            return Err(
                InputError::new(format!("--period {}: must be at most 1h", self.period)).into(),
            );
        }
        if self.samples == Some(0) {
            return Err(InputError::new("--samples 0: must be at least 1").into());
        }
        if let Some(n) = self.samples.filter(|n| *n > MAX_SAMPLES) {
            return Err(
                InputError::new(format!("--samples {n}: must be at most {MAX_SAMPLES}")).into(),
            );
        }
        if let Some(d) = self.duration {
            if d.ns() == 0 || d.ns() > MAX_DURATION_NS {
                return Err(InputError::new(format!(
                    "--duration {d}: must be > 0 and at most 365d"
                ))
                .into());
            }
        }

        let cpu_list: Vec<u32> = cpus.iter().collect();
        let mut spec = MeasureSpec::new(&cpu_list, period);
        for t in &mut spec.threads {
            t.policy = self.policy;
            t.priority = self.prio;
        }
        spec.mode = self.mode()?;
        spec.duration_ns = self.duration.map(|d| d.ns());
        spec.samples = self.samples;
        let default_histo = if spec.mode.is_interval() {
            (2 * period).max(1_000_000)
        } else {
            1_000_000
        };
        spec.histo_size_ns = self.histo_size.map_or(default_histo, |d| d.ns());
        if spec.histo_size_ns / resolution_ns > 10_000_000 {
            return Err(InputError::new(format!(
                "--histo-size {}: more than 10 million buckets at {} resolution",
                format_duration_ns(spec.histo_size_ns),
                self.resolution
            ))
            .into());
        }
        if let Some(h) = self.histo_size {
            if h.ns() == 0 || h.ns() > MAX_HISTO_SIZE_NS {
                return Err(InputError::new(format!(
                    "--histo-size {h}: must be > 0 and at most 1s"
                ))
                .into());
            }
        }
        spec.resolution_ns = resolution_ns;
        // The same ranges as the `stats.period` key and `export --max-latency`.
        let sp = self.stats_period.ns();
        if !(rtshield_config::model::STATS_PERIOD_MIN_NS
            ..=rtshield_config::model::STATS_PERIOD_MAX_NS)
            .contains(&sp)
        {
            return Err(InputError::new(format!(
                "--stats-period {}: must be between 10ms and 1h",
                self.stats_period
            ))
            .into());
        }
        if let Some(l) = self.max_latency {
            if l.ns() == 0 || l.ns() > super::export::MAX_LIMIT_NS {
                return Err(InputError::new(format!(
                    "--max-latency {l}: must be more than 0 and at most 1h"
                ))
                .into());
            }
        }
        spec.stats_period_ns = sp;
        spec.memlock = !self.no_memlock;
        spec.cpu_dma_latency = !self.no_dma_latency;
        spec.trace = self.trace.spec()?;

        let load = match self.load {
            None => {
                if self.load_cpus.is_some() {
                    return Err(InputError::new("--load-cpus needs --load NAME").into());
                }
                None
            }
            Some(LoadArg { kind, peer }) => {
                let lc = match &self.load_cpus {
                    Some(s) => parse_cpus("--load-cpus", s)?,
                    None => {
                        let rest = allowed.difference(&cpus);
                        if rest.is_empty() {
                            allowed.clone()
                        } else {
                            rest
                        }
                    }
                };
                let mut ls = LoadSpec::new(kind, Some(lc));
                ls.peer = peer;
                Some(ls)
            }
        };
        let out = self.out.clone();
        let policy = if self.force_unsafe_dir {
            DirPolicy::AllowUnsafe
        } else {
            DirPolicy::Strict
        };
        let mut tags = std::collections::BTreeMap::new();
        tags.insert(
            "load".into(),
            load.as_ref().map_or("idle", |l| l.kind.name()).into(),
        );
        Ok(Plan {
            spec,
            out,
            policy,
            json: self.json.clone(),
            json_format: self.json_format,
            metrics_file: self.metrics_file.clone(),
            max_latency_ns: self.max_latency.map(|d| d.ns()),
            quiet: self.quiet,
            load,
            label: self.label.clone(),
            tags,
            store: self.store.clone(),
        })
    }
}

pub fn run(args: Args, g: &Global) -> anyhow::Result<i32> {
    let mut plan = args.plan()?;
    if args.partition {
        single::join_partition(&g.root(), args.partition_parent.as_deref(), &mut plan.spec)?;
    }
    let load = plan.tags.get("load").cloned().unwrap_or_default();
    let threads = rtshield_run::store::placements(&g.root(), &plan.spec.threads);
    plan.tags.extend(rtshield_run::store::run_tags(
        &g.root(),
        &load,
        &args.store.tags,
        &threads,
    ));
    execute(&plan, g, "measure")
}

/// Measure, write every file, print the summary. Exit status 3 when
/// `--max-latency` is exceeded.
pub fn execute(plan: &Plan, g: &Global, what: &str) -> anyhow::Result<i32> {
    // First: from here on SIGINT/SIGTERM end the run and the files are written.
    let stop = signals::install();
    let root = g.root();
    // Refused (exit 2) or impossible before anything is printed or measured.
    let opened = single::open(
        &root,
        plan.out.as_deref(),
        plan.metrics_file.as_deref(),
        plan.policy,
    )?;
    let out = opened.out.clone();
    print_header(plan, &opened.sysinfo, what);
    let mut display = LiveDisplay::new(plan.quiet);
    let done = single::measure(
        opened,
        &single::Single {
            spec: &plan.spec,
            policy: plan.policy,
            json: plan.json.as_deref(),
            json_cyclictest: plan.json_format == JsonFormat::Cyclictest,
            load: plan.load.as_ref(),
            label: plan.label.clone(),
            tags: plan.tags.clone(),
            store: plan.store.store.as_deref(),
            no_store: plan.store.no_store,
        },
        &root,
        stop,
        &mut display,
    );
    display.finish();
    let done = done?;
    let (m, result) = (&done.written.measurement, &done.written.result);
    print_summary(
        m,
        result,
        &out,
        plan.json.as_deref().filter(|_| !done.written.json_failed),
    );
    if done.files_missing {
        println!(
            "WARNING: some result files are not in {} (see the messages above; exit status {})",
            out.display(),
            pipeline::EXIT_FILES_MISSING
        );
    }
    if let Some(limit) = plan.max_latency_ns {
        let worst = m.max_latency_ns();
        if worst > limit as i64 {
            println!(
                "FAIL: maximum latency {} exceeds --max-latency {} (exit status 3)",
                fmt_ns(worst),
                format_duration_ns(limit)
            );
            return Ok(3);
        }
        println!(
            "OK: maximum latency {} within --max-latency {}",
            fmt_ns(worst),
            format_duration_ns(limit)
        );
    }
    Ok(if done.files_missing {
        pipeline::EXIT_FILES_MISSING
    } else {
        0
    })
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
    println!(
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
        println!(
            "WARNING: SCHED_{} is not permitted: measuring under SCHED_OTHER. {}",
            t0.policy.name().to_uppercase(),
            sysinfo.fifo_refusal.as_deref().unwrap_or("")
        );
    }
    if let Some(l) = &plan.load {
        println!(
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
    println!();
    println!("Trace: {}", rtshield_results::export::spikes_summary(t));
    for (i, s) in t.spikes.iter().enumerate().take(10) {
        println!(
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
        println!("  ... {} more in spikes.txt", t.spikes.len() - 10);
    }
    for e in t.errors.iter().take(3) {
        println!("  not explained: {e}");
    }
    if t.split {
        for th in &r.threads {
            if let Some(sp) = &th.split {
                println!(
                    "  thread {} split over {} wake-ups: IRQ latency p50 {} p99 {} max {}; thread latency p50 {} p99 {} max {}",
                    th.index,
                    sp.samples,
                    fmt_ns(sp.irq.percentiles["50"]),
                    fmt_ns(sp.irq.percentiles["99"]),
                    fmt_ns(sp.irq.max_ns),
                    fmt_ns(sp.thread.percentiles["50"]),
                    fmt_ns(sp.thread.percentiles["99"]),
                    fmt_ns(sp.thread.max_ns)
                );
            }
        }
    }
}

fn print_summary(m: &Measurement, r: &RunResult, out: &Path, json: Option<&Path>) {
    let res = r.settings.resolution_ns;
    let unit = if res == 1 { "ns" } else { "us" };
    let stats = rtshield_measure::IntervalStats {
        resolution_ns: res,
        threads: r
            .threads
            .iter()
            .map(|t| rtshield_measure::ThreadStats {
                index: t.index,
                tid: t.tid,
                samples: t.samples,
                min_ns: t.min_ns,
                max_ns: t.max_ns,
                cur_ns: t.cur_ns,
                avg_ns: t.avg_ns,
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    };
    println!();
    print!("{}", render_table(&stats));
    println!();
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
    println!("{head}");
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
                .map_or("-".into(), |v| units(*v, res).to_string());
            row.push_str(&format!(" {v:>8}"));
        }
        row.push_str(&format!(" {:>8}", units(t.max_ns, res)));
        println!("{row}");
    }
    println!();
    for t in &r.threads {
        let h = &t.hist_stats;
        println!(
            "thread {}: histogram 0..{} {unit}: Samples_H {} L_avg_H {} L_med_H {} L_std_H {} L_mode_H {}, overflow {}",
            t.index,
            t.histogram.buckets.saturating_sub(1),
            h.samples,
            units_avg(h.avg_ns, res),
            units(h.median_ns, res),
            units_avg(h.std_ns, res),
            units(h.mode_ns, res),
            t.histogram.overflow
        );
        println!(
            "          overruns {} (missed periods {}), lost {}; corrected for missed periods: {} samples, p99.9 {} {unit}, p99.99 {} {unit}",
            t.overruns,
            t.missed_periods,
            t.lost,
            t.corrected.samples,
            units(t.corrected.percentiles["99.9"], res),
            units(t.corrected.percentiles["99.99"], res),
        );
        println!(
            "          policy {}{}",
            t.policy,
            t.requested_policy
                .as_ref()
                .map_or(String::new(), |p| format!(" (asked {p}: FALLBACK)"))
        );
    }
    for w in &r.warnings {
        println!("WARNING: {w}");
    }
    print_trace(r);
    println!();
    for t in &r.threads {
        println!(
            "Statistics for timer_thread[{}] in '{}'",
            t.index,
            out.join(rtshield_results::systress_file_name(t.index))
                .display()
        );
    }
    println!(
        "Results in {}/ (results.json, results.csv, histogram.txt, timeline.csv){}",
        out.display(),
        json.map_or(String::new(), |j| format!(", and {}", j.display()))
    );
    let secs = m.elapsed_ns / 1_000_000_000;
    println!(
        "Total elapsed time: {} s, {} nanoseconds (ended by {})",
        secs,
        m.elapsed_ns % 1_000_000_000,
        r.end_reason
    );
}
