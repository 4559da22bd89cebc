//! `rtshield sysinfo`: what the results depend on. Embedded in every result
//! file so a number is never orphaned from the system that produced it.

use crate::Root;
use rtshield_vocab::CpuSet;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Read;

/// Kernel build configuration (`/proc/config.gz` or `/boot/config-RELEASE`).
#[derive(Debug, Clone, Default)]
pub struct KernelConfig {
    /// Where it was read from (`/proc/config.gz`, `/boot/config-RELEASE`); `None`
    /// when neither could be read.
    pub source: Option<String>,
    /// `CONFIG_*` name to value, quotes removed (`y`, `m`, `1000`).
    pub values: BTreeMap<String, String>,
}

impl KernelConfig {
    /// The running kernel's configuration (release `release`); empty (unknown) when
    /// neither file is readable.
    pub fn read(root: &Root, release: &str) -> KernelConfig {
        if let Ok(f) = root.open("/proc/config.gz") {
            let mut s = String::new();
            if flate2::read::GzDecoder::new(f)
                .read_to_string(&mut s)
                .is_ok()
            {
                return Self::parse(&s, "/proc/config.gz");
            }
        }
        let boot = format!("/boot/config-{release}");
        match root.read(&boot) {
            Ok(s) => Self::parse(&s, &boot),
            Err(_) => KernelConfig::default(),
        }
    }

    /// The `CONFIG_X=value` lines of a kernel config; `source` says where the text came from.
    pub fn parse(text: &str, source: &str) -> KernelConfig {
        let mut values = BTreeMap::new();
        for line in text.lines() {
            if let Some((k, v)) = line.split_once('=') {
                if k.starts_with("CONFIG_") {
                    values.insert(k.to_string(), v.trim_matches('"').to_string());
                }
            }
        }
        KernelConfig {
            source: Some(source.to_string()),
            values,
        }
    }

    /// Whether a configuration was read at all (so an absent key means "not set", not "unknown").
    pub fn known(&self) -> bool {
        self.source.is_some()
    }

    /// `Some(true)` for `=y`/`=m`, `Some(false)` when absent from a known
    /// config, `None` when no config could be read.
    pub fn enabled(&self, key: &str) -> Option<bool> {
        self.known()
            .then(|| matches!(self.values.get(key).map(String::as_str), Some("y" | "m")))
    }

    /// The raw value of `key` (`CONFIG_HZ`), when set.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.values.get(key).map(String::as_str)
    }
}

