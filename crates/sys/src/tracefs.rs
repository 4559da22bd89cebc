//! A private ftrace instance (`instances/rtshield-<pid>` under tracefs),
//! and the leftovers of rtshield processes that died while tracing.
//!
//! Everything rtshield traces goes into its own instance: the top-level
//! buffer, its `tracing_on`, `current_tracer`, `set_event` and
//! `tracing_cpumask` are only ever read. rtshield uses only the system's
//! standard tracefs mount ([`STANDARD_MOUNTS`]) or a mount it made itself:
//! when tracefs is mounted at neither standard place, it mounts it at
//! `/run/rtshield-tracefs-<pid>/tracing` (a 0700 directory named after the
//! process, [`private_mount`]) and detaches that mount at close. Another
//! process's mount (a test's temporary one, an administrator's) is never
//! used: the owner could not unmount it while rtshield works in it.
//!
//! Leftovers: a process killed while tracing (SIGKILL, a crash) leaves its
//! instance (possibly still recording) and its private mount. Both are
//! named after the owner's pid (`rtshield-<pid>`, or `rtshield-<pid>-<k>`
//! when a live process of another PID namespace holds that name) and have
//! an owner record the live owner holds locked (`crate::owner`: a pid is
//! not unique across PID namespaces, adversary round 5, F08);
//! [`leftovers`] lists them with the owner alive or not
//! (`audit` and `sysinfo` report them), [`remove_leftovers`] removes those
//! of dead owners (`measure`, `run`, `campaign`, `noise` at start, and
//! every [`Instance::create`]). The trace text is parsed by the
//! `rtshield-trace` crate. See docs/trace.md.

use crate::cgroup;
use crate::Root;
use rtshield_vocab::CpuSet;
use serde::Serialize;
use std::io;

/// Where the system mounts tracefs, in order of preference (the second is
/// the automount below debugfs). rtshield uses these, or its own mount.
pub(crate) const STANDARD_MOUNTS: &[&str] = &["/sys/kernel/tracing", "/sys/kernel/debug/tracing"];
/// rtshield's own mounts: `<prefix><pid>/tracing`, the directory 0700.
pub(crate) const PRIVATE_DIR_PREFIX: &str = "/run/rtshield-tracefs-";
/// The mount point's name inside its private directory.
const PRIVATE_MOUNT_NAME: &str = "tracing";
/// Instance names: `rtshield-<pid>`.
pub const INSTANCE_PREFIX: &str = "rtshield-";
/// Per-CPU buffer size range accepted by [`Config::buffer_kb`].
pub const BUFFER_KB_RANGE: std::ops::RangeInclusive<u32> = 1..=1_048_576;

/// The events the spike analysis reads, as `system:event`; a `*` in the
/// event part matches by suffix (`irq_vectors:*_entry`) or everything (`ipi:*`).
pub(crate) const EVENTS: &[&str] = &[
    "timer:hrtimer_start",
    "timer:hrtimer_expire_entry",
    "timer:hrtimer_expire_exit",
    "sched:sched_waking",
    "sched:sched_wakeup",
    "sched:sched_switch",
    "irq:irq_handler_entry",
    "irq:irq_handler_exit",
    "irq:softirq_entry",
    "irq:softirq_exit",
    "irq_vectors:*_entry",
    "irq_vectors:*_exit",
    "ipi:*",
    "workqueue:workqueue_execute_start",
    "workqueue:workqueue_execute_end",
];

/// Every tracefs mount point of `/proc/self/mountinfo`, in its order.
fn tracefs_mounts(root: &Root) -> Vec<String> {
    cgroup::mounts(root)
        .into_iter()
        .filter(|m| m.fs_type == "tracefs")
        .map(|m| m.mount_point)
        .collect()
}

/// The tracefs mount rtshield may use: a standard one
/// ([`STANDARD_MOUNTS`], `/sys/kernel/tracing` first), else this
/// process's own private mount; `None` when neither is mounted (another
/// process's mount elsewhere is not used).
pub fn find(root: &Root) -> Option<String> {
    let m = tracefs_mounts(root);
    let own = OWN_MOUNT
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone()
        .unwrap_or_else(|| private_mount(std::process::id()));
    STANDARD_MOUNTS
        .iter()
        .map(|s| s.to_string())
        .find(|s| m.contains(s))
        .or_else(|| m.into_iter().find(|p| *p == own))
}

/// The private directory of process `pid`'s own mount
/// (`/run/rtshield-tracefs-<pid>`).
pub fn private_dir(pid: u32) -> String {
    format!("{PRIVATE_DIR_PREFIX}{pid}")
}

/// Where process `pid` mounts tracefs when no standard mount exists
/// (`/run/rtshield-tracefs-<pid>/tracing`).
pub fn private_mount(pid: u32) -> String {
    format!("{}/{PRIVATE_MOUNT_NAME}", private_dir(pid))
}

/// The owner of an rtshield private mount point, `None` for any other path.
#[cfg(test)]
pub(crate) fn private_mount_pid(mount_point: &str) -> Option<u32> {
    private_mount_id(mount_point).map(|(pid, _)| pid)
}

/// The owner's pid and the mount's owner-record name (`tracefs-<pid>[-k]`)
/// of an rtshield private mount point (`<prefix><pid>[-k]/tracing`).
fn private_mount_id(mount_point: &str) -> Option<(u32, String)> {
    let rest = mount_point.strip_prefix(PRIVATE_DIR_PREFIX)?;
    let id = rest.strip_suffix(&format!("/{PRIVATE_MOUNT_NAME}"))?;
    Some((pid_and_k(id)?, format!("tracefs-{id}")))
}

/// `<pid>` or `<pid>-<k>` (k ≥ 2): the pid.
fn pid_and_k(s: &str) -> Option<u32> {
    match s.split_once('-') {
        Some((p, k)) => digits(k).filter(|k| *k >= 2).and(digits(p)),
        None => digits(s),
    }
}

/// Name number `k` (1: the plain one) of process `pid`'s objects: `pid`,
/// else `pid-k`.
fn numbered(pid: u32, k: u32) -> String {
    if k <= 1 {
        pid.to_string()
    } else {
        format!("{pid}-{k}")
    }
}

/// The private mount this process made (its name may carry `-k`).
static OWN_MOUNT: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);

/// Whether the owner of an object (`record`: its owner-record name; `pid`:
/// the pid in its name) is alive: by its record, which the live owner
/// holds locked whatever its PID namespace; without a record (an older
/// rtshield's object) by its pid, which is trusted only in the initial
/// PID namespace (elsewhere it names a process of this namespace only:
/// such an object is left alone, reported as in use).
fn owner_alive(root: &Root, record: &str, pid: u32) -> bool {
    match crate::owner::state(root, record) {
        crate::owner::Owner::Alive => true,
        crate::owner::Owner::Dead => false,
        crate::owner::Owner::Unknown => {
            !crate::owner::in_initial_pid_namespace(root) || alive(root, pid)
        }
    }
}

