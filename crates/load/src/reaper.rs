//! Finding and ending every descendant of a process, whatever process
//! group or session it moved to, by walking the parent links in `/proc`.

use rtshield_sys::{pids, task_stat, Root};
use std::collections::HashMap;
use std::time::Duration;

/// `pid -> ppid` for every process in `/proc` (threads are not listed).
pub(crate) fn parent_map(root: &Root) -> HashMap<i32, i32> {
    pids(root)
        .into_iter()
        .filter_map(|pid| Some((i32::try_from(pid).ok()?, task_stat(root, pid)?.ppid)))
        .collect()
}

/// Every descendant of `pid` (children, grandchildren, ...), sorted.
pub fn descendants(root: &Root, pid: i32) -> Vec<i32> {
    descendants_in(&parent_map(root), pid)
}

/// Same, from a parent map (testable without a live `/proc`).
pub(crate) fn descendants_in(parents: &HashMap<i32, i32>, pid: i32) -> Vec<i32> {
    let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
    for (&c, &p) in parents {
        children.entry(p).or_default().push(c);
    }
    let mut out = Vec::new();
    let mut stack = vec![pid];
    while let Some(p) = stack.pop() {
        if let Some(cs) = children.get(&p) {
            for &c in cs {
                if c != pid && !out.contains(&c) {
                    out.push(c);
                    stack.push(c);
                }
            }
        }
    }
    out.sort_unstable();
    out
}

/// SIGKILL every descendant of this process and reap what becomes ours,
/// until none is left (or ~2 s passed). Returns how many were killed.
///
/// Reaps with `waitpid(-1)`: only for a process that owns all its children
/// (the `run` command, with [`crate::supervise::become_subreaper`]).
///
/// Always reads the host's `/proc`, never a `--sysroot` tree: the pids it
/// signals must be real descendants of this process.
pub fn kill_all_descendants() -> usize {
    let root = &Root::host();
    // SAFETY: getpid has no preconditions.
    let me = unsafe { libc::getpid() };
    let mut killed = 0;
    for _ in 0..200 {
        reap_any();
        let live: Vec<i32> = descendants(root, me)
            .into_iter()
            .filter(|&p| {
                u32::try_from(p)
                    .ok()
                    .and_then(|p| task_stat(root, p))
                    .is_some_and(|s| s.state != 'Z')
            })
            .collect();
        let zombies = !descendants(root, me).is_empty();
        if live.is_empty() && !zombies {
            return killed;
        }
        for p in live {
            // SAFETY: p is a descendant of ours (found through /proc), > 0.
            if p > 0 && unsafe { libc::kill(p, libc::SIGKILL) } == 0 {
                killed += 1;
            }
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    killed
}

fn reap_any() {
    let mut st = 0;
    // SAFETY: plain syscall.
    while unsafe { libc::waitpid(-1, &mut st, libc::WNOHANG) } > 0 {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtshield_sys::ProcStat;

    /// The command name is in parentheses and may itself contain spaces
    /// and parentheses: the parent links are read after the last `)`.
    #[test]
    fn ppid_after_the_last_paren() {
        let ppid = |s: &str| ProcStat::parse(s).map(|st| st.ppid);
        assert_eq!(ppid("42 (a) b) c) S 7 42 42 0"), Some(7));
        assert_eq!(
            ProcStat::parse("42 (sleep) Z 7 42").map(|st| st.state),
            Some('Z')
        );
        assert_eq!(ppid("garbage"), None);
    }

    #[test]
    fn walks_the_tree() {
        let m: HashMap<i32, i32> = [(2, 1), (3, 2), (4, 3), (5, 1), (6, 9)].into();
        assert_eq!(descendants_in(&m, 2), vec![3, 4]);
        assert_eq!(descendants_in(&m, 1), vec![2, 3, 4, 5]);
        assert!(descendants_in(&m, 6).is_empty());
    }

    #[test]
    fn reads_a_fake_proc() {
        let d = tempfile::tempdir().unwrap();
        for (pid, ppid) in [(10, 1), (11, 10), (12, 11), (13, 1)] {
            let p = d.path().join(format!("proc/{pid}"));
            std::fs::create_dir_all(&p).unwrap();
            std::fs::write(p.join("stat"), format!("{pid} (x y) S {ppid} 0 0\n")).unwrap();
        }
        std::fs::create_dir_all(d.path().join("proc/self")).unwrap();
        let r = Root::new(d.path());
        assert_eq!(descendants(&r, 10), vec![11, 12]);
    }
}
