//! `rtshield stat`: what the PREEMPT_RT impact article looks at with vmstat and pidstat — per-CPU
//! interrupts/s and context switches/s, run queue, load average, and
//! per-thread voluntary/involuntary switches/s, busiest first.

use crate::procfs::{self, Global, Table};
use rtshield_sys::task::TaskInfo;
use rtshield_sys::Root;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CpuRow {
    pub cpu: u32,
    pub intr_per_s: f64,
    /// Context switches/s of the threads that last ran on this CPU.
    pub cs_per_s: f64,
    /// Runnable threads (state R) last on this CPU at the sample.
    pub runq: usize,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ThreadRow {
    pub tid: u32,
    pub name: String,
    pub cpu: Option<u32>,
    /// Voluntary switches/s (pidstat cswch/s): the thread blocked.
    pub cswch_per_s: f64,
    /// Involuntary switches/s (pidstat nvcswch/s): it was preempted.
    pub nvcswch_per_s: f64,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Sample {
    pub interval_s: f64,
    pub cpus: Vec<CpuRow>,
    /// All interrupts/s (`intr` of /proc/stat, like vmstat's `in`).
    pub intr_per_s: f64,
    /// All context switches/s (`ctxt` of /proc/stat, like vmstat's `cs`).
    pub ctxt_per_s: f64,
    pub procs_running: u64,
    pub procs_blocked: u64,
    pub loadavg: [f64; 3],
    pub threads: Vec<ThreadRow>,
}

type Switches = BTreeMap<u32, (u64, u64)>;

pub struct Sampler {
    root: Root,
    pids: Option<Vec<u32>>,
    top: usize,
    last: Instant,
    intr: Table,
    glob: Global,
    sw: Switches,
}

/// Every thread (the per-CPU rows always count them all) and, with
/// `--pids`, the threads of those processes (the only ones listed).
fn tasks(root: &Root, pids: &Option<Vec<u32>>) -> (Vec<TaskInfo>, Option<BTreeSet<u32>>) {
    let shown = pids.as_ref().map(|ps| {
        procfs::threads_of(root, ps)
            .into_iter()
            .map(|t| t.tid)
            .collect()
    });
    (procfs::threads(root), shown)
}

fn switches(ts: &[TaskInfo]) -> Switches {
    ts.iter().map(|t| (t.tid, t.switches())).collect()
}

impl Sampler {
    /// `top`: how many threads to list (0 = all that switched).
    pub fn new(root: Root, pids: Option<Vec<u32>>, top: usize) -> Sampler {
        let (ts, _) = tasks(&root, &pids);
        Sampler {
            intr: procfs::interrupts(&root),
            glob: procfs::global(&root),
            sw: switches(&ts),
            last: Instant::now(),
            root,
            pids,
            top,
        }
    }

    /// Everything since the previous call (or since `new`).
    pub fn sample(&mut self) -> Sample {
        let now = Instant::now();
        let dt = now.duration_since(self.last).as_secs_f64().max(1e-6);
        let intr = procfs::interrupts(&self.root);
        let glob = procfs::global(&self.root);
        let (ts, shown) = tasks(&self.root, &self.pids);
        let sw = switches(&ts);
        let s = compute(
            &self.intr,
            &intr,
            &self.glob,
            &glob,
            &self.sw,
            &ts,
            shown.as_ref(),
            dt,
            self.top,
        );
        self.last = now;
        self.intr = intr;
        self.glob = glob;
        self.sw = sw;
        s
    }
}

/// Pure: rates from two snapshots `dt` seconds apart. Per-CPU rows count
/// every thread of `ts`; the thread list keeps only `shown` when given.
#[allow(clippy::too_many_arguments)]
pub fn compute(
    i0: &Table,
    i1: &Table,
    g0: &Global,
    g1: &Global,
    sw0: &Switches,
    ts: &[TaskInfo],
    shown: Option<&BTreeSet<u32>>,
    dt: f64,
    top: usize,
) -> Sample {
    let d = i1.delta(i0);
    let mut cpus: Vec<CpuRow> = d
        .cpus
        .iter()
        .map(|&c| CpuRow {
            cpu: c,
            intr_per_s: d.total(c) as f64 / dt,
            cs_per_s: 0.0,
            runq: 0,
        })
        .collect();
    let mut threads = vec![];
    for t in ts {
        let (v1, n1) = t.switches();
        // A thread born during the interval counts from zero.
        let (v0, n0) = sw0.get(&t.tid).copied().unwrap_or((0, 0));
        let (dv, dn) = (v1.saturating_sub(v0), n1.saturating_sub(n0));
        if let Some(row) = cpus.iter_mut().find(|r| Some(r.cpu) == t.processor) {
            row.cs_per_s += (dv + dn) as f64 / dt;
            if t.state == Some('R') {
                row.runq += 1;
            }
        }
        if dv + dn > 0 && shown.is_none_or(|s| s.contains(&t.tid)) {
            threads.push((
                dv + dn,
                ThreadRow {
                    tid: t.tid,
                    name: t.name.clone(),
                    cpu: t.processor,
                    cswch_per_s: dv as f64 / dt,
                    nvcswch_per_s: dn as f64 / dt,
                },
            ));
        }
    }
    // Busiest first, on the exact switch counts (summing two rounded rates
    // could order equal counts differently).
    threads.sort_by(|(a, ta), (b, tb)| b.cmp(a).then(ta.tid.cmp(&tb.tid)));
    if top > 0 {
        threads.truncate(top);
    }
    let threads: Vec<ThreadRow> = threads.into_iter().map(|(_, t)| t).collect();
    Sample {
        interval_s: dt,
        cpus,
        intr_per_s: g1.intr.saturating_sub(g0.intr) as f64 / dt,
        ctxt_per_s: g1.ctxt.saturating_sub(g0.ctxt) as f64 / dt,
        procs_running: g1.procs_running,
        procs_blocked: g1.procs_blocked,
        loadavg: g1.loadavg,
        threads,
    }
}

pub fn render(s: &Sample) -> String {
    use std::fmt::Write;
    let mut o = String::new();
    let _ = writeln!(
        o,
        "r {}  b {}  in/s {:.0}  cs/s {:.0}  load {:.2} {:.2} {:.2}",
        s.procs_running,
        s.procs_blocked,
        s.intr_per_s,
        s.ctxt_per_s,
        s.loadavg[0],
        s.loadavg[1],
        s.loadavg[2]
    );
    let _ = writeln!(o, "  CPU   intr/s     cs/s  runq");
    for c in &s.cpus {
        let _ = writeln!(
            o,
            "  {:>3} {:>8.0} {:>8.0} {:>5}",
            c.cpu, c.intr_per_s, c.cs_per_s, c.runq
        );
    }
    if !s.threads.is_empty() {
        let _ = writeln!(o, "   cswch/s  nvcswch/s      TID  CPU  Command");
        for t in &s.threads {
            let _ = writeln!(
                o,
                "  {:>8.2} {:>10.2} {:>8} {:>4}  {}",
                t.cswch_per_s,
                t.nvcswch_per_s,
                t.tid,
                t.cpu.map_or("-".into(), |c| c.to_string()),
                t.name
            );
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(tid: u32, name: &str, cpu: u32, v: u64, n: u64, state: char) -> TaskInfo {
        TaskInfo {
            tid,
            name: name.into(),
            processor: Some(cpu),
            voluntary_ctxt_switches: Some(v),
            nonvoluntary_ctxt_switches: Some(n),
            state: Some(state),
            ..Default::default()
        }
    }

    #[test]
    fn rates_by_hand() {
        let i0 = Table::parse("  CPU0 CPU1\n 36: 0 100 x virtio\nLOC: 50 60 Local\n");
        let i1 = Table::parse("  CPU0 CPU1\n 36: 0 300 x virtio\nLOC: 70 100 Local\n");
        let g0 = Global {
            ctxt: 1000,
            intr: 500,
            ..Default::default()
        };
        let g1 = Global {
            ctxt: 1600,
            intr: 800,
            procs_running: 2,
            loadavg: [1.0, 0.5, 0.25],
            ..Default::default()
        };
        let sw0: Switches = [(10, (100, 5)), (11, (7, 0))].into_iter().collect();
        let ts = vec![
            task(10, "ksoftirqd/1", 1, 180, 9, 'S'),
            task(11, "idle-ish", 0, 7, 0, 'S'),
            task(12, "stress", 0, 0, 30, 'R'),
        ];
        let s = compute(&i0, &i1, &g0, &g1, &sw0, &ts, None, 2.0, 0);
        assert_eq!(s.cpus[0].intr_per_s, 10.0); // (0 + 20) / 2
        assert_eq!(s.cpus[1].intr_per_s, 120.0); // (200 + 40) / 2
        assert_eq!(s.intr_per_s, 150.0);
        assert_eq!(s.ctxt_per_s, 300.0);
        // stress is new: 30 switches from zero; ksoftirqd 80+4.
        assert_eq!(s.cpus[0].cs_per_s, 15.0);
        assert_eq!(s.cpus[1].cs_per_s, 42.0);
        assert_eq!(s.cpus[0].runq, 1);
        assert_eq!(
            s.threads.len(),
            2,
            "the thread that did not switch is not listed"
        );
        assert_eq!(s.threads[0].name, "ksoftirqd/1");
        assert_eq!(s.threads[0].cswch_per_s, 40.0);
        assert_eq!(s.threads[0].nvcswch_per_s, 2.0);
        assert_eq!(s.threads[1].nvcswch_per_s, 15.0);
        let text = render(&s);
        assert!(text.contains("ksoftirqd/1"), "{text}");
        let s = compute(&i0, &i1, &g0, &g1, &sw0, &ts, None, 2.0, 1);
        assert_eq!(s.threads.len(), 1);
        // --pids narrows the thread list, never the per-CPU rows.
        let only: BTreeSet<u32> = [12].into_iter().collect();
        let s = compute(&i0, &i1, &g0, &g1, &sw0, &ts, Some(&only), 2.0, 0);
        assert_eq!(s.threads.len(), 1);
        assert_eq!(s.threads[0].name, "stress");
        assert_eq!(s.cpus[0].cs_per_s, 15.0);
        assert_eq!(s.cpus[1].cs_per_s, 42.0);
        assert_eq!(s.cpus[0].runq, 1);
    }
}
