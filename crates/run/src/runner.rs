//! `rtshield run CONFIG`: programs and built-in loads under a supervisor,
//! the measuring engine (one run per rotation part, checkpointed from its
//! snapshots), the live display with
//! per-CPU load, timeline.csv, load/rest phases, rotation, and the final
//! clean-up that leaves no process behind. The supervisor thread is in
//! `supervisor`, the engine's observer in `observer`.

use crate::model::{Action, Config, Cycle, Format, Partition};
use crate::observer::{Checkpoint, RunObserver};
use crate::pipeline::{self, Missing, ResultWriter};
use crate::print::ConfigPrinter;
use crate::supervisor::SupThread;
use crate::timeline::Timeline;
use anyhow::Context;
use rtshield_load::supervise;
use rtshield_load::{CpuLoadMeter, LoadSpec, Output, ProcSpec, ProcStats};
use rtshield_measure::{EndReason, MeasureSpec, ResultContext, ThreadSpec};
use rtshield_results::ExportManager;
use rtshield_results::{ProgramResult, RunResult};
use rtshield_sys::sched::{self, Policy};
use rtshield_sys::units::format_duration_ns;
use rtshield_sys::{CpuSet, Root, SysInfo};
use rtshield_sys::{DirPolicy, SafeDir};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// What the command line adds to the configuration.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Output directory (`DIR-1`, `DIR-2`, ... with `stats.rotate`); None:
    /// a fresh `rtshield-results/STAMP[-N]`.
    pub out: Option<PathBuf>,
    /// The default directory's name (`CONFIG-YYYYMMDD-HHMMSS`).
    pub stamp: String,
    /// `--force-unsafe-dir`.
    pub policy: DirPolicy,
    /// `--duration`: overrides every `lifetime.duration`.
    pub duration_ns: Option<u64>,
    /// No live display.
    pub quiet: bool,
    /// argv, for the results.
    pub command: Vec<String>,
    pub root: Root,
    pub label: Option<String>,
    /// The rtshield executable (program shim and load workers).
    pub exe: PathBuf,
    /// Tags for every part's results (`--tag`, the run's UUID, the
    /// isolation detected at the start).
    pub tags: std::collections::BTreeMap<String, String>,
    /// `--metrics-file`: rewritten every stats period.
    pub metrics_file: Option<PathBuf>,
}

/// What happened.
#[derive(Debug)]
pub struct RunOutcome {
    /// Each result directory with the results written there (one per rotation).
    pub results: Vec<(PathBuf, RunResult)>,
    pub end_reason: String,
    /// Descendants still alive after the supervisor's shutdown, killed by the final sweep.
    pub stragglers_killed: usize,
    /// Result files not written where asked (see [`pipeline::ResultWriter`]).
    pub missing: Vec<Missing>,
}

/// The engine's spec for a configuration (per-thread histogram settings
/// are shared by the engine: the largest size and finest resolution win).
pub fn measure_spec(cfg: &Config, duration_ns: Option<u64>) -> (MeasureSpec, Vec<String>) {
    let mut warnings = Vec::new();
    let threads = cfg
        .timers
        .iter()
        .map(|t| ThreadSpec {
            index: t.index,
            cpu: t.cpu,
            policy: t.sched.policy,
            priority: t.sched.priority,
            period_ns: t.period_ns,
            // Filled in by the run once the partition is found.
            cgroup_tasks: None,
        })
        .collect();
    let histo = cfg
        .timers
        .iter()
        .map(|t| t.histo_size_ns)
        .max()
        .unwrap_or(cfg.main.histo_size_ns);
    let res = cfg
        .timers
        .iter()
        .map(|t| t.resolution_ns)
        .min()
        .unwrap_or(cfg.main.resolution_ns);
    if cfg
        .timers
        .iter()
        .any(|t| t.histo_size_ns != histo || t.resolution_ns != res)
    {
        warnings.push(format!(
            "timer threads have different histogram settings: all use stats.histo_size {} and histo.resolution {}",
            format_duration_ns(histo),
            format_duration_ns(res)
        ));
    }
    let durations: Vec<u64> = cfg.timers.iter().filter_map(|t| t.duration_ns).collect();
    if duration_ns.is_none() && durations.windows(2).any(|w| w[0] != w[1]) {
        warnings.push(
            "timer threads have different lifetime.duration values: the run lasts the longest"
                .into(),
        );
    }
    let samples = cfg.timers.iter().filter_map(|t| t.samples).min();
    let spec = MeasureSpec {
        threads,
        mode: cfg.main.mode,
        duration_ns: duration_ns.or(cfg.duration_ns()),
        samples,
        histo_size_ns: histo,
        resolution_ns: res,
        stats_period_ns: cfg.main.stats_period_ns,
        memlock: cfg.main.memlock,
        cpu_dma_latency: cfg.main.cpu_dma_latency,
        trace: trace_spec(&cfg.main.trace),
    };
    (spec, warnings)
}

