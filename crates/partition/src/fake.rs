//! Fake kernel trees for tests: a builder for a `/proc` + `/sys` tree in a
//! temp dir, and the emulation of the few kernel behaviours plain files
//! cannot show (a write to `tasks` *moves* a task, `mkdir` in a cgroup fills
//! the directory with control files, an IRQ refuses with EIO, a task forks
//! while it is being moved, a `create` is killed after N writes).
//!
//! Compiled only with the `testing` feature (tests enable it through their
//! dev-dependencies), so the release binary holds none of it. The emulation
//! is chosen explicitly: [`kernel`] opens a tree with it; its settings come
//! from `/.rtshield-fake.json` at the top of the tree:
//!
//! ```json
//! { "refuse": { "/proc/irq/30/smp_affinity_list": "EIO" },
//!   "refuse_tids": { "14": "EINVAL" },
//!   "fork_on_move": { "101": [150] },
//!   "partition_invalid": { "isolated": "Cpu list in cpuset.cpus not exclusive" },
//!   "kill_after_writes": 7 }
//! ```

use rtshield_sys::root::OsErrorAt;
use rtshield_sys::Root;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

pub const MARKER: &str = "/.rtshield-fake.json";

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
}

pub struct FakeFs {
    cfg: FakeConfig,
    pub kill_after_writes: Option<usize>,
}

fn os_err(code: i32, p: PathBuf) -> io::Error {
    let kind = io::Error::from_raw_os_error(code).kind();
    io::Error::new(kind, OsErrorAt { code, path: p })
}

fn errno_of(name: &str) -> i32 {
    crate::kernel::errno_from_name(name).unwrap_or(libc::EIO)
}

const TASK_FILES: &[&str] = &["tasks", "cgroup.procs", "cgroup.threads"];

