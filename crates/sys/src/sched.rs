//! Scheduling helpers shared by measure, load, scenario and partition:
//! policies, affinity, and the "may I use SCHED_FIFO?" question.

use rtshield_vocab::CpuSet;
use std::io;

use rtshield_vocab::Policy;

/// The kernel's number for a policy.
fn raw(policy: Policy) -> libc::c_int {
    match policy {
        Policy::Other => libc::SCHED_OTHER,
        Policy::Fifo => libc::SCHED_FIFO,
        Policy::Rr => libc::SCHED_RR,
        Policy::Batch => libc::SCHED_BATCH,
        Policy::Idle => libc::SCHED_IDLE,
        Policy::Deadline => 6, // SCHED_DEADLINE needs sched_setattr
    }
}

/// The policy of a kernel policy number (`/proc/PID/stat` field 41,
/// `sched_getscheduler`); `None` for one rtshield does not know.
pub(crate) fn policy_from_raw(n: i32) -> Option<Policy> {
    Some(match n {
        libc::SCHED_OTHER => Policy::Other,
        libc::SCHED_FIFO => Policy::Fifo,
        libc::SCHED_RR => Policy::Rr,
        libc::SCHED_BATCH => Policy::Batch,
        libc::SCHED_IDLE => Policy::Idle,
        6 => Policy::Deadline,
        _ => return None,
    })
}

/// The kernel thread id of the caller.
pub fn gettid() -> i32 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::gettid() }
}

/// Pin thread `tid` (0 = caller) to `cpus`.
pub fn set_affinity(tid: i32, cpus: &CpuSet) -> io::Result<()> {
    // SAFETY: cpu_set_t is plain data; CPU_SET stays within its size.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for c in cpus.iter() {
            if (c as usize) < libc::CPU_SETSIZE as usize {
                libc::CPU_SET(c as usize, &mut set);
            }
        }
        if libc::sched_setaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// The affinity of thread `tid` (0 = caller).
pub fn get_affinity(tid: i32) -> io::Result<CpuSet> {
    // SAFETY: as above.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok((0..libc::CPU_SETSIZE as u32)
            .filter(|&c| libc::CPU_ISSET(c as usize, &set))
            .collect())
    }
}

/// Set policy and priority of thread `tid` (0 = caller).
pub fn set_scheduler(tid: i32, policy: Policy, priority: i32) -> io::Result<()> {
    let prio = if policy.is_rt() { priority } else { 0 };
    let param = libc::sched_param {
        sched_priority: prio,
    };
    // SAFETY: param is a valid sched_param.
    if unsafe { libc::sched_setscheduler(tid, raw(policy), &param) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The CPU the caller runs on now (vDSO, no syscall on x86-64).
pub fn current_cpu() -> i32 {
    // SAFETY: no preconditions.
    unsafe { libc::sched_getcpu() }
}

/// Whether the caller may use SCHED_FIFO, found by trying it on a scratch
/// thread (the only reliable answer: capabilities, RLIMIT_RTPRIO and RT
/// group scheduling all have a say).
pub(crate) fn fifo_permitted() -> Result<(), io::Error> {
    std::thread::spawn(|| set_scheduler(0, Policy::Fifo, 1))
        .join()
        .unwrap_or_else(|_| Err(io::Error::other("probe thread panicked")))
}

/// Whether the effective user is root (uid 0); capabilities are not looked at.
pub fn is_root() -> bool {
    // SAFETY: no preconditions.
    unsafe { libc::geteuid() == 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn affinity_round_trip_on_own_thread() {
        let online = get_affinity(0).unwrap();
        let first = CpuSet::single(online.first().unwrap());
        std::thread::spawn(move || {
            set_affinity(0, &first).unwrap();
            assert_eq!(get_affinity(0).unwrap(), first);
            assert_eq!(current_cpu() as u32, first.first().unwrap());
        })
        .join()
        .unwrap();
    }
}