/// The engine's tracing request for the `trace.*` keys (None: not asked).
pub fn trace_spec(t: &crate::model::Trace) -> Option<rtshield_measure::TraceSpec> {
    t.wanted().then_some(rtshield_measure::TraceSpec {
        on_latency_ns: t.on_latency_ns,
        stop: t.stop,
        split: t.split,
        buffer_kb: t.buffer_kb,
    })
}

/// A supervised process with its load cycle and partition.
pub type Supervised = (ProcSpec, Option<Cycle>, Option<Partition>);

/// Supervised processes for the programs, with the cycle of each.
pub fn proc_specs(cfg: &Config) -> anyhow::Result<Vec<Supervised>> {
    let mut out = Vec::new();
    for p in &cfg.programs {
        let label = format!("program[{}]", p.index);
        // Explicit OTHER by default: never inherit a real-time main thread.
        let sched = Some(
            p.sched
                .map_or((Policy::Other, 0), |s| (s.policy, s.priority)),
        );
        let specs = match &p.action {
            Action::Command(argv) => {
                let mut s = ProcSpec::new(&label, argv.clone());
                s.cpus = p.cpu_affinity.clone();
                s.stdout = p.stdout.clone();
                s.stderr = p.stderr.clone();
                s.on_ok = p.on_ok;
                s.on_ko = p.on_ko;
                vec![s]
            }
            Action::Builtin {
                kind,
                size,
                workers,
            } => {
                let ls = LoadSpec {
                    kind: *kind,
                    cpus: p.cpu_affinity.clone(),
                    size: *size,
                    workers_per_cpu: *workers,
                    peer: None,
                };
                let mut v = rtshield_load::proc_specs(&label, &ls)?;
                for s in &mut v {
                    if p.stdout != Output::Inherit {
                        s.stdout = p.stdout.clone();
                    }
                    if p.stderr != Output::Inherit {
                        s.stderr = p.stderr.clone();
                    }
                }
                v
            }
        };
        for mut s in specs {
            s.sched = sched;
            s.start_delay = Duration::from_nanos(p.start_delay_ns);
            out.push((s, p.load_cycle, p.cgroup));
        }
    }
    Ok(out)
}

/// The command a program runs, for results and messages.
pub fn describe_action(a: &Action) -> String {
    match a {
        Action::Command(w) => w.join(" "),
        Action::Builtin { kind, .. } => format!("builtin:{kind}"),
    }
}

/// The tasks file of the `rt` or `nrt` set a stanza's `cgroup` names: the
/// cpuset hierarchy comes from mountinfo; rtshield's own partitions are
/// looked for at the root and under every `--parent` that has a state
/// file; then a partrt partition (`rt`/`nrt` at the root) and a cset shield
/// (`user` is the shielded set, `system` the rest).
pub(crate) fn partition_procs_file(root: &Root, p: Partition) -> Option<String> {
    partition_dir(root, p).map(|(h, dir)| h.tasks_file(&dir))
}

/// The hierarchy and directory of the `rt` or `nrt` set (see
/// [`partition_procs_file`] for where it is looked for).
fn partition_dir(root: &Root, p: Partition) -> Option<(rtshield_sys::cgroup::Hierarchy, String)> {
    let h = rtshield_sys::cgroup::Hierarchy::detect(root).ok()?;
    let parents = candidate_parents(root);
    let cset = match p {
        Partition::Rt => "user",
        Partition::Nrt => "system",
    };
    parents
        .iter()
        .find_map(|parent| h.find_cpuset(root, parent.as_deref(), p.name()))
        .or_else(|| h.find_cpuset(root, None, cset))
        .map(|dir| (h, dir))
}

/// Where rtshield partitions may be: every `--parent` with a state file,
/// then the root of the hierarchy; each once, in that order.
fn candidate_parents(root: &Root) -> Vec<Option<String>> {
    let mut parents = rtshield_sys::partstate::parents(root);
    parents.push(None);
    let mut seen = Vec::with_capacity(parents.len());
    parents.retain(|p| {
        let new = !seen.contains(p);
        seen.push(p.clone());
        new
    });
    parents
}

