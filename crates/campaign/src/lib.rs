//! `rtshield campaign`: run a matrix of measurements, store every run,
//! write one report.
//!
//! Each run is a child `rtshield measure` (and, for `isolation =
//! "partition"`, a child `rtshield partition create` before it and `undo`
//! after it): a crash of one cell cannot take the campaign's bookkeeping
//! down, and the partition is always undone — on a normal end, a failing
//! cell, SIGINT and SIGTERM — before the campaign exits.

use rtshield_config::campaign::{Campaign, Cell, Step};
use rtshield_results::RunResult;
use rtshield_store::{Selector, Store};
use rtshield_sys::{DirPolicy, InputError, Root, SafeDir};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::Duration;

/// The signal that asked the campaign to stop (0: none).
static STOP: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(sig: libc::c_int) {
    STOP.store(sig, Ordering::SeqCst);
}

/// SIGINT and SIGTERM set [`STOP`]; the running cell is told to end (it
/// still writes its results), its partition is undone, and the campaign
/// stops.
fn install_handlers() {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: the handler only stores to an atomic.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as *const () as usize;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

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
    pub store: Box<dyn Store>,
    pub resume: bool,
    /// Print the children's output (otherwise `-q`).
    pub verbose: bool,
}

/// What a finished (or stopped) campaign did.
pub struct Outcome {
    pub stored: usize,
    pub skipped_done: usize,
    pub skipped: Vec<(String, String)>,
    /// The signal that stopped it, if any.
    pub stopped_by: Option<i32>,
    pub report: Option<PathBuf>,
}

/// The plan as `--dry-run` prints it.
pub fn plan_text(c: &Campaign) -> String {
    let mut s = format!(
        "campaign {} ({} cells x {} repeats = {} runs of {}; measuring time {})\n",
        c.name,
        c.cells.len(),
        c.repeat,
        c.cells.len() as u64 * c.repeat,
        rtshield_sys::units::format_duration_ns(c.duration_ns),
        rtshield_sys::units::format_duration_ns(c.total_ns())
    );
    s.push_str(&format!(
        "order: {}\n",
        match c.order {
            rtshield_config::campaign::Order::Interleaved =>
                "interleaved (round 1 of every cell, then round 2, ...)",
            rtshield_config::campaign::Order::Sequential => "sequential",
        }
    ));
    for (i, st) in c.steps().iter().enumerate() {
        let cell = &c.cells[st.cell];
        s.push_str(&format!(
            "{:>4}. cell {} [{}] repeat {}: rtshield measure {}\n",
            i + 1,
            st.cell + 1,
            cell.id,
            st.repeat,
            c.measure_args(cell)
                .into_iter()
                .chain(if cell.isolation() == "partition" {
                    partition_args(c)
                } else {
                    Vec::new()
                })
                .collect::<Vec<_>>()
                .join(" ")
        ));
    }
    s
}

/// `measure` options that put a partition cell's measuring threads in
/// `rt` and its main thread and load in `nrt` (cgroup v1).
fn partition_args(c: &Campaign) -> Vec<String> {
    // Always the campaign's own sets: without a parent those at the root
    // (`/`), never another parent's partition found first.
    vec![
        "--partition".to_string(),
        "--partition-parent".into(),
        c.partition.parent.clone().unwrap_or_else(|| "/".into()),
    ]
}

/// A partition made for one cell; undone when dropped.
struct PartitionGuard<'a> {
    exe: &'a Path,
    parent: Option<String>,
    active: bool,
}

impl PartitionGuard<'_> {
    fn undo(&mut self) -> Result<(), String> {
        if !self.active {
            return Ok(());
        }
        self.active = false;
        let mut cmd = Command::new(self.exe);
        cmd.args(["partition", "undo"]);
        if let Some(p) = &self.parent {
            cmd.args(["--parent", p]);
        }
        match cmd.stdout(Stdio::null()).status() {
            Ok(s) if s.success() => Ok(()),
            Ok(s) => Err(format!("`rtshield partition undo` exited with {s}")),
            Err(e) => Err(format!("cannot run rtshield partition undo: {e}")),
        }
    }
}

impl Drop for PartitionGuard<'_> {
    fn drop(&mut self) {
        if let Err(e) = self.undo() {
            eprintln!("rtshield: campaign: {e}: run `rtshield partition undo` by hand");
        }
    }
}

