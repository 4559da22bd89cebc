//! `rtshield measure` and `demo` (and each campaign cell): one measurement
//! through the same pipeline as `rtshield run`
//! ([`crate::pipeline::measure_and_write`]). [`measure`] is the one entry:
//! it checks the [`MeasureRequest`], then takes every step in its order
//! (partition, tags, output directory and `--metrics-file` opened and
//! refused before anything starts, header, measurement with the timeline
//! and metrics observers, files and the `--json` copy, store, summary,
//! verdict), telling a [`Printer`] what to show. The command only builds
//! the request and prints.

use crate::metrics::{MetricsFile, WithMetrics};
use crate::pipeline::{self, Written};
use crate::print::{Printer, Summary};
use crate::request::{JsonFormat, MeasureRequest, Plan};
use crate::timeline::WithTimeline;
use anyhow::Context as _;
use rtshield_load::LoadSpec;
use rtshield_measure::{IntervalStats, MeasureSpec, Observer, ResultContext};
use rtshield_results::{ExportManager, Limits};
use rtshield_safefs::{DirPolicy, SafeDir};
use rtshield_sys::{Root, SysInfo};
use rtshield_vocab::InputError;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

/// Carry out one measurement: check `request` (a refusal is exit 2,
/// nothing done), then partition, tags, output, header, measure, files,
/// store, summary, in that order. Returns the exit status: 3 when
/// `--max-latency` is exceeded, [`pipeline::EXIT_FILES_MISSING`] when a
/// result file is not where asked, else 0.
pub fn measure(
    request: &MeasureRequest,
    root: &Root,
    printer: &mut dyn Printer,
) -> anyhow::Result<i32> {
    let mut plan = request.validate().map_err(InputError::from)?;
    if let Some(p) = &request.partition {
        join_partition(root, p.parent.as_deref(), &mut plan.spec)?;
    }
    let tags = tags(&plan, root);
    // From here on SIGINT/SIGTERM end the run and the files are written.
    let stop = rtshield_measure::install_signals();
    // Refused (exit 2) or impossible before anything is printed or measured.
    let opened = open(
        root,
        request.out.as_deref(),
        request.metrics_file.as_deref(),
        request.json.as_deref(),
        plan.policy,
    )?;
    let out = opened.out.clone();
    crate::tracing::remove_leftovers(root);
    printer.header(&plan, &opened.sysinfo);
    let done = measure_opened(
        opened,
        &Single {
            spec: &plan.spec,
            json_cyclictest: request.json_format == JsonFormat::Cyclictest,
            load: plan.load.as_ref(),
            label: request.label.clone(),
            tags,
            store: request.store.as_deref(),
            no_store: request.no_store,
            command: request.command.clone(),
            limits: Limits {
                max_latency_ns: request.max_latency_ns,
            },
            // The demo's figures are an illustration, not a shielded run.
            watch: plan
                .request
                .identify
                .then(|| request.partition.as_ref().and_then(|p| p.parent.clone())),
        },
        root,
        stop,
        &mut Live(printer),
    );
    printer.live_end();
    let done = done?;
    let (m, result) = (&done.written.measurement, &done.written.result);
    printer.summary(&Summary {
        measurement: m,
        result,
        out: &out,
        json: request
            .json
            .as_deref()
            .filter(|_| !done.written.json_failed),
        files_missing: done.files_missing,
        missing: &done.written.missing,
        max_latency_ns: request.max_latency_ns,
    });
    // The verdict recorded in the result is the exit status's one.
    Ok(match &result.verdict {
        Some(v) if !v.passed => rtshield_results::EXIT_LIMIT_EXCEEDED,
        _ if done.files_missing => pipeline::EXIT_FILES_MISSING,
        _ => 0,
    })
}