/// The system description embedded in every result file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SysInfo {
    /// The host name (`uname -n`).
    pub hostname: Option<String>,
    /// `/etc/machine-id`: tells boards apart when their host names are
    /// the same (or change). Empty when absent or not a machine id.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub machine_id: String,
    /// `uname -r` (`6.8.0-rt8`).
    pub kernel_release: Option<String>,
    /// `uname -v` (build number and date, `PREEMPT_RT` on RT kernels).
    pub kernel_version: Option<String>,
    /// `uname -m` (`x86_64`, `aarch64`).
    pub arch: String,
    /// `PREEMPT_RT`, `PREEMPT`, `PREEMPT_LAZY`, `VOLUNTARY`, `NONE` (build model).
    pub preempt_model: Option<String>,
    /// Whether the preemption model can be chosen at boot (`preempt=`).
    pub preempt_dynamic: bool,
    /// The dynamic mode in force, when readable (debugfs or `preempt=`).
    pub preempt_mode: Option<String>,
    /// The tick rate, Hz (`CONFIG_HZ`), when the kernel config is readable.
    pub hz: Option<u32>,
    /// High-resolution timers active (`/proc/timer_list`, else
    /// `CONFIG_HIGH_RES_TIMERS`): without them, sleeps end on ticks.
    pub high_res_timers: Option<bool>,
    /// The current clocksource (`tsc`, `hpet`, `arch_sys_counter`).
    pub clocksource: Option<String>,
    /// `/proc/cmdline` as booted.
    pub cmdline: Option<String>,
    /// Isolation-related boot parameters found on the command line.
    pub isolation_params: BTreeMap<String, String>,
    /// Online CPUs (list syntax).
    pub cpus_online: Option<String>,
    /// CPUs isolated at boot (`isolcpus=`, list syntax).
    pub cpus_isolated: Option<String>,
    /// CPUs without the tick (`nohz_full=`, list syntax).
    pub cpus_nohz_full: Option<String>,
    /// The CPU model of `/proc/cpuinfo` (`model name`, or `Hardware`/`Model` on
    /// ARM boards).
    pub cpu_model: Option<String>,
    /// How many CPUs are online.
    pub cpu_count: usize,
    /// `v1`, `v2` or `hybrid` (v1 controllers plus a v2 mount).
    pub cgroup_version: Option<String>,
    /// Where the cpuset controller is mounted.
    pub cpuset_mount: Option<String>,
    /// RT throttling budget, µs per period (-1: off).
    pub sched_rt_runtime_us: Option<i64>,
    /// RT throttling period, µs.
    pub sched_rt_period_us: Option<i64>,
    /// `CONFIG_RT_GROUP_SCHED`: RT threads also need a cgroup budget.
    pub rt_group_sched: Option<bool>,
    /// The caller's cpu cgroup `cpu.rt_runtime_us` (RT group scheduling).
    pub caller_rt_runtime_us: Option<i64>,
    /// Whether this process could take SCHED_FIFO (probed on a scratch thread);
    /// `None` when not probed.
    pub fifo_permitted: Option<bool>,
    /// Why SCHED_FIFO was refused, in words, when it was.
    pub fifo_refusal: Option<String>,
    /// Where the kernel config was read from, when it was.
    pub kernel_config_source: Option<String>,
    /// Frequency scaling per CPU, where cpufreq exists.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpufreq: Vec<crate::power::CpuFreq>,
    /// The cpuidle driver (`intel_idle`, `haltpoll`…), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpuidle_driver: Option<String>,
    /// Idle states per CPU, where cpuidle exists.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpuidle: Vec<crate::power::CpuIdle>,
    /// Thermal zone temperatures when collected (the start of a run).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thermal: Vec<crate::power::ThermalZone>,
    /// Thermal zone temperatures at the end of a run (result files only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thermal_end: Vec<crate::power::ThermalZone>,
}

/// Command-line parameters that matter for isolation and latency.
pub(crate) const ISOLATION_PARAMS: &[&str] = &[
    "isolcpus",
    "nohz_full",
    "nohz",
    "rcu_nocbs",
    "rcu_nocb_poll",
    "irqaffinity",
    "kthread_cpus",
    "kthread_default_cpumask",
    "threadirqs",
    "preempt",
    "skew_tick",
    "nosoftlockup",
    "nowatchdog",
    "idle",
    "intel_idle.max_cstate",
    "processor.max_cstate",
    "intel_pstate",
    "tsc",
    "clocksource",
    "housekeeping",
    "isolcpus_managed_irq",
];

/// The machine id (systemd's `/etc/machine-id`: 32 lowercase hex
/// digits); empty when the file is absent, empty or anything else
/// (`uninitialized` on a first boot).
pub(crate) fn machine_id(root: &Root) -> String {
    match root.read_opt("/etc/machine-id") {
        Some(id)
            if id.len() == 32
                && id
                    .bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) =>
        {
            id
        }
        _ => String::new(),
    }
}

