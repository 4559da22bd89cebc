//! rtshield-campaign: `rtshield campaign`, a matrix of measurements. Its
//! one job is the campaign file format and running it: each cell of the
//! matrix (isolation × load × settings, repeated) becomes a measure
//! request, every run is stored, and one report is written.
//!
//! The file (`model`) becomes one measure request per cell (`cells`),
//! checked by measure's own validation before anything runs. Each run is a
//! child `rtshield __measure` given its request as JSON (and, for
//! `isolation = "partition"`, a child `rtshield partition create` before it
//! and `undo` after it): a crash of one cell cannot take the campaign's
//! bookkeeping down, and the partition is always undone — on a normal end,
//! a failing cell, and any stop signal (SIGINT, SIGTERM, SIGHUP, SIGQUIT,
//! passed on to the cell, whose results are kept) — before the campaign
//! exits. An undo that fails (after waiting for exiting tasks) stops the
//! campaign after its cell, with the report and the command that
//! finishes the undo.
//!
//! It may not measure or partition in its own process (children do),
//! build command-line strings for a measurement (cells are requests), read
//! cgroup files, or render (the summary is `rtshield-report`'s).

#![deny(missing_docs)]
#![warn(unreachable_pub)]

mod cells;
mod model;
mod process;
mod report_dir;
mod steps;

pub use crate::cells::plan_text;
pub use crate::model::{parse_checked, Campaign, Cell, Step};

use process::PartitionGuard;
use rtshield_results::RunResult;
use rtshield_safefs::{DirPolicy, SafeDir};
use rtshield_store::{Selector, Store};
use rtshield_sys::Root;
use rtshield_vocab::InputError;
use std::collections::BTreeSet;
use std::path::PathBuf;

/// Tag keys a campaign writes on each run.
pub const TAGS: &[&str] = &[
    "campaign",
    "campaign_id",
    "cell",
    "repeat",
    "step",
    "isolation",
    "load",
];

/// Options of a campaign run.
pub struct Options {
    /// The rtshield binary to run cells with.
    pub exe: PathBuf,
    /// Directory for the cells' result directories and the report.
    pub out: SafeDir,
    /// Where every run is stored.
    pub store: Box<dyn Store>,
    /// Skip the runs of this campaign already stored.
    pub resume: bool,
    /// Print the children's output (otherwise `-q`).
    pub verbose: bool,
}

/// What a finished (or stopped) campaign did.
pub struct Outcome {
    /// Runs measured and stored.
    pub stored: usize,
    /// Runs skipped because they were stored already (`--resume`).
    pub skipped_done: usize,
    /// Cells skipped, with why.
    pub skipped: Vec<(String, String)>,
    /// Runs whose verdict failed (a `max_latency` setting exceeded).
    pub failed: usize,
    /// The signal that stopped it, if any.
    pub stopped_by: Option<i32>,
    /// The report's directory, once written.
    pub report: Option<PathBuf>,
    /// A cell's partition could not be undone: what is left and the
    /// command that finishes the undo. The campaign stopped after that
    /// cell (its run stored, the report written).
    pub undo_failed: Option<String>,
}

/// Runs already stored for this very campaign (by fingerprint).
fn done(store: &mut dyn Store, c: &Campaign) -> Result<BTreeSet<(String, u64)>, String> {
    let sel =
        Selector::parse(&format!("campaign_id = {}", c.fingerprint)).map_err(|e| e.to_string())?;
    let runs = store.list(&sel).map_err(|e| e.to_string())?;
    Ok(runs
        .iter()
        .filter_map(|r| {
            Some((
                r.tags.get("cell")?.clone(),
                r.tags.get("repeat")?.parse().ok()?,
            ))
        })
        .collect())
}