/// Refuse to guess when rtshield partitions exist under several parents
/// (as `partition undo` does): a stanza's `cgroup rt` or `measure
/// --partition` would otherwise pick one silently. Names every candidate.
pub fn ambiguous_partitions(root: &Root) -> Result<(), String> {
    let Ok(h) = rtshield_sys::cgroup::Hierarchy::detect(root) else {
        return Ok(());
    };
    let mut found: Vec<Option<String>> = candidate_parents(root);
    found.retain(|parent| h.find_cpuset(root, parent.as_deref(), "rt").is_some());
    // Named in a stable order: the root first, then the parents by name.
    found.sort();
    let found: Vec<String> = found
        .into_iter()
        .map(|parent| parent.unwrap_or_else(|| "/".into()))
        .collect();
    if found.len() > 1 {
        return Err(format!(
            "rtshield partitions exist under several parents ({}): say which with --partition-parent, \
             or undo the others (`rtshield partition undo --parent P`)",
            found.join(", ")
        ));
    }
    Ok(())
}

/// Where `measure --partition` puts itself: the `procs` file of the `nrt`
/// set (the whole process: main thread, load) and the `tasks` file of the
/// `rt` set (each measuring thread joins it by TID). Resolved as a run
/// stanza's `cgroup rt|nrt` is, or only under `parent` when given. Err
/// (a refusal) when there is no such partition or the hierarchy is cgroup
/// v2, where a thread cannot leave its process's (domain) cgroup.
pub fn measure_partition_files(
    root: &Root,
    parent: Option<&str>,
) -> Result<(String, String), String> {
    let h = rtshield_sys::cgroup::Hierarchy::detect(root)
        .map_err(|e| format!("no cpuset hierarchy: {e}"))?;
    if h.is_v2() {
        return Err("cgroup v2 keeps every thread of a process in one cgroup (rtshield's rt/nrt are not threaded cgroups): \
             the measuring threads cannot be in rt while the main thread and the load are in nrt; \
             use `rtshield partition run rt -- rtshield measure ...` (without --load) instead"
            .into());
    }
    let (rt, nrt) = match parent {
        Some(p) => (
            h.find_cpuset(root, Some(p), "rt"),
            h.find_cpuset(root, Some(p), "nrt"),
        ),
        None => {
            ambiguous_partitions(root)?;
            (
                partition_dir(root, Partition::Rt).map(|(_, d)| d),
                partition_dir(root, Partition::Nrt).map(|(_, d)| d),
            )
        }
    };
    let under = parent.map_or(String::new(), |p| format!(" under {p}"));
    match (rt, nrt) {
        (Some(rt), Some(nrt)) => Ok((h.procs_file(&nrt), h.tasks_file(&rt))),
        _ => Err(format!(
            "no rt/nrt partition found{under} (create it with `rtshield partition create CPUS`)"
        )),
    }
}

/// The formats `stats.format` asks for (results.json always), with the
/// timer threads' `stats.filename`s.
pub fn exports(cfg: &Config) -> ExportManager {
    use rtshield_results::export::{Csv, CyclictestHist, SystressTxt};
    let f = &cfg.main.formats;
    let mut ex = ExportManager::new();
    if f.contains(&Format::Csv) {
        ex = ex.with(Csv);
    }
    if f.contains(&Format::Cyclictest) {
        ex = ex.with(CyclictestHist);
    }
    if f.contains(&Format::Txt) {
        ex = ex.with(SystressTxt {
            names: cfg
                .timers
                .iter()
                .map(|t| (t.index, t.filename.clone()))
                .collect(),
        });
    }
    ex
}

/// Write the result files `formats` asks for into `dir` (created if
/// needed), each atomically; the first failure is returned, after every
/// file was tried.
pub fn write_results(res: &RunResult, cfg: &Config, dir: &Path) -> anyhow::Result<()> {
    let d = SafeDir::open_or_create(dir, 0o755, DirPolicy::Strict).map_err(pipeline::refusal)?;
    match exports(cfg).write(res, &d).into_iter().next() {
        None => Ok(()),
        Some(f) => anyhow::bail!(f.error),
    }
}

/// Open the directory of rotation part `n` (None: no rotation): `--out`
/// as given, or a fresh directory under `rtshield-results`.
fn open_part(opts: &RunOptions, n: Option<u32>) -> anyhow::Result<SafeDir> {
    match &opts.out {
        Some(out) => SafeDir::open_or_create(&rotated_dir(out, n), 0o755, opts.policy)
            .map_err(pipeline::refusal),
        None => {
            let name = rotated_dir(Path::new(&opts.stamp), n);
            pipeline::open_output(None, &name.to_string_lossy(), opts.policy)
        }
    }
}

/// The first part number from `from` on whose `OUT-N` does not exist
/// (anything at that path, even a dangling symlink, counts as used). Without
/// `--out` every part goes to a fresh stamped directory: `from` as is.
pub fn next_free_part(out: Option<&Path>, from: u32) -> u32 {
    let Some(out) = out else { return from };
    let mut n = from;
    while n < u32::MAX && rotated_dir(out, Some(n)).symlink_metadata().is_ok() {
        n += 1;
    }
    n
}

