//! The engine's observer during `rtshield run` ([`RunObserver`]): it
//! places the main thread once the engine has placed its own, gathers the
//! supervisor's news and phase, appends `timeline.csv`, hands the live
//! table to the [`ConfigPrinter`], and writes checkpoints from the
//! engine's mid-run snapshots.

use crate::pipeline::{self, ResultWriter};
use crate::print::ConfigPrinter;
use crate::runner::program_results;
use crate::supervisor::Shared;
use crate::timeline::Timeline;
use rtshield_config::{Config, CpuLoadShow};
use rtshield_load::{CpuLoad, CpuLoadMeter};
use rtshield_measure::{IntervalStats, Measurement, Observer, ResultContext};
use rtshield_results::{ExportManager, RunResult};
use rtshield_safefs::SafeDir;
use rtshield_sys::Root;
use rtshield_sys::{set_affinity, set_scheduler};
use rtshield_vocab::CpuSet;
use rtshield_vocab::Policy;
use std::rc::Rc;
use std::sync::{Arc, Mutex};

/// Writes the results so far every `stats.checkpoint`, from the engine's
/// mid-run snapshots (no pause in the measurement).
pub(crate) struct Checkpoint {
    pub(crate) every_ns: u64,
    /// Segment-relative time of the next one.
    pub(crate) next_ns: u64,
    pub(crate) dir: Rc<SafeDir>,
    /// Everything but the programs, which are read at each checkpoint.
    pub(crate) ctx: ResultContext,
    /// On resume: the checkpoint resumed from and the gap, merged into
    /// every checkpoint of the first segment (a second interruption loses
    /// nothing the first kept).
    pub(crate) base: Option<(RunResult, f64)>,
}

/// The engine's observer during `rtshield run`: main's placement, the
/// supervisor's news, the timeline, the live table, checkpoints.
pub(crate) struct RunObserver<'a> {
    pub(crate) cfg: &'a Config,
    pub(crate) root: Root,
    pub(crate) shared: Option<Arc<Mutex<Shared>>>,
    pub(crate) meter: Option<CpuLoadMeter>,
    pub(crate) timeline: Option<Timeline>,
    /// Measured before this segment (rotation parts are segments).
    pub(crate) offset_ns: u64,
    /// On resume, until the first segment ends: the checkpoint's totals per
    /// thread (index, samples, max, overruns, lost), added to what the
    /// engine reports so the display and the timeline count on.
    pub(crate) base: Vec<(u32, u64, Option<i64>, u64, u64)>,
    /// Checkpoint writer (None: `stats.checkpoint off`).
    pub(crate) checkpoint: Option<Checkpoint>,
    /// Where the live table goes.
    pub(crate) printer: &'a mut dyn ConfigPrinter,
    pub(crate) stop_reason: Option<String>,
    pub(crate) messages: Vec<String>,
    pub(crate) main_cpus: Option<CpuSet>,
    pub(crate) main_sched: Option<(Policy, i32)>,
    pub(crate) applied_main: bool,
    pub(crate) total_ns: Option<u64>,
    pub(crate) exports: ExportManager,
    pub(crate) writer: ResultWriter,
    /// The drift watch's events so far, for each checkpoint.
    pub(crate) drift: Option<rtshield_drift::Feed>,
    /// The load/rest phase of the timeline row being gathered (None until
    /// the first drain): a row is cut when the supervisor's phase differs
    /// and labelled with this one.
    pub(crate) row_phase: Option<String>,
}

impl RunObserver<'_> {
    fn adjust(&self, s: &IntervalStats) -> IntervalStats {
        let mut s = s.clone();
        s.elapsed_ns = s.elapsed_ns.saturating_add(self.offset_ns);
        for t in &mut s.threads {
            if let Some(&(_, n, max, ov, lost)) = self.base.iter().find(|b| b.0 == t.index) {
                // Saturating: the checkpoint's counts are in range (its
                // reader checks them, docs/ranges.md), and a display must
                // never be what loses a run.
                // The segment's maximum is a placeholder until its first
                // sample; the checkpoint's is unknown when it had none.
                if let Some(max) = max {
                    t.max_ns = if t.samples == 0 {
                        max
                    } else {
                        t.max_ns.max(max)
                    };
                }
                t.samples = t.samples.saturating_add(n);
                t.overruns = t.overruns.saturating_add(ov);
                t.lost = t.lost.saturating_add(lost);
            }
        }
        // The whole run's duration, not the segment's (progress, time left).
        s.duration_ns = self.total_ns;
        s
    }

    /// The `stats.cpu_load` lines of the live table.
    fn cpu_load_text(&self, load: Option<&CpuLoad>) -> Option<String> {
        let l = load?;
        match &self.cfg.main.cpu_load {
            CpuLoadShow::None => None,
            CpuLoadShow::All => Some(l.render(None, true)),
            CpuLoadShow::Total => Some(l.render(Some(&CpuSet::new()), true)),
            CpuLoadShow::Cpus(c) => Some(l.render(Some(c), true)),
        }
    }
}

