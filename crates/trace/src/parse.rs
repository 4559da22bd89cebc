//! The ftrace text format, one event a line:
//!
//! ```text
//!  stress-ng-cpu-4242  [001] d.h1.  1234.567890: hrtimer_expire_entry:
//! hrtimer=00000000a1b2c3d4 now=1234567890123 function=hrtimer_wakeup
//! ```
//!
//! `comm-pid`, an optional `(tgid)` column, `[cpu]`, optional irq-info
//! flags, `seconds.fraction:` (microseconds with the usual clocks; up to 9
//! digits are accepted), the event name, then its fields. The command name
//! may hold spaces and dashes: the pid is what follows the **last** dash.

use serde::{Deserialize, Serialize};

/// One parsed trace line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    /// The task that was current when the event was recorded.
    pub comm: String,
    /// The task's thread id.
    pub pid: u32,
    /// The CPU the event happened on.
    pub cpu: u32,
    /// Trace clock time in ns (`mono` clock in rtshield's instance, so it
    /// compares with CLOCK_MONOTONIC; microsecond resolution in text).
    pub ts_ns: u64,
    /// What happened.
    pub event: Event,
}

/// The events the analysis understands; everything else is [`Event::Other`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// `timer:hrtimer_start`: a timer armed.
    HrtimerStart {
        /// The timer's address (`hrtimer=0x…`), which ties start and expiry.
        hrtimer: String,
        /// The callback it runs (`hrtimer_wakeup` for a sleeping thread).
        function: String,
        /// Absolute expiry in the timer's clock base, ns (with the
        /// task's timer slack added).
        expires_ns: Option<u64>,
        /// The requested expiry (`softexpires=`), ns: exactly the
        /// deadline a sleeping thread asked for.
        softexpires_ns: Option<u64>,
    },
    /// `timer:hrtimer_expire_entry`: a timer's callback starts.
    HrtimerExpireEntry {
        /// The timer's address.
        hrtimer: String,
        /// The callback it runs.
        function: String,
        /// The timer base's clock at expiry, ns (more precise than `ts_ns`).
        now_ns: Option<u64>,
    },
    /// `timer:hrtimer_expire_exit`: a timer's callback returned.
    HrtimerExpireExit {
        /// The timer's address.
        hrtimer: String,
    },
    /// `sched:sched_waking`: a task is being woken (on the waker's CPU).
    SchedWaking {
        /// The woken task's name.
        comm: String,
        /// The woken task's id.
        pid: u32,
        /// Its kernel priority (0..99 real-time, 100..139 fair).
        prio: i32,
        /// The CPU it will run on, when the event says.
        target_cpu: Option<u32>,
    },
    /// `sched:sched_wakeup` (or `sched_wakeup_new`): a woken task is
    /// runnable.
    SchedWakeup {
        /// The woken task's name.
        comm: String,
        /// The woken task's id.
        pid: u32,
        /// Its kernel priority.
        prio: i32,
        /// The CPU it will run on, when the event says.
        target_cpu: Option<u32>,
    },
    /// `sched:sched_switch`: the CPU goes from one task to another.
    SchedSwitch {
        /// The task leaving the CPU.
        prev_comm: String,
        /// Its id.
        prev_pid: u32,
        /// Its kernel priority.
        prev_prio: i32,
        /// Its state as it leaves (`R`, `S`, `D`, `R+` when preempted).
        prev_state: String,
        /// The task getting the CPU.
        next_comm: String,
        /// Its id.
        next_pid: u32,
        /// Its kernel priority.
        next_prio: i32,
    },
    /// `irq:irq_handler_entry`: a device IRQ's handler starts.
    IrqHandlerEntry {
        /// The IRQ number.
        irq: u32,
        /// The handler's name (`virtio1-req.0`).
        name: String,
    },
    /// `irq:irq_handler_exit`: the handler returned.
    IrqHandlerExit {
        /// The IRQ number.
        irq: u32,
        /// What it returned (`handled`, `unhandled`).
        ret: String,
    },
    /// `irq:softirq_entry`: a softirq starts.
    SoftirqEntry {
        /// The softirq number (0 HI … 9 RCU).
        vec: u32,
        /// Its name (`TIMER`, `NET_RX`, `SCHED`).
        action: String,
    },
    /// `irq:softirq_exit`: the softirq ended.
    SoftirqExit {
        /// The softirq number.
        vec: u32,
        /// Its name.
        action: String,
    },
    /// `irq_vectors:*_entry` (x86: `local_timer`, `reschedule`, ...).
    VectorEntry {
        /// The event's name without `_entry` (`local_timer`).
        name: String,
        /// The vector number.
        vector: u32,
    },
    /// `irq_vectors:*_exit`.
    VectorExit {
        /// The event's name without `_exit`.
        name: String,
        /// The vector number.
        vector: u32,
    },
    /// `ipi:*` (`ipi_raise`, `ipi_entry`, `ipi_exit`, `ipi_send_cpu`, ...).
    Ipi {
        /// The event's name (`ipi_entry`).
        name: String,
        /// Its fields, as traced.
        fields: String,
    },
    /// `workqueue:workqueue_execute_start`: a kworker runs a work item.
    WorkqueueStart {
        /// The work item's address.
        work: String,
        /// The function it runs.
        function: String,
    },
    /// `workqueue:workqueue_execute_end`: the work item returned.
    WorkqueueEnd {
        /// The work item's address.
        work: String,
        /// The function it ran.
        function: String,
    },
    /// A `trace_marker` write (`tracing_mark_write`) or a kernel `print`.
    Print {
        /// The text written.
        text: String,
    },
    /// Any other event, kept by name.
    Other {
        /// The event's name as traced (`irq_work_entry`).
        name: String,
        /// Its fields, as traced.
        fields: String,
    },
}

