//! The body of a built-in load worker process (`rtshield __load KIND`).
//! Every loop does a bounded batch of work, then checks the stop flag, so
//! SIGTERM ends a worker within milliseconds.

use rtshield_safefs::{DirPolicy, SafeDir};
use rtshield_sys::Root;
use rtshield_vocab::Builtin;
use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Whether this process was started by an rtshield supervisor: the
/// [`crate::WORKER_ENV`] variable names our parent's pid.
pub fn started_by_supervisor() -> bool {
    // SAFETY: getppid has no preconditions.
    let parent = unsafe { libc::getppid() };
    std::env::var(crate::WORKER_ENV)
        .ok()
        .and_then(|v| v.parse::<i32>().ok())
        == Some(parent)
}

/// The program shim (`rtshield __load exec ... -- ARGV`), started by the
/// supervisor with posix_spawn as the leader of the program's process
/// group. It takes the affinity and policy (inherited by the program),
/// starts the program in its group, waits for it and exits with its status.
/// If rtshield dies, even by `kill -9`, the shim gets SIGUSR2 (its
/// parent-death signal) and SIGKILLs its whole group: the program and
/// everything it started in the group go with it. Returns the exit status.
pub fn program_shim(
    cpus: Option<&rtshield_vocab::CpuSet>,
    sched: Option<(rtshield_vocab::Policy, i32)>,
    cgroup_procs: Option<&Path>,
    argv: &[String],
) -> i32 {
    if argv.is_empty() {
        rtshield_text::errln!("rtshield: __load exec: no command");
        return 127;
    }
    // SAFETY: the handlers only make async-signal-safe system calls.
    unsafe {
        libc::signal(
            libc::SIGUSR2,
            kill_own_group as *const () as libc::sighandler_t,
        );
        // SIGTERM/SIGINT sent to the group are for the program; the shim
        // outlives it to report its status. A handler (unlike SIG_IGN) is
        // reset to the default by exec, so the program still gets them.
        libc::signal(
            libc::SIGTERM,
            ignore_signal as *const () as libc::sighandler_t,
        );
        libc::signal(
            libc::SIGINT,
            ignore_signal as *const () as libc::sighandler_t,
        );
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGUSR2, 0, 0, 0);
    }
    if !started_by_supervisor() {
        // rtshield is already gone (or never was): take the group down.
        kill_own_group(libc::SIGUSR2);
    }
    if let Some(f) = cgroup_procs {
        // Before the program exists: it and its children start inside.
        let r = std::fs::OpenOptions::new()
            .write(true)
            .open(f)
            .and_then(|mut h| h.write_all(std::process::id().to_string().as_bytes()));
        if let Err(e) = r {
            rtshield_text::errln!("rtshield: {}: cannot join {}: {e}", argv[0], f.display());
            return 126;
        }
    }
    if let Some(c) = cpus {
        if let Err(e) = rtshield_sys::set_affinity(0, c) {
            rtshield_text::errln!("rtshield: {}: cannot set CPU affinity {c}: {e}", argv[0]);
            return 126;
        }
    }
    if let Some((p, prio)) = sched {
        if let Err(e) = rtshield_sys::set_scheduler(0, p, prio) {
            rtshield_text::errln!(
                "rtshield: {}: cannot set policy {p} priority {prio}: {e}",
                argv[0]
            );
            return 126;
        }
    }
    let status = std::process::Command::new(&argv[0])
        .args(&argv[1..])
        // A worker checks that its parent (this shim) started it.
        .env(crate::WORKER_ENV, std::process::id().to_string())
        .status();
    match status {
        Err(e) => {
            rtshield_text::errln!("rtshield: cannot start '{}': {e}", argv[0]);
            127
        }
        Ok(st) => {
            use std::os::unix::process::ExitStatusExt;
            if let Some(code) = st.code() {
                return code;
            }
            let sig = st.signal().unwrap_or(libc::SIGKILL);
            // Die of the same signal, so the supervisor sees what happened.
            // SAFETY: resetting a disposition and raising are plain calls.
            unsafe {
                libc::signal(sig, libc::SIG_DFL);
                libc::raise(sig);
            }
            128 + sig
        }
    }
}

extern "C" fn kill_own_group(_: libc::c_int) {
    // SAFETY: killpg and _exit are async-signal-safe; 0 = our own group.
    unsafe {
        libc::killpg(0, libc::SIGKILL);
        libc::_exit(137);
    }
}