impl Observer for RunObserver<'_> {
    fn interval(&mut self, raw: &IntervalStats) -> bool {
        if !self.applied_main {
            // The engine has placed its threads; now the main thread may go
            // where main's cpu_affinity says (the engine restores it at the end).
            self.applied_main = true;
            if let Some(c) = &self.main_cpus {
                if let Err(e) = set_affinity(0, c) {
                    self.messages
                        .push(format!("main: cannot set cpu_affinity {c}: {e}"));
                }
            }
            if let Some((p, prio)) = self.main_sched {
                if let Err(e) = set_scheduler(0, p, prio) {
                    self.messages
                        .push(format!("main: cannot set {p} priority {prio}: {e}"));
                }
            }
        }
        let s = self.adjust(raw);
        let mut phase = "load".to_string();
        if let Some(sh) = &self.shared {
            let mut g = sh.lock().unwrap_or_else(|p| p.into_inner());
            self.messages.append(&mut g.messages);
            // The row holds the samples since the last one: its phase is
            // the one it was gathered in (a switch cut it, see cut_due).
            phase = self
                .row_phase
                .replace(g.phase.clone())
                .unwrap_or_else(|| g.phase.clone());
            if let Some(l) = &g.stop {
                self.stop_reason.get_or_insert(l.clone());
            }
        }
        let load = self.meter.as_mut().and_then(|m| m.sample().ok());
        if let Some(t) = &mut self.timeline {
            if let Err(e) = t.append(&s, 0, &phase, load.as_ref()) {
                self.writer
                    .note(format!("timeline.csv: {e}; no more timeline rows"));
                self.timeline = None;
            }
        }
        let cpu_load = self.cpu_load_text(load.as_ref());
        self.printer
            .interval(&s, cpu_load.as_deref(), &mut self.messages);
        self.stop_reason.is_none()
    }

    fn cut_due(&mut self, elapsed_ns: u64) -> bool {
        let Some(sh) = &self.shared else { return false };
        let mut g = sh.lock().unwrap_or_else(|p| p.into_inner());
        if g.anchor.is_none() {
            // The measurement's start, on the supervisor's clock: the
            // load/rest schedule counts from here.
            let since = std::time::Duration::from_nanos(elapsed_ns);
            g.anchor = std::time::Instant::now().checked_sub(since);
        }
        match &self.row_phase {
            None => {
                self.row_phase = Some(g.phase.clone());
                false
            }
            Some(p) => *p != g.phase,
        }
    }

    fn wants_snapshot(&mut self, s: &IntervalStats) -> bool {
        match &mut self.checkpoint {
            Some(c) if s.elapsed_ns >= c.next_ns => {
                c.next_ns = s.elapsed_ns + c.every_ns;
                true
            }
            _ => false,
        }
    }

    fn snapshot(&mut self, m: &Measurement) {
        let Some(c) = &self.checkpoint else { return };
        let mut ctx = c.ctx.clone();
        if let Some(f) = &self.drift {
            ctx.drift = f.so_far();
        }
        if let Some(sh) = &self.shared {
            let stats = sh.lock().unwrap_or_else(|p| p.into_inner()).stats.clone();
            ctx.programs = program_results(self.cfg, &stats);
        }
        let mut res = pipeline::to_result(m, &ctx);
        if let Some((prev, gap)) = &c.base {
            match rtshield_results::merge_resumed(prev, &res, *gap) {
                Ok(r) => res = r,
                Err(e) => self.writer.note(format!("checkpoint: --resume: {e}")),
            }
        }
        res.end_reason = Some("checkpoint".into());
        // What a kill -9 leaves says how hot it was at the last checkpoint.
        res.sysinfo.thermal_end = rtshield_sys::thermal_zones(&self.root);
        let dir = c.dir.clone();
        self.writer.checkpoint(&self.exports, &res, &dir);
    }
}
