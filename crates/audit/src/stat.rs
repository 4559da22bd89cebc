//! `rtshield stat`: what the PREEMPT_RT impact article looks at with vmstat and pidstat — per-CPU
//! interrupts/s and context switches/s, run queue, load average, and
//! per-thread voluntary/involuntary switches/s, busiest first.

use crate::procfs::{self, Global};
use rtshield_sys::LoadAvg;
use rtshield_sys::Root;
use rtshield_sys::TaskInfo;
use rtshield_sys::{all_threads, read_interrupts, threads_of, IrqTable};
use rtshield_sys::{StatBreakdown, TimesSnapshot};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

/// One CPU's line of a `stat` sample.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CpuRow {
    /// The CPU number.
    pub cpu: u32,
    /// Interrupts/s on this CPU (every line of `/proc/interrupts`).
    pub intr_per_s: f64,
    /// Context switches/s of the threads that last ran on this CPU.
    pub cs_per_s: f64,
    /// Runnable threads (state R) last on this CPU at the sample.
    pub runq: usize,
}

/// One thread's line of a `stat` sample (pidstat's `-w` and `-u` columns).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ThreadRow {
    /// Thread id.
    pub tid: u32,
    /// Its `comm`.
    pub name: String,
    /// The CPU it last ran on, when the kernel says.
    pub cpu: Option<u32>,
    /// Voluntary switches/s (pidstat cswch/s): the thread blocked.
    pub cswch_per_s: f64,
    /// Involuntary switches/s (pidstat nvcswch/s): it was preempted.
    pub nvcswch_per_s: f64,
    /// Share of one CPU used over the interval (pidstat/top `%CPU`).
    pub cpu_pct: f64,
}

/// One `cpu` line's time breakdown over the interval (top's `%Cpu(s)`).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct TimeRow {
    /// `None` for the whole machine.
    pub cpu: Option<u32>,
    /// The percentages, by column.
    #[serde(flatten)]
    pub pct: StatBreakdown,
}

/// What one `stat` interval saw, machine-wide and per CPU.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Sample {
    /// The interval's length, seconds (measured, not asked).
    pub interval_s: f64,
    /// Each online CPU, in CPU order.
    pub cpus: Vec<CpuRow>,
    /// All interrupts/s (`intr` of /proc/stat, like vmstat's `in`).
    pub intr_per_s: f64,
    /// All context switches/s (`ctxt` of /proc/stat, like vmstat's `cs`).
    pub ctxt_per_s: f64,
    /// Tasks runnable at the end of the interval (vmstat's `r`).
    pub procs_running: u64,
    /// Tasks blocked on I/O at the end of the interval (vmstat's `b`).
    pub procs_blocked: u64,
    /// Load averages over 1, 5 and 15 minutes.
    pub loadavg: [f64; 3],
    /// `/proc/loadavg`'s runnable/existing tasks and the last PID handed out.
    pub tasks_running: u32,
    /// Tasks that exist.
    pub tasks_total: u32,
    /// The last PID handed out.
    pub last_pid: u32,
    /// Total first, then each CPU.
    pub times: Vec<TimeRow>,
    /// The threads listed, those that switched most first (`--top` of them; all with 0).
    pub threads: Vec<ThreadRow>,
}

type Switches = BTreeMap<u32, (u64, u64)>;

/// Takes `stat` samples: keeps the previous counters so each sample is a difference
/// over its interval.
pub struct Sampler {
    root: Root,
    pids: Option<Vec<u32>>,
    top: usize,
    last: Instant,
    intr: IrqTable,
    glob: Global,
    sw: Switches,
    times: TimesSnapshot,
    /// utime + stime per thread at the previous sample.
    ticks: BTreeMap<u32, u64>,
    hz: u64,
}

/// Every thread (the per-CPU rows always count them all) and, with
/// `--pids`, the threads of those processes (the only ones listed).
fn tasks(root: &Root, pids: &Option<Vec<u32>>) -> (Vec<TaskInfo>, Option<BTreeSet<u32>>) {
    let shown = pids
        .as_ref()
        .map(|ps| threads_of(root, ps).into_iter().map(|t| t.tid).collect());
    (all_threads(root), shown)
}

