//! Explaining one late wake-up, and splitting every wake-up in two.
//!
//! Times are trace-clock ns. rtshield's instance uses the `mono` trace
//! clock, so they compare with the CLOCK_MONOTONIC expected wake-up the
//! measuring thread computed; `hrtimer_expire_entry`'s `now=` is used for
//! the timer expiry when present because it has ns resolution (the text
//! timestamps have µs resolution, so event times may read up to 1 µs early).

use crate::parse::{Event, Record};
use crate::replay::{replay, runs_as, Window};
use serde::{Deserialize, Serialize};

/// Text timestamps are truncated to the microsecond.
pub(crate) const TS_SLACK_NS: u64 = 1_000;

/// `spikes.json`: version 1 (schema in docs/trace.md).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpikeFile {
    /// The schema version ([`SpikeFile::VERSION`] when written here; docs/trace.md).
    pub version: u32,
    /// Every spike explained, in the order they happened.
    pub spikes: Vec<Spike>,
}

impl SpikeFile {
    /// The version this crate writes.
    pub const VERSION: u32 = 1;

    /// A file of `spikes` at the current version.
    pub fn new(spikes: Vec<Spike>) -> Self {
        SpikeFile {
            version: Self::VERSION,
            spikes,
        }
    }
}

/// One late wake-up, explained.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Spike {
    /// The CPU the thread measured on.
    pub cpu: u32,
    /// The measuring thread.
    pub pid: u32,
    /// Its name (`comm`).
    pub comm: String,
    /// When the thread should have woken (CLOCK_MONOTONIC ns).
    pub expected_ns: u64,
    /// When its timer fired (`hrtimer_expire_entry`), if traced.
    pub timer_expiry_ns: Option<u64>,
    /// When it was woken (`sched_waking`, else `sched_wakeup`), if traced.
    pub wakeup_ns: Option<u64>,
    /// When it got the CPU (`sched_switch` to it).
    pub switch_in_ns: u64,
    /// `switch_in_ns - expected_ns` (0 if the trace reads it as early).
    pub latency_ns: u64,
    /// `timer_expiry_ns - expected_ns` (kernel latency; may read slightly
    /// negative because of timer slack rounding). `None` when the thread
    /// armed its timer only after the expected time (it overran or was
    /// still waiting for the CPU since its previous wake-up).
    pub irq_latency_ns: Option<i64>,
    /// `switch_in_ns - wakeup_ns`.
    pub thread_latency_ns: Option<u64>,
    /// IRQ handlers, vectors, IPIs and softirqs that ran on the CPU in
    /// `[expected, switch-in]`, by time, longest first.
    pub irqs: Vec<Item>,
    /// Threads that held the CPU in the window, longest first.
    pub threads: Vec<ThreadItem>,
    /// Window time with the CPU idle or with no event at all.
    pub unaccounted_ns: u64,
    /// The main cause in one sentence: a thread that held the CPU, an interrupt,
    /// time with nothing traced, or the thread itself.
    pub verdict: String,
    /// VM steal time the kernel accounted to this CPU (`/proc/stat`, tick
    /// resolution) over `steal_window_ns` around the spike; absent when
    /// not read (no `/proc/stat` steal column, or not a live run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steal_ns: Option<u64>,
    /// The interval `steal_ns` was measured over (from the previous
    /// reading to one taken after the spike).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steal_window_ns: Option<u64>,
}

impl Spike {
    /// Attach the CPU's VM steal time over `window_ns` around the spike;
    /// the verdict then says it next to unaccounted time.
    pub fn set_steal(&mut self, steal_ns: u64, window_ns: u64) {
        self.steal_ns = Some(steal_ns);
        self.steal_window_ns = Some(window_ns);
        self.verdict = verdict(self);
    }

    /// Pids of the real-time threads in the window, whose policy (FIFO or
    /// RR) only the live system can tell.
    pub fn rt_thread_pids(&self) -> Vec<u32> {
        self.threads
            .iter()
            .filter(|t| t.pid != 0 && t.kernel_prio.is_some_and(|p| (0..100).contains(&p)))
            .map(|t| t.pid)
            .collect()
    }

    /// Name the policy of real-time threads found in `live` (`FIFO 99`
    /// instead of `RT 99`) and redo the verdict. A live entry counts only
    /// when its name and priority are the traced ones: a pid reused by
    /// another thread, or a thread that changed its priority since, keeps
    /// `RT N`.
    pub fn set_policies(&mut self, live: &std::collections::BTreeMap<u32, LiveRt>) {
        for t in &mut self.threads {
            let (Some(kp), Some(l)) = (t.kernel_prio, live.get(&t.pid)) else {
                continue;
            };
            if (0..100).contains(&kp) && l.comm == t.comm && l.priority as i32 == 99 - kp {
                let name = match l.policy {
                    RtPolicy::Fifo => "FIFO",
                    RtPolicy::Rr => "RR",
                };
                t.priority = format!("{name} {}", l.priority);
            }
        }
        self.verdict = verdict(self);
    }
}

