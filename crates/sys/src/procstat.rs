//! `/proc/stat`: per-CPU time, interrupts and context switches. Read by the
//! CPU-load display (`run`), the scenario runner (idle shares) and `stat`.

use crate::Root;
use std::collections::BTreeMap;
use std::io;

/// Cumulative USER_HZ ticks of one `cpu` line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Ticks {
    /// user + nice + system + idle + iowait + irq + softirq + steal (guest
    /// time is already inside user and nice, so it is not added again).
    pub total: u64,
    /// idle + iowait.
    pub idle: u64,
}

impl Ticks {
    /// Share of the time between `self` (earlier) and `later` that was idle;
    /// `None` when no tick elapsed.
    pub fn idle_share(self, later: Ticks) -> Option<f64> {
        let dt = later.total.checked_sub(self.total)?;
        if dt == 0 {
            return None;
        }
        let di = later.idle.saturating_sub(self.idle);
        Some((di as f64 / dt as f64).clamp(0.0, 1.0))
    }

    /// Busy share in percent (0 when no tick elapsed), as systress shows it.
    pub fn busy_pct(self, later: Ticks) -> f64 {
        self.idle_share(later).map_or(0.0, |i| (1.0 - i) * 100.0)
    }
}

/// One reading of `/proc/stat`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StatSnapshot {
    /// The aggregate `cpu` line.
    pub all: Ticks,
    /// Every `cpuN` line.
    pub cpus: BTreeMap<u32, Ticks>,
    /// The eight time columns of the same lines (`stat`'s breakdown).
    pub times: TimesSnapshot,
    /// Context switches since boot (`ctxt`).
    pub ctxt: u64,
    /// Interrupts since boot (first field of `intr`).
    pub intr: u64,
    /// Tasks runnable now (`procs_running`).
    pub procs_running: u64,
    /// Tasks blocked on I/O now (`procs_blocked`).
    pub procs_blocked: u64,
    /// VM steal time per CPU, USER_HZ ticks (8th value of each `cpuN`
    /// line; absent on kernels without it).
    pub steal: BTreeMap<u32, u64>,
}

/// USER_HZ: the unit of `/proc/stat` and `/proc/PID/stat` times
/// (`sysconf(_SC_CLK_TCK)`).
pub fn user_hz() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let v = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if v > 0 {
        v as u64
    } else {
        100
    }
}

/// Steal time of `cpus` between two readings, in ns (`None` when no
/// reading has a steal column for them).
pub fn steal_ns_between(
    earlier: &StatSnapshot,
    later: &StatSnapshot,
    cpus: impl IntoIterator<Item = u32>,
) -> Option<u64> {
    let mut any = false;
    let mut ticks = 0u64;
    for c in cpus {
        if let (Some(a), Some(b)) = (earlier.steal.get(&c), later.steal.get(&c)) {
            any = true;
            ticks += b.saturating_sub(*a);
        }
    }
    any.then(|| ticks.saturating_mul(1_000_000_000) / user_hz())
}

impl StatSnapshot {
    /// Read and parse `/proc/stat` below `root`; an error names the file.
    pub fn read(root: &Root) -> io::Result<Self> {
        Ok(Self::parse(&root.read(crate::kpath::STAT)?))
    }

    /// Malformed lines are skipped: the kernel adds fields over time.
    pub fn parse(text: &str) -> Self {
        let mut s = StatSnapshot::default();
        for line in text.lines() {
            let mut f = line.split_whitespace();
            let Some(name) = f.next() else { continue };
            if let Some(rest) = name.strip_prefix("cpu") {
                let v: Vec<u64> = f.take(8).map_while(|x| x.parse().ok()).collect();
                if v.len() < 4 {
                    continue;
                }
                let times = CpuTimes::parse(&v);
                let t = Ticks {
                    total: times.total(),
                    idle: times.idle + times.iowait,
                };
                if rest.is_empty() {
                    s.all = t;
                    s.times.all = times;
                } else if let Ok(n) = rest.parse::<u32>() {
                    if n <= rtshield_vocab::MAX_CPU {
                        s.cpus.insert(n, t);
                        s.times.cpus.insert(n, times);
                        if let Some(st) = v.get(7) {
                            s.steal.insert(n, *st);
                        }
                    }
                }
                continue;
            }
            let v: u64 = match f.next().and_then(|v| v.parse().ok()) {
                Some(v) => v,
                None => continue,
            };
            match name {
                "ctxt" => s.ctxt = v,
                "intr" => s.intr = v,
                "procs_running" => s.procs_running = v,
                "procs_blocked" => s.procs_blocked = v,
                _ => {}
            }
        }
        s
    }

