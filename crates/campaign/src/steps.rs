//! One step of a campaign: a cell's repeat, measured by a child
//! `rtshield __measure` (in the cell's partition, beside its load), then
//! tagged and stored.

use crate::model::{Campaign, Cell, Step};
use crate::process::{self, ExternalLoad, PartitionGuard};
use crate::{Options, Outcome};
use rtshield_results::RunResult;
use rtshield_safefs::SafeDir;
use rtshield_sys::Root;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Whether the campaign goes on after a step.
pub(crate) enum Flow {
    /// To the next step.
    Next,
    /// Stopped (a signal, an interrupted cell): no more steps.
    Stop,
}

/// Told about each run as it ends: (step index, steps, step, cell, what).
pub(crate) type Progress<'a> = dyn FnMut(usize, usize, &Step, &Cell, &str) + 'a;

/// What every step shares.
pub(crate) struct Steps<'a, 'p> {
    pub c: &'a Campaign,
    pub opts: &'a mut Options,
    pub root: Root,
    /// cgroup v2: a partition cell runs whole in `rt` (see [`crate::run`]).
    pub v2: bool,
    /// (cell, repeat) already stored (`--resume`).
    pub already: BTreeSet<(String, u64)>,
    /// What this campaign measured (UUID and digest of every run it stored).
    pub ledger: crate::ledger::Ledger,
    pub progress: &'a mut Progress<'p>,
    pub out: Outcome,
    pub total: usize,
}

/// A measured cell, before it is tagged and stored.
struct Measured {
    result: RunResult,
    dir: SafeDir,
    results: PathBuf,
}

impl Steps<'_, '_> {
    fn say(&mut self, i: usize, st: &Step, what: &str) {
        let cell = &self.c.cells[st.cell];
        (self.progress)(i, self.total, st, cell, what);
    }

    /// Step `i`: skipped (already stored, no isolcpus), or measured and stored.
    pub(crate) fn run(&mut self, i: usize, st: &Step) -> anyhow::Result<Flow> {
        let cell = &self.c.cells[st.cell];
        if self.already.contains(&(cell.id.clone(), st.repeat)) {
            self.out.skipped_done += 1;
            self.say(i, st, "already stored (resume)");
            return Ok(Flow::Next);
        }
        let found = rtshield_isolation::Isolation::detect(&self.root);
        if cell.isolation() == "isolcpus" && !found.found.iter().any(|f| f.method == "isolcpus") {
            let why = "no isolcpus= on the kernel command line".to_string();
            self.say(i, st, &format!("skipped: {why}"));
            self.out.skipped.push((cell.id.clone(), why));
            return Ok(Flow::Next);
        }
        let Some(m) = self.measure(i, st, cell)? else {
            return Ok(Flow::Stop);
        };
        self.store(i, st, m)
    }

    /// Measure step `i` in its partition, beside its load. None: stopped
    /// by a signal before any result was written.
    fn measure(&mut self, i: usize, st: &Step, cell: &Cell) -> anyhow::Result<Option<Measured>> {
        let c = self.c;
        let mut guard = PartitionGuard {
            exe: &self.opts.exe,
            parent: c.partition.parent.clone(),
            active: false,
        };
        if cell.isolation() == "partition" {
            let s = guard.create(&c.cpus, &c.partition.with)?;
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
            Some(cmdline) => Some(process::start_external(cmdline)?),
            None => None,
        };
        let dir_name = format!("{:03}-cell{}-r{}", i + 1, st.cell + 1, st.repeat);
        let (cell_dir, _) = self.opts.out.create_unique_subdir(&dir_name, 0o755)?;
        let status = self.run_child(cell, cell_dir.path())?;
        // An external load that ended before the measurement did: the
        // cell was not measured under its load.
        let load_ended = match load.as_mut() {
            Some(ExternalLoad(l)) => l.try_wait()?,
            None => None,
        };
        drop(load);
        // Whatever the load or the measurement left running (a daemon,
        // re-parented to the campaign, its subreaper) ends with the cell:
        // it must not run on as root nor load the next cell.
        let swept = rtshield_load::end_descendants_summary();
        if let Some(s) = &swept {
            rtshield_text::errln!("rtshield: campaign: cell {}: {s}", cell.id);
        }
        // An undo that fails (tasks that would not leave) stops the
        // campaign after this cell: its run is still stored and the
        // report written, then the campaign says what is left.
        if let Err(e) = guard.undo() {
            self.out.undo_failed = Some(format!("cell {}: {e}", cell.id));
        }
        let sig = process::stopped_by();
        if let (Some(st), 0) = (load_ended, sig) {
            anyhow::bail!(
                "cell {}: the load command `{}` ended ({st}) before the measurement did",
                cell.id,
                cell.load_shown().trim_start_matches("cmd:")
            );
        }
        let results = cell_dir.path().join("results.json");
        if !results.exists() {
            if sig != 0 {
                return Ok(None);
            }
            anyhow::bail!(
                "cell {}: `rtshield measure` wrote no results ({status}){}",
                cell.id,
                self.out
                    .undo_failed
                    .as_ref()
                    .map(|e| format!("; and its partition is left: {e}"))
                    .unwrap_or_default()
            );
        }
        let mut result = rtshield_results::read_json(&results)?;
        if let Some(s) = swept {
            result
                .warnings
                .push(format!("campaign: at the end of the cell, {s}"));
        }
        Ok(Some(Measured {
            result,
            dir: cell_dir,
            results,
        }))
    }

