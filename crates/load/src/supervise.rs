//! The program supervisor: starts commands in their own process groups with
//! an affinity, a policy and output redirection, applies the termination
//! policy (RESPAWN with back-off, STOP, IGNORE), and on shutdown makes sure
//! every process of every group is gone and reaped.
//!
//! Every child gets `PR_SET_PDEATHSIG(SIGKILL)`, so even a `kill -9` of
//! rtshield takes the direct children down with it. Children are started
//! from the calling thread: call the supervisor from the main thread (the
//! death signal follows the *thread* that forked).

use rtshield_sys::{set_affinity, set_scheduler};
use rtshield_vocab::CpuSet;
use rtshield_vocab::Policy;
use std::collections::HashMap;
use std::io;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rtshield_vocab::{Output, Termination};

/// One supervised program.
#[derive(Debug, Clone)]
pub struct ProcSpec {
    /// Name used in messages and to group results (`program[0]`).
    pub label: String,
    /// Program and arguments (no shell: use `sh -c "..."` for pipes).
    pub argv: Vec<String>,
    /// Pin the program to these CPUs; `None`: it inherits rtshield's affinity.
    pub cpus: Option<CpuSet>,
    /// Policy and priority; `None` keeps what it inherits (SCHED_OTHER).
    pub sched: Option<(Policy, i32)>,
    /// Where its stdout goes.
    pub stdout: Output,
    /// Where its stderr goes.
    pub stderr: Output,
    /// After a normal exit (status 0).
    pub on_ok: Termination,
    /// After a failure: non-zero status, killed by a signal, or not startable.
    pub on_ko: Termination,
    /// Wait this long after [`Supervisor::start`] before the first spawn.
    pub start_delay: Duration,
    /// Removed (recursively, through descriptors) once the program is gone
    /// for good (the io loads' private directory).
    pub cleanup_dir: Option<std::sync::Arc<rtshield_safefs::PrivateDir>>,
    /// A built-in load worker: gets [`crate::WORKER_ENV`] in its environment.
    pub env_worker: bool,
    /// A cgroup's `cgroup.procs` (or v1 `tasks`) file: the program's shim
    /// moves itself there before starting the program, so the program and
    /// all its children are in the cgroup from the start (shim only).
    pub cgroup_procs: Option<PathBuf>,
}

impl ProcSpec {
    /// Program `argv` named `label`, with the defaults: unpinned, inherited policy,
    /// output inherited, left dead when it ends (IGNORE), started at once.
    pub fn new(label: impl Into<String>, argv: Vec<String>) -> Self {
        ProcSpec {
            label: label.into(),
            argv,
            cpus: None,
            sched: None,
            stdout: Output::Inherit,
            stderr: Output::Inherit,
            on_ok: Termination::Ignore,
            on_ko: Termination::Ignore,
            start_delay: Duration::ZERO,
            cleanup_dir: None,
            env_worker: false,
            cgroup_procs: None,
        }
    }
}

/// Spawn and exit counts of one program (they go into results.json).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProcStats {
    /// Times it was started (respawns included).
    pub spawns: u64,
    /// Exits with status 0.
    pub exits_ok: u64,
    /// Failures: non-zero status, killed by a signal, or not startable.
    pub exits_ko: u64,
    /// Spawn attempts that failed (program not found, EPERM on the policy...);
    /// also counted in `exits_ko`.
    pub spawn_errors: u64,
    /// The last spawn error, in words.
    pub last_error: Option<String>,
}

#[derive(Debug)]
enum State {
    /// Waiting for its start delay or back-off.
    Waiting(Instant),
    Running {
        pid: i32,
        since: Instant,
    },
    /// Stopped by a rest phase; restarted by `resume`.
    Paused,
    /// Ended with IGNORE, STOP, or shutdown.
    Dead,
}

/// A program's output file: its directory (opened once, through the path
/// layer) and the file's name; every (re)spawn opens the file from there.
type HeldOutput = Option<(rtshield_safefs::SafeDir, String)>;

#[derive(Debug)]
struct Proc {
    spec: ProcSpec,
    /// `spec.stdout` and `spec.stderr` when they are files.
    outputs: [HeldOutput; 2],
    state: State,
    stats: ProcStats,
    /// Consecutive runs shorter than [`FAST_FAIL`]: drives the back-off.
    fast_fails: u32,
}