/// `DIR` or, with rotation, `DIR-N`.
pub fn rotated_dir(out: &Path, n: Option<u32>) -> PathBuf {
    match n {
        None => out.to_path_buf(),
        Some(n) => {
            let mut s = out.as_os_str().to_owned();
            s.push(format!("-{n}"));
            PathBuf::from(s)
        }
    }
}

// ---------------------------------------------------------------- the run

/// Run a checked configuration until its duration, a STOP program, or
/// `stop` (SIGINT/SIGTERM). Every result directory is complete on return,
/// and no child or grandchild process is left. `printer` shows the live
/// table.
pub fn execute(
    cfg: &Config,
    opts: &RunOptions,
    stop: &AtomicBool,
    printer: &mut dyn ConfigPrinter,
) -> anyhow::Result<RunOutcome> {
    execute_with(cfg, opts, stop, None, printer)
}

/// [`execute`], continuing the interrupted run `resume` describes (see
/// [`crate::resume`]): its directory, its remaining time, its figures
/// merged into the results, its timeline continued after a `down` phase.
pub fn execute_resume(
    cfg: &Config,
    opts: &RunOptions,
    stop: &AtomicBool,
    resume: &crate::resume::Resume,
    printer: &mut dyn ConfigPrinter,
) -> anyhow::Result<RunOutcome> {
    execute_with(cfg, opts, stop, Some(resume), printer)
}

fn execute_with(
    cfg: &Config,
    opts: &RunOptions,
    stop: &AtomicBool,
    resume: Option<&crate::resume::Resume>,
    printer: &mut dyn ConfigPrinter,
) -> anyhow::Result<RunOutcome> {
    // Orphaned grandchildren come back to us, so the final sweep finds them.
    supervise::become_subreaper().context("prctl(PR_SET_CHILD_SUBREAPER)")?;
    // On resume, later rotation parts go next to the resumed one.
    let resumed_opts;
    let opts = match resume {
        Some(r) => {
            resumed_opts = RunOptions {
                out: Some(r.out.clone()),
                ..opts.clone()
            };
            &resumed_opts
        }
        None => opts,
    };
    let res = Run::start(cfg, opts, resume, printer).and_then(|run| run.go(stop));
    // Whatever happened (even an error), nothing started by the run stays.
    let killed = rtshield_load::reaper::kill_all_descendants();
    res.map(|mut o| {
        o.stragglers_killed = killed;
        o
    })
}

/// Every partition a stanza names must exist before anything moves; then
/// the process and the timer threads go where the stanzas say.
fn join_partitions(
    cfg: &Config,
    opts: &RunOptions,
    spec: &mut MeasureSpec,
    warnings: &mut Vec<String>,
) -> anyhow::Result<()> {
    let any_cgroup = cfg.main.cgroup.is_some()
        || cfg.timers.iter().any(|t| t.cgroup.is_some())
        || cfg.programs.iter().any(|p| p.cgroup.is_some());
    if any_cgroup {
        ambiguous_partitions(&opts.root).map_err(|e| {
            anyhow::Error::from(rtshield_sys::InputError::new(format!("cgroup: {e}")))
        })?;
    }
    for p in &cfg.programs {
        if let Some(g) = p.cgroup {
            if partition_procs_file(&opts.root, g).is_none() {
                anyhow::bail!(
                    "program[{}]: cgroup {}: no '{}' partition found (create it with `rtshield partition create CPUS`)",
                    p.index,
                    g.name(),
                    g.name()
                );
            }
        }
    }
    let named = cfg
        .main
        .cgroup
        .iter()
        .chain(cfg.timers.iter().filter_map(|t| t.cgroup.as_ref()));
    for &g in named {
        if partition_dir(&opts.root, g).is_none() {
            anyhow::bail!(
                "cgroup {}: no '{}' partition found (create it with `rtshield partition create CPUS`)",
                g.name(),
                g.name()
            );
        }
    }
    let v2 = rtshield_sys::cgroup::Hierarchy::detect(&opts.root).is_ok_and(|h| h.is_v2());
    if v2 {
        join_partitions_v2(cfg, opts, warnings)
    } else {
        join_partitions_v1(cfg, opts, spec)
    }
}

