//! `rtshield noise`: OS noise on busy-polling CPUs (oslat/osnoise-like),
//! with the cause of every gap from kernel trace events (`--trace`).

use crate::cli::Global;
use rtshield_noise::{EndReason, NoiseSpec, DEFAULT_PERIOD_NS};
use rtshield_results::{Csv, CyclictestHist, ExportManager};
use rtshield_safefs::{DirPolicy, SafeDir};
use rtshield_text::{errln, out};
use rtshield_vocab::Dur;
use rtshield_vocab::{CpuSet, InputError};
use std::path::{Path, PathBuf};

#[derive(clap::Args, Debug, Clone)]
pub(crate) struct Args {
    /// CPUs to measure, one spinning thread each: `1`, `2-3`, `0,2-3` or a hex mask `0x8`.
    #[arg(long, alias = "cpu", value_name = "LIST")]
    pub(crate) cpus: String,
    /// How long to measure (10ms..365d); without it, until Ctrl-C.
    #[arg(long, value_name = "DUR")]
    pub(crate) duration: Option<Dur>,
    /// A gap between two clock reads longer than this is noise (100ns..1s).
    #[arg(long, default_value = "1us", value_name = "DUR")]
    pub(crate) threshold: Dur,
    /// Spinning time per period (1ms..1h) [default: 900ms with --prio, else the whole period].
    #[arg(long, value_name = "DUR")]
    pub(crate) runtime: Option<Dur>,
    /// Window spacing: the thread sleeps period - runtime of each (1ms..1h) [default: 1s].
    #[arg(long, value_name = "DUR")]
    pub(crate) period: Option<Dur>,
    /// Spin at SCHED_FIFO with this priority (1..99), at most 95 % of each period [default: SCHED_OTHER].
    #[arg(long, value_name = "N")]
    pub(crate) prio: Option<i32>,
    /// Name the cause of every gap from kernel trace events (a private tracefs instance; root).
    #[arg(long)]
    pub(crate) trace: bool,
    /// Per-CPU trace buffer in KiB, 1..1048576 [default: 2048].
    #[arg(long, value_name = "KIB", requires = "trace")]
    pub(crate) trace_buffer_kb: Option<u32>,
    /// Top offenders shown per CPU (0..100).
    #[arg(long, default_value_t = 5, value_name = "N")]
    pub(crate) top: usize,
    /// Also write results.json (kind `noise`) to FILE (its directory must exist).
    #[arg(long, value_name = "FILE")]
    pub(crate) json: Option<PathBuf>,
    /// Write the result files into DIR (created if needed): results.json, results.csv and
    /// histogram.txt (cyclictest -h text of the noise lengths).
    #[arg(long, value_name = "DIR")]
    pub(crate) out: Option<PathBuf>,
    /// A label for reports and the store [default: the --out directory name].
    #[arg(long, value_name = "TEXT")]
    pub(crate) label: Option<String>,
    /// Write --json FILE and --out DIR even if their directory is owned by another user or writable by others.
    #[arg(long)]
    pub(crate) force_unsafe_dir: bool,
    /// Do not lock memory (mlockall).
    #[arg(long)]
    pub(crate) no_memlock: bool,
    #[command(flatten)]
    pub(crate) store: super::StoreArgs,
    /// No start line, only the summary.
    #[arg(long, short)]
    pub(crate) quiet: bool,
}

impl Args {
    /// The measurement asked, every value in its range (docs/ranges.md).
    pub(crate) fn spec(&self) -> anyhow::Result<NoiseSpec> {
        let cpus = CpuSet::parse(&self.cpus)
            .map_err(|e| InputError::new(format!("--cpus {}: {e}", self.cpus)))?;
        let mut s = NoiseSpec::new(cpus);
        s.duration_ns = self.duration.map(Dur::ns);
        s.threshold_ns = self.threshold.ns();
        s.priority = self.prio;
        s.period_ns = self.period.map_or(DEFAULT_PERIOD_NS, Dur::ns);
        s.runtime_ns = match (self.runtime, self.prio) {
            (Some(r), _) => r.ns(),
            // 90 % of the period at SCHED_FIFO, all of it otherwise.
            (None, Some(_)) => s.period_ns / 10 * 9,
            (None, None) => s.period_ns,
        };
        s.trace = self.trace;
        if let Some(kb) = self.trace_buffer_kb {
            s.trace_buffer_kb = kb;
        }
        s.memlock = !self.no_memlock;
        s.check()?;
        if self.top > 100 {
            return Err(
                InputError::new(format!("--top {}: must be within 0..100", self.top)).into(),
            );
        }
        Ok(s)
    }