/// What kind of interrupt context an [`Item`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ItemKind {
    /// `irq:irq_handler_entry/exit` (a device handler).
    Irq,
    /// `irq_vectors:*_entry/exit` (x86 local timer, reschedule, ...).
    Vector,
    /// `ipi:ipi_entry/exit`.
    Ipi,
    /// `irq:softirq_entry/exit`.
    Softirq,
}

/// Interrupt-context work that ran on the CPU during a spike's window, summed by source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Item {
    /// Handler, vector, IPI or softirq.
    pub kind: ItemKind,
    /// Its name (`virtio1-req.0`, `local_timer`, `TIMER`).
    pub name: String,
    /// The IRQ number (handlers), vector number (vectors) or softirq number.
    pub number: Option<u32>,
    /// Invocations overlapping the window.
    pub count: u32,
    /// Exclusive time inside the window (nested handlers not counted twice).
    pub total_ns: u64,
    /// Longest single invocation, entry to exit (may extend out of the window).
    pub max_ns: u64,
}

/// A thread that held the CPU during a spike's window.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThreadItem {
    /// Its name (`comm`).
    pub comm: String,
    /// Its thread id.
    pub pid: u32,
    /// Kernel priority as traced (0..99 real-time, 100..139 fair, -1 deadline).
    pub kernel_prio: Option<i32>,
    /// Human form: `FIFO 99` or `RR 99` (real-time, policy read from the
    /// live thread), `RT 99` (real-time, policy unknown), `nice 0`, `deadline`.
    pub priority: String,
    /// Time it held the CPU (outside IRQ context) inside the window.
    pub ns: u64,
    /// Work functions it executed (`workqueue_execute_start`), for kworkers.
    pub works: Vec<String>,
}

/// One wake-up of the thread: kernel part and thread part.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Split {
    /// The timer's requested expiry (`hrtimer_start expires=`).
    pub expected_ns: u64,
    /// Timer expiry minus requested expiry.
    pub irq_latency_ns: i64,
    /// Switch-in minus wake-up.
    pub thread_latency_ns: u64,
}

/// Why a spike could not be explained.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnalyseError(pub String);

impl std::fmt::Display for AnalyseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for AnalyseError {}

/// `RT 99` for real-time kernel prio 0, `nice 0` for 120, `deadline` for
/// -1. The trace gives the kernel prio only: it tells the class (below 100
/// real-time, 100..139 fair) but not FIFO from RR, so a real-time thread
/// is `RT N` unless [`Spike::set_policies`] learns its policy.
pub fn priority_text(kernel_prio: Option<i32>) -> String {
    match kernel_prio {
        None => "prio ?".into(),
        Some(p) if p < 0 => "deadline".into(),
        Some(p) if p < 100 => format!("RT {}", 99 - p),
        Some(p) => format!("nice {}", p - 120),
    }
}

/// A real-time policy, as the caller read it for a live thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RtPolicy {
    /// `SCHED_FIFO`.
    Fifo,
    /// `SCHED_RR`.
    Rr,
}

/// What the caller read of a thread still alive after the trace (its
/// name, real-time policy and priority): data, so the analyser stays pure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveRt {
    /// Its name (`comm`), to check the pid was not reused.
    pub comm: String,
    /// Its real-time policy.
    pub policy: RtPolicy,
    /// `sched_priority`, 1..99.
    pub priority: u32,
}

/// `850 ns`, `12.5 us`, `0.9 ms`, `1.85 ms`.
pub fn fmt_ns(ns: u64) -> String {
    fn trim(s: String) -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    }
    if ns < 1_000 {
        format!("{ns} ns")
    } else if ns < 100_000 {
        format!("{} us", trim(format!("{:.1}", ns as f64 / 1e3)))
    } else {
        format!("{} ms", trim(format!("{:.2}", ns as f64 / 1e6)))
    }
}

/// `a - b` as a signed value, saturated (trace numbers are untrusted).
pub(crate) fn signed_diff(a: u64, b: u64) -> i64 {
    (i128::from(a) - i128::from(b)).clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
}

fn fmt_signed(ns: i64) -> String {
    if ns < 0 {
        format!("-{}", fmt_ns(ns.unsigned_abs()))
    } else {
        fmt_ns(ns as u64)
    }
}