impl SysInfo {
    /// Collect from `root`. Never fails: what cannot be read stays `None`.
    /// `probe_fifo` tries SCHED_FIFO on a scratch thread (only meaningful
    /// on the host).
    pub fn collect(root: &Root, probe_fifo: bool) -> SysInfo {
        let mut si = SysInfo {
            arch: std::env::consts::ARCH.to_string(),
            ..Default::default()
        };
        si.hostname = root.read_opt("/proc/sys/kernel/hostname");
        si.machine_id = machine_id(root);
        si.kernel_release = root.read_opt("/proc/sys/kernel/osrelease");
        si.kernel_version = root.read_opt("/proc/sys/kernel/version");
        let cfg = KernelConfig::read(root, si.kernel_release.as_deref().unwrap_or(""));
        si.kernel_config_source = cfg.source.clone();
        let version = si.kernel_version.clone().unwrap_or_default();
        si.preempt_model = preempt_model(&cfg, &version);
        si.preempt_dynamic = cfg.enabled("CONFIG_PREEMPT_DYNAMIC") == Some(true)
            || version.contains("PREEMPT_DYNAMIC");
        si.hz = cfg.get("CONFIG_HZ").and_then(|v| v.parse().ok());
        si.high_res_timers = root
            .read_opt("/proc/timer_list")
            .and_then(|t| {
                t.lines()
                    .find(|l| l.trim_start().starts_with(".hres_active"))
                    .map(|l| l.trim_end().ends_with('1'))
            })
            .or(cfg.enabled("CONFIG_HIGH_RES_TIMERS"));
        si.clocksource =
            root.read_opt("/sys/devices/system/clocksource/clocksource0/current_clocksource");
        si.cmdline = root.read_opt("/proc/cmdline");
        if let Some(cl) = &si.cmdline {
            si.isolation_params = isolation_params(cl);
        }
        si.preempt_mode = root
            .read_opt("/sys/kernel/debug/sched/preempt")
            .and_then(|s| {
                s.split_whitespace()
                    .find(|w| w.starts_with('('))
                    .map(|w| w.trim_matches(|c| c == '(' || c == ')').to_string())
            })
            .or_else(|| si.isolation_params.get("preempt").cloned())
            .or_else(|| {
                // Without debugfs or preempt=, a dynamic kernel runs its
                // build default, which is the build model.
                si.preempt_dynamic
                    .then(|| si.preempt_model.as_ref().map(|m| m.to_lowercase()))
                    .flatten()
            });
        si.cpus_online = root.read_opt("/sys/devices/system/cpu/online");
        si.cpus_isolated = root.read_opt("/sys/devices/system/cpu/isolated");
        si.cpus_nohz_full = root.read_opt("/sys/devices/system/cpu/nohz_full");
        si.cpu_count = si
            .cpus_online
            .as_deref()
            .and_then(|s| CpuSet::parse_list(s).ok())
            .map_or(0, |c| c.len());
        si.cpu_model = root.read_opt("/proc/cpuinfo").and_then(|s| cpu_model(&s));
        let (ver, cpuset) = cgroup_layout(root);
        si.cgroup_version = ver;
        si.cpuset_mount = cpuset;
        si.sched_rt_runtime_us = root
            .read_opt("/proc/sys/kernel/sched_rt_runtime_us")
            .and_then(|s| s.parse().ok());
        si.sched_rt_period_us = root
            .read_opt("/proc/sys/kernel/sched_rt_period_us")
            .and_then(|s| s.parse().ok());
        si.rt_group_sched = cfg.enabled("CONFIG_RT_GROUP_SCHED");
        si.caller_rt_runtime_us = caller_rt_runtime_us(root);
        si.cpufreq = crate::power::cpufreq(root);
        si.cpuidle_driver = crate::power::cpuidle_driver(root);
        si.cpuidle = crate::power::cpuidle(root);
        si.thermal = crate::power::thermal(root);
        if probe_fifo {
            match crate::sched::fifo_permitted() {
                Ok(()) => si.fifo_permitted = Some(true),
                Err(e) => {
                    si.fifo_permitted = Some(false);
                    si.fifo_refusal = Some(fifo_refusal_reason(&e, si.caller_rt_runtime_us));
                }
            }
        }
        si
    }