/// A line that is not a trace event; names the 1-based line and column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// 1-based line of the bad text.
    pub line: usize,
    /// 1-based column (in characters) where it stops making sense.
    pub col: usize,
    /// What is wrong, in words.
    pub msg: String,
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.col, self.msg)
    }
}

impl std::error::Error for ParseError {}

/// Parse a whole `trace` file. Comment (`#`) and blank lines are skipped,
/// and so are the kernel's `CPU:N [LOST n EVENTS]` notes; any other line
/// that is not an event is an error naming its line.
pub fn parse(text: &str) -> Result<Vec<Record>, ParseError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') || (t.starts_with("CPU:") && t.contains("LOST")) {
            continue;
        }
        match parse_line(line) {
            Ok(r) => out.push(r),
            Err((col, msg)) => {
                return Err(ParseError {
                    line: i + 1,
                    col,
                    msg,
                })
            }
        }
    }
    Ok(out)
}

/// The events of a `trace` file from about `from_ns` on: the lines before
/// it are skipped unparsed (a binary search on their timestamps: the file
/// is in time order), lines that are not events are skipped. For
/// explaining a spike in a large buffer without parsing all of it; the
/// caller leaves a margin before the window (the replay wants the
/// current task and open interrupts).
pub fn parse_from(text: &str, from_ns: u64) -> Vec<Record> {
    let lines: Vec<&str> = text.lines().collect();
    let ts = |i: usize| -> Option<u64> {
        let l = lines[i].trim_start();
        if l.is_empty() || l.starts_with('#') {
            return None;
        }
        parse_line(lines[i]).ok().map(|r| r.ts_ns)
    };
    // First line whose timestamp is >= from_ns; lines without one (the
    // header, `LOST` notes) count as earlier.
    let (mut lo, mut hi) = (0, lines.len());
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        // The nearest line with a timestamp at or after mid.
        match (mid..hi).find_map(|j| ts(j).map(|t| (j, t))) {
            Some((_, t)) if t >= from_ns => hi = mid,
            Some((j, _)) => lo = j + 1,
            None => hi = mid,
        }
    }
    lines[lo..]
        .iter()
        .filter_map(|l| parse_line(l).ok())
        .collect()
}