/// A positive decimal pid, nothing else (no sign, no spaces).
fn digits(s: &str) -> Option<u32> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok().filter(|p| *p > 0)
}

/// Whether process `pid` is alive: listed in `/proc` and not a zombie
/// (a zombie cannot trace; its instance is a leftover).
fn alive(root: &Root, pid: u32) -> bool {
    crate::task::exists(root, pid)
        && crate::task::stat(root, pid).is_none_or(|s| !matches!(s.state, 'Z' | 'X'))
}

/// What an rtshield leftover is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LeftoverKind {
    /// A trace instance `instances/rtshield-<pid>`.
    Instance,
    /// A private tracefs mount `/run/rtshield-tracefs-<pid>/tracing`.
    Mount,
}

/// A trace instance or private tracefs mount made by another rtshield
/// process (named after its pid): in use while that process lives, a
/// leftover once it is gone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Leftover {
    /// Instance or mount.
    pub kind: LeftoverKind,
    /// The instance's name (`rtshield-<pid>`) or the mount point.
    pub name: String,
    /// Its path (the instance directory as seen through the mount used).
    pub path: String,
    /// The process that made it.
    pub pid: u32,
    /// Whether that process is alive (then the object is in use).
    pub owner_alive: bool,
    /// For an instance: whether it still records (`tracing_on`), when read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tracing_on: Option<bool>,
    /// The name of its owner record (`crate::owner`).
    #[serde(skip)]
    pub record: String,
}

impl Leftover {
    /// One line for a person: what, whose, and what happens to it.
    pub fn describe(&self) -> String {
        let what = match self.kind {
            LeftoverKind::Instance => format!(
                "trace instance {}{}",
                self.name,
                match self.tracing_on {
                    Some(true) => " (still recording)",
                    Some(false) => " (stopped)",
                    None => "",
                }
            ),
            LeftoverKind::Mount => format!("tracefs mount {}", self.name),
        };
        if self.owner_alive {
            format!("{what}: in use by process {}", self.pid)
        } else {
            format!(
                "{what}: left by rtshield process {}, which is gone \
                 (the next measure, run, campaign or noise removes it)",
                self.pid
            )
        }
    }
}

/// The tracefs mount through which instances are listed and removed: a
/// standard one, our own, else a private mount whose owner is dead (it is
/// about to go anyway); never a live process's private mount.
fn listing_mount(root: &Root, mounts: &[String]) -> Option<String> {
    find(root).or_else(|| {
        mounts
            .iter()
            .find(|m| private_mount_id(m).is_some_and(|(p, r)| !owner_alive(root, &r, p)))
            .cloned()
    })
}

/// Every trace instance and private tracefs mount of other rtshield
/// processes, alive or not (instances are listed through [`find`]'s
/// mount or a dead process's; when no such mount exists, only mounts).
pub fn leftovers(root: &Root) -> Vec<Leftover> {
    let mounts = tracefs_mounts(root);
    let mut out = Vec::new();
    // This process's own objects are the ones whose record it holds (not
    // every object named with its pid: a process of another PID
    // namespace may have the same one).
    let mine = |record: &str| crate::owner::held_here(root, record);
    if let Some(at) = listing_mount(root, &mounts) {
        let dir = format!("{}/instances", at.trim_end_matches('/'));
        for name in root.read_dir_names(&dir).unwrap_or_default() {
            let Some(pid) = instance_pid(&name) else {
                continue;
            };
            if mine(&name) {
                continue;
            }
            let path = format!("{dir}/{name}");
            out.push(Leftover {
                kind: LeftoverKind::Instance,
                tracing_on: root
                    .read_opt(format!("{path}/tracing_on"))
                    .map(|s| s.trim() == "1"),
                owner_alive: owner_alive(root, &name, pid),
                record: name.clone(),
                name,
                path,
                pid,
            });
        }
    }
    for m in mounts {
        let Some((pid, record)) = private_mount_id(&m) else {
            continue;
        };
        if mine(&record) {
            continue;
        }
        out.push(Leftover {
            kind: LeftoverKind::Mount,
            name: m.clone(),
            path: m,
            pid,
            owner_alive: owner_alive(root, &record, pid),
            tracing_on: None,
            record,
        });
    }
    out
}

/// Remove the leftovers of dead rtshield processes: their instances
/// (stopped, then removed), then their private mounts (detached) and
/// directories. Returns what was removed; what could not be (not root, a
/// live owner) stays, and live processes' objects are never touched.
pub fn remove_leftovers(root: &Root) -> Vec<Leftover> {
    let found = leftovers(root);
    let mut removed = Vec::new();
    // Instances first: they may be listed through a dead owner's mount.
    for l in found.iter().filter(|l| !l.owner_alive) {
        let ok = match l.kind {
            LeftoverKind::Instance => {
                let on = format!("{}/tracing_on", l.path);
                if root.exists(&on) {
                    let _ = root.write(on, "0");
                }
                root.remove_dir(&l.path).is_ok()
            }
            LeftoverKind::Mount => false,
        };
        if ok {
            crate::owner::forget(root, &l.record);
            removed.push(l.clone());
        }
    }
    for l in found.iter().filter(|l| !l.owner_alive) {
        if l.kind == LeftoverKind::Mount && unmount_private(root, &l.path).is_ok() {
            crate::owner::forget(root, &l.record);
            removed.push(l.clone());
        }
    }
    remove_dead_private_dirs(root);
    removed
}

/// Empty private directories of dead processes (a mount already gone, a
/// process killed between its mkdir and its mount).
fn remove_dead_private_dirs(root: &Root) {
    let Some((parent, prefix)) = PRIVATE_DIR_PREFIX.rsplit_once('/') else {
        return;
    };
    for name in root.read_dir_names(parent).unwrap_or_default() {
        let Some(id) = name.strip_prefix(prefix) else {
            continue;
        };
        let Some(pid) = pid_and_k(id) else {
            continue;
        };
        let record = format!("tracefs-{id}");
        if crate::owner::held_here(root, &record) {
            continue;
        }
        if !owner_alive(root, &record, pid) {
            let dir = format!("{parent}/{name}");
            let _ = root.remove_dir(format!("{dir}/{PRIVATE_MOUNT_NAME}"));
            let _ = root.remove_dir(&dir);
            crate::owner::forget(root, &record);
        }
    }
}

/// Filesystems this kernel supports (`nodev\ttracefs` when it has tracefs).
pub(crate) const FILESYSTEMS: &str = "/proc/filesystems";
/// Kernel lockdown state; `[confidentiality]` forbids tracefs.
pub(crate) const LOCKDOWN: &str = "/sys/kernel/security/lockdown";