fn switches(ts: &[TaskInfo]) -> Switches {
    ts.iter().map(|t| (t.tid, t.switches())).collect()
}

impl Sampler {
    /// `top`: how many threads to list (0 = all that switched).
    pub fn new(root: Root, pids: Option<Vec<u32>>, top: usize) -> Sampler {
        let (ts, _) = tasks(&root, &pids);
        Sampler {
            intr: read_interrupts(&root),
            glob: procfs::global(&root),
            sw: switches(&ts),
            times: TimesSnapshot::read(&root).unwrap_or_default(),
            ticks: cpu_ticks(&ts),
            hz: rtshield_sys::user_hz(),
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
        let intr = read_interrupts(&self.root);
        let glob = procfs::global(&self.root);
        let (ts, shown) = tasks(&self.root, &self.pids);
        let sw = switches(&ts);
        let times = TimesSnapshot::read(&self.root).unwrap_or_default();
        let ticks = cpu_ticks(&ts);
        let la = LoadAvg::read(&self.root).unwrap_or_default();
        let mut s = compute(
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
        s.times = time_rows(&self.times, &times);
        for t in &mut s.threads {
            t.cpu_pct = cpu_pct(
                self.ticks.get(&t.tid).copied(),
                ticks.get(&t.tid).copied(),
                dt,
                self.hz,
            );
        }
        (s.tasks_running, s.tasks_total, s.last_pid) = (la.running, la.total, la.last_pid);
        self.times = times;
        self.ticks = ticks;
        self.last = now;
        self.intr = intr;
        self.glob = glob;
        self.sw = sw;
        s
    }
}

fn cpu_ticks(ts: &[TaskInfo]) -> BTreeMap<u32, u64> {
    ts.iter()
        .filter_map(|t| Some((t.tid, t.cpu_ticks?)))
        .collect()
}

/// Pure: the total and per-CPU time breakdown between two readings (a
/// CPU without elapsed ticks is left out).
pub(crate) fn time_rows(a: &TimesSnapshot, b: &TimesSnapshot) -> Vec<TimeRow> {
    let mut v: Vec<TimeRow> = a
        .all
        .breakdown(&b.all)
        .map(|pct| TimeRow { cpu: None, pct })
        .into_iter()
        .collect();
    for (c, t0) in &a.cpus {
        if let Some(pct) = b.cpus.get(c).and_then(|t1| t0.breakdown(t1)) {
            v.push(TimeRow { cpu: Some(*c), pct });
        }
    }
    v
}

/// Pure: %CPU of a thread from its utime+stime ticks `dt` seconds apart
/// (`hz` ticks a second); a thread born during the interval counts from 0.
pub(crate) fn cpu_pct(before: Option<u64>, after: Option<u64>, dt: f64, hz: u64) -> f64 {
    match after {
        Some(a) => a.saturating_sub(before.unwrap_or(0)) as f64 * 100.0 / (hz as f64 * dt),
        None => 0.0,
    }
}

/// Pure: rates from two snapshots `dt` seconds apart. Per-CPU rows count
/// every thread of `ts`; the thread list keeps only `shown` when given.
#[allow(clippy::too_many_arguments)]
pub(crate) fn compute(
    i0: &IrqTable,
    i1: &IrqTable,
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
                    cpu_pct: 0.0,
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
        tasks_running: 0,
        tasks_total: 0,
        last_pid: 0,
        times: Vec::new(),
        threads,
    }
}

/// A recording's means (`stat --record`): figures in display order, and
/// threads by name (their TIDs change between boots), busiest first.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Summary {
    /// Each figure's mean (`in/s`, `cs/s`, per-CPU columns), in display order.
    pub metrics: Vec<(String, f64)>,
    /// (name, %CPU, cswch/s, nvcswch/s), means over the samples.
    pub threads: Vec<(String, f64, f64, f64)>,
}

