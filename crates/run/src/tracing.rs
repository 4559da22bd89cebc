//! Kernel tracing around a measurement (`--trace-on`, `--trace-stop`,
//! `--split`; docs/trace.md): the private tracefs instance
//! (`rtshield_sys::tracefs`), the measuring threads' spike trigger, and the
//! analysis (`rtshield_trace`), all on the main thread: after each drain of
//! the rings (every 20 ms) and at the end, never in the measuring loop.
//!
//! - `--trace-on LAT`: all events, overwrite mode. A measuring thread woken
//!   later than LAT writes one marker line; the main thread then reads the
//!   instance's `trace` file and explains the spike from its expected
//!   wake-up time.
//! - `--trace-stop`: the thread writes `tracing_on = 0` instead and the run
//!   ends; the buffer is read and explained at the end, and kept
//!   (`trace.txt`).
//! - `--split`: the main thread reads `trace_pipe` (consuming) after each
//!   drain and splits each measured sample into IRQ and thread latency,
//!   paired one to one with its own wake-up's events by CPU, TID and
//!   expected time (`rtshield_trace::Pairer`), or counts it as unsplit;
//!   spikes are then explained from the records kept in memory (the last
//!   2 s).
//!
//! When tracing is impossible (not root, lockdown, no tracefs, the instance
//! cannot be made) the reason is printed once and the run measures without
//! it (`trace.unavailable` in results.json).

use rtshield_measure::ThreadHistograms;
use rtshield_measure::{
    IntervalStats, MeasureSpec, Measurement, Observer, SampleTime, SpikeMark, SpikeTrigger,
    TraceSpec,
};
use rtshield_results::{LatencyPart, SplitResult, TraceResult};
use rtshield_sys::Root;
use rtshield_sys::{steal_ns_between, StatSnapshot};
use rtshield_sys::{tracing_unavailable, TraceConfig, TraceInstance, TracePipe};
use rtshield_trace::{EngineSample, Paired, Pairer, PairerSet, Record};
use rtshield_vocab::CpuSet;
use std::collections::VecDeque;
use std::os::unix::io::AsRawFd;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

/// Remove what dead rtshield processes left in tracefs (instances still
/// recording, private mounts: a SIGKILL or a crash leaves them), saying
/// so on stderr. Called at the start of every `measure`, `run` and
/// campaign cell, traced or not, once their input has been checked.
pub fn remove_leftovers(root: &Root) {
    for l in rtshield_sys::remove_tracing_leftovers(root) {
        let what = match l.kind {
            rtshield_sys::TracingLeftoverKind::Instance => "trace instance",
            rtshield_sys::TracingLeftoverKind::Mount => "tracefs mount",
        };
        rtshield_text::errln!(
            "rtshield: removed the {what} {} left by rtshield process {} (gone)",
            l.name,
            l.pid
        );
    }
}

/// Spikes explained per run at most; later ones are counted
/// (`spikes_not_analysed`): each costs a read and parse of the buffer.
pub(crate) const MAX_SPIKES: usize = 100;
/// The buffer is parsed from this long before a spike's expected wake-up:
/// the replay learns the current task and the open interrupts there.
const REPLAY_MARGIN_NS: u64 = 50_000_000;
/// How often `/proc/stat` is read for steal time while nothing happens.
const STEAL_EVERY: std::time::Duration = std::time::Duration::from_millis(100);
/// With `--split`, records kept for spike analysis: the last 2 s.
const KEEP_NS: u64 = 2_000_000_000;
/// The events `--split` alone needs (the spike analysis wants all of
/// the default events of `rtshield_sys`'s tracefs instances).
const SPLIT_EVENTS: &[&str] = &[
    "timer:hrtimer_start",
    "timer:hrtimer_expire_entry",
    "sched:sched_waking",
    "sched:sched_wakeup",
    "sched:sched_switch",
];
/// At most this much `trace_pipe` text per drain (the rest waits for the
/// next one, 20 ms later).
const PIPE_CHUNK: usize = 8 << 20;

/// One part of a split latency being accumulated.
struct Part {
    hist: ThreadHistograms,
    exact: rtshield_results::MinMaxSum,
}