    /// The cell's child: `rtshield __measure` with the cell's request on
    /// its standard input (on cgroup v2, a partition cell's inside
    /// `rtshield partition run rt`); waited for.
    fn run_child(&self, cell: &Cell, dir: &Path) -> anyhow::Result<std::process::ExitStatus> {
        let (exe, v2, verbose) = (&self.opts.exe, self.v2, self.opts.verbose);
        let request = self.c.cell_request(cell, exe, dir, v2, verbose)?;
        let mut cmd = Command::new(exe);
        if cell.isolation() == "partition" && v2 {
            // cgroup v2: the whole measure in rt (see `run`).
            cmd.args(["partition", "run", "rt"]);
            if let Some(p) = &self.c.partition.parent {
                cmd.args(["--parent", p]);
            }
            cmd.arg("--").arg(exe);
        }
        cmd.arg("__measure");
        if !verbose {
            cmd.stdout(Stdio::null());
        }
        process::stop_with_parent(&mut cmd);
        let json = serde_json::to_vec(&request)?;
        Ok(process::wait_child(process::spawn_with_input(
            &mut cmd, &json,
        )?)?)
    }

    /// Tag the measured run with its place in the campaign, rewrite its
    /// results.json, and store it (an interrupted run is kept on disk, not
    /// stored: resume measures it again in full).
    fn store(&mut self, i: usize, st: &Step, m: Measured) -> anyhow::Result<Flow> {
        let c = self.c;
        let cell = &c.cells[st.cell];
        let mut r = m.result;
        let tags = [
            ("campaign", c.name.clone()),
            ("campaign_id", c.fingerprint.clone()),
            ("cell", cell.id.clone()),
            ("repeat", st.repeat.to_string()),
            // The run's place in the campaign's order (1-based), so the
            // stored runs show the order they were made in.
            ("step", (i + 1).to_string()),
            ("isolation", cell.isolation().to_string()),
            ("load", cell.load_shown().into_owned()),
            // The implicit axis: runs of another kernel are kept apart in
            // the report and are not done for `--resume` on this one.
            (
                rtshield_report::CAMPAIGN_KERNEL_TAG,
                rtshield_results::kernel_id(&r.sysinfo),
            ),
        ];
        for (k, v) in tags {
            r.tags.insert(k.into(), v);
        }
        for (k, v) in &cell.values {
            r.tags.entry(k.clone()).or_insert_with(|| v.clone());
        }
        r.label = Some(format!("{} r{}", cell.id, st.repeat));
        // No password of a `cmd:` load (or of anything else) in the file
        // or the store.
        r.redact_secrets();
        // The result file is the primary record: it carries the tags too,
        // so `runs import` rebuilds the same store.
        m.dir.write(
            "results.json",
            (serde_json::to_string_pretty(&r)? + "\n").as_bytes(),
        )?;
        let sig = process::stopped_by();
        // A run ends by its duration or, with `samples`, by its count.
        let end = r.end_reason.as_deref().unwrap_or("?");
        if sig != 0 || !["duration", "samples"].contains(&end) {
            let why = if sig != 0 {
                rtshield_signals::end_reason(sig)
            } else {
                end.to_string()
            };
            self.say(i, st, &format!("interrupted ({why})"));
            return Ok(Flow::Stop);
        }
        // Recorded before it is stored: a run in the store the record
        // does not list is never counted as the campaign's.
        self.ledger.add(&r)?;
        let put = self
            .opts
            .store
            .put(&r, Some(&m.results.display().to_string()))
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        if let rtshield_store::Put::Conflict { id, uuid } = put {
            anyhow::bail!(
                "{}: the store already holds a different run with this run's UUID {uuid} (run {id})",
                self.opts.store.location()
            );
        }
        self.out.stored += 1;
        if r.verdict.as_ref().is_some_and(|v| !v.passed) {
            self.out.failed += 1;
        }
        let p = |k: &str| {
            r.threads
                .iter()
                .filter_map(|t| t.percentiles.get(k).copied())
                .max()
                .map_or("?".into(), |v| format!("{:.1}", v as f64 / 1000.0))
        };
        // No thread measured anything: the maximum is unknown.
        let max = r
            .threads
            .iter()
            .filter_map(|t| t.max_ns)
            .max()
            .map_or("?".into(), |m| format!("{:.1}", m as f64 / 1000.0));
        // What the measure itself found on the CPUs it measured.
        let detected = r.tags.get("isolation_detected").map_or("?", String::as_str);
        let line = format!(
            "p50 {} us  p99.9 {} us  max {max} us  [{detected}]",
            p("50"),
            p("99.9"),
        );
        self.say(i, st, &line);
        if self.out.undo_failed.is_some() {
            return Ok(Flow::Stop);
        }
        Ok(Flow::Next)
    }
}
