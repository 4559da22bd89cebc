//! Cgroups: mounts from `/proc/self/mountinfo`, which cpuset hierarchy this
//! system has (cgroup v1 with or without the `cpuset.` prefix, or the v2
//! unified mount), how its files are named, and finding a named cpuset.

use crate::kpath;
use crate::Root;
use rtshield_vocab::CpuSet;
use serde::{Deserialize, Serialize};

/// One line of `/proc/self/mountinfo`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount {
    /// Where it is mounted (field 5 of the line), as the kernel escapes it.
    pub mount_point: String,
    /// The filesystem type after ` - ` (`cgroup`, `cgroup2`, `tmpfs`).
    pub fs_type: String,
    /// The super options, split at commas: a v1 cgroup mount names its controllers here (`cpuset`).
    pub super_options: Vec<String>,
}

/// Every mount of `/proc/self/mountinfo`, in order.
pub fn mounts(root: &Root) -> Vec<Mount> {
    let Some(text) = root.read_opt(kpath::MOUNTINFO) else {
        return vec![];
    };
    text.lines()
        .filter_map(|l| {
            let (pre, post) = l.split_once(" - ")?;
            let mount_point = pre.split_whitespace().nth(4)?.to_string();
            let mut post = post.split_whitespace();
            let fs_type = post.next()?.to_string();
            let _src = post.next();
            let super_options = post
                .next()
                .unwrap_or("")
                .split(',')
                .map(str::to_string)
                .collect();
            Some(Mount {
                mount_point,
                fs_type,
                super_options,
            })
        })
        .collect()
}

/// Which cpuset interface the machine offers; it decides every control file's name
/// ([`Hierarchy::file`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// cgroup v1 cpuset; `prefix` is true when files are named `cpuset.cpus`
    /// (false for a `noprefix` mount: `cpus`).
    V1 {
        /// Files carry the `cpuset.` prefix (false on a `noprefix` mount).
        prefix: bool,
    },
    /// cgroup v2 with the cpuset controller available.
    V2,
}

/// The cpuset hierarchy found in `/proc/self/mountinfo`: its kind and mount point,
/// from which every cpuset file name follows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hierarchy {
    /// v1 (with or without the `cpuset.` prefix) or v2.
    pub kind: Kind,
    /// Mount point of the hierarchy (`/sys/fs/cgroup/cpuset`).
    pub mount: String,
}

