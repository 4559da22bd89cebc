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

/// A command name's longest length in bytes (`TASK_COMM_LEN`, 16 with its
/// NUL): what bounds where a name can hide a forged field.
const COMM_MAX: usize = 15;

/// Parse one event line; the error is (1-based column, message).
pub fn parse_line(line: &str) -> Result<Record, (usize, String)> {
    let Some((comm, pid, cpu, cpu_end)) = find_task(line) else {
        return Err(task_error(line));
    };
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

/// `comm-pid [(tgid)] [cpu]` at the start of a line: (comm, pid, cpu, the
/// byte after `]`). Any user names a thread, and a name may itself hold
/// `x-1 [000]`: such a fake is left of the real one, so the task is the
/// **rightmost** `-pid … [cpu]` whose comm fits in [`COMM_MAX`] bytes (the
/// leftmost one on hand-written lines with longer names).
fn find_task(line: &str) -> Option<(&str, u32, u32, usize)> {
    let mut found = None;
    for (d, _) in line.match_indices('-') {
        let comm = line[..d].trim_start();
        if comm.len() > COMM_MAX && found.is_some() {
            break;
        }
        if let Some((pid, cpu, end)) = after_dash(&line[d + 1..]) {
            found = Some((comm, pid, cpu, d + 1 + end));
            if comm.len() > COMM_MAX {
                break;
            }
        }
    }
    found
}

/// `pid [(tgid)] [cpu]` right after the comm's dash: (pid, cpu, the byte
/// after `]` in `s`).
fn after_dash(s: &str) -> Option<(u32, u32, usize)> {
    let digits = s.bytes().take_while(u8::is_ascii_digit).count();
    let pid = s[..digits].parse().ok()?;
    let mut rest = &s[digits..];
    let t = rest.trim_start();
    if let Some(after) = t.strip_prefix('(') {
        rest = &after[after.find(')')? + 1..];
    }
    let t = rest.trim_start();
    if t.len() == rest.len() {
        return None;
    }
    let inner = &t.strip_prefix('[')?[..t[1..].find(']')?];
    if inner.is_empty() || !inner.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let cpu = inner.parse().ok()?;
    Some((pid, cpu, s.len() - t.len() + inner.len() + 2))
}

/// The error of a line whose task columns do not parse, in words.
fn task_error(line: &str) -> (usize, String) {
    let Some((cpu_start, _, _)) = find_cpu(line) else {
        return (1, "no `[cpu]` field".to_string());
    };
    let mut task = line[..cpu_start].trim_end();
    if task.ends_with(')') {
        if let Some(open) = task.rfind('(') {
            task = task[..open].trim_end();
        }
    }
    let task = task.trim_start();
    match task.rsplit_once('-') {
        Some((_, pid)) => (1, format!("bad pid `{pid}` in `{task}`")),
        None => (1, format!("`{task}` is not comm-pid")),
    }
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

/// `prev_comm=P prev_pid=N prev_prio=N prev_state=S ==> next_comm=N
/// next_pid=N next_prio=N`. Both names are any user's thread names and may
/// hold spaces, `=`, `==>` or `next_pid=1`: the fields are read in the
/// kernel's order, not by key. The previous name ends at the first
/// ` prev_pid=` that starts the whole fixed run up to ` ==> next_comm=`
/// (a name cannot hold that run, nor start it: the text after a name is the
/// run itself), and the next name is what is left once the last two fields
/// are taken from the right.
fn sched_switch(fields: &str) -> Result<Event, String> {
    let rest = fields
        .strip_prefix("prev_comm=")
        .ok_or_else(|| "no `prev_comm=` field".to_string())?;
    let mut last = Err("no `prev_pid=` field".to_string());
    for (at, _) in rest.match_indices(" prev_pid=") {
        last = switch_after_prev_comm(&rest[..at], &rest[at + 1..]);
        if last.is_ok() {
            break;
        }
    }
    last
}

/// The fields after `prev_comm=PREV `, in the kernel's order.
fn switch_after_prev_comm(prev_comm: &str, run: &str) -> Result<Event, String> {
    let (prev_pid, run) = field(run, "prev_pid")?;
    let (prev_prio, run) = field(run, "prev_prio")?;
    let (prev_state, run) = field(run, "prev_state")?;
    let next = run
        .strip_prefix("==> next_comm=")
        .ok_or_else(|| "no `==> next_comm=`".to_string())?;
    let (next, next_prio) = field_from_right(next, "next_prio")?;
    let (next_comm, next_pid) = field_from_right(next, "next_pid")?;
    Ok(Event::SchedSwitch {
        prev_comm: prev_comm.to_string(),
        prev_pid: number("prev_pid", prev_pid)?,
        prev_prio: number("prev_prio", prev_prio)?,
        prev_state: prev_state.to_string(),
        next_comm: next_comm.to_string(),
        next_pid: number("next_pid", next_pid)?,
        next_prio: number("next_prio", next_prio)?,
    })
}

/// `comm=NAME pid=N prio=N [success=N] [target_cpu=N]`: the known fields
/// are taken from the right, each once and in the kernel's order, so that
/// a name holding ` pid=1` or ` prio=0` stays the name.
fn wakeup(name: &str, fields: &str) -> Result<Event, String> {
    let mut rest = fields;
    let mut target_cpu = None;
    if let Ok((r, v)) = field_from_right(rest, "target_cpu") {
        target_cpu = v.parse().ok();
        rest = r;
    }
    if let Ok((r, _)) = field_from_right(rest, "success") {
        rest = r;
    }
    let (rest, prio) = field_from_right(rest, "prio")?;
    let (rest, pid) = field_from_right(rest, "pid")?;
    let comm = rest
        .strip_prefix("comm=")
        .ok_or_else(|| "no `comm=` field".to_string())?
        .to_string();
    let (pid, prio) = (number("pid", pid)?, number("prio", prio)?);
    Ok(if name == "sched_waking" {
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
    })
}

/// `KEY=VALUE REST` at the start of `s`: (VALUE, REST).
fn field<'a>(s: &'a str, key: &str) -> Result<(&'a str, &'a str), String> {
    let v = s
        .strip_prefix(key)
        .and_then(|v| v.strip_prefix('='))
        .ok_or_else(|| format!("no `{key}=` field"))?;
    Ok(v.split_once(' ').unwrap_or((v, "")))
}

/// `REST KEY=VALUE` at the end of `s`: (REST, VALUE).
fn field_from_right<'a>(s: &'a str, key: &str) -> Result<(&'a str, &'a str), String> {
    let (rest, last) = s
        .rsplit_once(' ')
        .ok_or_else(|| format!("no `{key}=` field"))?;
    let v = last
        .strip_prefix(key)
        .and_then(|v| v.strip_prefix('='))
        .ok_or_else(|| format!("no `{key}=` field"))?;
    Ok((rest, v))
}

