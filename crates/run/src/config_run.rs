//! `rtshield run CONFIG`: the one entry point ([`run_config`]) that takes a
//! [`ConfigRequest`] from the command line through every step, in order:
//! signals, the file read and checked (`--check` stops there), warnings,
//! `--resume`'s checkpoint, label and tags, the run ([`crate::runner`]),
//! the summary, the store, the exit status. A [`ConfigPrinter`] shows it.

use crate::print::ConfigPrinter;
use crate::runner::{self, RunOptions};
use anyhow::Context;
use rtshield_config::{Action, Config, Machine};
use rtshield_safefs::{DirPolicy, InputTrust};
use rtshield_sys::Root;
use rtshield_vocab::InputError;
use std::path::{Path, PathBuf};

/// `rtshield run CONFIG`, as asked.
#[derive(Debug, Clone, Default)]
pub struct ConfigRequest {
    /// The configuration file.
    pub config: PathBuf,
    /// Only check the file and print the effective settings.
    pub check: bool,
    /// Output directory (None: `rtshield-results/<config>-<UTC timestamp>`).
    pub out: Option<PathBuf>,
    /// Write into unsafe directories anyway.
    pub force_unsafe_dir: bool,
    /// Overrides every `lifetime.duration`.
    pub duration_ns: Option<u64>,
    /// Map CPUs this machine does not have onto its online CPUs.
    pub fold_cpus: bool,
    /// No live display.
    pub quiet: bool,
    /// Label of the run (None: the output directory's name).
    pub label: Option<String>,
    /// Continue the run interrupted in this directory.
    pub resume: Option<PathBuf>,
    /// Rewrite this file with the latency so far every stats period.
    pub metrics_file: Option<PathBuf>,
    /// The user's tags.
    pub tags: Vec<(String, String)>,
    /// The results store (None: the default one).
    pub store: Option<String>,
    /// Do not store the runs.
    pub no_store: bool,
    /// The command line recorded in the results.
    pub command: Vec<String>,
    /// `--max-latency`: exit status 3 when a thread's maximum exceeds it;
    /// recorded with the verdict in every part's results.json.
    pub max_latency_ns: Option<u64>,
}

/// Run (or `--check`) a configuration file. Returns the exit status:
/// [`rtshield_results::EXIT_LIMIT_EXCEEDED`] when a part's verdict failed
/// (`--max-latency`), else [`crate::pipeline::EXIT_FILES_MISSING`] when a
/// result file is not where asked, else 0.
pub fn run_config(
    req: &ConfigRequest,
    root: &Root,
    printer: &mut dyn ConfigPrinter,
) -> anyhow::Result<i32> {
    // Handlers first: a Ctrl-C from now on still ends in clean-up and files.
    let stop = rtshield_measure::install_signals();
    let machine = Machine::from_root(root, req.fold_cpus).context("cannot read the online CPUs")?;
    // As root, a configuration another user could change is refused
    // (it chooses what root runs and writes), only warned about when
    // nothing runs (--check) or with --force-unsafe-dir (round 5 (A), F01).
    let trust = if req.check {
        InputTrust::Warn
    } else if req.force_unsafe_dir {
        InputTrust::Accept
    } else {
        InputTrust::Refuse
    };
    let (cfg, trust_warning) = rtshield_config::load_trusted(&req.config, &machine, trust)?;
    if req.duration_ns == Some(0) {
        return Err(InputError::new("--duration 0: must be > 0").into());
    }
    if let Some(l) = req
        .max_latency_ns
        .filter(|l| !rtshield_limits::MAX_LATENCY_NS.contains(*l))
    {
        return Err(InputError::new(format!(
            "--max-latency {}: must be more than 0 and at most 1h",
            rtshield_vocab::format_duration_ns(l)
        ))
        .into());
    }
    let mut warnings = check_warnings(&cfg);
    warnings.extend(trust_warning);
    if req.check {
        printer.checked(&cfg, &warnings, req.duration_ns.or(cfg.duration_ns()));
        return Ok(0);
    }
    printer.warnings(&warnings);
    // Checked before anything starts: nothing to resume is bad input (exit 2).
    let resume = match &req.resume {
        Some(dir) => Some(crate::resume::prepare(dir, &cfg)?),
        None => None,
    };
    let opts = options(req, root, &cfg, resume.as_ref())?;
    crate::tracing::remove_leftovers(root);
    let outcome = match &resume {
        Some(r) => {
            printer.resuming(&r.dir, r.prev.duration_s.unwrap_or(0.0), r.gap_s);
            runner::execute_resume(&cfg, &opts, stop, r, printer)?
        }
        None => runner::execute(&cfg, &opts, stop, printer)?,
    };
    printer.summary(&cfg, &outcome);
    if !outcome.missing.is_empty() {
        printer.files_missing(outcome.missing.len());
        return Ok(crate::pipeline::EXIT_FILES_MISSING);
    }
    let parts: Vec<(&Path, &rtshield_results::RunResult)> = outcome
        .results
        .iter()
        .map(|(d, r)| (d.as_path(), r))
        .collect();
    crate::store::store_runs(req.store.as_deref(), req.no_store, &parts);
    // The verdict recorded in the results is the exit status's one.
    let failed = outcome
        .results
        .iter()
        .any(|(_, r)| r.verdict.as_ref().is_some_and(|v| !v.passed));
    Ok(if failed {
        rtshield_results::EXIT_LIMIT_EXCEEDED
    } else {
        0
    })
}

