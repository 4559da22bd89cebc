//! The few files the drift watch re-reads every stats period, each read
//! alone (one file per value, no directory walk) so a tick stays cheap:
//! one CPU's governor and idle-state `disable` flags, the scheduler knobs
//! that move work onto a CPU, a cgroup's member list and v2 partition
//! state. Bulk readers (every CPU at once) are [`crate::power`] and
//! [`crate::workqueue`].

use crate::cgroup::Hierarchy;
use crate::kpath;
use crate::Root;

/// The cpufreq governor of `cpu`; `None` without cpufreq.
pub fn governor(root: &Root, cpu: u32) -> Option<String> {
    root.read_opt(kpath::cpufreq_governor(&cpu.to_string()))
}

/// Each idle state of `cpu` as (`stateK` name, its `disable` flag as
/// written); empty without cpuidle.
pub fn idle_disable(root: &Root, cpu: u32) -> Vec<(String, String)> {
    let dir = format!("/sys/devices/system/cpu/cpu{cpu}/cpuidle");
    let mut states: Vec<String> = root
        .read_dir_names(&dir)
        .unwrap_or_default()
        .into_iter()
        .filter(|n| {
            n.strip_prefix("state")
                .is_some_and(|k| k.parse::<u32>().is_ok())
        })
        .collect();
    states.sort_by_key(|n| {
        n.trim_start_matches("state")
            .parse::<u32>()
            .unwrap_or(u32::MAX)
    });
    states
        .into_iter()
        .filter_map(|s| {
            let k = s.trim_start_matches("state").to_string();
            let v = root.read_opt(kpath::cpuidle_disable(&cpu.to_string(), &k))?;
            Some((s, v))
        })
        .collect()
}

/// `kernel.timer_migration` as written; `None` when absent (kernels
/// without it, or a fake tree).
pub fn timer_migration(root: &Root) -> Option<String> {
    root.read_opt(kpath::TIMER_MIGRATION)
}

/// RT throttling: `sched_rt_runtime_us/sched_rt_period_us` (`950000/1000000`;
/// a runtime of `-1` is no throttling); `None` when unreadable.
pub fn rt_throttling(root: &Root) -> Option<String> {
    let runtime = root.read_opt(kpath::SCHED_RT_RUNTIME_US)?;
    let period = root.read_opt(kpath::SCHED_RT_PERIOD_US)?;
    Some(format!("{runtime}/{period}"))
}

/// The task ids of cgroup `dir` (TIDs on v1, PIDs on v2), ascending;
/// `None` when its list cannot be read.
pub fn members(root: &Root, h: &Hierarchy, dir: &str) -> Option<Vec<u32>> {
    let text = root.read(h.tasks_file(dir)).ok()?;
    let mut ids = crate::task::parse_ids(&text);
    ids.sort_unstable();
    ids.dedup();
    Some(ids)
}

/// A cgroup v2 cpuset's `cpuset.cpus.partition` (`member`, `root`,
/// `isolated`, `root invalid (reason)`); `None` on v1 or when absent.
pub fn partition_state(root: &Root, h: &Hierarchy, dir: &str) -> Option<String> {
    if !h.is_v2() {
        return None;
    }
    root.read_opt(h.file(dir, "cpus.partition"))
}

/// The thread group (process) of task `tid`, from its status; `None`
/// once it exited.
pub fn tgid(root: &Root, tid: u32) -> Option<u32> {
    let text = root.read(format!("{}/status", kpath::proc_dir(tid))).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("Tgid:"))
        .and_then(|v| v.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_cpu_files_on_a_fake_tree() {
        let d = tempfile::tempdir().unwrap();
        let w = |p: &str, s: &str| {
            let f = d.path().join(p.trim_start_matches('/'));
            std::fs::create_dir_all(f.parent().unwrap()).unwrap();
            std::fs::write(f, s).unwrap();
        };
        w(&kpath::cpufreq_governor("1"), "performance\n");
        w(&kpath::cpuidle_disable("1", "0"), "0\n");
        w(&kpath::cpuidle_disable("1", "10"), "1\n");
        w(&kpath::cpuidle_disable("1", "2"), "0\n");
        w(kpath::SCHED_RT_RUNTIME_US, "950000\n");
        w(kpath::SCHED_RT_PERIOD_US, "1000000\n");
        w("/proc/42/status", "Name:\tx\nTgid:\t40\n");
        let r = Root::new(d.path());
        assert_eq!(governor(&r, 1).as_deref(), Some("performance"));
        assert_eq!(governor(&r, 0), None);
        let idle = idle_disable(&r, 1);
        let names: Vec<&str> = idle.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["state0", "state2", "state10"]);
        assert_eq!(idle[2].1, "1");
        assert_eq!(rt_throttling(&r).as_deref(), Some("950000/1000000"));
        assert_eq!(timer_migration(&r), None);
        assert_eq!(tgid(&r, 42), Some(40));
        assert_eq!(tgid(&r, 43), None);
    }
}
