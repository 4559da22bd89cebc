//! Why a busy-polling thread lost its CPU: each noise event (a gap between
//! two clock reads of `rtshield noise`'s spinning thread) attributed to the
//! kernel activity traced on its CPU, in osnoise's classes: NMI, IRQ (the
//! local timer tick apart), softirq, thread, or **unexplained** (no kernel
//! event: hardware, firmware/SMI or the hypervisor; osnoise's "HW").
//!
//! Pure: records in, explanations out. `rtshield-noise` records the trace
//! in a private tracefs instance and feeds a [`Timeline`] per CPU.
//!
//! # The attribution rules (docs/manual/noise.md, "How causes are found")
//!
//! 1. **Contexts.** The records of one CPU become contexts, each with a
//!    nesting level: an NMI (`nmi_handler`, from its end minus `delta_ns`)
//!    is level 4; a hard IRQ (`irq_handler_entry/exit`, an x86 vector
//!    `*_entry/exit`, an arm `ipi_entry/exit`) level 3; a softirq
//!    (`softirq_entry/exit`) level 2; another task (from a `sched_switch` to
//!    it until the next `sched_switch` on the CPU) level 1. A hard IRQ in
//!    which an `hrtimer_expire_entry` runs a `tick_*` function is the
//!    **tick**. Idle (pid 0) and the spinning thread itself are no context.
//! 2. **Missing exits.** Hard IRQs do not nest in Linux, so a hard-IRQ
//!    entry closes a hard IRQ still open; a softirq entry closes an open
//!    hard IRQ and softirq; a `sched_switch` closes both (process context).
//!    A context never closed ends at the end of the gap.
//! 3. **A cause starts inside the gap.** The spinning thread read the clock
//!    in its own task context at both ends of the gap, so whatever stole
//!    the CPU began after the first read: a context counts for a gap only
//!    when it *starts* within it. A thread that was running before the gap
//!    (or an IRQ whose exit was lost) is never blamed for it.
//! 4. **Timestamp slack.** Text timestamps are truncated to the
//!    microsecond ([`Options::ts_resolution_ns`], `res`): an event stamped
//!    `t` happened in `[t, t + res)`. A context stamped `[a, b]` may have
//!    run over `[a, b + res)`; it starts within the gap `(s, e]` when
//!    `a + res > s` and `a <= e`, and it is taken to cover
//!    `[a, b + res)` clipped to `[s, e]`.
//! 5. **Exclusive time.** Every nanosecond of the gap goes to exactly one
//!    bucket: the innermost context covering it (highest level; among equal
//!    levels the one that started last), or **unexplained** when none does.
//!    So an IRQ inside a preempting thread is the IRQ's time, not the
//!    thread's (osnoise's "net" durations), and the buckets add up to the
//!    gap's length. Unexplained time inside a gap that also has causes is
//!    the kernel's entry/exit paths around them, or a stall between them.
//! 6. **The class** of a gap is the kind of cause with the most time in
//!    it, unless its unexplained time, after an allowance of
//!    [`Options::overhead_ns`] per run of a cause (the untraced entry and
//!    exit paths of an interrupt or a context switch; on a VM they include
//!    the exits that deliver the interrupt), is larger still: then it is
//!    **unexplained**. A tie goes to the traced cause. A gap no context
//!    overlaps is unexplained, as osnoise counts it "HW"; unlike osnoise,
//!    a 1.7 ms hypervisor stall that began right after a tick is
//!    unexplained, not IRQ noise, while a 20 µs tick gap of which 11 µs
//!    are untraced VM exits stays the tick's. The allowance only picks the
//!    class: `unexplained_ns` is always the whole untraced time.
//! 7. **Lost events.** When the kernel dropped events of the CPU (a
//!    `CPU:N [LOST k EVENTS]` note, with or without its count:
//!    [`Timeline::lost`]), what happened between the last record of the CPU
//!    before the note and the first one after it is unknown. A gap that
//!    overlaps such a stretch is **lost** ("unknown (trace events lost)"),
//!    whatever was traced in it: its untraced time may be a cause whose
//!    events were dropped, so it is never counted as hardware
//!    ([`Tally::lost_ns`], apart from [`Tally::unexplained_ns`]).

use crate::parse::{Event, Record};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, VecDeque};

/// A gap between two clock reads of a spinning thread, longer than the
/// threshold: the thread lost the CPU (or the CPU lost time) from
/// `start_ns` (its last read before the gap, CLOCK_MONOTONIC ns) for
/// `len_ns`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct NoiseEvent {
    /// The last clock read before the gap (CLOCK_MONOTONIC ns).
    pub start_ns: u64,
    /// The gap: the next read minus `start_ns`.
    pub len_ns: u64,
}

impl NoiseEvent {
    /// The first clock read after the gap.
    pub fn end_ns(&self) -> u64 {
        self.start_ns.saturating_add(self.len_ns)
    }
}

/// What kind of kernel activity a cause is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CauseKind {
    /// A non-maskable interrupt (`nmi:nmi_handler`).
    Nmi,
    /// A hard IRQ: device handler, x86 vector or arm IPI (not the tick).
    Irq,
    /// The local timer interrupt running the scheduler tick.
    Tick,
    /// A softirq (`irq:softirq_entry/exit`).
    Softirq,
    /// Another task holding the CPU (`sched:sched_switch`).
    Thread,
}

