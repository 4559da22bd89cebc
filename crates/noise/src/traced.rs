//! The tracing session of a noise run: a private tracefs instance on the
//! measured CPUs with only the events the attribution reads, its
//! `trace_pipe` read (consumed) by the main thread after every drain, one
//! [`Timeline`] per CPU fed from it, and each noise event explained once
//! the trace has passed its end. Memory stays bounded: contexts no future
//! gap can need are forgotten.

use crate::result::TopK;
use rtshield_sys::Root;
use rtshield_sys::{tracing_unavailable, TraceConfig, TraceInstance, TracePipe};
use rtshield_trace::{noise_text_line, NoiseTextLine};
use rtshield_trace::{Explained, NoiseEvent, NoiseOptions, NoiseTally, NoiseTimeline};
use rtshield_vocab::CpuSet;
use std::collections::VecDeque;

/// The events the attribution reads (`system:event`; `*` as in
/// `rtshield_sys`'s default trace events): hard IRQs, x86 vectors and arm IPIs, softirqs, NMIs,
/// the hrtimers run in interrupts (the tick), and context switches.
pub(crate) const NOISE_EVENTS: &[&str] = &[
    "irq:irq_handler_entry",
    "irq:irq_handler_exit",
    "irq:softirq_entry",
    "irq:softirq_exit",
    "irq_vectors:*_entry",
    "irq_vectors:*_exit",
    "ipi:ipi_entry",
    "ipi:ipi_exit",
    "nmi:nmi_handler",
    "timer:hrtimer_expire_entry",
    "sched:sched_switch",
];

/// Bytes read from `trace_pipe` per read; a read that returns less has
/// emptied the pipe.
const READ_BYTES: usize = 4 << 20;
/// At most this much is read per pump (the main thread must get back to
/// the rings).
const PUMP_BYTES: usize = 64 << 20;
/// Longest gaps kept with their causes, per CPU.
pub(crate) const LONGEST: usize = 20;

/// What the session found, per CPU in the order of the run's CPUs.
#[derive(Debug)]
pub(crate) struct Outcome {
    pub enabled: Vec<String>,
    pub missing: Vec<String>,
    pub stale_removed: Vec<String>,
    pub found: Found,
    /// The instance could not be removed (said as a warning).
    pub close_error: Option<String>,
}

/// What the attribution found, per CPU in the order of the run's CPUs.
#[derive(Debug)]
pub(crate) struct Found {
    pub tallies: Vec<NoiseTally>,
    pub longest: Vec<Vec<Explained>>,
    /// Events the kernel said it dropped (`[LOST n EVENTS]`), summed.
    pub lost_events: u64,
    /// Loss notes without a count (`[LOST EVENTS]`): `lost_events` is
    /// then a lower bound.
    pub lost_notes_uncounted: u64,
    pub bad_lines: u64,
    /// Noise events still waiting for the trace when it ended (none on a
    /// normal end).
    pub unexplained_pending: u64,
}

/// The attribution itself, apart from the instance it reads: trace text
/// in (as `trace_pipe` gives it), each noise event explained once the
/// trace has passed its end. Tests feed it recorded text.
#[derive(Debug)]
pub(crate) struct Attribution {
    cpus: Vec<u32>,
    timelines: Vec<Option<NoiseTimeline>>,
    pending: Vec<VecDeque<NoiseEvent>>,
    tallies: Vec<NoiseTally>,
    longest: Vec<TopK<Explained>>,
    lost_events: u64,
    lost_notes_uncounted: u64,
    bad_lines: u64,
}

impl Attribution {
    /// For the CPUs `cpus` (the run's order); no spinner known yet.
    pub(crate) fn new(cpus: &[u32]) -> Attribution {
        let n = cpus.len();
        Attribution {
            cpus: cpus.to_vec(),
            timelines: (0..n).map(|_| None).collect(),
            pending: (0..n).map(|_| VecDeque::new()).collect(),
            tallies: vec![NoiseTally::default(); n],
            longest: (0..n).map(|_| TopK::new(LONGEST)).collect(),
            lost_events: 0,
            lost_notes_uncounted: 0,
            bad_lines: 0,
        }
    }

    /// The spinning threads' TIDs, by CPU index (0: not started).
    pub(crate) fn spinners(&mut self, tids: &[i32]) {
        for (i, &tid) in tids.iter().enumerate() {
            if tid > 0 {
                self.timelines[i] = Some(NoiseTimeline::new(
                    self.cpus[i],
                    tid as u32,
                    NoiseOptions::default(),
                ));
            }
        }
    }

    /// A noise event of CPU index `i`, to explain once the trace passed it.
    pub(crate) fn push(&mut self, i: usize, ev: NoiseEvent) {
        self.pending[i].push_back(ev);
    }

    /// Feed trace text (whole lines); the last record's timestamp (0 for
    /// none). A loss note goes to its CPU's timeline: the gaps over the
    /// stretch it leaves unknown are of class lost, never hardware.
    pub(crate) fn feed_text(&mut self, text: &str) -> u64 {
        let mut last_ts = 0;
        for line in text.lines() {
            match noise_text_line(line) {
                NoiseTextLine::Record(r) => {
                    last_ts = r.ts_ns;
                    for tl in self.timelines.iter_mut().flatten() {
                        tl.feed(&r);
                    }
                }
                NoiseTextLine::Lost { cpu, count } => {
                    match count {
                        Some(n) => self.lost_events += n,
                        None => self.lost_notes_uncounted += 1,
                    }
                    for tl in self.timelines.iter_mut().flatten() {
                        if tl.cpu() == cpu {
                            tl.lost();
                        }
                    }
                }
                NoiseTextLine::Skip => {}
                NoiseTextLine::Bad => self.bad_lines += 1,
            }
        }
        last_ts
    }

