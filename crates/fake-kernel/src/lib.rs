//! The kernel behaviours plain files cannot show, emulated on a fake tree
//! (built by `rtshield-testkit`): a write to `tasks` *moves* a task (and
//! applies the cpuset's CPUs to its affinity), `mkdir` in a cgroup fills the
//! directory with control files, `rmdir` of a busy cgroup fails, an IRQ
//! refuses with EIO, a task forks while it is being moved, a `create` is
//! killed after N writes. It is a [`Backend`] of `partition`'s [`Kernel`].
//!
//! Its one job: make a fake tree behave like the kernel where plain files
//! cannot. What it may not do: reach the real kernel (it refuses nothing
//! on the host: [`kernel`] opens the host as plain files) or ship. Two
//! narrow exceptions, both about processes the test itself started: the
//! caller joining a fake cpuset (`partition run`) is pinned to that set's
//! CPUs as the kernel would pin it, and a host PID listed in a fake cgroup
//! counts as exited once the host's `/proc` no longer has it.
//!
//! For test builds only: library tests use it through `rtshield-testkit`,
//! and the binary links it only with its `fake-kernel` feature, which only
//! its own dev-dependencies enable, so the release binary holds none of it.
//! The emulation is chosen explicitly ([`kernel`]); its settings come from
//! `/.rtshield-fake.json` at the top of the tree:
//!
//! ```json
//! { "refuse": { "/proc/irq/30/smp_affinity_list": "EIO" },
//!   "refuse_tids": { "14": "EINVAL" },
//!   "fork_on_move": { "101": [150] },
//!   "partition_invalid": { "isolated": "Cpu list in cpuset.cpus not exclusive" },
//!   "kill_after_writes": 7 }
//! ```

#![deny(missing_docs)]
#![warn(unreachable_pub)]

use rtshield_partition::Kernel;
use rtshield_partition::{errno_from_name, Backend};
use rtshield_sys::kpath;
use rtshield_sys::OsErrorAt;
use rtshield_sys::Root;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// The emulation's settings file, at the top of a fake tree.
pub const MARKER: &str = "/.rtshield-fake.json";

/// What the emulation does besides plain file writes (the [`MARKER`] file).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct FakeConfig {
    /// Kernel path → errno name: writes to it fail.
    #[serde(default)]
    pub refuse: BTreeMap<String, String>,
    /// TID → errno name: moving it to another cgroup fails.
    #[serde(default)]
    pub refuse_tids: BTreeMap<String, String>,
    /// TID → TIDs that appear in its old cgroup when it is moved (a fork).
    #[serde(default)]
    pub fork_on_move: BTreeMap<String, Vec<u32>>,
    /// `cpuset.cpus.partition` value → reason the kernel reports it invalid.
    #[serde(default)]
    pub partition_invalid: BTreeMap<String, String>,
    /// Fail every write after this many (a killed `create`).
    #[serde(default)]
    pub kill_after_writes: Option<usize>,
    /// TID → how many `rmdir`s of the cgroup listing it fail (EBUSY)
    /// before it is gone: a task still exiting, which meanwhile cannot be
    /// moved (ESRCH). `u32::MAX`: it never finishes.
    #[serde(default)]
    pub dying_tids: BTreeMap<String, u32>,
}

/// The emulation of one fake tree.
pub(crate) struct FakeFs {
    cfg: FakeConfig,
    /// Fail every write after this many (a killed `create`).
    pub kill_after_writes: Option<usize>,
}

fn os_err(code: i32, p: PathBuf) -> io::Error {
    let kind = io::Error::from_raw_os_error(code).kind();
    io::Error::new(kind, OsErrorAt { code, path: p })
}

fn errno_of(name: &str) -> i32 {
    errno_from_name(name).unwrap_or(libc::EIO)
}

const TASK_FILES: &[&str] = &["tasks", "cgroup.procs", "cgroup.threads"];

