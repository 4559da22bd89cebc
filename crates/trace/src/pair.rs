//! `--split` for the engine's own samples: each sample is matched, one to
//! one, with the trace events of *its* wake-up (same thread, same CPU,
//! same requested expiry), or its split is unknown. Nothing is paired by
//! nearness: a wake-up whose events are not all in the trace, or whose
//! stretch of the buffer lost events, is not split.

use crate::analyse::{signed_diff, Split, TS_SLACK_NS};
use crate::parse::{parse_line, Event, Record};
use std::collections::{BTreeMap, VecDeque};

/// One sample of the measuring engine, as the measuring loop saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EngineSample {
    /// The absolute expected wake-up: the deadline the thread slept until
    /// (CLOCK_MONOTONIC ns, the trace's `mono` clock).
    pub expected_ns: u64,
    /// Its measured latency (clock reading − expected), ns; `None` when the
    /// sample is not a latency (interval mode).
    pub latency_ns: Option<i64>,
}

impl EngineSample {
    /// The thread's own clock reading, when known: it was running then.
    fn running_ns(&self) -> Option<u64> {
        let l = self.latency_ns?;
        Some(self.expected_ns.saturating_add_signed(l.max(0)))
    }
}

/// Why a sample's split is unknown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Unsplit {
    /// The buffer lost events (`CPU:N [LOST …]`) on the thread's CPU within
    /// the wake-up's stretch of the trace.
    Lost,
    /// The trace holds no complete wake-up for this expected time (before
    /// the trace started or after it stopped, or an event not recorded).
    NotTraced,
    /// The thread armed its sleep after the expected time or was woken
    /// while still running (its previous wake-up overran): it did not sleep
    /// until this wake-up, there is nothing to split.
    Overrun,
    /// The wake-up's events contradict the sample (a wake-up after the
    /// thread's own clock reading): they are not this sample's.
    Inconsistent,
}

impl Unsplit {
    /// The name used in result files.
    pub fn as_str(self) -> &'static str {
        match self {
            Unsplit::Lost => "lost_events",
            Unsplit::NotTraced => "not_traced",
            Unsplit::Overrun => "overrun",
            Unsplit::Inconsistent => "inconsistent",
        }
    }
}

/// A `CPU:N [LOST k EVENTS]` (or `CPU:N [LOST EVENTS]`, count unknown)
/// line of a tracefs buffer: the CPU and the count, when given.
pub fn lost_marker(line: &str) -> Option<(u32, Option<u64>)> {
    let rest = line.trim().strip_prefix("CPU:")?;
    let (cpu, rest) = rest.split_once(' ')?;
    let cpu = cpu.parse().ok()?;
    let rest = rest.trim().strip_prefix("[LOST")?;
    let n = rest.split_whitespace().next()?;
    Some((cpu, n.parse().ok()))
}

/// What the trace shows of one sleep of the thread: from its
/// `hrtimer_start` to the next one.
#[derive(Debug, Clone)]
struct Wake {
    /// The requested expiry (`softexpires=`, else `expires=`).
    expected: u64,
    armed_at: u64,
    timer: String,
    /// The timer's expiry (`hrtimer_expire_entry now=`).
    expiry: Option<u64>,
    /// The thread's first wake-up after the arming, and whether it was
    /// recorded in another task's context (it had slept).
    waking: Option<(u64, bool)>,
    /// Switches to the thread on its CPU after the wake-up.
    switch_ins: Vec<u64>,
    /// The thread's first own line after a wake-up in another context
    /// (the switch out of idle is not traced on some kernels).
    first_own: Option<u64>,
    /// Its last event, for the loss check.
    last_ts: u64,
}

/// At most this many switch-ins are kept per wake-up (a thread preempted
/// more often between two sleeps is not split: `Inconsistent`).
const MAX_SWITCH_INS: usize = 64;
/// Wake-ups kept waiting for their sample at most (10 s at 10 kHz).
const MAX_WAKES: usize = 100_000;
/// Samples kept waiting for their trace at most (the trace is read every
/// 20 ms; this is far behind).
const MAX_PENDING: usize = 1 << 20;