/// Why tracing cannot work here, in one sentence, or `None` when it can
/// (callers say it once and measure without tracing).
pub fn unavailable(root: &Root) -> Option<String> {
    if root.is_host() && !crate::sched::is_root() {
        return Some("tracing needs root (tracefs instances)".into());
    }
    if root
        .read_opt(LOCKDOWN)
        .is_some_and(|l| l.contains("[confidentiality]"))
    {
        return Some("kernel lockdown (confidentiality) forbids tracefs".into());
    }
    if find(root).is_none() {
        let has = root.read_opt(FILESYSTEMS).is_some_and(|f| {
            f.lines()
                .any(|l| l.split_whitespace().last() == Some("tracefs"))
        });
        if !has {
            return Some("this kernel has no tracefs (CONFIG_TRACING is off)".into());
        }
        if !root.is_host() {
            return Some("tracefs is not mounted in this tree".into());
        }
    }
    None
}

/// `instances/rtshield-<pid>` below `tracefs`.
pub fn instance_dir(tracefs: &str, pid: u32) -> String {
    format!(
        "{}/instances/{INSTANCE_PREFIX}{pid}",
        tracefs.trim_end_matches('/')
    )
}

/// The pid of an instance named `rtshield-<pid>` (or `rtshield-<pid>-<k>`,
/// the name a process takes when a live process of another PID namespace
/// holds the plain one); `None` for other names.
pub fn instance_pid(name: &str) -> Option<u32> {
    pid_and_k(name.strip_prefix(INSTANCE_PREFIX)?)
}

/// Which of `wanted` (see [`EVENTS`]) exist in `available` (the
/// `available_events` file: `system:event` lines). Returns the concrete
/// events to enable and the wanted specs that matched nothing.
pub(crate) fn select_events(available: &str, wanted: &[&str]) -> (Vec<String>, Vec<String>) {
    let avail: Vec<(&str, &str)> = available
        .lines()
        .filter_map(|l| l.trim().split_once(':'))
        .collect();
    let mut on = Vec::new();
    let mut missing = Vec::new();
    for w in wanted {
        let Some((sys, ev)) = w.split_once(':') else {
            missing.push(w.to_string());
            continue;
        };
        let matches = |e: &str| match ev.strip_prefix('*') {
            Some(suffix) => e.ends_with(suffix),
            None => e == ev,
        };
        let found: Vec<String> = avail
            .iter()
            .filter(|(s, e)| *s == sys && matches(e))
            .map(|(s, e)| format!("{s}:{e}"))
            .collect();
        if found.is_empty() {
            missing.push(w.to_string());
        }
        for f in found {
            if !on.contains(&f) {
                on.push(f);
            }
        }
    }
    (on, missing)
}

/// The top-level tracing state rtshield must leave untouched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopState {
    /// Where tracefs is mounted; `None` when it is not.
    pub mounted_at: Option<String>,
    /// `tracing_on` of the top-level buffer.
    pub tracing_on: Option<String>,
    /// `current_tracer` (normally `nop`).
    pub current_tracer: Option<String>,
    /// `set_event`: the events enabled at the top level.
    pub set_event: Option<String>,
    /// `tracing_cpumask` of the top level (mask syntax).
    pub tracing_cpumask: Option<String>,
}

impl TopState {
    /// The state where tracefs is mounted now (all `None` if it is not).
    pub fn read(root: &Root) -> TopState {
        Self::read_at(root, find(root))
    }

    /// The state read below a known tracefs mount (e.g. the one an
    /// [`Instance`] mounted itself).
    pub fn read_at(root: &Root, at: Option<String>) -> TopState {
        let f = |name: &str| {
            at.as_ref()
                .and_then(|a| root.read_opt(format!("{a}/{name}")))
        };
        TopState {
            tracing_on: f("tracing_on"),
            current_tracer: f("current_tracer"),
            set_event: f("set_event"),
            tracing_cpumask: f("tracing_cpumask"),
            mounted_at: at,
        }
    }
}

/// What the instance records.
#[derive(Debug, Clone)]
pub struct Config {
    /// The CPUs traced (`tracing_cpumask` of the instance).
    pub cpus: CpuSet,
    /// Per-CPU ring buffer, KiB ([`BUFFER_KB_RANGE`]); overwrite mode keeps
    /// the newest events.
    pub buffer_kb: u32,
    /// Event specs, normally [`EVENTS`].
    pub events: Vec<String>,
}

impl Config {
    /// Trace `cpus` with the default 2 MiB per-CPU buffer and every event rtshield's analyses read.
    pub fn new(cpus: CpuSet) -> Config {
        Config {
            cpus,
            buffer_kb: 2048,
            events: EVENTS.iter().map(|s| s.to_string()).collect(),
        }
    }
}

fn err(msg: String) -> io::Error {
    io::Error::other(msg)
}

/// A live private instance; removed (and tracefs unmounted if we mounted
/// it) by [`Instance::close`] or on drop.
#[derive(Debug)]
pub struct Instance {
    root: Root,
    /// `rtshield-<pid>[-k]`, the name its owner record has too.
    name: String,
    tracefs: String,
    dir: String,
    mounted_by_us: bool,
    enabled: Vec<String>,
    missing: Vec<String>,
    stale_removed: Vec<String>,
    /// Whether `dir` is ours to remove (never an existing directory that
    /// our mkdir found in place).
    created: bool,
    closed: bool,
}

impl Instance {
    /// Use the standard tracefs mount, else mount our own private one;
    /// remove the leftovers of dead rtshield processes; create
    /// `instances/rtshield-<our pid>` with tracing off, and configure it.
    /// Tracing starts with [`Instance::start`].
    pub fn create(root: &Root, cfg: &Config) -> io::Result<Instance> {
        if !BUFFER_KB_RANGE.contains(&cfg.buffer_kb) {
            return Err(err(format!(
                "trace buffer {} KiB is out of range {}..={} KiB",
                cfg.buffer_kb,
                BUFFER_KB_RANGE.start(),
                BUFFER_KB_RANGE.end()
            )));
        }
        if cfg.cpus.is_empty() {
            return Err(err("no CPU to trace".into()));
        }
        let me = std::process::id();
        // A private mount made now goes at close; a standard one stays,
        // and so does our own private mount made by another instance of
        // this process that is still open (it detaches it itself).
        let (tracefs, mounted_by_us) = match find(root) {
            Some(t) => (t, false),
            None => (mount_private(root)?, true),
        };
        // The name's owner record first (F08): a name a live process of
        // another PID namespace holds is not ours, whatever its pid says.
        let (name, fresh) = claim(root, |k| format!("{INSTANCE_PREFIX}{}", numbered(me, k)))?;
        let dir = format!("{}/instances/{name}", tracefs.trim_end_matches('/'));
        let mut inst = Instance {
            root: root.clone(),
            name,
            dir,
            tracefs,
            mounted_by_us,
            enabled: Vec::new(),
            missing: Vec::new(),
            stale_removed: Vec::new(),
            created: false,
            closed: false,
        };
        // From here on, Drop undoes whatever was done.
        inst.stale_removed = remove_leftovers(root)
            .into_iter()
            .filter(|l| l.kind == LeftoverKind::Instance)
            .map(|l| l.name)
            .collect();
        // One of this name left by a dead process of our pid (its record
        // was free: we hold it now) goes first; never this process's own.
        if fresh && root.exists(&inst.dir) {
            let _ = root.write(format!("{}/tracing_on", inst.dir), "0");
            if root.remove_dir(&inst.dir).is_ok() {
                inst.stale_removed.push(inst.name.clone());
            }
        }
        root.create_dir(&inst.dir)
            .map_err(|e| err(format!("cannot create trace instance {}: {e}", inst.dir)))?;
        inst.created = true;
        inst.configure(cfg)?;
        Ok(inst)
    }