/// What the run needs besides the file: directory, label, tags, executable.
fn options(
    req: &ConfigRequest,
    root: &Root,
    cfg: &Config,
    resume: Option<&crate::resume::Resume>,
) -> anyhow::Result<RunOptions> {
    let stem = req
        .config
        .file_stem()
        .map_or("run".into(), |s| s.to_string_lossy().into_owned());
    let stamp = format!(
        "{stem}-{}",
        rtshield_measure::stamp_utc(std::time::SystemTime::now())
    );
    // Without --label: the output directory's name.
    let label = req.label.clone().or_else(|| match (resume, &req.out) {
        // The resumed run keeps its label (rotation parts add -N to it).
        (Some(r), _) => r.out.file_name().map(|n| n.to_string_lossy().into_owned()),
        (None, Some(o)) => o.file_name().map(|n| n.to_string_lossy().into_owned()),
        (None, None) => Some(stamp.clone()),
    });
    let tags = crate::store::run_tags(
        root,
        &crate::store::config_load(cfg),
        &req.tags,
        &crate::store::config_placements(root, cfg),
    );
    Ok(RunOptions {
        out: req.out.clone(),
        stamp,
        policy: if req.force_unsafe_dir {
            DirPolicy::AllowUnsafe
        } else {
            DirPolicy::Strict
        },
        duration_ns: req.duration_ns,
        command: req.command.clone(),
        root: root.clone(),
        label,
        exe: rtshield_load::worker_exe()?,
        tags,
        limits: rtshield_results::Limits {
            max_latency_ns: req.max_latency_ns,
        },
        metrics_file: req.metrics_file.clone(),
    })
}

/// Warnings worth giving before a run: folded CPUs, commands not found.
pub fn check_warnings(cfg: &Config) -> Vec<String> {
    let mut w = cfg.warnings.clone();
    for p in &cfg.programs {
        if let Action::Command(argv) = &p.action {
            if !in_path(&argv[0]) {
                w.push(format!(
                    "program[{}]: '{}' is not found in PATH; it will fail (and follow termination.ko)",
                    p.index, argv[0]
                ));
            }
        }
    }
    w
}

/// Whether `prog` would be found: a path that exists, or a name in `$PATH`.
fn in_path(prog: &str) -> bool {
    if prog.contains('/') {
        return Path::new(prog).exists();
    }
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(prog).is_file()))
}