impl FakeFs {
    /// The emulation a tree's [`MARKER`] file describes; `None` without one.
    pub(crate) fn load(root: &Root) -> io::Result<Option<FakeFs>> {
        let Ok(text) = root.read(MARKER) else {
            return Ok(None);
        };
        let cfg: FakeConfig = serde_json::from_str(&text)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("{MARKER}: {e}")))?;
        Ok(Some(FakeFs {
            kill_after_writes: cfg.kill_after_writes,
            cfg,
        }))
    }

    /// Write `value` to `p` with the kernel's side effects.
    pub(crate) fn write(&mut self, root: &Root, p: &str, value: &str) -> io::Result<()> {
        if let Some(e) = self.cfg.refuse.get(p) {
            return Err(os_err(errno_of(e), root.path(p)));
        }
        let path = root.path(p);
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if TASK_FILES.contains(&name) {
            return self.move_task(root, &path, name, value.trim());
        }
        if name == "cgroup.subtree_control" {
            let mut words: Vec<String> = fs::read_to_string(&path)
                .unwrap_or_default()
                .split_whitespace()
                .map(str::to_string)
                .collect();
            for op in value.split_whitespace() {
                let (sign, ctrl) = op.split_at(1);
                words.retain(|w| w != ctrl);
                if sign == "+" {
                    words.push(ctrl.to_string());
                }
            }
            let s = if words.is_empty() {
                String::new()
            } else {
                words.join(" ") + "\n"
            };
            return fs::write(&path, s);
        }
        if name == "cpuset.cpus.partition" {
            let v = value.trim();
            if let Some(reason) = self.cfg.partition_invalid.get(v) {
                return fs::write(&path, format!("{v} invalid ({reason})\n"));
            }
        }
        if !path.exists() {
            // Kernel directories never grow files on write.
            return Err(os_err(libc::ENOENT, path));
        }
        if name == "smp_affinity_list" {
            // The kernel routes the IRQ within the new affinity.
            let eff = path.with_file_name("effective_affinity_list");
            if eff.exists() {
                fs::write(eff, value)?;
            }
            // `smp_affinity` is the same mask in hex: one value, two files.
            let hex = path.with_file_name("smp_affinity");
            if let (true, Some(cpus)) = (hex.exists(), parse_list(value)) {
                let width = fs::read_to_string(&hex).map_or(1, |s| s.trim().len());
                fs::write(hex, format!("{}\n", to_mask(&cpus, width)))?;
            }
        }
        root.write(p, value)
    }

    fn move_task(&mut self, root: &Root, target: &Path, name: &str, tid: &str) -> io::Result<()> {
        let n: u32 = tid
            .parse()
            .map_err(|_| os_err(libc::EINVAL, target.to_path_buf()))?;
        if let Some(e) = self.cfg.refuse_tids.get(tid) {
            return Err(os_err(errno_of(e), target.to_path_buf()));
        }
        if self.cfg.dying_tids.contains_key(tid) || gone(root, n) {
            return Err(os_err(libc::ESRCH, target.to_path_buf()));
        }
        // The hierarchy's top: climb while the parent has the same file.
        let mut top = target.parent().unwrap().to_path_buf();
        while let Some(up) = top.parent() {
            if up.join(name).exists() {
                top = up.to_path_buf();
            } else {
                break;
            }
        }
        let mut source = None;
        for f in files_named(&top, name) {
            let mut ids = read_ids(&f);
            if ids.contains(&n) {
                ids.retain(|&x| x != n);
                write_ids(&f, &ids)?;
                source = Some(f);
            }
        }
        let mut ids = read_ids(target);
        ids.push(n);
        write_ids(target, &ids)?;
        // The kernel applies the cpuset's CPUs to the task's affinity.
        let dir = target.parent().unwrap();
        let cpus = [
            "cpuset.effective_cpus",
            "effective_cpus",
            "cpuset.cpus.effective",
            "cpuset.cpus",
            "cpus",
        ]
        .iter()
        .filter_map(|f| fs::read_to_string(dir.join(f)).ok())
        .map(|s| s.trim().to_string())
        .find(|s| !s.is_empty());
        let has_status = root.path(format!("{}/status", kpath::proc_dir(n))).exists();
        match (cpus, has_status) {
            (Some(cpus), true) => set_cpus_allowed(root, n, &cpus)?,
            (Some(cpus), false) if n == std::process::id() => pin_self(&cpus),
            _ => {}
        }
        if let (Some(children), Some(src)) = (self.cfg.fork_on_move.remove(tid), source) {
            let mut ids = read_ids(&src);
            for c in children {
                ids.push(c);
                let st = root.path(format!("{}/status", kpath::proc_dir(n)));
                let dst = root.path(format!("{}/status", kpath::proc_dir(c)));
                fs::create_dir_all(dst.parent().unwrap())?;
                let body = fs::read_to_string(&st).unwrap_or_default();
                fs::write(dst, body)?;
            }
            write_ids(&src, &ids)?;
        }
        Ok(())
    }

    /// Create cgroup directory `p`, filled with its control files.
    pub(crate) fn mkdir(&mut self, root: &Root, p: &str) -> io::Result<()> {
        let path = root.path(p);
        if path.exists() {
            return Err(os_err(libc::EEXIST, path));
        }
        let parent = path.parent().unwrap();
        let files: &[(&str, &str)] =
            if parent.join("cpuset.cpus").exists() && parent.join("tasks").exists() {
                &[
                    ("cpuset.cpus", "\n"),
                    ("cpuset.mems", "\n"),
                    ("cpuset.effective_cpus", "\n"),
                    ("cpuset.cpu_exclusive", "0\n"),
                    ("cpuset.sched_load_balance", "1\n"),
                    ("tasks", ""),
                    ("cgroup.procs", ""),
                    ("notify_on_release", "0\n"),
                ]
            } else if parent.join("cpus").exists() && parent.join("tasks").exists() {
                &[
                    ("cpus", "\n"),
                    ("mems", "\n"),
                    ("effective_cpus", "\n"),
                    ("cpu_exclusive", "0\n"),
                    ("sched_load_balance", "1\n"),
                    ("tasks", ""),
                    ("cgroup.procs", ""),
                    ("notify_on_release", "0\n"),
                ]
            } else {
                &[
                    ("cpuset.cpus", "\n"),
                    ("cpuset.mems", "\n"),
                    ("cpuset.cpus.effective", "\n"),
                    ("cpuset.cpus.exclusive", "\n"),
                    ("cpuset.cpus.partition", "member\n"),
                    ("cgroup.procs", ""),
                    ("cgroup.subtree_control", ""),
                ]
            };
        fs::create_dir(&path)?;
        for (f, body) in files {
            fs::write(path.join(f), body)?;
        }
        Ok(())
    }

    /// Remove cgroup directory `p`: EBUSY while it holds tasks or children.
    pub(crate) fn rmdir(&mut self, root: &Root, p: &str) -> io::Result<()> {
        let path = root.path(p);
        if !path.is_dir() {
            return Err(os_err(libc::ENOENT, path));
        }
        self.reap_dying(root, &path)?;
        for f in TASK_FILES {
            if !read_ids(&path.join(f)).is_empty() {
                return Err(os_err(libc::EBUSY, path));
            }
        }
        if fs::read_dir(&path)?.flatten().any(|e| e.path().is_dir()) {
            return Err(os_err(libc::EBUSY, path));
        }
        fs::remove_dir_all(&path)
    }
}