    fn dir_policy(&self) -> DirPolicy {
        if self.force_unsafe_dir {
            DirPolicy::AllowUnsafe
        } else {
            DirPolicy::Strict
        }
    }
}

/// The `--json` target, checked before anything starts.
fn json_target(a: &Args) -> anyhow::Result<Option<(SafeDir, String)>> {
    let Some(p) = &a.json else { return Ok(None) };
    // The path layer's one cut: `FILE/` names no file (refused, as
    // `measure --json FILE/` is), `..` refused.
    let (d, name) = rtshield_safefs::open_file_dir(p, a.dir_policy())
        .map_err(|e| InputError::new(format!("--json {}: {e}", p.display())))?;
    Ok(Some((d, name)))
}

/// The `--out` directory, opened (created) before anything starts.
fn out_target(a: &Args) -> anyhow::Result<Option<SafeDir>> {
    let Some(p) = &a.out else { return Ok(None) };
    let d = rtshield_safefs::output_dir(Some(p), Path::new("."), "", a.dir_policy())
        .map_err(|e| rtshield_run::refusal(e.for_option("--out")))?;
    Ok(Some(d))
}

/// The files of `--out`: the noise run's result family.
fn exporters() -> ExportManager {
    ExportManager::new().with(Csv).with(CyclictestHist)
}

pub(crate) fn run(a: Args, g: &Global) -> anyhow::Result<i32> {
    let spec = a.spec()?;
    let json = json_target(&a)?;
    let out = out_target(&a)?;
    let stop = rtshield_measure::install_signals();
    if !a.quiet {
        errln!(
            "rtshield noise: CPUs {}, gaps > {}, {}, {} (Ctrl-C stops)",
            spec.cpus.to_list(),
            a.threshold,
            match spec.priority {
                Some(p) => format!(
                    "SCHED_FIFO {p} for {} of every {}",
                    Dur(spec.runtime_ns),
                    Dur(spec.period_ns)
                ),
                None if spec.runtime_ns == spec.period_ns => "SCHED_OTHER without pause".into(),
                None => format!(
                    "SCHED_OTHER for {} of every {}",
                    Dur(spec.runtime_ns),
                    Dur(spec.period_ns)
                ),
            },
            spec.duration_ns
                .map_or("until stopped".into(), |d| format!("for {}", Dur(d))),
        );
    }
    // The drift watch beside the spinning threads, off their CPUs.
    let watcher = rtshield_drift::Watcher::start(
        rtshield_drift::WatchSpec {
            root: g.root(),
            cpus: spec.cpus.clone(),
            parent: None,
            own_pid: std::process::id(),
        },
        std::time::Duration::from_secs(1),
    );
    let ran = rtshield_noise::run(&g.root(), &spec, stop);
    let drift = watcher.finish();
    let (mut run, end) = ran?;
    // Into the result: results.json's `drift`/`drift_watch`, the store.
    run.drift = drift;
    if end == EndReason::Stopped {
        if let Some(sig) = rtshield_measure::signal_received() {
            run.end_reason = Some(rtshield_measure::EndReason::Signal(sig).name());
        }
    }
    run.command = rtshield_text::secret::redact_args(std::env::args());
    run.tags.extend(a.store.tags.iter().cloned());
    run.label = a.label.clone().or_else(|| {
        a.out
            .as_ref()
            .and_then(|p| p.file_name())
            .map(|n| n.to_string_lossy().into_owned())
    });
    for w in &run.warnings {
        errln!("rtshield: warning: {w}");
    }
    // The table, each CPU's details, then the drift watch's line (always
    // said, even `drift: no change seen`) and every change with its time.
    out!("{}", rtshield_report::noise_summary(&run, a.top, false));
    let mut failed = false;
    if let Some(dir) = &out {
        for f in exporters().write(&run, dir) {
            errln!("rtshield: error: {}", f.error);
            failed = true;
        }
    }
    if let Some((dir, name)) = json {
        if let Err(e) = dir.write(&name, rtshield_results::to_json(&run).as_bytes()) {
            errln!("rtshield: error: {e}");
            failed = true;
        }
    }
    // Stored like a measure run (`runs list --where mode=noise`), with the
    // file it was written to as its source.
    let source = match (&a.out, &a.json) {
        (Some(d), _) => d.clone(),
        (None, Some(f)) => f.parent().map(Path::to_path_buf).unwrap_or_default(),
        (None, None) => PathBuf::from("-"),
    };
    rtshield_run::store_runs(
        a.store.store.as_deref(),
        a.store.no_store,
        &[(source.as_path(), &run)],
    );
    Ok(if failed {
        rtshield_run::EXIT_FILES_MISSING
    } else {
        0
    })
}
