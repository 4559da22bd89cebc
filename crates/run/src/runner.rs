//! `rtshield run CONFIG`: programs and built-in loads under a supervisor,
//! the measuring engine (one run per rotation part, checkpointed from its
//! snapshots), the live display with
//! per-CPU load, timeline.csv, load/rest phases, rotation, and the final
//! clean-up that leaves no process behind.

use crate::model::{Action, Config, CpuLoadShow, Cycle, Format, Partition};
use crate::pipeline::{self, Missing, ResultWriter};
use crate::timeline::Timeline;
use anyhow::Context;
use rtshield_isolation::Partitions;
use rtshield_load::supervise::{self, Event};
use rtshield_load::{CpuLoad, CpuLoadMeter, LoadSpec, Output, ProcSpec, ProcStats, Supervisor};
use rtshield_measure::{
    display, EndReason, IntervalStats, MeasureSpec, Measurement, Observer, ResultContext,
    ThreadSpec,
};
use rtshield_results::ExportManager;
use rtshield_results::{ProgramResult, RunResult};
use rtshield_sys::sched::{self, Policy};
use rtshield_sys::units::format_duration_ns;
use rtshield_sys::{CpuSet, Root, SysInfo};
use rtshield_sys::{DirPolicy, SafeDir};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
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

/// The tasks file of the `rt` or `nrt` set a stanza's `cgroup` names,
/// where `rtshield_isolation::Partitions` finds it: rtshield's own
/// partitions under every `--parent` that has a state file, then at the
/// root; then a partrt partition (`rt`/`nrt` at the root) and a cset
/// shield (`user` is the shielded set, `system` the rest).
fn partition_procs_file(root: &Root, p: Partition) -> Option<String> {
    partition_dir(root, p).map(|(h, dir)| h.tasks_file(&dir))
}

/// The hierarchy and directory of the `rt` or `nrt` set (see
/// [`partition_procs_file`] for where it is looked for).
pub(crate) fn partition_dir(
    root: &Root,
    p: Partition,
) -> Option<(rtshield_sys::cgroup::Hierarchy, String)> {
    let found = Partitions::discover(root);
    let set = match p {
        Partition::Rt => found.rt(),
        Partition::Nrt => found.nrt(),
    }?;
    Some((found.hierarchy()?.clone(), set.dir.clone()))
}