/// Why no usable cpuset hierarchy was found; the message says how to mount one.
#[derive(Debug, thiserror::Error)]
pub enum HierarchyError {
    #[error(
        "no cpuset cgroup hierarchy found in /proc/self/mountinfo: mount one, e.g. \
         `mount -t cgroup -o cpuset cpuset /sys/fs/cgroup/cpuset` (v1) or enable cpuset in \
         cgroup v2 (`echo +cpuset > /sys/fs/cgroup/cgroup.subtree_control`)"
    )]
    /// No mount offers the cpuset controller.
    None,
    /// A v1 cpuset mount (at this path) whose files match neither naming.
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

    /// Whether it is the v2 unified hierarchy (tasks move by process, partitions
    /// are `cpuset.cpus.partition`).
    pub fn is_v2(&self) -> bool {
        self.kind == Kind::V2
    }

    /// A short name for reports: `cgroup v1`, `cgroup v1 (noprefix)` or `cgroup v2`.
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

    /// The cpuset cgroup `name` (`rt`, `nrt`, cset's `user`) directly
    /// under `parent` (resolved as `--parent` is), when it exists and is a
    /// cpuset (has its `cpus` file).
    pub fn find_cpuset(&self, root: &Root, parent: Option<&str>, name: &str) -> Option<String> {
        if name.is_empty() || name.contains('/') || name == "." || name == ".." {
            return None;
        }
        let dir = format!("{}/{name}", self.resolve(parent));
        root.exists(self.file(&dir, "cpus")).then_some(dir)
    }

    /// The CPUs of cpuset `dir` (its `cpus` file); `None` when unreadable
    /// or not a CPU list.
    pub fn cpus(&self, root: &Root, dir: &str) -> Option<CpuSet> {
        root.read_opt(self.file(dir, "cpus"))
            .and_then(|s| CpuSet::parse_list(s.trim()).ok())
    }

    /// The CPUs a task of cpuset `dir` may run on: its effective CPUs,
    /// else its `cpus` file; `None` when neither is readable.
    pub fn effective_cpus(&self, root: &Root, dir: &str) -> Option<CpuSet> {
        root.read_opt(self.file(dir, "effective_cpus"))
            .and_then(|s| CpuSet::parse_list(s.trim()).ok())
            .filter(|c| !c.is_empty())
            .or_else(|| self.cpus(root, dir))
    }

    /// The cpuset cgroup directory the calling process is in, from
    /// `/proc/self/cgroup` (v1: the line naming the `cpuset` controller;
    /// v2: the `0::` line); `None` when the file or the line is missing.
    pub fn cpuset_of_self(&self, root: &Root) -> Option<String> {
        let text = root.read_opt(kpath::SELF_CGROUP)?;
        let rel = text.lines().find_map(|l| {
            let mut f = l.splitn(3, ':');
            let (_, ctrls, path) = (f.next()?, f.next()?, f.next()?);
            let ours = match self.kind {
                Kind::V2 => ctrls.is_empty(),
                Kind::V1 { .. } => ctrls.split(',').any(|c| c == "cpuset"),
            };
            ours.then(|| path.trim().to_string())
        })?;
        Some(self.resolve(Some(&rel)))
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

    /// A tree with `/proc/self/mountinfo` from fixture `mi` and the files
    /// `files` (paths relative to the tree).
    fn tree(mi: &str, files: &[&str]) -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/mountinfo")
            .join(mi);
        std::fs::create_dir_all(d.path().join("proc/self")).unwrap();
        std::fs::copy(src, d.path().join("proc/self/mountinfo")).unwrap();
        for f in files {
            let p = d.path().join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "").unwrap();
        }
        d
    }

    #[test]
    fn mountinfo_lines() {
        let d = tree("v1-prefix", &[]);
        let ms = mounts(&Root::new(d.path()));
        let cs = ms
            .iter()
            .find(|m| m.fs_type == "cgroup" && m.super_options.contains(&"cpuset".to_string()))
            .unwrap();
        assert_eq!(cs.mount_point, "/sys/fs/cgroup/cpuset");
        assert_eq!(cs.super_options, vec!["rw", "cpuset"]);
        assert!(ms
            .iter()
            .any(|m| m.mount_point == "/proc" && m.fs_type == "proc"));
        assert!(mounts(&Root::new(d.path().join("none"))).is_empty());
    }

    #[test]
    fn detects_v1_prefix_noprefix_and_v2() {
        let d = tree(
            "v1-prefix",
            &[
                "sys/fs/cgroup/cpuset/cpuset.cpus",
                "sys/fs/cgroup/cpuset/rt/cpuset.cpus",
            ],
        );
        let r = Root::new(d.path());
        let h = Hierarchy::detect(&r).unwrap();
        assert_eq!(h.kind, Kind::V1 { prefix: true });
        assert_eq!(h.mount, "/sys/fs/cgroup/cpuset");
        assert_eq!(h.file("/x", "cpus"), "/x/cpuset.cpus");
        assert_eq!(
            h.find_cpuset(&r, None, "rt").as_deref(),
            Some("/sys/fs/cgroup/cpuset/rt")
        );
        assert_eq!(h.find_cpuset(&r, None, "nrt"), None);
        assert_eq!(h.find_cpuset(&r, None, "../rt"), None);

        let d = tree(
            "v1-noprefix",
            &[
                "sys/fs/cgroup/cpuset/cpus",
                "sys/fs/cgroup/cpuset/mine/rt/cpus",
            ],
        );
        let r = Root::new(d.path());
        let h = Hierarchy::detect(&r).unwrap();
        assert_eq!(h.kind, Kind::V1 { prefix: false });
        assert_eq!(h.tasks_file("/x"), "/x/tasks");
        assert_eq!(h.find_cpuset(&r, None, "rt"), None);
        assert_eq!(
            h.find_cpuset(&r, Some("mine"), "rt").as_deref(),
            Some("/sys/fs/cgroup/cpuset/mine/rt")
        );

        let d = tree("v2", &["sys/fs/cgroup/rt/cpuset.cpus"]);
        std::fs::write(
            d.path().join("sys/fs/cgroup/cgroup.controllers"),
            "cpuset cpu io memory pids\n",
        )
        .unwrap();
        let r = Root::new(d.path());
        let h = Hierarchy::detect(&r).unwrap();
        assert_eq!(h.kind, Kind::V2);
        assert_eq!(h.mount, "/sys/fs/cgroup");
        assert_eq!(h.tasks_file("/x"), "/x/cgroup.procs");
        assert_eq!(h.file("/x", "effective_cpus"), "/x/cpuset.cpus.effective");
        assert_eq!(
            h.find_cpuset(&r, Some("/sys/fs/cgroup"), "rt").as_deref(),
            Some("/sys/fs/cgroup/rt")
        );
        // v2 without the cpuset controller: none.
        std::fs::write(
            d.path().join("sys/fs/cgroup/cgroup.controllers"),
            "cpu io\n",
        )
        .unwrap();
        assert!(matches!(Hierarchy::detect(&r), Err(HierarchyError::None)));
        // v1 cpuset mount without either file layout: unknown.
        let d = tree("v1-prefix", &[]);
        assert!(matches!(
            Hierarchy::detect(&Root::new(d.path())),
            Err(HierarchyError::Unknown(_))
        ));
    }

    #[test]
    fn the_callers_cpuset_cgroup_and_a_sets_cpus() {
        let d = tree("v1-prefix", &["sys/fs/cgroup/cpuset/cpuset.cpus"]);
        let r = Root::new(d.path());
        let h = Hierarchy::detect(&r).unwrap();
        assert_eq!(h.cpuset_of_self(&r), None);
        let w = |p: &str, s: &str| std::fs::write(d.path().join(p), s).unwrap();
        w(
            "proc/self/cgroup",
            "5:cpu,cpuacct:/x
3:cpuset:/lab/rt
0::/user.slice
",
        );
        assert_eq!(
            h.cpuset_of_self(&r).as_deref(),
            Some("/sys/fs/cgroup/cpuset/lab/rt")
        );
        w(
            "proc/self/cgroup",
            "3:cpuset:/
",
        );
        assert_eq!(
            h.cpuset_of_self(&r).as_deref(),
            Some("/sys/fs/cgroup/cpuset")
        );
        let v2 = Hierarchy {
            kind: Kind::V2,
            mount: "/sys/fs/cgroup".into(),
        };
        w(
            "proc/self/cgroup",
            "3:cpuset:/old
0::/rt
",
        );
        assert_eq!(v2.cpuset_of_self(&r).as_deref(), Some("/sys/fs/cgroup/rt"));
        w(
            "sys/fs/cgroup/cpuset/cpuset.cpus",
            "0-3
",
        );
        let m = "/sys/fs/cgroup/cpuset";
        assert_eq!(h.cpus(&r, m), Some(CpuSet::parse_list("0-3").unwrap()));
        assert_eq!(h.effective_cpus(&r, m), h.cpus(&r, m));
        w(
            "sys/fs/cgroup/cpuset/cpuset.effective_cpus",
            "1
",
        );
        assert_eq!(h.effective_cpus(&r, m), Some(CpuSet::single(1)));
        assert_eq!(h.cpus(&r, "/sys/fs/cgroup/cpuset/none"), None);
    }

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
