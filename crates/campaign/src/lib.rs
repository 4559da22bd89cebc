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
mod ledger;
mod model;
mod process;
mod report_dir;
mod steps;

pub use crate::cells::plan_text;
pub use crate::model::{parse_checked, Campaign, Cell, Step};

use process::PartitionGuard;
use rtshield_results::RunResult;
use rtshield_safefs::{DirPolicy, SafeDir};
use rtshield_store::{RunSummary, Selector, Store};
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
    "kernel_id",
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

/// This machine's kernel as a campaign records it ([`rtshield_results::kernel_id`]).
fn this_kernel(root: &Root) -> String {
    rtshield_results::kernel_id(&rtshield_sys::SysInfo::collect(root, false))
}

/// The runs of this very campaign (by fingerprint) that it measured
/// itself, with their results: a stored run counts only when the
/// campaign's own record ([`ledger`]) lists its UUID with its content's
/// digest. Tags alone prove nothing: a run that came in by `runs import`
/// or `runs push` may carry them (round 3, C15), and so may one a
/// colleague stored straight into a shared store with `--tag` or by hand
/// (round 5, F13). A row of the store that does not read back is left
/// out with a warning.
fn own_runs(
    store: &mut dyn Store,
    c: &Campaign,
    ledger: &ledger::Ledger,
) -> Result<Vec<(RunSummary, RunResult)>, String> {
    let sel =
        Selector::parse(&format!("campaign_id = {}", c.fingerprint)).map_err(|e| e.to_string())?;
    let mut runs = store.list(&sel).map_err(|e| e.to_string())?;
    runs.retain(|r| !r.is_imported() && ledger.knows(&r.uuid));
    let (sums, results) = store.readable_results(runs).map_err(|e| e.to_string())?;
    Ok(sums
        .into_iter()
        .zip(results)
        .filter(|(_, r)| ledger.holds(r))
        .collect())
}

/// Runs already stored for this very campaign, measured by it, on kernel
/// `kernel`: a run made on another kernel (the campaign run again after
/// booting another one) is not done on this one. A run stored before the
/// kernel was recorded counts when its release and preemption model match.
fn done(
    store: &mut dyn Store,
    c: &Campaign,
    ledger: &ledger::Ledger,
    kernel: &str,
) -> Result<BTreeSet<(String, u64)>, String> {
    let runs = own_runs(store, c, ledger)?;
    Ok(runs
        .iter()
        .map(|(r, _)| r)
        .filter(|r| match r.tags.get(rtshield_report::CAMPAIGN_KERNEL_TAG) {
            Some(k) => k == kernel,
            None => kernel.starts_with(&format!("{} {}", r.kernel, r.preempt)),
        })
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
    // A load or measurement that daemonises is re-parented to the
    // campaign, which ends it with its cell (steps.rs).
    rtshield_load::become_subreaper()
        .map_err(|e| anyhow::anyhow!("prctl(PR_SET_CHILD_SUBREAPER): {e}"))?;
    // And whatever is left when the campaign returns (an error mid-cell).
    let _sweep = process::FinalSweep;
    let root = Root::host();
    // The record of what this campaign measured: opened (and refused)
    // before anything is measured.
    let ledger = ledger::Ledger::open(&c.fingerprint)?;
    let already = if opts.resume {
        done(opts.store.as_mut(), c, &ledger, &this_kernel(&root)).map_err(anyhow::Error::msg)?
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
        ledger,
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
    let ledger = s.ledger;
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
            out.report = report_with(c, opts.store.as_mut(), &opts.out, &ledger).ok();
        }
        return Ok(out);
    }
    out.report = Some(report_with(c, opts.store.as_mut(), &opts.out, &ledger)?);
    Ok(out)
}

/// The campaign report, in `report/`: `report.html` (one page: the
/// figure-11 tables, the verdicts, figure 12 and Table 1.1) and
/// `summary.md` (the same tables), `plots/` (every run's own report), and
/// per load the overlay of figure 12 (`load-LOAD/latency.{png,svg}`: one
/// curve per isolation method and column set). Nothing is pooled that
/// the campaign did not name in `pool`; runs of another kernel stay apart;
/// runs that came in by `runs import`/`runs push` are left out.
pub fn report(c: &Campaign, store: &mut dyn Store, out: &SafeDir) -> anyhow::Result<PathBuf> {
    let ledger = ledger::Ledger::open(&c.fingerprint)?;
    report_with(c, store, out, &ledger)
}

