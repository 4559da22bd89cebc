//! Processes and threads: `/proc/PID/stat`, `/proc/PID/status`, their
//! `/proc/PID/task/TID/...` twins, `comm`, and a thread's `sched` counters.
//! Each file is parsed once into a typed value; `stat` fields are counted
//! after the last `)` because the command name may hold spaces and `)`.

use crate::kpath;
use crate::Root;
use serde::Serialize;

/// PF_KTHREAD and PF_NO_SETAFFINITY from `include/linux/sched.h`.
const PF_KTHREAD: u64 = 0x0020_0000;
const PF_NO_SETAFFINITY: u64 = 0x0400_0000;

/// The fields of `/proc/PID/stat` rtshield uses.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProcStat {
    /// `R`, `S`, `D`, `Z`, ... (field 3).
    pub state: char,
    /// Field 4.
    pub ppid: i32,
    /// `PF_*` flags (field 9).
    pub flags: Option<u64>,
    /// CPU it last ran on (field 39); absent on very old kernels.
    pub processor: Option<u32>,
    /// User and system time, USER_HZ ticks (fields 14 and 15).
    pub utime: Option<u64>,
    /// System time, USER_HZ ticks (field 15).
    pub stime: Option<u64>,
    /// Real-time priority, 1..99 for FIFO/RR, 0 otherwise (field 40).
    pub rt_priority: Option<u32>,
    /// Scheduling policy (field 41); `None` for a number rtshield does not know.
    pub policy: Option<rtshield_vocab::Policy>,
}

impl ProcStat {
    /// `None` when the text is not a stat line (no `)`, too few fields).
    pub fn parse(text: &str) -> Option<ProcStat> {
        let after = &text[text.rfind(')')? + 1..];
        let f: Vec<&str> = after.split_whitespace().collect();
        let state = f.first()?.chars().next()?;
        Some(ProcStat {
            state,
            ppid: f.get(1)?.parse().ok()?,
            flags: f.get(6).and_then(|v| v.parse().ok()),
            processor: f.get(36).and_then(|v| v.parse().ok()),
            utime: f.get(11).and_then(|v| v.parse().ok()),
            stime: f.get(12).and_then(|v| v.parse().ok()),
            rt_priority: f.get(37).and_then(|v| v.parse().ok()),
            policy: f
                .get(38)
                .and_then(|v| v.parse().ok())
                .and_then(crate::sched::policy_from_raw),
        })
    }

    /// Whether it is a kernel thread (`PF_KTHREAD`), which audit reports apart and never moves.
    pub fn is_kthread(&self) -> bool {
        self.flags.is_some_and(|f| f & PF_KTHREAD != 0)
    }

    /// Whether the kernel forbids changing its affinity (`PF_NO_SETAFFINITY`: a
    /// per-CPU kernel thread).
    pub fn no_setaffinity(&self) -> bool {
        self.flags.is_some_and(|f| f & PF_NO_SETAFFINITY != 0)
    }
}

/// The fields of `/proc/PID/status` rtshield uses.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProcStatus {
    /// `Name:` (the comm).
    pub name: String,
    /// `State:`'s letter.
    pub state: Option<char>,
    /// `PPid:`.
    pub ppid: Option<u32>,
    /// `Kthread:` (kernels from 6.x); `None` on older ones.
    pub kthread: Option<bool>,
    /// `Cpus_allowed_list` as the kernel wrote it (list syntax).
    pub cpus_allowed_list: Option<String>,
    /// `voluntary_ctxt_switches:`.
    pub voluntary_ctxt_switches: Option<u64>,
    /// `nonvoluntary_ctxt_switches:`.
    pub nonvoluntary_ctxt_switches: Option<u64>,
}

impl ProcStatus {
    /// Parse the text of `/proc/PID/status` (unknown lines ignored).
    pub fn parse(text: &str) -> ProcStatus {
        let mut s = ProcStatus::default();
        for line in text.lines() {
            let Some((k, v)) = line.split_once(':') else {
                continue;
            };
            let v = v.trim();
            match k {
                "Name" => s.name = v.to_string(),
                "State" => s.state = v.chars().next(),
                "PPid" => s.ppid = v.parse().ok(),
                "Kthread" => s.kthread = Some(v == "1"),
                "Cpus_allowed_list" => s.cpus_allowed_list = Some(v.to_string()),
                "voluntary_ctxt_switches" => s.voluntary_ctxt_switches = v.parse().ok(),
                "nonvoluntary_ctxt_switches" => s.nonvoluntary_ctxt_switches = v.parse().ok(),
                _ => {}
            }
        }
        s
    }
}