    /// Idle share of `cpu` between `self` (earlier) and `later`.
    pub fn idle_share(&self, later: &StatSnapshot, cpu: u32) -> Option<f64> {
        self.cpus.get(&cpu)?.idle_share(*later.cpus.get(&cpu)?)
    }

    /// Idle ticks summed over the CPUs present in both readings.
    pub fn idle_ticks(&self, later: &StatSnapshot) -> u64 {
        self.cpus
            .iter()
            .filter_map(|(c, a)| Some(later.cpus.get(c)?.idle.saturating_sub(a.idle)))
            .sum()
    }
}

/// The eight time columns of a `cpu` line, USER_HZ ticks, in the order
/// the kernel writes them (vmstat/top's `us ni sy id wa hi si st`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuTimes {
    pub user: u64,
    pub nice: u64,
    pub system: u64,
    pub idle: u64,
    pub iowait: u64,
    pub irq: u64,
    pub softirq: u64,
    pub steal: u64,
}

/// Percentages of the time between two readings, as top shows them.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Breakdown {
    /// User time, % (`user`).
    pub us: f64,
    /// System time, % (`system`).
    pub sy: f64,
    /// Niced user time, % (`nice`).
    pub ni: f64,
    /// Idle, % (`idle`).
    pub id: f64,
    /// Waiting for I/O, % (`iowait`).
    pub wa: f64,
    /// Hard interrupts, % (`irq`).
    pub hi: f64,
    /// Soft interrupts, % (`softirq`).
    pub si: f64,
    /// Stolen by the hypervisor, % (`steal`).
    pub st: f64,
}

impl CpuTimes {
    fn parse(v: &[u64]) -> CpuTimes {
        let g = |i: usize| v.get(i).copied().unwrap_or(0);
        CpuTimes {
            user: g(0),
            nice: g(1),
            system: g(2),
            idle: g(3),
            iowait: g(4),
            irq: g(5),
            softirq: g(6),
            steal: g(7),
        }
    }

    fn total(&self) -> u64 {
        self.user
            + self.nice
            + self.system
            + self.idle
            + self.iowait
            + self.irq
            + self.softirq
            + self.steal
    }

    /// The share of each column between `self` (earlier) and `later`, %;
    /// `None` when no tick elapsed (or the counters went back: CPU hotplug).
    pub fn breakdown(&self, later: &CpuTimes) -> Option<Breakdown> {
        let dt = later.total().checked_sub(self.total())?;
        if dt == 0 {
            return None;
        }
        let p = |a: u64, b: u64| b.saturating_sub(a) as f64 * 100.0 / dt as f64;
        Some(Breakdown {
            us: p(self.user, later.user),
            sy: p(self.system, later.system),
            ni: p(self.nice, later.nice),
            id: p(self.idle, later.idle),
            wa: p(self.iowait, later.iowait),
            hi: p(self.irq, later.irq),
            si: p(self.softirq, later.softirq),
            st: p(self.steal, later.steal),
        })
    }
}

/// Every `cpu` line of `/proc/stat` with its eight time columns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TimesSnapshot {
    /// The aggregate `cpu` line.
    pub all: CpuTimes,
    /// Every `cpuN` line, by CPU number.
    pub cpus: BTreeMap<u32, CpuTimes>,
}

impl TimesSnapshot {
    /// Read and parse `/proc/stat` below `root`; an error names the file.
    pub fn read(root: &Root) -> io::Result<Self> {
        Ok(Self::parse(&root.read(crate::kpath::STAT)?))
    }