/// cgroup v1: each thread goes to the partition its stanza names (the
/// systress article's rpi_cpuset.cfg: main in nrt, the timer thread in
/// rt). The process (every thread so far) joins main's; a timer thread
/// writes its own TID to its partition's `tasks` file before pinning
/// itself; threads started later (the program supervisor) stay with main;
/// programs join theirs from the shim.
fn join_partitions_v1(
    cfg: &Config,
    opts: &RunOptions,
    spec: &mut MeasureSpec,
) -> anyhow::Result<()> {
    if let Some(g) = cfg.main.cgroup {
        let (h, dir) = partition_dir(&opts.root, g).expect("checked above");
        opts.root
            .write(h.procs_file(&dir), &std::process::id().to_string())
            .with_context(|| format!("cannot move rtshield into the {} partition", g.name()))?;
    }
    for (ts, t) in spec.threads.iter_mut().zip(&cfg.timers) {
        ts.cgroup_tasks = t.cgroup.and_then(|g| partition_procs_file(&opts.root, g));
    }
    Ok(())
}

/// cgroup v2 keeps every thread of a process in one cgroup unless the
/// cgroups are threaded, and rtshield's rt/nrt are domain cgroups (a
/// cpuset partition holding whole processes): the process goes to one
/// partition, the timers' when they name one (a cpuset limits affinity,
/// and the measuring threads must reach their CPUs); main's cpu_affinity
/// keeps the main thread off them.
fn join_partitions_v2(
    cfg: &Config,
    opts: &RunOptions,
    warnings: &mut Vec<String>,
) -> anyhow::Result<()> {
    let timer_cg = cfg.timers.iter().find_map(|t| t.cgroup);
    if let (Some(t), Some(m)) = (timer_cg, cfg.main.cgroup) {
        if t != m {
            warnings.push(format!(
                "main's cgroup {} not applied: cgroup v2 keeps all threads of a process in one cgroup (rtshield's partitions are not threaded cgroups); the process goes to the timer threads' partition {}; use main's cpu_affinity for the main thread",
                m.name(),
                t.name()
            ));
        }
    }
    if let Some(g) = timer_cg.or(cfg.main.cgroup) {
        let f = partition_procs_file(&opts.root, g).expect("checked above");
        opts.root
            .write(&f, &std::process::id().to_string())
            .with_context(|| format!("cannot move rtshield into the {} partition", g.name()))?;
    }
    Ok(())
}

/// A run under way: its settings, where its files go, what it has done.
struct Run<'a> {
    cfg: &'a Config,
    opts: &'a RunOptions,
    spec: MeasureSpec,
    warnings: Vec<String>,
    sysinfo: SysInfo,
    /// `stats.rotate`.
    rotate: Option<u64>,
    /// The part being measured (None: no rotation).
    rot_n: Option<u32>,
    metrics: Option<crate::metrics::MetricsFile>,
    /// The part's directory (None: it could not be made; files go to the
    /// fallback at the end), and its path.
    dir: Option<Rc<SafeDir>>,
    dir_path: PathBuf,
    sup: Option<SupThread>,
    obs: RunObserver<'a>,
    online_cpus: Vec<u32>,
    /// The whole run's duration.
    total: Option<u64>,
    /// The whole run's sample count per thread.
    target_samples: Option<u64>,
    results: Vec<(PathBuf, RunResult)>,
    /// Measured so far, whole run.
    done_ns: u64,
    /// Samples so far per thread (the least), whole run.
    samples_done: u64,
    /// The checkpoint a resumed run adds its first segment to.
    base: Option<(RunResult, f64)>,
    /// Each part's start temperatures are the previous part's end ones.
    part_thermal: Vec<rtshield_sys::power::ThermalZone>,
}