/// Pure: the mean of every figure over `samples` (each sample counts
/// once; a thread's figures are summed over the threads of that name in
/// a sample, then averaged over all samples, so a thread that came and
/// went weighs what it did).
pub fn summarize(samples: &[Sample]) -> Summary {
    let n = samples.len().max(1) as f64;
    let mut metrics: Vec<(String, f64)> = Vec::new();
    let mut add = |name: String, v: f64| match metrics.iter_mut().find(|m| m.0 == name) {
        Some(m) => m.1 += v / n,
        None => metrics.push((name, v / n)),
    };
    for s in samples {
        add("cs/s".into(), s.ctxt_per_s);
        add("in/s".into(), s.intr_per_s);
        add("runnable".into(), s.procs_running as f64);
        add("blocked".into(), s.procs_blocked as f64);
        add("load1".into(), s.loadavg[0]);
        add("tasks".into(), s.tasks_total as f64);
        for t in &s.times {
            let p = &t.pct;
            let pre = t.cpu.map_or(String::new(), |c| format!("cpu{c}."));
            for (k, v) in [
                ("us", p.us),
                ("sy", p.sy),
                ("ni", p.ni),
                ("id", p.id),
                ("wa", p.wa),
                ("hi", p.hi),
                ("si", p.si),
                ("st", p.st),
            ] {
                add(format!("{pre}{k}"), v);
            }
        }
        for c in &s.cpus {
            add(format!("cpu{}.intr/s", c.cpu), c.intr_per_s);
            add(format!("cpu{}.cs/s", c.cpu), c.cs_per_s);
        }
    }
    let mut threads: Vec<(String, f64, f64, f64)> = Vec::new();
    for s in samples {
        for t in &s.threads {
            let e = match threads.iter_mut().find(|x| x.0 == t.name) {
                Some(e) => e,
                None => {
                    threads.push((t.name.clone(), 0.0, 0.0, 0.0));
                    threads.last_mut().expect("just pushed")
                }
            };
            e.1 += t.cpu_pct / n;
            e.2 += t.cswch_per_s / n;
            e.3 += t.nvcswch_per_s / n;
        }
    }
    threads.sort_by(|a, b| {
        (b.1, b.2 + b.3)
            .partial_cmp(&(a.1, a.2 + a.3))
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(a.0.cmp(&b.0))
    });
    Summary { metrics, threads }
}