/// `/proc/PID/stat` (a TID works too). `None` once it exited.
pub fn stat(root: &Root, pid: u32) -> Option<ProcStat> {
    ProcStat::parse(&root.read(format!("{}/stat", kpath::proc_dir(pid))).ok()?)
}

/// `/proc/PID/status`. `None` once it exited.
pub fn status(root: &Root, pid: u32) -> Option<ProcStatus> {
    Some(ProcStatus::parse(
        &root.read(format!("{}/status", kpath::proc_dir(pid))).ok()?,
    ))
}

/// `/proc/PID/task/TID/stat`.
pub(crate) fn thread_stat(root: &Root, pid: u32, tid: u32) -> Option<ProcStat> {
    ProcStat::parse(
        &root
            .read(format!("{}/task/{tid}/stat", kpath::proc_dir(pid)))
            .ok()?,
    )
}

/// `/proc/PID/comm` without the newline.
pub fn comm(root: &Root, pid: u32) -> Option<String> {
    root.read_opt(format!("{}/comm", kpath::proc_dir(pid)))
}

/// Whether process (or thread) `pid` exists.
pub fn exists(root: &Root, pid: u32) -> bool {
    root.exists(kpath::proc_dir(pid))
}

/// Every process listed in `/proc`, ascending.
pub fn pids(root: &Root) -> Vec<u32> {
    root.read_dir_names(kpath::PROC)
        .unwrap_or_default()
        .iter()
        .filter_map(|p| p.parse().ok())
        .collect()
}

/// The threads of `pid` (`/proc/PID/task`); `None` once it exited.
pub fn tids(root: &Root, pid: u32) -> Option<Vec<u32>> {
    let names = root
        .read_dir_names(format!("{}/task", kpath::proc_dir(pid)))
        .ok()?;
    Some(names.iter().filter_map(|t| t.parse().ok()).collect())
}

/// The threads of the calling process (`/proc/self/task`) below `root`.
pub fn own_tids(root: &Root) -> Vec<u32> {
    root.read_dir_names("/proc/self/task")
        .unwrap_or_default()
        .iter()
        .filter_map(|t| t.parse().ok())
        .collect()
}

/// One thread as audit and partition see it: `/proc/PID/status` and `stat` merged;
/// a field the files did not give is `None`.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct TaskInfo {
    /// Thread id.
    pub tid: u32,
    /// `comm` (`Name:` of status), 15 bytes at most.
    pub name: String,
    /// A kernel thread (`Kthread:` of status, else `PF_KTHREAD`, else a
    /// child of kthreadd).
    pub kthread: bool,
    /// The kernel forbids changing its affinity (per-CPU kernel threads).
    pub no_setaffinity: bool,
    /// `Cpus_allowed_list:` (list syntax).
    pub cpus_allowed: Option<String>,
    /// Context switches it asked for (it blocked).
    pub voluntary_ctxt_switches: Option<u64>,
    /// Context switches it suffered (preempted).
    pub nonvoluntary_ctxt_switches: Option<u64>,
    /// Last CPU it ran on (field 39 of stat).
    pub processor: Option<u32>,
    /// `R`, `S`, `D`, ... (field 3 of stat).
    pub state: Option<char>,
    /// utime + stime, USER_HZ ticks (for %CPU).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_ticks: Option<u64>,
}

impl TaskInfo {
    /// Read `/proc/<tid>/…` (works for threads too: the kernel hides
    /// `/proc/<tid>` from listings but resolves it). `None` once it exited.
    pub fn read(root: &Root, tid: u32) -> Option<TaskInfo> {
        let st = status(root, tid)?;
        Some(TaskInfo::from_files(tid, st, stat(root, tid)))
    }