extern "C" fn ignore_signal(_: libc::c_int) {}

/// SIGKILL when the parent (thread) dies, and exit at once if it already did.
fn set_death_signal() {
    // SAFETY: plain prctl; getppid/_exit have no preconditions.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
        if !started_by_supervisor() {
            libc::_exit(1);
        }
    }
}

/// Entry point of a `net:peer=ADDR` worker: [`peer_flood`] until SIGTERM.
pub fn peer_worker_main(peer: Ipv4Addr) -> anyhow::Result<()> {
    set_death_signal();
    let stop = rtshield_signals::install(rtshield_signals::Second::Waits);
    peer_flood(peer, stop, &AtomicU64::new(0)).map(|_| ())
}

/// The articles' `ping -f` from the measured machine's side: ICMP echo
/// requests (56 bytes of payload, as ping sends) to `peer` through a raw
/// socket (root or CAP_NET_RAW, like `ping -f`), 64 per batch, replies
/// drained: the NIC raises transmit-completion and receive interrupts on
/// the CPUs of its IRQ affinity. Only `peer` is ever sent to. Returns the
/// replies received.
pub(crate) fn peer_flood(
    peer: Ipv4Addr,
    stop: &AtomicBool,
    done: &AtomicU64,
) -> anyhow::Result<u64> {
    // SAFETY: plain socket(2); the fd is owned below.
    let fd = unsafe {
        libc::socket(
            libc::AF_INET,
            libc::SOCK_RAW | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
            libc::IPPROTO_ICMP,
        )
    };
    if fd < 0 {
        let e = std::io::Error::last_os_error();
        anyhow::bail!("net load: cannot open an ICMP socket to flood {peer} ({e}); it needs root or CAP_NET_RAW, as ping -f does");
    }
    // SAFETY: fd is a fresh descriptor owned by nobody else.
    let sock = unsafe { <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd) };
    let raw = std::os::fd::AsRawFd::as_raw_fd(&sock);
    let to = libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: 0,
        sin_addr: libc::in_addr {
            s_addr: u32::from_ne_bytes(peer.octets()),
        },
        sin_zero: [0; 8],
    };
    let id = (std::process::id() & 0xffff) as u16;
    let mut pkt = [0u8; 64];
    let mut rbuf = [0u8; 1500];
    let mut seq: u16 = 0;
    let mut replies = 0u64;
    while !stop.load(Ordering::Relaxed) {
        for _ in 0..64 {
            seq = seq.wrapping_add(1);
            echo_request(&mut pkt, id, seq);
            // SAFETY: pkt and to live across the call; lengths are theirs.
            let r = unsafe {
                libc::sendto(
                    raw,
                    pkt.as_ptr().cast(),
                    pkt.len(),
                    0,
                    (&to as *const libc::sockaddr_in).cast(),
                    std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
                )
            };
            if r < 0 {
                let e = std::io::Error::last_os_error();
                match e.raw_os_error() {
                    // The queue is full or the peer is not resolved yet: drain, retry.
                    Some(libc::EAGAIN | libc::ENOBUFS | libc::EHOSTUNREACH) => break,
                    _ => anyhow::bail!("net load: sending to {peer}: {e}"),
                }
            }
        }
        // SAFETY: rbuf is writable for its length.
        while unsafe { libc::recv(raw, rbuf.as_mut_ptr().cast(), rbuf.len(), 0) } > 0 {
            replies += 1;
        }
        // Let the peer answer and the queue drain: a flood, not a busy loop.
        // SAFETY: usleep has no preconditions.
        unsafe { libc::usleep(100) };
        done.fetch_add(1, Ordering::Relaxed);
    }
    Ok(replies)
}

/// An ICMP echo request with identifier `id` and sequence `seq`, checksummed.
fn echo_request(pkt: &mut [u8; 64], id: u16, seq: u16) {
    pkt.fill(0);
    pkt[0] = 8; // echo request
    pkt[4..6].copy_from_slice(&id.to_be_bytes());
    pkt[6..8].copy_from_slice(&seq.to_be_bytes());
    for (i, b) in pkt[8..].iter_mut().enumerate() {
        *b = i as u8;
    }
    let mut sum: u32 = pkt
        .chunks(2)
        .map(|w| u32::from(u16::from_be_bytes([w[0], w[1]])))
        .sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    pkt[2..4].copy_from_slice(&(!(sum as u16)).to_be_bytes());
}