/// The run's tags: `load`, then (unless the request is the demo's) its
/// identity and the isolation found, then the user's.
fn tags(plan: &Plan, root: &Root) -> BTreeMap<String, String> {
    let load = plan.load_name();
    let mut tags = BTreeMap::from([("load".to_string(), load.to_string())]);
    if plan.request.identify {
        // Where the measuring threads will run (after `--partition`).
        let threads = crate::store::placements(root, &plan.spec.threads);
        tags.extend(crate::store::run_tags(
            root,
            load,
            &plan.request.tags,
            &threads,
        ));
    } else {
        tags.extend(plan.request.tags.iter().cloned());
    }
    tags
}

/// The printer's live table as the engine's observer.
struct Live<'a>(&'a mut dyn Printer);

impl Observer for Live<'_> {
    fn interval(&mut self, s: &IntervalStats) -> bool {
        self.0.interval(s)
    }
}

/// One measurement, checked: what [`measure_opened`] needs.
pub(crate) struct Single<'a> {
    /// The engine's spec.
    pub spec: &'a MeasureSpec,
    /// Whether the `--json` file holds cyclictest's keys.
    pub json_cyclictest: bool,
    /// The built-in load.
    pub load: Option<&'a LoadSpec>,
    /// The run's label (None: the output directory's name).
    pub label: Option<String>,
    /// The run's tags.
    pub tags: BTreeMap<String, String>,
    /// `--store`.
    pub store: Option<&'a str>,
    /// `--no-store`.
    pub no_store: bool,
    /// The command line recorded in the results.
    pub command: Vec<String>,
    /// The limits the run is judged against (recorded with its verdict).
    pub limits: Limits,
    /// Run the drift watch beside the measurement, with the `--parent` of
    /// the partition it was asked to join (`Some(None)`: the partition
    /// covering the measured CPUs, if any); `None`: no watch.
    pub watch: Option<Option<String>>,
}

/// What exists before the measurement starts (so the command can print
/// its header): the output directory, the metrics file, the system.
pub(crate) struct Opened {
    /// The output directory, open.
    pub dir: SafeDir,
    /// Its path.
    pub out: PathBuf,
    /// `--metrics-file`, its directory open.
    pub metrics: Option<MetricsFile>,
    /// `--json FILE`: its directory open, and the file's name.
    pub json: Option<(SafeDir, String)>,
    /// The system at the start.
    pub sysinfo: SysInfo,
}

/// Open the output directory (`out`, else a fresh stamped one), the
/// `--metrics-file`'s and the `--json` file's directories through the path
/// layer, refusing unsafe ones (exit 2) before anything runs; every later
/// write goes through these descriptors.
pub(crate) fn open(
    root: &Root,
    out: Option<&Path>,
    metrics_file: Option<&Path>,
    json: Option<&Path>,
    policy: DirPolicy,
) -> anyhow::Result<Opened> {
    let stamp = rtshield_measure::stamp_utc(std::time::SystemTime::now());
    let metrics = metrics_file
        .map(|p| MetricsFile::open(p, policy))
        .transpose()?;
    let json = json
        .map(|p| {
            rtshield_safefs::open_file_dir(p, policy)
                .map_err(|e| pipeline::refusal(e.for_option("--json")))
        })
        .transpose()?;
    let dir = pipeline::open_output(out, &stamp, policy)?;
    Ok(Opened {
        out: dir.path().to_path_buf(),
        dir,
        metrics,
        json,
        sysinfo: SysInfo::collect(root, root.is_host()),
    })
}

/// What the measurement left.
pub(crate) struct Done {
    /// The measurement and the files written.
    pub written: Written,
    /// Some result file is not where asked (exit
    /// [`pipeline::EXIT_FILES_MISSING`]).
    pub files_missing: bool,
}