/// Pairs the samples of one measuring thread (`tid`, pinned to `cpu`)
/// with their trace events. Feed it the trace in order ([`feed`],
/// [`lost`]) and the samples in order ([`sample`]), in any interleaving;
/// [`resolved`] gives each sample its split, or why it has none, once the
/// trace is past the sample (or [`finish`]ed).
///
/// The rule, per sample expected at `E` and read at `R` (= `E` + its
/// latency): the thread's `hrtimer_start` (`hrtimer_wakeup`) whose
/// requested expiry is exactly `E`, on `cpu`; that timer's expiry; the
/// thread's wake-up after it; the last switch to the thread on `cpu` at
/// or before `R` (or `R` itself when it was woken from idle, whose switch
/// is not traced). IRQ latency = expiry − `E`; thread latency =
/// switch-in − wake-up. Every event must lie within `[E, R]` (1 µs of
/// timestamp rounding allowed), so both parts are at most the sample's
/// latency.
///
/// [`feed`]: Pairer::feed
/// [`lost`]: Pairer::lost
/// [`sample`]: Pairer::sample
/// [`resolved`]: Pairer::resolved
/// [`finish`]: Pairer::finish
#[derive(Debug, Clone)]
pub struct Pairer {
    tid: u32,
    cpu: u32,
    /// Completed sleeps, by requested expiry.
    done: BTreeMap<u64, Wake>,
    current: Option<Wake>,
    /// The newest timestamp seen on `cpu`.
    seen_ns: u64,
    /// Stretches of `cpu`'s trace with lost events: (last event before,
    /// first event after; `u64::MAX` until it comes). The lost events lie
    /// strictly between the two.
    losses: VecDeque<(u64, u64)>,
    pending: VecDeque<EngineSample>,
    /// The previous sample's expected time (the stretch a missing wake-up
    /// could have been in starts there).
    prev_expected: u64,
    finished: bool,
}

/// A sample and its split, or why it has none.
pub type Paired = (EngineSample, Result<Split, Unsplit>);

impl Pairer {
    /// A pairer for thread `tid` on `cpu`, with nothing seen yet.
    pub fn new(tid: u32, cpu: u32) -> Pairer {
        Pairer {
            tid,
            cpu,
            done: BTreeMap::new(),
            current: None,
            seen_ns: 0,
            losses: VecDeque::new(),
            pending: VecDeque::new(),
            prev_expected: 0,
            finished: false,
        }
    }

    /// The thread this pairer follows.
    pub fn tid(&self) -> u32 {
        self.tid
    }

    /// The CPU the thread is pinned to (only that CPU's events matter).
    pub fn cpu(&self) -> u32 {
        self.cpu
    }

    /// Samples waiting for their trace.
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// The buffer says events of `cpu` were lost here (in stream order).
    pub fn lost(&mut self, cpu: u32) {
        if cpu == self.cpu {
            self.losses.push_back((self.seen_ns, u64::MAX));
        }
    }

    /// Feed one line of trace text: an event or a loss marker (other
    /// lines are ignored). Returns false for a line that is neither.
    pub fn feed_line(&mut self, line: &str) -> bool {
        if let Some((cpu, _)) = lost_marker(line) {
            self.lost(cpu);
            return true;
        }
        match parse_line(line) {
            Ok(r) => {
                self.feed(&r);
                true
            }
            Err(_) => false,
        }
    }

