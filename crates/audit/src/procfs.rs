//! What audit and stat sample, read through `rtshield_sys`'s typed readers
//! (`/proc/interrupts`, `/proc/softirqs`, `/proc/stat`, `/proc/loadavg`,
//! every thread), and the thread families the audit reports.

use rtshield_sys::LoadAvg;
use rtshield_sys::Root;
use rtshield_sys::TaskInfo;
use serde::Serialize;

/// System-wide counters from `/proc/stat` and `/proc/loadavg`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub(crate) struct Global {
    pub ctxt: u64,
    pub intr: u64,
    pub procs_running: u64,
    pub procs_blocked: u64,
    pub loadavg: [f64; 3],
}

pub(crate) fn global(root: &Root) -> Global {
    let st = rtshield_sys::StatSnapshot::read(root).unwrap_or_default();
    Global {
        ctxt: st.ctxt,
        intr: st.intr,
        procs_running: st.procs_running,
        procs_blocked: st.procs_blocked,
        loadavg: LoadAvg::read(root).map_or([0.0; 3], |l| l.avg),
    }
}

/// Where a thread may run, in the three families the audit reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Family {
    /// A user-space thread.
    User,
    /// A kernel thread whose affinity can be changed (kworker/u*, kthreadd...).
    MovableKernel,
    /// A per-CPU kernel thread (ksoftirqd/N, migration/N, kworker/N:M...).
    BoundKernel,
}

pub(crate) fn family(t: &TaskInfo) -> Family {
    if !t.kthread {
        Family::User
    } else if t.no_setaffinity
        || (t.bound_cpu_from_name().is_some()
            && t.cpus_allowed
                .as_deref()
                .is_some_and(|a| !a.contains(['-', ','])))
    {
        Family::BoundKernel
    } else {
        Family::MovableKernel
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families() {
        let t = |name: &str, kthread: bool, nsa: bool, allowed: &str| TaskInfo {
            name: name.into(),
            kthread,
            no_setaffinity: nsa,
            cpus_allowed: Some(allowed.into()),
            ..Default::default()
        };
        assert_eq!(family(&t("sshd", false, false, "0-3")), Family::User);
        assert_eq!(
            family(&t("kworker/u8:1", true, false, "0-3")),
            Family::MovableKernel
        );
        assert_eq!(
            family(&t("ksoftirqd/1", true, false, "1")),
            Family::BoundKernel
        );
        assert_eq!(family(&t("odd", true, true, "0-3")), Family::BoundKernel);
        // Named per-CPU but allowed everywhere: movable.
        assert_eq!(
            family(&t("kworker/1:2", true, false, "0-3")),
            Family::MovableKernel
        );
    }

    #[test]
    fn global_counters_from_a_fake_tree() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("proc")).unwrap();
        std::fs::write(d.path().join("proc/loadavg"), "1.50 0.25 0.00 2/80 99\n").unwrap();
        std::fs::write(
            d.path().join("proc/stat"),
            "ctxt 7\nintr 9 1 2\nprocs_running 2\n",
        )
        .unwrap();
        let g = global(&Root::new(d.path()));
        assert_eq!(g.loadavg, [1.5, 0.25, 0.0]);
        assert_eq!((g.ctxt, g.intr, g.procs_running), (7, 9, 2));
    }
}