/// A run shorter than this counts as a fast failure for the back-off.
pub(crate) const FAST_FAIL: Duration = Duration::from_secs(1);
/// First back-off delay; doubles with each consecutive fast exit.
pub(crate) const BACKOFF_MIN: Duration = Duration::from_millis(100);
/// Longest back-off delay: a program failing at once respawns at most
/// every 10 s, so a broken command line cannot fork-bomb the machine.
pub(crate) const BACKOFF_MAX: Duration = Duration::from_secs(10);
/// Time a group gets between SIGTERM and SIGKILL.
pub(crate) const GRACE: Duration = Duration::from_millis(300);

/// Something the caller must act on, from [`Supervisor::poll`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A program ended; `ok` = exit status 0.
    Exited {
        /// The program's [`ProcSpec::label`].
        label: String,
        /// The process that ended.
        pid: i32,
        /// It exited with status 0.
        ok: bool,
        /// How it ended, in words (`exit 1`, `killed by signal 9`).
        how: String,
    },
    /// A program could not be started.
    SpawnFailed {
        /// The program's [`ProcSpec::label`].
        label: String,
        /// Why, in words (the OS error of `fork`/`exec` or of the policy).
        error: String,
    },
    /// A program ended and its policy is STOP: end the run.
    Stop {
        /// The program's [`ProcSpec::label`].
        label: String,
        /// How it ended, in words.
        how: String,
    },
}

/// The supervisor. Dropping it shuts everything down.
#[derive(Debug)]
pub struct Supervisor {
    procs: Vec<Proc>,
    /// Reap with `waitpid(-1)`: also collects orphaned grandchildren
    /// re-parented to us (with [`become_subreaper`]). Only for a process
    /// that has no other children (the `run` command).
    reap_all: bool,
    started: bool,
    /// `rtshield` executable whose `__load exec` shim starts programs (see
    /// [`Supervisor::with_launcher`]).
    launcher: Option<PathBuf>,
}