/// Explain the wake-up of thread `pid` on `cpu` expected at `expected_ns`:
/// what the timer, the scheduler and everything else on the CPU did from
/// the expected wake-up to the thread's switch-in.
pub fn analyse(
    records: &[Record],
    cpu: u32,
    pid: u32,
    expected_ns: u64,
) -> Result<Spike, AnalyseError> {
    analyse_until(records, cpu, pid, expected_ns, None)
}

/// [`analyse`], knowing that the thread was running at `running_ns` (its
/// own clock reading: expected wake-up + measured latency). Used when the
/// trace ends before any event of the thread after its wake-up (it stopped
/// the trace at once: `--trace-stop`) and no switch to it was traced (the
/// switch out of idle is not, on this kernel): the switch-in is then the
/// last event on the CPU before `running_ns` (nothing was traced between
/// it and the thread running), at or after the wake-up.
pub fn analyse_until(
    records: &[Record],
    cpu: u32,
    pid: u32,
    expected_ns: u64,
    running_ns: Option<u64>,
) -> Result<Spike, AnalyseError> {
    let lo = expected_ns.saturating_sub(TS_SLACK_NS);
    let wake = records.iter().find(|r| {
        r.ts_ns >= lo
            && matches!(&r.event,
                Event::SchedWaking { pid: p, .. } | Event::SchedWakeup { pid: p, .. } if *p == pid)
    });
    let (sw_idx, sw, prio_idx) = switch_in(records, cpu, pid, expected_ns, lo, wake, running_ns)?;
    let switch_in = sw.ts_ns.max(expected_ns);
    let expiry = timer_expiry(records, cpu, lo, wake.map_or(sw.ts_ns, |w| w.ts_ns))
        // The kernel does not always record the expiry (on this VM, for
        // timers that wake an idle CPU); the wake-up, a few µs later in
        // the same interrupt, stands in for it (as in `split`).
        .or(wake.map(|w| w.ts_ns));
    let prios = priorities(records);
    let prio_of = |p: u32| {
        prios
            .iter()
            .rev()
            .find(|(i, q, _)| *q == p && *i < prio_idx)
            .or_else(|| prios.iter().find(|(_, q, _)| *q == p))
            .map(|x| x.2)
    };
    // Until the timer fires the thread is not runnable, so no thread can
    // be blocking it: time before the expiry outside interrupt context is
    // the timer interrupt not being delivered (no event: hypervisor, SMI,
    // firmware, or interrupts disabled), not the current thread's doing.
    // Unless the thread armed its sleep only after the expected time (it
    // overran, or was still waiting for the CPU since its previous
    // wake-up): then it was runnable or running all along and whoever held
    // the CPU is to blame from the start.
    let armed_late = armed_late(records, pid, expected_ns, sw.ts_ns);
    let irq_due = if armed_late {
        expected_ns
    } else {
        expiry.unwrap_or(expected_ns)
    };
    let acc = replay(
        records,
        &Window {
            cpu,
            pid,
            expected_ns,
            switch_in,
            sw_idx,
            irq_due,
            prio_of: &prio_of,
        },
    );
    let mut spike = Spike {
        cpu,
        pid,
        comm: thread_comm(sw, wake, pid),
        expected_ns,
        timer_expiry_ns: expiry,
        wakeup_ns: wake.map(|w| w.ts_ns),
        switch_in_ns: sw.ts_ns,
        latency_ns: sw.ts_ns.saturating_sub(expected_ns),
        // A timer armed after the expected time says nothing about
        // interrupt latency.
        irq_latency_ns: if armed_late {
            None
        } else {
            expiry.map(|e| signed_diff(e, expected_ns))
        },
        thread_latency_ns: wake.map(|w| sw.ts_ns.saturating_sub(w.ts_ns)),
        irqs: acc.items,
        threads: acc.threads,
        unaccounted_ns: acc.unaccounted,
        verdict: String::new(),
        steal_ns: None,
        steal_window_ns: None,
    };
    spike.verdict = verdict(&spike);
    Ok(spike)
}