/// Entry point of a worker process: stop on SIGTERM/SIGINT (the
/// supervisor's SIGKILL and the parent-death signal are the backstops).
pub fn worker_main(kind: Builtin, size: Option<u64>, dir: Option<&Path>) -> anyhow::Result<()> {
    set_death_signal();
    let stop = rtshield_signals::install(rtshield_signals::Second::Waits);
    run_until(kind, size, dir, stop).map(|_| ())
}

/// Run one kind of load in this process until `stop`; returns the number
/// of batches done. `hell` is not a worker kind (it expands to the others).
pub(crate) fn run_until(
    kind: Builtin,
    size: Option<u64>,
    dir: Option<&Path>,
    stop: &AtomicBool,
) -> anyhow::Result<u64> {
    run_counting(kind, size, dir, stop, &AtomicU64::new(0))
}

/// [`run_until`], counting finished batches in `done` as it goes (so a
/// caller can see the load working without timing it).
pub(crate) fn run_counting(
    kind: Builtin,
    size: Option<u64>,
    dir: Option<&Path>,
    stop: &AtomicBool,
    done: &AtomicU64,
) -> anyhow::Result<u64> {
    let size = size.or(kind.default_size()).unwrap_or(0);
    let bytes = rtshield_limits::LOAD_SIZE_BYTES;
    if matches!(kind, Builtin::Memory | Builtin::Io) && size > bytes.max {
        anyhow::bail!(
            "{kind} load: {size} bytes (at most {} per worker)",
            bytes.max
        );
    }
    match kind {
        Builtin::Cpu => cpu(stop, done),
        Builtin::Memory => memory(size.max(4096) as usize, stop, done)?,
        Builtin::Io => {
            let dir = dir.ok_or_else(|| anyhow::anyhow!("io load: no --dir given"))?;
            io(&private_dir(dir)?, size.max(4096), stop, done)?
        }
        Builtin::Syscall => syscall(stop, done),
        Builtin::Fork => fork(stop, done),
        Builtin::Net => net(stop, done)?,
        Builtin::Hell => anyhow::bail!("hell is a preset of several workers, not a worker"),
        Builtin::Timers => timers(threads(kind, size)?, stop, done),
        Builtin::SyncIo => {
            let dir = dir.ok_or_else(|| anyhow::anyhow!("syncio load: no --dir given"))?;
            syncio(&private_dir(dir)?, threads(kind, size)?, stop, done)?
        }
    }
    Ok(done.load(Ordering::Relaxed))
}

/// The io loads' directory, made by the parent: opened through the path
/// layer and used only if private (ours, mode 0700), so a directory
/// swapped in by someone else is refused rather than written into.
fn private_dir(dir: &Path) -> anyhow::Result<SafeDir> {
    let shown = dir.display();
    let d =
        SafeDir::open(dir, DirPolicy::AllowUnsafe).map_err(|e| anyhow::anyhow!("io load: {e}"))?;
    let (uid, mode) = d
        .owner_mode()
        .map_err(|e| anyhow::anyhow!("io load: {e}"))?;
    let me = effective_uid();
    if uid != me || mode & 0o077 != 0 {
        anyhow::bail!(
            "io load: {shown} is not the private directory rtshield made for it \
             (owned by uid {uid}, mode {mode:o}; expected uid {me}, mode 700): refusing to write there"
        );
    }
    Ok(d)
}

/// The effective uid.
fn effective_uid() -> u32 {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() }
}

/// `size` as the thread count of `timers`/`syncio`, checked.
fn threads(kind: Builtin, size: u64) -> anyhow::Result<usize> {
    let max = rtshield_vocab::LOAD_THREADS_MAX;
    anyhow::ensure!(
        (1..=max).contains(&size),
        "{kind} load: {size} threads (expected 1..{max})"
    );
    Ok(size as usize)
}

/// Small stacks: the thread storms only loop on a sleep or a write.
const STORM_STACK: usize = 64 * 1024;

