//! `partition undo`: put back exactly what the state file recorded.

use crate::kernel::{errno, Kernel};
use crate::scope::{parent_dir, MustExist};
use rtshield_isolation::{Phase, State};
use rtshield_sys::cgroup_mounts;
use rtshield_sys::Root;
use rtshield_sys::{
    normalise_kernel_path, path_is_strictly_under, path_is_under, resolves_inside_root, KNOB_ROOTS,
};
use rtshield_sys::{parse_task_ids, Hierarchy, TaskInfo};
use rtshield_vocab::InputError;
use serde::Serialize;

/// What an undo did (or, with `--dry-run`, would do).
#[derive(Debug, Clone, Serialize, Default)]
pub struct UndoReport {
    /// Nothing was written: [`UndoReport::plan`] lists the writes.
    pub dry_run: bool,
    /// No state file: nothing was (or is any longer) partitioned.
    pub nothing_to_undo: bool,
    /// The state file it worked from.
    pub state_file: String,
    /// The create was interrupted (killed, crashed) before it finished.
    pub was_incomplete: bool,
    /// Tasks moved back to the parent.
    pub tasks_returned: usize,
    /// The cgroup directories removed (rt and nrt).
    pub removed_dirs: Vec<String>,
    /// Files written back to their old value.
    pub restored: Vec<String>,
    /// Files already holding their old value (never changed, or restored by
    /// an earlier undo).
    pub unchanged: usize,
    /// Saved files that no longer exist (an IRQ freed, a workqueue
    /// destroyed since create): nothing left to restore.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub vanished: Vec<String>,
    /// What could not be put back, each with its reason; the state file is kept
    /// when there are any, so undo can run again.
    pub errors: Vec<String>,
    /// Dry run: every write that would be made, in order.
    pub plan: Vec<String>,
}

/// Put back exactly what the state file of `parent` (the root when `None`)
/// recorded: tasks back to the parent, the partitions removed, then every saved
/// file written back; the state file is removed only when nothing failed.
pub fn undo(k: &mut Kernel, parent: Option<&str>) -> anyhow::Result<UndoReport> {
    let h = Hierarchy::detect(&k.root)?;
    // Checked like create's, but a parent removed since may still have
    // knobs to restore.
    let parent = parent_dir(k, &h, parent, MustExist::No)?;
    if !k.is_fake() && !k.dry_run && !rtshield_sys::is_root() {
        anyhow::bail!("partition undo needs root; run it with sudo (or --dry-run to see the plan)");
    }
    let (path, state) = State::find(&k.root, &h, &parent).map_err(|e| {
        if crate::unreadable_state(&e) {
            anyhow::anyhow!(
                "partition undo needs root, even with --dry-run: the saved state in {} is root's",
                rtshield_isolation::STATE_DIR
            )
        } else {
            e
        }
    })?;
    let Some(state) = state else {
        return Ok(UndoReport {
            dry_run: k.dry_run,
            nothing_to_undo: true,
            state_file: path,
            ..Default::default()
        });
    };
    // Every path is checked before anything is written (dry run too).
    if let Err(why) = validate(&k.root, &state) {
        return Err(InputError::new(format!(
            "{path}: {why}: refusing to undo, nothing was changed"
        ))
        .into());
    }
    let mut rep = undo_state(k, &state);
    rep.state_file = path.clone();
    rep.was_incomplete = state.phase != Phase::Complete;
    if rep.errors.is_empty() {
        if k.dry_run {
            k.log.push(format!("remove state {path}"));
        } else {
            State::remove(&k.root, &path)?;
        }
    }
    rep.plan = std::mem::take(&mut k.log);
    Ok(rep)
}