impl<'a> Run<'a> {
    /// Everything before the first sample: the spec, the output directory
    /// and metrics file (refused or impossible before anything starts or
    /// moves: exit 2 for a refusal), the partitions, the programs, the
    /// observer and its timeline.
    fn start(
        cfg: &'a Config,
        opts: &'a RunOptions,
        resume: Option<&crate::resume::Resume>,
        printer: &'a mut dyn ConfigPrinter,
    ) -> anyhow::Result<Run<'a>> {
        let total = opts.duration_ns.or(cfg.duration_ns());
        let (mut spec, mut warnings) = measure_spec(cfg, total);
        warnings.extend(cfg.warnings.iter().cloned());
        let sysinfo = SysInfo::collect(&opts.root, false);
        let rotate = cfg.main.rotate_ns;
        // Like the torture article's scripts: the first number not used yet,
        // so a re-run with the same --out never overwrites an earlier part.
        let rot_n: Option<u32> = match resume {
            Some(r) => rotate.map(|_| r.part.unwrap_or(1)),
            None => rotate.map(|_| next_free_part(opts.out.as_deref(), 1)),
        };
        let metrics = opts
            .metrics_file
            .as_deref()
            .map(|p| crate::metrics::MetricsFile::open(p, opts.policy))
            .transpose()?;
        let first = Rc::new(match resume {
            Some(r) => {
                SafeDir::open_or_create(&r.dir, 0o755, opts.policy).map_err(pipeline::refusal)?
            }
            None => open_part(opts, rot_n)?,
        });
        join_partitions(cfg, opts, &mut spec, &mut warnings)?;
        let procs = proc_specs(cfg)?;
        let sup = if procs.is_empty() {
            None
        } else {
            Some(SupThread::start(
                procs,
                opts.exe.clone(),
                opts.root.clone(),
                cfg.main.dbg_level,
            )?)
        };
        let online_cpus: Vec<u32> = rtshield_load::cpuload::StatSnapshot::read(&opts.root)
            .map(|s| s.cpus.keys().copied().collect())
            .unwrap_or_default();
        let obs = observer(cfg, opts, &sup, total, printer);
        let mut run = Run {
            cfg,
            opts,
            spec,
            warnings,
            part_thermal: sysinfo.thermal.clone(),
            sysinfo,
            rotate,
            rot_n,
            metrics,
            dir_path: first.path().to_path_buf(),
            dir: Some(first),
            sup,
            obs,
            online_cpus,
            total,
            target_samples: None,
            results: Vec::new(),
            done_ns: 0,
            samples_done: 0,
            base: None,
        };
        run.target_samples = run.spec.samples;
        run.open_timeline(resume);
        Ok(run)
    }

    /// The first part's timeline (continued on resume), and on resume the
    /// counts the run goes on from.
    fn open_timeline(&mut self, resume: Option<&crate::resume::Resume>) {
        let (w, root) = (&mut self.obs.writer, &self.opts.root);
        self.obs.timeline = match resume {
            Some(r) => self
                .dir
                .as_ref()
                .and_then(|d| resume_timeline(w, d, &self.online_cpus, root, r)),
            None => self
                .dir
                .as_ref()
                .and_then(|d| open_timeline(w, d, &self.online_cpus, root)),
        };
        let Some(r) = resume else { return };
        // The timeline goes on after the gap; the display counts from the checkpoint.
        self.obs.offset_ns = ((r.last_elapsed_s + r.gap_s) * 1e9) as u64;
        self.obs.base = r
            .prev
            .threads
            .iter()
            .map(|t| (t.index, t.samples, t.max_ns, t.overruns, t.lost))
            .collect();
        // Earlier parts each ran their full rotation length.
        let before = match (r.part, self.rotate) {
            (Some(n), Some(rot)) => u64::from(n.saturating_sub(1)).saturating_mul(rot),
            _ => 0,
        };
        self.done_ns = before + r.measured_ns();
        self.samples_done = r.prev.threads.iter().map(|t| t.samples).min().unwrap_or(0);
        self.base = Some((r.prev.clone(), r.gap_s));
    }

    /// Measure: the loads settle, then one segment per rotation part (one
    /// for the whole run without `stats.rotate`; checkpoints are snapshots
    /// inside a segment), then the programs stop.
    fn go(mut self, stop: &AtomicBool) -> anyhow::Result<RunOutcome> {
        let delay_end = Instant::now() + Duration::from_nanos(self.cfg.main.start_delay_ns);
        while Instant::now() < delay_end && !stop.load(Ordering::Relaxed) {
            std::thread::sleep(
                Duration::from_millis(20).min(delay_end.saturating_duration_since(Instant::now())),
            );
        }
        let end_reason = loop {
            if let Some(end) = self.segment(stop)? {
                break end;
            }
            self.next_part();
        };
        let missing = self.obs.writer.finish();
        if let Some(s) = &mut self.sup {
            s.stop();
        }
        self.obs.printer.live_end(&mut self.obs.messages);
        Ok(RunOutcome {
            results: self.results,
            end_reason,
            stragglers_killed: 0,
            missing,
        })
    }

    /// The results context of a part (`part`: its rotation number).
    fn ctx(&self, programs: Vec<ProgramResult>, part: Option<u32>) -> ResultContext {
        let opts = self.opts;
        ResultContext {
            command: opts.command.clone(),
            config: Some(self.cfg.text.clone()),
            // Rotated parts get their number, so reports tell them apart.
            label: match part {
                Some(n) => opts.label.as_ref().map(|l| format!("{l}-{n}")),
                None => opts.label.clone(),
            },
            tags: opts
                .tags
                .clone()
                .into_iter()
                .chain([("config".to_string(), self.cfg.file.clone())])
                .chain(part.map(|n| ("part".to_string(), n.to_string())))
                .collect(),
            programs,
            warnings: self.warnings.clone(),
            sysinfo: self.sysinfo.clone(),
        }
    }

    /// The programs' figures so far.
    fn programs_now(&self) -> Vec<ProgramResult> {
        let stats: Vec<(String, ProcStats)> = self
            .sup
            .as_ref()
            .map(|s| {
                s.shared
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .stats
                    .clone()
            })
            .unwrap_or_default();
        program_results(self.cfg, &stats)
    }

    /// Measure one segment and write its part's results. Some(end reason)
    /// when the run is over, None when only the part is (rotation).
    fn segment(&mut self, stop: &AtomicBool) -> anyhow::Result<Option<String>> {
        let cfg = self.cfg;
        let mut seg: Option<u64> = self.total.map(|t| t.saturating_sub(self.done_ns));
        if let Some(r) = self.rotate {
            // A resumed part only has what is left of its rotation length.
            let left = match &self.base {
                Some((prev, _)) => r.saturating_sub((prev.duration_s * 1e9) as u64).max(1),
                None => r,
            };
            seg = Some(seg.map_or(left, |s| s.min(left)));
        }
        self.spec.duration_ns = seg;
        self.spec.samples = self
            .target_samples
            .map(|t| t.saturating_sub(self.samples_done).max(1));
        self.obs.checkpoint = self
            .dir
            .as_ref()
            .filter(|_| cfg.main.checkpoint_ns > 0)
            .map(|d| Checkpoint {
                every_ns: cfg.main.checkpoint_ns,
                next_ns: cfg.main.checkpoint_ns,
                dir: d.clone(),
                ctx: self.ctx(Vec::new(), self.rot_n),
                base: self.base.clone(),
            });
        // main's affinity/policy are applied inside each segment (see the
        // observer); give the engine back the thread as it was.
        let saved_aff = sched::get_affinity(0).ok();
        self.obs.applied_main = false;
        let m = match self.metrics.as_mut() {
            Some(f) => {
                let mut w = crate::metrics::WithMetrics::new(&mut self.obs, f);
                pipeline::measure(&self.opts.root, &self.spec, stop, &mut w)
            }
            None => pipeline::measure(&self.opts.root, &self.spec, stop, &mut self.obs),
        };
        if self.obs.main_sched.is_some() {
            let _ = sched::set_scheduler(0, Policy::Other, 0);
        }
        if let Some(a) = saved_aff {
            let _ = sched::set_affinity(0, &a);
        }
        let m = m?;
        if let Some(f) = self.metrics.as_mut() {
            f.write(&m);
        }
        let end = m.end;
        // A segment that ran its course counts as its requested length, so
        // the run's total does not drift by the set-up time of a rotation.
        self.done_ns += match (end, seg) {
            (EndReason::Duration, Some(s)) => s,
            _ => m.elapsed_ns,
        };
        self.obs.offset_ns += m.elapsed_ns;
        self.samples_done += m
            .threads
            .iter()
            .map(|t| t.exact.lat.count)
            .min()
            .unwrap_or(0);
        let end_reason = if self.obs.stop_reason.is_some() {
            "stop".to_string()
        } else {
            end.name()
        };
        let finished = stop.load(Ordering::Relaxed)
            || self.obs.stop_reason.is_some()
            || matches!(
                end,
                EndReason::Signal(_) | EndReason::Stop | EndReason::Samples | EndReason::TraceStop
            )
            || self.total.is_some_and(|t| self.done_ns >= t)
            || self.target_samples.is_some_and(|t| self.samples_done >= t);
        let mut res = pipeline::to_result(&m, &self.ctx(self.programs_now(), self.rot_n));
        stamp_temperatures(&mut res, &self.opts.root, &mut self.part_thermal);
        if let Some((prev, gap)) = self.base.take() {
            res = rtshield_results::merge::merge_resumed(&prev, &res, gap)
                .map_err(|e| anyhow::anyhow!("--resume: {e}"))?;
            self.obs.base.clear();
        }
        // Only a rotation ends a segment without ending the run.
        res.end_reason = if finished {
            break_out(&mut self.sup, &mut res, cfg);
            end_reason.clone()
        } else {
            "rotate".into()
        };
        let (ex, w) = (&self.obs.exports, &mut self.obs.writer);
        w.write(ex, &res, self.dir.clone(), &self.dir_path);
        self.results.push((self.dir_path.clone(), res));
        Ok(finished.then_some(end_reason))
    }

    /// The next rotation part's directory and timeline. A part directory
    /// that cannot be made does not stop the run: its files go to the
    /// fallback directory at the end.
    fn next_part(&mut self) {
        let opts = self.opts;
        self.rot_n = self
            .rot_n
            .map(|n| next_free_part(opts.out.as_deref(), n + 1));
        match open_part(opts, self.rot_n) {
            Ok(d) => {
                self.dir_path = d.path().to_path_buf();
                self.dir = Some(Rc::new(d));
            }
            Err(e) => {
                self.dir_path = match &opts.out {
                    Some(o) => rotated_dir(o, self.rot_n),
                    None => Path::new("rtshield-results")
                        .join(rotated_dir(Path::new(&opts.stamp), self.rot_n)),
                };
                self.obs.writer.note(format!("{e:#}"));
                self.dir = None;
            }
        }
        let (w, root) = (&mut self.obs.writer, &opts.root);
        self.obs.timeline = self
            .dir
            .as_ref()
            .and_then(|d| open_timeline(w, d, &self.online_cpus, root));
    }
}