/// The partitioning article's `stress-cpu`: `n` threads each looping on
/// `usleep(1)`, so the CPU takes a timer expiry and a wake-up per loop.
fn timers(n: usize, stop: &AtomicBool, done: &AtomicU64) {
    std::thread::scope(|s| {
        for _ in 0..n {
            let _ = std::thread::Builder::new()
                .stack_size(STORM_STACK)
                .spawn_scoped(s, || {
                    while !stop.load(Ordering::Relaxed) {
                        for _ in 0..100 {
                            // SAFETY: usleep has no preconditions.
                            unsafe { libc::usleep(1) };
                        }
                        done.fetch_add(1, Ordering::Relaxed);
                    }
                });
        }
    });
}

/// The partitioning article's `stress-io`: `n` threads each rewriting 512
/// bytes at the start of its own `O_SYNC` file, then `usleep(1)`: every
/// write waits for the disk, whose completion is a device interrupt.
fn syncio(dir: &SafeDir, n: usize, stop: &AtomicBool, done: &AtomicU64) -> anyhow::Result<()> {
    use std::os::unix::fs::FileExt;
    let mut files = Vec::with_capacity(n);
    for i in 0..n {
        let name = format!("syncio-{}-{i}.dat", std::process::id());
        let f = dir
            .create_new_file(&name, 0o600, true)
            .map_err(|e| anyhow::anyhow!("syncio load: {e}"))?;
        files.push((name, f));
    }
    let buf = [0x5au8; 512];
    std::thread::scope(|s| {
        for (_, f) in &files {
            let buf = &buf;
            let _ = std::thread::Builder::new()
                .stack_size(STORM_STACK)
                .spawn_scoped(s, move || {
                    while !stop.load(Ordering::Relaxed) {
                        for _ in 0..10 {
                            let _ = f.write_at(buf, 0);
                            // SAFETY: usleep has no preconditions.
                            unsafe { libc::usleep(1) };
                        }
                        done.fetch_add(1, Ordering::Relaxed);
                    }
                });
        }
    });
    for (name, f) in files {
        drop(f);
        let _ = dir.remove_file(&name);
    }
    Ok(())
}

fn cpu(stop: &AtomicBool, done: &AtomicU64) {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    while !stop.load(Ordering::Relaxed) {
        for _ in 0..200_000 {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
        }
        std::hint::black_box(x);
        done.fetch_add(1, Ordering::Relaxed);
    }
}

/// mmap, write one byte per page, munmap: every round faults every page in.
fn memory(size: usize, stop: &AtomicBool, done: &AtomicU64) -> anyhow::Result<()> {
    let page = 4096;
    let mut n: u64 = 0;
    while !stop.load(Ordering::Relaxed) {
        // SAFETY: anonymous private mapping, written only within its length,
        // unmapped before the next round.
        unsafe {
            let p = libc::mmap(
                std::ptr::null_mut(),
                size,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            );
            if p == libc::MAP_FAILED {
                anyhow::bail!(
                    "memory load: mmap of {size} bytes: {}",
                    std::io::Error::last_os_error()
                );
            }
            let b = p as *mut u8;
            let mut off = 0;
            while off < size {
                b.add(off).write_volatile(n as u8);
                off += page;
                if off % (page * 4096) == 0 && stop.load(Ordering::Relaxed) {
                    break;
                }
            }
            libc::munmap(p, size);
        }
        n += 1;
        done.fetch_add(1, Ordering::Relaxed);
    }
    Ok(())
}

/// Write `size` bytes in 1 MiB chunks with an fsync after each, truncate, again.
fn io(dir: &SafeDir, size: u64, stop: &AtomicBool, done: &AtomicU64) -> anyhow::Result<()> {
    let name = format!("load-{}.dat", std::process::id());
    // O_EXCL|O_NOFOLLOW in the private directory: never a planted file or link.
    let mut f = dir
        .create_new_file(&name, 0o600, false)
        .map_err(|e| anyhow::anyhow!("io load: {e}"))?;
    let chunk = vec![0x5au8; (1 << 20).min(size as usize)];
    let mut written = 0u64;
    while !stop.load(Ordering::Relaxed) {
        f.write_all(&chunk)?;
        f.sync_data()?;
        written += chunk.len() as u64;
        if written >= size {
            f.set_len(0)?;
            use std::io::Seek;
            f.seek(std::io::SeekFrom::Start(0))?;
            written = 0;
        }
        done.fetch_add(1, Ordering::Relaxed);
    }
    drop(f);
    let _ = dir.remove_file(&name);
    Ok(())
}