impl CauseKind {
    /// Nesting level: an NMI interrupts a hard IRQ, which interrupts a
    /// softirq, which interrupts a task.
    fn level(self) -> u8 {
        match self {
            CauseKind::Nmi => 4,
            CauseKind::Irq | CauseKind::Tick => 3,
            CauseKind::Softirq => 2,
            CauseKind::Thread => 1,
        }
    }

    /// The class a gap gets when this kind holds most of it.
    pub fn class(self) -> Class {
        match self {
            CauseKind::Nmi => Class::Nmi,
            CauseKind::Irq => Class::Irq,
            CauseKind::Tick => Class::Tick,
            CauseKind::Softirq => Class::Softirq,
            CauseKind::Thread => Class::Thread,
        }
    }
}

/// The class of a gap: the kind that holds most of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    /// No kernel event explains most of it: hardware, firmware (SMI) or
    /// the hypervisor (osnoise's "HW").
    Unexplained,
    /// An NMI.
    Nmi,
    /// A hard IRQ other than the tick.
    Irq,
    /// The scheduler tick (osnoise counts it among the IRQs).
    Tick,
    /// A softirq.
    Softirq,
    /// Another thread.
    Thread,
    /// Unknown: the kernel dropped trace events of the CPU during the gap
    /// (rule 7), so neither a cause nor its absence can be told. Never
    /// hardware.
    Lost,
}

impl Class {
    /// The name as results.json spells it (`unexplained`, `nmi`, `irq`,
    /// `tick`, `softirq`, `thread`, `lost`).
    pub fn name(self) -> &'static str {
        match self {
            Class::Unexplained => "unexplained",
            Class::Nmi => "nmi",
            Class::Irq => "irq",
            Class::Tick => "tick",
            Class::Softirq => "softirq",
            Class::Thread => "thread",
            Class::Lost => "lost",
        }
    }

    /// The column of osnoise's summary it is counted in
    /// (`HW NMI IRQ SIRQ THREAD`; the tick is an IRQ there), and `LOST`,
    /// which osnoise does not have (its tracer loses no event unnoticed).
    pub fn column(self) -> &'static str {
        match self {
            Class::Unexplained => "HW",
            Class::Nmi => "NMI",
            Class::Irq | Class::Tick => "IRQ",
            Class::Softirq => "SIRQ",
            Class::Thread => "THREAD",
            Class::Lost => "LOST",
        }
    }
}

/// Who caused noise: what causes are summed by across gaps.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Source {
    /// The kind of activity.
    pub kind: CauseKind,
    /// IRQ handler (`virtio0-input`) or vector (`local_timer`), softirq
    /// action (`TIMER`), NMI handler function, or the thread's command name.
    pub name: String,
    /// IRQ number, vector number or softirq number; `None` for NMIs and
    /// threads.
    pub number: Option<u32>,
    /// The thread's pid (its TID); threads only.
    pub pid: Option<u32>,
    /// The thread's kernel priority as traced (0..99 real-time, 100..139
    /// fair, -1 deadline); threads only.
    pub kernel_prio: Option<i32>,
}

impl Source {
    /// One line for a person, numbers as osnoise writes them:
    /// `IRQ eth0-rx:24`, `tick (local_timer:236)`, `softirq TIMER:1`,
    /// `NMI perf_event_nmi_handler`, `thread kworker/1:1 (pid 77, nice 0)`.
    pub fn label(&self) -> String {
        let num = self.number.map(|n| format!(":{n}")).unwrap_or_default();
        match self.kind {
            CauseKind::Nmi => format!("NMI {}", self.name),
            CauseKind::Irq => format!("IRQ {}{num}", self.name),
            CauseKind::Tick => format!("tick ({}{num})", self.name),
            CauseKind::Softirq => format!("softirq {}{num}", self.name),
            CauseKind::Thread => format!(
                "thread {} (pid {}, {})",
                self.name,
                self.pid.unwrap_or(0),
                crate::priority_text(self.kernel_prio)
            ),
        }
    }
}

/// One cause of one gap.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cause {
    /// Who.
    pub source: Source,
    /// Its exclusive time inside the gap (nested contexts not counted).
    pub ns: u64,
    /// How many of its runs started inside the gap.
    pub runs: u32,
}

/// One gap, explained.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Explained {
    /// The gap.
    pub event: NoiseEvent,
    /// The kind holding most of it.
    pub class: Class,
    /// Longest first; empty for a gap no kernel event overlaps.
    pub causes: Vec<Cause>,
    /// Time no context covers: `event.len_ns` minus the causes' time.
    pub unexplained_ns: u64,
}

/// How the trace is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// Resolution of the trace timestamps (text: 1000 ns, the kernel
    /// prints microseconds for every ns clock); at least 1.
    pub ts_resolution_ns: u64,
    /// Untraced time allowed per run of a cause before a gap's
    /// unexplained time competes with its causes for the class (rule 6).
    pub overhead_ns: u64,
}

impl Options {
    /// The default allowance: 25 µs, above the ~11 µs of VM exits measured
    /// around a tick on the development VM, far below its 1.7 ms stalls.
    pub const DEFAULT_OVERHEAD_NS: u64 = 25_000;
}