    /// Human-readable block, `key: value` per line.
    pub fn render_text(&self) -> String {
        let opt = |v: &Option<String>| v.clone().unwrap_or_else(|| "unknown".into());
        let mut out = String::new();
        let mut line = |k: &str, v: String| out.push_str(&format!("{k:<20} {v}\n"));
        line("hostname", opt(&self.hostname));
        line(
            "kernel",
            format!(
                "{} {}",
                opt(&self.kernel_release),
                self.kernel_version.clone().unwrap_or_default()
            ),
        );
        line("arch", self.arch.clone());
        line(
            "preemption",
            format!(
                "{}{}{}",
                opt(&self.preempt_model),
                if self.preempt_dynamic {
                    " (PREEMPT_DYNAMIC)"
                } else {
                    ""
                },
                self.preempt_mode
                    .as_ref()
                    .map(|m| format!(", mode {m}"))
                    .unwrap_or_default()
            ),
        );
        line("HZ", self.hz.map_or("unknown".into(), |h| h.to_string()));
        line(
            "high-res timers",
            self.high_res_timers.map_or("unknown".into(), |b| {
                if b {
                    "active".into()
                } else {
                    "inactive".into()
                }
            }),
        );
        line("clocksource", opt(&self.clocksource));
        line("cpu model", opt(&self.cpu_model));
        line(
            "cpus online",
            format!("{} ({})", opt(&self.cpus_online), self.cpu_count),
        );
        line(
            "cpus isolated",
            self.cpus_isolated
                .clone()
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| "none".into()),
        );
        line(
            "cpus nohz_full",
            self.cpus_nohz_full
                .clone()
                .filter(|s| !s.is_empty() && s != "(null)")
                .unwrap_or_else(|| "none".into()),
        );
        let params = if self.isolation_params.is_empty() {
            "none".to_string()
        } else {
            self.isolation_params
                .iter()
                .map(|(k, v)| {
                    if v.is_empty() {
                        k.clone()
                    } else {
                        format!("{k}={v}")
                    }
                })
                .collect::<Vec<_>>()
                .join(" ")
        };
        line("isolation params", params);
        line(
            "cgroup",
            format!(
                "{} (cpuset at {})",
                opt(&self.cgroup_version),
                opt(&self.cpuset_mount)
            ),
        );
        line(
            "rt throttling",
            match (self.sched_rt_runtime_us, self.sched_rt_period_us) {
                (Some(-1), _) => "off (sched_rt_runtime_us=-1)".into(),
                (Some(r), Some(p)) => format!("{r} us every {p} us"),
                _ => "unknown".into(),
            },
        );
        line(
            "rt group sched",
            match (self.rt_group_sched, self.caller_rt_runtime_us) {
                (Some(true), Some(r)) => format!("yes, caller's cgroup cpu.rt_runtime_us={r}"),
                (Some(true), None) => "yes".into(),
                (Some(false), _) => "no".into(),
                (None, _) => "unknown".into(),
            },
        );
        line(
            "SCHED_FIFO",
            match (self.fifo_permitted, &self.fifo_refusal) {
                (Some(true), _) => "permitted".into(),
                (Some(false), Some(r)) => format!("refused: {r}"),
                (Some(false), None) => "refused".into(),
                (None, _) => "not probed".into(),
            },
        );
        for l in self.power_lines() {
            out.push_str(&l);
            out.push('\n');
        }
        out
    }

    /// Frequency, idle states and temperatures, `key  value` lines (CPUs
    /// with the same settings are grouped).
    pub fn power_lines(&self) -> Vec<String> {
        let mut lines = Vec::new();
        let mut line = |k: &str, v: String| lines.push(format!("{k:<20} {v}"));
        if self.cpufreq.is_empty() {
            line("cpufreq", "none (no frequency scaling exposed)".into());
        }
        for f in &self.cpufreq {
            let mhz = |k: Option<u64>| k.map_or("?".into(), |k| format!("{}", k / 1000));
            line(
                &format!("cpufreq cpu{}", f.cpu),
                format!(
                    "{} ({}), {} of {} MHz",
                    f.governor.as_deref().unwrap_or("?"),
                    f.driver.as_deref().unwrap_or("?"),
                    mhz(f.cur_khz),
                    mhz(f.max_khz)
                ),
            );
        }
        // Idle states: one line per distinct set (usually all CPUs alike).
        let mut groups: Vec<(Vec<u32>, String)> = Vec::new();
        for c in &self.cpuidle {
            let text = c
                .states
                .iter()
                .map(|s| {
                    format!(
                        "{} {}us{}",
                        s.name,
                        s.latency_us,
                        if s.disabled { " (disabled)" } else { "" }
                    )
                })
                .collect::<Vec<_>>()
                .join(", ");
            match groups.iter_mut().find(|g| g.1 == text) {
                Some(g) => g.0.push(c.cpu),
                None => groups.push((vec![c.cpu], text)),
            }
        }
        if groups.is_empty() {
            line("cpuidle", "none".into());
        }
        for (cpus, text) in groups {
            let set: rtshield_vocab::CpuSet = cpus.into_iter().collect();
            line(
                &format!("cpuidle cpu{}", set.to_list()),
                format!(
                    "{}{text}",
                    self.cpuidle_driver
                        .as_ref()
                        .map_or(String::new(), |d| format!("[{d}] "))
                ),
            );
        }
        let temps = |z: &[crate::power::ThermalZone]| {
            z.iter()
                .map(|z| format!("{} {:.1}°C", z.kind, z.temp_c))
                .collect::<Vec<_>>()
                .join(", ")
        };
        line(
            "thermal",
            if self.thermal.is_empty() {
                "no thermal zone".into()
            } else {
                temps(&self.thermal)
            },
        );
        if !self.thermal_end.is_empty() {
            line("thermal at end", temps(&self.thermal_end));
        }
        lines
    }
}