/// Parse one event line; the error is (1-based column, message).
pub fn parse_line(line: &str) -> Result<Record, (usize, String)> {
    let (cpu_start, cpu_end, cpu) = find_cpu(line).ok_or((1, "no `[cpu]` field".to_string()))?;
    let mut task = line[..cpu_start].trim_end();
    // Optional TGID column `(  123)` or `(-------)`.
    if task.ends_with(')') {
        if let Some(open) = task.rfind('(') {
            task = task[..open].trim_end();
        }
    }
    let task = task.trim_start();
    let (comm, pid) = task
        .rsplit_once('-')
        .ok_or((1, format!("`{task}` is not comm-pid")))?;
    let pid: u32 = pid
        .parse()
        .map_err(|_| (1, format!("bad pid `{pid}` in `{task}`")))?;
    // After `[cpu]`: optional flags, then the `secs.frac:` timestamp.
    let rest = &line[cpu_end..];
    let mut pos = cpu_end;
    let mut ts = None;
    let mut off = 0;
    for tok in rest.split_whitespace() {
        let at = rest[off..].find(tok).map(|p| p + off).unwrap_or(off);
        off = at + tok.len();
        if let Some(num) = tok.strip_suffix(':') {
            if let Some(v) = parse_ts(num) {
                ts = Some(v);
                pos = cpu_end + off;
                break;
            }
        }
    }
    let ts_ns = ts.ok_or((cpu_end + 1, "no `seconds.fraction:` timestamp".to_string()))?;
    let body = line[pos..].trim_start();
    // Columns point at the event name.
    let pos = line.len() - body.len();
    let (name, fields) = match body.find(':') {
        Some(c) => (body[..c].trim(), body[c + 1..].trim()),
        None => return Err((pos + 1, "no `event:` name".to_string())),
    };
    if name.is_empty() || name.contains(char::is_whitespace) {
        return Err((pos + 1, format!("bad event name `{name}`")));
    }
    let event = event(name, fields).map_err(|m| (pos + 1, format!("{name}: {m}")))?;
    Ok(Record {
        comm: comm.to_string(),
        pid,
        cpu,
        ts_ns,
        event,
    })
}

/// The `[NNN]` CPU field: the first bracketed number preceded by a space.
fn find_cpu(line: &str) -> Option<(usize, usize, u32)> {
    let b = line.as_bytes();
    let mut i = 0;
    while let Some(p) = line[i..].find('[') {
        let s = i + p;
        if s > 0 && b[s - 1] == b' ' {
            if let Some(len) = line[s + 1..].find(']') {
                let inner = &line[s + 1..s + 1 + len];
                if !inner.is_empty() && inner.bytes().all(|c| c.is_ascii_digit()) {
                    if let Ok(cpu) = inner.parse() {
                        return Some((s, s + len + 2, cpu));
                    }
                }
            }
        }
        i = s + 1;
    }
    None
}

/// `1234.567890` (µs) or up to 9 fraction digits, or a bare counter, to ns.
fn parse_ts(s: &str) -> Option<u64> {
    let (secs, frac) = match s.split_once('.') {
        Some((a, b)) => (a, b),
        None => (s, ""),
    };
    if secs.is_empty()
        || !secs.bytes().all(|c| c.is_ascii_digit())
        || frac.len() > 9
        || !frac.bytes().all(|c| c.is_ascii_digit())
    {
        return None;
    }
    let secs: u64 = secs.parse().ok()?;
    let mut f: u64 = if frac.is_empty() {
        0
    } else {
        frac.parse().ok()?
    };
    for _ in frac.len()..9 {
        f *= 10;
    }
    secs.checked_mul(1_000_000_000)?.checked_add(f)
}

/// `key=value` fields; a word without `=` continues the previous value
/// (command names may hold spaces).
fn kv(fields: &str) -> Vec<(&str, String)> {
    let mut out: Vec<(&str, String)> = Vec::new();
    for tok in fields.split_whitespace() {
        // `[action=TIMER]` (softirq) is a field too.
        let field = match tok.strip_prefix('[') {
            Some(t) => t.trim_end_matches(']'),
            None => tok,
        };
        match field.split_once('=') {
            Some((k, v)) if !k.is_empty() => out.push((k, v.to_string())),
            _ => {
                if let Some(last) = out.last_mut() {
                    last.1.push(' ');
                    last.1.push_str(tok);
                }
            }
        }
    }
    out
}

fn get<'a>(f: &'a [(&str, String)], k: &str) -> Option<&'a str> {
    f.iter().find(|(key, _)| *key == k).map(|(_, v)| v.as_str())
}

fn req<'a>(f: &'a [(&str, String)], k: &str) -> Result<&'a str, String> {
    get(f, k).ok_or_else(|| format!("no `{k}=` field"))
}

fn num<T: std::str::FromStr>(f: &[(&str, String)], k: &str) -> Result<T, String> {
    let v = req(f, k)?;
    v.parse().map_err(|_| format!("bad `{k}={v}`"))
}

/// `prev_... ==> next_...`; split first so that a command name holding
/// `=` on one side cannot confuse the other.
fn sched_switch(fields: &str) -> Result<Event, String> {
    let (p, n) = fields
        .split_once("==>")
        .ok_or_else(|| "no `==>`".to_string())?;
    let (p, n) = (kv(p), kv(n));
    Ok(Event::SchedSwitch {
        prev_comm: req(&p, "prev_comm")?.to_string(),
        prev_pid: num(&p, "prev_pid")?,
        prev_prio: num(&p, "prev_prio")?,
        prev_state: get(&p, "prev_state").unwrap_or("").to_string(),
        next_comm: req(&n, "next_comm")?.to_string(),
        next_pid: num(&n, "next_pid")?,
        next_prio: num(&n, "next_prio")?,
    })
}

