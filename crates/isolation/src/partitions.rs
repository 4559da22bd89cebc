//! The cpuset partitions in force, found once ([`Partitions::discover`]):
//! rtshield's own (one per `--parent` that has a state file, and the one at
//! the hierarchy's root), partrt's (`rt`/`nrt` at the root without
//! rtshield's root state file: partrt's layout is rtshield's default one,
//! only that file tells them apart) and a cset shield (`user`/`system` at
//! the root). Every question about them — where the `rt` set a run stanza
//! names is, whether several rtshield partitions make that ambiguous,
//! which partition shields a CPU, which other tool's partition is present
//! — is answered from this one value, so the cgroup hierarchy is detected
//! once per question asker, not once per question.

use crate::state;
use rtshield_sys::Hierarchy;
use rtshield_sys::Root;
use rtshield_vocab::CpuSet;
use serde::Serialize;

/// Who made a partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Owner {
    /// rtshield (`rtshield partition create`), known by its state file.
    Rtshield,
    /// partrt (`rt`/`nrt` at the root, no rtshield state file for it).
    Partrt,
    /// cset's shield (`user` is the shielded set, `system` the rest).
    Cset,
}

impl Owner {
    /// The command that undoes another tool's partition.
    pub fn undo(self) -> Option<&'static str> {
        match self {
            Owner::Rtshield => None,
            Owner::Partrt => Some("partrt undo"),
            Owner::Cset => Some("cset shield --reset"),
        }
    }

    /// The names of its shielded and housekeeping cpusets.
    fn set_names(self) -> (&'static str, &'static str) {
        match self {
            Owner::Rtshield | Owner::Partrt => ("rt", "nrt"),
            Owner::Cset => ("user", "system"),
        }
    }
}

/// One cpuset of a partition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Set {
    /// Its cgroup directory (`/sys/fs/cgroup/cpuset/rt`).
    pub dir: String,
    /// Its CPUs; `None` when its `cpus` file is unreadable.
    pub cpus: Option<CpuSet>,
}

/// One partition: a shielded set and a housekeeping set. Either may be
/// missing (a half-made or half-removed partition, or a state file whose
/// cpusets are gone).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Partition {
    /// Who made it.
    pub owner: Owner,
    /// The `--parent` it was made under, below the hierarchy's mount
    /// (`lab/a`); `None` for the hierarchy's root.
    pub parent: Option<String>,
    /// The shielded set (rtshield's and partrt's `rt`, cset's `user`).
    pub rt: Option<Set>,
    /// The housekeeping set (`nrt`, cset's `system`).
    pub nrt: Option<Set>,
}

impl Partition {
    /// How a run's isolation tag names it: `partition` for rtshield's at
    /// the hierarchy's root (the spelling of every earlier version, which
    /// stored runs and `runs compare 'isolation=partition'` rely on),
    /// `partition:<parent>` for rtshield's under `--parent`, `partrt`,
    /// `cset`.
    pub fn tag(&self) -> String {
        match (self.owner, &self.parent) {
            (Owner::Rtshield, None) => "partition".into(),
            (Owner::Rtshield, Some(p)) => format!("partition:{p}"),
            (Owner::Partrt, _) => "partrt".into(),
            (Owner::Cset, _) => "cset".into(),
        }
    }

    /// Whether cgroup directory `dir` is its shielded set or below it.
    pub fn rt_holds(&self, dir: &str) -> bool {
        self.rt.as_ref().is_some_and(|rt| {
            dir == rt.dir
                || dir
                    .strip_prefix(rt.dir.as_str())
                    .is_some_and(|r| r.starts_with('/'))
        })
    }

    /// Whether every CPU of `cpus` (not empty) is in its shielded set.
    pub fn rt_covers(&self, cpus: &CpuSet) -> bool {
        let rt = self.rt.as_ref().and_then(|s| s.cpus.as_ref());
        !cpus.is_empty() && rt.is_some_and(|rt| cpus.is_subset(rt))
    }
}