impl Part {
    fn new(spec: &MeasureSpec) -> Part {
        Part {
            hist: ThreadHistograms::new(spec.histo_size_ns, spec.resolution_ns),
            exact: Default::default(),
        }
    }

    fn add(&mut self, v: i64) {
        self.hist.record(v, 0, 0);
        self.exact.add(v);
    }

    fn result(&self) -> LatencyPart {
        // No sample split: unknown, not 0.
        LatencyPart {
            min_ns: self.exact.min(),
            max_ns: self.exact.max(),
            avg_ns: self.exact.mean(),
            histogram: self.hist.to_histogram(),
            percentiles: self.hist.percentiles(),
        }
    }
}

/// The instance and everything read from it during one measurement.
pub(crate) struct Session {
    spec: TraceSpec,
    root: Root,
    inst: Option<TraceInstance>,
    /// `trace_marker` (or `tracing_on` with `--trace-stop`), opened before
    /// the measuring threads start.
    spike_file: Option<std::fs::File>,
    pipe: Option<TracePipe>,
    /// `--split`: the recent records, for spike analysis.
    kept: VecDeque<Record>,
    /// Per measuring thread (index in `spec.threads`): its pairer, made
    /// once its tid is known; each record goes to its CPU's pairers only.
    pairers: PairerSet,
    /// Per measuring thread: its CPU.
    thread_cpus: Vec<Option<u32>>,
    parts: Vec<(Part, Part)>,
    /// Per measuring thread: samples not split, by reason.
    unsplit: Vec<std::collections::BTreeMap<String, u64>>,
    /// Reused for the pairers' answers.
    paired: Vec<Paired>,
    pending: Vec<SpikeMark>,
    result: TraceResult,
    cpus: CpuSet,
    stat_start: Option<StatSnapshot>,
    stat_prev: Option<(StatSnapshot, Instant)>,
    unparsed_lines: u64,
}

impl Session {
    /// Set tracing up for `spec` (which has `trace` set). Never fails:
    /// when tracing is impossible the reason is printed once on stderr and
    /// kept, and the session does nothing.
    pub(crate) fn start(root: &Root, spec: &MeasureSpec, t: &TraceSpec) -> Session {
        let cpus: CpuSet = spec.threads.iter().filter_map(|t| t.cpu).collect();
        let (buffer_kb, buffer_auto) = match t.buffer_kb {
            Some(kb) => (kb, false),
            None => (buffer_kb_for(root, spec, t.split), true),
        };
        let mut s = Session {
            spec: t.clone(),
            root: root.clone(),
            inst: None,
            spike_file: None,
            pipe: None,
            kept: VecDeque::new(),
            pairers: PairerSet::new(spec.threads.len()),
            thread_cpus: spec.threads.iter().map(|t| t.cpu).collect(),
            unsplit: vec![Default::default(); spec.threads.len()],
            paired: Vec::new(),
            parts: spec
                .threads
                .iter()
                .map(|_| (Part::new(spec), Part::new(spec)))
                .collect(),
            pending: Vec::new(),
            result: TraceResult {
                on_latency_ns: t.on_latency_ns,
                stop: t.stop,
                split: t.split,
                buffer_kb,
                buffer_auto,
                ..Default::default()
            },
            cpus: cpus.clone(),
            stat_start: None,
            stat_prev: None,
            unparsed_lines: 0,
        };
        if let Err(why) = s.open(&cpus) {
            // Once per process: `run` with stats.rotate starts a session per part.
            static SAID: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
            if !SAID.swap(true, std::sync::atomic::Ordering::Relaxed) {
                rtshield_text::errln!("rtshield: tracing off: {why}; measuring without it");
            }
            s.result.unavailable = Some(why);
            s.inst = None;
            s.spike_file = None;
            s.pipe = None;
        }
        s
    }

