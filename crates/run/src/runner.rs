//! `rtshield run CONFIG`: programs and built-in loads under a supervisor,
//! the measuring engine (one run per rotation part, checkpointed from its
//! snapshots), the live display with
//! per-CPU load, timeline.csv, load/rest phases, rotation, and the final
//! clean-up that leaves no process behind. The supervisor thread is in
//! `supervisor`, the engine's observer in `observer`.

use crate::pipeline::{self, Missing};
use crate::print::ConfigPrinter;
use anyhow::Context;
use rtshield_config::{Action, Config, Cycle, Format, Partition};
use rtshield_isolation::Partitions;
use rtshield_load::become_subreaper;
use rtshield_load::{LoadSpec, ProcSpec, ProcStats};
use rtshield_measure::{MeasureSpec, ThreadSpec};
use rtshield_results::ExportManager;
use rtshield_results::{ProgramResult, RunResult};
use rtshield_safefs::{DirPolicy, SafeDir};
use rtshield_sys::Root;
use rtshield_vocab::format_duration_ns;
use rtshield_vocab::CpuSet;
use rtshield_vocab::Output;
use rtshield_vocab::Policy;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// What the command line adds to the configuration.
#[derive(Debug, Clone)]
pub(crate) struct RunOptions {
    /// Output directory (`DIR-1`, `DIR-2`, ... with `stats.rotate`); None:
    /// a fresh `rtshield-results/STAMP[-N]`.
    pub out: Option<PathBuf>,
    /// The default directory's name (`CONFIG-YYYYMMDD-HHMMSS`).
    pub stamp: String,
    /// `--force-unsafe-dir`.
    pub policy: DirPolicy,
    /// `--duration`: overrides every `lifetime.duration`.
    pub duration_ns: Option<u64>,
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
    /// `--max-latency`: recorded with the verdict in each part's results.
    pub limits: rtshield_results::Limits,
}

/// What happened.
#[derive(Debug)]
pub struct RunOutcome {
    /// Each result directory with the results written there (one per rotation).
    pub results: Vec<(PathBuf, RunResult)>,
    /// Why the run ended, as written in `end_reason` (`duration`, `sigint`, `stop` ...).
    pub end_reason: String,
    /// Descendants still alive after the supervisor's shutdown (a
    /// daemonised grandchild, re-parented to rtshield, the subreaper),
    /// ended by the final sweep (`rtshield_load::end_descendants`).
    pub stragglers: Vec<rtshield_load::Ended>,
    /// Result files not written where asked (see [`pipeline::ResultWriter`]).
    pub missing: Vec<Missing>,
}