    fn configure(&mut self, cfg: &Config) -> io::Result<()> {
        // A new instance starts with tracing on: stop it before anything.
        self.set("tracing_on", "0")?;
        let ncpus = cfg.cpus.last().map_or(1, |c| c + 1);
        self.set("tracing_cpumask", &cfg.cpus.to_mask(ncpus))?;
        self.set("buffer_size_kb", &cfg.buffer_kb.to_string())?;
        // Overwrite mode: a full buffer keeps the newest events.
        self.set("trace_options", "overwrite")?;
        // Timestamps comparable with CLOCK_MONOTONIC (the measuring clock).
        self.set("trace_clock", "mono")?;
        let available = self
            .root
            .read(format!("{}/available_events", self.tracefs))
            .unwrap_or_default();
        let wanted: Vec<&str> = cfg.events.iter().map(String::as_str).collect();
        let (on, missing) = select_events(&available, &wanted);
        self.missing = missing;
        for e in on {
            // No O_TRUNC (Root::write on the host): appends, does not clear.
            match self.set("set_event", &e) {
                Ok(()) => self.enabled.push(e),
                Err(_) => self.missing.push(e),
            }
        }
        Ok(())
    }

    fn set(&self, file: &str, value: &str) -> io::Result<()> {
        self.root.write(format!("{}/{file}", self.dir), value)
    }

    /// The instance directory (absolute kernel path below the root).
    pub fn dir(&self) -> &str {
        &self.dir
    }

    /// The tracefs mount the instance lives under (absolute kernel path).
    pub fn tracefs(&self) -> &str {
        &self.tracefs
    }

    /// Whether the instance mounted tracefs itself (it unmounts it when closed).
    pub fn mounted_by_us(&self) -> bool {
        self.mounted_by_us
    }

    /// The events enabled (`system:event`).
    pub fn enabled(&self) -> &[String] {
        &self.enabled
    }

    /// Wanted events this kernel does not have (or refused).
    pub fn missing(&self) -> &[String] {
        &self.missing
    }

    /// Stale instances of dead processes removed at creation.
    pub fn stale_removed(&self) -> &[String] {
        &self.stale_removed
    }

    /// Start recording (`tracing_on` = 1 in the instance only).
    pub fn start(&self) -> io::Result<()> {
        self.set("tracing_on", "1")
    }

    /// Stop recording; the buffer keeps what it holds.
    pub fn stop(&self) -> io::Result<()> {
        self.set("tracing_on", "0")
    }

    /// Write a marker line (`tracing_mark_write: text`) into the instance.
    pub fn marker(&self, text: &str) -> io::Result<()> {
        self.set("trace_marker", text)
    }

    /// What the buffer of each CPU in `cpus` lost, summed
    /// (`per_cpu/cpuN/stats`): see [`Drops`].
    pub fn drops(&self, cpus: &CpuSet) -> Drops {
        let mut total = Drops {
            overrun: Some(0),
            dropped: Some(0),
        };
        for c in cpus.iter() {
            let d = self
                .root
                .read_opt(format!("{}/per_cpu/cpu{c}/stats", self.dir))
                .map_or_else(Drops::default, |t| Drops::parse(&t));
            total.overrun = total.overrun.zip(d.overrun).map(|(a, b)| a + b);
            total.dropped = total.dropped.zip(d.dropped).map(|(a, b)| a + b);
        }
        total
    }

    /// The instance's buffer as text (the `trace` file; does not consume it).
    pub fn read(&self) -> io::Result<String> {
        self.root.read(format!("{}/trace", self.dir))
    }

    /// A file of the instance opened for writing, to be written later with
    /// one `write(2)` and no path lookup (the measuring thread writes
    /// `trace_marker` or `tracing_on` on a spike through it).
    pub fn open_for_write(&self, file: &str) -> io::Result<std::fs::File> {
        let p = self.root.path(format!("{}/{file}", self.dir));
        std::fs::OpenOptions::new()
            .write(true)
            .open(&p)
            .map_err(|e| err(format!("cannot open {}: {e}", p.display())))
    }

    /// The instance's `trace_pipe` (consuming reads), non-blocking: see
    /// [`PipeReader`].
    pub fn open_pipe(&self) -> io::Result<PipeReader> {
        use std::os::unix::fs::OpenOptionsExt;
        let p = self.root.path(format!("{}/trace_pipe", self.dir));
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&p)
            .map_err(|e| err(format!("cannot open {}: {e}", p.display())))?;
        Ok(PipeReader {
            file,
            partial: String::new(),
            buf: vec![0; 64 * 1024],
        })
    }

    /// Remove the instance, then unmount tracefs if we mounted it.
    pub fn close(mut self) -> io::Result<()> {
        self.teardown()
    }

    fn teardown(&mut self) -> io::Result<()> {
        if self.closed {
            return Ok(());
        }
        self.closed = true;
        // Stop first (rmdir of a recording instance works too, but a
        // reader of `trace_pipe` would keep it busy longer).
        if self.created && self.root.exists(format!("{}/tracing_on", self.dir)) {
            let _ = self.set("tracing_on", "0");
        }
        let p = self.root.path(&self.dir);
        let rm = if self.created {
            match self.root.remove_dir(&self.dir) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => Err(err(format!(
                    "cannot remove trace instance {}: {e}",
                    p.display()
                ))),
                _ => Ok(()),
            }
        } else {
            Ok(())
        };
        if self.created && rm.is_ok() {
            crate::owner::release(&self.root, &self.name);
        }
        if self.mounted_by_us {
            // Nobody else uses our private mount (rtshield never uses
            // another process's): detach it, even while a file of it is
            // still open here.
            unmount_private(&self.root, &self.tracefs)?;
            if let Some((_, record)) = private_mount_id(&self.tracefs) {
                crate::owner::release(&self.root, &record);
            }
            *OWN_MOUNT.lock().unwrap_or_else(|e| e.into_inner()) = None;
        }
        rm
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        if let Err(e) = self.teardown() {
            eprintln!("rtshield: {e}");
        }
    }
}

