//! The stop signals (SIGINT, SIGTERM, SIGHUP, SIGQUIT) end a run early;
//! the files are still written
//! (`rtshield-signals` installs the handlers; a second signal while the
//! first is being handled exits at once, for a user who really wants out).
//! Also the wake signal that cuts a measuring thread's wait short.

use std::sync::atomic::AtomicBool;
use std::sync::Once;

/// Install the stop signals' handlers (once) and return the flag they set;
/// a second signal exits at once (status 128 + signal), unless the
/// process installed them first with `Second::Waits` (a campaign's cell).
pub fn install_signals() -> &'static AtomicBool {
    rtshield_signals::install(rtshield_signals::Second::Exits)
}

/// The signal that set the flag, if one did.
pub fn signal_received() -> Option<i32> {
    rtshield_signals::received()
}

static INSTALL_WAKE: Once = Once::new();

extern "C" fn on_wake(_sig: libc::c_int) {
    // Nothing to do: the point is that the interrupted wait returns EINTR.
}

/// The signal the main thread sends a measuring thread to cut its current
/// wait short when the run stops (a period may be 10 s or 1 h long).
/// `SIGRTMIN + 1`: `SIGRTMIN` is the POSIX timer's own signal.
pub(crate) fn wake_signal() -> libc::c_int {
    libc::SIGRTMIN() + 1
}

/// Install the no-op handler of [`wake_signal`] (once), WITHOUT
/// `SA_RESTART`, so `clock_nanosleep` and `sigwaitinfo` return EINTR.
pub(crate) fn install_wake() {
    INSTALL_WAKE.call_once(|| {
        // SAFETY: a zeroed sigaction with a valid handler and an empty mask.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_wake as extern "C" fn(libc::c_int) as usize;
            sa.sa_flags = 0;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(wake_signal(), &sa, std::ptr::null_mut());
        }
    });
}

/// Send [`wake_signal`] to thread `tid` of this process.
pub(crate) fn wake_thread(tid: i32) {
    if tid <= 0 {
        return;
    }
    // SAFETY: tgkill to a thread of our own process (tgid = getpid), whose
    // handler for this signal does nothing.
    unsafe {
        libc::syscall(libc::SYS_tgkill, libc::getpid(), tid, wake_signal());
    }
}