/// The engine's observer for a run of `cfg`.
fn observer<'a>(
    cfg: &'a Config,
    opts: &RunOptions,
    sup: &Option<SupThread>,
    total: Option<u64>,
    printer: &'a mut dyn ConfigPrinter,
) -> RunObserver<'a> {
    RunObserver {
        cfg,
        root: opts.root.clone(),
        shared: sup.as_ref().map(|s| s.shared.clone()),
        meter: CpuLoadMeter::new(opts.root.clone()).ok(),
        timeline: None,
        offset_ns: 0,
        base: Vec::new(),
        checkpoint: None,
        printer,
        stop_reason: None,
        messages: Vec::new(),
        main_cpus: cfg.main.cpu_affinity.clone(),
        main_sched: cfg.main.sched.map(|s| (s.policy, s.priority)),
        applied_main: false,
        total_ns: total,
        exports: exports(cfg),
        writer: ResultWriter::new(),
    }
}

/// Temperatures of a part: at its start (`start`, then updated to the
/// end ones for the next part) and now, at its end.
fn stamp_temperatures(
    res: &mut RunResult,
    root: &Root,
    start: &mut Vec<rtshield_sys::power::ThermalZone>,
) {
    res.sysinfo.thermal = start.clone();
    res.sysinfo.thermal_end = rtshield_sys::power::thermal(root);
    *start = res.sysinfo.thermal_end.clone();
}