    fn open(&mut self, cpus: &CpuSet) -> Result<(), String> {
        if let Some(why) = tracing_unavailable(&self.root) {
            return Err(why);
        }
        if cpus.is_empty() {
            return Err("the measuring threads are not pinned to CPUs (give --cpus)".into());
        }
        let mut cfg = TraceConfig::new(cpus.clone());
        cfg.buffer_kb = self.result.buffer_kb;
        if self.spec.on_latency_ns.is_none() {
            // --split alone: only what `Pairer` reads (fewer events to
            // record, read and parse for every wake-up).
            cfg.events = SPLIT_EVENTS.iter().map(|e| e.to_string()).collect();
        }
        let inst = TraceInstance::create(&self.root, &cfg).map_err(|e| e.to_string())?;
        for s in inst.stale_removed() {
            rtshield_text::errln!(
                "rtshield: removed the stale trace instance {s} (its process is gone)"
            );
        }
        self.result.events_missing = inst.missing().to_vec();
        if self.spec.on_latency_ns.is_some() {
            let file = if self.spec.stop {
                "tracing_on"
            } else {
                "trace_marker"
            };
            self.spike_file = Some(inst.open_for_write(file).map_err(|e| e.to_string())?);
        }
        if self.spec.split {
            self.pipe = Some(inst.open_pipe().map_err(|e| e.to_string())?);
        }
        inst.start().map_err(|e| e.to_string())?;
        self.stat_start = StatSnapshot::read(&self.root).ok();
        self.stat_prev = self.stat_start.clone().map(|s| (s, Instant::now()));
        self.inst = Some(inst);
        Ok(())
    }

    /// What the measuring threads do on a spike, if anything.
    pub(crate) fn trigger(&self) -> Option<SpikeTrigger> {
        let f = self.spike_file.as_ref()?;
        Some(SpikeTrigger {
            threshold_ns: self.spec.on_latency_ns? as i64,
            fd: f.as_raw_fd(),
            stop: self.spec.stop,
        })
    }

    /// After each drain: read the pipe (`--split`), explain new spikes.
    pub(crate) fn on_drain(
        &mut self,
        marks: &[SpikeMark],
        tids: &[i32],
        times: &[Vec<SampleTime>],
    ) {
        if self.inst.is_none() {
            return;
        }
        if self.pipe.is_some() {
            self.make_pairers(tids);
            self.queue_samples(times);
            self.read_pipe();
            self.pair();
        } else if self.spec.split {
            // The pipe failed (said in `errors`): no trace for these.
            for (un, ts) in self.unsplit.iter_mut().zip(times) {
                if !ts.is_empty() {
                    *un.entry(rtshield_trace::Unsplit::NotTraced.as_str().into())
                        .or_default() += ts.len() as u64;
                }
            }
        }
        self.pending.extend_from_slice(marks);
        if !self.pending.is_empty() && !self.spec.stop {
            self.explain_pending(None);
        } else if self
            .stat_prev
            .as_ref()
            .is_some_and(|(_, at)| at.elapsed() >= STEAL_EVERY)
        {
            // Keep the steal reading recent, so a spike's steal window is
            // about STEAL_EVERY long (one small read, 10 times a second).
            if let Ok(now) = StatSnapshot::read(&self.root) {
                self.stat_prev = Some((now, Instant::now()));
            }
        }
    }

    fn make_pairers(&mut self, tids: &[i32]) {
        for (i, t) in tids.iter().enumerate() {
            if let (true, None, Some(cpu)) = (*t > 0, self.pairers.get(i), self.thread_cpus[i]) {
                self.pairers.set(i, Pairer::new(*t as u32, cpu));
            }
        }
    }

    /// The samples drained, each to its thread's pairer (a thread without
    /// one, not pinned or not started, has no split).
    fn queue_samples(&mut self, times: &[Vec<SampleTime>]) {
        for (i, ts) in times.iter().enumerate() {
            let Some(p) = self.pairers.get_mut(i) else {
                continue;
            };
            for t in ts {
                p.sample(EngineSample {
                    expected_ns: t.expected_ns.max(0) as u64,
                    latency_ns: t.latency_ns,
                });
            }
        }
    }