/// Before any cell: refuse what cannot work here, and undo a partition a
/// killed campaign may have left (and remove its trace leftovers). Returns whether the cpuset hierarchy is
/// cgroup v2.
fn prepare(c: &Campaign, opts: &Options, root: &Root) -> anyhow::Result<bool> {
    // cgroup v1: a partition cell's measure puts its measuring threads in
    // rt and itself (main thread, built-in load) in nrt (`measure
    // --partition`). cgroup v2 keeps a process's threads in one cgroup:
    // the whole measure runs in rt (`partition run rt`), where a built-in
    // load would be confined to the rt CPUs, so that is refused.
    let v2 = rtshield_isolation::Partitions::discover(root)
        .hierarchy()
        .is_some_and(|h| h.is_v2());
    if v2
        && c.cells.iter().any(|cell| {
            cell.isolation() == "partition"
                && cell.load() != "idle"
                && !cell.load().starts_with("cmd:")
        })
    {
        return Err(InputError::new(
            "isolation = \"partition\" with a built-in load needs cgroup v1 (per-thread cpusets): \
             on cgroup v2 the whole measure, load included, would run inside the rt set; use a cmd: load",
        )
        .into());
    }
    if c.cells.iter().any(|cell| cell.isolation() == "partition") {
        // A campaign killed with SIGKILL may have left its partition:
        // undo it before anything is measured, so that no cell (not even
        // an isolation = "none" one) runs under a stale partition. Undo
        // is idempotent; the parent is the campaign's own.
        PartitionGuard {
            exe: &opts.exe,
            parent: c.partition.parent.clone(),
            active: true,
        }
        .undo()
        .map_err(|e| anyhow::anyhow!("the partition a previous campaign left: {e}"))?;
    }
    // Likewise the trace instances and mounts of a killed rtshield.
    rtshield_run::remove_trace_leftovers(root);
    Ok(v2)
}

/// Run the campaign. `progress` is told about each run as it ends.
pub fn run(
    c: &Campaign,
    mut opts: Options,
    progress: &mut dyn FnMut(usize, usize, &Step, &Cell, &str),
) -> anyhow::Result<Outcome> {
    rtshield_signals::install(rtshield_signals::Second::Waits);
    let root = Root::host();
    let already = if opts.resume {
        done(opts.store.as_mut(), c).map_err(anyhow::Error::msg)?
    } else {
        BTreeSet::new()
    };
    // DIR/report must take the campaign's report before anything is
    // measured, not after (a refusal then lost nothing but time).
    report_dir::check(&opts.out)?;
    let v2 = prepare(c, &opts, &root)?;
    let steps = c.steps();
    let mut s = steps::Steps {
        c,
        opts: &mut opts,
        root,
        v2,
        already,
        progress,
        out: Outcome {
            stored: 0,
            skipped_done: 0,
            skipped: Vec::new(),
            failed: 0,
            stopped_by: None,
            report: None,
            undo_failed: None,
        },
        total: steps.len(),
    };
    for (i, st) in steps.iter().enumerate() {
        if process::stopped_by() != 0 {
            break;
        }
        if let steps::Flow::Stop = s.run(i, st)? {
            break;
        }
    }
    let mut out = s.out;
    let sig = process::stopped_by();
    if sig != 0 {
        out.stopped_by = Some(sig);
        return Ok(out);
    }
    if out.undo_failed.is_some() {
        // The report of what was measured, if anything was stored: the
        // undo's failure is what the caller must hear about.
        if out.stored > 0 || out.skipped_done > 0 {
            out.report = report(c, opts.store.as_mut(), &opts.out).ok();
        }
        return Ok(out);
    }
    out.report = Some(report(c, opts.store.as_mut(), &opts.out)?);
    Ok(out)
}

