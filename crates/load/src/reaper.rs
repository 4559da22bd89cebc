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

/// A process [`end_descendants`] ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ended {
    /// Its pid.
    pub pid: i32,
    /// Its command name (`/proc/PID/comm`), escaped when shown.
    pub comm: String,
    /// It outlived SIGTERM and the grace time: SIGKILLed.
    pub killed: bool,
}

/// How long the descendants have to end on SIGTERM before SIGKILL.
pub const END_GRACE: Duration = Duration::from_secs(2);

/// End every descendant of this process that is still running — children,
/// grandchildren, and orphans re-parented to it (it must be a child
/// subreaper, [`crate::supervise::become_subreaper`], for a daemonised
/// grandchild to be found) — and reap them: SIGTERM, up to `grace` for
/// them to end, then SIGKILL, then reap until none is left (or ~2 s).
/// Returns what had to be ended.
///
/// Only descendants are ever signalled: each is found by its parent chain
/// in the host's `/proc` (never a `--sysroot` tree), opened as a pidfd,
/// and its chain is checked again through the pidfd's process before the
/// signal goes through the pidfd, so a pid reused by another process in
/// between is never signalled. Only zombies whose parent is this process
/// are reaped (`waitpid` on their pid).
pub fn end_descendants(grace: Duration) -> Vec<Ended> {
    let root = &Root::host();
    // SAFETY: getpid has no preconditions.
    let me = unsafe { libc::getpid() };
    let mut ended: Vec<Ended> = Vec::new();
    let deadline = std::time::Instant::now() + grace;
    for _ in 0..400 {
        reap_own_zombies(root, me);
        let live = live_descendants(root, me);
        if live.is_empty() {
            if descendants(root, me).is_empty() {
                break;
            }
        } else {
            let kill = std::time::Instant::now() >= deadline;
            for &p in &live {
                let known = ended.iter().position(|e| e.pid == p);
                if known.is_some() && !kill {
                    continue;
                }
                if kill && known.is_some_and(|i| ended[i].killed) {
                    continue;
                }
                let sig = if kill { libc::SIGKILL } else { libc::SIGTERM };
                let comm = rtshield_sys::task_comm(root, p as u32).unwrap_or_default();
                if signal_descendant(root, me, p, sig) {
                    match known {
                        Some(i) => ended[i].killed |= kill,
                        None => ended.push(Ended {
                            pid: p,
                            comm,
                            killed: kill,
                        }),
                    }
                }
            }
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    ended.sort_by_key(|e| e.pid);
    ended
}

/// The descendants of `me` that are not zombies.
fn live_descendants(root: &Root, me: i32) -> Vec<i32> {
    descendants(root, me)
        .into_iter()
        .filter(|&p| {
            u32::try_from(p)
                .ok()
                .and_then(|p| task_stat(root, p))
                .is_some_and(|s| s.state != 'Z')
        })
        .collect()
}

/// Whether `pid`'s parent chain in `/proc` reaches `me`.
fn is_descendant(root: &Root, me: i32, pid: i32) -> bool {
    let mut p = pid;
    for _ in 0..4096 {
        if p <= 1 {
            return false;
        }
        let Some(st) = u32::try_from(p).ok().and_then(|p| task_stat(root, p)) else {
            return false;
        };
        if st.ppid == me {
            return true;
        }
        p = st.ppid;
    }
    false
}

/// Send `sig` to `pid` only if it is a descendant of `me`: through a
/// pidfd opened first and the chain checked after it (the pidfd keeps
/// naming that process even if the pid is reused). Without pidfds
/// (kernel before 5.3), `kill` right after the check.
fn signal_descendant(root: &Root, me: i32, pid: i32, sig: i32) -> bool {
    if pid <= 1 || pid == me {
        return false;
    }
    // SAFETY: plain syscall; the fd is closed below.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) } as i32;
    if fd < 0 {
        let nosys = std::io::Error::last_os_error().raw_os_error() == Some(libc::ENOSYS);
        // SAFETY: pid > 1 is a descendant of ours (checked just now).
        return nosys && is_descendant(root, me, pid) && unsafe { libc::kill(pid, sig) } == 0;
    }
    let ok = is_descendant(root, me, pid)
        // SAFETY: fd is a pidfd we own; null siginfo is allowed.
        && unsafe {
            libc::syscall(libc::SYS_pidfd_send_signal, fd, sig, std::ptr::null::<u8>(), 0)
        } == 0;
    // SAFETY: fd is ours.
    unsafe { libc::close(fd) };
    ok
}

/// Reap the zombies whose parent is this process, by pid.
fn reap_own_zombies(root: &Root, me: i32) {
    for (pid, ppid) in parent_map(root) {
        let zombie = || {
            u32::try_from(pid)
                .ok()
                .and_then(|p| task_stat(root, p))
                .is_some_and(|s| s.state == 'Z')
        };
        if ppid == me && zombie() {
            let mut st = 0;
            // SAFETY: pid is a child of ours.
            unsafe { libc::waitpid(pid, &mut st, libc::WNOHANG) };
        }
    }
}

/// [`end_descendants`] with [`END_GRACE`], as one line for a summary:
/// `ended 2 processes left running: 4242 (sleep), 4243 (sleep, SIGKILL)`,
/// or None when nothing was left.
pub fn end_descendants_summary() -> Option<String> {
    let ended = end_descendants(END_GRACE);
    (!ended.is_empty()).then(|| describe_ended(&ended))
}

/// `ended N process(es) left running: PID (COMM[, SIGKILL]), …`.
pub fn describe_ended(ended: &[Ended]) -> String {
    let list: Vec<String> = ended
        .iter()
        .map(|e| {
            let comm = rtshield_text::terminal::value(&e.comm).into_owned();
            if e.killed {
                format!("{} ({comm}, SIGKILL)", e.pid)
            } else {
                format!("{} ({comm})", e.pid)
            }
        })
        .collect();
    format!(
        "ended {} process{} left running: {}",
        ended.len(),
        if ended.len() == 1 { "" } else { "es" },
        list.join(", ")
    )
}

/// Every descendant of this process ended ([`end_descendants`] with
/// [`END_GRACE`]); returns how many there were.
///
/// Reaps only zombies that are this process's own children: for a process
/// that owns all its children (the `run` command, with
/// [`crate::supervise::become_subreaper`]).
pub fn kill_all_descendants() -> usize {
    end_descendants(END_GRACE).len()
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

    /// Round 5 (A), F21: only a descendant is ever signalled (signal 0
    /// here: nothing is sent to anyone, the check alone is tested).
    #[test]
    fn f21_only_descendants_are_signalled() {
        let root = &Root::host();
        // SAFETY: plain syscalls.
        let (me, parent) = unsafe { (libc::getpid(), libc::getppid()) };
        assert!(!signal_descendant(root, me, 1, 0), "init");
        assert!(!signal_descendant(root, me, parent, 0), "our parent");
        assert!(!signal_descendant(root, me, me, 0), "ourselves");
        assert!(!is_descendant(root, me, parent));
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let pid = child.id() as i32;
        assert!(is_descendant(root, me, pid));
        assert!(signal_descendant(root, me, pid, 0));
        let _ = child.kill();
        let _ = child.wait();
        assert!(!signal_descendant(root, me, pid, 0), "a reaped child");
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