    /// Combine the two files of one task.
    pub fn from_files(tid: u32, st: ProcStatus, stat: Option<ProcStat>) -> TaskInfo {
        // Older kernels have no `Kthread:` line: the flags, else "child of
        // kthreadd", tell.
        let kthread = st
            .kthread
            .or(stat.and_then(|s| s.flags).map(|f| f & PF_KTHREAD != 0))
            .unwrap_or(tid == 2 || st.ppid == Some(2));
        TaskInfo {
            tid,
            name: st.name,
            kthread,
            no_setaffinity: stat.is_some_and(|s| s.no_setaffinity()),
            cpus_allowed: st.cpus_allowed_list,
            voluntary_ctxt_switches: st.voluntary_ctxt_switches,
            nonvoluntary_ctxt_switches: st.nonvoluntary_ctxt_switches,
            processor: stat.and_then(|s| s.processor),
            state: st.state,
            cpu_ticks: stat.and_then(|s| Some(s.utime? + s.stime?)),
        }
    }

    /// (voluntary, involuntary) context switches so far; 0 when unknown.
    pub fn switches(&self) -> (u64, u64) {
        (
            self.voluntary_ctxt_switches.unwrap_or(0),
            self.nonvoluntary_ctxt_switches.unwrap_or(0),
        )
    }

    /// Per-CPU kernel threads carry their CPU in the name: `ksoftirqd/1`,
    /// `migration/1`, `kworker/1:2`, `cpuhp/1` (not `kworker/u8:1`).
    pub fn bound_cpu_from_name(&self) -> Option<u32> {
        let (_, tail) = self.name.split_once('/')?;
        let digits: String = tail.chars().take_while(|c| c.is_ascii_digit()).collect();
        digits.parse().ok()
    }
}

/// Every thread of every process (kernel threads included).
pub fn threads(root: &Root) -> Vec<TaskInfo> {
    threads_of(root, &pids(root))
}

/// Every thread of processes `pids` (those that exited are left out).
pub fn threads_of(root: &Root, pids: &[u32]) -> Vec<TaskInfo> {
    let mut out = vec![];
    for &pid in pids {
        let tids = tids(root, pid).unwrap_or_else(|| vec![pid]);
        out.extend(tids.into_iter().filter_map(|t| {
            let mut info = TaskInfo::read(root, t)?;
            // `/proc/TID/stat` sums the whole thread group's times; the
            // thread's own are under `task/TID`.
            if let Some(s) = thread_stat(root, pid, t) {
                info.cpu_ticks = s.utime.zip(s.stime).map(|(u, s)| u + s);
            }
            Some(info)
        }));
    }
    out
}

/// TIDs listed in a cgroup tasks file (blank lines and junk ignored).
pub fn parse_ids(text: &str) -> Vec<u32> {
    text.split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect()
}

/// Scheduler counters of one thread.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ThreadSched {
    /// Times it moved to another CPU (`se.nr_migrations`).
    pub migrations: Option<u64>,
    /// Voluntary context switches (it blocked).
    pub voluntary: Option<u64>,
    /// Involuntary context switches (it was preempted).
    pub involuntary: Option<u64>,
}

impl ThreadSched {
    /// From `/proc/<pid>/task/<tid>/sched` (needs CONFIG_SCHED_DEBUG) and
    /// `/status` (always there: switch counts only).
    pub fn parse(sched: Option<&str>, status: Option<&str>) -> ThreadSched {
        let field = |text: Option<&str>, key: &str| -> Option<u64> {
            text?.lines().find_map(|l| {
                let (k, v) = l.split_once(':')?;
                if k.trim() != key {
                    return None;
                }
                // `sched` prints some counters as floats; these are integers.
                v.trim().split('.').next()?.parse().ok()
            })
        };
        ThreadSched {
            migrations: field(sched, "se.nr_migrations"),
            voluntary: field(sched, "nr_voluntary_switches")
                .or_else(|| field(status, "voluntary_ctxt_switches")),
            involuntary: field(sched, "nr_involuntary_switches")
                .or_else(|| field(status, "nonvoluntary_ctxt_switches")),
        }
    }

