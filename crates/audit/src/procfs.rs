//! Parsers for the `/proc` files audit and stat sample: `/proc/interrupts`,
//! `/proc/softirqs`, `/proc/stat`, `/proc/loadavg`, and every thread.

use rtshield_partition::tasks::TaskInfo;
use rtshield_sys::Root;
use serde::Serialize;

/// One line of `/proc/interrupts` or `/proc/softirqs`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Line {
    /// `36`, `LOC`, `RES`, `TIMER` (without the colon).
    pub id: String,
    /// Count per column (see [`Table::cpus`]).
    pub counts: Vec<u64>,
    /// The rest of the line: chip, hwirq, handler names (`virtio1-req.0`).
    pub desc: String,
}

impl Line {
    /// Numbered lines are device IRQs; named ones are IPIs and the like.
    pub fn is_device(&self) -> bool {
        self.id.parse::<u32>().is_ok()
    }

    /// The handler name: the last word of the description.
    pub fn name(&self) -> &str {
        self.desc.split_whitespace().last().unwrap_or("")
    }
}

/// A per-CPU counter table with a `CPU0 CPU1 …` header.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Table {
    /// CPU number of each column (offline CPUs have no column).
    pub cpus: Vec<u32>,
    pub lines: Vec<Line>,
}

impl Table {
    pub fn parse(text: &str) -> Table {
        let mut it = text.lines();
        let Some(header) = it.next() else {
            return Table::default();
        };
        let cpus: Vec<u32> = header
            .split_whitespace()
            .filter_map(|w| w.strip_prefix("CPU").and_then(|n| n.parse().ok()))
            .collect();
        let mut lines = vec![];
        for l in it {
            let Some((id, rest)) = l.split_once(':') else {
                continue;
            };
            let mut counts = vec![];
            let mut words = rest.split_whitespace().peekable();
            while counts.len() < cpus.len() {
                match words.peek().and_then(|w| w.parse::<u64>().ok()) {
                    Some(v) => {
                        counts.push(v);
                        words.next();
                    }
                    None => break,
                }
            }
            let desc = words.collect::<Vec<_>>().join(" ");
            lines.push(Line {
                id: id.trim().to_string(),
                counts,
                desc,
            });
        }
        Table { cpus, lines }
    }

    pub fn col(&self, cpu: u32) -> Option<usize> {
        self.cpus.iter().position(|&c| c == cpu)
    }

    /// Count of line `l` on `cpu` (0 when the line has no such column).
    /// `ERR:` and `MIS:` hold one machine-wide count, not CPU 0's: they
    /// count on no CPU.
    pub fn count(&self, l: &Line, cpu: u32) -> u64 {
        if l.counts.len() < self.cpus.len() {
            return 0;
        }
        self.col(cpu)
            .and_then(|i| l.counts.get(i).copied())
            .unwrap_or(0)
    }

    /// `self − before`, line by line (lines matched by id; counters that
    /// went backwards, e.g. a re-registered IRQ, count from zero).
    pub fn delta(&self, before: &Table) -> Table {
        let lines = self
            .lines
            .iter()
            .map(|l| {
                let b = before.lines.iter().find(|x| x.id == l.id);
                let counts = l
                    .counts
                    .iter()
                    .enumerate()
                    .map(|(i, &v)| {
                        let old = b.and_then(|b| b.counts.get(i).copied()).unwrap_or(0);
                        v.checked_sub(old).unwrap_or(v)
                    })
                    .collect();
                Line {
                    counts,
                    ..l.clone()
                }
            })
            .collect();
        Table {
            cpus: self.cpus.clone(),
            lines,
        }
    }

    /// Sum of every line on `cpu`.
    pub fn total(&self, cpu: u32) -> u64 {
        self.lines.iter().map(|l| self.count(l, cpu)).sum()
    }
}

pub fn interrupts(root: &Root) -> Table {
    root.read("/proc/interrupts")
        .map(|t| Table::parse(&t))
        .unwrap_or_default()
}

pub fn softirqs(root: &Root) -> Table {
    root.read("/proc/softirqs")
        .map(|t| Table::parse(&t))
        .unwrap_or_default()
}

/// System-wide counters from `/proc/stat` and `/proc/loadavg`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Global {
    pub ctxt: u64,
    pub intr: u64,
    pub procs_running: u64,
    pub procs_blocked: u64,
    pub loadavg: [f64; 3],
}

