//! A private ftrace instance (`instances/rtshield-<pid>` under tracefs).
//!
//! Everything rtshield traces goes into its own instance: the top-level
//! buffer, its `tracing_on`, `current_tracer`, `set_event` and
//! `tracing_cpumask` are only ever read. tracefs is mounted at
//! `/sys/kernel/tracing` only when it is mounted nowhere, and unmounted at
//! close only when we mounted it. Instances left by a process that died
//! (SIGKILL, crash) are removed by the next [`Instance::create`].
//! The trace text is parsed by the `rtshield-trace` crate. See docs/trace.md.

use crate::cgroup;
use crate::Root;
use rtshield_vocab::CpuSet;
use std::io;

/// Where rtshield mounts tracefs when it is not mounted.
pub(crate) const MOUNT_POINT: &str = "/sys/kernel/tracing";
/// Instance names: `rtshield-<pid>`.
pub(crate) const INSTANCE_PREFIX: &str = "rtshield-";
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

/// The tracefs mount point from `/proc/self/mountinfo`, if mounted
/// (`/sys/kernel/tracing` preferred over the debugfs automount).
pub fn find(root: &Root) -> Option<String> {
    let m: Vec<String> = cgroup::mounts(root)
        .into_iter()
        .filter(|m| m.fs_type == "tracefs")
        .map(|m| m.mount_point)
        .collect();
    m.iter().find(|p| *p == MOUNT_POINT).or(m.first()).cloned()
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

/// The pid of an instance named `rtshield-<pid>`; `None` for other names.
pub fn instance_pid(name: &str) -> Option<u32> {
    let p = name.strip_prefix(INSTANCE_PREFIX)?;
    if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    p.parse().ok()
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
    /// Mount tracefs if needed, remove stale instances of dead rtshield
    /// processes, create `instances/rtshield-<our pid>` with tracing off,
    /// and configure it. Tracing starts with [`Instance::start`].
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
        let (tracefs, mounted_by_us) = match find(root) {
            Some(t) => (t, false),
            None => (mount(root)?, true),
        };
        let mut inst = Instance {
            root: root.clone(),
            dir: instance_dir(&tracefs, std::process::id()),
            tracefs,
            mounted_by_us,
            enabled: Vec::new(),
            missing: Vec::new(),
            stale_removed: Vec::new(),
            created: false,
            closed: false,
        };
        // From here on, Drop undoes whatever was done.
        inst.stale_removed = remove_stale(root, &inst.tracefs);
        std::fs::create_dir(root.path(&inst.dir))
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
            match std::fs::remove_dir(&p) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => Err(err(format!(
                    "cannot remove trace instance {}: {e}",
                    p.display()
                ))),
                _ => Ok(()),
            }
        } else {
            Ok(())
        };
        if self.mounted_by_us {
            // Another rtshield that found our mount may still be tracing:
            // leave the mount to it rather than pull it away.
            let others = live_instances(&self.root, &self.tracefs);
            if others.is_empty() {
                unmount(&self.root, &self.tracefs)?;
            } else {
                eprintln!(
                    "rtshield: leaving tracefs mounted at {}: still used by {}",
                    self.tracefs,
                    others.join(", ")
                );
            }
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

/// Remove `instances/rtshield-<pid>` whose process is gone; returns their
/// names. Our own and live processes' instances are left alone.
pub(crate) fn remove_stale(root: &Root, tracefs: &str) -> Vec<String> {
    let dir = format!("{}/instances", tracefs.trim_end_matches('/'));
    let me = std::process::id();
    let mut out = Vec::new();
    for name in root.read_dir_names(&dir).unwrap_or_default() {
        let Some(pid) = instance_pid(&name) else {
            continue;
        };
        if pid == me || crate::task::exists(root, pid) {
            continue;
        }
        if std::fs::remove_dir(root.path(format!("{dir}/{name}"))).is_ok() {
            out.push(name);
        }
    }
    out
}

/// Instances `rtshield-<pid>` of other processes that are still alive.
pub(crate) fn live_instances(root: &Root, tracefs: &str) -> Vec<String> {
    let dir = format!("{}/instances", tracefs.trim_end_matches('/'));
    let me = std::process::id();
    root.read_dir_names(&dir)
        .unwrap_or_default()
        .into_iter()
        .filter(|n| instance_pid(n).is_some_and(|p| p != me && crate::task::exists(root, p)))
        .collect()
}

/// Mount tracefs at [`MOUNT_POINT`] (host only: a fake tree cannot mount).
fn mount(root: &Root) -> io::Result<String> {
    if !root.is_host() {
        return Err(err(format!(
            "tracefs is not mounted in {} (no tracefs line in mountinfo)",
            root.base().display()
        )));
    }
    let target = std::ffi::CString::new(MOUNT_POINT).expect("no NUL");
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
        return Err(io::Error::new(
            e.kind(),
            format!("cannot mount tracefs at {MOUNT_POINT}: {e}"),
        ));
    }
    Ok(MOUNT_POINT.to_string())
}

fn unmount(root: &Root, at: &str) -> io::Result<()> {
    if !root.is_host() {
        return Ok(());
    }
    let target = std::ffi::CString::new(at).map_err(|_| err(format!("bad path {at}")))?;
    // SAFETY: a valid NUL-terminated path that outlives the call.
    if unsafe { libc::umount2(target.as_ptr(), 0) } != 0 {
        let e = io::Error::last_os_error();
        return Err(io::Error::new(
            e.kind(),
            format!("cannot unmount tracefs at {at}: {e}"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    const MOUNTINFO: &str = "22 1 0:21 / /proc rw,nosuid - proc proc rw\n\
        30 22 0:12 / /sys/kernel/debug/tracing rw - tracefs tracefs rw\n\
        31 22 0:12 / /sys/kernel/tracing rw,nosuid - tracefs tracefs rw\n";

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
        let (_d, r) = fake("22 1 0:21 / /proc rw - proc proc rw\n");
        assert_eq!(find(&r), None);
        // A fake tree never mounts anything.
        let e = Instance::create(&r, &Config::new(CpuSet::single(1))).unwrap_err();
        assert!(e.to_string().contains("tracefs is not mounted"), "{e}");
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
        // Who would still need a mount we made: the live one only.
        assert_eq!(
            live_instances(&r, "/sys/kernel/tracing"),
            vec!["rtshield-777".to_string()]
        );
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
