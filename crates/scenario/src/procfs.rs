//! The few kernel files the runner reads, parsed by pure functions so they
//! can be tested on captured text: `/proc/stat` (per-CPU idle time) and a
//! thread's `sched` and `status` files (migrations, context switches).

use rtshield_sys::Root;

/// Per-CPU counters from one `/proc/stat` read, in USER_HZ ticks.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CpuTimes {
    /// Indexed by CPU number; `None` for CPUs absent from the file.
    pub cpus: Vec<Option<CpuTick>>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CpuTick {
    /// idle + iowait.
    pub idle: u64,
    /// Every column the kernel reports (guest time is already in user).
    pub total: u64,
}

impl CpuTimes {
    pub fn parse(text: &str) -> CpuTimes {
        let mut cpus: Vec<Option<CpuTick>> = Vec::new();
        for line in text.lines() {
            let mut f = line.split_whitespace();
            let Some(name) = f.next() else { continue };
            let Some(n) = name
                .strip_prefix("cpu")
                .and_then(|n| n.parse::<usize>().ok())
            else {
                continue;
            };
            if n > rtshield_sys::cpuset::MAX_CPU as usize {
                continue;
            }
            let v: Vec<u64> = f.map(|x| x.parse().unwrap_or(0)).collect();
            // user nice system idle iowait irq softirq steal guest guest_nice:
            // guest and guest_nice are already counted in user and nice.
            let total: u64 = v.iter().take(8).sum();
            let idle = v.get(3).copied().unwrap_or(0) + v.get(4).copied().unwrap_or(0);
            if cpus.len() <= n {
                cpus.resize(n + 1, None);
            }
            cpus[n] = Some(CpuTick { idle, total });
        }
        CpuTimes { cpus }
    }

    pub fn read(root: &Root) -> CpuTimes {
        root.read_opt("/proc/stat")
            .map(|t| CpuTimes::parse(&t))
            .unwrap_or_default()
    }

    /// Idle share of `cpu` between `self` (earlier) and `later`; `None`
    /// when the CPU is missing or no tick elapsed.
    pub fn idle_share(&self, later: &CpuTimes, cpu: usize) -> Option<f64> {
        let a = self.cpus.get(cpu).copied().flatten()?;
        let b = later.cpus.get(cpu).copied().flatten()?;
        let total = b.total.checked_sub(a.total)?;
        if total == 0 {
            return None;
        }
        let idle = b.idle.saturating_sub(a.idle);
        Some((idle as f64 / total as f64).clamp(0.0, 1.0))
    }

    /// Idle ticks summed over every CPU between `self` and `later`.
    pub fn idle_ticks(&self, later: &CpuTimes) -> u64 {
        self.cpus
            .iter()
            .zip(&later.cpus)
            .filter_map(|(a, b)| Some(b.as_ref()?.idle.saturating_sub(a.as_ref()?.idle)))
            .sum()
    }
}

/// Scheduler counters of one thread.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ThreadSched {
    pub migrations: Option<u64>,
    pub voluntary: Option<u64>,
    pub involuntary: Option<u64>,
}

impl ThreadSched {
    /// From `/proc/<pid>/task/<tid>/sched` (needs CONFIG_SCHED_DEBUG) and
    /// `/status` (always there: switch counts only).
    pub fn parse(sched: Option<&str>, status: Option<&str>) -> ThreadSched {
        let field = |text: Option<&str>, key: &str, sep: char| -> Option<u64> {
            text?.lines().find_map(|l| {
                let (k, v) = l.split_once(sep)?;
                if k.trim() != key {
                    return None;
                }
                // `sched` prints some counters as floats; these are integers.
                v.trim().split('.').next()?.parse().ok()
            })
        };
        ThreadSched {
            migrations: field(sched, "se.nr_migrations", ':'),
            voluntary: field(sched, "nr_voluntary_switches", ':')
                .or_else(|| field(status, "voluntary_ctxt_switches", ':')),
            involuntary: field(sched, "nr_involuntary_switches", ':')
                .or_else(|| field(status, "nonvoluntary_ctxt_switches", ':')),
        }
    }

    /// Counters of thread `tid` of this process.
    pub fn read(root: &Root, tid: i32) -> ThreadSched {
        let sched = root.read_opt(format!("/proc/self/task/{tid}/sched"));
        let status = root.read_opt(format!("/proc/self/task/{tid}/status"));
        ThreadSched::parse(sched.as_deref(), status.as_deref())
    }

    /// What happened between `self` (earlier) and `later`.
    pub fn delta(&self, later: &ThreadSched) -> ThreadSched {
        let d = |a: Option<u64>, b: Option<u64>| Some(b?.saturating_sub(a?));
        ThreadSched {
            migrations: d(self.migrations, later.migrations),
            voluntary: d(self.voluntary, later.voluntary),
            involuntary: d(self.involuntary, later.involuntary),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT0: &str = "cpu  300 0 100 1000 10 0 5 0 0 0\n\
        cpu0 100 0 50 500 5 0 5 0 0 0\n\
        cpu1 200 0 50 500 5 0 0 0 0 0\n\
        intr 12345 0 0\nctxt 999\n";
    const STAT1: &str = "cpu  ...\n\
        cpu0 150 0 50 545 10 0 5 0 7 0\n\
        cpu1 300 0 50 500 5 0 0 0 0 0\n";

    #[test]
    fn proc_stat_idle_shares() {
        let a = CpuTimes::parse(STAT0);
        let b = CpuTimes::parse(STAT1);
        assert_eq!(a.cpus.len(), 2);
        // CPU0: total 660 -> 760 (guest 7 not counted again), idle 505 -> 555.
        assert_eq!(a.idle_share(&b, 0), Some(0.5));
        // CPU1: all 100 ticks busy.
        assert_eq!(a.idle_share(&b, 1), Some(0.0));
        assert_eq!(a.idle_share(&b, 2), None);
        assert_eq!(a.idle_share(&a, 0), None);
        assert_eq!(a.idle_ticks(&b), 50);
    }

    #[test]
    fn sched_and_status_counters() {
        let sched = "x (12, #threads: 3)\n---\nse.nr_migrations                             :                    7\n\
            nr_switches                                  :                   40\n\
            nr_voluntary_switches                        :                   30\n\
            nr_involuntary_switches                      :                   10\n";
        let status = "Name:\tx\nvoluntary_ctxt_switches:\t31\nnonvoluntary_ctxt_switches:\t11\n";
        let t = ThreadSched::parse(Some(sched), Some(status));
        assert_eq!(
            t,
            ThreadSched {
                migrations: Some(7),
                voluntary: Some(30),
                involuntary: Some(10)
            }
        );
        // Without CONFIG_SCHED_DEBUG: switches from status, no migrations.
        let t2 = ThreadSched::parse(None, Some(status));
        assert_eq!(t2.migrations, None);
        assert_eq!(t2.voluntary, Some(31));
        let d = t2.delta(&ThreadSched {
            migrations: Some(3),
            voluntary: Some(40),
            involuntary: Some(11),
        });
        assert_eq!(
            d,
            ThreadSched {
                migrations: None,
                voluntary: Some(9),
                involuntary: Some(0)
            }
        );
    }
}
