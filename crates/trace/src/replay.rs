//! The CPU replayed event by event over a spike's window, every
//! nanosecond of it attributed to an interrupt context, a thread, or
//! nothing traced.

use crate::analyse::{priority_text, Item, ItemKind, ThreadItem};
use crate::parse::{Event, Record};

struct Ctx {
    kind: ItemKind,
    name: String,
    number: Option<u32>,
    start: u64,
}

#[derive(Clone)]
struct Task {
    comm: String,
    pid: u32,
}

#[derive(Default)]
pub(crate) struct Acc {
    pub(crate) items: Vec<Item>,
    pub(crate) threads: Vec<ThreadItem>,
    pub(crate) unaccounted: u64,
}

impl Acc {
    fn item(&mut self, kind: ItemKind, name: &str, number: Option<u32>) -> &mut Item {
        let i = match self
            .items
            .iter()
            .position(|it| it.kind == kind && it.name == name && it.number == number)
        {
            Some(i) => i,
            None => {
                self.items.push(Item {
                    kind,
                    name: name.to_string(),
                    number,
                    count: 0,
                    total_ns: 0,
                    max_ns: 0,
                });
                self.items.len() - 1
            }
        };
        &mut self.items[i]
    }

    fn thread(&mut self, t: &Task, prio: Option<i32>) -> &mut ThreadItem {
        let i = match self
            .threads
            .iter()
            .position(|x| x.pid == t.pid && x.comm == t.comm)
        {
            Some(i) => i,
            None => {
                self.threads.push(ThreadItem {
                    comm: t.comm.clone(),
                    pid: t.pid,
                    kernel_prio: prio,
                    priority: priority_text(prio),
                    ns: 0,
                    works: Vec::new(),
                });
                self.threads.len() - 1
            }
        };
        &mut self.threads[i]
    }
}

/// The context an event opens or closes, if any.
fn context(ev: &Event) -> Option<(bool, ItemKind, String, Option<u32>)> {
    Some(match ev {
        Event::IrqHandlerEntry { irq, name } => (true, ItemKind::Irq, name.clone(), Some(*irq)),
        Event::IrqHandlerExit { irq, .. } => (false, ItemKind::Irq, String::new(), Some(*irq)),
        Event::SoftirqEntry { vec, action } => {
            (true, ItemKind::Softirq, action.clone(), Some(*vec))
        }
        Event::SoftirqExit { vec, .. } => (false, ItemKind::Softirq, String::new(), Some(*vec)),
        Event::VectorEntry { name, vector } => {
            (true, ItemKind::Vector, name.clone(), Some(*vector))
        }
        Event::VectorExit { vector, .. } => (false, ItemKind::Vector, String::new(), Some(*vector)),
        Event::Ipi { name, fields } if name == "ipi_entry" || name == "ipi_exit" => {
            let reason = fields.trim().trim_start_matches('(').trim_end_matches(')');
            (name == "ipi_entry", ItemKind::Ipi, reason.to_string(), None)
        }
        _ => return None,
    })
}

/// `r` was recorded while `pid` was the current task (a line's own pid
/// is the current task's, whatever the event).
pub(crate) fn runs_as(r: &Record, pid: u32) -> bool {
    r.pid == pid
}

/// [`attribute`] for `[from, to)`, with the part before `irq_due` (the
/// timer expiry) outside interrupt context counted as unaccounted.
fn attribute_span(
    acc: &mut Acc,
    stack: &[Ctx],
    current: Option<&Task>,
    from: u64,
    to: u64,
    irq_due: u64,
    prio_of: &dyn Fn(u32) -> Option<i32>,
) {
    let cut = irq_due.clamp(from, to);
    if cut > from {
        if stack.is_empty() {
            acc.unaccounted += cut - from;
        } else {
            attribute(acc, stack, current, cut - from, prio_of);
        }
    }
    if to > cut {
        attribute(acc, stack, current, to - cut, prio_of);
    }
}

fn attribute(
    acc: &mut Acc,
    stack: &[Ctx],
    current: Option<&Task>,
    d: u64,
    prio_of: &dyn Fn(u32) -> Option<i32>,
) {
    if let Some(top) = stack.last() {
        acc.item(top.kind, &top.name, top.number).total_ns += d;
        return;
    }
    match current {
        Some(task) if task.pid != 0 => acc.thread(task, prio_of(task.pid)).ns += d,
        // Idle, or nothing known: no event explains the time.
        _ => acc.unaccounted += d,
    }
}

/// What the replay needs to know about the spike.
pub(crate) struct Window<'p> {
    /// The CPU replayed.
    pub cpu: u32,
    /// The late thread.
    pub pid: u32,
    /// The expected wake-up: the window opens here.
    pub expected_ns: u64,
    /// The late thread's switch-in: the window closes here.
    pub switch_in: u64,
    /// The index of the switch-in record: the replay stops after it.
    pub sw_idx: usize,
    /// Before this, outside interrupt context, the time is the timer
    /// interrupt not being delivered (unaccounted).
    pub irq_due: u64,
    /// Kernel priority of a task (for the thread table).
    pub prio_of: &'p dyn Fn(u32) -> Option<i32>,
}

/// The replay state: the current task, the open interrupt contexts, and
/// the time attributed so far.
struct Replay<'w, 'p> {
    w: &'w Window<'p>,
    current: Option<Task>,
    stack: Vec<Ctx>,
    acc: Acc,
    /// Attributed up to here.
    t: u64,
    in_window: bool,
}

