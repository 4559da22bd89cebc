//! What `/proc/<tid>/status` and `/proc/<tid>/stat` say about a task.

use rtshield_sys::Root;
use serde::Serialize;

/// PF_KTHREAD and PF_NO_SETAFFINITY from `include/linux/sched.h`.
const PF_KTHREAD: u64 = 0x0020_0000;
const PF_NO_SETAFFINITY: u64 = 0x0400_0000;

#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct TaskInfo {
    pub tid: u32,
    pub name: String,
    pub kthread: bool,
    /// The kernel forbids changing its affinity (per-CPU kernel threads).
    pub no_setaffinity: bool,
    pub cpus_allowed: Option<String>,
    pub voluntary_ctxt_switches: Option<u64>,
    pub nonvoluntary_ctxt_switches: Option<u64>,
    /// Last CPU it ran on (field 39 of stat).
    pub processor: Option<u32>,
    pub state: Option<char>,
}

impl TaskInfo {
    /// Read `/proc/<tid>/…` (works for threads too: the kernel hides
    /// `/proc/<tid>` from listings but resolves it). `None` once it exited.
    pub fn read(root: &Root, tid: u32) -> Option<TaskInfo> {
        let status = root.read(format!("/proc/{tid}/status")).ok()?;
        let mut t = TaskInfo {
            tid,
            ..Default::default()
        };
        let mut kthread_field = None;
        let mut ppid = None;
        for line in status.lines() {
            let Some((k, v)) = line.split_once(':') else {
                continue;
            };
            let v = v.trim();
            match k {
                "Name" => t.name = v.to_string(),
                "PPid" => ppid = v.parse::<u32>().ok(),
                "Kthread" => kthread_field = Some(v == "1"),
                "Cpus_allowed_list" => t.cpus_allowed = Some(v.to_string()),
                "voluntary_ctxt_switches" => t.voluntary_ctxt_switches = v.parse().ok(),
                "nonvoluntary_ctxt_switches" => t.nonvoluntary_ctxt_switches = v.parse().ok(),
                "State" => t.state = v.chars().next(),
                _ => {}
            }
        }
        let stat = root.read(format!("/proc/{tid}/stat")).ok();
        let flags = stat.as_deref().and_then(|s| stat_field(s, 6));
        t.processor = stat
            .as_deref()
            .and_then(|s| stat_field(s, 36))
            .map(|v| v as u32);
        // Older kernels have no `Kthread:` line: the flags, else "child of
        // kthreadd", tell.
        t.kthread = kthread_field
            .or(flags.map(|f| f & PF_KTHREAD != 0))
            .unwrap_or(tid == 2 || ppid == Some(2));
        t.no_setaffinity = flags.is_some_and(|f| f & PF_NO_SETAFFINITY != 0);
        Some(t)
    }

    /// (voluntary, involuntary) context switches so far; 0 when unknown.
    pub fn switches(&self) -> (u64, u64) {
        (
            self.voluntary_ctxt_switches.unwrap_or(0),
            self.nonvoluntary_ctxt_switches.unwrap_or(0),
        )
    }

    /// Why the kernel refused to move this task, in words.
    pub fn refusal_reason(&self, errno: Option<i32>) -> String {
        let e = errno.map_or("error".to_string(), |c| {
            crate::kernel::errno_name(c).to_string()
        });
        if self.no_setaffinity {
            format!(
                "{e}: per-CPU kernel thread (PF_NO_SETAFFINITY), bound to its CPU by the kernel"
            )
        } else if self.kthread {
            format!("{e}: kernel thread the kernel keeps where it is")
        } else {
            format!("{e}: refused by the kernel")
        }
    }

    /// Per-CPU kernel threads carry their CPU in the name: `ksoftirqd/1`,
    /// `migration/1`, `kworker/1:2`, `cpuhp/1` (not `kworker/u8:1`).
    pub fn bound_cpu_from_name(&self) -> Option<u32> {
        let (_, tail) = self.name.split_once('/')?;
        let digits: String = tail.chars().take_while(|c| c.is_ascii_digit()).collect();
        digits.parse().ok()
    }
}

/// Field `i` (0 = state) of `/proc/<tid>/stat`, counting after the `(comm)`
/// which may itself contain spaces and parentheses.
pub fn stat_field(stat: &str, i: usize) -> Option<u64> {
    let after = &stat[stat.rfind(')')? + 1..];
    let f = after.split_whitespace().nth(i)?;
    if i == 0 {
        return None;
    }
    f.parse().ok()
}

/// TIDs listed in a cgroup tasks file (blank lines and junk ignored).
pub fn parse_ids(text: &str) -> Vec<u32> {
    text.split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_survive_odd_names() {
        let s = "14 (ksoftirqd/0) S 2 0 0 0 -1 69238848 0 0";
        assert_eq!(stat_field(s, 1), Some(2));
        assert_eq!(stat_field(s, 6), Some(69238848));
        let s = "99 (a) b) c) R 1 0 0 0 -1 4194560 0";
        assert_eq!(stat_field(s, 6), Some(4194560));
        assert_eq!(stat_field("garbage", 3), None);
    }

    proptest::proptest! {
        #[test]
        fn parsers_never_panic(s in "\\PC{0,200}") {
            let _ = stat_field(&s, 6);
            let _ = stat_field(&s, 36);
            let _ = parse_ids(&s);
            let t = TaskInfo { name: s.clone(), ..Default::default() };
            let _ = t.bound_cpu_from_name();
        }
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
