//! `rtshield measure` and `demo`: one measurement through the same pipeline
//! as `rtshield run` ([`crate::pipeline::measure_and_write`]), with the
//! pieces around it that both commands share: the output directory and the
//! `--metrics-file` opened (and refused) before anything starts, the
//! timeline and metrics observers, the `--json` copy in either format, the
//! results store, and `--partition`'s cgroups. The command only parses its
//! arguments and prints.

use crate::metrics::{MetricsFile, WithMetrics};
use crate::pipeline::{self, Written};
use crate::timeline::WithTimeline;
use anyhow::Context as _;
use rtshield_load::LoadSpec;
use rtshield_measure::{MeasureSpec, Observer, ResultContext};
use rtshield_results::ExportManager;
use rtshield_sys::{DirPolicy, InputError, Root, SafeDir, SysInfo};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

/// One measurement, as the command line described it.
pub struct Single<'a> {
    pub spec: &'a MeasureSpec,
    pub policy: DirPolicy,
    /// `--json FILE`, and whether it holds cyclictest's keys.
    pub json: Option<&'a Path>,
    pub json_cyclictest: bool,
    pub load: Option<&'a LoadSpec>,
    pub label: Option<String>,
    pub tags: BTreeMap<String, String>,
    /// `--store` and `--no-store`.
    pub store: Option<&'a str>,
    pub no_store: bool,
}

/// What exists before the measurement starts (so the command can print
/// its header): the output directory, the metrics file, the system.
pub struct Opened {
    pub dir: SafeDir,
    pub out: PathBuf,
    pub metrics: Option<MetricsFile>,
    pub sysinfo: SysInfo,
}

/// Open the output directory (`out`, else a fresh stamped one) and the
/// `--metrics-file`, refusing unsafe ones (exit 2) before anything runs.
pub fn open(
    root: &Root,
    out: Option<&Path>,
    metrics_file: Option<&Path>,
    policy: DirPolicy,
) -> anyhow::Result<Opened> {
    let stamp = rtshield_measure::stamp_utc(std::time::SystemTime::now());
    let metrics = metrics_file
        .map(|p| MetricsFile::open(p, policy))
        .transpose()?;
    let dir = pipeline::open_output(out, &stamp, policy)?;
    Ok(Opened {
        out: dir.path().to_path_buf(),
        dir,
        metrics,
        sysinfo: SysInfo::collect(root, root.is_host()),
    })
}

/// What the measurement left.
pub struct Done {
    pub written: Written,
    /// Some result file is not where asked (exit
    /// [`pipeline::EXIT_FILES_MISSING`]).
    pub files_missing: bool,
}

/// Measure, write every file (timeline.csv as it goes, the metrics file
/// every stats period and at the end, the `--json` copy), and store the run
/// when every file is where asked. `display` sees every interval.
pub fn measure(
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
        sysinfo,
    } = opened;
    let label = s
        .label
        .clone()
        .or_else(|| out.file_name().map(|n| n.to_string_lossy().into_owned()));
    // timeline.csv: per-interval min/avg/max and the host, as `run` writes it.
    let mut timeline = WithTimeline::new(display, &dir, root, s.load.is_some());
    let mut with_metrics;
    let obs: &mut dyn Observer = match metrics.as_mut() {
        Some(f) => {
            with_metrics = WithMetrics::new(&mut timeline, f);
            &mut with_metrics
        }
        None => &mut timeline,
    };
    let rtshield_json = s.json.filter(|_| !s.json_cyclictest);
    let written = pipeline::measure_and_write(
        root,
        s.spec,
        stop,
        obs,
        s.load,
        dir,
        &ExportManager::all(),
        |programs| ResultContext {
            command: std::env::args().collect(),
            config: None,
            label,
            tags: s.tags.clone(),
            programs,
            warnings: vec![],
            sysinfo,
        },
        rtshield_json.map(|j| (j, s.policy)),
    );
    drop(timeline);
    let mut written = written?;
    if let Some(f) = metrics.as_mut() {
        // The final figures, not the last period's.
        f.write(&written.measurement);
    }
    if let (Some(j), true) = (s.json, s.json_cyclictest) {
        let text = rtshield_results::export::to_cyclictest_json(&written.result);
        if let Err(e) = rtshield_results::export::write_text(&text, j, s.policy) {
            eprintln!("rtshield: error: --json: {e}");
            written.json_failed = true;
        }
    }
    let files_missing = !written.missing.is_empty() || written.json_failed;
    if written.missing.is_empty() {
        crate::store::store_runs(s.store, s.no_store, &[(out.as_path(), &written.result)]);
    }
    Ok(Done {
        written,
        files_missing,
    })
}

/// `measure --partition [--partition-parent P]`: this process (main
/// thread, and the load it starts) joins the partition's `nrt` set, and
/// every measuring thread will move itself to `rt` by its TID.
pub fn join_partition(
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