/// The switch-in of the late thread (its index and record): the first
/// switch to it on `cpu` after its wake-up (or `lo` without one), or the
/// last one before its clock reading `running_ns` when known; and the
/// index of the first, where the blockers' priorities are read.
fn switch_in<'r>(
    records: &'r [Record],
    cpu: u32,
    pid: u32,
    expected_ns: u64,
    lo: u64,
    wake: Option<&Record>,
    running_ns: Option<u64>,
) -> Result<(usize, &'r Record, usize), AnalyseError> {
    let from = wake.map_or(lo, |w| w.ts_ns);
    // Knowing when the thread read its clock: it may have been switched
    // in, preempted before that reading (by a higher-priority thread woken
    // meanwhile) and switched in again; the last switch-in before the
    // reading ends the latency it measured, not the first (issue 22: the
    // first gave a 26 us "spike" for a 5 ms wake-up under --trace-stop).
    let is_switch_in = |r: &Record| {
        r.cpu == cpu
            && r.ts_ns >= from
            && matches!(&r.event, Event::SchedSwitch { next_pid, .. } if *next_pid == pid)
    };
    let last = running_ns.and_then(|until| {
        records
            .iter()
            .enumerate()
            .take_while(|(_, r)| r.ts_ns <= until)
            .filter(|(_, r)| is_switch_in(r))
            .last()
    });
    // This kernel does not trace the switch out of the idle task: after a
    // wake-up from idle the thread's first own event is its switch-in.
    let woken_by_other = wake.is_some_and(|w| w.pid != pid);
    let found = records.iter().enumerate().find(|(_, r)| {
        r.cpu == cpu
            && r.ts_ns >= from
            && (matches!(&r.event, Event::SchedSwitch { next_pid, .. } if *next_pid == pid)
                || (woken_by_other && runs_as(r, pid)))
    });
    let fallback = || {
        let w = wake?;
        let until = running_ns?;
        records
            .iter()
            .enumerate()
            .rfind(|(_, r)| r.cpu == cpu && r.ts_ns >= w.ts_ns && r.ts_ns <= until)
    };
    let first = found.or_else(|| if woken_by_other { fallback() } else { None });
    match (first, last) {
        // Priorities are read at the first switch-in (the blockers' as
        // they blocked; one that lowers its priority is switched out by
        // that very call), the window ends at the last.
        (Some((i, _)), Some((j, r))) if j > i => Ok((j, r, i)),
        (Some((i, r)), _) | (None, Some((i, r))) => Ok((i, r, i)),
        (None, None) => Err(AnalyseError(format!(
            "no switch to pid {pid} on CPU {cpu} after {expected_ns} ns in the trace"
        ))),
    }
}

/// The late thread's name: from its switch-in, else its own line, else
/// its wake-up.
fn thread_comm(sw: &Record, wake: Option<&Record>, pid: u32) -> String {
    match (&sw.event, wake) {
        (Event::SchedSwitch { next_comm, .. }, _) => next_comm.clone(),
        _ if runs_as(sw, pid) => sw.comm.clone(),
        // The fallback: the wake-up names the thread.
        (
            _,
            Some(Record {
                event: Event::SchedWaking { comm, .. } | Event::SchedWakeup { comm, .. },
                ..
            }),
        ) => comm.clone(),
        _ => sw.comm.clone(),
    }
}

/// The thread's timer: the last expiry on `cpu` in `[lo, upto]`,
/// preferring the sleep timer (`hrtimer_wakeup`).
fn timer_expiry(records: &[Record], cpu: u32, lo: u64, upto: u64) -> Option<u64> {
    let expiries: Vec<&Record> = records
        .iter()
        .filter(|r| {
            r.cpu == cpu
                && r.ts_ns >= lo
                && r.ts_ns <= upto
                && matches!(r.event, Event::HrtimerExpireEntry { .. })
        })
        .collect();
    expiries
        .iter()
        .rev()
        .find(|r| matches!(&r.event, Event::HrtimerExpireEntry { function, .. } if function == "hrtimer_wakeup"))
        .or(expiries.last())
        .map(|r| match &r.event {
            Event::HrtimerExpireEntry { now_ns, .. } => now_ns.unwrap_or(r.ts_ns),
            _ => r.ts_ns,
        })
}

/// Priorities of every task seen, for the thread table: (record index,
/// pid, kernel prio). The caller takes the last one traced before the
/// switch-in (a thread may change its priority after the window; the
/// switch itself can be caused by the change, and then its `prev_prio` is
/// already the new one), else the first one after.
fn priorities(records: &[Record]) -> Vec<(usize, u32, i32)> {
    let mut prios = Vec::new();
    for (i, r) in records.iter().enumerate() {
        match &r.event {
            Event::SchedSwitch {
                prev_pid,
                prev_prio,
                next_pid,
                next_prio,
                ..
            } => {
                prios.push((i, *prev_pid, *prev_prio));
                prios.push((i, *next_pid, *next_prio));
            }
            Event::SchedWaking { pid, prio, .. } | Event::SchedWakeup { pid, prio, .. } => {
                prios.push((i, *pid, *prio))
            }
            _ => {}
        }
    }
    prios
}

/// Whether thread `pid` armed its sleep timer for `expected_ns` only after
/// that time (before its switch-in at `sw_ns`).
fn armed_late(records: &[Record], pid: u32, expected_ns: u64, sw_ns: u64) -> bool {
    records.iter().any(|r| {
        r.pid == pid
            && r.ts_ns > expected_ns
            && r.ts_ns <= sw_ns
            && matches!(&r.event, Event::HrtimerStart { function, expires_ns: Some(e), .. }
                if function == "hrtimer_wakeup" && e.abs_diff(expected_ns) <= TS_SLACK_NS)
    })
}