/// Check every path of `state` before `undo` acts on it: each must be
/// absolute and free of `..`, and after normalisation lie below the places
/// `create` writes — the cpuset hierarchy recorded in the state (which must
/// be a cgroup mount point of this system) for cgroup directories, task
/// files and control files, [`KNOB_ROOTS`] for machine-wide knobs — and,
/// on a fake tree, resolve inside it. The error names the first offending
/// entry.
pub(crate) fn validate(root: &Root, state: &State) -> Result<(), String> {
    let m = &state.hierarchy.mount;
    let mount = normalise_kernel_path(m).map_err(|e| format!("hierarchy.mount {m:?}: {e}"))?;
    let is_cgroup_mount = cgroup_mounts(root).iter().any(|x| {
        (x.fs_type == "cgroup" || x.fs_type == "cgroup2")
            && normalise_kernel_path(&x.mount_point).is_ok_and(|p| p == mount)
    });
    if !is_cgroup_mount || mount == "/" {
        return Err(format!(
            "hierarchy.mount {m:?}: not a cgroup mount point of this system"
        ));
    }
    // (entry name, path, must be strictly below the mount, may be a knob)
    let mut checks: Vec<(String, &str, bool, bool)> = vec![
        ("parent".into(), &state.parent, false, false),
        ("rt_dir".into(), &state.rt_dir, true, false),
        ("nrt_dir".into(), &state.nrt_dir, true, false),
    ];
    for (i, d) in state.dirs.iter().enumerate() {
        checks.push((format!("dirs[{i}]"), d, true, false));
    }
    for (i, t) in state.tasks.iter().enumerate() {
        checks.push((format!("tasks[{i}].from"), &t.from, false, false));
    }
    for (i, f) in state.files.iter().enumerate() {
        checks.push((format!("files[{i}].path"), &f.path, true, true));
    }
    for (what, p, strict, knob) in checks {
        let n = normalise_kernel_path(p).map_err(|e| format!("{what} {p:?}: {e}"))?;
        let in_mount = if strict {
            path_is_strictly_under(&n, &mount)
        } else {
            path_is_under(&n, &mount)
        };
        let in_knobs = knob && KNOB_ROOTS.iter().any(|r| path_is_strictly_under(&n, r));
        if !in_mount && !in_knobs {
            let places = if knob {
                format!("{mount}, {}", KNOB_ROOTS.join(", "))
            } else {
                mount.clone()
            };
            return Err(format!("{what} {p:?}: not below {places}"));
        }
        if !resolves_inside_root(root, &n) {
            return Err(format!(
                "{what} {p:?}: leads out of the --sysroot tree {} (symbolic link)",
                root.base().display()
            ));
        }
    }
    Ok(())
}

/// Restore `state`. Never stops at the first error: as much as possible is
/// put back, and what failed is listed (the state file is then kept).
pub(crate) fn undo_state(k: &mut Kernel, state: &State) -> UndoReport {
    let mut rep = UndoReport {
        dry_run: k.dry_run,
        ..Default::default()
    };
    // 1. Tasks back where they came from; anything started inside the
    //    partitions since goes to the parent.
    let mut task_errors = return_tasks(k, state, &mut rep);
    // 2. The partitions themselves, children first. A cgroup that still
    //    holds exiting tasks (they cannot be moved, and rmdir says EBUSY
    //    until they are gone) is tried again, returning whatever can be
    //    returned meanwhile, for at most `k.busy_wait`.
    let deadline = std::time::Instant::now() + k.busy_wait;
    for d in state.dirs.iter().rev() {
        if !k.exists(d) {
            continue;
        }
        loop {
            match k.rmdir(d) {
                Ok(()) => {
                    rep.removed_dirs.push(d.clone());
                    break;
                }
                Err(e)
                    if errno(&e) == Some(libc::EBUSY) && std::time::Instant::now() < deadline =>
                {
                    std::thread::sleep(std::time::Duration::from_millis(50));
                    task_errors = return_tasks(k, state, &mut rep);
                }
                Err(e) => {
                    rep.errors.push(format!(
                        "rmdir {d}: {e}{}",
                        still_in(k, &state.hierarchy, d)
                    ));
                    break;
                }
            }
        }
    }
    rep.errors.splice(0..0, task_errors);
    // 3. Every file that existed before, newest change first.
    for f in state.files.iter().rev() {
        let Some(old) = &f.old else { continue };
        if !k.exists(&f.path) {
            // Not an error, or undo could never finish.
            rep.vanished.push(f.path.clone());
            continue;
        }
        let cur = k.read_opt(&f.path);
        let same = match &f.restore {
            // `+cpuset` in subtree_control: undone when cpuset is absent.
            Some(_) => cur.as_deref().is_some_and(|c| {
                c.split_whitespace().collect::<Vec<_>>()
                    == old.split_whitespace().collect::<Vec<_>>()
            }),
            None => cur.as_deref().map(str::trim) == Some(old.trim()),
        };
        if same {
            rep.unchanged += 1;
            continue;
        }
        let value = f.restore.as_deref().unwrap_or(old);
        match k.write(&f.path, value) {
            Ok(()) => rep.restored.push(f.path.clone()),
            Err(e) => rep.errors.push(format!("{}: {e}", f.path)),
        }
    }
    rep
}