/// [`report`] with the campaign's record already open.
fn report_with(
    c: &Campaign,
    store: &mut dyn Store,
    out: &SafeDir,
    ledger: &ledger::Ledger,
) -> anyhow::Result<PathBuf> {
    let own = own_runs(store, c, ledger).map_err(anyhow::Error::msg)?;
    if own.is_empty() {
        return Err(InputError::new("the campaign has no stored run to report").into());
    }
    let (sums, runs): (Vec<RunSummary>, Vec<RunResult>) = own.into_iter().unzip();
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
    let axes = c.axes();
    let view = rtshield_report::CampaignView {
        name: &c.name,
        axes: &axes,
        pool: &c.pool,
        runs: &runs,
    };
    let figure12 = overlays(c, &view, &rdir, &data, &mut written)?;
    let md = rtshield_report::campaign_summary_markdown(&view);
    let html = rtshield_report::campaign_summary_html(&view, &figure12);
    let before = written.len();
    for n in ["summary.md", "report.html"] {
        if !written.iter().any(|w| w == n) {
            written.push(n.into());
        }
    }
    if written.len() != before {
        rdir.write(
            report_dir::MANIFEST,
            report_dir::manifest_text(&written).as_bytes(),
        )?;
    }
    rdir.write("summary.md", md.as_bytes())?;
    rdir.write("report.html", html.as_bytes())?;
    Ok(rdir.path().to_path_buf())
}