/// One sample as `rtshield stat` prints it: a vmstat-like line, the per-CPU table,
/// the time breakdown and the threads.
pub fn render(s: &Sample) -> String {
    use std::fmt::Write;
    let mut o = String::new();
    let _ = writeln!(
        o,
        "r {}  b {}  in/s {:.0}  cs/s {:.0}  load {:.2} {:.2} {:.2}  tasks {}/{}  last pid {}",
        s.procs_running,
        s.procs_blocked,
        s.intr_per_s,
        s.ctxt_per_s,
        s.loadavg[0],
        s.loadavg[1],
        s.loadavg[2],
        s.tasks_running,
        s.tasks_total,
        s.last_pid
    );
    let _ = writeln!(
        o,
        "  CPU   intr/s     cs/s  runq     us    sy    ni    id    wa    hi    si    st"
    );
    let times = |cpu: Option<u32>| -> String {
        match s.times.iter().find(|t| t.cpu == cpu) {
            Some(t) => {
                let p = &t.pct;
                format!(
                    " {:>6.1}{:>6.1}{:>6.1}{:>6.1}{:>6.1}{:>6.1}{:>6.1}{:>6.1}",
                    p.us, p.sy, p.ni, p.id, p.wa, p.hi, p.si, p.st
                )
            }
            None => String::new(),
        }
    };
    for c in &s.cpus {
        let _ = writeln!(
            o,
            "  {:>3} {:>8.0} {:>8.0} {:>5}{}",
            c.cpu,
            c.intr_per_s,
            c.cs_per_s,
            c.runq,
            times(Some(c.cpu))
        );
    }
    if s.times.iter().any(|t| t.cpu.is_none()) {
        let _ = writeln!(
            o,
            "  all {:>8.0} {:>8.0} {:>5}{}",
            s.intr_per_s,
            s.ctxt_per_s,
            s.procs_running,
            times(None)
        );
    }
    if !s.threads.is_empty() {
        let _ = writeln!(o, "   cswch/s  nvcswch/s   %CPU      TID  CPU  Command");
        for t in &s.threads {
            let _ = writeln!(
                o,
                "  {:>8.2} {:>10.2} {:>6.1} {:>8} {:>4}  {}",
                t.cswch_per_s,
                t.nvcswch_per_s,
                t.cpu_pct,
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

    /// A sample of nothing over `dt` seconds.
    fn empty(dt: f64) -> Sample {
        compute(
            &IrqTable::default(),
            &IrqTable::default(),
            &Global::default(),
            &Global::default(),
            &Switches::new(),
            &[],
            None,
            dt,
            0,
        )
    }

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
        let i0 = IrqTable::parse("  CPU0 CPU1\n 36: 0 100 x virtio\nLOC: 50 60 Local\n");
        let i1 = IrqTable::parse("  CPU0 CPU1\n 36: 0 300 x virtio\nLOC: 70 100 Local\n");
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
        assert!(
            text.contains("   cswch/s  nvcswch/s   %CPU      TID"),
            "{text}"
        );
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

    #[test]
    fn sampler_on_a_fake_tree_by_hand() {
        // Two states of a fake /proc: the sampler reads the first when
        // made, the second at sample(). Shares do not depend on the wall
        // time between the two, so they are exact.
        let d = tempfile::tempdir().unwrap();
        let put = |rel: &str, text: &str| {
            let p = d.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        let stat_line = |ut: u64, st: u64| {
            format!("150 (irq/150-eth0) S 2 0 0 0 -1 2129984 0 0 0 0 {ut} {st} 0 0 20 0 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 1\n")
        };
        put("proc/150/status", "Name:\tirq/150-eth0\nState:\tS (sleeping)\nPPid:\t2\nvoluntary_ctxt_switches:\t100\nnonvoluntary_ctxt_switches:\t0\n");
        put("proc/150/task/150/stat", &stat_line(0, 1000));
        put("proc/150/stat", &stat_line(0, 1000));
        put(
            "proc/interrupts",
            "           CPU0       CPU1\n150:          0        500   PCI-MSI  eth0\n",
        );
        put("proc/loadavg", "1.00 0.50 0.25 2/300 4000\n");
        put("proc/stat", "cpu  100 0 100 800 0 0 0 0\ncpu0 50 0 50 400 0 0 0 0\ncpu1 50 0 50 400 0 0 0 0\nctxt 1000\nintr 500\n");
        let mut s = Sampler::new(Root::new(d.path()), None, 0);
        // 200 ticks per CPU. CPU1 serves eth0: +120 hardirq, +40 softirq,
        // +40 system; CPU0: +100 user, +100 idle. The IRQ thread ran 80 ticks.
        put("proc/stat", "cpu  200 0 140 900 0 120 40 0\ncpu0 150 0 50 500 0 0 0 0\ncpu1 50 0 90 400 0 120 40 0\nctxt 3000\nintr 900\n");
        put("proc/150/task/150/stat", &stat_line(0, 1080));
        put("proc/150/status", "Name:\tirq/150-eth0\nState:\tS (sleeping)\nPPid:\t2\nvoluntary_ctxt_switches:\t300\nnonvoluntary_ctxt_switches:\t0\n");
        put("proc/loadavg", "1.50 0.60 0.30 3/412 12345\n");
        let x = s.sample();
        let row = |c: Option<u32>| x.times.iter().find(|t| t.cpu == c).unwrap().pct;
        // Total: 400 ticks: us 100 (25 %), sy 40 (10 %), id 100 (25 %),
        // hi 120 (30 %), si 40 (10 %).
        let t = row(None);
        assert_eq!(
            (t.us, t.sy, t.id, t.hi, t.si, t.wa, t.st),
            (25.0, 10.0, 25.0, 30.0, 10.0, 0.0, 0.0)
        );
        let c1 = row(Some(1));
        assert_eq!(
            (c1.us, c1.sy, c1.id, c1.hi, c1.si),
            (0.0, 20.0, 0.0, 60.0, 20.0)
        );
        let c0 = row(Some(0));
        assert_eq!((c0.us, c0.id), (50.0, 50.0));
        assert_eq!(
            (x.tasks_running, x.tasks_total, x.last_pid),
            (3, 412, 12345)
        );
        assert_eq!(x.loadavg, [1.5, 0.6, 0.3]);
        assert_eq!(x.threads.len(), 1);
        assert_eq!(x.threads[0].name, "irq/150-eth0");
        // 80 ticks over the (measured) interval: the exact share.
        let want = 80.0 * 100.0 / (rtshield_sys::user_hz() as f64 * x.interval_s);
        assert!(
            (x.threads[0].cpu_pct - want).abs() < 1e-9,
            "{} vs {want}",
            x.threads[0].cpu_pct
        );
    }

    #[test]
    fn summary_means_by_hand() {
        let mk = |cs: f64, pct: f64, name: &str| {
            let mut s = empty(1.0);
            s.ctxt_per_s = cs;
            s.tasks_total = 400;
            s.threads.push(ThreadRow {
                tid: 7,
                name: name.into(),
                cpu: Some(1),
                cswch_per_s: 10.0,
                nvcswch_per_s: 0.0,
                cpu_pct: pct,
            });
            s
        };
        // 1243 and 2168 cs/s: mean 1705.5; the IRQ thread at 40 % then
        // 20 %: mean 30 %; a thread seen once at 10 %: 5 %.
        let sum = summarize(&[
            mk(1243.0, 40.0, "irq/150-eth0"),
            mk(2168.0, 20.0, "irq/150-eth0"),
            mk(0.0, 10.0, "x"),
        ]);
        let m = |k: &str| sum.metrics.iter().find(|m| m.0 == k).unwrap().1;
        assert_eq!(m("cs/s"), (1243.0 + 2168.0) / 3.0);
        assert_eq!(m("tasks"), 400.0);
        assert_eq!(sum.threads[0].0, "irq/150-eth0");
        assert_eq!(sum.threads[0].1, 20.0);
        assert_eq!(
            sum.threads[1],
            ("x".to_string(), 10.0 / 3.0, 10.0 / 3.0, 0.0)
        );
        assert_eq!(summarize(&[]), Summary::default());
    }

    #[test]
    fn times_and_cpu_pct_by_hand() {
        // Two readings 2 s apart at USER_HZ 100: 200 ticks per CPU.
        let a = TimesSnapshot::parse(
            "cpu  1000 0 500 8000 100 0 0 0\ncpu0 500 0 250 4000 50 0 0 0\ncpu1 500 0 250 4000 50 0 0 0\n",
        );
        // CPU0: +20 us, +30 sy, +140 id, +10 wa; CPU1: +80 hi (an IRQ
        // thread's hardirq time), +40 si, +80 id.
        let b = TimesSnapshot::parse(
            "cpu  1020 0 530 8220 110 80 40 0\ncpu0 520 0 280 4140 60 0 0 0\ncpu1 500 0 250 4080 50 80 40 0\n",
        );
        let rows = time_rows(&a, &b);
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[0].cpu, None);
        // Total: 400 ticks; us 20 -> 5 %, sy 30 -> 7.5 %, id 220 -> 55 %.
        assert_eq!(
            (rows[0].pct.us, rows[0].pct.sy, rows[0].pct.id),
            (5.0, 7.5, 55.0)
        );
        assert_eq!(
            (rows[0].pct.hi, rows[0].pct.si, rows[0].pct.wa),
            (20.0, 10.0, 2.5)
        );
        assert_eq!(
            (
                rows[1].pct.us,
                rows[1].pct.sy,
                rows[1].pct.id,
                rows[1].pct.wa
            ),
            (10.0, 15.0, 70.0, 5.0)
        );
        assert_eq!(
            (rows[2].pct.hi, rows[2].pct.si, rows[2].pct.id),
            (40.0, 20.0, 40.0)
        );
        // The PREEMPT_RT impact article's IRQ thread at 40 %: 80 ticks in 2 s at 100 Hz.
        assert_eq!(cpu_pct(Some(4027), Some(4107), 2.0, 100), 40.0);
        assert_eq!(cpu_pct(None, Some(50), 1.0, 100), 50.0);
        assert_eq!(cpu_pct(Some(5), None, 1.0, 100), 0.0);
        let mut s = empty(2.0);
        s.times = rows;
        (s.tasks_running, s.tasks_total, s.last_pid) = (3, 412, 12345);
        let text = render(&s);
        assert!(text.contains("tasks 3/412  last pid 12345"), "{text}");
        assert!(
            text.contains(
                "  all        0        0     0    5.0   7.5   0.0  55.0   2.5  20.0  10.0   0.0"
            ),
            "{text}"
        );
    }
}