/// Move every task of the partitions back where it came from (or to the
/// parent), repeating while tasks fork. Returns the errors of this round
/// (a task that exited meanwhile, ESRCH, is not one).
fn return_tasks(k: &mut Kernel, state: &State, rep: &mut UndoReport) -> Vec<String> {
    let h = &state.hierarchy;
    let mut errors = vec![];
    for _pass in 0..20 {
        errors.clear();
        let mut moved = 0;
        let mut left = 0;
        for d in [&state.rt_dir, &state.nrt_dir] {
            let Some(text) = k.read_opt(&h.tasks_file(d)) else {
                continue;
            };
            for tid in parse_task_ids(&text) {
                left += 1;
                let from = state
                    .tasks
                    .iter()
                    .find(|m| m.tid == tid)
                    .map_or(state.parent.as_str(), |m| m.from.as_str());
                let target = if k.exists(from) { from } else { &state.parent };
                match k.write(&h.tasks_file(target), &format!("{tid}\n")) {
                    Ok(()) => moved += 1,
                    Err(e) if errno(&e) == Some(libc::ESRCH) => {}
                    Err(e) => errors.push(format!("task {tid}: {e}")),
                }
            }
        }
        rep.tasks_returned += moved;
        if left == 0 || moved == 0 || k.dry_run {
            break;
        }
    }
    errors
}

/// `: N task(s) still in it (TID NAME, ...)`, for the error of a cgroup
/// that could not be removed; empty when it holds none.
fn still_in(k: &Kernel, h: &Hierarchy, dir: &str) -> String {
    let ids = parse_task_ids(&k.read_opt(&h.tasks_file(dir)).unwrap_or_default());
    if ids.is_empty() {
        // Not tasks: cgroups someone made inside it.
        let subs: Vec<String> = k
            .dir_names(dir)
            .unwrap_or_default()
            .into_iter()
            .filter(|n| k.root.path(format!("{dir}/{n}")).is_dir())
            .collect();
        return if subs.is_empty() {
            String::new()
        } else {
            format!(
                ": it holds cgroup(s) rtshield did not make: {}",
                subs.join(", ")
            )
        };
    }
    let named: Vec<String> = ids
        .iter()
        .take(5)
        .map(|&t| {
            let i = TaskInfo::read(&k.root, t);
            match i {
                Some(i) => format!(
                    "{t} {}{}",
                    i.name,
                    if i.state == Some('Z') || i.state == Some('X') {
                        " exiting"
                    } else {
                        ""
                    }
                ),
                None => format!("{t} gone"),
            }
        })
        .collect();
    format!(
        ": {} task(s) still in it after {:.0} s ({}{})",
        ids.len(),
        k.busy_wait.as_secs_f64(),
        named.join(", "),
        if ids.len() > 5 { ", ..." } else { "" }
    )
}