    /// Explain the events that end by `horizon`. `last_read[i]` is the
    /// latest clock read CPU `i`'s thread published: no gap still to come
    /// starts before it.
    pub(crate) fn explain_until(&mut self, horizon: u64, last_read: &[u64]) {
        for i in 0..self.cpus.len() {
            let Some(tl) = self.timelines[i].as_mut() else {
                continue;
            };
            while let Some(ev) = self.pending[i].front().copied() {
                if ev.end_ns() > horizon {
                    break;
                }
                self.pending[i].pop_front();
                let x = tl.explain(&ev);
                self.tallies[i].add(&x);
                self.longest[i].offer(x.event.len_ns, x);
            }
            // No gap to come starts before the oldest waiting one, nor
            // before the thread's latest published read.
            let keep_from = self.pending[i]
                .front()
                .map_or(u64::MAX, |e| e.start_ns)
                .min(last_read.get(i).copied().unwrap_or(0));
            tl.forget_before(keep_from);
        }
    }

    /// The trace ended: explain every event left.
    pub(crate) fn finish(mut self) -> Found {
        self.explain_until(u64::MAX, &vec![u64::MAX; self.cpus.len()]);
        Found {
            unexplained_pending: self.pending.iter().map(|p| p.len() as u64).sum(),
            tallies: self.tallies,
            longest: self.longest.into_iter().map(TopK::into_sorted).collect(),
            lost_events: self.lost_events,
            lost_notes_uncounted: self.lost_notes_uncounted,
            bad_lines: self.bad_lines,
        }
    }
}

pub(crate) struct Session {
    inst: TraceInstance,
    pipe: TracePipe,
    att: Attribution,
}

impl Session {
    /// Create the instance on `cpus` and start tracing; the error is one
    /// sentence saying why tracing cannot run (the run goes on without).
    pub(crate) fn start(root: &Root, cpus: &CpuSet, buffer_kb: u32) -> Result<Session, String> {
        if let Some(why) = tracing_unavailable(root) {
            return Err(why);
        }
        let mut cfg = TraceConfig::new(cpus.clone());
        cfg.buffer_kb = buffer_kb;
        cfg.events = NOISE_EVENTS.iter().map(|s| s.to_string()).collect();
        let inst = TraceInstance::create(root, &cfg).map_err(|e| e.to_string())?;
        let pipe = inst.open_pipe().map_err(|e| e.to_string())?;
        inst.start().map_err(|e| e.to_string())?;
        let cpus: Vec<u32> = cpus.iter().collect();
        Ok(Session {
            inst,
            pipe,
            att: Attribution::new(&cpus),
        })
    }

    /// The spinning threads' TIDs, by CPU index (0: not started).
    pub(crate) fn spinners(&mut self, tids: &[i32]) {
        self.att.spinners(tids);
    }

    /// A noise event of CPU index `i`, to explain once the trace passed it.
    pub(crate) fn push(&mut self, i: usize, ev: NoiseEvent) {
        self.att.push(i, ev);
    }

    /// Read what the pipe holds, feed it, and explain the events that end
    /// before `horizon_ns` (when the pipe was emptied; else up to the last
    /// record read). `last_read[i]` is the latest clock read CPU `i`'s
    /// thread published: no gap still to come starts before it.
    pub(crate) fn pump(&mut self, horizon_ns: u64, last_read: &[u64]) {
        let (drained, last_ts) = self.read_pipe();
        let horizon = if drained {
            horizon_ns
        } else {
            last_ts.min(horizon_ns)
        };
        self.att.explain_until(horizon, last_read);
    }

    /// Read the pipe (at most [`PUMP_BYTES`]); (emptied, last timestamp).
    fn read_pipe(&mut self) -> (bool, u64) {
        let mut total = 0;
        let mut last_ts = 0;
        loop {
            let text = match self.pipe.read_lines(READ_BYTES) {
                Ok(t) => t,
                Err(_) => return (true, last_ts),
            };
            total += text.len();
            last_ts = last_ts.max(self.att.feed_text(&text));
            if text.len() < READ_BYTES {
                return (true, last_ts);
            }
            if total >= PUMP_BYTES {
                return (false, last_ts);
            }
        }
    }

    /// Stop tracing, read the rest, explain every event left, remove the
    /// instance.
    pub(crate) fn finish(mut self) -> Outcome {
        let _ = self.inst.stop();
        // The pipe of a stopped instance still holds the tail; read until
        // empty (bounded: nothing new is recorded).
        for _ in 0..64 {
            let (drained, _) = self.read_pipe();
            if drained {
                break;
            }
        }
        let Session { inst, pipe, att } = self;
        let found = att.finish();
        let enabled = inst.enabled().to_vec();
        let missing = inst.missing().to_vec();
        let stale_removed = inst.stale_removed().to_vec();
        drop(pipe);
        let close_error = inst.close().err().map(|e| e.to_string());
        Outcome {
            enabled,
            missing,
            stale_removed,
            found,
            close_error,
        }
    }
}