impl Supervisor {
    /// Output files are truncated now (respawns append).
    pub fn new(specs: Vec<ProcSpec>) -> io::Result<Self> {
        for s in &specs {
            if s.argv.is_empty() {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("{}: empty command line", s.label),
                ));
            }
        }
        let now = Instant::now();
        let mut procs = Vec::with_capacity(specs.len());
        for spec in specs {
            let outputs = [
                held_output(&spec.stdout, &spec.label)?,
                held_output(&spec.stderr, &spec.label)?,
            ];
            procs.push(Proc {
                spec,
                outputs,
                state: State::Waiting(now),
                stats: ProcStats::default(),
                fast_fails: 0,
            });
        }
        Ok(Supervisor {
            procs,
            reap_all: false,
            started: false,
            launcher: None,
        })
    }

    /// Reap every child of the process (see the field doc). For `run` only.
    pub fn reap_all_children(mut self, yes: bool) -> Self {
        self.reap_all = yes;
        self
    }

    /// Spawn through the shim `EXE __load exec ... -- ARGV` (see
    /// [`crate::worker::program_shim`]) instead of fork, set-up and exec.
    /// rtshield starts the shim with posix_spawn (vfork-like, no copy of the
    /// page tables), so a respawn never makes the measuring threads take
    /// copy-on-write faults; the shim leads the program's group and takes
    /// it down if rtshield dies, even by `kill -9`.
    pub fn with_launcher(mut self, exe: PathBuf) -> Self {
        self.launcher = Some(exe);
        self
    }

    /// Start every program without a start delay; the others start from
    /// [`poll`](Self::poll). Returns the events of the first spawns.
    pub fn start(&mut self) -> Vec<Event> {
        self.start_except(&|_| false)
    }

    /// [`start`](Self::start), the programs whose index satisfies `paused`
    /// left paused (a load cycle that starts with its rest phase): they
    /// start at the first [`resume_where`](Self::resume_where).
    pub fn start_except(&mut self, paused: &dyn Fn(usize) -> bool) -> Vec<Event> {
        let now = Instant::now();
        for (i, p) in self.procs.iter_mut().enumerate() {
            p.state = if paused(i) {
                State::Paused
            } else {
                State::Waiting(now + p.spec.start_delay)
            };
        }
        self.started = true;
        self.poll()
    }

    /// Reap ended programs, apply their policy, (re)start those due.
    /// Cheap; call it every few hundred milliseconds.
    pub fn poll(&mut self) -> Vec<Event> {
        let mut events = Vec::new();
        if !self.started {
            return events;
        }
        self.reap(&mut events);
        let now = Instant::now();
        for i in 0..self.procs.len() {
            if let State::Waiting(t) = self.procs[i].state {
                if t <= now {
                    self.spawn(i, &mut events);
                }
            }
        }
        events
    }

    fn spawn(&mut self, i: usize, events: &mut Vec<Event>) {
        let p = &mut self.procs[i];
        match spawn_one(&p.spec, &p.outputs, self.launcher.as_deref()) {
            Ok(pid) => {
                p.stats.spawns += 1;
                p.state = State::Running {
                    pid,
                    since: Instant::now(),
                };
            }
            Err(e) => {
                let msg = format!("{}: cannot start '{}': {e}", p.spec.label, p.spec.argv[0]);
                p.stats.spawn_errors += 1;
                p.stats.exits_ko += 1;
                p.stats.last_error = Some(msg.clone());
                events.push(Event::SpawnFailed {
                    label: p.spec.label.clone(),
                    error: msg.clone(),
                });
                Self::after_exit(p, false, Duration::ZERO, msg, events);
            }
        }
    }

    /// Apply the termination policy of a program that just ended.
    fn after_exit(p: &mut Proc, ok: bool, ran: Duration, how: String, events: &mut Vec<Event>) {
        let policy = if ok { p.spec.on_ok } else { p.spec.on_ko };
        match policy {
            Termination::Respawn => {
                let delay = if ran < FAST_FAIL {
                    p.fast_fails = p.fast_fails.saturating_add(1);
                    backoff(p.fast_fails)
                } else {
                    p.fast_fails = 0;
                    Duration::ZERO
                };
                p.state = State::Waiting(Instant::now() + delay);
            }
            Termination::Stop => {
                p.state = State::Dead;
                events.push(Event::Stop {
                    label: p.spec.label.clone(),
                    how,
                });
            }
            Termination::Ignore => p.state = State::Dead,
        }
        if matches!(p.state, State::Dead) {
            if let Some(d) = p.spec.cleanup_dir.take() {
                let _ = d.remove();
            }
        }
    }

    fn reap(&mut self, events: &mut Vec<Event>) {
        loop {
            // Find an ended child without reaping it: while it is an
            // unreaped zombie its pid (= its group id) cannot be reused, so
            // killing the rest of its group below reaches only its group.
            let pid = if self.reap_all {
                match peek_exited(-1) {
                    Some(x) => x,
                    None => break,
                }
            } else {
                // Only our own pids: other code in this process may have children.
                let found = self.procs.iter().find_map(|p| match p.state {
                    State::Running { pid, .. } => peek_exited(pid),
                    _ => None,
                });
                match found {
                    Some(x) => x,
                    None => break,
                }
            };
            let Some(p) = self
                .procs
                .iter_mut()
                .find(|p| matches!(p.state, State::Running { pid: q, .. } if q == pid))
            else {
                // An orphaned grandchild: reap it, nothing else to do (and
                // stop if someone else reaped it first: never spin).
                if wait_nohang(pid).is_none() {
                    break;
                }
                continue;
            };
            let State::Running { since, .. } = p.state else {
                unreachable!()
            };
            // The leader is gone; anything left in its group goes too.
            kill_group(pid, libc::SIGKILL);
            let Some((_, status)) = wait_nohang(pid) else {
                break; // reaped elsewhere meanwhile: never spin
            };
            let ok = libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
            let how = describe_status(status);
            if ok {
                p.stats.exits_ok += 1;
            } else {
                p.stats.exits_ko += 1;
            }
            events.push(Event::Exited {
                label: p.spec.label.clone(),
                pid,
                ok,
                how: how.clone(),
            });
            Self::after_exit(p, ok, since.elapsed(), how, events);
        }
    }

    /// Stop every running program (a rest phase); not counted as exits.
    pub fn pause(&mut self) {
        self.pause_where(&|_| true);
    }

    /// Stop the programs whose index (in spec order) satisfies `which`.
    pub fn pause_where(&mut self, which: &dyn Fn(usize) -> bool) {
        let pids = self.terminate_running(which);
        for (i, p) in self.procs.iter_mut().enumerate() {
            if !which(i) {
                continue;
            }
            if matches!(p.state, State::Running { pid, .. } if pids.contains(&pid))
                || matches!(p.state, State::Waiting(_))
            {
                p.state = State::Paused;
            }
        }
    }

    /// Start again what a rest phase stopped.
    pub fn resume(&mut self) -> Vec<Event> {
        self.resume_where(&|_| true)
    }

    /// Start again the paused programs whose index satisfies `which`.
    pub fn resume_where(&mut self, which: &dyn Fn(usize) -> bool) -> Vec<Event> {
        let now = Instant::now();
        for (i, p) in self.procs.iter_mut().enumerate() {
            if which(i) && matches!(p.state, State::Paused) {
                p.state = State::Waiting(now);
                p.fast_fails = 0;
            }
        }
        self.poll()
    }

    /// SIGTERM every running group, SIGKILL after [`GRACE`], reap all.
    /// Returns the pids that were running.
    fn terminate_running(&mut self, which: &dyn Fn(usize) -> bool) -> Vec<i32> {
        let pids: Vec<i32> = self
            .procs
            .iter()
            .enumerate()
            .filter(|(i, _)| which(*i))
            .filter_map(|(_, p)| match p.state {
                State::Running { pid, .. } => Some(pid),
                _ => None,
            })
            .collect();
        for &pid in &pids {
            kill_group(pid, libc::SIGTERM);
        }
        let deadline = Instant::now() + GRACE;
        let mut left: Vec<i32> = pids.clone();
        // Each group is SIGKILLed (members that outlive their leader) while
        // the leader is still an unreaped zombie or alive, never after: a
        // reaped leader's pid, hence its group id, may be reused.
        while !left.is_empty() && Instant::now() < deadline {
            left.retain(|&pid| {
                if peek_exited(pid).is_none() {
                    return true;
                }
                kill_group(pid, libc::SIGKILL);
                wait_nohang(pid);
                false
            });
            if !left.is_empty() {
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        for &pid in &left {
            kill_group(pid, libc::SIGKILL);
            wait_blocking(pid);
        }
        pids
    }

    /// End everything for good: every group terminated and reaped, temp
    /// dirs removed. Idempotent.
    pub fn shutdown(&mut self) {
        self.terminate_running(&|_| true);
        for p in &mut self.procs {
            p.state = State::Dead;
            if let Some(d) = p.spec.cleanup_dir.take() {
                let _ = d.remove();
            }
        }
        if self.reap_all {
            while wait_nohang(-1).is_some() {}
        }
    }

    /// `(label, stats)` per program, in spec order.
    pub fn stats(&self) -> Vec<(String, ProcStats)> {
        self.procs
            .iter()
            .map(|p| (p.spec.label.clone(), p.stats.clone()))
            .collect()
    }

    /// Stats summed per label (a built-in load has one worker per CPU).
    pub fn stats_by_label(&self) -> Vec<(String, ProcStats)> {
        let mut order: Vec<String> = Vec::new();
        let mut m: HashMap<String, ProcStats> = HashMap::new();
        for (l, s) in self.stats() {
            let e = m.entry(l.clone()).or_insert_with(|| {
                order.push(l.clone());
                ProcStats::default()
            });
            e.spawns += s.spawns;
            e.exits_ok += s.exits_ok;
            e.exits_ko += s.exits_ko;
            e.spawn_errors += s.spawn_errors;
            if s.last_error.is_some() {
                e.last_error = s.last_error;
            }
        }
        order
            .into_iter()
            .map(|l| {
                let s = m.remove(&l).unwrap_or_default();
                (l, s)
            })
            .collect()
    }

    /// Pids of the programs running now (also their process group ids).
    pub fn running_pids(&self) -> Vec<i32> {
        self.running_pid_per_spec().into_iter().flatten().collect()
    }

    /// For each spec (in order), the pid running it now.
    pub fn running_pid_per_spec(&self) -> Vec<Option<i32>> {
        self.procs
            .iter()
            .map(|p| match p.state {
                State::Running { pid, .. } => Some(pid),
                _ => None,
            })
            .collect()
    }

    /// For each spec (in order), whether it ended for good (IGNORE, STOP or
    /// shutdown): nothing will start it again.
    pub fn ended_per_spec(&self) -> Vec<bool> {
        self.procs
            .iter()
            .map(|p| matches!(p.state, State::Dead))
            .collect()
    }

    /// The programs supervised, in the order given.
    pub fn specs(&self) -> impl Iterator<Item = &ProcSpec> {
        self.procs.iter().map(|p| &p.spec)
    }
}

impl Drop for Supervisor {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// Back-off after `n` consecutive fast exits: 100 ms, 200 ms, ... 10 s.
pub(crate) fn backoff(n: u32) -> Duration {
    let shift = n.saturating_sub(1).min(16);
    (BACKOFF_MIN * (1u32 << shift)).min(BACKOFF_MAX)
}

fn open_output(o: &Output, held: &HeldOutput) -> io::Result<Stdio> {
    Ok(match (o, held) {
        (Output::Inherit, _) => Stdio::inherit(),
        (Output::Null, _) => Stdio::null(),
        (Output::File(_), Some((d, name))) => {
            Stdio::from(d.open_append(name).map_err(refusal_as_io)?)
        }
        (Output::File(p), None) => {
            return Err(io::Error::other(format!("{}: not opened", p.display())))
        }
    })
}

/// A refusal has no I/O kind: it is a permission problem for the caller.
fn refusal_as_io(e: rtshield_safefs::SafeError) -> io::Error {
    io::Error::new(
        e.io_kind().unwrap_or(io::ErrorKind::PermissionDenied),
        e.to_string(),
    )
}

/// A program's output file, opened as root the safe way, once: its
/// directory through the path layer (no link anywhere in the path, no
/// `..`), checked (not another user's, not writable by others without the
/// sticky bit); the file created fresh (an old file or a planted link is
/// replaced, not followed). Respawns append to it through the same
/// directory descriptor.
fn held_output(o: &Output, label: &str) -> io::Result<HeldOutput> {
    let Output::File(p) = o else { return Ok(None) };
    let labelled = |e: io::Error| io::Error::new(e.kind(), format!("{label}: {e}"));
    let (d, name) = rtshield_safefs::open_file_dir(p, rtshield_safefs::DirPolicy::Strict)
        .map_err(|e| labelled(refusal_as_io(e)))?;
    d.create_appendable(&name)
        .map_err(|e| labelled(refusal_as_io(e)))?;
    Ok(Some((d, name)))
}

/// The shim command line: `EXE __load exec [--cpus L] [--policy P
/// --prio N] -- ARGV...`.
pub(crate) fn shim_argv(exe: &std::path::Path, spec: &ProcSpec) -> Vec<String> {
    let mut v = vec![
        exe.to_string_lossy().into_owned(),
        crate::WORKER_SUBCOMMAND.to_string(),
        "exec".to_string(),
    ];
    if let Some(c) = &spec.cpus {
        v.push("--cpus".into());
        v.push(c.to_list());
    }
    if let Some(f) = &spec.cgroup_procs {
        v.push("--cgroup".into());
        v.push(f.to_string_lossy().into_owned());
    }
    if let Some((p, prio)) = spec.sched {
        v.push("--policy".into());
        v.push(p.name().into());
        v.push("--prio".into());
        v.push(prio.to_string());
    }
    v.push("--".into());
    v.extend(spec.argv.iter().cloned());
    v
}

/// Start one program in its own process group; returns its pid.
fn spawn_one(
    spec: &ProcSpec,
    outputs: &[HeldOutput; 2],
    launcher: Option<&std::path::Path>,
) -> io::Result<i32> {
    if let Some(exe) = launcher {
        let argv = shim_argv(exe, spec);
        let mut cmd = Command::new(&argv[0]);
        cmd.args(&argv[1..])
            .stdin(Stdio::null())
            .stdout(open_output(&spec.stdout, &outputs[0])?)
            .stderr(open_output(&spec.stderr, &outputs[1])?)
            .process_group(0)
            .env(crate::WORKER_ENV, std::process::id().to_string());
        // No pre_exec: std uses posix_spawn (CLONE_VM|CLONE_VFORK).
        let child = cmd.spawn()?;
        return Ok(child.id() as i32);
    }
    let mut cmd = Command::new(&spec.argv[0]);
    cmd.args(&spec.argv[1..])
        .stdin(Stdio::null())
        .stdout(open_output(&spec.stdout, &outputs[0])?)
        .stderr(open_output(&spec.stderr, &outputs[1])?)
        // Own group: one killpg reaches the program and its children,
        // and a terminal's Ctrl-C reaches only rtshield, which cleans up.
        .process_group(0);
    if spec.env_worker {
        cmd.env(crate::WORKER_ENV, std::process::id().to_string());
    }
    let cpus = spec.cpus.clone();
    let sched = spec.sched;
    // SAFETY: runs between fork and exec; only async-signal-safe system
    // calls, no allocation (the CpuSet was cloned before the fork).
    let parent = unsafe { libc::getpid() };
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
                return Err(io::Error::last_os_error());
            }
            // The parent may have died before the prctl.
            if libc::getppid() != parent {
                libc::_exit(1);
            }
            if let Some(c) = &cpus {
                set_affinity(0, c)?;
            }
            if let Some((p, prio)) = sched {
                set_scheduler(0, p, prio)?;
            }
            Ok(())
        });
    }
    let child = cmd.spawn()?;
    // We reap by pid ourselves; std's Child neither kills nor waits on drop.
    Ok(child.id() as i32)
}