/// The campaign report: `report.html` and plots over every stored run of
/// the campaign, and `summary.md` with the matrix (rows load × isolation,
/// as figure 11 of the systress article) and the verdicts of `runs
/// compare` between isolation methods within each load.
pub fn report(c: &Campaign, store: &mut dyn Store, out: &SafeDir) -> anyhow::Result<PathBuf> {
    let sel =
        Selector::parse(&format!("campaign_id = {}", c.fingerprint)).map_err(anyhow::Error::msg)?;
    let sums = store.list(&sel).map_err(|e| anyhow::anyhow!("{e}"))?;
    if sums.is_empty() {
        return Err(InputError::new("the campaign has no stored run to report").into());
    }
    let runs = store
        .results(&sums.iter().map(|r| r.id).collect::<Vec<_>>())
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    // Only files an earlier campaign report wrote are replaced (checked
    // again: the directory may have changed while the cells ran).
    let mut written = report_dir::check(out)?;
    let rdir = out.subdir(report_dir::REPORT, 0o755)?;
    let data = rdir.subdir("runs", 0o755)?;
    // Listed before they are written: an interrupted report leaves no
    // file the next one would refuse.
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    for (s, r) in sums.iter().zip(&runs) {
        files.push((format!("run-{}.json", s.id), serde_json::to_vec(r)?));
    }
    let mut inputs = Vec::new();
    list_files(&rdir, &mut written, files.iter().map(|f| f.0.as_str()))?;
    for (n, bytes) in &files {
        data.write(n, bytes)?;
        inputs.push(data.path().join(n));
    }
    let names: Vec<String> = runs
        .iter()
        .map(|r| r.label.clone().unwrap_or_default())
        .collect();
    rtshield_report::generate(&rtshield_report::Options {
        inputs,
        names,
        out_dir: rdir.path().join("plots"),
        formats: rtshield_report::Format::ALL.to_vec(),
        title: format!("Campaign {}", c.name),
        policy: DirPolicy::Strict,
        x_max_us: None,
    })?;
    // One overlay per load, one curve per isolation method (the systress
    // article's figure 12): the runs of a method are merged into one
    // histogram so the curves compare methods, not repeats.
    let loads_seen: Vec<String> = dedup(c.cells.iter().map(Cell::load))
        .into_iter()
        .map(str::to_string)
        .collect();
    // Two loads may differ only where `sanitize` puts `_` (`cmd:sleep 30
    // #;` and `… #&`): each gets a directory of its own.
    let slugs = unique_slugs(&loads_seen);
    for (l, slug) in loads_seen.iter().zip(&slugs) {
        let mut inputs = Vec::new();
        let mut names = Vec::new();
        for iso in dedup(c.cells.iter().map(Cell::isolation)) {
            let group: Vec<&RunResult> = runs
                .iter()
                .filter(|r| {
                    r.tags.get("load") == Some(l)
                        && r.tags.get("isolation").map(String::as_str) == Some(iso)
                })
                .collect();
            if let Some(merged) = merge(&group) {
                let n = format!("load-{slug}-{}.json", sanitize(iso));
                list_files(&rdir, &mut written, [n.as_str()])?;
                data.write(&n, serde_json::to_string(&merged)?.as_bytes())?;
                inputs.push(data.path().join(n));
                names.push(format!("{iso} ({} runs)", group.len()));
            }
        }
        if !inputs.is_empty() {
            rtshield_report::generate(&rtshield_report::Options {
                inputs,
                names,
                out_dir: rdir.path().join(format!("load-{slug}")),
                formats: vec![rtshield_report::Format::Png, rtshield_report::Format::Svg],
                title: format!("Campaign {}: load {l}", c.name),
                policy: DirPolicy::Strict,
                x_max_us: None,
            })?;
        }
    }
    let loads: Vec<&str> = dedup(c.cells.iter().map(Cell::load));
    let isos: Vec<&str> = dedup(c.cells.iter().map(Cell::isolation));
    let md = rtshield_report::campaign_summary_markdown(&c.name, &loads, &isos, &runs);
    if !written.iter().any(|n| n == "summary.md") {
        written.push("summary.md".into());
        rdir.write(report_dir::MANIFEST, report_dir::manifest_text(&written).as_bytes())?;
    }
    rdir.write("summary.md", md.as_bytes())?;
    Ok(rdir.path().to_path_buf())
}

