//! Which cpuset hierarchy this system has, and how its files are named.

use rtshield_sys::sysinfo::mounts;
use rtshield_sys::Root;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// cgroup v1 cpuset; `prefix` is true when files are named `cpuset.cpus`
    /// (false for a `noprefix` mount: `cpus`).
    V1 { prefix: bool },
    /// cgroup v2 with the cpuset controller available.
    V2,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hierarchy {
    pub kind: Kind,
    /// Mount point of the hierarchy (`/sys/fs/cgroup/cpuset`).
    pub mount: String,
}

#[derive(Debug, thiserror::Error)]
pub enum HierarchyError {
    #[error(
        "no cpuset cgroup hierarchy found in /proc/self/mountinfo: mount one, e.g. \
         `mount -t cgroup -o cpuset cpuset /sys/fs/cgroup/cpuset` (v1) or enable cpuset in \
         cgroup v2 (`echo +cpuset > /sys/fs/cgroup/cgroup.subtree_control`)"
    )]
    None,
    #[error("cpuset hierarchy at {0} has neither cpuset.cpus nor cpus: not a layout rtshield understands")]
    Unknown(String),
}

impl Hierarchy {
    /// v1 is preferred when the cpuset controller is bound there (a hybrid
    /// system uses v1 for cpuset; v2 then does not offer it).
    pub fn detect(root: &Root) -> Result<Hierarchy, HierarchyError> {
        let ms = mounts(root);
        if let Some(m) = ms
            .iter()
            .find(|m| m.fs_type == "cgroup" && m.super_options.iter().any(|o| o == "cpuset"))
        {
            let mp = m.mount_point.clone();
            let prefix = if root.exists(format!("{mp}/cpuset.cpus")) {
                true
            } else if root.exists(format!("{mp}/cpus")) {
                false
            } else {
                return Err(HierarchyError::Unknown(mp));
            };
            return Ok(Hierarchy {
                kind: Kind::V1 { prefix },
                mount: mp,
            });
        }
        for m in ms.iter().filter(|m| m.fs_type == "cgroup2") {
            let offers_cpuset = root
                .read_opt(format!("{}/cgroup.controllers", m.mount_point))
                .is_some_and(|c| c.split_whitespace().any(|x| x == "cpuset"));
            if offers_cpuset {
                return Ok(Hierarchy {
                    kind: Kind::V2,
                    mount: m.mount_point.clone(),
                });
            }
        }
        Err(HierarchyError::None)
    }

    pub fn is_v2(&self) -> bool {
        self.kind == Kind::V2
    }

    pub fn label(&self) -> &'static str {
        match self.kind {
            Kind::V1 { prefix: true } => "cgroup v1",
            Kind::V1 { prefix: false } => "cgroup v1 (noprefix)",
            Kind::V2 => "cgroup v2",
        }
    }

    /// A cpuset control file of cgroup `dir`, named in v1 terms
    /// (`cpus`, `mems`, `cpu_exclusive`, `sched_load_balance`, `effective_cpus`).
    pub fn file(&self, dir: &str, name: &str) -> String {
        match self.kind {
            Kind::V1 { prefix: true } => format!("{dir}/cpuset.{name}"),
            Kind::V1 { prefix: false } => format!("{dir}/{name}"),
            Kind::V2 => {
                let n = match name {
                    "effective_cpus" => "cpus.effective",
                    "effective_mems" => "mems.effective",
                    other => other,
                };
                format!("{dir}/cpuset.{n}")
            }
        }
    }

    /// The file listing a cgroup's tasks, one TID (v1) or PID (v2) per line;
    /// writing an id to it moves that task there.
    pub fn tasks_file(&self, dir: &str) -> String {
        match self.kind {
            Kind::V1 { .. } => format!("{dir}/tasks"),
            Kind::V2 => format!("{dir}/cgroup.procs"),
        }
    }

    /// The file that moves a whole process (all its threads).
    pub fn procs_file(&self, dir: &str) -> String {
        format!("{dir}/cgroup.procs")
    }

    /// Resolve `--parent`: a path below the mount (`test/a`) or an absolute
    /// path that starts with the mount.
    pub fn resolve(&self, parent: Option<&str>) -> String {
        let rel = match parent {
            None => "",
            Some(p) => match p.strip_prefix(&self.mount) {
                Some(r) if r.is_empty() || r.starts_with('/') => r,
                _ => p,
            }
            .trim_matches('/'),
        };
        // `--parent ""` or `--parent /` is the root itself.
        if rel.is_empty() {
            self.mount.clone()
        } else {
            format!("{}/{rel}", self.mount)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parent_paths_resolve_below_the_mount() {
        let h = Hierarchy {
            kind: Kind::V1 { prefix: true },
            mount: "/sys/fs/cgroup/cpuset".into(),
        };
        let m = "/sys/fs/cgroup/cpuset";
        assert_eq!(h.resolve(None), m);
        assert_eq!(h.resolve(Some("")), m);
        assert_eq!(h.resolve(Some("/")), m);
        assert_eq!(h.resolve(Some("/sys/fs/cgroup/cpuset/")), m);
        assert_eq!(h.resolve(Some("demo")), format!("{m}/demo"));
        assert_eq!(h.resolve(Some("/demo/a/")), format!("{m}/demo/a"));
        assert_eq!(
            h.resolve(Some("/sys/fs/cgroup/cpuset/demo")),
            format!("{m}/demo")
        );
    }
}