/// The engine's spec for a configuration (per-thread histogram settings
/// are shared by the engine: the largest size and finest resolution win).
pub(crate) fn measure_spec(cfg: &Config, duration_ns: Option<u64>) -> (MeasureSpec, Vec<String>) {
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
pub(crate) fn trace_spec(t: &rtshield_config::Trace) -> Option<rtshield_measure::TraceSpec> {
    t.wanted().then_some(rtshield_measure::TraceSpec {
        on_latency_ns: t.on_latency_ns,
        stop: t.stop,
        split: t.split,
        buffer_kb: t.buffer_kb,
    })
}

/// A supervised process with its load cycle and partition.
pub(crate) type Supervised = (ProcSpec, Option<Cycle>, Option<Partition>);

/// Supervised processes for the programs, with the cycle of each.
pub(crate) fn proc_specs(cfg: &Config) -> anyhow::Result<Vec<Supervised>> {
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
                peer,
            } => {
                let ls = LoadSpec {
                    kind: *kind,
                    cpus: p.cpu_affinity.clone(),
                    size: *size,
                    workers_per_cpu: *workers,
                    peer: *peer,
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

/// The command a program runs, for results and messages, its passwords
/// masked (docs/security.md: program commands a run records are redacted).
pub(crate) fn describe_action(a: &Action) -> String {
    match a {
        Action::Command(w) => rtshield_text::secret::redact_command(w),
        Action::Builtin { kind, .. } => format!("builtin:{kind}"),
    }
}

/// The tasks file of the `rt` or `nrt` set a stanza's `cgroup` names,
/// where `rtshield_isolation::Partitions` finds it: rtshield's own
/// partitions under every `--parent` that has a state file, then at the
/// root; then a partrt partition (`rt`/`nrt` at the root) and a cset
/// shield (`user` is the shielded set, `system` the rest).
pub(crate) fn partition_procs_file(root: &Root, p: Partition) -> Option<String> {
    partition_dir(root, p).map(|(h, dir)| h.tasks_file(&dir))
}

/// The hierarchy and directory of the `rt` or `nrt` set (see
/// [`partition_procs_file`] for where it is looked for).
pub(crate) fn partition_dir(
    root: &Root,
    p: Partition,
) -> Option<(rtshield_sys::Hierarchy, String)> {
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
pub(crate) fn ambiguous_partitions(root: &Root) -> Result<(), String> {
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
pub(crate) fn measure_partition_files(
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
    if let Some(p) = parent {
        // The one parent rule: a `..` would turn the task files written
        // below into ordinary files outside the hierarchy.
        rtshield_isolation::parent_dir(
            root,
            h,
            "--partition-parent",
            p,
            rtshield_isolation::RootParent::Allowed,
            true,
        )
        .map_err(|e| e.to_string())?;
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

/// The formats `stats.format` asks for (results.json always), with the
/// timer threads' `stats.filename`s.
pub(crate) fn exports(cfg: &Config) -> ExportManager {
    use rtshield_results::{Csv, CyclictestHist, SystressTxt};
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
/// file was tried. (The pipeline writes through [`pipeline::ResultWriter`];
/// this is the tests' direct way.)
#[cfg(test)]
pub(crate) fn write_results(res: &RunResult, cfg: &Config, dir: &Path) -> anyhow::Result<()> {
    let d = SafeDir::open_or_create(dir, 0o755, DirPolicy::Strict).map_err(pipeline::refusal)?;
    match exports(cfg).write(res, &d).into_iter().next() {
        None => Ok(()),
        Some(f) => anyhow::bail!(f.error),
    }
}

/// Open the directory of rotation part `n` (None: no rotation): `--out`
/// as given, or a fresh directory under `rtshield-results`.
pub(crate) fn open_part(opts: &RunOptions, n: Option<u32>) -> anyhow::Result<SafeDir> {
    match &opts.out {
        Some(out) => SafeDir::open_or_create(&rotated_dir(out, n), 0o755, opts.policy)
            .map_err(|e| pipeline::refusal(e.for_option("--out"))),
        None => {
            let name = rotated_dir(Path::new(&opts.stamp), n);
            pipeline::open_output(None, &name.to_string_lossy(), opts.policy)
        }
    }
}

/// The first part number from `from` on whose `OUT-N` does not exist
/// (anything at that path, even a dangling symlink, counts as used). Without
/// `--out` every part goes to a fresh stamped directory: `from` as is.
pub(crate) fn next_free_part(out: Option<&Path>, from: u32) -> u32 {
    let Some(out) = out else { return from };
    let mut n = from;
    while n < u32::MAX && rotated_dir(out, Some(n)).symlink_metadata().is_ok() {
        n += 1;
    }
    n
}

/// `DIR` or, with rotation, `DIR-N`.
pub(crate) fn rotated_dir(out: &Path, n: Option<u32>) -> PathBuf {
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
pub(crate) fn execute(
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
pub(crate) fn execute_resume(
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
    become_subreaper().context("prctl(PR_SET_CHILD_SUBREAPER)")?;
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
    let res = crate::segments::Run::start(cfg, opts, resume, printer).and_then(|run| run.go(stop));
    // Whatever happened (even an error), nothing started by the run stays.
    let ended = rtshield_load::end_descendants(rtshield_load::END_GRACE);
    res.map(|mut o| {
        o.stragglers = ended;
        o
    })
}

/// One [`ProgramResult`] per `program[N]` (a built-in load sums its workers).
pub(crate) fn program_results(cfg: &Config, stats: &[(String, ProcStats)]) -> Vec<ProgramResult> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_command_is_recorded_with_its_passwords_masked() {
        // Adversary round 2, B8: results.json's programs[].command kept them.
        let a = Action::Command(
            [
                "sh",
                "-c",
                "true postgres://rt:DBSECRET@db.lab/rt; true sslpassword=KEYSECRET",
            ]
            .map(String::from)
            .to_vec(),
        );
        let d = describe_action(&a);
        assert!(!d.contains("DBSECRET") && !d.contains("KEYSECRET"), "{d}");
        assert!(
            d.contains("postgres://rt:***@db.lab/rt") && d.contains("sslpassword=***"),
            "{d}"
        );
    }
}
