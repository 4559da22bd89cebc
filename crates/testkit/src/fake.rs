//! Fake kernel trees: a builder for a `/proc` + `/sys` tree in a temp dir
//! ([`FakeSpec`]), before/after comparisons of a tree ([`snapshot`],
//! [`diff`]), and, re-exported from `rtshield-fake-kernel`, the emulation
//! of the kernel's cgroup side effects on it ([`kernel`], [`FakeConfig`]).
//! This is the one place besides `rtshield-sys` that names kernel files.

use rtshield_vocab::CpuSet;
use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::Path;

use rtshield_fake_kernel::{FakeConfig, MARKER};

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
    /// Its id (`/proc/TID`).
    pub tid: u32,
    /// Its `comm`.
    pub name: String,
    /// A kernel thread (`Kthread: 1`, PF_KTHREAD).
    pub kthread: bool,
    /// PF_NO_SETAFFINITY: a per-CPU kernel thread that refuses to move.
    pub pinned: bool,
    /// Its `Cpus_allowed_list` (empty: every CPU).
    pub cpus_allowed: String,
    /// Its `stat` has every field up to the scheduling policy (field 41:
    /// last CPU 0, SCHED_OTHER, priority 0), as the kernel's does; off, the
    /// short line that leaves those unknown.
    pub full_stat: bool,
}

impl FakeTask {
    /// A user process.
    pub fn user(tid: u32, name: &str) -> FakeTask {
        FakeTask {
            tid,
            name: name.into(),
            kthread: false,
            pinned: false,
            cpus_allowed: String::new(),
            full_stat: false,
        }
    }
    /// A kernel thread, `pinned` to its CPU or not.
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
    /// The cpuset hierarchy's layout.
    pub style: Style,
    /// CPUs 0 to `ncpus - 1`, all online.
    pub ncpus: u32,
    /// Every task (all in the hierarchy's root cgroup).
    pub tasks: Vec<FakeTask>,
    /// IRQ number and its `smp_affinity_list` content.
    pub irqs: Vec<(u32, String)>,
    /// Unbound workqueues exported to sysfs.
    pub workqueues: Vec<String>,
    /// `/boot/config-6.1.0-fake`.
    pub kernel_config: String,
    /// `/proc/cmdline`.
    pub cmdline: String,
    /// The emulation's settings (written to [`MARKER`]).
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
        w(MARKER, &serde_json::to_string_pretty(&self.config)?)?;
        self.build_knobs(&w)?;
        self.build_cgroups(&w)?;
        self.build_tasks(&w)
    }

    /// Every CPU, as a list (`0-3`).
    fn all(&self) -> String {
        format!("0-{}", self.ncpus - 1)
    }

    /// The CPUs, the kernel's identity and command line, the sysctls, IRQs
    /// and workqueues `partition` reads and writes.
    fn build_knobs(&self, w: &dyn Fn(&str, &str) -> io::Result<()>) -> io::Result<()> {
        let all = self.all();
        let mask = CpuSet::range(0, self.ncpus - 1).to_mask(self.ncpus);
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
            let m = CpuSet::parse_list(aff)
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
        Ok(())
    }

    /// The cpuset hierarchy of [`FakeSpec::style`], holding every task.
    fn build_cgroups(&self, w: &dyn Fn(&str, &str) -> io::Result<()>) -> io::Result<()> {
        let all = self.all();
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
        Ok(())
    }

    /// Each task's `/proc/TID/status` and `stat`.
    fn build_tasks(&self, w: &dyn Fn(&str, &str) -> io::Result<()>) -> io::Result<()> {
        let all = self.all();
        for t in &self.tasks {
            let allowed = if t.cpus_allowed.is_empty() {
                all.clone()
            } else {
                t.cpus_allowed.clone()
            };
            w(
                &format!("/proc/{}/status", t.tid),
                &format!(
                    "Name:\t{}\nState:\tS (sleeping)\nPPid:\t{}\nKthread:\t{}\nCpus_allowed:\t{}\nCpus_allowed_list:\t{allowed}\nvoluntary_ctxt_switches:\t{}\nnonvoluntary_ctxt_switches:\t{}\n",
                    t.name,
                    if t.kthread { 2 } else { 1 },
                    u8::from(t.kthread),
                    CpuSet::parse_list(&allowed)
                        .unwrap_or_default()
                        .to_mask(self.ncpus),
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
            // Fields 16-41 (priority ... policy) when asked: processor
            // (39) 0, rt_priority (40) 0, policy (41) SCHED_OTHER.
            let tail = if t.full_stat {
                " 0".repeat(41 - 15)
            } else {
                String::new()
            };
            w(
                &format!("/proc/{}/stat", t.tid),
                &format!(
                    "{} ({}) S 1 0 0 0 -1 {flags} 0 0 0 0 0 0{tail}\n",
                    t.tid, t.name
                ),
            )?;
        }
        Ok(())
    }
}