/// Replay the CPU up to the window, then attribute every ns in it.
pub(crate) fn replay(records: &[Record], w: &Window) -> Acc {
    let mut r = Replay {
        w,
        current: None,
        stack: Vec::new(),
        acc: Acc::default(),
        t: w.expected_ns,
        in_window: false,
    };
    for rec in records.iter().take(w.sw_idx + 1).filter(|x| x.cpu == w.cpu) {
        r.step(rec);
    }
    r.finish()
}

impl Replay<'_, '_> {
    fn step(&mut self, r: &Record) {
        if !self.in_window && r.ts_ns >= self.w.expected_ns {
            self.open_window(r);
        }
        // Every line names the task that was current when it was recorded.
        // Idle "current" and a line of another task with no switch traced
        // in between: the switch out of idle, which this kernel does not
        // trace (see `split`). That task has run since the previous event
        // (idle switches to a woken task at once): count the gap as its.
        if r.pid != 0
            && r.pid != self.w.pid
            && self.current.as_ref().is_some_and(|c| c.pid == 0)
            && !matches!(r.event, Event::SchedSwitch { .. })
        {
            self.current = Some(Task {
                comm: r.comm.clone(),
                pid: r.pid,
            });
        }
        if self.in_window {
            let end = r.ts_ns.min(self.w.switch_in);
            self.attribute_to(end);
        }
        // Process-context events: no interrupt context can still be open;
        // real traces lose exits (some vectors never trace theirs), and an
        // entry left open would swallow the rest of the window.
        if matches!(
            r.event,
            Event::SchedSwitch { .. } | Event::WorkqueueStart { .. } | Event::WorkqueueEnd { .. }
        ) {
            self.stack.clear();
        }
        if let Some((open, kind, name, number)) = context(&r.event) {
            if open {
                self.enter(r, kind, name, number);
            } else {
                self.leave(r, kind, number);
            }
        }
        self.task_event(r);
    }

    /// What the CPU was doing when the window opened.
    fn open_window(&mut self, r: &Record) {
        self.in_window = true;
        if self.current.is_none() {
            self.current = Some(Task {
                comm: r.comm.clone(),
                pid: r.pid,
            });
        }
        for c in &self.stack {
            self.acc.item(c.kind, &c.name, c.number).count += 1;
        }
    }

    /// Attribute `[t, end)` and move `t` there.
    fn attribute_to(&mut self, end: u64) {
        if end > self.t {
            attribute_span(
                &mut self.acc,
                &self.stack,
                self.current.as_ref(),
                self.t,
                end,
                self.w.irq_due,
                self.w.prio_of,
            );
            self.t = end;
        }
    }

    /// An interrupt context opens.
    fn enter(&mut self, r: &Record, kind: ItemKind, name: String, number: Option<u32>) {
        // The same IRQ or vector does not nest in itself: an open one has
        // ended without its exit being traced.
        if kind != ItemKind::Ipi {
            if let Some(pos) = self
                .stack
                .iter()
                .position(|c| c.kind == kind && c.number == number)
            {
                self.stack.truncate(pos);
            }
        }
        if self.in_window {
            self.acc.item(kind, &name, number).count += 1;
        }
        self.stack.push(Ctx {
            kind,
            name,
            number,
            start: r.ts_ns,
        });
    }

    /// An interrupt context closes (and any opened inside it whose exit
    /// was lost).
    fn leave(&mut self, r: &Record, kind: ItemKind, number: Option<u32>) {
        if let Some(pos) = self
            .stack
            .iter()
            .rposition(|c| c.kind == kind && (kind == ItemKind::Ipi || c.number == number))
        {
            let c = self.stack.remove(pos);
            self.stack.truncate(pos);
            if self.in_window {
                let it = self.acc.item(c.kind, &c.name, c.number);
                it.max_ns = it.max_ns.max(r.ts_ns.saturating_sub(c.start));
            }
        }
    }

    /// A switch changes the current task; a work item names what a
    /// kworker ran.
    fn task_event(&mut self, r: &Record) {
        match &r.event {
            Event::SchedSwitch {
                next_comm,
                next_pid,
                ..
            } => {
                self.current = Some(Task {
                    comm: next_comm.clone(),
                    pid: *next_pid,
                })
            }
            Event::WorkqueueStart { function, .. } if self.in_window => {
                if let Some(cur) = self.current.clone() {
                    if cur.pid != 0 {
                        let th = self.acc.thread(&cur, (self.w.prio_of)(cur.pid));
                        if !th.works.contains(function) {
                            th.works.push(function.clone());
                        }
                    }
                }
            }
            _ => {}
        }
    }

    /// Close the window at the switch-in; largest contributors first.
    fn finish(mut self) -> Acc {
        if !self.in_window {
            for c in &self.stack {
                self.acc.item(c.kind, &c.name, c.number).count += 1;
            }
        }
        self.attribute_to(self.w.switch_in);
        for c in &self.stack {
            let it = self.acc.item(c.kind, &c.name, c.number);
            it.max_ns = it.max_ns.max(self.w.switch_in.saturating_sub(c.start));
        }
        self.acc
            .items
            .sort_by_key(|i| std::cmp::Reverse(i.total_ns));
        self.acc.threads.sort_by_key(|t| std::cmp::Reverse(t.ns));
        self.acc
    }
}