    /// Every sample whose trace is in: its split into the histograms, or
    /// its reason into the unsplit counts.
    fn pair(&mut self) {
        for i in 0..self.parts.len() {
            let Some(p) = self.pairers.get_mut(i) else {
                continue;
            };
            self.paired.clear();
            p.resolved(&mut self.paired);
            for (_, got) in &self.paired {
                match got {
                    Ok(x) => {
                        let (irq, thread) = &mut self.parts[i];
                        irq.add(x.irq_latency_ns);
                        thread.add(x.thread_latency_ns.min(i64::MAX as u64) as i64);
                    }
                    Err(why) => *self.unsplit[i].entry(why.as_str().into()).or_default() += 1,
                }
            }
        }
    }

    /// Read what waits in `trace_pipe` (one chunk); returns its length.
    fn read_pipe(&mut self) -> usize {
        let Some(pipe) = self.pipe.as_mut() else {
            return 0;
        };
        let text = match pipe.read_lines(PIPE_CHUNK) {
            Ok(t) => t,
            Err(e) => {
                self.result
                    .errors
                    .push(format!("trace_pipe: {e}; no more split figures"));
                self.pipe = None;
                return 0;
            }
        };
        for line in text.lines() {
            let l = line.trim();
            if let Some((cpu, n)) = rtshield_trace::lost_marker(l) {
                // Never silent: counted, and the pairers of that CPU leave
                // the wake-ups around it unsplit.
                match n {
                    Some(n) => *self.result.lost_events.get_or_insert(0) += n,
                    None => self.result.lost_notes_uncounted += 1,
                }
                self.pairers.lost(cpu);
                continue;
            }
            if l.is_empty() || l.starts_with('#') || l.starts_with("CPU:") {
                continue;
            }
            let Ok(r) = rtshield_trace::parse_line(line) else {
                self.unparsed_lines += 1;
                continue;
            };
            self.pairers.feed(&r);
            // Kept only to explain spikes.
            if self.spec.on_latency_ns.is_some() {
                self.kept.push_back(r);
            }
        }
        if let Some(newest) = self.kept.back().map(|r| r.ts_ns) {
            while self
                .kept
                .front()
                .is_some_and(|r| r.ts_ns + KEEP_NS < newest)
            {
                self.kept.pop_front();
            }
        }
        text.len()
    }

    /// Explain the pending spikes from `text` (the buffer read at the end)
    /// or, when None, from the kept records (`--split`) or a fresh read of
    /// the buffer.
    fn explain_pending(&mut self, text: Option<&str>) {
        let t0 = Instant::now();
        let pending = std::mem::take(&mut self.pending);
        let room = MAX_SPIKES.saturating_sub(self.result.spikes.len() + self.result.errors.len());
        let (now, later) = pending.split_at(room.min(pending.len()));
        self.result.spikes_not_analysed += later.len() as u64;
        if now.is_empty() {
            return;
        }
        // Parse the buffer from a little before the earliest window only.
        let from = now
            .iter()
            .map(|m| m.expected_ns.max(0) as u64)
            .min()
            .unwrap_or(0)
            .saturating_sub(REPLAY_MARGIN_NS);
        let parsed;
        let records: &[Record] = if let Some(t) = text {
            parsed = rtshield_trace::parse_from(t, from);
            &parsed
        } else if self.pipe.is_some() {
            self.kept.make_contiguous();
            self.kept.as_slices().0
        } else {
            match self.inst.as_ref().map(TraceInstance::read) {
                Some(Ok(t)) => {
                    parsed = rtshield_trace::parse_from(&t, from);
                    &parsed
                }
                Some(Err(e)) => {
                    for m in now {
                        self.result
                            .errors
                            .push(format!("{}: cannot read the trace: {e}", describe(m)));
                    }
                    return;
                }
                None => return,
            }
        };
        // Steal time since the previous reading, for every spike of this batch.
        let stat_now = StatSnapshot::read(&self.root).ok();
        let mut explained = Vec::new();
        let mut errors = Vec::new();
        for m in now {
            if m.cpu < 0 || m.tid <= 0 || m.expected_ns < 0 {
                errors.push(format!("{}: thread not pinned", describe(m)));
                continue;
            }
            // The thread was running at its clock reading (expected +
            // latency): the end of the window when the trace stops there.
            let running = (m.expected_ns + m.latency_ns.max(0)) as u64;
            match rtshield_trace::analyse_until(
                records,
                m.cpu as u32,
                m.tid as u32,
                m.expected_ns as u64,
                Some(running),
            ) {
                Ok(mut sp) => {
                    sp.set_policies(&live_rt(&self.root, &sp.rt_thread_pids()));
                    if let (Some((prev, at)), Some(cur)) = (&self.stat_prev, &stat_now) {
                        if let Some(st) = steal_ns_between(prev, cur, [m.cpu as u32]) {
                            sp.set_steal(st, at.elapsed().as_nanos() as u64);
                        }
                    }
                    explained.push(sp);
                }
                Err(e) => errors.push(format!("{}: {e}", describe(m))),
            }
        }
        if let Some(cur) = stat_now {
            self.stat_prev = Some((cur, Instant::now()));
        }
        self.result.spikes.extend(explained);
        self.result.errors.extend(errors);
        let ms = t0.elapsed().as_secs_f64() * 1e3 / now.len() as f64;
        let max = self.result.analysis_max_ms.get_or_insert(0.0);
        *max = max.max(ms);
    }

