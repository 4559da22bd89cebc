//! `partition status|list|move|run`: look at and use existing partitions.

use crate::create::cpus_of;
use crate::kernel::{errno, Kernel};
use crate::names::SetNames;
use crate::scope::{movable_threads, parent_dir, MustExist};
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
    /// `none`, `complete`, `incomplete` (a create that was interrupted) or
    /// `unknown` (the state files could not be read: not root).
    pub state: String,
    /// Why the state is `unknown`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state_note: Option<String>,
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
    let parent = parent_dir(k, &h, parent, MustExist::Yes)?;
    let (sf, st, state_note) = match State::find(&k.root, &h, &parent) {
        Ok((sf, st)) => (sf, st, None),
        // Not root: the state files are root's (0700 directory); the
        // cgroups themselves can still be shown.
        Err(e) if crate::unreadable_state(&e) => (
            rtshield_isolation::state_path(&h, &parent),
            None,
            Some(format!(
                "{} is readable by root only: whether rtshield made these sets, and what undo \
                 would restore, is shown to root (`sudo rtshield partition status`)",
                rtshield_isolation::STATE_DIR
            )),
        ),
        Err(e) => return Err(e),
    };
    let mut parts = vec![];
    let names = st.as_ref().map(SetNames::of_state).unwrap_or_default();
    for name in ["rt", "nrt"] {
        let dir = format!("{parent}/{}", names.dir_name(name));
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
            None if state_note.is_some() => "unknown",
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
        state_note,
    })
}

/// The cgroup directory of partition `which` (`rt` or `nrt`) under the
/// checked `--parent` ([`parent_dir`]), and that parent's directory.
pub fn partition_dir(
    k: &Kernel,
    parent: Option<&str>,
    which: &str,
) -> anyhow::Result<(Hierarchy, String)> {
    let (h, _, dir) = partition_dirs(k, parent, which)?;
    Ok((h, dir))
}