/// On resume: `timeline.csv` with the rows up to the checkpoint, then the
/// `down` rows; a failure is reported and the run goes on without one.
fn resume_timeline(
    w: &mut ResultWriter,
    dir: &SafeDir,
    cpus: &[u32],
    root: &Root,
    r: &crate::resume::Resume,
) -> Option<Timeline> {
    let header = rtshield_results::export::timeline::header_with_host(cpus);
    let t = Timeline::create_with(dir, cpus.to_vec(), &header, &r.timeline_body)
        .map(|t| t.with_host(root.clone()));
    match t {
        Ok(mut t) => match t.append_rows(&r.down_rows()) {
            Ok(()) => Some(t),
            Err(e) => {
                w.note(format!("timeline.csv: {e}; no timeline for this part"));
                None
            }
        },
        Err(e) => {
            w.note(format!("{e}; no timeline for this part"));
            None
        }
    }
}

/// Create `timeline.csv` in `dir`; a failure is reported and the run goes
/// on without a timeline.
fn open_timeline(
    w: &mut ResultWriter,
    dir: &SafeDir,
    cpus: &[u32],
    root: &Root,
) -> Option<Timeline> {
    match Timeline::create(dir, cpus.to_vec()) {
        Ok(t) => Some(t.with_host(root.clone())),
        Err(e) => {
            w.note(format!("{e}; no timeline for this part"));
            None
        }
    }
}

/// Stop the programs before the final write, so their exit counts are final.
fn break_out(sup: &mut Option<SupThread>, res: &mut RunResult, cfg: &Config) {
    if let Some(s) = sup {
        s.stop();
        let stats = s
            .shared
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .stats
            .clone();
        res.programs = program_results(cfg, &stats);
    }
}

/// One [`ProgramResult`] per `program[N]` (a built-in load sums its workers).
pub fn program_results(cfg: &Config, stats: &[(String, ProcStats)]) -> Vec<ProgramResult> {
    cfg.programs
        .iter()
        .map(|p| {
            let label = format!("program[{}]", p.index);
            let st = stats
                .iter()
                .find(|(l, _)| *l == label)
                .map(|(_, s)| s.clone())
                .unwrap_or_default();
            ProgramResult {
                index: p.index,
                command: describe_action(&p.action),
                cpus: p.cpu_affinity.as_ref().map(CpuSet::to_list),
                spawns: st.spawns,
                exits_ok: st.exits_ok,
                exits_ko: st.exits_ko,
            }
        })
        .collect()
}
