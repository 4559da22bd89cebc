//! Advice shared by `partition` and `audit`: what cannot be done at run time (boot parameters, given this kernel's
//! config) and who else might be managing the same cpusets and IRQs.

use rtshield_sys::kpath;
use rtshield_sys::Hierarchy;
use rtshield_sys::Root;
use rtshield_sys::{cmd_cpus, isolation_params, KernelConfig};
use rtshield_vocab::CpuSet;
use serde::Serialize;

/// A boot parameter that would finish an isolation.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct BootParam {
    /// `nohz_full=1`.
    pub param: String,
    /// What it does, or why this kernel cannot have it.
    pub why: String,
    /// Already on the kernel command line (with these CPUs).
    pub present: bool,
    /// `false` when this kernel was built without what the parameter needs.
    pub available: bool,
}

/// Boot parameters that would finish the isolation of `rt` (with `nrt`
/// for housekeeping), and a note when the kernel config is unreadable.
pub fn boot_advice(root: &Root, rt: &CpuSet, nrt: &CpuSet) -> (Vec<BootParam>, Option<String>) {
    let release = root.read_opt(kpath::OSRELEASE).unwrap_or_default();
    let cfg = KernelConfig::read(root, &release);
    let cmdline = root.read_opt(kpath::CMDLINE).unwrap_or_default();
    let params = isolation_params(&cmdline);
    let has = |key: &str, want: &CpuSet| {
        params
            .get(key)
            .and_then(|v| cmd_cpus(v))
            .is_some_and(|c| want.is_subset(&c))
    };
    let has_exact = |key: &str, want: &CpuSet| {
        params
            .get(key)
            .and_then(|v| cmd_cpus(v))
            .is_some_and(|c| &c == want)
    };
    // Unknown config: offer everything, say we could not check.
    let on = |k: &str| cfg.enabled(k).unwrap_or(true);
    let (r, n) = (rt.to_list(), nrt.to_list());
    let mut out = vec![];
    // isolcpus= and nohz_full= are parsed only when the kernel has
    // CONFIG_CPU_ISOLATION (without it the kernel ignores them silently).
    let iso = on("CONFIG_CPU_ISOLATION");
    let nohz = iso && on("CONFIG_NO_HZ_FULL");
    out.push(BootParam {
        param: if nohz {
            format!("isolcpus=nohz,domain,managed_irq,{r}")
        } else {
            format!("isolcpus=domain,managed_irq,{r}")
        },
        why: if iso {
            "removes the CPUs from scheduler domains at boot and keeps managed device IRQs off them"
                .into()
        } else {
            "not possible: this kernel is built without CONFIG_CPU_ISOLATION (isolcpus= is ignored)"
                .into()
        },
        present: has("isolcpus", rt),
        available: iso,
    });
    out.push(BootParam {
        param: format!("nohz_full={r}"),
        why: if nohz {
            "stops the scheduler tick on a CPU running a single task; new unbound kernel \
             threads also start on the other CPUs"
                .into()
        } else if !iso {
            "not possible: this kernel is built without CONFIG_CPU_ISOLATION".into()
        } else {
            "not possible: this kernel is built without CONFIG_NO_HZ_FULL (the tick keeps firing on rt CPUs)".into()
        },
        present: has("nohz_full", rt),
        available: nohz,
    });
    let nocb = on("CONFIG_RCU_NOCB_CPU");
    out.push(BootParam {
        param: format!("rcu_nocbs={r}"),
        why: if nocb {
            "moves RCU callbacks to kthreads on housekeeping CPUs".into()
        } else {
            "not possible: this kernel is built without CONFIG_RCU_NOCB_CPU".into()
        },
        present: has("rcu_nocbs", rt),
        available: nocb,
    });
    out.push(BootParam {
        param: format!("irqaffinity={n}"),
        why: "IRQs start on housekeeping CPUs, including those registered after create".into(),
        present: has_exact("irqaffinity", nrt),
        available: true,
    });
    // The partitioning article boots with `kthread_default_cpumask=`, which
    // comes from an out-of-tree patch; no mainline kernel parses it (nor
    // `kthread_cpus=`). Mentioned as a patch, never offered as a parameter.
    out.push(BootParam {
        param: format!("kthread_default_cpumask={}", nrt.to_hex()),
        why: "not in mainline kernels: the partitioning article's patch (kernel threads \
              created later start on these CPUs); on mainline, nohz_full= does this"
            .into(),
        present: params.contains_key("kthread_default_cpumask"),
        available: false,
    });
    let rt_kernel = cfg.enabled("CONFIG_PREEMPT_RT") == Some(true);
    if !rt_kernel {
        let forced = on("CONFIG_IRQ_FORCED_THREADING");
        out.push(BootParam {
            param: "threadirqs".into(),
            why: if forced {
                "runs IRQ handlers in threads whose affinity and priority can be set".into()
            } else {
                "not possible: this kernel is built without CONFIG_IRQ_FORCED_THREADING".into()
            },
            present: params.contains_key("threadirqs"),
            available: forced,
        });
    }
    let note = (!cfg.known()).then(|| {
        "kernel config unreadable (/proc/config.gz, /boot/config-*): could not check which parameters this kernel supports".to_string()
    });
    (out, note)
}