/// `work struct 00000000abcd: function vmstat_update`
fn workqueue(name: &str, fields: &str) -> Event {
    let work = fields
        .strip_prefix("work struct")
        .unwrap_or(fields)
        .split(':')
        .next()
        .unwrap_or("")
        .trim()
        .to_string();
    let function = fields
        .split("function ")
        .nth(1)
        .unwrap_or("")
        .trim()
        .to_string();
    if name == "workqueue_execute_start" {
        Event::WorkqueueStart { work, function }
    } else {
        Event::WorkqueueEnd { work, function }
    }
}

fn event(name: &str, fields: &str) -> Result<Event, String> {
    let f = kv(fields);
    Ok(match name {
        "hrtimer_start" => Event::HrtimerStart {
            hrtimer: req(&f, "hrtimer")?.to_string(),
            function: get(&f, "function").unwrap_or("").to_string(),
            expires_ns: get(&f, "expires").and_then(|v| v.parse().ok()),
            softexpires_ns: get(&f, "softexpires").and_then(|v| v.parse().ok()),
        },
        "hrtimer_expire_entry" => Event::HrtimerExpireEntry {
            hrtimer: req(&f, "hrtimer")?.to_string(),
            function: get(&f, "function").unwrap_or("").to_string(),
            now_ns: get(&f, "now").and_then(|v| v.parse().ok()),
        },
        "hrtimer_expire_exit" => Event::HrtimerExpireExit {
            hrtimer: req(&f, "hrtimer")?.to_string(),
        },
        "sched_waking" | "sched_wakeup" | "sched_wakeup_new" => {
            let comm = req(&f, "comm")?.to_string();
            let pid = num(&f, "pid")?;
            let prio = num(&f, "prio")?;
            let target_cpu = get(&f, "target_cpu").and_then(|v| v.parse().ok());
            if name == "sched_waking" {
                Event::SchedWaking {
                    comm,
                    pid,
                    prio,
                    target_cpu,
                }
            } else {
                Event::SchedWakeup {
                    comm,
                    pid,
                    prio,
                    target_cpu,
                }
            }
        }
        "sched_switch" => sched_switch(fields)?,
        "irq_handler_entry" => Event::IrqHandlerEntry {
            irq: num(&f, "irq")?,
            name: get(&f, "name").unwrap_or("").to_string(),
        },
        "irq_handler_exit" => Event::IrqHandlerExit {
            irq: num(&f, "irq")?,
            ret: get(&f, "ret").unwrap_or("").to_string(),
        },
        "softirq_entry" | "softirq_exit" => {
            // `vec=1 [action=TIMER]`
            let vec = num(&f, "vec")?;
            let action = get(&f, "action").unwrap_or("").to_string();
            if name == "softirq_entry" {
                Event::SoftirqEntry { vec, action }
            } else {
                Event::SoftirqExit { vec, action }
            }
        }
        "workqueue_execute_start" | "workqueue_execute_end" => workqueue(name, fields),
        "tracing_mark_write" | "print" => Event::Print {
            text: fields.to_string(),
        },
        _ if name.starts_with("ipi_") => Event::Ipi {
            name: name.to_string(),
            fields: fields.to_string(),
        },
        _ => match (
            get(&f, "vector").and_then(|v| v.parse::<u32>().ok()),
            name.strip_suffix("_entry"),
            name.strip_suffix("_exit"),
        ) {
            (Some(vector), Some(base), _) => Event::VectorEntry {
                name: base.to_string(),
                vector,
            },
            (Some(vector), _, Some(base)) => Event::VectorExit {
                name: base.to_string(),
                vector,
            },
            _ => Event::Other {
                name: name.to_string(),
                fields: fields.to_string(),
            },
        },
    })
}

#[cfg(test)]
mod parse_from_tests {
    use super::*;