/// Add `runs/NAME` of each of `names` to the manifest of `rdir` (kept in
/// `listed`), rewritten when a name is new.
fn list_files<'a>(
    rdir: &SafeDir,
    listed: &mut Vec<String>,
    names: impl IntoIterator<Item = &'a str>,
) -> anyhow::Result<()> {
    let before = listed.len();
    for n in names {
        let n = format!("runs/{n}");
        if !listed.contains(&n) {
            listed.push(n);
        }
    }
    if listed.len() != before || rdir.entry(report_dir::MANIFEST).is_none() {
        rdir.write(report_dir::MANIFEST, report_dir::manifest_text(listed).as_bytes())?;
    }
    Ok(())
}

/// A file-name-safe form of a load name (`cmd:stress-ng --cpu 1`).
fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect()
}

/// One file-name-safe slug per load, in order, all different: a slug
/// already taken (by an earlier load, or as a suffixed form) gets `-2`,
/// `-3` … (adversary round 3, C5: one load's plots overwrote another's).
fn unique_slugs(loads: &[String]) -> Vec<String> {
    let mut taken: Vec<String> = Vec::new();
    for l in loads {
        let base = sanitize(l);
        let mut slug = base.clone();
        let mut n = 2;
        while taken.contains(&slug) {
            slug = format!("{base}-{n}");
            n += 1;
        }
        taken.push(slug);
    }
    taken
}

/// The runs of one group as one run with one thread: the histograms of
/// every thread of every run summed bucket by bucket (same resolution;
/// runs of another resolution are left out), so the overlay has one curve
/// per isolation method. Min, max and mean are exact; percentiles come
/// from the summed histogram.
fn merge(group: &[&RunResult]) -> Option<RunResult> {
    let first = group.first()?;
    first.threads.first()?;
    let t = rtshield_results::pool_threads(group.iter().flat_map(|r| &r.threads))?;
    let mut m = (*first).clone();
    m.threads = vec![t];
    m.label = None;
    Some(m)
}

fn dedup<'a>(it: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut v: Vec<&str> = Vec::new();
    for x in it {
        if !v.contains(&x) {
            v.push(x);
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loads_that_differ_only_in_punctuation_get_slugs_of_their_own() {
        let loads: Vec<String> = ["cmd:sleep 30 #;", "cmd:sleep 30 #&", "cmd_sleep_30___-2", "idle"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let s = unique_slugs(&loads);
        assert_eq!(s, ["cmd_sleep_30___", "cmd_sleep_30___-2", "cmd_sleep_30___-2-2", "idle"]);
        let set: std::collections::BTreeSet<&String> = s.iter().collect();
        assert_eq!(set.len(), s.len());
    }

    fn run(counts: &[[u64; 2]], min: i64, max: i64, avg: f64) -> RunResult {
        let h = rtshield_results::Histogram {
            resolution_ns: 1000,
            buckets: 100,
            counts: counts.to_vec(),
            overflow: 1,
            underflow: 0,
        };
        let n = counts.iter().map(|c| c[1]).sum::<u64>() + 1;
        let mut r = rtshield_results::example_result();
        r.threads = vec![rtshield_results::thread_from_histogram(
            0,
            Some(1),
            Some(200_000),
            n,
            min,
            max,
            avg,
            h,
        )];
        r
    }

    #[test]
    fn merge_sums_histograms_and_keeps_exact_extremes() {
        let a = run(&[[10, 3], [12, 1]], 10_000, 500_000, 20_000.0);
        let b = run(&[[10, 1], [11, 4]], 9_000, 400_000, 30_000.0);
        let m = merge(&[&a, &b]).unwrap();
        assert_eq!(m.threads.len(), 1);
        let t = &m.threads[0];
        let h = t.histogram.as_ref().unwrap();
        assert_eq!(h.counts, vec![[10, 4], [11, 4], [12, 1]]);
        assert_eq!(h.overflow, 2);
        assert_eq!((t.samples, t.min_ns, t.max_ns), (Some(11), 9_000, 500_000));
        // (20 µs × 5 + 30 µs × 6) / 11
        assert!((t.avg_ns - 280_000.0 / 11.0).abs() < 1e-6);
        assert_eq!(sanitize("cmd:stress-ng --cpu 1"), "cmd_stress-ng_--cpu_1");
    }
}