fn wait_child(mut child: Child) -> std::io::Result<std::process::ExitStatus> {
    let mut forwarded = false;
    loop {
        if let Some(s) = child.try_wait()? {
            return Ok(s);
        }
        let sig = STOP.load(Ordering::SeqCst);
        if sig != 0 && !forwarded {
            // The child may not have seen it (kill -TERM to us only):
            // pass on the same signal, so its end reason names it.
            // SAFETY: signalling our own child by pid.
            unsafe { libc::kill(child.id() as libc::pid_t, sig) };
            forwarded = true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// An external load (`cmd:…`) in its own process group, killed as a group.
struct ExternalLoad(Child);

impl Drop for ExternalLoad {
    fn drop(&mut self) {
        // SAFETY: the group is the one we created for this child.
        unsafe { libc::kill(-(self.0.id() as libc::pid_t), libc::SIGKILL) };
        let _ = self.0.wait();
    }
}

fn start_external(cmdline: &str) -> std::io::Result<ExternalLoad> {
    use std::os::unix::process::CommandExt;
    let child = Command::new("/bin/sh")
        .args(["-c", cmdline])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()?;
    Ok(ExternalLoad(child))
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

/// Run the campaign. `progress` is told about each run as it ends.
pub fn run(
    c: &Campaign,
    mut opts: Options,
    progress: &mut dyn FnMut(usize, usize, &Step, &Cell, &str),
) -> anyhow::Result<Outcome> {
    install_handlers();
    let root = Root::host();
    let already = if opts.resume {
        done(opts.store.as_mut(), c).map_err(anyhow::Error::msg)?
    } else {
        BTreeSet::new()
    };
    let uses_partition = c.cells.iter().any(|cell| cell.isolation() == "partition");
    // cgroup v1: a partition cell's measure puts its measuring threads in
    // rt and itself (main thread, built-in load) in nrt (`measure
    // --partition`). cgroup v2 keeps a process's threads in one cgroup:
    // the whole measure runs in rt (`partition run rt`), where a built-in
    // load would be confined to the rt CPUs, so that is refused.
    let v2 = rtshield_isolation::Partitions::discover(&root)
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
    if uses_partition {
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
        .map_err(anyhow::Error::msg)?;
    }
    let steps = c.steps();
    let mut out = Outcome {
        stored: 0,
        skipped_done: 0,
        skipped: Vec::new(),
        stopped_by: None,
        report: None,
    };
    for (i, st) in steps.iter().enumerate() {
        if STOP.load(Ordering::SeqCst) != 0 {
            break;
        }
        let cell = &c.cells[st.cell];
        if already.contains(&(cell.id.clone(), st.repeat)) {
            out.skipped_done += 1;
            progress(i, steps.len(), st, cell, "already stored (resume)");
            continue;
        }
        let iso = cell.isolation();
        let found = rtshield_isolation::Isolation::detect(&root);
        if iso == "isolcpus" && !found.found.iter().any(|f| f.method == "isolcpus") {
            let why = "no isolcpus= on the kernel command line".to_string();
            progress(i, steps.len(), st, cell, &format!("skipped: {why}"));
            out.skipped.push((cell.id.clone(), why));
            continue;
        }
        let mut guard = PartitionGuard {
            exe: &opts.exe,
            parent: c.partition.parent.clone(),
            active: false,
        };
        if iso == "partition" {
            let mut cmd = Command::new(&opts.exe);
            cmd.args(["partition", "create", &c.cpus]);
            if let Some(p) = &c.partition.parent {
                cmd.args(["--parent", p]);
            }
            for w in &c.partition.with {
                cmd.args(["--with", w]);
            }
            // Active before the child runs: a create killed half-way is
            // still undone (undo is idempotent).
            guard.active = true;
            let s = cmd.stdout(Stdio::null()).status()?;
            if !s.success() {
                guard.undo().ok();
                anyhow::bail!(
                    "cell {}: `rtshield partition create {}` failed ({s})",
                    cell.id,
                    c.cpus
                );
            }
        }
        let mut load = match cell.load().strip_prefix("cmd:") {
            Some(cmdline) => Some(start_external(cmdline)?),
            None => None,
        };
        let dir_name = format!("{:03}-cell{}-r{}", i + 1, st.cell + 1, st.repeat);
        let (cell_dir, _) = opts.out.create_unique_subdir(&dir_name, 0o755)?;
        let mut cmd = Command::new(&opts.exe);
        if iso == "partition" && v2 {
            // cgroup v2: the whole measure in rt (see above).
            cmd.args(["partition", "run", "rt"]);
            if let Some(p) = &c.partition.parent {
                cmd.args(["--parent", p]);
            }
            cmd.arg("--").arg(&opts.exe);
        }
        // --no-store: the campaign stores the run itself, with its tags.
        cmd.arg("measure")
            .args(c.measure_args(cell))
            .arg("--no-store")
            .arg("--out")
            .arg(cell_dir.path());
        if iso == "partition" && !v2 {
            // Measuring threads in rt, main thread and built-in load in nrt.
            cmd.args(partition_args(c));
        }
        if !opts.verbose {
            cmd.arg("-q").stdout(Stdio::null());
        }
        let status = wait_child(cmd.spawn()?)?;
        // An external load that ended before the measurement did: the
        // cell was not measured under its load.
        let load_ended = match load.as_mut() {
            Some(l) => l.0.try_wait()?,
            None => None,
        };
        drop(load);
        guard.undo().map_err(anyhow::Error::msg)?;
        let sig = STOP.load(Ordering::SeqCst);
        if let (Some(st), 0) = (load_ended, sig) {
            anyhow::bail!(
                "cell {}: the load command `{}` ended ({st}) before the measurement did",
                cell.id,
                cell.load().trim_start_matches("cmd:")
            );
        }
        let results = cell_dir.path().join("results.json");
        if !results.exists() {
            if sig != 0 {
                break;
            }
            anyhow::bail!(
                "cell {}: `rtshield measure` wrote no results ({status})",
                cell.id
            );
        }
        let mut r: RunResult = rtshield_results::read_json(&results)?;
        let tags = [
            ("campaign", c.name.clone()),
            ("campaign_id", c.fingerprint.clone()),
            ("cell", cell.id.clone()),
            ("repeat", st.repeat.to_string()),
            // The run's place in the campaign's order (1-based), so the
            // stored runs show the order they were made in.
            ("step", (i + 1).to_string()),
            ("isolation", iso.to_string()),
            ("load", cell.load().to_string()),
        ];
        for (k, v) in tags {
            r.tags.insert(k.into(), v);
        }
        for (k, v) in &cell.values {
            r.tags.entry(k.clone()).or_insert_with(|| v.clone());
        }
        r.label = Some(format!("{} r{}", cell.id, st.repeat));
        // The result file is the primary record: it carries the tags too,
        // so `runs import` rebuilds the same store.
        cell_dir.write(
            "results.json",
            (serde_json::to_string_pretty(&r)? + "\n").as_bytes(),
        )?;
        if sig != 0 || r.end_reason != "duration" {
            // An interrupted cell is kept on disk but not stored: resume
            // measures it again in full.
            progress(
                i,
                steps.len(),
                st,
                cell,
                &format!(
                    "interrupted ({})",
                    match sig {
                        libc::SIGTERM => "sigterm",
                        libc::SIGINT => "sigint",
                        _ => r.end_reason.as_str(),
                    }
                ),
            );
            break;
        }
        opts.store
            .put(&r, Some(&results.display().to_string()))
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        out.stored += 1;
        let p = |k: &str| {
            r.threads
                .iter()
                .filter_map(|t| t.percentiles.get(k).copied())
                .max()
                .map_or("?".into(), |v| format!("{:.1}", v as f64 / 1000.0))
        };
        let max = r.threads.iter().map(|t| t.max_ns).max().unwrap_or(0) as f64 / 1000.0;
        // What the measure itself found on the CPUs it measured.
        let detected = r.tags.get("isolation_detected").map_or("?", String::as_str);
        progress(
            i,
            steps.len(),
            st,
            cell,
            &format!(
                "p50 {} us  p99.9 {} us  max {max:.1} us  [{detected}]",
                p("50"),
                p("99.9")
            ),
        );
    }
    let sig = STOP.load(Ordering::SeqCst);
    if sig != 0 {
        out.stopped_by = Some(sig);
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
    let rdir = out.subdir("report", 0o755)?;
    let data = rdir.subdir("runs", 0o755)?;
    let mut inputs = Vec::new();
    for (s, r) in sums.iter().zip(&runs) {
        let n = format!("run-{}.json", s.id);
        data.write(&n, serde_json::to_string(r)?.as_bytes())?;
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
    for l in &loads_seen {
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
                let n = format!("load-{}-{iso}.json", sanitize(l));
                data.write(&n, serde_json::to_string(&merged)?.as_bytes())?;
                inputs.push(data.path().join(n));
                names.push(format!("{iso} ({} runs)", group.len()));
            }
        }
        if !inputs.is_empty() {
            rtshield_report::generate(&rtshield_report::Options {
                inputs,
                names,
                out_dir: rdir.path().join(format!("load-{}", sanitize(l))),
                formats: vec![rtshield_report::Format::Png, rtshield_report::Format::Svg],
                title: format!("Campaign {}: load {l}", c.name),
                policy: DirPolicy::Strict,
                x_max_us: None,
            })?;
        }
    }
    let loads: Vec<&str> = dedup(c.cells.iter().map(Cell::load));
    let isos: Vec<&str> = dedup(c.cells.iter().map(Cell::isolation));
    let md = rtshield_report::campaign::summary_markdown(&c.name, &loads, &isos, &runs);
    rdir.write("summary.md", md.as_bytes())?;
    Ok(rdir.path().to_path_buf())
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

    fn run(counts: &[[u64; 2]], min: i64, max: i64, avg: f64) -> RunResult {
        let h = rtshield_results::Histogram {
            resolution_ns: 1000,
            buckets: 100,
            counts: counts.to_vec(),
            overflow: 1,
            underflow: 0,
        };
        let n = counts.iter().map(|c| c[1]).sum::<u64>() + 1;
        let mut r = rtshield_results::example::example_result();
        r.threads = vec![rtshield_results::import::thread_from_histogram(
            0,
            Some(1),
            200_000,
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
        assert_eq!(t.histogram.counts, vec![[10, 4], [11, 4], [12, 1]]);
        assert_eq!(t.histogram.overflow, 2);
        assert_eq!((t.samples, t.min_ns, t.max_ns), (11, 9_000, 500_000));
        // (20 µs × 5 + 30 µs × 6) / 11
        assert!((t.avg_ns - 280_000.0 / 11.0).abs() < 1e-6);
        assert_eq!(sanitize("cmd:stress-ng --cpu 1"), "cmd_stress-ng_--cpu_1");
    }
}