/// Figure 12 (the systress article): per load, one overlay with one curve
/// per isolation method and column set, the runs of a curve merged into
/// one histogram so the curves compare methods, not repeats. Returns
/// (load, picture path relative to the report) for `report.html`. Each
/// file written in `data` is added to the manifest (`written`).
fn overlays(
    c: &Campaign,
    view: &rtshield_report::CampaignView,
    rdir: &SafeDir,
    data: &SafeDir,
    written: &mut Vec<String>,
) -> anyhow::Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    let sets = view.column_sets();
    let loads = view.loads();
    // Two loads may differ only where `sanitize` puts `_` (`cmd:sleep 30
    // #;` and `… #&`): each gets a directory of its own.
    let slugs = unique_slugs(&loads);
    for (li, (l, slug)) in loads.iter().zip(&slugs).enumerate() {
        let mut inputs = Vec::new();
        let mut names = Vec::new();
        for iso in view.isolations() {
            for (si, set) in sets.iter().enumerate() {
                let group = view.group(&iso, l, set);
                if let Some(merged) = merge(&group) {
                    let n = format!("load-{li}-{slug}-{}-{si}.json", sanitize(&iso));
                    list_files(rdir, written, [n.as_str()])?;
                    data.write(&n, serde_json::to_string(&merged)?.as_bytes())?;
                    inputs.push(data.path().join(n));
                    let what = if sets.len() > 1 {
                        format!("{iso} · {}", set.label)
                    } else {
                        iso.clone()
                    };
                    names.push(format!("{what} ({} runs)", group.len()));
                }
            }
        }
        if inputs.is_empty() {
            continue;
        }
        let dir = format!("load-{slug}");
        rtshield_report::generate(&rtshield_report::Options {
            inputs,
            names,
            out_dir: rdir.path().join(&dir),
            formats: vec![rtshield_report::Format::Png, rtshield_report::Format::Svg],
            title: format!("Campaign {}: load {l}", c.name),
            policy: DirPolicy::Strict,
            x_max_us: None,
        })?;
        out.push((l.clone(), format!("{dir}/latency.svg")));
    }
    Ok(out)
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
        rdir.write(
            report_dir::MANIFEST,
            report_dir::manifest_text(listed).as_bytes(),
        )?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loads_that_differ_only_in_punctuation_get_slugs_of_their_own() {
        let loads: Vec<String> = [
            "cmd:sleep 30 #;",
            "cmd:sleep 30 #&",
            "cmd_sleep_30___-2",
            "idle",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let s = unique_slugs(&loads);
        assert_eq!(
            s,
            [
                "cmd_sleep_30___",
                "cmd_sleep_30___-2",
                "cmd_sleep_30___-2-2",
                "idle"
            ]
        );
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
            Some(min),
            Some(max),
            Some(avg),
            h,
        )];
        r
    }

    /// Adversary round 3 (C15): a run that came in by `runs import` (or
    /// `runs push`) carrying this campaign's tags, copied from any run of
    /// the same file, is not the campaign's measurement: `--resume` does
    /// not skip its cell and the report leaves it out.
    #[test]
    fn an_imported_run_with_the_campaign_s_tags_is_not_its_own() {
        let c = crate::model::parse_checked(
            "name = \"c15\"\ncpus = \"0\"\nduration = \"1s\"\nrepeat = 2\n\
             [measure]\nperiod = \"1ms\"\n[axes]\nload = [\"idle\"]\nisolation = [\"none\"]\n",
            "c.toml",
        )
        .unwrap();
        let cell = c.cells[0].id.clone();
        let tagged = |repeat: u64, max: i64| {
            let mut r = run(&[[1, 998]], 1_000, max, 1_100.0);
            r.tags.insert("uuid".into(), rtshield_store::new_uuid());
            r.tags.insert("campaign".into(), c.name.clone());
            r.tags.insert("campaign_id".into(), c.fingerprint.clone());
            r.tags.insert("cell".into(), cell.clone());
            r.tags.insert("repeat".into(), repeat.to_string());
            r
        };
        let mut st = rtshield_store::SqliteStore::memory().unwrap();
        let d = tempfile::tempdir().unwrap();
        let mut ledger = test_ledger(d.path(), &c);
        // Repeat 1 measured by the campaign; repeat 2 and a second repeat 1
        // forged and imported (even listed in the record: the import mark
        // alone keeps them out).
        let mine = tagged(1, 40_000);
        ledger.add(&mine).unwrap();
        st.put(&mine, Some("/out/001/results.json")).unwrap();
        for repeat in [1, 2] {
            let mut forged = tagged(repeat, 1_234);
            rtshield_store::mark_imported(&mut forged, "/home/other/r/results.json");
            ledger.add(&forged).unwrap();
            st.put(&forged, Some("/home/other/r/results.json")).unwrap();
        }
        let own = own_runs(&mut st, &c, &ledger).unwrap();
        assert_eq!(own.len(), 1);
        assert_eq!(own[0].0.worst_max(), Some(40_000));
        let kernel = format!("{} {}", own[0].0.kernel, own[0].0.preempt);
        assert_eq!(
            done(&mut st, &c, &ledger, &kernel).unwrap(),
            BTreeSet::from([(cell.clone(), 1)]),
            "only the measured repeat is done"
        );
        // Whatever the file says of its origin, the import says where it
        // came from.
        let mut forged = tagged(2, 1_234);
        forged.tags.insert("imported_from".into(), "nowhere".into());
        rtshield_store::mark_imported(&mut forged, "/x/results.json");
        assert_eq!(forged.tags["imported_from"], "/x/results.json");
    }

    /// The campaign's record in a private directory of the test's.
    fn test_ledger(d: &std::path::Path, c: &Campaign) -> ledger::Ledger {
        let dir = SafeDir::open_private_or_create(&d.join("campaigns")).unwrap();
        ledger::Ledger::in_dir(dir, &c.fingerprint).unwrap()
    }

    /// Adversary round 5, F13: C15 by another door. In a lab's shared
    /// store a colleague's own `measure --tag campaign_id=… --tag cell=…
    /// --tag repeat=…` (no import mark) made `campaign --resume` skip the
    /// cell and the report show the forged run, and a fresh campaign pool
    /// it in. `--tag` now refuses those keys, and, stronger, a campaign
    /// counts only the runs its own record lists with their content: a
    /// forged run with the campaign's tags, and a forged row reusing the
    /// UUID of one of the campaign's runs with other figures, are not its
    /// own.
    #[test]
    fn f13_a_run_stored_with_the_campaign_s_tags_is_not_its_own_unless_it_measured_it() {
        let c = crate::model::parse_checked(
            "name = \"c5\"\ncpus = \"1\"\nduration = \"1s\"\nrepeat = 2\n\
             [axes]\nload = [\"idle\"]\nisolation = [\"none\"]\n",
            "c5.toml",
        )
        .unwrap();
        let cell = c.cells[0].id.clone();
        let tagged = |repeat: u64, max: i64| {
            let mut r = run(&[[1, 998]], 1_000, max, 1_100.0);
            r.tags.insert("uuid".into(), rtshield_store::new_uuid());
            for (k, v) in [
                ("campaign", c.name.clone()),
                ("campaign_id", c.fingerprint.clone()),
                ("cell", cell.clone()),
                ("repeat", repeat.to_string()),
                ("step", repeat.to_string()),
            ] {
                r.tags.insert(k.into(), v);
            }
            r
        };
        let d = tempfile::tempdir().unwrap();
        let mut st = rtshield_store::SqliteStore::memory().unwrap();
        let mut ledger = test_ledger(d.path(), &c);
        let mine = tagged(1, 40_000);
        ledger.add(&mine).unwrap();
        st.put(&mine, None).unwrap();
        // The colleague's run of repeat 2, stored directly, no mark.
        let forged = tagged(2, 1_234);
        assert!(!forged.tags.contains_key("imported_from"));
        st.put(&forged, None).unwrap();
        // And a copy of the campaign's own run with forged figures under
        // its UUID, in another store (as a shared server's row can be).
        let mut st2 = rtshield_store::SqliteStore::memory().unwrap();
        let mut fake = mine.clone();
        fake.threads[0].max_ns = Some(1_234);
        st2.put(&fake, None).unwrap();
        st2.put(&forged, None).unwrap();
        // Read again from disk: the record outlives the process.
        let ledger = test_ledger(d.path(), &c);
        let own = own_runs(&mut st, &c, &ledger).unwrap();
        assert_eq!(own.len(), 1, "only the run the campaign measured");
        assert_eq!(own[0].1.threads[0].max_ns, Some(40_000));
        let kernel = format!("{} {}", own[0].0.kernel, own[0].0.preempt);
        assert_eq!(
            done(&mut st, &c, &ledger, &kernel).unwrap(),
            BTreeSet::from([(cell.clone(), 1)]),
            "the forged repeat 2 is not done"
        );
        assert!(own_runs(&mut st2, &c, &ledger).unwrap().is_empty());
        // The record is private: 0600 in a 0700 directory.
        use std::os::unix::fs::PermissionsExt as _;
        let f = d
            .path()
            .join("campaigns")
            .join(format!("{}.runs", c.fingerprint));
        assert_eq!(
            std::fs::metadata(&f).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }

    /// The same campaign file run again after booting another kernel:
    /// `--resume` on the second kernel measures every cell (the runs of
    /// the first are not done on this one), and on the first skips them.
    #[test]
    fn resume_skips_only_the_runs_of_this_kernel() {
        let d = tempfile::tempdir().unwrap();
        let db = d.path().join("runs.db");
        let mut store = rtshield_store::open(Some(db.to_str().unwrap())).unwrap();
        let c = model::parse(
            "name = \"k\"\ncpus = \"1\"\nduration = \"2s\"\n[axes]\nload = [\"idle\"]\n",
            "k.toml",
        )
        .unwrap();
        let mut r = run(&[[10, 3]], 10_000, 500_000, 20_000.0);
        for (k, v) in [
            ("campaign_id", c.fingerprint.as_str()),
            ("cell", "load=idle"),
            ("repeat", "1"),
            ("kernel_id", "6.6.1 PREEMPT_RT"),
        ] {
            r.tags.insert(k.into(), v.into());
        }
        r.tags.insert("uuid".into(), rtshield_store::new_uuid());
        let mut ledger = test_ledger(d.path(), &c);
        ledger.add(&r).unwrap();
        store.put(&r, None).unwrap();
        let on_a = done(store.as_mut(), &c, &ledger, "6.6.1 PREEMPT_RT").unwrap();
        assert_eq!(
            on_a.into_iter().collect::<Vec<_>>(),
            [("load=idle".to_string(), 1)]
        );
        assert!(done(store.as_mut(), &c, &ledger, "6.12.3 PREEMPT_RT")
            .unwrap()
            .is_empty());
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
        assert_eq!(
            (t.samples, t.min_ns, t.max_ns),
            (Some(11), Some(9_000), Some(500_000))
        );
        // (20 µs × 5 + 30 µs × 6) / 11
        assert!((t.avg_ns.unwrap() - 280_000.0 / 11.0).abs() < 1e-6);
        assert_eq!(sanitize("cmd:stress-ng --cpu 1"), "cmd_stress-ng_--cpu_1");
    }
}