pub fn global(root: &Root) -> Global {
    let st = rtshield_sys::procstat::StatSnapshot::read(root).unwrap_or_default();
    let mut g = Global {
        ctxt: st.ctxt,
        intr: st.intr,
        procs_running: st.procs_running,
        procs_blocked: st.procs_blocked,
        loadavg: [0.0; 3],
    };
    let la = root.read("/proc/loadavg").unwrap_or_default();
    for (i, v) in la.split_whitespace().take(3).enumerate() {
        g.loadavg[i] = v.parse().unwrap_or(0.0);
    }
    g
}

/// Every thread of every process (kernel threads included).
pub fn threads(root: &Root) -> Vec<TaskInfo> {
    let pids: Vec<u32> = root
        .read_dir_names("/proc")
        .unwrap_or_default()
        .iter()
        .filter_map(|p| p.parse().ok())
        .collect();
    threads_of(root, &pids)
}

/// Every thread of processes `pids` (those that exited are left out).
pub fn threads_of(root: &Root, pids: &[u32]) -> Vec<TaskInfo> {
    let mut out = vec![];
    for pid in pids {
        let tids = root
            .read_dir_names(format!("/proc/{pid}/task"))
            .unwrap_or_else(|_| vec![pid.to_string()]);
        for t in tids {
            if let Some(info) = t.parse().ok().and_then(|t| TaskInfo::read(root, t)) {
                out.push(info);
            }
        }
    }
    out
}

/// Where a thread may run, in the three families the audit reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    User,
    /// A kernel thread whose affinity can be changed (kworker/u*, kthreadd...).
    MovableKernel,
    /// A per-CPU kernel thread (ksoftirqd/N, migration/N, kworker/N:M...).
    BoundKernel,
}

pub fn family(t: &TaskInfo) -> Family {
    if !t.kthread {
        Family::User
    } else if t.no_setaffinity
        || (t.bound_cpu_from_name().is_some()
            && t.cpus_allowed
                .as_deref()
                .is_some_and(|a| !a.contains(['-', ','])))
    {
        Family::BoundKernel
    } else {
        Family::MovableKernel
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const INTR: &str = "           CPU0       CPU1       \n 24:          1          0  IO-APIC   5-edge      ACPI:Ged\n 36:          0       9157 PCI-MSIX-0000:00:02.0   1-edge      virtio1-req.0\nNMI:          0          0   Non-maskable interrupts\nLOC:      23800      25870   Local timer interrupts\nERR:          0\nMIS:          0\n";

    #[test]
    fn parses_interrupts() {
        let t = Table::parse(INTR);
        assert_eq!(t.cpus, vec![0, 1]);
        assert_eq!(t.lines.len(), 6);
        let l = &t.lines[1];
        assert_eq!(l.id, "36");
        assert_eq!(l.counts, vec![0, 9157]);
        assert_eq!(l.name(), "virtio1-req.0");
        assert!(l.is_device());
        assert!(!t.lines[3].is_device());
        assert_eq!(t.lines[4].counts, vec![0]);
        assert_eq!(t.count(&t.lines[3], 1), 25870);
        assert_eq!(t.total(1), 9157 + 25870);
        // ERR/MIS are machine-wide, not CPU 0's.
        let t = Table::parse(&INTR.replace("ERR:          0", "ERR:          7"));
        assert_eq!(t.count(&t.lines[4], 0), 0);
        assert_eq!(t.total(0), 1 + 23800);
    }

    #[test]
    fn delta_by_id() {
        let a = Table::parse(INTR);
        let b = Table::parse(&INTR.replace("9157", "9200").replace("25870", "26000"));
        let d = b.delta(&a);
        assert_eq!(d.lines[1].counts, vec![0, 43]);
        assert_eq!(d.lines[3].counts, vec![0, 130]);
    }

    #[test]
    fn offline_cpu_columns() {
        let t = Table::parse("     CPU0  CPU2\n 5:  3  4  x y\n");
        assert_eq!(t.cpus, vec![0, 2]);
        assert_eq!(t.count(&t.lines[0], 2), 4);
        assert_eq!(t.count(&t.lines[0], 1), 0);
    }

    proptest::proptest! {
        #[test]
        fn never_panics(s in "\\PC{0,300}") {
            let t = Table::parse(&s);
            let _ = t.delta(&Table::parse(&s));
            let _ = t.total(0);
        }
    }
}