fn preempt_model(cfg: &KernelConfig, version: &str) -> Option<String> {
    let on = |k: &str| cfg.enabled(k) == Some(true);
    if cfg.known() {
        let m = if on("CONFIG_PREEMPT_RT") {
            "PREEMPT_RT"
        } else if on("CONFIG_PREEMPT_LAZY") {
            "PREEMPT_LAZY"
        } else if on("CONFIG_PREEMPT") {
            "PREEMPT"
        } else if on("CONFIG_PREEMPT_VOLUNTARY") {
            "VOLUNTARY"
        } else {
            "NONE"
        };
        return Some(m.to_string());
    }
    // `uname -v` carries a hint when no config is readable.
    for m in ["PREEMPT_RT", "PREEMPT_LAZY", "PREEMPT "] {
        if version.contains(m) {
            return Some(m.trim().to_string());
        }
    }
    None
}

/// `isolcpus=1-3 nohz_full=1-3 threadirqs` → map; flags map to "".
pub fn isolation_params(cmdline: &str) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    for w in cmdline.split_whitespace() {
        if w == "--" {
            break; // what follows goes to init
        }
        let (k, v) = w.split_once('=').unwrap_or((w, ""));
        if ISOLATION_PARAMS.contains(&k) {
            m.insert(k.to_string(), v.to_string());
        }
    }
    m
}

/// The CPUs of a kernel command-line value: `isolcpus=nohz,domain,2-3`
/// lists flags before the CPU list, which is what is returned.
pub fn cmd_cpus(v: &str) -> Option<CpuSet> {
    let list: Vec<&str> = v
        .split(',')
        .filter(|p| p.starts_with(|c: char| c.is_ascii_digit()))
        .collect();
    CpuSet::parse_list(&list.join(",")).ok()
}

fn cpu_model(cpuinfo: &str) -> Option<String> {
    for key in ["model name", "Hardware", "Model", "cpu model", "uarch"] {
        if let Some(l) = cpuinfo
            .lines()
            .find(|l| l.split(':').next().map(str::trim) == Some(key))
        {
            return l.split_once(':').map(|(_, v)| v.trim().to_string());
        }
    }
    None
}