impl FakeFs {
    /// An `rmdir` of `dir`: each exiting task listed there comes one step
    /// closer to gone; a gone one leaves the task files, as does a process
    /// of the host that exited (a `partition run` child: the kernel drops
    /// an exited task from its cgroup).
    fn reap_dying(&mut self, root: &Root, dir: &Path) -> io::Result<()> {
        let listed: std::collections::BTreeSet<u32> = TASK_FILES
            .iter()
            .flat_map(|f| read_ids(&dir.join(f)))
            .collect();
        let mut reaped = vec![];
        for t in listed {
            if let Some(left) = self.cfg.dying_tids.get_mut(&t.to_string()) {
                if *left != u32::MAX {
                    *left = left.saturating_sub(1);
                    if *left == 0 {
                        reaped.push(t);
                    }
                }
            } else if gone(root, t) {
                reaped.push(t);
            }
        }
        for t in &reaped {
            self.cfg.dying_tids.remove(&t.to_string());
        }
        if !reaped.is_empty() {
            for f in TASK_FILES {
                let file = dir.join(f);
                if file.exists() {
                    let mut ids = read_ids(&file);
                    ids.retain(|t| !reaped.contains(t));
                    write_ids(&file, &ids)?;
                }
            }
        }
        Ok(())
    }
}

fn files_named(top: &Path, name: &str) -> Vec<PathBuf> {
    let mut out = vec![];
    let mut stack = vec![top.to_path_buf()];
    while let Some(d) = stack.pop() {
        if d.join(name).is_file() {
            out.push(d.join(name));
        }
        if let Ok(rd) = fs::read_dir(&d) {
            for e in rd.flatten() {
                if e.path().is_dir() {
                    stack.push(e.path());
                }
            }
        }
    }
    out
}

fn read_ids(f: &Path) -> Vec<u32> {
    fs::read_to_string(f)
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect()
}

/// The kernel lists v1 `tasks` sorted, one per line.
fn write_ids(f: &Path, ids: &[u32]) -> io::Result<()> {
    let mut v = ids.to_vec();
    v.sort_unstable();
    v.dedup();
    let s: String = v.iter().map(|i| format!("{i}\n")).collect();
    fs::write(f, s)
}

/// Whether task `tid` is neither a fake task of the tree nor a live
/// process of the host (a `partition run` child writes its real PID into
/// the fake tree, then exits). The host's `/proc` is only looked at.
fn gone(root: &Root, tid: u32) -> bool {
    !root.path(kpath::proc_dir(tid)).exists() && !Path::new(&kpath::proc_dir(tid)).exists()
}