    /// After the run: last reads and analyses, split figures into the
    /// threads, the result into `m.trace`; the instance is removed.
    pub(crate) fn finish(mut self, m: &mut Measurement) {
        let tids: Vec<i32> = m.threads.iter().map(|t| t.tid).collect();
        if self.inst.is_some() {
            if let Some(i) = &self.inst {
                let _ = i.stop();
            }
            if self.pipe.is_some() {
                self.make_pairers(&tids);
                // To its end (bounded: tracing is stopped).
                for _ in 0..64 {
                    if self.read_pipe() == 0 {
                        break;
                    }
                }
            }
            // Tracing is stopped and the pipe read: what is not matched
            // now never will be.
            self.pairers.finish();
            self.pair();
            if self.spec.stop && self.pipe.is_none() {
                match self.inst.as_ref().map(TraceInstance::read) {
                    Some(Ok(text)) => {
                        self.explain_pending(Some(&text));
                        self.result.raw = Some(text);
                    }
                    Some(Err(e)) => self
                        .result
                        .errors
                        .push(format!("cannot read the trace: {e}")),
                    None => {}
                }
            } else if !self.pending.is_empty() {
                self.explain_pending(None);
            }
            if let (Some(a), Ok(b)) = (&self.stat_start, StatSnapshot::read(&self.root)) {
                self.result.steal_ns = steal_ns_between(a, &b, self.cpus.iter());
            }
            self.read_drops(&mut m.warnings);
        }
        self.result.spikes_seen = m.threads.iter().map(|t| t.exact.spikes).sum();
        if self.spec.stop {
            // Only the first spike is the trace's; later ones are none.
            self.result.spikes_seen = self.result.spikes_seen.min(1);
        }
        let accounted = (self.result.spikes.len() + self.result.errors.len()) as u64
            + self.result.spikes_not_analysed;
        self.result.spikes_not_analysed += self.result.spikes_seen.saturating_sub(accounted);
        if self.unparsed_lines > 0 {
            self.result.errors.push(format!(
                "{} trace_pipe lines were not events (skipped)",
                self.unparsed_lines
            ));
        }
        if self.spec.split && self.inst.is_some() {
            self.result.lost_events.get_or_insert(0);
            for ((t, (irq, thr)), un) in m.threads.iter_mut().zip(&self.parts).zip(&self.unsplit) {
                t.split = Some(SplitResult {
                    samples: irq.exact.count,
                    unsplit: Some(un.clone()),
                    irq: irq.result(),
                    thread: thr.result(),
                });
            }
        }
        // Remove the instance now (and unmount tracefs if we mounted it).
        self.spike_file = None;
        self.pipe = None;
        if let Some(i) = self.inst.take() {
            if let Err(e) = i.close() {
                self.result.errors.push(e.to_string());
            }
        }
        m.trace = Some(std::mem::take(&mut self.result));
    }
}