    /// Feed the next record (trace order).
    pub fn feed(&mut self, r: &Record) {
        if r.cpu != self.cpu {
            return;
        }
        self.seen_ns = self.seen_ns.max(r.ts_ns);
        if let Some(l) = self.losses.back_mut() {
            if l.1 == u64::MAX {
                l.1 = r.ts_ns;
            }
        }
        let tid = self.tid;
        match &r.event {
            Event::HrtimerStart {
                hrtimer,
                function,
                expires_ns,
                softexpires_ns,
            } if r.pid == tid && function == "hrtimer_wakeup" => {
                let Some(exp) = softexpires_ns.or(*expires_ns) else {
                    return;
                };
                if let Some(c) = self.current.as_mut().filter(|c| c.expected == exp) {
                    // The same sleep re-armed (restarted after a signal).
                    c.timer = hrtimer.clone();
                    c.last_ts = r.ts_ns;
                    return;
                }
                self.close_current();
                self.current = Some(Wake {
                    expected: exp,
                    armed_at: r.ts_ns,
                    timer: hrtimer.clone(),
                    expiry: None,
                    waking: None,
                    switch_ins: Vec::new(),
                    first_own: None,
                    last_ts: r.ts_ns,
                });
                return;
            }
            _ => {}
        }
        let Some(w) = self.current.as_mut() else {
            return;
        };
        w.last_ts = r.ts_ns;
        match &r.event {
            Event::HrtimerExpireEntry {
                hrtimer, now_ns, ..
            } if *hrtimer == w.timer && w.expiry.is_none() && w.waking.is_none() => {
                w.expiry = Some(now_ns.unwrap_or(r.ts_ns));
            }
            Event::SchedWaking { pid, .. } | Event::SchedWakeup { pid, .. }
                if *pid == tid && w.waking.is_none() =>
            {
                w.waking = Some((r.ts_ns, r.pid != tid));
            }
            Event::SchedSwitch { next_pid, .. } if *next_pid == tid && w.waking.is_some() => {
                if w.switch_ins.len() < MAX_SWITCH_INS {
                    w.switch_ins.push(r.ts_ns);
                } else {
                    w.switch_ins.push(u64::MAX);
                }
            }
            _ if r.pid == tid && w.first_own.is_none() && w.waking.is_some_and(|x| x.1) => {
                w.first_own = Some(r.ts_ns);
            }
            _ => {}
        }
    }

    fn close_current(&mut self) {
        if let Some(w) = self.current.take() {
            self.done.insert(w.expected, w);
            while self.done.len() > MAX_WAKES {
                self.done.pop_first();
            }
        }
    }

    /// Queue the thread's next sample (samples in the order measured).
    pub fn sample(&mut self, s: EngineSample) {
        self.pending.push_back(s);
    }

    /// The trace has ended (tracing stopped and every line read): what is
    /// still unmatched will stay so.
    pub fn finish(&mut self) {
        self.finished = true;
        self.close_current();
    }

    /// Every queued sample whose trace is complete, in order, with its
    /// split or why it has none.
    pub fn resolved(&mut self, out: &mut Vec<Paired>) {
        while let Some(&s) = self.pending.front() {
            let ready = self.finished
                || self.pending.len() > MAX_PENDING
                || match s.running_ns() {
                    // Every event up to the thread's clock reading is in.
                    Some(r) => self.seen_ns > r,
                    // Interval mode: once a later sleep was armed.
                    None => self
                        .current
                        .as_ref()
                        .is_some_and(|c| c.expected > s.expected_ns),
                };
            if !ready {
                break;
            }
            self.pending.pop_front();
            let got = self.resolve(s);
            out.push((s, got));
            self.prev_expected = s.expected_ns;
            // Older sleeps can match no later sample.
            while self
                .done
                .first_key_value()
                .is_some_and(|(k, _)| *k <= s.expected_ns)
            {
                self.done.pop_first();
            }
            while self
                .losses
                .front()
                .is_some_and(|l| l.1 != u64::MAX && l.1 < self.prev_expected)
            {
                self.losses.pop_front();
            }
        }
    }

    fn lost_within(&self, from: u64, to: u64) -> bool {
        self.losses.iter().any(|&(a, b)| a < to && b > from)
    }

    fn resolve(&self, s: EngineSample) -> Result<Split, Unsplit> {
        let e = s.expected_ns;
        let running = s.running_ns();
        let w = match self.done.get(&e) {
            Some(w) => w,
            None => match self.current.as_ref().filter(|c| c.expected == e) {
                Some(w) => w,
                None => {
                    let to = running.unwrap_or(e);
                    return Err(if self.lost_within(self.prev_expected, to) {
                        Unsplit::Lost
                    } else {
                        Unsplit::NotTraced
                    });
                }
            },
        };
        if self.lost_within(w.armed_at, running.unwrap_or(w.last_ts)) {
            return Err(Unsplit::Lost);
        }
        pair_one(w, e, running)
    }
}

/// The pairers of every measuring thread of a run, each record handed
/// only to the pairers of its CPU (a [`Pairer`] ignores every other
/// CPU's: the answers are those of handing every record to every pairer,
/// at a cost that no longer grows with the thread count). Threads are
/// numbered as the run numbers them; a thread gets its pairer once its
/// tid is known ([`set`](PairerSet::set)).
#[derive(Debug, Clone, Default)]
pub struct PairerSet {
    pairers: Vec<Option<Pairer>>,
    /// Per CPU number: the threads pinned there with a pairer.
    by_cpu: Vec<Vec<usize>>,
}