/// The kernel applies a cpuset's CPUs to a task that joins it; when that
/// task is the caller itself (`partition run`, which joins the partition
/// and then runs the command), the emulation pins it for real, to the
/// CPUs of the set this machine has (none: left as it is). Only the
/// caller, a process the test started, is ever touched.
fn pin_self(cpus: &str) {
    let Some(list) = parse_list(cpus) else { return };
    // SAFETY: cpu_set_t is plain data; CPU_SET stays within its size.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for c in list {
            if (c as usize) < libc::CPU_SETSIZE as usize {
                libc::CPU_SET(c as usize, &mut set);
            }
        }
        // EINVAL (none of these CPUs exists here): nothing to emulate.
        let _ = libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

/// A CPU list (`0-2,5`); `None` when it is not one.
fn parse_list(s: &str) -> Option<Vec<u32>> {
    let mut out = vec![];
    for part in s.trim().split(',').filter(|p| !p.is_empty()) {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let (a, b): (u32, u32) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
        if b < a || b > 4095 {
            return None;
        }
        out.extend(a..=b);
    }
    Some(out)
}

/// `cpus` as the kernel's hex mask, at least `width` digits, in 32-bit
/// groups past 32 CPUs (`Cpus_allowed`, `smp_affinity`).
fn to_mask(cpus: &[u32], width: usize) -> String {
    let top = cpus.iter().max().map_or(1, |c| c + 1);
    let words = top.div_ceil(32).max(1) as usize;
    let mut groups = vec![0u32; words];
    for &c in cpus {
        groups[words - 1 - (c / 32) as usize] |= 1 << (c % 32);
    }
    if words == 1 {
        return format!("{:0width$x}", groups[0], width = width.clamp(1, 8));
    }
    groups
        .iter()
        .map(|g| format!("{g:08x}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// The fake task's affinity, when it has a status file: what the kernel
/// changes on a cpuset move or a `sched_setaffinity`. `Cpus_allowed_list`,
/// `Cpus_allowed` (hex) and, in `stat`, the CPU it last ran on (moved
/// into the new set when outside it). No such task: ESRCH, as the kernel.
fn set_cpus_allowed(root: &Root, tid: u32, cpus: &str) -> io::Result<()> {
    let st = root.path(format!("{}/status", kpath::proc_dir(tid)));
    let Ok(body) = fs::read_to_string(&st) else {
        return Err(os_err(libc::ESRCH, st));
    };
    let list = parse_list(cpus).unwrap_or_default();
    let body: String = body
        .lines()
        .map(|l| {
            if l.starts_with("Cpus_allowed_list:") {
                format!("Cpus_allowed_list:\t{cpus}\n")
            } else if let Some(old) = l.strip_prefix("Cpus_allowed:") {
                format!("Cpus_allowed:\t{}\n", to_mask(&list, old.trim().len()))
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    fs::write(&st, body)?;
    // Field 39 of `stat` (after the `(comm)`, field 37 of the rest).
    let stat = root.path(format!("{}/stat", kpath::proc_dir(tid)));
    if let (Ok(line), Some(&first)) = (fs::read_to_string(&stat), list.first()) {
        if let Some(close) = line.rfind(')') {
            let (head, tail) = line.split_at(close + 1);
            let mut f: Vec<String> = tail.split_whitespace().map(str::to_string).collect();
            if let Some(cpu) = f.get_mut(36) {
                if cpu.parse::<u32>().is_ok_and(|c| !list.contains(&c)) {
                    *cpu = first.to_string();
                    fs::write(&stat, format!("{head} {}\n", f.join(" ")))?;
                }
            }
        }
    }
    Ok(())
}

impl Backend for FakeFs {
    fn write(&mut self, root: &Root, path: &str, value: &str) -> io::Result<()> {
        FakeFs::write(self, root, path, value)
    }
    fn mkdir(&mut self, root: &Root, path: &str) -> io::Result<()> {
        FakeFs::mkdir(self, root, path)
    }
    fn rmdir(&mut self, root: &Root, path: &str) -> io::Result<()> {
        FakeFs::rmdir(self, root, path)
    }
    fn kill_after_writes(&self) -> Option<usize> {
        self.kill_after_writes
    }
    fn set_affinity(&mut self, root: &Root, tid: u32, cpus: &str) -> io::Result<()> {
        set_cpus_allowed(root, tid, cpus)
    }
}

/// Open a fake tree built by [`FakeSpec::build`] with the kernel emulation
/// its `/.rtshield-fake.json` describes; a tree without that file (or the
/// host) is opened as plain files.
pub fn kernel(root: Root, dry_run: bool) -> io::Result<Kernel> {
    if root.is_host() {
        return Kernel::open(root, dry_run);
    }
    match FakeFs::load(&root)? {
        Some(f) => Ok(Kernel::with_backend(root, dry_run, Box::new(f))),
        None => Kernel::open(root, dry_run),
    }
}