impl Session {
    /// The events the buffers of the measured CPUs overwrote or refused
    /// (their `stats` files, tracing stopped), into the result; a warning
    /// when any.
    fn read_drops(&mut self, warnings: &mut Vec<String>) {
        let Some(inst) = &self.inst else { return };
        let d = inst.drops(&self.cpus);
        self.result.overrun_events = d.overrun;
        self.result.dropped_events = d.dropped;
        let n = d.overrun.unwrap_or(0) + d.dropped.unwrap_or(0);
        if n == 0 {
            return;
        }
        let kb = self.result.buffer_kb;
        warnings.push(if self.spec.split {
            format!(
                "the trace buffer lost {n} events ({kb} KiB per CPU; the reader fell behind): \
                 the wake-ups around them are not split (threads[].split.unsplit); \
                 a larger --trace-buffer-kb or fewer CPUs per run loses fewer"
            )
        } else {
            format!(
                "the trace buffer overwrote {n} events ({kb} KiB per CPU, overwrite mode keeps \
                 the newest): a spike whose events were overwritten before it was read is not \
                 explained (trace.errors)"
            )
        });
    }
}

/// How long the buffer rtshield sizes itself holds of the measuring
/// threads' own events with `--split`: the reader drains `trace_pipe`
/// every 20 ms, so this leaves it 50 drains of delay (a long spike
/// analysis, a stall) before events are overwritten unread. The size costs
/// nothing per read there (a consuming read takes only what is new).
const HOLD_SPLIT_NS: u64 = 1_000_000_000;
/// The same without `--split` (`--trace-on` alone): a spike is read at the
/// next drain, at most 20 ms later, and parsed from 50 ms before it, so
/// 250 ms holds its window 3 times over; every explained spike reads the
/// whole buffer, so a larger one costs CPU per spike (docs/trace.md).
const HOLD_SPIKES_NS: u64 = 250_000_000;
/// What one wake-up of a measuring thread writes into the ring buffer:
/// about 6 events (arm, switch out, expiry, waking, wakeup, switch in) of
/// 24-64 bytes with their headers (docs/scale.md, "Tracing").
const BYTES_PER_WAKEUP: u64 = 256;
/// The whole instance (its buffer on every CPU) takes at most this share
/// of RAM: 1/32.
const RAM_SHARE_DIV: u64 = 32;
/// The cap per CPU when RAM is unknown (`/proc/meminfo` unreadable), KiB.
const UNKNOWN_RAM_CAP_KB: u64 = 8192;

/// The per-CPU buffer, KiB, when none is given: room for `wakeups`
/// wake-ups of one CPU at [`BYTES_PER_WAKEUP`] each, at least
/// [`TRACE_BUFFER_KB_AUTO_MIN`](rtshield_limits::TRACE_BUFFER_KB_AUTO_MIN);
/// capped so that the buffers of all `cpus` CPUs (the instance's size is
/// per CPU, every online CPU gets one) take at most 1/32 of `mem_total_kb`
/// (8 MiB per CPU when unknown), and within the accepted range.
pub(crate) fn auto_buffer_kb(wakeups: f64, cpus: u32, mem_total_kb: Option<u64>) -> u32 {
    let range = rtshield_limits::TRACE_BUFFER_KB;
    let bytes = wakeups.max(0.0) * BYTES_PER_WAKEUP as f64;
    // Whole 4 KiB pages.
    let want = ((bytes / 1024.0).ceil() as u64).div_ceil(4) * 4;
    let want = want.max(rtshield_limits::TRACE_BUFFER_KB_AUTO_MIN as u64);
    let cap = mem_total_kb.map_or(UNKNOWN_RAM_CAP_KB, |m| {
        m / RAM_SHARE_DIV / u64::from(cpus.max(1))
    });
    want.min(cap).clamp(range.min as u64, range.max as u64) as u32
}