/// Every partition found under a root, and the hierarchy they are in.
#[derive(Debug, Clone)]
pub struct Partitions {
    /// The cpuset hierarchy, or why there is none (the message of
    /// [`rtshield_sys::HierarchyError`]).
    hierarchy: Result<Hierarchy, String>,
    /// Every state file's name, whatever version named it.
    state_files: Vec<String>,
    /// The parents rtshield's state files name (`None`: the root).
    rtshield_parents: Vec<Option<String>>,
    /// In lookup order: rtshield's under each parent with a state file,
    /// then the root's (rtshield's or partrt's), then cset's.
    list: Vec<Partition>,
    /// The set names of state files that record others than `rt`/`nrt`.
    named: Vec<(Option<String>, (String, String))>,
}

impl Partitions {
    /// Find every partition under `root`: the hierarchy is detected once,
    /// the state files are listed (not read: listing needs no privilege
    /// and changes nothing), each candidate's cpusets looked up.
    pub fn discover(root: &Root) -> Partitions {
        let state_files = state::state_files(root);
        let rtshield_parents = state::parents(&state_files);
        let hierarchy = Hierarchy::detect(root).map_err(|e| e.to_string());
        let mut list = Vec::new();
        let named = state_names(root, &state_files);
        if let Ok(h) = &hierarchy {
            let root_state = state_files.iter().any(|n| n == "partition.json");
            for parent in candidate_parents(&rtshield_parents) {
                let owner = match parent {
                    None if !root_state => Owner::Partrt,
                    _ => Owner::Rtshield,
                };
                let names = named
                    .iter()
                    .find(|(p, _)| p.as_deref() == parent)
                    .map(|(_, n)| (n.0.as_str(), n.1.as_str()));
                let p = find(root, h, owner, parent, names);
                // The root is a candidate even without a state file; it
                // is a partition only when its cpusets exist.
                if p.owner == Owner::Rtshield || p.rt.is_some() || p.nrt.is_some() {
                    list.push(p);
                }
            }
            let cset = find(root, h, Owner::Cset, None, None);
            if cset.rt.is_some() || cset.nrt.is_some() {
                list.push(cset);
            }
        }
        Partitions {
            hierarchy,
            state_files,
            rtshield_parents,
            list,
            named,
        }
    }

    /// The cpuset hierarchy, when there is one.
    pub fn hierarchy(&self) -> Option<&Hierarchy> {
        self.hierarchy.as_ref().ok()
    }

    /// The cpuset hierarchy, or why there is none (for messages).
    pub fn hierarchy_or_why(&self) -> Result<&Hierarchy, &str> {
        self.hierarchy.as_ref().map_err(String::as_str)
    }

    /// Every partition found, in lookup order (rtshield's under each
    /// parent with a state file, the root's, cset's).
    pub fn all(&self) -> &[Partition] {
        &self.list
    }

    /// The names of every rtshield state file in
    /// [`STATE_DIR`](crate::STATE_DIR), older versions' names included.
    pub fn state_files(&self) -> &[String] {
        &self.state_files
    }

    /// The `--parent`s of rtshield's partitions, from their state files
    /// (`None`: the hierarchy's root).
    pub fn rtshield_parents(&self) -> &[Option<String>] {
        &self.rtshield_parents
    }

    /// The shielded set a run stanza's `cgroup rt` (or `measure
    /// --partition`) joins: rtshield's under the first parent that has a
    /// state file and an `rt` set, else the root's `rt` (rtshield's or
    /// partrt's), else cset's `user`.
    pub fn rt(&self) -> Option<&Set> {
        self.list.iter().find_map(|p| p.rt.as_ref())
    }

    /// The housekeeping set, looked for as [`Partitions::rt`] is (`nrt`,
    /// else cset's `system`).
    pub fn nrt(&self) -> Option<&Set> {
        self.list.iter().find_map(|p| p.nrt.as_ref())
    }

    /// When rtshield-layout partitions (`rt` sets) exist under several
    /// parents, [`Partitions::rt`] would pick one silently: the refusal,
    /// naming each parent (the root first, as `/`, then by name).
    pub fn ambiguous(&self) -> Option<String> {
        let mut found: Vec<Option<&str>> = self
            .list
            .iter()
            .filter(|p| p.owner != Owner::Cset && p.rt.is_some())
            .map(|p| p.parent.as_deref())
            .collect();
        found.sort();
        if found.len() < 2 {
            return None;
        }
        let names: Vec<&str> = found.into_iter().map(|p| p.unwrap_or("/")).collect();
        Some(format!(
            "rtshield partitions exist under several parents ({}): say which with --partition-parent, \
             or undo the others (`rtshield partition undo --parent P`)",
            names.join(", ")
        ))
    }