/// One line: the largest contributor to the window.
fn verdict(s: &Spike) -> String {
    let thread = s.threads.iter().find(|t| t.pid != s.pid);
    let own = s.threads.iter().find(|t| t.pid == s.pid);
    let item = s.irqs.first();
    let best = [
        thread.map_or(0, |t| t.ns),
        item.map_or(0, |i| i.total_ns),
        s.unaccounted_ns,
        own.map_or(0, |t| t.ns),
    ];
    let max = best.iter().copied().max().unwrap_or(0);
    if max == 0 {
        return format!(
            "late {}: nothing traced in the window",
            fmt_ns(s.latency_ns)
        );
    }
    if max == best[0] {
        let t = thread.expect("non-zero");
        return format!(
            "blocked {} by thread `{}` (pid {}, {})",
            fmt_ns(t.ns),
            t.comm,
            t.pid,
            t.priority
        );
    }
    if max == best[1] {
        let i = item.expect("non-zero");
        let what = match i.kind {
            ItemKind::Irq => format!("IRQ {} `{}`", i.number.unwrap_or(0), i.name),
            ItemKind::Vector => format!("the {} vector", i.name),
            ItemKind::Ipi => format!("IPI `{}`", i.name),
            ItemKind::Softirq => format!("softirq {}", i.name),
        };
        return format!(
            "delayed {} by {what} ({} run{})",
            fmt_ns(i.total_ns),
            i.count,
            if i.count == 1 { "" } else { "s" }
        );
    }
    if max == best[2] {
        let steal = match (s.steal_ns, s.steal_window_ns) {
            (Some(st), Some(w)) => format!(
                " (VM steal time on CPU {}: {} in the {} around it)",
                s.cpu,
                fmt_ns(st),
                fmt_ns(w)
            ),
            _ => String::new(),
        };
        let v = match (thread, s.irq_latency_ns) {
            (_, Some(irq)) if irq > 0 && irq as u64 >= s.unaccounted_ns / 2 => format!(
                "timer IRQ {} late, nothing ran: hypervisor, SMI or firmware",
                fmt_signed(irq)
            ),
            _ => format!(
                "{} with no event (idle or unaccounted): hypervisor, SMI or firmware",
                fmt_ns(s.unaccounted_ns)
            ),
        };
        return v + &steal;
    }
    format!(
        "the thread itself still held the CPU for {} (overrun)",
        fmt_ns(best[3])
    )
}

