//! The few kernel files the runner reads, parsed by pure functions so they
//! can be tested on captured text: `/proc/stat` (per-CPU idle time) and a
//! thread's `sched` and `status` files (migrations, context switches).

use rtshield_sys::Root;

/// `/proc/stat` readings (per-CPU idle time) come from `rtshield_sys`.
pub use rtshield_sys::procstat::StatSnapshot as CpuTimes;

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
