//! What a real-time run needs around the loop: locked memory, a pre-faulted
//! stack, and `/dev/cpu_dma_latency` held at 0 (keeps CPUs out of deep
//! C-states while the file stays open). Each is undone by `Drop`.

use std::fs::File;
use std::io::{self, Write};

/// `mlockall(MCL_CURRENT | MCL_FUTURE)` until dropped: no page fault in the
/// loop because a page was swapped out or never mapped.
#[derive(Debug)]
pub struct MemLock(());

impl MemLock {
    /// Lock every current and future page of the process; the error is `mlockall`'s (EPERM without CAP_IPC_LOCK, ENOMEM over RLIMIT_MEMLOCK).
    pub fn lock() -> io::Result<MemLock> {
        // SAFETY: plain syscall, no pointers.
        if unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(MemLock(()))
    }
}

impl Drop for MemLock {
    fn drop(&mut self) {
        // SAFETY: plain syscall.
        unsafe { libc::munlockall() };
    }
}

/// An open `/dev/cpu_dma_latency` with a target written; the kernel keeps
/// the constraint while the descriptor is open and drops it on close.
#[derive(Debug)]
pub(crate) struct DmaLatency {
    _f: File,
    pub value_us: i32,
}

impl DmaLatency {
    pub(crate) const PATH: &'static str = "/dev/cpu_dma_latency";

    pub(crate) fn hold(value_us: i32) -> io::Result<DmaLatency> {
        let mut f = File::options().write(true).open(Self::PATH)?;
        // The kernel wants a binary s32 (it also accepts hex text).
        f.write_all(&value_us.to_ne_bytes())?;
        Ok(DmaLatency { _f: f, value_us })
    }
}

/// The calling thread raised to SCHED_FIFO at a low priority until dropped,
/// then put back to its policy and priority. Used for the main thread so
/// a CPU load on the housekeeping CPUs cannot starve the ring drain (the
/// rings would fill and samples be lost); it sleeps between drains, and its
/// priority stays below any measuring thread.
#[derive(Debug)]
pub(crate) struct RaisedPriority {
    policy: libc::c_int,
    param: libc::sched_param,
}

impl RaisedPriority {
    pub(crate) fn raise(priority: i32) -> std::io::Result<RaisedPriority> {
        // SAFETY: plain syscalls on the calling thread with valid pointers.
        unsafe {
            let policy = libc::sched_getscheduler(0);
            if policy < 0 {
                return Err(io::Error::last_os_error());
            }
            let mut param: libc::sched_param = std::mem::zeroed();
            if libc::sched_getparam(0, &mut param) != 0 {
                return Err(io::Error::last_os_error());
            }
            let want = libc::sched_param {
                sched_priority: priority,
            };
            // RESET_ON_FORK: a program the main thread (re)spawns during
            // the run starts as SCHED_OTHER, never as an RT busy loop.
            let fifo = libc::SCHED_FIFO | libc::SCHED_RESET_ON_FORK;
            if libc::sched_setscheduler(0, fifo, &want) != 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(RaisedPriority { policy, param })
        }
    }
}

impl Drop for RaisedPriority {
    fn drop(&mut self) {
        // SAFETY: restores what sched_getscheduler/getparam returned.
        unsafe { libc::sched_setscheduler(0, self.policy, &self.param) };
    }
}

/// Touch `bytes` of stack below the caller so the loop never faults on a
/// fresh stack page (with mlockall the pages then stay).
#[inline(never)]
pub fn prefault_stack(bytes: usize) {
    const CHUNK: usize = 4096;
    #[inline(never)]
    fn touch(left: usize) {
        let mut buf = [0u8; CHUNK];
        // Keep the writes: the optimiser must not drop the array.
        std::hint::black_box(&mut buf);
        if left > CHUNK {
            touch(left - CHUNK);
        }
        std::hint::black_box(&buf);
    }
    touch(bytes);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raised_priority_is_restored() {
        std::thread::spawn(|| {
            // SAFETY: reading the calling thread's policy.
            let before = unsafe { libc::sched_getscheduler(0) };
            match RaisedPriority::raise(1) {
                Ok(g) => {
                    let p = unsafe { libc::sched_getscheduler(0) };
                    assert_eq!(p & !libc::SCHED_RESET_ON_FORK, libc::SCHED_FIFO);
                    assert_ne!(p & libc::SCHED_RESET_ON_FORK, 0);
                    drop(g);
                }
                Err(e) => {
                    rtshield_testkit::require(
                        false,
                        &format!("SCHED_FIFO not permitted here ({e})"),
                    );
                }
            }
            assert_eq!(unsafe { libc::sched_getscheduler(0) }, before);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn prefault_does_not_crash() {
        std::thread::Builder::new()
            .stack_size(512 * 1024)
            .spawn(|| prefault_stack(256 * 1024))
            .unwrap()
            .join()
            .unwrap();
    }
}
