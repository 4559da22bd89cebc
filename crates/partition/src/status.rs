//! `partition status|list|move|run`: look at and use existing partitions.

use crate::create::cpus_of;
use crate::kernel::{errno, Kernel};
use anyhow::{bail, Context};
use rtshield_isolation::{Phase, State};
use rtshield_sys::{parse_task_ids, Hierarchy, TaskInfo};
use rtshield_vocab::InputError;
use serde::Serialize;

/// One task of a partition, for `partition status`.
#[derive(Debug, Clone, Serialize)]
pub struct TaskBrief {
    /// Thread id.
    pub tid: u32,
    /// Its `comm`.
    pub name: String,
    /// A kernel thread.
    pub kthread: bool,
}

/// One partition (`rt` or `nrt`) as it is now.
#[derive(Debug, Clone, Serialize)]
pub struct PartitionInfo {
    /// `rt` or `nrt`.
    pub name: String,
    /// Its cgroup directory.
    pub dir: String,
    /// Its CPUs now (effective ones when the kernel says), list syntax; `None` when unreadable.
    pub cpus: Option<String>,
    /// v2 `cpuset.cpus.partition` (`isolated`, `root`, `member`, `… invalid (why)`).
    pub partition: Option<String>,
    /// The tasks in it now.
    pub tasks: Vec<TaskBrief>,
}

/// What `partition status` shows: the hierarchy, the state file and each partition with its tasks.
#[derive(Debug, Clone, Serialize)]
pub struct Status {
    /// The hierarchy's label (`cgroup v2`).
    pub hierarchy: String,
    /// Where the hierarchy is mounted.
    pub mount: String,
    /// The parent cgroup directory looked at.
    pub parent: String,
    /// The state file that parent would have.
    pub state_file: String,
    /// `none`, `complete` or `incomplete` (a create that was interrupted).
    pub state: String,
    /// The partitions found under the parent (none, or rt and nrt).
    pub partitions: Vec<PartitionInfo>,
    /// Tasks still in the parent (full mode: the ones the kernel refused).
    pub parent_tasks: usize,
    /// Changed files recorded in the state (for undo).
    pub saved_files: usize,
    /// A partition made by cset or partrt, with the command that undoes it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub foreign: Option<rtshield_isolation::ForeignPartition>,
}