use crate::cgroup::{mounts, Mount};

/// (version, where the cpuset controller lives).
fn cgroup_layout(root: &Root) -> (Option<String>, Option<String>) {
    let ms = mounts(root);
    let v1: Vec<&Mount> = ms.iter().filter(|m| m.fs_type == "cgroup").collect();
    let v2: Vec<&Mount> = ms.iter().filter(|m| m.fs_type == "cgroup2").collect();
    let cpuset_v1 = v1
        .iter()
        .find(|m| m.super_options.iter().any(|o| o == "cpuset"))
        .map(|m| m.mount_point.clone());
    let cpuset_v2 = v2
        .iter()
        .find(|m| {
            root.read_opt(format!("{}/cgroup.controllers", m.mount_point))
                .is_some_and(|c| c.split_whitespace().any(|x| x == "cpuset"))
        })
        .map(|m| m.mount_point.clone());
    let version = match (v1.is_empty(), v2.is_empty()) {
        (false, false) => Some("hybrid"),
        (false, true) => Some("v1"),
        (true, false) => Some("v2"),
        (true, true) => None,
    };
    (version.map(str::to_string), cpuset_v1.or(cpuset_v2))
}

/// `cpu.rt_runtime_us` of the caller's cpu cgroup (v1 with RT group sched):
/// 0 there is why SCHED_FIFO is refused even to root. Cheap (no
/// /proc/config.gz): what `measure` reads instead of a whole [`SysInfo`].
pub fn caller_rt_runtime_us(root: &Root) -> Option<i64> {
    let cg = root.read_opt(crate::kpath::SELF_CGROUP)?;
    let ms = mounts(root);
    for line in cg.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, ctrls, path) = (parts.next()?, parts.next()?, parts.next()?);
        if ctrls.split(',').any(|c| c == "cpu") {
            let m = ms
                .iter()
                .find(|m| m.fs_type == "cgroup" && m.super_options.iter().any(|o| o == "cpu"))?;
            let p = format!(
                "{}{}/cpu.rt_runtime_us",
                m.mount_point,
                path.trim_end_matches('/')
            );
            return root.read_opt(p).and_then(|v| v.parse().ok());
        }
    }
    None
}

/// `MemTotal` of `/proc/meminfo`, KiB; None when unreadable (what bounds
/// the trace buffer rtshield sizes itself: docs/trace.md).
pub fn mem_total_kb(root: &Root) -> Option<u64> {
    let text = root.read_opt(crate::kpath::MEMINFO)?;
    text.lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().strip_suffix("kB"))
        .and_then(|v| v.trim().parse().ok())
}