/// Other managers of the same cpusets or IRQs (irqbalance, systemd):
/// one warning each that is running. `irq_knob`: IRQs were moved.
pub fn manager_warnings(root: &Root, h: &Hierarchy, irq_knob: bool) -> Vec<String> {
    let mut w = vec![];
    let comms: Vec<(String, String)> = rtshield_sys::pids(root)
        .into_iter()
        .filter_map(|pid| Some((pid.to_string(), rtshield_sys::task_comm(root, pid)?)))
        .collect();
    if let Some((pid, _)) = comms.iter().find(|(_, c)| c == "irqbalance") {
        w.push(format!(
            "irqbalance is running (pid {pid}){}: it moves IRQs back onto the rt CPUs. Stop it \
             (`systemctl stop irqbalance`) or ban the rt CPUs (IRQBALANCE_BANNED_CPULIST).",
            if irq_knob {
                ""
            } else {
                " and IRQs were not moved (--skip irq)"
            }
        ));
    }
    let systemd = comms.iter().any(|(p, c)| p == "1" && c == "systemd");
    if systemd {
        let msg = if h.is_v2() {
            "systemd manages the cgroup v2 tree: a unit with AllowedCPUs= or a daemon-reload can \
             rewrite cpusets or move tasks; pin its own slices with \
             `systemctl set-property --runtime init.scope system.slice user.slice AllowedCPUs=<nrt>`"
        } else {
            "systemd runs here: with cpuset delegation (Delegate=yes / AllowedCPUs=) it can move \
             tasks or rewrite cpusets behind rtshield's back"
        };
        w.push(msg.into());
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warns_about_irqbalance_and_systemd() {
        let d = tempfile::tempdir().unwrap();
        let w = |p: &str, s: &str| {
            let f = d.path().join(p);
            std::fs::create_dir_all(f.parent().unwrap()).unwrap();
            std::fs::write(f, s).unwrap();
        };
        w("proc/1/comm", "systemd\n");
        w("proc/812/comm", "irqbalance\n");
        w("proc/900/comm", "sshd\n");
        let root = Root::new(d.path());
        let v1 = Hierarchy {
            kind: rtshield_sys::CgroupKind::V1 { prefix: true },
            mount: "/sys/fs/cgroup/cpuset".into(),
        };
        let ws = manager_warnings(&root, &v1, true);
        assert_eq!(ws.len(), 2, "{ws:?}");
        assert!(
            ws[0].starts_with("irqbalance is running (pid 812):"),
            "{ws:?}"
        );
        assert!(ws[0].contains("systemctl stop irqbalance"), "{ws:?}");
        assert!(ws[1].contains("cpuset delegation"), "{ws:?}");
        let ws = manager_warnings(&root, &v1, false);
        assert!(ws[0].contains("IRQs were not moved (--skip irq)"), "{ws:?}");
        let v2 = Hierarchy {
            kind: rtshield_sys::CgroupKind::V2,
            mount: "/sys/fs/cgroup".into(),
        };
        assert!(manager_warnings(&root, &v2, true)[1].contains("AllowedCPUs="));
        // Neither running: no warning.
        std::fs::write(d.path().join("proc/1/comm"), "init\n").unwrap();
        std::fs::remove_dir_all(d.path().join("proc/812")).unwrap();
        assert!(manager_warnings(&root, &v1, true).is_empty());
    }

    #[test]
    fn boot_advice_follows_the_kernel_config() {
        let d = tempfile::tempdir().unwrap();
        let w = |p: &str, s: &str| {
            let f = d.path().join(p);
            std::fs::create_dir_all(f.parent().unwrap()).unwrap();
            std::fs::write(f, s).unwrap();
        };
        w("proc/sys/kernel/osrelease", "6.1.0-x\n");
        w(
            "boot/config-6.1.0-x",
            "CONFIG_RCU_NOCB_CPU=y\nCONFIG_PREEMPT_RT=y\n",
        );
        w("proc/cmdline", "quiet rcu_nocbs=1-3 irqaffinity=0\n");
        let p = |s: &str| CpuSet::parse_list(s).unwrap();
        let (bp, note) = boot_advice(&Root::new(d.path()), &p("2-3"), &p("0-1"));
        assert!(note.is_none());
        let get = |name: &str| bp.iter().find(|b| b.param.starts_with(name)).unwrap();
        // No CONFIG_NO_HZ_FULL: no `nohz` flag, nohz_full not available.
        assert_eq!(get("isolcpus=").param, "isolcpus=domain,managed_irq,2-3");
        // No CONFIG_CPU_ISOLATION either: isolcpus= would be ignored.
        assert!(!get("isolcpus=").available);
        // Never a parameter no mainline kernel parses.
        assert!(bp.iter().all(|b| !b.param.starts_with("kthread_cpus")));
        let patch = get("kthread_default_cpumask=");
        assert!(!patch.available && patch.why.contains("patch"), "{patch:?}");
        assert_eq!(patch.param, "kthread_default_cpumask=0x3");
        assert!(!get("nohz_full=").available);
        // rcu_nocbs=1-3 covers 2-3; irqaffinity=0 is not the nrt set 0-1.
        assert!(get("rcu_nocbs=").present && get("rcu_nocbs=").available);
        assert!(!get("irqaffinity=").present);
        // PREEMPT_RT threads every IRQ already: threadirqs is not advised.
        assert!(bp.iter().all(|b| b.param != "threadirqs"));
        // With CONFIG_CPU_ISOLATION and CONFIG_NO_HZ_FULL, both are offered.
        w(
            "boot/config-6.1.0-x",
            "CONFIG_CPU_ISOLATION=y\nCONFIG_NO_HZ_FULL=y\nCONFIG_RCU_NOCB_CPU=y\n",
        );
        let (bp, _) = boot_advice(&Root::new(d.path()), &p("2-3"), &p("0-1"));
        let get = |name: &str| bp.iter().find(|b| b.param.starts_with(name)).unwrap();
        assert_eq!(
            get("isolcpus=").param,
            "isolcpus=nohz,domain,managed_irq,2-3"
        );
        assert!(get("isolcpus=").available && get("nohz_full=").available);
    }
}