/// [`auto_buffer_kb`] for `spec` on this machine (online CPUs, RAM): the
/// wake-ups of the busiest measured CPU (its threads' 1/period summed)
/// over [`HOLD_SPLIT_NS`] with `split`, else [`HOLD_SPIKES_NS`].
fn buffer_kb_for(root: &Root, spec: &MeasureSpec, split: bool) -> u32 {
    let mut per_cpu = std::collections::BTreeMap::<u32, f64>::new();
    for t in &spec.threads {
        *per_cpu.entry(t.cpu.unwrap_or(u32::MAX)).or_default() += 1e9 / t.period_ns.max(1) as f64;
    }
    let busiest = per_cpu.values().copied().fold(0.0, f64::max);
    let hold_ns = if split { HOLD_SPLIT_NS } else { HOLD_SPIKES_NS };
    let cpus = rtshield_sys::online_cpus(root).map_or(1, |c| c.len() as u32);
    auto_buffer_kb(
        busiest * hold_ns as f64 / 1e9,
        cpus,
        rtshield_sys::mem_total_kb(root),
    )
}

fn describe(m: &SpikeMark) -> String {
    format!(
        "thread {} (tid {}) on CPU {}, expected at {} ns, {} ns late",
        m.thread, m.tid, m.cpu, m.expected_ns, m.latency_ns
    )
}

/// The caller's observer, with the session fed after every drain.
struct Traced<'a> {
    inner: &'a mut dyn Observer,
    session: &'a mut Session,
}

impl Observer for Traced<'_> {
    fn interval(&mut self, s: &IntervalStats) -> bool {
        self.inner.interval(s)
    }
    fn wants_snapshot(&mut self, s: &IntervalStats) -> bool {
        self.inner.wants_snapshot(s)
    }
    fn snapshot(&mut self, m: &Measurement) {
        self.inner.snapshot(m)
    }
    fn drained(&mut self, marks: &[SpikeMark], tids: &[i32], times: &[Vec<SampleTime>]) {
        self.inner.drained(marks, tids, times);
        self.session.on_drain(marks, tids, times);
    }
}

/// Run the engine with tracing as `t` asks; the instance is gone when this
/// returns (normal end, SIGINT/SIGTERM, error or panic: the session's
/// instance is removed on drop).
pub(crate) fn measure_traced(
    root: &Root,
    spec: &MeasureSpec,
    t: &TraceSpec,
    stop: &AtomicBool,
    obs: &mut dyn Observer,
) -> anyhow::Result<Measurement> {
    let mut session = Session::start(root, spec, t);
    let trigger = session.trigger();
    let m = {
        let mut traced = Traced {
            inner: obs,
            session: &mut session,
        };
        rtshield_measure::run_traced(root, spec, stop, &mut traced, trigger)
    };
    let mut m = m?;
    session.finish(&mut m);
    Ok(m)
}

