//! A run of `rtshield run CONFIG` under way, by phase: [`Run::start`]
//! (spec, output directory and metrics file, the partitions the stanzas
//! name, the programs' supervisor, the observer and its timeline), then
//! [`Run::go`]: one segment per rotation part (`Run::segment`, checkpoints
//! are snapshots inside it), the next part's directory, the programs
//! stopped, the outcome.

use crate::observer::{Checkpoint, RunObserver};
use crate::pipeline::{self, ResultWriter};
use crate::print::ConfigPrinter;
use crate::runner::{
    ambiguous_partitions, exports, measure_spec, next_free_part, open_part, partition_dir,
    partition_procs_file, proc_specs, program_results, rotated_dir, RunOptions, RunOutcome,
};
use crate::supervisor::SupThread;
use crate::timeline::Timeline;
use anyhow::Context;
use rtshield_config::Config;
use rtshield_load::{CpuLoadMeter, ProcStats};
use rtshield_measure::{EndReason, MeasureSpec, ResultContext};
use rtshield_results::{ProgramResult, RunResult};
use rtshield_safefs::SafeDir;
use rtshield_sys::{get_affinity, set_affinity, set_scheduler};
use rtshield_sys::{Root, SysInfo};
use rtshield_vocab::Policy;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

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
            anyhow::Error::from(rtshield_vocab::InputError::new(format!("cgroup: {e}")))
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
    let v2 = rtshield_isolation::Partitions::discover(&opts.root)
        .hierarchy()
        .is_some_and(|h| h.is_v2());
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
pub(crate) struct Run<'a> {
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
    part_thermal: Vec<rtshield_sys::ThermalZone>,
    /// The drift watch, the whole run long (every part's result holds
    /// the events so far).
    watcher: Option<rtshield_drift::Watcher>,
}

impl<'a> Run<'a> {
    /// Everything before the first sample: the spec, the output directory
    /// and metrics file (refused or impossible before anything starts or
    /// moves: exit 2 for a refusal), the partitions, the programs, the
    /// observer and its timeline.
    pub(crate) fn start(
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
            Some(r) => SafeDir::open_or_create(&r.dir, 0o755, opts.policy)
                .map_err(|e| pipeline::refusal(e.for_option("--resume")))?,
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
        let online_cpus: Vec<u32> = rtshield_sys::StatSnapshot::read(&opts.root)
            .map(|s| s.cpus.keys().copied().collect())
            .unwrap_or_default();
        let mut obs = observer(cfg, opts, &sup, total, printer);
        let watcher = Some(rtshield_drift::Watcher::start(
            rtshield_drift::WatchSpec {
                root: opts.root.clone(),
                cpus: spec.threads.iter().filter_map(|t| t.cpu).collect(),
                parent: None,
                own_pid: std::process::id(),
            },
            Duration::from_nanos(spec.stats_period_ns),
        ));
        obs.drift = watcher.as_ref().map(|w| w.feed());
        let mut run = Run {
            watcher,
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
        let feed = self.watcher.as_ref().map(|w| w.feed());
        let (w, root) = (&mut self.obs.writer, &self.opts.root);
        self.obs.timeline = match resume {
            Some(r) => self
                .dir
                .as_ref()
                .and_then(|d| resume_timeline(w, d, &self.online_cpus, root, r)),
            None => self
                .dir
                .as_ref()
                .and_then(|d| open_timeline(w, d, &self.online_cpus, root, feed)),
        };
        let Some(r) = resume else { return };
        // The timeline goes on after the gap; the display counts from the checkpoint.
        self.obs.offset_ns = ((r.last_elapsed_s + r.gap_s) * 1e9) as u64;
        self.obs.base = r
            .prev
            .threads
            .iter()
            .map(|t| {
                let n = |v: Option<u64>| v.unwrap_or(0);
                (t.index, n(t.samples), t.max_ns, n(t.overruns), n(t.lost))
            })
            .collect();
        // Earlier parts each ran their full rotation length.
        let before = match (r.part, self.rotate) {
            (Some(n), Some(rot)) => u64::from(n.saturating_sub(1)).saturating_mul(rot),
            _ => 0,
        };
        self.done_ns = before + r.measured_ns();
        self.samples_done = r
            .prev
            .threads
            .iter()
            .map(|t| t.samples.unwrap_or(0))
            .min()
            .unwrap_or(0);
        self.base = Some((r.prev.clone(), r.gap_s));
    }

    /// Measure: the loads settle, then one segment per rotation part (one
    /// for the whole run without `stats.rotate`; checkpoints are snapshots
    /// inside a segment), then the programs stop.
    pub(crate) fn go(mut self, stop: &AtomicBool) -> anyhow::Result<RunOutcome> {
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
            stragglers: Vec::new(),
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
            limits: opts.limits,
            drift: self
                .watcher
                .as_ref()
                .map(|w| w.so_far())
                .unwrap_or_default(),
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
                Some((prev, _)) => r
                    .saturating_sub((prev.duration_s.unwrap_or(0.0) * 1e9) as u64)
                    .max(1),
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
        let saved_aff = get_affinity(0).ok();
        self.obs.applied_main = false;
        let m = match self.metrics.as_mut() {
            Some(f) => {
                let mut w = crate::metrics::WithMetrics::new(&mut self.obs, f);
                pipeline::measure(&self.opts.root, &self.spec, stop, &mut w)
            }
            None => pipeline::measure(&self.opts.root, &self.spec, stop, &mut self.obs),
        };
        if self.obs.main_sched.is_some() {
            let _ = set_scheduler(0, Policy::Other, 0);
        }
        if let Some(a) = saved_aff {
            let _ = set_affinity(0, &a);
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
            res = rtshield_results::merge_resumed(&prev, &res, gap)
                .map_err(|e| anyhow::anyhow!("--resume: {e}"))?;
            self.obs.base.clear();
        }
        // Only a rotation ends a segment without ending the run.
        res.end_reason = if finished {
            break_out(&mut self.sup, &mut res, cfg);
            Some(end_reason.clone())
        } else {
            Some("rotate".into())
        };
        let (ex, w) = (&self.obs.exports, &mut self.obs.writer);
        w.write(ex, &res, self.dir.clone(), &self.dir_path);
        if let Some(d) = &self.dir {
            pipeline::write_manifest(d);
        }
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
        let feed = self.watcher.as_ref().map(|w| w.feed());
        let (w, root) = (&mut self.obs.writer, &opts.root);
        self.obs.timeline = self
            .dir
            .as_ref()
            .and_then(|d| open_timeline(w, d, &self.online_cpus, root, feed));
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
        drift: None,
        row_phase: None,
    }
}

/// Temperatures of a part: at its start (`start`, then updated to the
/// end ones for the next part) and now, at its end.
fn stamp_temperatures(
    res: &mut RunResult,
    root: &Root,
    start: &mut Vec<rtshield_sys::ThermalZone>,
) {
    res.sysinfo.thermal = start.clone();
    res.sysinfo.thermal_end = rtshield_sys::thermal_zones(root);
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
    let header = rtshield_results::timeline_header_with_host(cpus);
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
    drift: Option<rtshield_drift::Feed>,
) -> Option<Timeline> {
    let made = match drift {
        Some(f) => Timeline::create_watched(dir, cpus.to_vec(), f),
        None => Timeline::create(dir, cpus.to_vec()),
    };
    match made {
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