    /// Lines with fewer than four numbers are skipped.
    pub fn parse(text: &str) -> Self {
        StatSnapshot::parse(text).times
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn breakdown_by_hand() {
        // CPU0 between STAT0 and STAT1: 100 ticks; user +50, idle +45,
        // iowait +5 (guest 7 is inside user, not added again).
        let a = TimesSnapshot::parse(STAT0);
        let b = TimesSnapshot::parse(STAT1);
        let d = a.cpus[&0].breakdown(&b.cpus[&0]).unwrap();
        assert_eq!(
            (d.us, d.id, d.wa, d.sy, d.hi, d.si, d.st),
            (50.0, 45.0, 5.0, 0.0, 0.0, 0.0, 0.0)
        );
        let d = a.cpus[&1].breakdown(&b.cpus[&1]).unwrap();
        assert_eq!(d.us, 100.0);
        // The aggregate: 1415 ticks; irq 0, softirq 5.
        assert_eq!(a.all.softirq, 5);
        assert_eq!(a.all.breakdown(&a.all), None);
        let t = TimesSnapshot::parse(
            "cpu  10 1 2 80 3 2 1 1
cpu0 10 1 2 80 3 2 1 1
",
        );
        let z = TimesSnapshot::default();
        let d = z.all.breakdown(&t.all).unwrap();
        assert_eq!(
            (d.us, d.ni, d.sy, d.id, d.wa, d.hi, d.si, d.st),
            (10.0, 1.0, 2.0, 80.0, 3.0, 2.0, 1.0, 1.0)
        );
        assert!(user_hz() >= 1);
    }

    const STAT0: &str = "cpu  300 0 100 1000 10 0 5 0 0 0\n\
        cpu0 100 0 50 500 5 0 5 0 0 0\n\
        cpu1 200 0 50 500 5 0 0 0 0 0\n\
        intr 12345 0 0\nctxt 999\nprocs_running 3\nprocs_blocked 1\n";
    const STAT1: &str = "cpu  x\n\
        cpu0 150 0 50 545 10 0 5 0 7 0\n\
        cpu1 300 0 50 500 5 0 0 0 0 0\n";

    #[test]
    fn parses_counters_and_shares() {
        let a = StatSnapshot::parse(STAT0);
        let b = StatSnapshot::parse(STAT1);
        assert_eq!(a.cpus.len(), 2);
        assert_eq!(
            (a.intr, a.ctxt, a.procs_running, a.procs_blocked),
            (12345, 999, 3, 1)
        );
        assert_eq!(
            a.all,
            Ticks {
                total: 1415,
                idle: 1010
            }
        );
        // CPU0: total 660 -> 760 (guest 7 not counted again), idle 505 -> 555.
        assert_eq!(a.idle_share(&b, 0), Some(0.5));
        // CPU1: all 100 ticks busy.
        assert_eq!(a.idle_share(&b, 1), Some(0.0));
        assert_eq!(a.cpus[&1].busy_pct(b.cpus[&1]), 100.0);
        assert_eq!(a.idle_share(&b, 2), None);
        assert_eq!(a.idle_share(&a, 0), None);
        assert_eq!(a.idle_ticks(&b), 50);
    }

    #[test]
    fn steal_is_read_per_cpu() {
        // Field 8 of a cpuN line is steal: CPU1 0 -> 25 ticks, CPU0 absent
        // in the later reading (short line).
        let a = StatSnapshot::parse("cpu0 1 2 3 4 5 6 7 9\ncpu1 1 2 3 4 5 6 7 0 0 0\n");
        let b = StatSnapshot::parse("cpu0 1 2 3 4\ncpu1 1 2 3 4 5 6 7 25 0 0\n");
        assert_eq!(a.steal.get(&0), Some(&9));
        assert_eq!(b.steal.get(&0), None);
        assert_eq!(b.steal.get(&1), Some(&25));
        let ns = 25 * 1_000_000_000 / user_hz();
        assert_eq!(steal_ns_between(&a, &b, [1]), Some(ns));
        assert_eq!(steal_ns_between(&a, &b, [0, 1]), Some(ns));
        assert_eq!(steal_ns_between(&a, &b, [0]), None);
    }

    #[test]
    fn garbage_is_skipped() {
        let g = StatSnapshot::parse("cpu x y\ncpufoo 1 2 3 4\nctxt\n\n");
        assert!(g.cpus.is_empty());
        assert_eq!(g, StatSnapshot::default());
    }

    proptest::proptest! {
        #[test]
        fn never_panics(s in "(cpu[0-9]? [0-9 ]{0,20}\n|ctxt [0-9]{0,25}\n|.{0,10}\n){0,6}") {
            let _ = StatSnapshot::parse(&s);
        }
    }
}