/// FIFO or RR, name and priority of the real-time threads a spike names,
/// read now (the trace's prio does not tell FIFO from RR); threads gone
/// since, or not real-time any more, are left out.
fn live_rt(root: &Root, pids: &[u32]) -> std::collections::BTreeMap<u32, rtshield_trace::LiveRt> {
    use rtshield_sys::{task_comm, task_stat};
    use rtshield_trace::{LiveRt, RtPolicy};
    pids.iter()
        .filter_map(|&pid| {
            let st = task_stat(root, pid)?;
            let policy = match st.policy? {
                rtshield_vocab::Policy::Fifo => RtPolicy::Fifo,
                rtshield_vocab::Policy::Rr => RtPolicy::Rr,
                _ => return None,
            };
            Some((
                pid,
                LiveRt {
                    comm: task_comm(root, pid)?,
                    policy,
                    priority: st.rt_priority?,
                },
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtshield_trace::{LiveRt, RtPolicy};

    /// A fake tree with thread `pid` named `comm` at `policy`/`rt_prio`
    /// (`/proc/PID/stat` fields 40 and 41).
    fn task(dir: &std::path::Path, pid: u32, comm: &str, rt_prio: u32, policy: u32) {
        let d = dir.join("proc").join(pid.to_string());
        std::fs::create_dir_all(&d).unwrap();
        let mut f = vec!["S".to_string(), "2".into()];
        f.extend(std::iter::repeat_n("0".to_string(), 34));
        f.extend([1, rt_prio, policy, 0].map(|v| v.to_string()));
        std::fs::write(d.join("stat"), format!("{pid} ({comm}) {}\n", f.join(" "))).unwrap();
        std::fs::write(d.join("comm"), format!("{comm}\n")).unwrap();
    }

    /// The rule of docs/trace.md: the wake-ups to hold at 256 B, at
    /// least 256 KiB, the instance at most 1/32 of RAM.
    #[test]
    fn the_buffer_holds_its_wake_ups_bounded_by_ram_per_cpu() {
        let gib = 1 << 20;
        // 1 s at 1 ms: 250 KiB needed, the floor.
        assert_eq!(auto_buffer_kb(1_000.0, 2, Some(16 * gib)), 256);
        // 1 s at 100 us: 10 000 wake-ups × 256 B = 2500 KiB.
        assert_eq!(auto_buffer_kb(10_000.0, 2, Some(16 * gib)), 2500);
        // 1 s at 50 us, or two threads at 100 us on one CPU: twice that.
        assert_eq!(auto_buffer_kb(20_000.0, 2, Some(16 * gib)), 5000);
        // 1 s at 10 us: 25 000 KiB per CPU.
        assert_eq!(auto_buffer_kb(100_000.0, 2, Some(16 * gib)), 25_000);
        // 128 CPUs with 8 GiB: at most 8 GiB / 32 / 128 = 2048 KiB each.
        assert_eq!(auto_buffer_kb(10_000.0, 128, Some(8 * gib)), 2048);
        assert_eq!(auto_buffer_kb(1_000.0, 128, Some(8 * gib)), 256);
        // RAM unknown: 8 MiB per CPU at most.
        assert_eq!(auto_buffer_kb(100_000.0, 2, None), 8192);
        // Never outside the accepted range, never 0.
        assert_eq!(auto_buffer_kb(1e12, 1, Some(u64::MAX / 2)), 1_048_576);
        assert_eq!(auto_buffer_kb(10_000.0, 4096, Some(1024)), 1);
        assert_eq!(auto_buffer_kb(0.0, 0, Some(16 * gib)), 256);
    }

    #[test]
    fn the_busiest_cpu_and_the_machine_size_the_buffer() {
        let d = tempfile::tempdir().unwrap();
        let sys = d.path().join("sys/devices/system/cpu");
        std::fs::create_dir_all(&sys).unwrap();
        std::fs::write(sys.join("online"), "0-3\n").unwrap();
        std::fs::create_dir_all(d.path().join("proc")).unwrap();
        std::fs::write(
            d.path().join("proc/meminfo"),
            "MemTotal:        1048576 kB\nMemFree:  1 kB\n",
        )
        .unwrap();
        let root = Root::new(d.path());
        // Threads at 100 us on CPU 1 and 200 us on CPUs 1 and 2: CPU 1
        // wakes 15 000 times a second.
        let mut spec = MeasureSpec::new(&[1, 1, 2], 100_000);
        spec.threads[1].period_ns = 200_000;
        spec.threads[2].period_ns = 200_000;
        // --split: 1 s, 15 000 × 256 B = 3750 KiB; 1 GiB / 32 / 4 CPUs
        // = 8192 KiB at most.
        assert_eq!(buffer_kb_for(&root, &spec, true), 3752);
        // Spikes only: 250 ms, 3750 wake-ups = 937.5 KiB.
        assert_eq!(buffer_kb_for(&root, &spec, false), 940);
        std::fs::write(d.path().join("proc/meminfo"), "MemTotal: 262144 kB\n").unwrap();
        assert_eq!(buffer_kb_for(&root, &spec, true), 2048);
    }

    #[test]
    fn live_rt_reads_fifo_and_rr_threads_only() {
        let d = tempfile::tempdir().unwrap();
        task(d.path(), 7, "busy", 99, 1);
        task(d.path(), 8, "rr-one", 10, 2);
        task(d.path(), 9, "other", 0, 0);
        let got = live_rt(&Root::new(d.path()), &[7, 8, 9, 10]);
        let want = std::collections::BTreeMap::from([
            (
                7,
                LiveRt {
                    comm: "busy".into(),
                    policy: RtPolicy::Fifo,
                    priority: 99,
                },
            ),
            (
                8,
                LiveRt {
                    comm: "rr-one".into(),
                    policy: RtPolicy::Rr,
                    priority: 10,
                },
            ),
        ]);
        assert_eq!(got, want);
    }
}