impl Default for Options {
    fn default() -> Self {
        Options {
            ts_resolution_ns: 1_000,
            overhead_ns: Self::DEFAULT_OVERHEAD_NS,
        }
    }
}

/// A context of the timeline: traced times (start and end as stamped).
#[derive(Debug, Clone)]
struct Ctx {
    source: Source,
    start: u64,
    /// `None` while open.
    end: Option<u64>,
}

/// The contexts of one CPU, built from its records one at a time (a
/// trace read as a stream is fed as it comes), and the explanation of
/// gaps against them. Records of other CPUs are ignored.
#[derive(Debug, Clone)]
pub struct Timeline {
    cpu: u32,
    spinner: u32,
    opts: Options,
    /// Closed contexts, by start.
    done: VecDeque<Ctx>,
    hard: Option<Ctx>,
    soft: Option<Ctx>,
    thread: Option<Ctx>,
    /// The latest record of the CPU fed.
    last_ts: Option<u64>,
    /// Stretches where events of the CPU were lost (rule 7): from the
    /// last record before the loss note to the first one after it
    /// (`None` while none came yet), by start.
    lost: VecDeque<(u64, Option<u64>)>,
}

impl Timeline {
    /// The timeline of `cpu`, where the spinning thread is `spinner` (its
    /// TID: it is never a cause).
    pub fn new(cpu: u32, spinner: u32, opts: Options) -> Timeline {
        Timeline {
            cpu,
            spinner,
            opts: Options {
                ts_resolution_ns: opts.ts_resolution_ns.max(1),
                ..opts
            },
            done: VecDeque::new(),
            hard: None,
            soft: None,
            thread: None,
            last_ts: None,
            lost: VecDeque::new(),
        }
    }

    /// The CPU this timeline follows.
    pub fn cpu(&self) -> u32 {
        self.cpu
    }

    /// Contexts kept (closed or open), for tests and memory checks.
    pub fn len(&self) -> usize {
        self.done.len()
            + [&self.hard, &self.soft, &self.thread]
                .iter()
                .filter(|c| c.is_some())
                .count()
    }

    /// No context kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn close(&mut self, mut c: Ctx, at: u64) {
        c.end = Some(at.max(c.start));
        let i = self.done.partition_point(|d| d.start <= c.start);
        self.done.insert(i, c);
    }

    fn close_hard(&mut self, at: u64) {
        if let Some(c) = self.hard.take() {
            self.close(c, at);
        }
    }

    fn close_soft(&mut self, at: u64) {
        if let Some(c) = self.soft.take() {
            self.close(c, at);
        }
    }

    fn open_hard(&mut self, at: u64, kind: CauseKind, name: &str, number: Option<u32>) {
        self.close_hard(at);
        self.hard = Some(ctx(kind, name, number, at));
    }

    /// The kernel dropped events of this CPU after the last record fed
    /// (a `CPU:N [LOST k EVENTS]` note of this CPU, its count known or
    /// not): until the next record of the CPU, what happened is unknown
    /// (rule 7).
    pub fn lost(&mut self) {
        if self.lost.back().is_some_and(|l| l.1.is_none()) {
            return;
        }
        self.lost.push_back((self.last_ts.unwrap_or(0), None));
    }

    /// Feed the next record (in trace order).
    pub fn feed(&mut self, r: &Record) {
        if r.cpu != self.cpu {
            return;
        }
        let t = r.ts_ns;
        self.last_ts = Some(t);
        if let Some(open) = self.lost.back_mut().filter(|l| l.1.is_none()) {
            open.1 = Some(t.max(open.0));
        }
        match &r.event {
            Event::IrqHandlerEntry { irq, name } => {
                self.open_hard(t, CauseKind::Irq, name, Some(*irq));
            }
            Event::VectorEntry { name, vector } => {
                self.open_hard(t, CauseKind::Irq, name, Some(*vector));
            }
            Event::Ipi { name, fields } if name == "ipi_entry" => {
                self.open_hard(t, CauseKind::Irq, &ipi_reason(fields), None);
            }
            Event::IrqHandlerExit { irq, .. } if self.hard_is(|s| s.number == Some(*irq)) => {
                self.close_hard(t);
            }
            Event::VectorExit { name, .. } if self.hard_is(|s| s.name == *name) => {
                self.close_hard(t);
            }
            Event::Ipi { name, .. } if name == "ipi_exit" => self.close_hard(t),
            Event::HrtimerExpireEntry { function, .. } if function.starts_with("tick_") => {
                if let Some(h) = &mut self.hard {
                    h.source.kind = CauseKind::Tick;
                }
            }
            Event::SoftirqEntry { vec, action } => {
                self.close_hard(t);
                self.close_soft(t);
                self.soft = Some(ctx(CauseKind::Softirq, action, Some(*vec), t));
            }
            Event::SoftirqExit { .. } => self.close_soft(t),
            Event::SchedSwitch {
                next_comm,
                next_pid,
                next_prio,
                ..
            } => {
                self.close_hard(t);
                self.close_soft(t);
                if let Some(c) = self.thread.take() {
                    self.close(c, t);
                }
                if *next_pid != self.spinner && *next_pid != 0 {
                    let mut c = ctx(CauseKind::Thread, next_comm, None, t);
                    c.source.pid = Some(*next_pid);
                    c.source.kernel_prio = Some(*next_prio);
                    self.thread = Some(c);
                }
            }
            Event::Other { name, fields } if name == "nmi_handler" => {
                if let Some((handler, delta)) = nmi_fields(fields) {
                    let c = ctx(CauseKind::Nmi, &handler, None, t.saturating_sub(delta));
                    self.close(c, t);
                }
            }
            _ => {}
        }
    }

    fn hard_is(&self, f: impl Fn(&Source) -> bool) -> bool {
        self.hard.as_ref().is_some_and(|c| f(&c.source))
    }

    /// Drop the contexts that started before `ns` minus the timestamp
    /// slack: no gap starting at or after `ns` can be explained by them
    /// (rule 3). Keeps memory bounded when the trace is a stream.
    pub fn forget_before(&mut self, ns: u64) {
        let limit = ns.saturating_sub(self.opts.ts_resolution_ns);
        while self.done.front().is_some_and(|c| c.start < limit) {
            self.done.pop_front();
        }
        while self
            .lost
            .front()
            .is_some_and(|l| l.1.is_some_and(|end| end < limit))
        {
            self.lost.pop_front();
        }
    }

    /// Whether events of the CPU may have been lost within `(s, e]`: a
    /// lost stretch `(a, b)` holds events stamped after `a` and before
    /// `b`, which happened in `(a, b + res)`.
    fn lost_within(&self, s: u64, e: u64) -> bool {
        let res = self.opts.ts_resolution_ns;
        self.lost
            .iter()
            .any(|&(a, b)| a < e && b.is_none_or(|b| s < b.saturating_add(res)))
    }

    /// Explain one gap from the contexts fed so far (feed every record up
    /// to at least the end of the gap first).
    pub fn explain(&self, ev: &NoiseEvent) -> Explained {
        let res = self.opts.ts_resolution_ns;
        let (s, e) = (ev.start_ns, ev.end_ns());
        // Rule 3 (with rule 4's slack): started within (s, e].
        let first = self
            .done
            .partition_point(|c| c.start.saturating_add(res) <= s);
        let open = [&self.hard, &self.soft, &self.thread];
        let members: Vec<Span<'_>> = self
            .done
            .range(first..)
            .take_while(|c| c.start <= e)
            .chain(open.into_iter().flatten())
            .filter(|c| c.start.saturating_add(res) > s && c.start <= e)
            .map(|c| Span {
                src: &c.source,
                from: c.start.max(s),
                to: c.end.map_or(e, |x| x.saturating_add(res)).min(e),
                start: c.start,
            })
            .collect();
        let mut ns = vec![0u64; members.len()];
        let unexplained = sweep(s, e, &members, &mut ns);
        let mut x = explained(*ev, &members, &ns, unexplained, self.opts.overhead_ns);
        if self.lost_within(s, e) {
            x.class = Class::Lost;
        }
        x
    }
}