    /// The first partition (in lookup order) whose shielded set holds
    /// `cpu`.
    pub fn covering(&self, cpu: u32) -> Option<&Partition> {
        self.list.iter().find(|p| p.rt_covers(&CpuSet::single(cpu)))
    }

    /// The `rt` and `nrt` directories directly under `parent` (resolved as
    /// `--parent` is), whether or not a state file names that parent; a
    /// pair named by a state file (`--rt-name`) when there is no `rt`/`nrt`.
    pub fn under(&self, root: &Root, parent: &str) -> (Option<String>, Option<String>) {
        let Some(h) = self.hierarchy() else {
            return (None, None);
        };
        let pairs = std::iter::once(("rt", "nrt"))
            .chain(self.named.iter().map(|(_, n)| (n.0.as_str(), n.1.as_str())));
        for (rt, nrt) in pairs {
            let found = (
                h.find_cpuset(root, Some(parent), rt),
                h.find_cpuset(root, Some(parent), nrt),
            );
            if found.0.is_some() || found.1.is_some() {
                return found;
            }
        }
        (None, None)
    }

    /// The cpuset cgroup directory the calling process is in (its threads
    /// inherit it); `None` when unknown, as on a fake tree without
    /// `/proc/self/cgroup`.
    pub fn own_cgroup(&self, root: &Root) -> Option<String> {
        self.hierarchy()?.cpuset_of_self(root)
    }

    /// The partition another tool made (cset's first: its `user`/`system`
    /// names are its own), when both of its sets exist.
    pub fn foreign(&self) -> Option<&Partition> {
        let whole = |o: Owner| {
            self.list
                .iter()
                .find(|p| p.owner == o && p.rt.is_some() && p.nrt.is_some())
        };
        whole(Owner::Cset).or_else(|| whole(Owner::Partrt))
    }
}

/// Where rtshield partitions may be: every `--parent` with a state file,
/// then the root of the hierarchy; each once, in that order.
fn candidate_parents(state_parents: &[Option<String>]) -> Vec<Option<&str>> {
    let mut out: Vec<Option<&str>> = Vec::with_capacity(state_parents.len() + 1);
    for p in state_parents.iter().map(Option::as_deref).chain([None]) {
        if !out.contains(&p) {
            out.push(p);
        }
    }
    out
}

/// The partition of `owner`'s layout under `parent`, with whichever of its
/// sets exist; `names` overrides the layout's set names (a create given
/// `--rt-name`/`--nrt-name`, read from its state file).
fn find(
    root: &Root,
    h: &Hierarchy,
    owner: Owner,
    parent: Option<&str>,
    names: Option<(&str, &str)>,
) -> Partition {
    let (rt, nrt) = names.unwrap_or(owner.set_names());
    let set = |name: &str| {
        h.find_cpuset(root, parent, name).map(|dir| Set {
            cpus: h.cpus(root, &dir),
            dir,
        })
    };
    Partition {
        owner,
        parent: parent.map(str::to_string),
        rt: set(rt),
        nrt: set(nrt),
    }
}

/// The set names each readable state file records, by parent, when they
/// are not `rt`/`nrt`. Reading needs root (the files are root's): another
/// user finds the default names only.
fn state_names(root: &Root, files: &[String]) -> Vec<(Option<String>, (String, String))> {
    let last = |d: &str| d.rsplit('/').next().unwrap_or(d).to_string();
    files
        .iter()
        .filter_map(|f| {
            let parent = state::parents(std::slice::from_ref(f)).pop()?;
            let s = state::State::load(root, &format!("{}/{f}", state::STATE_DIR))
                .ok()
                .flatten()?;
            let names = (last(&s.rt_dir), last(&s.nrt_dir));
            (names.0 != "rt" || names.1 != "nrt").then_some((parent, names))
        })
        .collect()
}