/// Refuse to guess when rtshield partitions exist under several parents
/// (as `partition undo` does): a stanza's `cgroup rt` or `measure
/// --partition` would otherwise pick one silently. Names every candidate.
pub fn ambiguous_partitions(root: &Root) -> Result<(), String> {
    match Partitions::discover(root).ambiguous() {
        Some(why) => Err(why),
        None => Ok(()),
    }
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
    let found = Partitions::discover(root);
    let h = found
        .hierarchy_or_why()
        .map_err(|e| format!("no cpuset hierarchy: {e}"))?;
    if h.is_v2() {
        return Err("cgroup v2 keeps every thread of a process in one cgroup (rtshield's rt/nrt are not threaded cgroups): \
             the measuring threads cannot be in rt while the main thread and the load are in nrt; \
             use `rtshield partition run rt -- rtshield measure ...` (without --load) instead"
            .into());
    }
    let (rt, nrt) = match parent {
        Some(p) => found.under(root, p),
        None => {
            if let Some(why) = found.ambiguous() {
                return Err(why);
            }
            (
                found.rt().map(|s| s.dir.clone()),
                found.nrt().map(|s| s.dir.clone()),
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

// ---------------------------------------------------------------- supervisor thread

/// What the supervisor thread tells the main thread.
#[derive(Debug, Default)]
struct Shared {
    /// Messages to print (program exits, phase changes).
    messages: Vec<String>,
    /// A program with policy STOP ended.
    stop: Option<String>,
    /// `load`, `rest`, or `load` when there is no cycle.
    phase: String,
    stats: Vec<(String, ProcStats)>,
}

struct SupThread {
    shared: Arc<Mutex<Shared>>,
    done: Arc<AtomicBool>,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl SupThread {
    /// Start the programs from a dedicated thread that lives for the whole
    /// run: it polls every 50 ms (respawns, phases) whatever the stats
    /// period, and the children's death signal is tied to it.
    fn start(
        procs: Vec<Supervised>,
        exe: PathBuf,
        root: Root,
        dbg: u32,
    ) -> anyhow::Result<SupThread> {
        let shared = Arc::new(Mutex::new(Shared {
            phase: "load".into(),
            ..Default::default()
        }));
        let done = Arc::new(AtomicBool::new(false));
        let cycles: Vec<Option<Cycle>> = procs.iter().map(|p| p.1).collect();
        let specs: Vec<ProcSpec> = procs
            .into_iter()
            .map(|(mut spec, _, group)| {
                // The shim joins the partition before starting the program.
                spec.cgroup_procs = group
                    .and_then(|g| partition_procs_file(&root, g))
                    .map(|f| root.path(f));
                spec
            })
            .collect();
        let mut sup = Supervisor::new(specs)?
            .with_launcher(exe)
            .reap_all_children(true);
        let (sh, dn) = (shared.clone(), done.clone());
        let (ready_tx, ready_rx) = std::sync::mpsc::channel::<anyhow::Result<()>>();
        let handle = std::thread::Builder::new()
            .name("rtshield-sup".into())
            .spawn(move || {
                let t0 = Instant::now();
                let mut on: Vec<bool> = vec![true; cycles.len()];
                let handle_events = |evs: Vec<Event>, sh: &Mutex<Shared>| {
                    let mut s = sh.lock().unwrap_or_else(|p| p.into_inner());
                    for e in evs {
                        match e {
                            Event::Exited {
                                label,
                                pid,
                                ok,
                                how,
                            } => {
                                if dbg >= 1 {
                                    s.messages.push(format!(
                                        "{label}: pid {pid} ended ({how}{})",
                                        if ok { "" } else { ", failure" }
                                    ));
                                }
                            }
                            Event::SpawnFailed { error, .. } => s.messages.push(error),
                            Event::Stop { label, how } => {
                                s.messages.push(format!(
                                    "{label} ended ({how}) and its policy is STOP: ending the run"
                                ));
                                s.stop.get_or_insert(label);
                            }
                        }
                    }
                };
                let evs = sup.start();
                let _ = ready_tx.send(Ok(()));
                handle_events(evs, &sh);
                while !dn.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(50));
                    let mut evs = sup.poll();
                    // Load/rest phases, per distinct cycle.
                    let t = t0.elapsed().as_nanos() as u64;
                    for (i, c) in cycles.iter().enumerate() {
                        let Some(c) = c else { continue };
                        let want = t % (c.on_ns + c.off_ns) < c.on_ns;
                        if want != on[i] {
                            on[i] = want;
                            if want {
                                evs.extend(sup.resume_where(&|j| j == i));
                            } else {
                                sup.pause_where(&|j| j == i);
                            }
                        }
                    }
                    let any_cycle = cycles.iter().any(Option::is_some);
                    let phase =
                        if !any_cycle || cycles.iter().zip(&on).any(|(c, o)| c.is_some() && *o) {
                            "load"
                        } else {
                            "rest"
                        };
                    {
                        let mut s = sh.lock().unwrap_or_else(|p| p.into_inner());
                        if s.phase != phase {
                            if dbg >= 2 || any_cycle {
                                s.messages
                                    .push(format!("[{:.1}s] {phase} phase", t as f64 / 1e9));
                            }
                            s.phase = phase.into();
                        }
                        s.stats = sup.stats_by_label();
                    }
                    handle_events(evs, &sh);
                }
                sup.shutdown();
                let mut s = sh.lock().unwrap_or_else(|p| p.into_inner());
                s.stats = sup.stats_by_label();
            })
            .context("cannot start the supervisor thread")?;
        ready_rx
            .recv()
            .unwrap_or_else(|_| Err(anyhow::anyhow!("the supervisor thread died")))?;
        Ok(SupThread {
            shared,
            done,
            handle: Some(handle),
        })
    }

    fn stop(&mut self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

impl Drop for SupThread {
    fn drop(&mut self) {
        self.stop();
    }
}

// ---------------------------------------------------------------- observer

/// Writes the results so far every `stats.checkpoint`, from the engine's
/// mid-run snapshots (no pause in the measurement).
struct Checkpoint {
    every_ns: u64,
    /// Segment-relative time of the next one.
    next_ns: u64,
    dir: Rc<SafeDir>,
    /// Everything but the programs, which are read at each checkpoint.
    ctx: ResultContext,
    /// On resume: the checkpoint resumed from and the gap, merged into
    /// every checkpoint of the first segment (a second interruption loses
    /// nothing the first kept).
    base: Option<(RunResult, f64)>,
}

struct RunObserver<'a> {
    cfg: &'a Config,
    root: Root,
    shared: Option<Arc<Mutex<Shared>>>,
    meter: Option<CpuLoadMeter>,
    timeline: Option<Timeline>,
    /// Measured before this segment (rotation parts are segments).
    offset_ns: u64,
    /// On resume, until the first segment ends: the checkpoint's totals per
    /// thread (index, samples, max, overruns, lost), added to what the
    /// engine reports so the display and the timeline count on.
    base: Vec<(u32, u64, i64, u64, u64)>,
    /// Checkpoint writer (None: `stats.checkpoint off`).
    checkpoint: Option<Checkpoint>,
    quiet: bool,
    tty: bool,
    drawn_lines: usize,
    stop_reason: Option<String>,
    messages: Vec<String>,
    main_cpus: Option<CpuSet>,
    main_sched: Option<(Policy, i32)>,
    applied_main: bool,
    total_ns: Option<u64>,
    exports: ExportManager,
    writer: ResultWriter,
}

impl RunObserver<'_> {
    fn adjust(&self, s: &IntervalStats) -> IntervalStats {
        let mut s = s.clone();
        s.elapsed_ns += self.offset_ns;
        for t in &mut s.threads {
            if let Some(&(_, n, max, ov, lost)) = self.base.iter().find(|b| b.0 == t.index) {
                t.samples += n;
                t.max_ns = t.max_ns.max(max);
                t.overruns += ov;
                t.lost += lost;
            }
        }
        // The whole run's duration, not the segment's (progress, time left).
        s.duration_ns = self.total_ns;
        s
    }

    fn render(&mut self, s: &IntervalStats, load: Option<&CpuLoad>) {
        if self.quiet {
            return;
        }
        let mut text = display::render_table(s);
        if let Some(l) = load {
            let shown = match &self.cfg.main.cpu_load {
                CpuLoadShow::None => None,
                CpuLoadShow::All => Some(l.render(None, true)),
                CpuLoadShow::Total => Some(l.render(Some(&CpuSet::new()), true)),
                CpuLoadShow::Cpus(c) => Some(l.render(Some(c), true)),
            };
            if let Some(x) = shown {
                text.push('\n');
                text.push_str(&x);
            }
        }
        let mut out = std::io::stdout().lock();
        if self.tty {
            if self.drawn_lines > 0 {
                let _ = write!(out, "\x1b[{}A\x1b[J", self.drawn_lines);
            }
            for m in self.messages.drain(..) {
                let _ = writeln!(out, "{m}");
            }
            let left = s.duration_ns.map_or(String::new(), |d| {
                format!(
                    "  ({} left)",
                    // Whole seconds, rounded up: "0s left" only at the end.
                    format_duration_ns(
                        d.saturating_sub(s.elapsed_ns).div_ceil(1_000_000_000) * 1_000_000_000
                    )
                )
            });
            let head = format!("[{:.1} s]{left}\n", s.elapsed_ns as f64 / 1e9);
            let _ = write!(out, "{head}{text}");
            self.drawn_lines = text.lines().count() + 1;
        } else {
            for m in self.messages.drain(..) {
                let _ = writeln!(out, "{m}");
            }
            let _ = writeln!(out, "[{:.1} s]", s.elapsed_ns as f64 / 1e9);
            let _ = write!(out, "{text}");
        }
        let _ = out.flush();
    }
}

impl Observer for RunObserver<'_> {
    fn interval(&mut self, raw: &IntervalStats) -> bool {
        if !self.applied_main {
            // The engine has placed its threads; now the main thread may go
            // where main's cpu_affinity says (the engine restores it at the end).
            self.applied_main = true;
            if let Some(c) = &self.main_cpus {
                if let Err(e) = sched::set_affinity(0, c) {
                    self.messages
                        .push(format!("main: cannot set cpu_affinity {c}: {e}"));
                }
            }
            if let Some((p, prio)) = self.main_sched {
                if let Err(e) = sched::set_scheduler(0, p, prio) {
                    self.messages
                        .push(format!("main: cannot set {p} priority {prio}: {e}"));
                }
            }
        }
        let s = self.adjust(raw);
        let mut phase = "load".to_string();
        if let Some(sh) = &self.shared {
            let mut g = sh.lock().unwrap_or_else(|p| p.into_inner());
            self.messages.append(&mut g.messages);
            phase = g.phase.clone();
            if let Some(l) = &g.stop {
                self.stop_reason.get_or_insert(l.clone());
            }
        }
        let load = self.meter.as_mut().and_then(|m| m.sample().ok());
        if let Some(t) = &mut self.timeline {
            if let Err(e) = t.append(&s, 0, &phase, load.as_ref()) {
                self.writer
                    .note(format!("timeline.csv: {e}; no more timeline rows"));
                self.timeline = None;
            }
        }
        self.render(&s, load.as_ref());
        self.stop_reason.is_none()
    }

    fn wants_snapshot(&mut self, s: &IntervalStats) -> bool {
        match &mut self.checkpoint {
            Some(c) if s.elapsed_ns >= c.next_ns => {
                c.next_ns = s.elapsed_ns + c.every_ns;
                true
            }
            _ => false,
        }
    }

    fn snapshot(&mut self, m: &Measurement) {
        let Some(c) = &self.checkpoint else { return };
        let mut ctx = c.ctx.clone();
        if let Some(sh) = &self.shared {
            let stats = sh.lock().unwrap_or_else(|p| p.into_inner()).stats.clone();
            ctx.programs = program_results(self.cfg, &stats);
        }
        let mut res = pipeline::to_result(m, &ctx);
        if let Some((prev, gap)) = &c.base {
            match rtshield_results::merge::merge_resumed(prev, &res, *gap) {
                Ok(r) => res = r,
                Err(e) => self.writer.note(format!("checkpoint: --resume: {e}")),
            }
        }
        res.end_reason = "checkpoint".into();
        // What a kill -9 leaves says how hot it was at the last checkpoint.
        res.sysinfo.thermal_end = rtshield_sys::power::thermal(&self.root);
        let dir = c.dir.clone();
        self.writer.checkpoint(&self.exports, &res, &dir);
    }
}

// ---------------------------------------------------------------- files

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
/// and no child or grandchild process is left.
pub fn execute(cfg: &Config, opts: &RunOptions, stop: &AtomicBool) -> anyhow::Result<RunOutcome> {
    execute_with(cfg, opts, stop, None)
}

/// [`execute`], continuing the interrupted run `resume` describes (see
/// [`crate::resume`]): its directory, its remaining time, its figures
/// merged into the results, its timeline continued after a `down` phase.
pub fn execute_resume(
    cfg: &Config,
    opts: &RunOptions,
    stop: &AtomicBool,
    resume: &crate::resume::Resume,
) -> anyhow::Result<RunOutcome> {
    execute_with(cfg, opts, stop, Some(resume))
}

fn execute_with(
    cfg: &Config,
    opts: &RunOptions,
    stop: &AtomicBool,
    resume: Option<&crate::resume::Resume>,
) -> anyhow::Result<RunOutcome> {
    // Orphaned grandchildren come back to us, so the final sweep finds them.
    supervise::become_subreaper().context("prctl(PR_SET_CHILD_SUBREAPER)")?;
    let res = execute_inner(cfg, opts, stop, resume);
    // Whatever happened (even an error), nothing started by the run stays.
    let killed = rtshield_load::reaper::kill_all_descendants();
    res.map(|mut o| {
        o.stragglers_killed = killed;
        o
    })
}

fn execute_inner(
    cfg: &Config,
    opts: &RunOptions,
    stop: &AtomicBool,
    resume: Option<&crate::resume::Resume>,
) -> anyhow::Result<RunOutcome> {
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
    let total = opts.duration_ns.or(cfg.duration_ns());
    let (mut spec, mut warnings) = measure_spec(cfg, total);
    warnings.extend(cfg.warnings.iter().cloned());
    let sysinfo = SysInfo::collect(&opts.root, false);
    let rotate = cfg.main.rotate_ns;
    // Like the torture article's scripts: the first number not used yet,
    // so a re-run with the same --out never overwrites an earlier part.
    let mut rot_n: Option<u32> = match resume {
        Some(r) => rotate.map(|_| r.part.unwrap_or(1)),
        None => rotate.map(|_| next_free_part(opts.out.as_deref(), 1)),
    };
    // Refused or impossible before anything starts or moves: an error (exit 2 for a refusal).
    let mut metrics = opts
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
    let mut dir_path = first.path().to_path_buf();
    let mut dir = Some(first);

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

    // Every partition a stanza names must exist before anything moves.
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
    let v2 = Partitions::discover(&opts.root)
        .hierarchy()
        .is_some_and(|h| h.is_v2());
    let timer_cg = cfg.timers.iter().find_map(|t| t.cgroup);
    if !v2 {
        // cgroup v1: each thread goes to the partition its stanza names
        // (the systress article's rpi_cpuset.cfg: main in nrt, the timer
        // thread in rt). The process (every thread so far) joins main's;
        // a timer thread writes its own TID to its partition's `tasks`
        // file before pinning itself; threads started later (the program
        // supervisor) stay with main; programs join theirs from the shim.
        if let Some(g) = cfg.main.cgroup {
            let (h, dir) = partition_dir(&opts.root, g).expect("checked above");
            opts.root
                .write(h.procs_file(&dir), &std::process::id().to_string())
                .with_context(|| format!("cannot move rtshield into the {} partition", g.name()))?;
        }
        for (ts, t) in spec.threads.iter_mut().zip(&cfg.timers) {
            ts.cgroup_tasks = t.cgroup.and_then(|g| partition_procs_file(&opts.root, g));
        }
    } else {
        // cgroup v2 keeps every thread of a process in one cgroup unless
        // the cgroups are threaded, and rtshield's rt/nrt are domain
        // cgroups (a cpuset partition holding whole processes): the
        // process goes to one partition, the timers' when they name one
        // (a cpuset limits affinity, and the measuring threads must reach
        // their CPUs); main's cpu_affinity keeps the main thread off them.
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
    }
    let procs = proc_specs(cfg)?;
    let mut sup = if procs.is_empty() {
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
    let tty = std::io::stdout().is_terminal();
    let mut obs = RunObserver {
        cfg,
        root: opts.root.clone(),
        shared: sup.as_ref().map(|s| s.shared.clone()),
        meter: CpuLoadMeter::new(opts.root.clone()).ok(),
        timeline: None,
        offset_ns: 0,
        base: Vec::new(),
        checkpoint: None,
        quiet: opts.quiet,
        tty,
        drawn_lines: 0,
        stop_reason: None,
        messages: Vec::new(),
        main_cpus: cfg.main.cpu_affinity.clone(),
        main_sched: cfg.main.sched.map(|s| (s.policy, s.priority)),
        applied_main: false,
        total_ns: total,
        exports: exports(cfg),
        writer: ResultWriter::new(),
    };
    obs.timeline = match resume {
        Some(r) => dir
            .as_ref()
            .and_then(|d| resume_timeline(&mut obs.writer, d, &online_cpus, &opts.root, r)),
        None => dir
            .as_ref()
            .and_then(|d| open_timeline(&mut obs.writer, d, &online_cpus, &opts.root)),
    };
    if let Some(r) = resume {
        // The timeline goes on after the gap; the display counts from the checkpoint.
        obs.offset_ns = ((r.last_elapsed_s + r.gap_s) * 1e9) as u64;
        obs.base = r
            .prev
            .threads
            .iter()
            .map(|t| (t.index, t.samples, t.max_ns, t.overruns, t.lost))
            .collect();
    }

    // Let the loads settle before measuring.
    let delay_end = Instant::now() + Duration::from_nanos(cfg.main.start_delay_ns);
    while Instant::now() < delay_end && !stop.load(Ordering::Relaxed) {
        std::thread::sleep(
            Duration::from_millis(20).min(delay_end.saturating_duration_since(Instant::now())),
        );
    }

    let ctx_for =
        |progs: Vec<ProgramResult>, warnings: &[String], part: Option<u32>| ResultContext {
            command: opts.command.clone(),
            config: Some(cfg.text.clone()),
            // Rotated parts get their number, so reports tell them apart.
            label: match part {
                Some(n) => opts.label.as_ref().map(|l| format!("{l}-{n}")),
                None => opts.label.clone(),
            },
            tags: opts
                .tags
                .clone()
                .into_iter()
                .chain([("config".to_string(), cfg.file.clone())])
                .chain(part.map(|n| ("part".to_string(), n.to_string())))
                .collect(),
            programs: progs,
            warnings: warnings.to_vec(),
            sysinfo: sysinfo.clone(),
        };
    let programs_now = |sup: &Option<SupThread>| -> Vec<ProgramResult> {
        let stats: Vec<(String, ProcStats)> = sup
            .as_ref()
            .map(|s| {
                s.shared
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .stats
                    .clone()
            })
            .unwrap_or_default();
        program_results(cfg, &stats)
    };

    // Each part's start temperatures are the previous part's end ones.
    let mut part_thermal = sysinfo.thermal.clone();
    let target_samples = spec.samples;
    let mut results: Vec<(PathBuf, RunResult)> = Vec::new();
    let mut done_ns: u64 = 0; // measured so far, whole run
    let mut samples_done: u64 = 0; // per thread (the least), whole run
                                   // The checkpoint a resumed run adds its first segment to.
    let mut base: Option<(RunResult, f64)> = None;
    if let Some(r) = resume {
        // Earlier parts each ran their full rotation length.
        let before = match (r.part, rotate) {
            (Some(n), Some(rot)) => u64::from(n.saturating_sub(1)).saturating_mul(rot),
            _ => 0,
        };
        done_ns = before + r.measured_ns();
        samples_done = r.prev.threads.iter().map(|t| t.samples).min().unwrap_or(0);
        base = Some((r.prev.clone(), r.gap_s));
    }
    let mut end_reason;
    // One segment per rotation part (one for the whole run without
    // stats.rotate); checkpoints are snapshots inside a segment.
    loop {
        let mut seg: Option<u64> = total.map(|t| t.saturating_sub(done_ns));
        if let Some(r) = rotate {
            // A resumed part only has what is left of its rotation length.
            let left = match &base {
                Some((prev, _)) => r.saturating_sub((prev.duration_s * 1e9) as u64).max(1),
                None => r,
            };
            seg = Some(seg.map_or(left, |s| s.min(left)));
        }
        spec.duration_ns = seg;
        spec.samples = target_samples.map(|t| t.saturating_sub(samples_done).max(1));
        obs.checkpoint = dir
            .as_ref()
            .filter(|_| cfg.main.checkpoint_ns > 0)
            .map(|d| Checkpoint {
                every_ns: cfg.main.checkpoint_ns,
                next_ns: cfg.main.checkpoint_ns,
                dir: d.clone(),
                ctx: ctx_for(Vec::new(), &warnings, rot_n),
                base: base.clone(),
            });
        // main's affinity/policy are applied inside each segment (see the
        // observer); give the engine back the thread as it was.
        let saved_aff = sched::get_affinity(0).ok();
        obs.applied_main = false;
        let m = match metrics.as_mut() {
            Some(f) => {
                let mut w = crate::metrics::WithMetrics::new(&mut obs, f);
                pipeline::measure(&opts.root, &spec, stop, &mut w)
            }
            None => pipeline::measure(&opts.root, &spec, stop, &mut obs),
        };
        if obs.main_sched.is_some() {
            let _ = sched::set_scheduler(0, Policy::Other, 0);
        }
        if let Some(a) = saved_aff {
            let _ = sched::set_affinity(0, &a);
        }
        let m = m?;
        if let Some(f) = metrics.as_mut() {
            f.write(&m);
        }
        let end = m.end;
        // A segment that ran its course counts as its requested length, so
        // the run's total does not drift by the set-up time of a rotation.
        done_ns += match (end, seg) {
            (EndReason::Duration, Some(s)) => s,
            _ => m.elapsed_ns,
        };
        obs.offset_ns += m.elapsed_ns;
        samples_done += m
            .threads
            .iter()
            .map(|t| t.exact.lat.count)
            .min()
            .unwrap_or(0);
        end_reason = if obs.stop_reason.is_some() {
            "stop".to_string()
        } else {
            end.name()
        };
        let finished = stop.load(Ordering::Relaxed)
            || obs.stop_reason.is_some()
            || matches!(
                end,
                EndReason::Signal(_) | EndReason::Stop | EndReason::Samples | EndReason::TraceStop
            )
            || total.is_some_and(|t| done_ns >= t)
            || target_samples.is_some_and(|t| samples_done >= t);
        let mut res = pipeline::to_result(&m, &ctx_for(programs_now(&sup), &warnings, rot_n));
        stamp_temperatures(&mut res, &opts.root, &mut part_thermal);
        if let Some((prev, gap)) = base.take() {
            res = rtshield_results::merge::merge_resumed(&prev, &res, gap)
                .map_err(|e| anyhow::anyhow!("--resume: {e}"))?;
            obs.base.clear();
        }
        if finished {
            res.end_reason = end_reason.clone();
            break_out(&mut sup, &mut res, cfg);
            obs.writer.write(&obs.exports, &res, dir.clone(), &dir_path);
            results.push((dir_path.clone(), res));
            break;
        }
        // Only a rotation ends a segment without ending the run.
        res.end_reason = "rotate".into();
        obs.writer.write(&obs.exports, &res, dir.clone(), &dir_path);
        results.push((dir_path.clone(), res));
        rot_n = rot_n.map(|n| next_free_part(opts.out.as_deref(), n + 1));
        // A part directory that cannot be made does not stop the run: its
        // files go to the fallback directory at the end.
        match open_part(opts, rot_n) {
            Ok(d) => {
                dir_path = d.path().to_path_buf();
                dir = Some(Rc::new(d));
            }
            Err(e) => {
                dir_path = match &opts.out {
                    Some(o) => rotated_dir(o, rot_n),
                    None => Path::new("rtshield-results")
                        .join(rotated_dir(Path::new(&opts.stamp), rot_n)),
                };
                obs.writer.note(format!("{e:#}"));
                dir = None;
            }
        }
        obs.timeline = dir
            .as_ref()
            .and_then(|d| open_timeline(&mut obs.writer, d, &online_cpus, &opts.root));
    }
    let missing = obs.writer.finish();
    if let Some(s) = &mut sup {
        s.stop();
    }
    if obs.tty && !obs.quiet {
        for m in obs.messages.drain(..) {
            println!("{m}");
        }
    }
    Ok(RunOutcome {
        results,
        end_reason,
        stragglers_killed: 0,
        missing,
    })
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