/// [`partition_dir`], with the parent's directory too. `which` is a role
/// (`rt`, `nrt`) or the directory name a create gave it (`-r`/`-n`, read
/// from the state file).
fn partition_dirs(
    k: &Kernel,
    parent: Option<&str>,
    which: &str,
) -> anyhow::Result<(Hierarchy, String, String)> {
    let unknown = |names: &SetNames| {
        let custom = if names.is_default() {
            String::new()
        } else {
            format!(
                ", or {} / {} as this partition names them",
                names.rt, names.nrt
            )
        };
        InputError::new(format!(
            "unknown partition '{which}' (expected rt or nrt{custom})"
        ))
    };
    // Refused before anything is read when it cannot be a partition name.
    if !SetNames::valid(which) {
        return Err(unknown(&SetNames::default()).into());
    }
    let h = Hierarchy::detect(&k.root)?;
    let pdir = parent_dir(k, &h, parent, MustExist::Yes)?;
    let names = SetNames::under(k, &h, &pdir);
    let Some(role) = names.role(which) else {
        return Err(unknown(&names).into());
    };
    let dir = format!("{pdir}/{}", names.dir_name(role));
    if !k.exists(&dir) {
        bail!("no {which} partition ({dir} does not exist): run `rtshield partition create CPUS` first");
    }
    Ok((h, pdir, dir))
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

/// What `partition move` will do, checked before anything moves.
#[derive(Debug, Clone)]
pub struct MovePlan {
    /// The cpuset hierarchy.
    pub h: Hierarchy,
    /// The partition's directory (`<parent>/rt` or `<parent>/nrt`).
    pub dir: String,
    /// Each process, and those of its threads that may be moved (inside
    /// the parent's subtree).
    pub moves: Vec<(u32, Vec<u32>)>,
}

/// Check a `partition move`: the partition exists under a valid `--parent`,
/// every process exists, lies inside the parent's subtree (anywhere when
/// there is no `--parent`), and is neither PID 1 nor a kernel thread unless
/// `force`. The first refusal is an [`InputError`] and nothing has moved.
pub fn plan_move(
    k: &Kernel,
    parent: Option<&str>,
    which: &str,
    pids: &[u32],
    force: bool,
) -> anyhow::Result<MovePlan> {
    needs_root(k, "partition move")?;
    let (h, pdir, dir) = partition_dirs(k, parent, which)?;
    let mut moves = vec![];
    for &pid in pids {
        if !rtshield_sys::task_exists(&k.root, pid) {
            return Err(InputError::new(format!("no process {pid}")).into());
        }
        let tids: Vec<u32> = if h.is_v2() {
            vec![pid]
        } else {
            let mut v = rtshield_sys::tids(&k.root, pid).unwrap_or_default();
            if v.is_empty() {
                v.push(pid);
            }
            v
        };
        moves.push((pid, movable_threads(k, &h, &pdir, pid, &tids, force)?));
    }
    Ok(MovePlan { h, dir, moves })
}

/// Move threads `tids` of process `pid` into `dir` (checked by
/// [`plan_move`]); a thread that exited meanwhile is skipped.
pub fn move_threads(
    k: &mut Kernel,
    h: &Hierarchy,
    dir: &str,
    pid: u32,
    tids: &[u32],
) -> MoveOutcome {
    let mut out = MoveOutcome {
        pid,
        moved: 0,
        refused: vec![],
    };
    let file = h.tasks_file(dir);
    for &t in tids {
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
    out
}

/// Put the calling process into partition `which` (before exec'ing a command).
pub fn enter(k: &mut Kernel, parent: Option<&str>, which: &str) -> anyhow::Result<()> {
    needs_root(k, "partition run")?;
    let (h, dir) = partition_dir(k, parent, which)?;
    let file = h.procs_file(&dir);
    k.write(&file, &format!("{}\n", std::process::id()))
        .with_context(|| format!("cannot enter partition {which}"))
}

/// partrt's `run -c`/`move -c`: `cpus` must lie inside partition `which`
/// (its cpuset's CPUs); refused otherwise with partrt's "Invalid cpumask".
pub fn check_cpu_subset(
    k: &Kernel,
    parent: Option<&str>,
    which: &str,
    cpus: &rtshield_vocab::CpuSet,
) -> anyhow::Result<()> {
    let (h, dir) = partition_dir(k, parent, which)?;
    let Some(part) = h.cpus(&k.root, &dir) else {
        bail!("cannot read the CPUs of partition {which} ({dir})");
    };
    if cpus.is_empty() || !cpus.iter().all(|c| part.contains(c)) {
        return Err(InputError::new(format!(
            "Invalid cpumask: CPUs {} are not all in partition {which} (CPUs {})",
            cpus.to_list(),
            part.to_list()
        ))
        .into());
    }
    Ok(())
}

/// One partition of `partition list`.
#[derive(Debug, Clone, Serialize)]
pub struct Listed {
    /// The partitioned cgroup (the hierarchy's root for the whole machine).
    pub parent: String,
    /// CPUs of `rt` (from the state file; else from the cpuset itself).
    pub rt_cpus: String,
    /// CPUs of `nrt`.
    pub nrt_cpus: String,
    /// `cgroup v1`, `cgroup v1 (noprefix)`, `cgroup v2`.
    pub hierarchy: String,
    /// Whether its create finished; `None`: unknown (state not readable).
    pub complete: Option<bool>,
    /// Its state file; `None` when it could not be read (not root).
    pub state_file: Option<String>,
    /// `parent` below the cpuset mount (empty for the whole machine): the
    /// rt cpuset is `<below>/rt`, what partrt's `list` names `Name:rt`.
    pub below_mount: String,
    /// The two cpusets' directory names (`rt`/`nrt` unless create was
    /// given others).
    pub names: SetNames,
}

/// `partition list`: rtshield's partitions, from their state files. A
/// caller who may not read them (not root) gets the `rt`/`nrt` pairs found
/// in the cpuset hierarchy instead, and the note saying so.
pub fn list(root: &rtshield_sys::Root) -> anyhow::Result<(Vec<Listed>, Option<String>)> {
    use rtshield_isolation::STATE_DIR;
    let names = match root.read_dir_names(STATE_DIR) {
        Ok(n) => n,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => vec![],
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            let note = format!(
                "{STATE_DIR} is readable by root only: these are the rt/nrt cpusets found in \
                 the cpuset hierarchy; `sudo rtshield partition list` shows which rtshield made"
            );
            return Ok((seen_in_hierarchy(root), Some(note)));
        }
        Err(e) => return Err(e.into()),
    };
    let mount = Hierarchy::detect(root).map(|h| h.mount).unwrap_or_default();
    let mut out = vec![];
    for f in names {
        if !(f.starts_with("partition") && f.ends_with(".json")) {
            continue;
        }
        let path = format!("{STATE_DIR}/{f}");
        let s = State::load(root, &path)
            .with_context(|| path.clone())?
            .context("state file vanished")?;
        out.push(Listed {
            names: SetNames::of_state(&s),
            below_mount: below(&mount, &s.parent),
            parent: s.parent,
            rt_cpus: s.rt_cpus,
            nrt_cpus: s.nrt_cpus,
            hierarchy: s.hierarchy.label().into(),
            complete: Some(s.phase == Phase::Complete),
            state_file: Some(path),
        });
    }
    Ok((out, None))
}

/// `dir` relative to the cpuset `mount`, without slashes at either end.
fn below(mount: &str, dir: &str) -> String {
    dir.strip_prefix(mount)
        .unwrap_or(dir)
        .trim_matches('/')
        .to_string()
}

/// Cgroups holding both an `rt` and an `nrt` cpuset, down to a few levels
/// below the hierarchy's root (what a caller without access to the state
/// files can see).
fn seen_in_hierarchy(root: &rtshield_sys::Root) -> Vec<Listed> {
    let Ok(h) = Hierarchy::detect(root) else {
        return vec![];
    };
    let mut out = vec![];
    let mut level = vec![h.mount.clone()];
    for _depth in 0..4 {
        let mut next = vec![];
        for d in &level {
            let (rt, nrt) = (
                h.cpus(root, &format!("{d}/rt")),
                h.cpus(root, &format!("{d}/nrt")),
            );
            if let (Some(rt), Some(nrt)) = (rt, nrt) {
                out.push(Listed {
                    names: SetNames::default(),
                    below_mount: below(&h.mount, d),
                    parent: d.clone(),
                    rt_cpus: rt.to_list(),
                    nrt_cpus: nrt.to_list(),
                    hierarchy: h.label().into(),
                    complete: None,
                    state_file: None,
                });
            }
            for n in root.read_dir_names(d).unwrap_or_default() {
                let sub = format!("{d}/{n}");
                let p = root.path(&sub);
                if p.is_dir() && !p.is_symlink() && next.len() < 10_000 {
                    next.push(sub);
                }
            }
        }
        level = next;
    }
    out
}

/// The one-line refusal of a command that writes cgroup files, for a
/// caller other than root (fake trees excepted: tests own them).
fn needs_root(k: &Kernel, what: &str) -> anyhow::Result<()> {
    if !k.is_fake() && !rtshield_sys::is_root() {
        bail!("{what} needs root (it writes cgroup task files); run it with sudo");
    }
    Ok(())
}