/// Explain a SCHED_FIFO refusal in terms the user can act on.
pub fn fifo_refusal_reason(e: &std::io::Error, caller_rt_runtime_us: Option<i64>) -> String {
    if caller_rt_runtime_us == Some(0) {
        return format!(
            "{e}: RT group scheduling gives this process's cpu cgroup no RT time \
             (cpu.rt_runtime_us = 0); give it some, e.g. \
             `echo 950000 > /sys/fs/cgroup/cpu/<group>/cpu.rt_runtime_us`, or run from the root cpu cgroup"
        );
    }
    if e.raw_os_error() == Some(libc::EPERM) {
        return format!(
            "{e}: needs root, CAP_SYS_NICE or an RLIMIT_RTPRIO (ulimit -r) of at least the priority asked"
        );
    }
    e.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn isolcpus_flags_are_skipped() {
        assert_eq!(
            cmd_cpus("nohz,domain,2-3"),
            Some(CpuSet::parse_list("2-3").unwrap())
        );
        assert_eq!(cmd_cpus("1,3"), Some(CpuSet::parse_list("1,3").unwrap()));
    }
    use std::fs;

    fn fake() -> (tempfile::TempDir, Root) {
        let d = tempfile::tempdir().unwrap();
        let w = |p: &str, s: &str| {
            let f = d.path().join(p.trim_start_matches('/'));
            fs::create_dir_all(f.parent().unwrap()).unwrap();
            fs::write(f, s).unwrap();
        };
        w("/proc/sys/kernel/osrelease", "6.18.0-rt\n");
        w("/proc/sys/kernel/version", "#1 SMP PREEMPT_RT\n");
        w(
            "/boot/config-6.18.0-rt",
            "CONFIG_PREEMPT_RT=y\nCONFIG_HZ=1000\nCONFIG_RT_GROUP_SCHED=y\n# CONFIG_X is not set\n",
        );
        w(
            "/proc/cmdline",
            "quiet isolcpus=nohz,domain,2-3 nohz_full=2-3 threadirqs -- isolcpus=9\n",
        );
        w("/sys/devices/system/cpu/online", "0-3\n");
        w("/sys/devices/system/cpu/isolated", "2-3\n");
        w("/proc/cpuinfo", "processor\t: 0\nHardware\t: BCM2835\n");
        w("/proc/self/mountinfo", "34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset\n32 31 0:29 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n");
        w("/proc/self/cgroup", "3:cpuset:/\n1:cpu:/app\n");
        w("/sys/fs/cgroup/cpu/app/cpu.rt_runtime_us", "0\n");
        w("/proc/sys/kernel/sched_rt_runtime_us", "950000\n");
        w("/proc/sys/kernel/sched_rt_period_us", "1000000\n");
        let r = Root::new(d.path());
        (d, r)
    }

    #[test]
    fn machine_id_is_read_under_the_root_and_checked() {
        let (d, r) = fake();
        assert_eq!(SysInfo::collect(&r, false).machine_id, "", "absent");
        fs::create_dir_all(d.path().join("etc")).unwrap();
        let id = "0123456789abcdef0123456789abcdef";
        fs::write(d.path().join("etc/machine-id"), format!("{id}\n")).unwrap();
        assert_eq!(SysInfo::collect(&r, false).machine_id, id);
        fs::write(d.path().join("etc/machine-id"), "uninitialized\n").unwrap();
        assert_eq!(machine_id(&r), "");
    }

    #[test]
    fn reads_a_fake_rt_system() {
        let (_d, r) = fake();
        let si = SysInfo::collect(&r, false);
        assert_eq!(si.kernel_release.as_deref(), Some("6.18.0-rt"));
        assert_eq!(si.preempt_model.as_deref(), Some("PREEMPT_RT"));
        assert_eq!(si.hz, Some(1000));
        assert_eq!(
            si.isolation_params.get("isolcpus").map(String::as_str),
            Some("nohz,domain,2-3")
        );
        assert_eq!(
            si.isolation_params.get("threadirqs").map(String::as_str),
            Some("")
        );
        assert_eq!(si.cpu_count, 4);
        assert_eq!(si.cpus_isolated.as_deref(), Some("2-3"));
        assert_eq!(si.cpu_model.as_deref(), Some("BCM2835"));
        assert_eq!(si.cgroup_version.as_deref(), Some("v1"));
        assert_eq!(si.cpuset_mount.as_deref(), Some("/sys/fs/cgroup/cpuset"));
        assert_eq!(si.caller_rt_runtime_us, Some(0));
        assert_eq!(si.rt_group_sched, Some(true));
        assert_eq!(si.sched_rt_runtime_us, Some(950000));
        assert!(si.render_text().contains("PREEMPT_RT"));
    }

    #[test]
    fn rt_group_refusal_is_explained() {
        let e = std::io::Error::from_raw_os_error(libc::EPERM);
        let m = fifo_refusal_reason(&e, Some(0));
        assert!(m.contains("cpu.rt_runtime_us = 0"), "{m}");
        let m = fifo_refusal_reason(&e, Some(950000));
        assert!(m.contains("CAP_SYS_NICE"), "{m}");
    }
}