/// A context clipped to one gap.
struct Span<'a> {
    src: &'a Source,
    from: u64,
    to: u64,
    /// The traced start (orders equal levels: the later is innermost).
    start: u64,
}

/// Rule 5: give each elementary segment of `[s, e]` to the innermost span
/// covering it; returns the time no span covers.
fn sweep(s: u64, e: u64, spans: &[Span<'_>], ns: &mut [u64]) -> u64 {
    let mut cuts: Vec<u64> = Vec::with_capacity(2 + 2 * spans.len());
    cuts.push(s);
    cuts.push(e);
    for sp in spans.iter().filter(|sp| sp.from < sp.to) {
        cuts.push(sp.from);
        cuts.push(sp.to);
    }
    cuts.sort_unstable();
    cuts.dedup();
    let mut unexplained = 0;
    for w in cuts.windows(2) {
        let (a, b) = (w[0], w[1]);
        let inner = spans
            .iter()
            .enumerate()
            .filter(|(_, sp)| sp.from <= a && b <= sp.to)
            .max_by_key(|(i, sp)| (sp.src.kind.level(), sp.start, *i));
        match inner {
            Some((i, _)) => ns[i] += b - a,
            None => unexplained += b - a,
        }
    }
    unexplained
}

/// Merge the spans of one gap by source and pick its class (rule 6).
fn explained(
    event: NoiseEvent,
    spans: &[Span<'_>],
    ns: &[u64],
    unexplained: u64,
    overhead_ns: u64,
) -> Explained {
    let mut by: BTreeMap<&Source, (u64, u32)> = BTreeMap::new();
    for (sp, &t) in spans.iter().zip(ns) {
        let e = by.entry(sp.src).or_default();
        e.0 += t;
        e.1 += 1;
    }
    let mut causes: Vec<Cause> = by
        .into_iter()
        .map(|(src, (ns, runs))| Cause {
            source: src.clone(),
            ns,
            runs,
        })
        .collect();
    causes.sort_by(|a, b| b.ns.cmp(&a.ns).then_with(|| a.source.cmp(&b.source)));
    let mut per_kind: BTreeMap<CauseKind, u64> = BTreeMap::new();
    for c in &causes {
        *per_kind.entry(c.source.kind).or_default() += c.ns;
    }
    // The largest kind; on a tie the first in CauseKind order.
    let top = per_kind
        .iter()
        .max_by(|a, b| a.1.cmp(b.1).then_with(|| b.0.cmp(a.0)));
    let allowance = overhead_ns.saturating_mul(spans.len() as u64);
    let class = match top {
        Some((k, &t)) if t >= unexplained.saturating_sub(allowance) => k.class(),
        _ => Class::Unexplained,
    };
    Explained {
        event,
        class,
        causes,
        unexplained_ns: unexplained,
    }
}

fn ctx(kind: CauseKind, name: &str, number: Option<u32>, start: u64) -> Ctx {
    Ctx {
        source: Source {
            kind,
            name: name.to_string(),
            number,
            pid: None,
            kernel_prio: None,
        },
        start,
        end: None,
    }
}

/// `nmi_handler`'s fields, `perf_event_nmi_handler() delta_ns: 1234 handled: 1`
/// (older kernels print `handler=...`): the handler and its duration.
fn nmi_fields(fields: &str) -> Option<(String, u64)> {
    let delta = fields
        .split_once("delta_ns")?
        .1
        .trim_start_matches([':', '=', ' '])
        .split_whitespace()
        .next()?
        .parse::<i64>()
        .ok()?;
    let handler = fields
        .split_whitespace()
        .next()
        .unwrap_or("")
        .trim_start_matches("handler=")
        .trim_end_matches("()")
        .to_string();
    Some((handler, delta.max(0) as u64))
}

/// The reason of an arm `ipi_entry` (`(Rescheduling interrupts)`).
fn ipi_reason(fields: &str) -> String {
    let r = fields.trim().trim_start_matches('(').trim_end_matches(')');
    if r.is_empty() {
        "ipi".into()
    } else {
        format!("ipi: {r}")
    }
}

/// Explain every gap of `events` from the records of one CPU (all of them
/// fed first): the pure whole-trace form of [`Timeline`].
pub fn explain_all(
    records: &[Record],
    cpu: u32,
    spinner: u32,
    events: &[NoiseEvent],
    opts: Options,
) -> Vec<Explained> {
    let mut t = Timeline::new(cpu, spinner, opts);
    for r in records {
        t.feed(r);
    }
    events.iter().map(|e| t.explain(e)).collect()
}

/// What one line of a trace text is to the noise timelines.
#[derive(Debug, Clone, PartialEq)]
pub enum TextLine {
    /// An event: feed it to every [`Timeline`].
    Record(Record),
    /// The kernel dropped events of `cpu` (`CPU:N [LOST k EVENTS]`);
    /// `count` is `None` when the note does not say how many
    /// (`CPU:N [LOST EVENTS]`): call [`Timeline::lost`] on that CPU's.
    Lost {
        /// The CPU whose events were dropped.
        cpu: u32,
        /// How many, when the kernel said.
        count: Option<u64>,
    },
    /// A blank line, a comment, a header: nothing.
    Skip,
    /// A line that is none of the above (counted, skipped).
    Bad,
}

/// Read one line of a tracefs buffer (`trace` or `trace_pipe` text).
pub fn text_line(line: &str) -> TextLine {
    if let Some((cpu, count)) = crate::pair::lost_marker(line) {
        return TextLine::Lost { cpu, count };
    }
    let t = line.trim_start();
    if t.is_empty() || t.starts_with('#') || t.starts_with("CPU:") {
        return TextLine::Skip;
    }
    match crate::parse::parse_line(line) {
        Ok(r) => TextLine::Record(r),
        Err(_) => TextLine::Bad,
    }
}

/// Per-CPU totals over explained gaps: counts per class (osnoise's
/// columns) and the time of each source, for the "top offenders".
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tally {
    /// Gaps explained.
    pub gaps: u64,
    /// Gaps per class.
    pub by_class: BTreeMap<Class, u64>,
    /// Time no context covered, summed over the gaps, those of class
    /// [`Class::Lost`] apart: hardware, firmware, the hypervisor.
    pub unexplained_ns: u64,
    /// Time no context covered in the gaps of class [`Class::Lost`]:
    /// unknown (events were dropped there), never hardware.
    #[serde(default)]
    pub lost_ns: u64,
    /// Time and runs per source, summed over the gaps.
    pub by_source: BTreeMap<Source, SourceTotal>,
}

/// A source's share of one CPU's noise.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceTotal {
    /// Exclusive time inside gaps.
    pub ns: u64,
    /// Runs that started inside a gap.
    pub runs: u64,
    /// Gaps it took part in.
    pub gaps: u64,
    /// Its longest share of one gap.
    pub max_ns: u64,
}

impl Tally {
    /// Count one explained gap.
    pub fn add(&mut self, x: &Explained) {
        self.gaps += 1;
        *self.by_class.entry(x.class).or_default() += 1;
        if x.class == Class::Lost {
            self.lost_ns += x.unexplained_ns;
        } else {
            self.unexplained_ns += x.unexplained_ns;
        }
        for c in &x.causes {
            let t = self.by_source.entry(c.source.clone()).or_default();
            t.ns += c.ns;
            t.runs += u64::from(c.runs);
            t.gaps += 1;
            t.max_ns = t.max_ns.max(c.ns);
        }
    }

    /// Gaps counted in one of osnoise's columns (`HW`, `NMI`, `IRQ`,
    /// `SIRQ`, `THREAD`), or `LOST` ([`Class::column`]).
    pub fn column(&self, name: &str) -> u64 {
        self.by_class
            .iter()
            .filter(|(c, _)| c.column() == name)
            .map(|(_, n)| n)
            .sum()
    }

    /// The `n` sources with the most time, most first.
    pub fn top(&self, n: usize) -> Vec<(&Source, &SourceTotal)> {
        let mut v: Vec<_> = self.by_source.iter().collect();
        v.sort_by(|a, b| b.1.ns.cmp(&a.1.ns).then_with(|| a.0.cmp(b.0)));
        v.truncate(n);
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse;

    const SPIN: u32 = 500;

    fn ev(start_ns: u64, len_ns: u64) -> NoiseEvent {
        NoiseEvent { start_ns, len_ns }
    }

    fn explain(trace: &str, e: NoiseEvent) -> Explained {
        let recs = parse(trace).unwrap();
        explain_all(&recs, 1, SPIN, &[e], Options::default()).remove(0)
    }

    #[test]
    fn nmi_fields_both_forms() {
        assert_eq!(
            nmi_fields("perf_event_nmi_handler() delta_ns: 1234 handled: 1"),
            Some(("perf_event_nmi_handler".into(), 1234))
        );
        assert_eq!(
            nmi_fields("handler=nmi_cpu_backtrace_handler delta_ns=77 handled=0"),
            Some(("nmi_cpu_backtrace_handler".into(), 77))
        );
        assert_eq!(nmi_fields("garbage"), None);
    }

    #[test]
    fn loss_notes_with_and_without_a_count() {
        assert_eq!(
            text_line(" CPU:1 [LOST 12 EVENTS]"),
            TextLine::Lost {
                cpu: 1,
                count: Some(12)
            }
        );
        // The kernel's note when it cannot count (overwritten pages).
        assert_eq!(
            text_line("CPU:0 [LOST EVENTS]"),
            TextLine::Lost {
                cpu: 0,
                count: None
            }
        );
        assert_eq!(text_line("# tracer: nop"), TextLine::Skip);
        assert_eq!(text_line("CPU:1 something"), TextLine::Skip);
        assert_eq!(text_line("garbage"), TextLine::Bad);
        assert!(matches!(
            text_line("s-500 [001] d.h1. 1.000001: irq_handler_entry: irq=5 name=a"),
            TextLine::Record(_)
        ));
    }

    /// Feed trace text line by line as the noise session does: records to
    /// the timeline, loss notes of its CPU to [`Timeline::lost`].
    fn timeline_of(text: &str) -> Timeline {
        let mut tl = Timeline::new(1, SPIN, Options::default());
        for l in text.lines() {
            match text_line(l) {
                TextLine::Record(r) => tl.feed(&r),
                TextLine::Lost { cpu: 1, .. } => tl.lost(),
                _ => {}
            }
        }
        tl
    }

    #[test]
    fn a_gap_over_lost_events_is_lost_not_hardware() {
        // CPU 1's events between 800.000010 and 800.003000 were dropped
        // (the note comes before the first record after the loss); CPU 0's
        // note says nothing of CPU 1.
        let t = "s-500 [001] d.h1. 800.000009: irq_handler_entry: irq=5 name=a
                 s-500 [001] d.h1. 800.000010: irq_handler_exit: irq=5 ret=handled
                 CPU:0 [LOST 7 EVENTS]
                 x-1 [000] d.h1. 800.000500: irq_handler_entry: irq=6 name=b
                 CPU:1 [LOST 40 EVENTS]
                 s-500 [001] d.h1. 800.003000: irq_handler_entry: irq=5 name=a
                 s-500 [001] d.h1. 800.003001: irq_handler_exit: irq=5 ret=handled
";
        let tl = timeline_of(t);
        // 1.7 ms with no traced context, inside the stretch: lost.
        let x = tl.explain(&ev(800_001_000_000, 1_700_000));
        assert_eq!(x.class, Class::Lost);
        assert_eq!(x.class.column(), "LOST");
        assert_eq!(x.unexplained_ns, 1_700_000);
        // Overlapping its start or its end (its first record's µs) too.
        assert_eq!(tl.explain(&ev(800_000_005_000, 6_000)).class, Class::Lost);
        assert_eq!(tl.explain(&ev(800_003_000_500, 2_000)).class, Class::Lost);
        // Before and after it: as without a loss.
        let before = tl.explain(&ev(800_000_008_500, 1_000));
        assert_eq!(before.class, Class::Irq);
        assert_eq!(
            tl.explain(&ev(800_004_000_000, 1_700_000)).class,
            Class::Unexplained
        );
        let mut tally = Tally::default();
        tally.add(&x);
        tally.add(&tl.explain(&ev(800_004_000_000, 1_700_000)));
        assert_eq!((tally.column("LOST"), tally.column("HW")), (1, 1));
        assert_eq!(
            (tally.lost_ns, tally.unexplained_ns),
            (1_700_000, 1_700_000)
        );
    }

    #[test]
    fn a_loss_without_a_count_or_a_next_record_is_open_ended() {
        // `[LOST EVENTS]` (no count) after the last record: every later
        // gap is unknown until a record of CPU 1 comes.
        let t = "s-500 [001] d.h1. 900.000001: irq_handler_entry: irq=5 name=a
                 s-500 [001] d.h1. 900.000002: irq_handler_exit: irq=5 ret=handled
                 CPU:1 [LOST EVENTS]
";
        let mut tl = timeline_of(t);
        assert_eq!(
            tl.explain(&ev(950_000_000_000, 1_000_000)).class,
            Class::Lost
        );
        // Forgetting keeps an open stretch; a closed one goes once old.
        tl.forget_before(990_000_000_000);
        assert_eq!(tl.explain(&ev(995_000_000_000, 1_000)).class, Class::Lost);
        let r = crate::parse::parse_line(
            "s-500 [001] d.h1. 999.000000: irq_handler_entry: irq=5 name=a",
        )
        .unwrap();
        tl.feed(&r);
        tl.forget_before(999_100_000_000);
        assert_eq!(
            tl.explain(&ev(999_200_000_000, 1_000)).class,
            Class::Unexplained
        );
    }

    #[test]
    fn a_tick_inside_the_gap() {
        // Gap 100.000300 .. 100.002300 (2 µs); local_timer stamped 100.000
        // to 100.001, so it may have run over [100.000, 100.002): clipped to
        // the gap, 1.7 µs; 0.3 µs unexplained (the entry/exit path).
        let t = "s-500 [001] d.h1. 100.000000: local_timer_entry: vector=236\n\
                 s-500 [001] d.h2. 100.000000: hrtimer_expire_entry: hrtimer=0a now=100000000400 function=tick_nohz_handler\n\
                 s-500 [001] d.h1. 100.000001: local_timer_exit: vector=236\n";
        let x = explain(t, ev(100_000_000_300, 2_000));
        assert_eq!(x.class, Class::Tick);
        assert_eq!(x.causes.len(), 1);
        assert_eq!(x.causes[0].source.label(), "tick (local_timer:236)");
        assert_eq!(x.causes[0].ns, 1_700);
        assert_eq!(x.unexplained_ns, 300);
    }

    #[test]
    fn a_context_that_started_before_the_gap_is_not_a_cause() {
        // A thread switched in at 100.000 and never switched out, then the
        // spinner's gap at 100.500: the thread did not start in it.
        let t = "s-500 [001] d..2. 100.000000: sched_switch: prev_comm=s prev_pid=500 prev_prio=120 prev_state=R ==> next_comm=other next_pid=77 next_prio=120\n";
        let x = explain(t, ev(100_500_000_000, 1_700_000));
        assert_eq!(x.class, Class::Unexplained);
        assert!(x.causes.is_empty());
        assert_eq!(x.unexplained_ns, 1_700_000);
    }

    #[test]
    fn irq_inside_a_preempting_thread_is_the_irqs_time() {
        // Spinner reads at 200.000000, preempted at .000010 by a FIFO 99
        // thread (prio 0) that runs to .002010; a device IRQ inside it
        // .001000-.001004; back to the spinner, which reads at .002020.
        let t = "s-500 [001] d..2. 200.000010: sched_switch: prev_comm=s prev_pid=500 prev_prio=120 prev_state=R+ ==> next_comm=busy next_pid=9 next_prio=0\n\
                 busy-9 [001] d.h1. 200.001000: irq_handler_entry: irq=24 name=eth0\n\
                 busy-9 [001] d.h1. 200.001004: irq_handler_exit: irq=24 ret=handled\n\
                 busy-9 [001] d..2. 200.002010: sched_switch: prev_comm=busy prev_pid=9 prev_prio=0 prev_state=S ==> next_comm=s next_pid=500 next_prio=120\n";
        let x = explain(t, ev(200_000_000_000, 2_020_000));
        assert_eq!(x.class, Class::Thread);
        let thread = &x.causes[0];
        assert_eq!(thread.source.pid, Some(9));
        assert_eq!(thread.source.label(), "thread busy (pid 9, RT 99)");
        let irq = &x.causes[1];
        assert_eq!(irq.source.label(), "IRQ eth0:24");
        // IRQ [1000, 1004 + 1) µs = 5 µs; the thread [10, 2010 + 1) µs =
        // 2001 µs minus the IRQ's 5; unexplained [0, 10) and [2011, 2020).
        assert_eq!(irq.ns, 5_000);
        assert_eq!(thread.ns, 1_996_000);
        assert_eq!(x.unexplained_ns, 19_000);
        assert_eq!(thread.ns + irq.ns + x.unexplained_ns, x.event.len_ns);
    }

    #[test]
    fn a_long_stall_after_a_short_irq_is_unexplained() {
        // A 1.7 ms gap that starts with a 1 µs IRQ: osnoise would count an
        // IRQ; here the stall dominates.
        let t = "s-500 [001] d.h1. 300.000001: irq_handler_entry: irq=5 name=virtio0\n\
                 s-500 [001] d.h1. 300.000002: irq_handler_exit: irq=5 ret=handled\n";
        let x = explain(t, ev(300_000_000_500, 1_700_000));
        assert_eq!(x.class, Class::Unexplained);
        assert_eq!(x.causes.len(), 1);
        assert_eq!(x.causes[0].ns, 2_000);
        assert_eq!(x.unexplained_ns, 1_698_000);
    }

    #[test]
    fn a_tick_with_its_vm_exits_stays_the_ticks() {
        // As recorded on the development VM: a 20.4 µs gap, the tick
        // stamped over 8 µs (taken as 9), 11.4 µs untraced around it: within
        // the 25 µs allowance of one run, so the class is the tick's.
        let t = "s-500 [001] d.h1. 700.000003: local_timer_entry: vector=236
                 s-500 [001] d.h2. 700.000004: hrtimer_expire_entry: hrtimer=0a now=700000004000 function=tick_nohz_handler
                 s-500 [001] d.h1. 700.000011: local_timer_exit: vector=236
";
        let x = explain(t, ev(700_000_000_000, 20_400));
        assert_eq!(x.class, Class::Tick);
        assert_eq!((x.causes[0].ns, x.unexplained_ns), (9_000, 11_400));
        // Without the allowance the untraced part would win.
        let recs = parse(t).unwrap();
        let strict = Options {
            overhead_ns: 0,
            ..Options::default()
        };
        let x = explain_all(&recs, 1, SPIN, &[ev(700_000_000_000, 20_400)], strict);
        assert_eq!(x[0].class, Class::Unexplained);
    }

    #[test]
    fn nmi_and_softirq_and_missing_exits() {
        // A softirq with its exit lost, closed by a sched_switch; an NMI
        // 3 µs long ending at .000008 nested in it.
        let t = "s-500 [001] ..s1. 400.000002: softirq_entry: vec=1 [action=TIMER]\n\
                 s-500 [001] d.Z1. 400.000008: nmi_handler: perf_event_nmi_handler() delta_ns: 3000 handled: 1\n\
                 s-500 [001] d..2. 400.000020: sched_switch: prev_comm=s prev_pid=500 prev_prio=120 prev_state=R ==> next_comm=s next_pid=500 next_prio=120\n";
        let x = explain(t, ev(400_000_001_500, 20_000));
        let label: Vec<(String, u64)> = x.causes.iter().map(|c| (c.source.label(), c.ns)).collect();
        // NMI [5, 8+1) µs = 4 µs; softirq [2, 20+1) clipped to 21.5: 19 µs
        // minus the NMI's 4.
        assert_eq!(
            label,
            vec![
                ("softirq TIMER:1".to_string(), 15_000),
                ("NMI perf_event_nmi_handler".to_string(), 4_000)
            ]
        );
        assert_eq!(x.class, Class::Softirq);
        assert_eq!(x.unexplained_ns, 1_000);
    }

    #[test]
    fn other_cpus_and_the_spinner_itself_are_never_causes() {
        let t = "x-1 [000] d.h1. 500.000001: irq_handler_entry: irq=5 name=virtio0\n\
                 x-1 [000] d.h1. 500.000009: irq_handler_exit: irq=5 ret=handled\n\
                 s-500 [001] d..2. 500.000002: sched_switch: prev_comm=s prev_pid=500 prev_prio=120 prev_state=R ==> next_comm=swapper/1 next_pid=0 next_prio=120\n\
                 s-500 [001] d..2. 500.000003: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=s next_pid=500 next_prio=120\n";
        let x = explain(t, ev(500_000_000_000, 10_000));
        assert!(x.causes.is_empty());
        assert_eq!(x.class, Class::Unexplained);
    }

    #[test]
    fn forgetting_keeps_what_later_gaps_need() {
        let t = "s-500 [001] d.h1. 600.000001: irq_handler_entry: irq=5 name=a\n\
                 s-500 [001] d.h1. 600.000002: irq_handler_exit: irq=5 ret=handled\n\
                 s-500 [001] d.h1. 600.000101: irq_handler_entry: irq=6 name=b\n\
                 s-500 [001] d.h1. 600.000102: irq_handler_exit: irq=6 ret=handled\n";
        let mut tl = Timeline::new(1, SPIN, Options::default());
        for r in parse(t).unwrap() {
            tl.feed(&r);
        }
        assert_eq!(tl.len(), 2);
        tl.forget_before(600_000_100_500);
        assert_eq!(tl.len(), 1);
        let x = tl.explain(&ev(600_000_100_500, 3_000));
        assert_eq!(x.causes[0].source.name, "b");
    }

    #[test]
    fn tally_counts_columns_and_offenders() {
        let mut t = Tally::default();
        let src = |kind, name: &str| Source {
            kind,
            name: name.into(),
            number: Some(1),
            pid: None,
            kernel_prio: None,
        };
        let x = |class, causes: Vec<Cause>| Explained {
            event: ev(0, 10),
            class,
            causes,
            unexplained_ns: 1,
        };
        t.add(&x(
            Class::Tick,
            vec![Cause {
                source: src(CauseKind::Tick, "lt"),
                ns: 7,
                runs: 1,
            }],
        ));
        t.add(&x(
            Class::Irq,
            vec![Cause {
                source: src(CauseKind::Irq, "n"),
                ns: 9,
                runs: 2,
            }],
        ));
        t.add(&x(Class::Unexplained, vec![]));
        assert_eq!(
            (t.column("IRQ"), t.column("HW"), t.column("THREAD")),
            (2, 1, 0)
        );
        assert_eq!(t.unexplained_ns, 3);
        let top = t.top(1);
        assert_eq!(top[0].0.name, "n");
        assert_eq!((top[0].1.ns, top[0].1.runs, top[0].1.gaps), (9, 2, 1));
    }
}