fn kill_group(pgid: i32, sig: i32) {
    if pgid > 0 {
        // SAFETY: plain syscall; pgid > 0 so it never means "every process".
        unsafe {
            libc::killpg(pgid, sig);
        }
    }
}

/// A child (`pid`, or any with -1) that has ended, left unreaped
/// (`waitid(WNOWAIT)`): its pid stays ours until [`wait_nohang`].
fn peek_exited(pid: i32) -> Option<i32> {
    let (idtype, id) = if pid < 0 {
        (libc::P_ALL, 0)
    } else {
        (libc::P_PID, pid as libc::id_t)
    };
    // SAFETY: a zeroed siginfo_t is valid output space for waitid.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    // SAFETY: plain syscall with a valid pointer.
    let r = unsafe {
        libc::waitid(
            idtype,
            id,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        )
    };
    if r != 0 {
        return None;
    }
    // SAFETY: waitid filled in a SIGCHLD siginfo (si_pid 0: none has ended).
    let p = unsafe { info.si_pid() };
    (p > 0).then_some(p)
}

/// `waitpid(pid, WNOHANG)`: `Some((pid, status))` when a child was reaped.
fn wait_nohang(pid: i32) -> Option<(i32, i32)> {
    let mut status = 0;
    // SAFETY: plain syscall with a valid pointer.
    let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
    (r > 0).then_some((r, status))
}

fn wait_blocking(pid: i32) {
    let mut status = 0;
    loop {
        // SAFETY: as above.
        let r = unsafe { libc::waitpid(pid, &mut status, 0) };
        if r >= 0 || io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return;
        }
    }
}

/// `exit 0`, `exit 3`, `killed by signal 9`.
pub(crate) fn describe_status(status: i32) -> String {
    if libc::WIFEXITED(status) {
        format!("exit {}", libc::WEXITSTATUS(status))
    } else if libc::WIFSIGNALED(status) {
        format!("killed by signal {}", libc::WTERMSIG(status))
    } else {
        format!("status {status:#x}")
    }
}

/// Make this process the reaper of its orphaned descendants, so a
/// grandchild whose parent died is re-parented here (not to init) and can
/// still be found and killed at the end of the run.
pub fn become_subreaper() -> io::Result<()> {
    // SAFETY: plain prctl.
    if unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_and_caps() {
        assert_eq!(backoff(1), Duration::from_millis(100));
        assert_eq!(backoff(2), Duration::from_millis(200));
        assert_eq!(backoff(4), Duration::from_millis(800));
        assert_eq!(backoff(30), BACKOFF_MAX);
    }
}