/// Events a trace buffer lost, from its `stats` file (or summed over
/// CPUs); each None when unknown (the file or the line is missing, on one
/// CPU at least: a partial sum would pass for the whole).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Drops {
    /// `overrun:`: events overwritten by newer ones (overwrite mode, the
    /// mode of rtshield's instances) before anyone read them.
    pub overrun: Option<u64>,
    /// `dropped events:`: events refused because the buffer was full
    /// (non-overwrite mode) or a write was too large.
    pub dropped: Option<u64>,
}

impl Drops {
    /// Parse one `per_cpu/cpuN/stats` file (`overrun: 12` lines).
    pub fn parse(text: &str) -> Drops {
        let field = |name: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
                .and_then(|v| v.trim().parse().ok())
        };
        Drops {
            overrun: field("overrun"),
            dropped: field("dropped events"),
        }
    }
}

/// Non-blocking reader of an instance's `trace_pipe`: each call returns
/// the complete lines available now (a line cut by a read is kept for the
/// next call), consuming them from the buffer.
#[derive(Debug)]
pub struct PipeReader {
    file: std::fs::File,
    partial: String,
    buf: Vec<u8>,
}

impl PipeReader {
    /// Complete lines read so far, at most about `max_bytes`; empty when
    /// nothing is waiting.
    pub fn read_lines(&mut self, max_bytes: usize) -> io::Result<String> {
        use std::io::Read;
        let mut text = std::mem::take(&mut self.partial);
        let start = text.len();
        while text.len() - start < max_bytes {
            match self.file.read(&mut self.buf) {
                Ok(0) => break,
                Ok(n) => text.push_str(&String::from_utf8_lossy(&self.buf[..n])),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
        match text.rfind('\n') {
            Some(i) => {
                self.partial = text.split_off(i + 1);
                Ok(text)
            }
            None => {
                self.partial = text;
                Ok(String::new())
            }
        }
    }
}

/// Mount tracefs at this process's private mount point
/// ([`private_mount`]) below a fresh 0700 directory (host only: a fake
/// tree cannot mount).
fn mount_private(root: &Root) -> io::Result<String> {
    if !root.is_host() {
        return Err(err(format!(
            "tracefs is not mounted in {} (no tracefs line in mountinfo)",
            root.base().display()
        )));
    }
    let me = std::process::id();
    let (id, _) = claim(root, |k| format!("tracefs-{}", numbered(me, k)))?;
    let dir = format!("{PRIVATE_DIR_PREFIX}{}", id.trim_start_matches("tracefs-"));
    let at = format!("{dir}/{PRIVATE_MOUNT_NAME}");
    private_directory(&dir)?;
    match std::fs::create_dir(&at) {
        Err(e) if e.kind() != io::ErrorKind::AlreadyExists => {
            return Err(err(format!("cannot create {at}: {e}")))
        }
        _ => {}
    }
    let target = std::ffi::CString::new(at.as_str()).expect("no NUL");
    let fstype = std::ffi::CString::new("tracefs").expect("no NUL");
    // SAFETY: valid NUL-terminated strings that outlive the call; no data.
    let rc = unsafe {
        libc::mount(
            fstype.as_ptr(),
            target.as_ptr(),
            fstype.as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
            std::ptr::null(),
        )
    };
    if rc != 0 {
        let e = io::Error::last_os_error();
        let _ = std::fs::remove_dir(&at);
        let _ = std::fs::remove_dir(&dir);
        crate::owner::release(root, &id);
        return Err(io::Error::new(
            e.kind(),
            format!("cannot mount tracefs at {at}: {e}"),
        ));
    }
    *OWN_MOUNT.lock().unwrap_or_else(|e| e.into_inner()) = Some(at.clone());
    Ok(at)
}

/// `dir` as a directory only this user can enter: made 0700, or, left by
/// an earlier process of the same pid, accepted only when it is a real
/// directory (not a link) owned by us and closed to others.
fn private_directory(dir: &str) -> io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => return Ok(()),
        Err(e) if e.kind() != io::ErrorKind::AlreadyExists => {
            return Err(err(format!("cannot create {dir}: {e}")))
        }
        Err(_) => {}
    }
    let m = std::fs::symlink_metadata(dir)?;
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    if !m.file_type().is_dir() || m.uid() != me || m.mode() & 0o077 != 0 {
        return Err(err(format!(
            "{dir} exists and is not a private directory of this user: not mounting tracefs there"
        )));
    }
    Ok(())
}

/// Detach the private mount at `at` (`<prefix><pid>[-k]/tracing`; when
/// mounted: on the host) and remove its mount point and directory.
fn unmount_private(root: &Root, at: &str) -> io::Result<()> {
    let dir = at
        .strip_suffix(&format!("/{PRIVATE_MOUNT_NAME}"))
        .unwrap_or(at)
        .to_string();
    let at = at.to_string();
    if root.is_host() && tracefs_mounts(root).contains(&at) {
        let target = std::ffi::CString::new(at.as_str()).expect("no NUL");
        // SAFETY: a valid NUL-terminated path that outlives the call.
        // MNT_DETACH: gone from the tree now, released when unused.
        if unsafe { libc::umount2(target.as_ptr(), libc::MNT_DETACH) } != 0 {
            let e = io::Error::last_os_error();
            return Err(io::Error::new(
                e.kind(),
                format!("cannot unmount tracefs at {at}: {e}"),
            ));
        }
    }
    let _ = root.remove_dir(&at);
    let _ = root.remove_dir(&dir);
    Ok(())
}