/// The torture article's `cat /proc/interrupts`, `ps`, `top -d 0` loops, in-process.
fn syscall(stop: &AtomicBool, done: &AtomicU64) {
    let root = Root::host();
    while !stop.load(Ordering::Relaxed) {
        let _ = rtshield_sys::read_interrupts(&root);
        let _ = rtshield_sys::StatSnapshot::read(&root);
        let _ = rtshield_sys::LoadAvg::read(&root);
        let _ = root.read(rtshield_sys::kpath::MEMINFO);
        // ps: every process's stat.
        for (i, pid) in rtshield_sys::pids(&root).into_iter().enumerate() {
            let _ = rtshield_sys::task_stat(&root, pid);
            if i % 64 == 0 && stop.load(Ordering::Relaxed) {
                break;
            }
        }
        for _ in 0..1000 {
            // SAFETY: getpid has no preconditions; the raw syscall skips any libc cache.
            unsafe {
                libc::syscall(libc::SYS_getpid);
            }
        }
        done.fetch_add(1, Ordering::Relaxed);
    }
}

/// fork/exec `/bin/true` (or a bare fork where it does not exist), one at a time.
fn fork(stop: &AtomicBool, done: &AtomicU64) {
    let truth = ["/bin/true", "/usr/bin/true"]
        .into_iter()
        .find(|p| Path::new(p).exists());
    while !stop.load(Ordering::Relaxed) {
        match truth {
            Some(t) => {
                let _ = std::process::Command::new(t)
                    .stdin(std::process::Stdio::null())
                    .status();
            }
            None => {
                // SAFETY: the worker is single-threaded; the child only _exits.
                let pid = unsafe { libc::fork() };
                if pid == 0 {
                    unsafe { libc::_exit(0) };
                } else if pid > 0 {
                    let mut st = 0;
                    unsafe { libc::waitpid(pid, &mut st, 0) };
                } else {
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
            }
        }
        done.fetch_add(1, Ordering::Relaxed);
    }
}

/// UDP datagrams and a TCP stream between sockets bound to 127.0.0.1,
/// non-blocking, 64 sends per batch.
fn net(stop: &AtomicBool, done: &AtomicU64) -> anyhow::Result<()> {
    let lo = SocketAddr::from((Ipv4Addr::LOCALHOST, 0));
    let a = UdpSocket::bind(lo)?;
    let b = UdpSocket::bind(lo)?;
    let to = b.local_addr()?;
    // Never anything but the loopback, whatever happens above.
    anyhow::ensure!(
        to.ip().is_loopback(),
        "net load: refusing non-loopback {to}"
    );
    a.set_nonblocking(true)?;
    b.set_nonblocking(true)?;
    let l = TcpListener::bind(lo)?;
    let taddr = l.local_addr()?;
    anyhow::ensure!(
        taddr.ip().is_loopback(),
        "net load: refusing non-loopback {taddr}"
    );
    let mut tx = TcpStream::connect(taddr)?;
    let (mut rx, _) = l.accept()?;
    tx.set_nonblocking(true)?;
    rx.set_nonblocking(true)?;
    let buf = vec![0xa5u8; 1024];
    let big = vec![0x3cu8; 64 * 1024];
    let mut rbuf = vec![0u8; 64 * 1024];
    while !stop.load(Ordering::Relaxed) {
        for _ in 0..64 {
            let _ = a.send_to(&buf, to);
        }
        while b.recv(&mut rbuf).is_ok() {}
        let _ = tx.write(&big);
        while matches!(rx.read(&mut rbuf), Ok(k) if k > 0) {}
        done.fetch_add(1, Ordering::Relaxed);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Duration;

    /// Run a worker kind in a thread until it has finished a batch (a
    /// bounded wait, so a loaded machine only makes it slower), then stop
    /// it: it must end, and its count includes what was seen.
    fn briefly(kind: Builtin, size: Option<u64>, dir: Option<&Path>) -> u64 {
        let stop = Arc::new(AtomicBool::new(false));
        let done = Arc::new(AtomicU64::new(0));
        let (s2, d2) = (stop.clone(), done.clone());
        let dir = dir.map(Path::to_path_buf);
        let h = std::thread::spawn(move || run_counting(kind, size, dir.as_deref(), &s2, &d2));
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while done.load(Ordering::Relaxed) == 0 && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        let seen = done.load(Ordering::Relaxed);
        stop.store(true, Ordering::Relaxed);
        let n = h.join().unwrap().unwrap();
        assert!(n >= seen, "{kind}: returned {n} < {seen} seen");
        n
    }

    #[test]
    fn each_worker_does_work_and_stops() {
        assert!(briefly(Builtin::Cpu, None, None) > 0);
        assert!(briefly(Builtin::Memory, Some(1 << 20), None) > 0);
        assert!(briefly(Builtin::Syscall, None, None) > 0);
        assert!(briefly(Builtin::Fork, None, None) > 0);
        assert!(briefly(Builtin::Net, None, None) > 0);
        assert!(briefly(Builtin::Timers, Some(4), None) > 0);
    }

    #[test]
    fn echo_requests_checksum_to_zero() {
        let mut p = [0u8; 64];
        echo_request(&mut p, 0x1234, 7);
        assert_eq!((p[0], &p[4..8]), (8, &[0x12, 0x34, 0, 7][..]));
        let mut sum: u32 = p
            .chunks(2)
            .map(|w| u32::from(u16::from_be_bytes([w[0], w[1]])))
            .sum();
        while sum > 0xffff {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        assert_eq!(sum, 0xffff);
    }

    /// A directory like the one the parent makes for an io worker (0700).
    fn private_tempdir() -> tempfile::TempDir {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        d
    }

    #[test]
    fn syncio_worker_writes_then_cleans_its_files() {
        let d = private_tempdir();
        assert!(briefly(Builtin::SyncIo, Some(3), Some(d.path())) > 0);
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
    }

    #[test]
    fn thread_counts_out_of_range_are_refused() {
        let stop = AtomicBool::new(true);
        let e = run_until(Builtin::Timers, Some(0), None, &stop).unwrap_err();
        assert!(
            e.to_string().contains("0 threads (expected 1..1000)"),
            "{e}"
        );
        assert!(run_until(Builtin::Timers, Some(1001), None, &stop).is_err());
        // The article's default.
        assert_eq!(Builtin::Timers.default_size(), Some(150));
        assert_eq!(Builtin::SyncIo.default_size(), Some(150));
        assert!(!Builtin::Hell.expand().contains(&Builtin::Timers));
    }

    #[test]
    fn io_worker_writes_then_cleans_its_file() {
        let d = private_tempdir();
        assert!(briefly(Builtin::Io, Some(64 << 10), Some(d.path())) > 0);
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
    }

    /// Issue 21 finding 7 and t-io-load-file-links: the io loads write only
    /// into a private directory (ours, 0700), and only into files they
    /// create (`O_EXCL|O_NOFOLLOW`): a directory another user could write,
    /// or a `load-PID.dat` link planted in it, is refused, never followed.
    #[test]
    fn io_workers_refuse_a_shared_dir_and_planted_links() {
        use std::os::unix::fs::PermissionsExt;
        let stop = AtomicBool::new(true);
        let victim_dir = tempfile::tempdir().unwrap();
        let victim = victim_dir.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let d = tempfile::tempdir().unwrap();
        std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        for kind in [Builtin::Io, Builtin::SyncIo] {
            let e = run_until(kind, Some(64 << 10), Some(d.path()), &stop).unwrap_err();
            assert!(e.to_string().contains("not the private directory"), "{e}");
        }
        std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        let me = std::process::id();
        std::os::unix::fs::symlink(&victim, d.path().join(format!("load-{me}.dat"))).unwrap();
        std::os::unix::fs::symlink(&victim, d.path().join(format!("syncio-{me}-0.dat"))).unwrap();
        assert!(run_until(Builtin::Io, Some(64 << 10), Some(d.path()), &stop).is_err());
        assert!(run_until(Builtin::SyncIo, Some(2), Some(d.path()), &stop).is_err());
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        // A size past the bound is refused before anything is written.
        let e = run_until(Builtin::Io, Some(65 << 30), Some(d.path()), &stop).unwrap_err();
        assert!(e.to_string().contains("at most"), "{e}");
    }

    #[test]
    fn hell_and_io_without_dir_are_refused() {
        let stop = AtomicBool::new(true);
        assert!(run_until(Builtin::Hell, None, None, &stop).is_err());
        assert!(run_until(Builtin::Io, None, None, &stop).is_err());
    }
}