/// Measure, write every file (timeline.csv as it goes, the metrics file
/// every stats period and at the end, the `--json` copy), and store the run
/// when every file is where asked. `display` sees every interval.
pub(crate) fn measure_opened(
    opened: Opened,
    s: &Single,
    root: &Root,
    stop: &AtomicBool,
    display: &mut dyn Observer,
) -> anyhow::Result<Done> {
    let Opened {
        dir,
        out,
        mut metrics,
        json,
        sysinfo,
    } = opened;
    let label = s
        .label
        .clone()
        .or_else(|| out.file_name().map(|n| n.to_string_lossy().into_owned()));
    let watcher = s.watch.clone().map(|parent| {
        rtshield_drift::Watcher::start(
            rtshield_drift::WatchSpec {
                root: root.clone(),
                cpus: s.spec.threads.iter().filter_map(|t| t.cpu).collect(),
                parent,
                own_pid: std::process::id(),
            },
            std::time::Duration::from_nanos(s.spec.stats_period_ns),
        )
    });
    // timeline.csv: per-interval min/avg/max and the host, as `run` writes it.
    let feed = watcher.as_ref().map(|w| w.feed());
    let mut timeline = WithTimeline::new(display, &dir, root, s.load.is_some(), feed);
    let mut with_metrics;
    let obs: &mut dyn Observer = match metrics.as_mut() {
        Some(f) => {
            with_metrics = WithMetrics::new(&mut timeline, f);
            &mut with_metrics
        }
        None => &mut timeline,
    };
    let json = json.as_ref().map(|(d, n)| (d, n.as_str()));
    let rtshield_json = json.filter(|_| !s.json_cyclictest);
    let written = pipeline::measure_and_write(
        root,
        s.spec,
        stop,
        obs,
        s.load,
        dir,
        &ExportManager::all(),
        |programs| ResultContext {
            command: s.command.clone(),
            config: None,
            label,
            tags: s.tags.clone(),
            programs,
            warnings: vec![],
            sysinfo,
            limits: s.limits,
            drift: watcher.map(|w| w.finish()).unwrap_or_default(),
        },
        rtshield_json,
    );
    let timeline_failed = timeline.failed;
    drop(timeline);
    let mut written = written?;

    if let Some(f) = metrics.as_mut() {
        // The final figures, not the last period's.
        f.write(&written.measurement);
    }
    if let (Some((d, name)), true) = (json, s.json_cyclictest) {
        let text = rtshield_results::to_cyclictest_json(&written.result, &Limits::default());
        if let Err(e) = d.write(name, text.as_bytes()) {
            rtshield_text::errln!("rtshield: error: --json: {e}");
            written.json_failed = true;
        }
    }
    if written.missing.is_empty() {
        crate::store::store_runs(s.store, s.no_store, &[(out.as_path(), &written.result)]);
    }
    if timeline_failed {
        // Never listed as saved when its write failed: the summary names
        // it LOST (a timeline is written as the run goes; there is no
        // copy to put in the fallback directory). The results themselves
        // are whole: the run is stored all the same.
        written.missing.push(pipeline::Missing {
            wanted: out.join("timeline.csv"),
            fallback: None,
        });
    }
    let files_missing = !written.missing.is_empty() || written.json_failed;
    Ok(Done {
        written,
        files_missing,
    })
}

/// `measure --partition [--partition-parent P]`: this process (main
/// thread, and the load it starts) joins the partition's `nrt` set, and
/// every measuring thread will move itself to `rt` by its TID.
pub(crate) fn join_partition(
    root: &Root,
    parent: Option<&str>,
    spec: &mut MeasureSpec,
) -> anyhow::Result<()> {
    let (nrt_procs, rt_tasks) = crate::runner::measure_partition_files(root, parent)
        .map_err(|e| InputError::new(format!("--partition: {e}")))?;
    root.write(&nrt_procs, &std::process::id().to_string())
        .with_context(|| format!("--partition: cannot join {nrt_procs}"))?;
    for t in &mut spec.threads {
        t.cgroup_tasks = Some(rt_tasks.clone());
    }
    Ok(())
}