/// The first name `make(1)`, `make(2)` … (at most 9) whose owner record
/// this process can take, and whether it just took it. The plain name
/// when this process holds it already (its own object: the caller finds
/// it taken, as before), or when there is no place for records (no
/// writable `/run`: unrecorded, others then judge it by its pid).
fn claim(root: &Root, make: impl Fn(u32) -> String) -> io::Result<(String, bool)> {
    if crate::owner::held_here(root, &make(1)) {
        return Ok((make(1), false));
    }
    for k in 1..=9 {
        let name = make(k);
        match crate::owner::hold(root, &name) {
            Ok(true) => return Ok((name, true)),
            Ok(false) => continue,
            Err(_) => return Ok((make(1), false)),
        }
    }
    Err(err(format!(
        "{} to {} are all in use by live processes (of other PID namespaces)",
        make(1),
        make(9)
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    const MOUNTINFO: &str = "22 1 0:21 / /proc rw,nosuid - proc proc rw\n\
        30 22 0:12 / /sys/kernel/debug/tracing rw - tracefs tracefs rw\n\
        31 22 0:12 / /sys/kernel/tracing rw,nosuid - tracefs tracefs rw\n";
    /// A test's temporary tracefs mount and another process's private one.
    const FOREIGN: &str = "40 1 0:12 / /tmp/.tmpAbC123 rw - tracefs tracefs rw\n\
        41 1 0:12 / /run/rtshield-tracefs-777/tracing rw - tracefs tracefs rw\n";

    fn fake(mountinfo: &str) -> (tempfile::TempDir, Root) {
        let d = tempfile::tempdir().unwrap();
        let b = d.path();
        fs::create_dir_all(b.join("proc/self")).unwrap();
        fs::write(b.join("proc/self/mountinfo"), mountinfo).unwrap();
        fs::create_dir_all(b.join("sys/kernel/tracing/instances")).unwrap();
        fs::write(
            b.join("sys/kernel/tracing/available_events"),
            "sched:sched_switch\nsched:sched_waking\nirq_vectors:local_timer_entry\n\
             irq_vectors:local_timer_exit\nirq_vectors:vector_config\nipi:ipi_raise\n",
        )
        .unwrap();
        let r = Root::new(b);
        (d, r)
    }

    #[test]
    fn says_why_tracing_is_unavailable() {
        let (d, r) = fake(MOUNTINFO);
        assert_eq!(unavailable(&r), None);
        fs::create_dir_all(d.path().join("sys/kernel/security")).unwrap();
        fs::write(
            d.path().join("sys/kernel/security/lockdown"),
            "none integrity [confidentiality]\n",
        )
        .unwrap();
        assert!(unavailable(&r).unwrap().contains("lockdown"));
        fs::write(
            d.path().join("sys/kernel/security/lockdown"),
            "[none] integrity confidentiality\n",
        )
        .unwrap();
        assert_eq!(unavailable(&r), None);

        let (d, r) = fake("22 1 0:21 / /proc rw - proc proc rw\n");
        assert!(unavailable(&r).unwrap().contains("no tracefs"));
        fs::write(
            d.path().join("proc/filesystems"),
            "nodev\tsysfs\nnodev\ttracefs\n\text4\n",
        )
        .unwrap();
        assert!(unavailable(&r).unwrap().contains("not mounted"));
    }

    #[test]
    fn paths_and_names() {
        assert_eq!(
            instance_dir("/sys/kernel/tracing/", 42),
            "/sys/kernel/tracing/instances/rtshield-42"
        );
        assert_eq!(instance_pid("rtshield-42"), Some(42));
        for n in ["rtshield-", "rtshield-4x", "other-42", "rtshield--1"] {
            assert_eq!(instance_pid(n), None, "{n}");
        }
    }

    #[test]
    fn finds_the_mount_preferring_the_usual_place() {
        let (_d, r) = fake(MOUNTINFO);
        assert_eq!(find(&r).as_deref(), Some("/sys/kernel/tracing"));
        let (_d, r) = fake("30 22 0:12 / /sys/kernel/debug/tracing rw - tracefs tracefs rw\n");
        assert_eq!(find(&r).as_deref(), Some("/sys/kernel/debug/tracing"));
        // The standard place wins even when listed after another mount.
        let (_d, r) = fake(&format!("{FOREIGN}{MOUNTINFO}"));
        assert_eq!(find(&r).as_deref(), Some("/sys/kernel/tracing"));
        let (_d, r) = fake("22 1 0:21 / /proc rw - proc proc rw\n");
        assert_eq!(find(&r), None);
        // A fake tree never mounts anything.
        let e = Instance::create(&r, &Config::new(CpuSet::single(1))).unwrap_err();
        assert!(e.to_string().contains("tracefs is not mounted"), "{e}");
    }

    #[test]
    fn never_uses_another_process_s_mount() {
        // Only a test's temporary mount and another rtshield's private
        // one: neither is ours to use (the old `find` took the first).
        let (_d, r) = fake(FOREIGN);
        assert_eq!(find(&r), None);
        // Our own private mount is.
        let own = private_mount(std::process::id());
        let (_d, r) = fake(&format!(
            "{FOREIGN}42 1 0:12 / {own} rw - tracefs tracefs rw\n"
        ));
        assert_eq!(find(&r), Some(own));
    }

    #[test]
    fn private_mount_names_carry_the_owner() {
        assert_eq!(private_dir(42), "/run/rtshield-tracefs-42");
        assert_eq!(private_mount(42), "/run/rtshield-tracefs-42/tracing");
        assert_eq!(
            private_mount_pid("/run/rtshield-tracefs-42/tracing"),
            Some(42)
        );
        for p in [
            "/run/rtshield-tracefs-42",
            "/run/rtshield-tracefs-42/tracing/x",
            "/run/rtshield-tracefs-/tracing",
            "/run/rtshield-tracefs-0/tracing",
            "/run/rtshield-tracefs-+4/tracing",
            "/tmp/rtshield-tracefs-42/tracing",
            "/sys/kernel/tracing",
        ] {
            assert_eq!(private_mount_pid(p), None, "{p}");
        }
    }

    /// A fake tree with instances and private mounts of a dead rtshield
    /// (999999), a live one (777), a zombie (778), and a foreign instance.
    fn with_leftovers(recording: bool) -> (tempfile::TempDir, Root) {
        let (d, r) = fake(&format!(
            "{MOUNTINFO}{FOREIGN}\
             43 1 0:12 / /run/rtshield-tracefs-999999/tracing rw - tracefs tracefs rw\n"
        ));
        let b = d.path();
        fs::create_dir_all(b.join("proc/777")).unwrap();
        fs::create_dir_all(b.join("proc/778")).unwrap();
        fs::write(b.join("proc/778/stat"), "778 (rtshield) Z 1 0 0\n").unwrap();
        let inst = b.join("sys/kernel/tracing/instances");
        for n in ["rtshield-999999", "rtshield-777", "rtshield-778", "perf"] {
            fs::create_dir(inst.join(n)).unwrap();
        }
        if recording {
            fs::write(inst.join("rtshield-999999/tracing_on"), "1\n").unwrap();
        }
        for pid in [777, 999999, 999998] {
            fs::create_dir_all(r.path(private_mount(pid))).unwrap();
        }
        (d, r)
    }

    /// Hold the owner record `name` of the fake tree `b` as another
    /// process would (an open file description of its own, locked).
    fn held_elsewhere(b: &std::path::Path, name: &str) -> fs::File {
        use std::os::unix::fs::PermissionsExt as _;
        let d = b.join("run/rtshield-owners");
        fs::create_dir_all(&d).unwrap();
        fs::set_permissions(&d, fs::Permissions::from_mode(0o700)).unwrap();
        let f = fs::File::create(d.join(format!("{name}.lock"))).unwrap();
        rustix::fs::flock(&f, rustix::fs::FlockOperation::NonBlockingLockExclusive).unwrap();
        f
    }

    /// Adversary round 5, F08: objects were owned by pid alone. Two runs
    /// in two PID namespaces: the second took the first's live instance
    /// and mount (`rtshield-2`, pid 2 being no process in its namespace)
    /// for leftovers, removed its mount point, and the orphaned instance
    /// was never reaped. An object is now its owner's while the owner
    /// holds its record locked, whatever the pid in its name says; a
    /// record free is a dead owner, reaped; an object without record (an
    /// older rtshield's) is judged by its pid only in the initial PID
    /// namespace.
    #[test]
    fn f08_owners_are_their_locked_records_not_their_pids() {
        let (d, r) = with_leftovers(false);
        let b = d.path();
        // 999999 is no process here, but its records are held (a live
        // rtshield of another PID namespace).
        let held = (
            held_elsewhere(b, "rtshield-999999"),
            held_elsewhere(b, "tracefs-999999"),
        );
        let alive: Vec<(String, bool)> = leftovers(&r)
            .into_iter()
            .map(|l| (l.name, l.owner_alive))
            .collect();
        assert!(
            alive.contains(&("rtshield-999999".into(), true)),
            "{alive:?}"
        );
        let gone: Vec<String> = remove_leftovers(&r).into_iter().map(|l| l.name).collect();
        assert!(!gone.iter().any(|g| g.contains("999999")), "{gone:?}");
        let inst = b.join("sys/kernel/tracing/instances");
        assert!(inst.join("rtshield-999999").is_dir());
        assert!(r.path(private_mount(999999)).is_dir());
        // The owner dies: its records are free, so the objects are
        // leftovers, removed with their records.
        drop(held);
        let gone: Vec<String> = remove_leftovers(&r).into_iter().map(|l| l.name).collect();
        assert!(gone.contains(&"rtshield-999999".to_string()), "{gone:?}");
        assert!(!inst.join("rtshield-999999").exists());
        assert!(!b.join("run/rtshield-owners/rtshield-999999.lock").exists());
        // Without a record, outside the initial PID namespace a pid proves
        // nothing: left alone (reported in use).
        fs::create_dir(inst.join("rtshield-999997")).unwrap();
        fs::create_dir_all(b.join("proc/self/ns")).unwrap();
        fs::write(b.join("proc/self/ns/pid"), "pid:[4026532000]\n").unwrap();
        assert!(leftovers(&r)
            .iter()
            .any(|l| l.name == "rtshield-999997" && l.owner_alive));
        remove_leftovers(&r);
        assert!(inst.join("rtshield-999997").is_dir());
        fs::write(b.join("proc/self/ns/pid"), "pid:[4026531836]\n").unwrap();
        remove_leftovers(&r);
        assert!(!inst.join("rtshield-999997").exists());
        // A second name for a pid whose plain name a live process holds.
        assert_eq!(instance_pid("rtshield-2-3"), Some(2));
        assert_eq!(instance_pid("rtshield-2-1"), None);
    }

    #[test]
    fn leftovers_name_their_owner_and_whether_it_lives() {
        let (_d, r) = with_leftovers(true);
        let l = leftovers(&r);
        let brief: Vec<(LeftoverKind, &str, u32, bool)> = l
            .iter()
            .map(|l| (l.kind, l.name.as_str(), l.pid, l.owner_alive))
            .collect();
        assert_eq!(
            brief,
            [
                (LeftoverKind::Instance, "rtshield-777", 777, true),
                (LeftoverKind::Instance, "rtshield-778", 778, false),
                (LeftoverKind::Instance, "rtshield-999999", 999999, false),
                (
                    LeftoverKind::Mount,
                    "/run/rtshield-tracefs-777/tracing",
                    777,
                    true
                ),
                (
                    LeftoverKind::Mount,
                    "/run/rtshield-tracefs-999999/tracing",
                    999999,
                    false
                ),
            ]
        );
        assert_eq!(l[2].tracing_on, Some(true));
        assert_eq!(l[2].path, "/sys/kernel/tracing/instances/rtshield-999999");
        let d = l[2].describe();
        assert!(d.contains("rtshield-999999 (still recording)"), "{d}");
        assert!(d.contains("process 999999, which is gone"), "{d}");
        assert!(l[0].describe().contains("in use by process 777"));
        let j = serde_json::to_value(&l[2]).unwrap();
        assert_eq!(j["kind"], "instance");
        assert_eq!(j["owner_alive"], false);
    }

    #[test]
    fn only_dead_owners_leftovers_are_removed() {
        // The fake kernel cannot empty an instance on rmdir: no files in it.
        let (d, r) = with_leftovers(false);
        let gone: Vec<String> = remove_leftovers(&r).into_iter().map(|l| l.name).collect();
        assert_eq!(
            gone,
            [
                "rtshield-778",
                "rtshield-999999",
                "/run/rtshield-tracefs-999999/tracing"
            ]
        );
        let b = d.path();
        let inst = b.join("sys/kernel/tracing/instances");
        assert!(inst.join("rtshield-777").is_dir());
        assert!(inst.join("perf").is_dir());
        assert!(!inst.join("rtshield-999999").exists());
        assert!(!inst.join("rtshield-778").exists());
        assert!(r.path(private_mount(777)).is_dir());
        // The dead one's mount and directory, and a dead one's empty
        // directory that was never mounted.
        assert!(!r.path(private_dir(999999)).exists());
        assert!(!r.path(private_dir(999998)).exists());
        // Nothing left to remove the second time (once the kernel, here
        // the test, no longer lists the detached mount).
        fs::write(
            b.join("proc/self/mountinfo"),
            format!("{MOUNTINFO}{FOREIGN}"),
        )
        .unwrap();
        assert!(remove_leftovers(&r).is_empty());
    }

    #[test]
    fn without_a_usable_mount_instances_are_listed_through_a_dead_one_s() {
        // No standard mount: the dead rtshield's private mount shows the
        // instances (a live process's private mount is never used).
        let (d, r) =
            fake("41 1 0:12 / /run/rtshield-tracefs-777/tracing rw - tracefs tracefs rw\n");
        fs::create_dir_all(d.path().join("proc/777")).unwrap();
        assert!(leftovers(&r).iter().all(|l| l.kind == LeftoverKind::Mount));
        let (d, r) =
            fake("43 1 0:12 / /run/rtshield-tracefs-999999/tracing rw - tracefs tracefs rw\n");
        let inst = r.path(format!("{}/instances", private_mount(999999)));
        fs::create_dir_all(inst.join("rtshield-999999")).unwrap();
        let l = leftovers(&r);
        assert_eq!(l.len(), 2, "{l:?}");
        assert_eq!(
            l[0].path,
            "/run/rtshield-tracefs-999999/tracing/instances/rtshield-999999"
        );
        drop(d);
    }

    #[test]
    fn selects_existing_events_and_reports_missing() {
        let avail =
            "sched:sched_switch\nirq_vectors:local_timer_entry\nirq_vectors:local_timer_exit\n\
                     irq_vectors:vector_config\nipi:ipi_raise\nipi:ipi_entry\n";
        let (on, missing) = select_events(
            avail,
            &[
                "sched:sched_switch",
                "irq_vectors:*_entry",
                "ipi:*",
                "timer:hrtimer_start",
            ],
        );
        assert_eq!(
            on,
            vec![
                "sched:sched_switch",
                "irq_vectors:local_timer_entry",
                "ipi:ipi_raise",
                "ipi:ipi_entry"
            ]
        );
        assert_eq!(missing, vec!["timer:hrtimer_start"]);
    }

    #[test]
    fn instance_on_a_fake_tree_sets_its_files_and_is_removed() {
        let (d, r) = fake(MOUNTINFO);
        let inst_root = d.path().join("sys/kernel/tracing/instances");
        // A stale instance of a dead pid, one of a live pid, a foreign one.
        fs::create_dir_all(d.path().join("proc/777")).unwrap();
        for n in ["rtshield-999999", "rtshield-777", "perf"] {
            fs::create_dir(inst_root.join(n)).unwrap();
        }
        let top_before = fs::read_dir(d.path().join("sys/kernel/tracing"))
            .unwrap()
            .count();
        let mut cfg = Config::new(CpuSet::parse_list("1,3").unwrap());
        cfg.buffer_kb = 512;
        let inst = Instance::create(&r, &cfg).unwrap();
        let me = std::process::id();
        let dir = inst_root.join(format!("rtshield-{me}"));
        assert_eq!(
            inst.dir(),
            format!("/sys/kernel/tracing/instances/rtshield-{me}")
        );
        assert!(!inst.mounted_by_us());
        assert_eq!(inst.stale_removed(), ["rtshield-999999"]);
        assert!(inst_root.join("rtshield-777").exists());
        assert!(inst_root.join("perf").exists());
        let rd = |f: &str| fs::read_to_string(dir.join(f)).unwrap();
        assert_eq!(rd("tracing_cpumask"), "a");
        assert_eq!(rd("buffer_size_kb"), "512");
        assert_eq!(rd("trace_clock"), "mono");
        assert_eq!(rd("tracing_on"), "0");
        assert_eq!(rd("trace_options"), "overwrite");
        assert!(inst.enabled().contains(&"sched:sched_switch".to_string()));
        assert!(inst
            .enabled()
            .contains(&"irq_vectors:local_timer_exit".to_string()));
        assert!(!inst.enabled().iter().any(|e| e.contains("vector_config")));
        assert!(inst.missing().contains(&"timer:hrtimer_start".to_string()));
        inst.start().unwrap();
        assert_eq!(rd("tracing_on"), "1");
        inst.marker("hello").unwrap();
        assert_eq!(rd("trace_marker"), "hello");
        // The fake kernel would refuse rmdir of a populated dir; empty it.
        for e in fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                fs::remove_dir_all(p).unwrap();
            } else {
                fs::remove_file(p).unwrap();
            }
        }
        inst.close().unwrap();
        assert!(!dir.exists());
        // Top level untouched.
        assert_eq!(
            fs::read_dir(d.path().join("sys/kernel/tracing"))
                .unwrap()
                .count(),
            top_before
        );
    }

    /// A stats file as the kernel writes it (kernel/trace/trace.c,
    /// `tracing_stats_read`).
    const STATS: &str = "entries: 912\noverrun: 3711\ncommit overrun: 0\nbytes: 43240\n\
        oldest event ts:  2201.413262\nnow ts:  2203.990411\ndropped events: 4\nread events: 17\n";

    #[test]
    fn drops_are_read_per_cpu_and_unknown_when_a_file_is_missing() {
        assert_eq!(
            Drops::parse(STATS),
            Drops {
                overrun: Some(3711),
                dropped: Some(4)
            }
        );
        // `commit overrun:` is not `overrun:`.
        assert_eq!(Drops::parse("commit overrun: 5\n").overrun, None);
        let (d, r) = fake(MOUNTINFO);
        let inst = Instance::create(&r, &Config::new(CpuSet::parse_list("0-1").unwrap())).unwrap();
        let dir = d.path().join(inst.dir().trim_start_matches('/'));
        for c in [0, 1] {
            fs::create_dir_all(dir.join(format!("per_cpu/cpu{c}"))).unwrap();
            fs::write(dir.join(format!("per_cpu/cpu{c}/stats")), STATS).unwrap();
        }
        let both = CpuSet::parse_list("0-1").unwrap();
        assert_eq!(
            inst.drops(&both),
            Drops {
                overrun: Some(7422),
                dropped: Some(8)
            }
        );
        // CPU 1 without the line, CPU 2 without the file: unknown, not a partial sum.
        fs::write(dir.join("per_cpu/cpu1/stats"), "entries: 0\noverrun: 1\n").unwrap();
        assert_eq!(
            inst.drops(&both),
            Drops {
                overrun: Some(3712),
                dropped: None
            }
        );
        assert_eq!(
            inst.drops(&CpuSet::parse_list("0,2").unwrap()),
            Drops::default()
        );
        fs::remove_dir_all(dir.join("per_cpu")).unwrap();
        for e in fs::read_dir(&dir).unwrap() {
            fs::remove_file(e.unwrap().path()).unwrap();
        }
        inst.close().unwrap();
    }

    #[test]
    fn a_failed_creation_does_not_remove_what_it_did_not_create() {
        let (d, r) = fake(MOUNTINFO);
        let mine = d.path().join(format!(
            "sys/kernel/tracing/instances/rtshield-{}",
            std::process::id()
        ));
        fs::create_dir(&mine).unwrap();
        let e = Instance::create(&r, &Config::new(CpuSet::single(0))).unwrap_err();
        assert!(
            e.to_string().contains("cannot create trace instance"),
            "{e}"
        );
        assert!(mine.is_dir());
    }

    #[test]
    fn bad_buffer_and_empty_cpus_are_refused() {
        let (_d, r) = fake(MOUNTINFO);
        let mut cfg = Config::new(CpuSet::single(0));
        cfg.buffer_kb = 0;
        assert!(Instance::create(&r, &cfg)
            .unwrap_err()
            .to_string()
            .contains("out of range"));
        let cfg = Config::new(CpuSet::new());
        assert!(Instance::create(&r, &cfg).is_err());
    }
}