    #[test]
    fn parse_from_skips_what_is_before() {
        let mut t = String::from("# tracer: nop\n#\n");
        for i in 0..100u64 {
            t.push_str(&format!(
                " a-1 [001] d..2. 10.{:06}: sched_waking: comm=m pid=5 prio=49 target_cpu=001\n",
                i * 10
            ));
            if i == 50 {
                t.push_str("CPU:1 [LOST 3 EVENTS]\n");
            }
        }
        let all = parse_from(&t, 0);
        assert_eq!(all.len(), 100);
        let r = parse_from(&t, 10_000_495_000);
        assert_eq!(r.len(), 50);
        assert_eq!(r[0].ts_ns, 10_000_500_000);
        assert_eq!(parse_from(&t, 10_000_500_000)[0].ts_ns, 10_000_500_000);
        assert!(parse_from(&t, 11_000_000_000).is_empty());
        assert!(parse_from("", 5).is_empty());
        assert_eq!(parse_from("# only\n", 0).len(), 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_with_spaces_dashes_flags_and_tgid() {
        let r = parse_line(
            " Web Content-x-77  (   70) [003] d.h2.  12.000250: irq_handler_entry: irq=11 name=virtio0",
        )
        .unwrap();
        assert_eq!(r.comm, "Web Content-x");
        assert_eq!(r.pid, 77);
        assert_eq!(r.cpu, 3);
        assert_eq!(r.ts_ns, 12_000_250_000);
        assert_eq!(
            r.event,
            Event::IrqHandlerEntry {
                irq: 11,
                name: "virtio0".into()
            }
        );
        // No flags column (irq-info off), nanosecond fraction.
        let r = parse_line("<idle>-0 [000] 5.123456789: local_timer_entry: vector=236").unwrap();
        assert_eq!(r.comm, "<idle>");
        assert_eq!(r.ts_ns, 5_123_456_789);
        assert_eq!(
            r.event,
            Event::VectorEntry {
                name: "local_timer".into(),
                vector: 236
            }
        );
    }

    #[test]
    fn sched_switch_with_spaces_in_comm() {
        let r = parse_line("a-1 [000] d..2. 1.000001: sched_switch: prev_comm=Web Content prev_pid=5 prev_prio=120 prev_state=R+ ==> next_comm=rt 1 next_pid=6 next_prio=0").unwrap();
        assert_eq!(
            r.event,
            Event::SchedSwitch {
                prev_comm: "Web Content".into(),
                prev_pid: 5,
                prev_prio: 120,
                prev_state: "R+".into(),
                next_comm: "rt 1".into(),
                next_pid: 6,
                next_prio: 0
            }
        );
    }

    #[test]
    fn other_events() {
        let e = |l: &str| parse_line(l).unwrap().event;
        assert_eq!(
            e("k-9 [001] ..... 1.0: softirq_entry: vec=1 [action=TIMER]"),
            Event::SoftirqEntry {
                vec: 1,
                action: "TIMER".into()
            }
        );
        assert_eq!(
            e("kworker/1:1-9 [001] ..... 1.0: workqueue_execute_start: work struct 00000000ab: function vmstat_update"),
            Event::WorkqueueStart {
                work: "00000000ab".into(),
                function: "vmstat_update".into()
            }
        );
        assert_eq!(
            e("m-9 [001] ..... 1.0: tracing_mark_write: spike 1 at 55"),
            Event::Print {
                text: "spike 1 at 55".into()
            }
        );
        assert_eq!(
            e("m-9 [001] ..... 1.0: hrtimer_start: hrtimer=00ff function=hrtimer_wakeup expires=1000 softexpires=1000 mode=ABS"),
            Event::HrtimerStart {
                hrtimer: "00ff".into(),
                function: "hrtimer_wakeup".into(),
                expires_ns: Some(1000),
                softexpires_ns: Some(1000)
            }
        );
        assert!(matches!(
            e("m-9 [001] ..... 1.0: ipi_raise: target_mask=00000002 (Rescheduling interrupts)"),
            Event::Ipi { .. }
        ));
        assert!(matches!(
            e("m-9 [001] ..... 1.0: sys_enter: NR 1 (a, b)"),
            Event::Other { .. }
        ));
    }

    #[test]
    fn errors_name_line_and_column() {
        let e = parse("# tracer: nop\n\nnot a trace line\n").unwrap_err();
        assert_eq!(e.line, 3);
        let e = parse("a-1 [000] 1.0: sched_waking: comm=x pid=zz prio=1\n").unwrap_err();
        assert_eq!((e.line, e.col), (1, 16));
        assert!(e.msg.contains("pid=zz"), "{}", e.msg);
        assert_eq!(parse_ts("1.5"), Some(1_500_000_000));
        assert_eq!(parse_ts("1.1234567891"), None);
    }
}