impl PairerSet {
    /// Room for `threads` threads, none with a pairer yet.
    pub fn new(threads: usize) -> PairerSet {
        PairerSet {
            pairers: vec![None; threads],
            by_cpu: Vec::new(),
        }
    }

    /// Give thread `i` its pairer (replacing any it had).
    pub fn set(&mut self, i: usize, p: Pairer) {
        if i >= self.pairers.len() {
            self.pairers.resize(i + 1, None);
        }
        let cpu = p.cpu() as usize;
        if let Some(old) = self.pairers[i].replace(p) {
            self.by_cpu[old.cpu() as usize].retain(|&j| j != i);
        }
        if cpu >= self.by_cpu.len() {
            self.by_cpu.resize(cpu + 1, Vec::new());
        }
        self.by_cpu[cpu].push(i);
    }

    /// Thread `i`'s pairer, if it has one.
    pub fn get(&self, i: usize) -> Option<&Pairer> {
        self.pairers.get(i)?.as_ref()
    }

    /// Thread `i`'s pairer, mutable.
    pub fn get_mut(&mut self, i: usize) -> Option<&mut Pairer> {
        self.pairers.get_mut(i)?.as_mut()
    }

    /// The next record (trace order), to the pairers of its CPU only.
    pub fn feed(&mut self, r: &Record) {
        let Some(ids) = self.by_cpu.get(r.cpu as usize) else {
            return;
        };
        for &i in ids {
            if let Some(p) = self.pairers[i].as_mut() {
                p.feed(r);
            }
        }
    }

    /// Events of `cpu` were lost here (in stream order).
    pub fn lost(&mut self, cpu: u32) {
        let Some(ids) = self.by_cpu.get(cpu as usize) else {
            return;
        };
        for &i in ids {
            if let Some(p) = self.pairers[i].as_mut() {
                p.lost(cpu);
            }
        }
    }

    /// The trace has ended, for every pairer ([`Pairer::finish`]).
    pub fn finish(&mut self) {
        for p in self.pairers.iter_mut().flatten() {
            p.finish();
        }
    }
}

/// The split of the sleep `w` for the sample expected at `e`, read at
/// `running` (when known).
fn pair_one(w: &Wake, e: u64, running: Option<u64>) -> Result<Split, Unsplit> {
    let lo = e.saturating_sub(TS_SLACK_NS);
    if w.armed_at > e {
        return Err(Unsplit::Overrun);
    }
    let Some((wake, by_other)) = w.waking else {
        return Err(Unsplit::NotTraced);
    };
    if !by_other {
        return Err(Unsplit::Overrun);
    }
    let hi = running.unwrap_or(u64::MAX);
    if wake < lo || wake > hi {
        return Err(Unsplit::Inconsistent);
    }
    let expiry = w.expiry.unwrap_or(wake);
    if expiry < lo || expiry > hi {
        return Err(Unsplit::Inconsistent);
    }
    if w.switch_ins.last() == Some(&u64::MAX) {
        return Err(Unsplit::Inconsistent);
    }
    let traced = w.switch_ins.iter().copied().rfind(|&t| t <= hi);
    let switch_in = match (traced, running) {
        (Some(t), _) => t,
        // Woken from idle: the switch is not traced; the thread ran at its
        // clock reading (an upper bound), else at its first own line.
        (None, Some(r)) => r,
        (None, None) => w.first_own.ok_or(Unsplit::NotTraced)?,
    };
    Ok(Split {
        expected_ns: e,
        irq_latency_ns: signed_diff(expiry, e),
        thread_latency_ns: switch_in.saturating_sub(wake.max(e)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lost_markers_are_read_with_or_without_a_count() {
        assert_eq!(lost_marker("CPU:1 [LOST 12 EVENTS]"), Some((1, Some(12))));
        assert_eq!(lost_marker("  CPU:3 [LOST EVENTS]"), Some((3, None)));
        assert_eq!(lost_marker("CPU:x [LOST 1 EVENTS]"), None);
        assert_eq!(lost_marker("m-9 [001] ..... 1.0: print: CPU:1"), None);
    }
}