/// Which `--parent` `undo` and `status` act on when none is given: the
/// only rtshield partition on the machine, wherever it was made; the root
/// when there is none. Several: an input error naming each one.
pub fn pick_parent(
    root: &rtshield_sys::Root,
    parent: Option<&str>,
) -> Result<Option<String>, InputError> {
    if let Some(p) = parent {
        return Ok(Some(p.to_string()));
    }
    let mut ps = rtshield_isolation::Partitions::discover(root)
        .rtshield_parents()
        .to_vec();
    ps.dedup();
    match ps.len() {
        0 => Ok(None),
        1 => Ok(ps.pop().flatten()),
        n => Err(InputError::new(format!(
            "{n} rtshield partitions exist; say which one with {}",
            ps.iter()
                .map(|p| format!("`--parent {}`", p.as_deref().unwrap_or("/")))
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// The partitions under `parent` (the root when `None`) and their state, read only.
pub fn status(k: &Kernel, parent: Option<&str>) -> anyhow::Result<Status> {
    let found = rtshield_isolation::Partitions::discover(&k.root);
    let h = found
        .hierarchy_or_why()
        .map_err(|why| anyhow::anyhow!("{why}"))?
        .clone();
    let parent = h.resolve(parent);
    let (sf, st) = State::find(&k.root, &h, &parent)?;
    let mut parts = vec![];
    for name in ["rt", "nrt"] {
        let dir = format!("{parent}/{name}");
        if !k.exists(&dir) {
            continue;
        }
        let ids = parse_task_ids(&k.read_opt(&h.tasks_file(&dir)).unwrap_or_default());
        let tasks = ids
            .into_iter()
            .map(|t| {
                let i = TaskInfo::read(&k.root, t);
                TaskBrief {
                    tid: t,
                    name: i.as_ref().map(|i| i.name.clone()).unwrap_or_default(),
                    kthread: i.is_some_and(|i| i.kthread),
                }
            })
            .collect();
        parts.push(PartitionInfo {
            name: name.into(),
            cpus: cpus_of(k, &h, &dir).map(|c| c.to_list()),
            partition: h
                .is_v2()
                .then(|| k.read_opt(&format!("{dir}/cpuset.cpus.partition")))
                .flatten()
                .map(|s| s.trim().to_string()),
            dir,
            tasks,
        });
    }
    Ok(Status {
        hierarchy: h.label().into(),
        mount: h.mount.clone(),
        parent_tasks: parse_task_ids(&k.read_opt(&h.tasks_file(&parent)).unwrap_or_default()).len(),
        state: match &st {
            None => "none",
            Some(s) if s.phase == Phase::Complete => "complete",
            Some(_) => "incomplete",
        }
        .into(),
        saved_files: st.as_ref().map_or(0, |s| s.files.len()),
        parent,
        state_file: sf,
        partitions: parts,
        foreign: found.foreign_partition(),
    })
}

/// The cgroup directory of partition `which` (`rt` or `nrt`).
pub fn partition_dir(
    k: &Kernel,
    parent: Option<&str>,
    which: &str,
) -> anyhow::Result<(Hierarchy, String)> {
    if which != "rt" && which != "nrt" {
        return Err(
            InputError::new(format!("unknown partition '{which}' (expected rt or nrt)")).into(),
        );
    }
    let h = Hierarchy::detect(&k.root)?;
    let dir = format!("{}/{which}", h.resolve(parent));
    if !k.exists(&dir) {
        bail!("no {which} partition ({dir} does not exist): run `rtshield partition create CPUS` first");
    }
    Ok((h, dir))
}

/// What `partition move` did for one process.
#[derive(Debug, Clone, Serialize)]
pub struct MoveOutcome {
    /// The process.
    pub pid: u32,
    /// Threads moved (the whole process counts once on cgroup v2).
    pub moved: usize,
    /// Threads the kernel refused, each with its reason.
    pub refused: Vec<String>,
}

/// Move process `pid` (every thread of it) into `dir`.
pub fn move_process(
    k: &mut Kernel,
    h: &Hierarchy,
    dir: &str,
    pid: u32,
) -> anyhow::Result<MoveOutcome> {
    if !rtshield_sys::task_exists(&k.root, pid) {
        return Err(InputError::new(format!("no process {pid}")).into());
    }
    let mut out = MoveOutcome {
        pid,
        moved: 0,
        refused: vec![],
    };
    let tids: Vec<u32> = if h.is_v2() {
        vec![pid]
    } else {
        let mut v = rtshield_sys::tids(&k.root, pid).unwrap_or_default();
        if v.is_empty() {
            v.push(pid);
        }
        v
    };
    let file = h.tasks_file(dir);
    for t in tids {
        match k.write(&file, &format!("{t}\n")) {
            Ok(()) => out.moved += 1,
            Err(e) if errno(&e) == Some(libc::ESRCH) => {}
            Err(e) => {
                let info = TaskInfo::read(&k.root, t).unwrap_or_default();
                out.refused.push(format!(
                    "{t} ({}): {}",
                    info.name,
                    crate::tasks::refusal_reason(&info, errno(&e))
                ));
            }
        }
    }
    Ok(out)
}

/// Put the calling process into partition `which` (before exec'ing a command).
pub fn enter(k: &mut Kernel, parent: Option<&str>, which: &str) -> anyhow::Result<()> {
    let (h, dir) = partition_dir(k, parent, which)?;
    let file = h.procs_file(&dir);
    k.write(&file, &format!("{}\n", std::process::id()))
        .with_context(|| format!("cannot enter partition {which}"))
}