/// `spikes.txt`: one block per spike.
pub fn render_text(spikes: &[Spike]) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    if spikes.is_empty() {
        s.push_str("no spike\n");
    }
    for (n, sp) in spikes.iter().enumerate() {
        let _ = writeln!(
            s,
            "spike {}: CPU {}, thread `{}` (pid {}), expected at {} ns, late {}",
            n + 1,
            sp.cpu,
            sp.comm,
            sp.pid,
            sp.expected_ns,
            fmt_ns(sp.latency_ns)
        );
        let _ = writeln!(s, "  verdict: {}", sp.verdict);
        let _ = writeln!(
            s,
            "  timer IRQ latency: {}; thread latency (wake-up to switch-in): {}",
            sp.irq_latency_ns.map_or("not traced".into(), fmt_signed),
            sp.thread_latency_ns.map_or("not traced".into(), fmt_ns)
        );
        for i in &sp.irqs {
            let kind = match i.kind {
                ItemKind::Irq => "irq",
                ItemKind::Vector => "vector",
                ItemKind::Ipi => "ipi",
                ItemKind::Softirq => "softirq",
            };
            let num = i.number.map_or(String::new(), |n| format!(" {n}"));
            let _ = writeln!(
                s,
                "  {kind}{num} {}: {} run(s), {} in window, longest {}",
                i.name,
                i.count,
                fmt_ns(i.total_ns),
                fmt_ns(i.max_ns)
            );
        }
        for t in &sp.threads {
            let works = if t.works.is_empty() {
                String::new()
            } else {
                format!(" (work: {})", t.works.join(", "))
            };
            let _ = writeln!(
                s,
                "  thread `{}` pid {} {}: {}{works}",
                t.comm,
                t.pid,
                t.priority,
                fmt_ns(t.ns)
            );
        }
        let _ = writeln!(
            s,
            "  unaccounted (idle exit, hypervisor, SMI or firmware): {}",
            fmt_ns(sp.unaccounted_ns)
        );
        if let (Some(st), Some(w)) = (sp.steal_ns, sp.steal_window_ns) {
            let _ = writeln!(
                s,
                "  VM steal time on CPU {}: {} in the {} around the spike (the kernel's steal counter)",
                sp.cpu,
                fmt_ns(st),
                fmt_ns(w)
            );
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::split::split;

    #[test]
    fn split_uses_the_wake_up_when_the_expiry_was_not_recorded() {
        // Shape recorded on this VM: a sleeper waking an idle CPU, with no
        // local_timer_entry / hrtimer_expire_entry in the buffer.
        let t = "\
 s-314 [001] d..1. 6218.609854: hrtimer_start: hrtimer=00000000063c4f58 function=hrtimer_wakeup expires=6218619902903 softexpires=6218619852903 mode=REL was_armed=0
 s-314 [001] d..2. 6218.609859: sched_switch: prev_comm=s prev_pid=314 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120
 <idle>-0 [001] d.h3. 6218.619951: sched_waking: comm=s pid=314 prio=120 target_cpu=001
 <idle>-0 [001] dNh4. 6218.619965: sched_wakeup: comm=s pid=314 prio=120 target_cpu=001
 <idle>-0 [001] d..2. 6218.619990: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=s next_pid=314 next_prio=120
";
        let r = crate::parse(t).unwrap();
        assert_eq!(
            split(&r, 314),
            vec![Split {
                expected_ns: 6_218_619_902_903,
                // waking .619951000 - expires
                irq_latency_ns: 48_097,
                // switch .619990 - waking .619951
                thread_latency_ns: 39_000,
            }]
        );
        let sp = analyse(&r, 1, 314, 6_218_619_902_903).unwrap();
        assert_eq!(sp.timer_expiry_ns, Some(6_218_619_951_000));
        assert_eq!(sp.irq_latency_ns, Some(48_097));
        assert_eq!(sp.thread_latency_ns, Some(39_000));
        // A wake-up before the expiry (a signal) is not the timer's.
        let early = t.replace("6218.6199", "6218.6100");
        let r = crate::parse(&early).unwrap();
        assert!(split(&r, 314).is_empty());
    }

    #[test]
    fn a_thread_is_shown_with_its_priority_in_the_window() {
        // `busy` runs at FIFO 99 (kernel prio 0) in the window and drops to
        // nice 0 (120) at its end, which makes the switch (recorded with
        // the new prio), as the live test's busy thread does.
        let t = "\
 m-5 [001] d..2. 100.000000: sched_switch: prev_comm=m prev_pid=5 prev_prio=49 prev_state=S ==> next_comm=busy next_pid=7 next_prio=0
 busy-7 [001] d.h.. 100.000200: hrtimer_expire_entry: hrtimer=00000000aaaa function=hrtimer_wakeup now=100000200000
 busy-7 [001] d.h2. 100.000201: sched_waking: comm=m pid=5 prio=49 target_cpu=001
 busy-7 [001] d..2. 100.002000: sched_switch: prev_comm=busy prev_pid=7 prev_prio=120 prev_state=R ==> next_comm=m next_pid=5 next_prio=49
 m-5 [001] d..2. 100.002010: sched_switch: prev_comm=m prev_pid=5 prev_prio=49 prev_state=S ==> next_comm=busy next_pid=7 next_prio=120
 busy-7 [001] d..2. 100.003000: sched_switch: prev_comm=busy prev_pid=7 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120
";
        let r = crate::parse(t).unwrap();
        let s = analyse(&r, 1, 5, 100_000_200_000).unwrap();
        assert_eq!(s.threads[0].pid, 7);
        assert_eq!(s.threads[0].priority, "RT 99");
        assert_eq!(s.verdict, "blocked 1.8 ms by thread `busy` (pid 7, RT 99)");
    }

    #[test]
    fn a_live_policy_names_fifo_or_rr_only_for_the_same_thread() {
        let t = "\
 m-5 [001] d..2. 100.000000: sched_switch: prev_comm=m prev_pid=5 prev_prio=49 prev_state=S ==> next_comm=busy next_pid=7 next_prio=0
 busy-7 [001] d.h.. 100.000200: hrtimer_expire_entry: hrtimer=00000000aaaa function=hrtimer_wakeup now=100000200000
 busy-7 [001] d.h2. 100.000201: sched_waking: comm=m pid=5 prio=49 target_cpu=001
 busy-7 [001] d..2. 100.002000: sched_switch: prev_comm=busy prev_pid=7 prev_prio=0 prev_state=R ==> next_comm=m next_pid=5 next_prio=49
";
        let r = crate::parse(t).unwrap();
        let base = analyse(&r, 1, 5, 100_000_200_000).unwrap();
        assert_eq!(base.rt_thread_pids(), vec![7]);
        let live = |comm: &str, policy, priority| {
            std::collections::BTreeMap::from([(
                7,
                LiveRt {
                    comm: comm.into(),
                    policy,
                    priority,
                },
            )])
        };
        let mut s = base.clone();
        s.set_policies(&live("busy", RtPolicy::Fifo, 99));
        assert_eq!(
            s.verdict,
            "blocked 1.8 ms by thread `busy` (pid 7, FIFO 99)"
        );
        let mut s = base.clone();
        s.set_policies(&live("busy", RtPolicy::Rr, 99));
        assert_eq!(s.threads[0].priority, "RR 99");
        // Another name (pid reused) or priority (changed since): unknown.
        for l in [
            live("other", RtPolicy::Fifo, 99),
            live("busy", RtPolicy::Fifo, 50),
        ] {
            let mut s = base.clone();
            s.set_policies(&l);
            assert_eq!(s.verdict, "blocked 1.8 ms by thread `busy` (pid 7, RT 99)");
        }
    }

    #[test]
    fn a_thread_switched_in_from_idle_untraced_is_seen_by_its_lines() {
        // Recorded shape (live test): the CPU idles, the busy thread is
        // woken by idle and runs with no sched_switch traced; its first
        // line is the timer interrupt that wakes the measuring thread.
        let t = "\
 m-5 [001] d..2. 299.999900: sched_switch: prev_comm=m prev_pid=5 prev_prio=49 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120
 <idle>-0 [001] d.h2. 300.000000: sched_waking: comm=busy pid=7 prio=0 target_cpu=001
 busy-7 [001] d.h.. 300.000500: local_timer_entry: vector=236
 busy-7 [001] d.h.. 300.000500: hrtimer_expire_entry: hrtimer=00000000cccc function=hrtimer_wakeup now=300000500000
 busy-7 [001] d.h2. 300.000501: sched_waking: comm=m pid=5 prio=49 target_cpu=001
 busy-7 [001] d.h.. 300.000510: local_timer_exit: vector=236
 busy-7 [001] d..2. 300.002000: sched_switch: prev_comm=busy prev_pid=7 prev_prio=0 prev_state=R ==> next_comm=m next_pid=5 next_prio=49
";
        let r = crate::parse(t).unwrap();
        let s = analyse(&r, 1, 5, 300_000_490_000).unwrap();
        // [.490, .500) timer not fired: unaccounted; [.500, .510) the
        // vector; [.510, 2.000) busy.
        assert_eq!(s.unaccounted_ns, 10_000);
        assert_eq!(s.irqs[0].total_ns, 10_000);
        assert_eq!((s.threads[0].pid, s.threads[0].ns), (7, 1_490_000));
        assert_eq!(s.verdict, "blocked 1.49 ms by thread `busy` (pid 7, RT 99)");
    }

    #[test]
    fn a_trace_stopped_by_the_woken_thread_ends_at_its_last_event() {
        // --trace-stop: woken from idle (no switch traced), the thread
        // stops the trace before any event of its own.
        let t = "\
 <idle>-0 [001] d.h.. 200.000300: local_timer_entry: vector=236
 <idle>-0 [001] d.h.. 200.000300: hrtimer_expire_entry: hrtimer=00000000bbbb function=hrtimer_wakeup now=200000300000
 <idle>-0 [001] d.h2. 200.000301: sched_waking: comm=m pid=5 prio=49 target_cpu=001
 <idle>-0 [001] d.h.. 200.000308: local_timer_exit: vector=236
";
        let r = crate::parse(t).unwrap();
        assert!(analyse(&r, 1, 5, 200_000_000_000).is_err());
        // The thread read its clock at 200.000315 (expected + latency).
        let s = analyse_until(&r, 1, 5, 200_000_000_000, Some(200_000_315_000)).unwrap();
        assert_eq!(s.comm, "m");
        assert_eq!(s.switch_in_ns, 200_000_308_000);
        assert_eq!(s.irq_latency_ns, Some(300_000));
        assert_eq!(s.thread_latency_ns, Some(7_000));
        // [E, expiry) with no event: unaccounted; the vector 8 us.
        assert_eq!(s.unaccounted_ns, 300_000);
        assert_eq!(s.irqs[0].total_ns, 8_000);
        assert_eq!(s.unaccounted_ns + s.irqs[0].total_ns, s.latency_ns);
        assert!(
            s.verdict.starts_with("timer IRQ 0.3 ms late, nothing ran"),
            "{}",
            s.verdict
        );
        // A running time before the wake-up explains nothing.
        assert!(analyse_until(&r, 1, 5, 200_000_000_000, Some(200_000_200_000)).is_err());
    }

    /// The `--trace-stop` flake of issue 22 (lines recorded under load,
    /// shortened): the measuring thread is switched in 26 us late, then a
    /// FIFO 99 thread woken in its context preempts it before it reads its
    /// clock and spins for 5 ms. The spike it measured ends at the second
    /// switch-in; the first explained a 26 us wake-up.
    #[test]
    fn a_thread_preempted_before_its_clock_reading_is_explained_to_the_reading() {
        let t = "\
 rustc-2087 [001] d.h.. 24223.063529: local_timer_entry: vector=236
 rustc-2087 [001] d.h.. 24223.063530: hrtimer_expire_entry: hrtimer=0000000047734927 function=hrtimer_wakeup now=24223063529263
 rustc-2087 [001] d.h2. 24223.063530: sched_waking: comm=rtshield-m0 pid=2220 prio=49 target_cpu=001
 rustc-2087 [001] dNh.. 24223.063536: local_timer_exit: vector=236
 rustc-2087 [001] d..2. 24223.063545: sched_switch: prev_comm=rustc prev_pid=2087 prev_prio=120 prev_state=R ==> next_comm=rtshield-m0 next_pid=2220 next_prio=49
 rtshield-m0-2220 [001] d.h3. 24223.063552: sched_waking: comm=rtsh-busy2ms pid=2217 prio=0 target_cpu=001
 rtshield-m0-2220 [001] d..2. 24223.063560: sched_switch: prev_comm=rtshield-m0 prev_pid=2220 prev_prio=49 prev_state=R ==> next_comm=rtsh-busy2ms next_pid=2217 next_prio=0
 rtsh-busy2ms-2217 [001] d..2. 24223.068570: sched_switch: prev_comm=rtsh-busy2ms prev_pid=2217 prev_prio=0 prev_state=S ==> next_comm=rtshield-m0 next_pid=2220 next_prio=49
";
        let r = crate::parse(t).unwrap();
        let e = 24_223_063_519_075;
        // Read at .068575: 5.056 ms late.
        let s = analyse_until(&r, 1, 2220, e, Some(e + 5_056_000)).unwrap();
        assert_eq!(s.switch_in_ns, 24_223_068_570_000);
        assert!(s.latency_ns >= 5_000_000, "{}", s.latency_ns);
        assert_eq!(s.thread_latency_ns, Some(5_040_000));
        assert!(
            s.verdict
                .starts_with("blocked 5.01 ms by thread `rtsh-busy2ms` (pid 2217"),
            "{}",
            s.verdict
        );
        // The hog drops to SCHED_OTHER as it ends (switched out by that
        // very call: prev_prio 120), then a stop-class thread preempts the
        // measuring thread once more before its reading: the window ends
        // at the last switch-in, the hog is named at the priority it
        // blocked with.
        let dropped = t.replace(
            "prev_comm=rtsh-busy2ms prev_pid=2217 prev_prio=0",
            "prev_comm=rtsh-busy2ms prev_pid=2217 prev_prio=120",
        ) + " rtshield-m0-2220 [001] d..2. 24223.068575: sched_switch: prev_comm=rtshield-m0 prev_pid=2220 prev_prio=49 prev_state=R+ ==> next_comm=migration/1 next_pid=23 next_prio=0
 migration/1-23 [001] d..2. 24223.068580: sched_switch: prev_comm=migration/1 prev_pid=23 prev_prio=0 prev_state=S ==> next_comm=rtshield-m0 next_pid=2220 next_prio=49
";
        let r2 = crate::parse(&dropped).unwrap();
        let s = analyse_until(&r2, 1, 2220, e, Some(e + 5_066_000)).unwrap();
        assert_eq!(s.switch_in_ns, 24_223_068_580_000);
        assert!(
            s.verdict
                .starts_with("blocked 5.01 ms by thread `rtsh-busy2ms` (pid 2217, RT 99)"),
            "{}",
            s.verdict
        );
        // Without the reading, the first switch-in (the old answer).
        assert_eq!(
            analyse(&r, 1, 2220, e).unwrap().switch_in_ns,
            24_223_063_545_000
        );
    }

    #[test]
    fn durations_and_priorities_read_well() {
        assert_eq!(fmt_ns(850), "850 ns");
        assert_eq!(fmt_ns(12_500), "12.5 us");
        assert_eq!(fmt_ns(900_000), "0.9 ms");
        assert_eq!(fmt_ns(1_800_000), "1.8 ms");
        assert_eq!(fmt_ns(2_000_000), "2 ms");
        assert_eq!(priority_text(Some(0)), "RT 99");
        assert_eq!(priority_text(Some(120)), "nice 0");
        assert_eq!(priority_text(Some(-1)), "deadline");
    }
}