    /// Counters of thread `tid` of the calling process.
    pub fn read_own(root: &Root, tid: i32) -> ThreadSched {
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

    fn fixture(name: &str) -> String {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/proc")
            .join(name);
        std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    }

    #[test]
    fn stat_fields_survive_odd_names() {
        let s = ProcStat::parse("14 (ksoftirqd/0) S 2 0 0 0 -1 69238848 0 0").unwrap();
        assert_eq!((s.ppid, s.flags), (2, Some(69238848)));
        let s = ProcStat::parse("99 (a) b) c) R 1 0 0 0 -1 4194560 0").unwrap();
        assert_eq!((s.state, s.flags), ('R', Some(4194560)));
        assert_eq!(ProcStat::parse("garbage"), None);
    }

    proptest::proptest! {
        #[test]
        fn parsers_never_panic(s in "\\PC{0,200}") {
            let _ = parse_ids(&s);
            let _ = ProcStat::parse(&s);
            let _ = ProcStatus::parse(&s);
            let _ = ThreadSched::parse(Some(&s), Some(&s));
            let t = TaskInfo { name: s.clone(), ..Default::default() };
            let _ = t.bound_cpu_from_name();
        }
    }

    #[test]
    fn stat_gives_the_policy_and_rt_priority() {
        // migration/0 on this machine: SCHED_FIFO 99.
        let m = ProcStat::parse(&fixture("stat_migration")).unwrap();
        assert_eq!(
            (m.policy, m.rt_priority),
            (Some(rtshield_vocab::Policy::Fifo), Some(99))
        );
        let k = ProcStat::parse(&fixture("stat_ksoftirqd")).unwrap();
        assert_eq!(
            (k.policy, k.rt_priority),
            (Some(rtshield_vocab::Policy::Other), Some(0))
        );
        // Fields 39..42: processor 1, rt_priority 10, policy 2 (RR).
        let rr = "7 (x) S 2 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 1 10 2 0";
        let rr = ProcStat::parse(rr).unwrap();
        assert_eq!(
            (rr.policy, rr.rt_priority),
            (Some(rtshield_vocab::Policy::Rr), Some(10))
        );
        assert_eq!(ProcStat::parse("42 (a) Z 7 42").unwrap().policy, None);
    }

    #[test]
    fn stat_is_parsed_after_the_last_paren() {
        let s = ProcStat::parse(&fixture("stat_odd_comm")).unwrap();
        assert_eq!(s.state, 'S');
        assert_eq!(s.ppid, 1);
        assert_eq!(s.flags, Some(0x0040_0140));
        assert_eq!(s.processor, Some(3));
        assert!(!s.is_kthread());
        let k = ProcStat::parse(&fixture("stat_ksoftirqd")).unwrap();
        assert!(k.is_kthread() && k.no_setaffinity());
        assert_eq!((k.ppid, k.processor), (2, Some(1)));
        assert_eq!(ProcStat::parse("12 (x) R"), None);
        // Short lines (old kernels, hand-made trees): state and ppid only.
        let short = ProcStat::parse("42 (a) b) c) Z 7 42").unwrap();
        assert_eq!((short.state, short.ppid, short.flags), ('Z', 7, None));
        assert!(!short.is_kthread());
        assert_eq!(ProcStat::parse("no paren"), None);
        assert_eq!((short.utime, short.stime), (None, None));
    }

    #[test]
    fn cpu_times_of_a_thread() {
        // Fields 14 and 15 (utime, stime) of a ksoftirqd stat line.
        let s = ProcStat::parse(&fixture("stat_ksoftirqd")).unwrap();
        let f: Vec<u64> = fixture("stat_ksoftirqd")
            .rsplit(')')
            .next()
            .unwrap()
            .split_whitespace()
            .skip(11)
            .take(2)
            .map(|v| v.parse().unwrap())
            .collect();
        assert_eq!((s.utime, s.stime), (Some(f[0]), Some(f[1])));
        let t = TaskInfo::from_files(22, ProcStatus::default(), Some(s));
        assert_eq!(t.cpu_ticks, Some(f[0] + f[1]));
        let hand =
            ProcStat::parse("7 (irq/150-eth0) S 2 0 0 0 -1 2129984 0 0 0 0 13 4027 0 0").unwrap();
        assert_eq!((hand.utime, hand.stime), (Some(13), Some(4027)));
    }

    #[test]
    fn status_fields() {
        let s = ProcStatus::parse(&fixture("status_ksoftirqd"));
        assert_eq!(s.name, "ksoftirqd/1");
        assert_eq!(s.state, Some('S'));
        assert_eq!(s.ppid, Some(2));
        assert_eq!(s.kthread, Some(true));
        assert_eq!(s.cpus_allowed_list.as_deref(), Some("1"));
        assert_eq!(s.voluntary_ctxt_switches, Some(1234));
        assert_eq!(s.nonvoluntary_ctxt_switches, Some(5));
    }

    #[test]
    fn tasks_on_a_fake_tree() {
        let d = tempfile::tempdir().unwrap();
        let w = |p: &str, s: &str| {
            let f = d.path().join(p);
            std::fs::create_dir_all(f.parent().unwrap()).unwrap();
            std::fs::write(f, s).unwrap();
        };
        // Process 22 (ksoftirqd/1, no task dir) and 300 with threads 300, 301.
        w("proc/22/status", &fixture("status_ksoftirqd"));
        w("proc/22/stat", &fixture("stat_ksoftirqd"));
        w("proc/22/comm", "ksoftirqd/1\n");
        for t in ["300", "301"] {
            w(
                &format!("proc/300/task/{t}/stat"),
                &fixture("stat_odd_comm"),
            );
            w(
                &format!("proc/{t}/status"),
                "Name:\tsrv\nState:\tR (running)\nPPid:\t1\nCpus_allowed_list:\t0-3\n",
            );
            w(&format!("proc/{t}/stat"), &fixture("stat_odd_comm"));
        }
        std::fs::create_dir_all(d.path().join("proc/self/task/9")).unwrap();
        let r = Root::new(d.path());
        assert_eq!(pids(&r), vec![22, 300, 301]);
        assert_eq!(tids(&r, 300), Some(vec![300, 301]));
        assert_eq!(tids(&r, 22), None);
        assert_eq!(own_tids(&r), vec![9]);
        assert_eq!(comm(&r, 22).as_deref(), Some("ksoftirqd/1"));
        assert!(exists(&r, 22) && !exists(&r, 23));
        assert_eq!(thread_stat(&r, 300, 301).map(|s| s.ppid), Some(1));
        let all = threads_of(&r, &[22, 300]);
        assert_eq!(all.len(), 3);
        let k = &all[0];
        assert_eq!((k.tid, k.kthread, k.no_setaffinity), (22, true, true));
        assert_eq!(k.bound_cpu_from_name(), Some(1));
        let u = &all[2];
        assert_eq!(u.tid, 301);
        assert_eq!(
            (u.kthread, u.processor, u.state),
            (false, Some(3), Some('R'))
        );
        assert_eq!(u.cpus_allowed.as_deref(), Some("0-3"));
        assert!(TaskInfo::read(&r, 999).is_none());
        // A thread's CPU time comes from task/TID/stat, not from
        // /proc/TID/stat (which sums the whole process).
        w(
            "proc/301/stat",
            "301 (srv) R 1 0 0 0 -1 0 0 0 0 0 500 500 0 0\n",
        );
        w(
            "proc/300/task/301/stat",
            "301 (srv) R 1 0 0 0 -1 0 0 0 0 0 13 27 0 0\n",
        );
        let all = threads_of(&r, &[300]);
        assert_eq!(all[1].cpu_ticks, Some(40));
    }

    #[test]
    fn sched_and_status_counters() {
        let sched = fixture("sched");
        let status = "Name:\tx\nvoluntary_ctxt_switches:\t31\nnonvoluntary_ctxt_switches:\t11\n";
        let t = ThreadSched::parse(Some(&sched), Some(status));
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

    #[test]
    fn bound_cpu_names() {
        let t = |n: &str| TaskInfo {
            name: n.into(),
            ..Default::default()
        };
        assert_eq!(t("ksoftirqd/1").bound_cpu_from_name(), Some(1));
        assert_eq!(t("kworker/3:2H-events").bound_cpu_from_name(), Some(3));
        assert_eq!(t("kworker/u8:1").bound_cpu_from_name(), None);
        assert_eq!(t("sshd").bound_cpu_from_name(), None);
    }
}