fn number<T: std::str::FromStr>(key: &str, v: &str) -> Result<T, String> {
    v.parse().map_err(|_| format!("bad `{key}={v}`"))
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
        "sched_waking" | "sched_wakeup" | "sched_wakeup_new" => wakeup(name, fields)?,
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

/// Any user names their threads (`prctl(PR_SET_NAME)`, up to 15 bytes):
/// a name must never move another field of the line it appears in.
#[cfg(test)]
mod hostile_comm_tests {
    use super::*;
    use proptest::prelude::*;

    /// A thread name made of the pieces that look like trace syntax, cut
    /// to the kernel's 15 bytes.
    fn comm() -> impl Strategy<Value = String> {
        let piece = prop::sample::select(vec![
            " ",
            "=",
            "==>",
            "next_pid=1",
            "next_prio=0",
            "prev_pid=1",
            " pid=1",
            " prio=0",
            "[003]",
            ":",
            "-",
            "-1",
            " 9.5:",
            "(",
            ")",
            "comm=",
            "next_comm=",
            "x",
            "é",
            " target_cpu=7",
            "sched_switch:",
            " d..2.",
        ]);
        prop::collection::vec(piece, 0..6).prop_map(|v| {
            let mut s = v.concat();
            while s.len() > COMM_MAX {
                s.pop();
            }
            s
        })
    }

    /// The kernel's line prefix: the name right-aligned in 16 columns.
    fn line(task: &str, pid: u32, tgid: bool, body: &str) -> String {
        let tgid = if tgid {
            format!("({pid:>7}) ")
        } else {
            String::new()
        };
        format!("{task:>16}-{pid:<7} {tgid}[001] d..2. 100.000001: {body}")
    }

    proptest! {
        #[test]
        fn no_name_shifts_a_field(
            task in comm(), a in comm(), b in comm(),
            pid in 1u32..4_194_304, tgid in any::<bool>(),
        ) {
            let check = |body: String, want: Event| -> Result<(), TestCaseError> {
                let r = parse_line(&line(&task, pid, tgid, &body)).map_err(|e| TestCaseError::fail(e.1))?;
                prop_assert_eq!(&r.comm, task.trim_start());
                prop_assert_eq!((r.pid, r.cpu, r.ts_ns), (pid, 1, 100_000_001_000));
                prop_assert_eq!(r.event, want);
                Ok(())
            };
            check(
                format!("sched_switch: prev_comm={a} prev_pid=77 prev_prio=120 prev_state=R+ ==> next_comm={b} next_pid=88 next_prio=49"),
                Event::SchedSwitch {
                    prev_comm: a.clone(), prev_pid: 77, prev_prio: 120, prev_state: "R+".into(),
                    next_comm: b.clone(), next_pid: 88, next_prio: 49,
                },
            )?;
            for ev in ["sched_waking", "sched_wakeup", "sched_wakeup_new"] {
                let comm = a.clone();
                let (pid, prio, target_cpu) = (88, 120, Some(3));
                let want = if ev == "sched_waking" {
                    Event::SchedWaking { comm, pid, prio, target_cpu }
                } else {
                    Event::SchedWakeup { comm, pid, prio, target_cpu }
                };
                check(format!("{ev}: comm={a} pid=88 prio=120 target_cpu=003"), want)
                    ?;
            }
            // Events without a name in their fields: the prefix's name
            // must not move them either.
            check(
                "irq_handler_entry: irq=11 name=virtio0".into(),
                Event::IrqHandlerEntry { irq: 11, name: "virtio0".into() },
            )?;
            check(
                "hrtimer_expire_entry: hrtimer=00ff now=99 function=hrtimer_wakeup".into(),
                Event::HrtimerExpireEntry { hrtimer: "00ff".into(), function: "hrtimer_wakeup".into(), now_ns: Some(99) },
            )?;
            check(
                "softirq_entry: vec=1 [action=TIMER]".into(),
                Event::SoftirqEntry { vec: 1, action: "TIMER".into() },
            )?;
            check(
                "local_timer_entry: vector=236".into(),
                Event::VectorEntry { name: "local_timer".into(), vector: 236 },
            )?;
        }
    }

    /// The adversary's recipes (round 3, C1), as the kernel prints them.
    #[test]
    fn forged_fields_in_a_name_stay_in_the_name() {
        let r = parse_line(&line("a next_pid=1", 4242, false,
            "sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=a next_pid=1 next_pid=4242 next_prio=120")).unwrap();
        assert!(
            matches!(r.event, Event::SchedSwitch { ref next_comm, next_pid: 4242, next_prio: 120, .. } if next_comm == "a next_pid=1"),
            "{r:?}"
        );
        let r = parse_line(&line("x next_prio=0", 4242, false,
            "sched_switch: prev_comm=x next_prio=0 prev_pid=4242 prev_prio=120 prev_state=R ==> next_comm=x next_prio=0 next_pid=4242 next_prio=120")).unwrap();
        assert!(
            matches!(r.event, Event::SchedSwitch { ref prev_comm, ref next_comm, prev_pid: 4242, next_pid: 4242, next_prio: 120, .. } if prev_comm == "x next_prio=0" && next_comm == "x next_prio=0"),
            "{r:?}"
        );
        let r = parse_line(&line(
            "==> next_comm=x",
            4242,
            false,
            "sched_wakeup: comm===> next_comm=x pid=4242 prio=120 target_cpu=001",
        ))
        .unwrap();
        assert!(
            matches!(r.event, Event::SchedWakeup { ref comm, pid: 4242, prio: 120, .. } if comm == "==> next_comm=x"),
            "{r:?}"
        );
        let r = parse_line(&line(
            "a-1 [000] d.:",
            4242,
            false,
            "local_timer_entry: vector=236",
        ))
        .unwrap();
        assert_eq!((r.comm.as_str(), r.pid, r.cpu), ("a-1 [000] d.:", 4242, 1));
    }
}