impl FakeFs {
    pub fn load(root: &Root) -> io::Result<Option<FakeFs>> {
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

    pub fn write(&mut self, root: &Root, p: &str, value: &str) -> io::Result<()> {
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
        let st = root.path(format!("/proc/{n}/status"));
        if let (Some(cpus), Ok(body)) = (cpus, fs::read_to_string(&st)) {
            let body: String = body
                .lines()
                .map(|l| {
                    if l.starts_with("Cpus_allowed_list:") {
                        format!("Cpus_allowed_list:\t{cpus}\n")
                    } else {
                        format!("{l}\n")
                    }
                })
                .collect();
            fs::write(&st, body)?;
        }
        if let (Some(children), Some(src)) = (self.cfg.fork_on_move.remove(tid), source) {
            let mut ids = read_ids(&src);
            for c in children {
                ids.push(c);
                let st = root.path(format!("/proc/{n}/status"));
                let dst = root.path(format!("/proc/{c}/status"));
                fs::create_dir_all(dst.parent().unwrap())?;
                let body = fs::read_to_string(&st).unwrap_or_default();
                fs::write(dst, body)?;
            }
            write_ids(&src, &ids)?;
        }
        Ok(())
    }

    pub fn mkdir(&mut self, root: &Root, p: &str) -> io::Result<()> {
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

    pub fn rmdir(&mut self, root: &Root, p: &str) -> io::Result<()> {
        let path = root.path(p);
        if !path.is_dir() {
            return Err(os_err(libc::ENOENT, path));
        }
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

/// Every file (content) and directory (empty) below `base`, by relative
/// path, for before/after comparisons in tests. `run/` (state files) and
/// the marker are left out: they are expected to change.
pub fn snapshot(base: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![base.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            let rel = p.strip_prefix(base).unwrap().to_string_lossy().into_owned();
            if rel == "run" || rel.starts_with("run/") || format!("/{rel}") == MARKER {
                continue;
            }
            if p.is_dir() {
                out.insert(format!("{rel}/"), vec![]);
                stack.push(p);
            } else {
                out.insert(rel, fs::read(&p).unwrap_or_default());
            }
        }
    }
    out
}

/// What differs between two [`snapshot`]s, one line per path.
pub fn diff(a: &BTreeMap<String, Vec<u8>>, b: &BTreeMap<String, Vec<u8>>) -> Vec<String> {
    let mut d = vec![];
    for (k, v) in a {
        match b.get(k) {
            None => d.push(format!("missing {k}")),
            Some(w) if w != v => d.push(format!(
                "{k}: {:?} != {:?}",
                String::from_utf8_lossy(v),
                String::from_utf8_lossy(w)
            )),
            _ => {}
        }
    }
    for k in b.keys().filter(|k| !a.contains_key(*k)) {
        d.push(format!("extra {k}"));
    }
    d
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

/// How the fake cpuset hierarchy looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// cgroup v1, files named `cpuset.cpus` (the usual mount).
    V1Prefix,
    /// cgroup v1 mounted with `noprefix` (files named `cpus`), as Android does.
    V1NoPrefix,
    /// cgroup v2 (`cgroup.procs`, `cpuset.cpus.partition`).
    V2,
}

/// A fake task for [`FakeSpec`].
#[derive(Debug, Clone)]
pub struct FakeTask {
    pub tid: u32,
    pub name: String,
    pub kthread: bool,
    /// PF_NO_SETAFFINITY: a per-CPU kernel thread that refuses to move.
    pub pinned: bool,
    pub cpus_allowed: String,
}

impl crate::kernel::Backend for FakeFs {
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
}

/// Open a fake tree built by [`FakeSpec::build`] with the kernel emulation
/// its `/.rtshield-fake.json` describes; a tree without that file (or the
/// host) is opened as plain files.
pub fn kernel(root: Root, dry_run: bool) -> io::Result<crate::Kernel> {
    if root.is_host() {
        return crate::Kernel::open(root, dry_run);
    }
    match FakeFs::load(&root)? {
        Some(f) => Ok(crate::Kernel::with_backend(root, dry_run, Box::new(f))),
        None => crate::Kernel::open(root, dry_run),
    }
}

impl FakeTask {
    pub fn user(tid: u32, name: &str) -> FakeTask {
        FakeTask {
            tid,
            name: name.into(),
            kthread: false,
            pinned: false,
            cpus_allowed: String::new(),
        }
    }
    pub fn kthread(tid: u32, name: &str, pinned: bool) -> FakeTask {
        FakeTask {
            kthread: true,
            pinned,
            ..FakeTask::user(tid, name)
        }
    }
}

/// What to put in a fake tree.
#[derive(Debug, Clone)]
pub struct FakeSpec {
    pub style: Style,
    pub ncpus: u32,
    pub tasks: Vec<FakeTask>,
    /// IRQ number and its `smp_affinity_list` content.
    pub irqs: Vec<(u32, String)>,
    pub workqueues: Vec<String>,
    pub kernel_config: String,
    pub cmdline: String,
    pub config: FakeConfig,
}

impl FakeSpec {
    /// A 4-CPU machine with a few tasks, IRQs and workqueues.
    pub fn standard(style: Style) -> FakeSpec {
        FakeSpec {
            style,
            ncpus: 4,
            tasks: vec![
                FakeTask::user(1, "init"),
                FakeTask::kthread(2, "kthreadd", false),
                FakeTask::kthread(14, "ksoftirqd/0", true),
                FakeTask::kthread(22, "ksoftirqd/3", true),
                FakeTask::kthread(35, "kworker/u8:2", false),
                FakeTask::user(101, "sshd"),
                FakeTask::user(102, "app"),
            ],
            irqs: vec![
                (24, "0-3".into()),
                (30, "0-3".into()),
                (36, "3".into()),
                (41, "0".into()),
            ],
            workqueues: vec!["writeback".into(), "blkcg_punt_bio".into()],
            kernel_config: "CONFIG_CPU_ISOLATION=y\nCONFIG_NO_HZ_FULL=y\nCONFIG_RCU_NOCB_CPU=y\nCONFIG_IRQ_FORCED_THREADING=y\nCONFIG_HZ=250\n".into(),
            cmdline: "console=ttyS0 quiet\n".into(),
            config: FakeConfig {
                refuse_tids: [("14", "EINVAL"), ("22", "EINVAL")]
                    .iter()
                    .map(|(a, b)| (a.to_string(), b.to_string()))
                    .collect(),
                ..Default::default()
            },
        }
    }

    /// The cpuset mount point this style uses.
    pub fn mount(&self) -> &'static str {
        match self.style {
            Style::V1Prefix | Style::V1NoPrefix => "/sys/fs/cgroup/cpuset",
            Style::V2 => "/sys/fs/cgroup",
        }
    }

    /// Write the tree below `base`.
    pub fn build(&self, base: &Path) -> io::Result<()> {
        let w = |p: &str, s: &str| -> io::Result<()> {
            let f = base.join(p.trim_start_matches('/'));
            fs::create_dir_all(f.parent().unwrap())?;
            fs::write(f, s)
        };
        let all = format!("0-{}", self.ncpus - 1);
        let mask = rtshield_sys::CpuSet::range(0, self.ncpus - 1).to_mask(self.ncpus);
        w(MARKER, &serde_json::to_string_pretty(&self.config)?)?;
        w("/sys/devices/system/cpu/online", &format!("{all}\n"))?;
        w("/sys/devices/system/cpu/possible", &format!("{all}\n"))?;
        w("/sys/devices/system/cpu/isolated", "\n")?;
        w("/proc/sys/kernel/osrelease", "6.1.0-fake\n")?;
        w("/boot/config-6.1.0-fake", &self.kernel_config)?;
        w("/proc/cmdline", &self.cmdline)?;
        w("/proc/sys/kernel/timer_migration", "1\n")?;
        w("/proc/sys/vm/stat_interval", "1\n")?;
        w("/proc/sys/kernel/watchdog_cpumask", &format!("{all}\n"))?;
        w("/proc/sys/kernel/sched_rt_runtime_us", "950000\n")?;
        w("/proc/sys/kernel/sched_rt_period_us", "1000000\n")?;
        w("/proc/irq/default_smp_affinity", &format!("{mask}\n"))?;
        for (n, aff) in &self.irqs {
            w(
                &format!("/proc/irq/{n}/smp_affinity_list"),
                &format!("{aff}\n"),
            )?;
            let m = rtshield_sys::CpuSet::parse_list(aff)
                .unwrap_or_default()
                .to_mask(self.ncpus);
            w(&format!("/proc/irq/{n}/smp_affinity"), &format!("{m}\n"))?;
            w(
                &format!("/proc/irq/{n}/effective_affinity_list"),
                &format!("{aff}\n"),
            )?;
        }
        w(
            "/sys/devices/virtual/workqueue/cpumask",
            &format!("{mask}\n"),
        )?;
        for q in &self.workqueues {
            w(
                &format!("/sys/devices/virtual/workqueue/{q}/cpumask"),
                &format!("{mask}\n"),
            )?;
        }
        let mut ids: Vec<u32> = self.tasks.iter().map(|t| t.tid).collect();
        ids.sort_unstable();
        let list: String = ids.iter().map(|i| format!("{i}\n")).collect();
        let mount = self.mount();
        let mi = match self.style {
            Style::V1Prefix => {
                format!("34 31 0:31 / {mount} rw,relatime - cgroup cgroup rw,cpuset\n")
            }
            Style::V1NoPrefix => {
                format!("34 31 0:31 / {mount} rw,relatime - cgroup cgroup rw,cpuset,noprefix\n")
            }
            Style::V2 => format!("30 23 0:27 / {mount} rw,relatime - cgroup2 cgroup2 rw\n"),
        };
        w("/proc/self/mountinfo", &mi)?;
        match self.style {
            Style::V1Prefix | Style::V1NoPrefix => {
                let p = if self.style == Style::V1Prefix {
                    "cpuset."
                } else {
                    ""
                };
                w(&format!("{mount}/{p}cpus"), &format!("{all}\n"))?;
                w(&format!("{mount}/{p}effective_cpus"), &format!("{all}\n"))?;
                w(&format!("{mount}/{p}mems"), "0\n")?;
                w(&format!("{mount}/{p}cpu_exclusive"), "1\n")?;
                w(&format!("{mount}/{p}sched_load_balance"), "1\n")?;
                w(&format!("{mount}/tasks"), &list)?;
                w(&format!("{mount}/cgroup.procs"), "")?;
                w(&format!("{mount}/notify_on_release"), "0\n")?;
            }
            Style::V2 => {
                w(
                    &format!("{mount}/cgroup.controllers"),
                    "cpuset cpu io memory pids\n",
                )?;
                w(&format!("{mount}/cgroup.subtree_control"), "cpu memory\n")?;
                w(
                    &format!("{mount}/cpuset.cpus.effective"),
                    &format!("{all}\n"),
                )?;
                w(&format!("{mount}/cpuset.mems.effective"), "0\n")?;
                w(&format!("{mount}/cgroup.procs"), &list)?;
            }
        }
        for t in &self.tasks {
            let allowed = if t.cpus_allowed.is_empty() {
                all.clone()
            } else {
                t.cpus_allowed.clone()
            };
            w(
                &format!("/proc/{}/status", t.tid),
                &format!(
                    "Name:\t{}\nState:\tS (sleeping)\nPPid:\t{}\nKthread:\t{}\nCpus_allowed_list:\t{allowed}\nvoluntary_ctxt_switches:\t{}\nnonvoluntary_ctxt_switches:\t{}\n",
                    t.name,
                    if t.kthread { 2 } else { 1 },
                    u8::from(t.kthread),
                    t.tid * 10,
                    t.tid
                ),
            )?;
            let mut flags: u64 = 0;
            if t.kthread {
                flags |= 0x0020_0000;
            }
            if t.pinned {
                flags |= 0x0400_0000;
            }
            w(
                &format!("/proc/{}/stat", t.tid),
                &format!("{} ({}) S 1 0 0 0 -1 {flags} 0 0 0 0 0 0\n", t.tid, t.name),
            )?;
        }
        Ok(())
    }
}
