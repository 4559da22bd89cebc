//! What a partition command may act on: the cgroup `--parent` names, and
//! the tasks `partition move` may pull into a partition.
//!
//! `--parent` must name an existing cgroup *below* the hierarchy's root:
//! `""`, `/` or the mount itself would partition the whole machine, `.`
//! and `..` would leave the hierarchy. No `--parent` is the whole machine.
//! `partition move` then takes only tasks already inside that parent's
//! subtree (anywhere, without `--parent`), and never PID 1 or a kernel
//! thread unless `--force` says so; `--force` never reaches outside the
//! subtree, so it cannot take PID 1 out of a cgroup the parent does not
//! hold.

use crate::kernel::Kernel;
use rtshield_sys::Hierarchy;
use rtshield_sys::{parse_task_ids, TaskInfo};
use rtshield_vocab::InputError;
use std::collections::BTreeSet;

/// Whether `--parent` must exist: `undo` may be asked about a parent that
/// is gone (nothing of it to put back but the knobs its state recorded).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MustExist {
    /// `create`, `status`, `move`, `run`: refused when missing.
    Yes,
    /// `undo`: the syntax is checked, existence is not.
    No,
}

/// The cgroup directory `--parent` names, checked: `None` is the
/// hierarchy's root (the whole machine); `Some(p)` must name a cgroup
/// below it, without `.` or `..` components, that exists (when `must`
/// says so). Every refusal is an [`InputError`] (exit 2) made before
/// anything is read or written.
pub(crate) fn parent_dir(
    k: &Kernel,
    h: &Hierarchy,
    given: Option<&str>,
    must: MustExist,
) -> Result<String, InputError> {
    let Some(p) = given else {
        return Ok(h.mount.clone());
    };
    rtshield_isolation::parent_dir(
        &k.root,
        h,
        "--parent",
        p,
        rtshield_isolation::RootParent::Refused,
        must == MustExist::Yes,
    )
}

/// Every TID (v1) or PID (v2) listed in the task files of `dir` and of
/// every cgroup below it.
pub(crate) fn tasks_in_subtree(k: &Kernel, h: &Hierarchy, dir: &str) -> BTreeSet<u32> {
    let mut out = BTreeSet::new();
    let mut stack = vec![dir.to_string()];
    while let Some(d) = stack.pop() {
        out.extend(parse_task_ids(
            &k.read_opt(&h.tasks_file(&d)).unwrap_or_default(),
        ));
        for name in k.dir_names(&d).unwrap_or_default() {
            let sub = format!("{d}/{name}");
            if k.root.path(&sub).is_dir() && !k.root.path(&sub).is_symlink() {
                stack.push(sub);
            }
        }
    }
    out
}

/// Which threads of process `pid` `partition move` may move into a
/// partition of `parent`: those inside its subtree (every thread when
/// `parent` is the hierarchy's root). Refused, with why (an
/// [`InputError`], before anything moves): a process with no thread in
/// the subtree, PID 1, a kernel thread — the last two unless `force`.
pub(crate) fn movable_threads(
    k: &Kernel,
    h: &Hierarchy,
    parent: &str,
    pid: u32,
    tids: &[u32],
    force: bool,
) -> Result<Vec<u32>, InputError> {
    let whole = parent == h.mount;
    let inside: Vec<u32> = if whole {
        tids.to_vec()
    } else {
        let sub = tasks_in_subtree(k, h, parent);
        tids.iter().copied().filter(|t| sub.contains(t)).collect()
    };
    if inside.is_empty() {
        return Err(InputError::new(format!(
            "partition move: process {pid} is not in cgroup {parent} or below it: \
             only tasks inside the --parent's subtree are moved"
        )));
    }
    if !force {
        let info = TaskInfo::read(&k.root, pid);
        let what = if pid == 1 {
            Some("PID 1 (init)")
        } else if info.as_ref().is_some_and(|i| i.kthread) {
            Some("a kernel thread")
        } else {
            None
        };
        if let Some(what) = what {
            return Err(InputError::new(format!(
                "partition move: {pid} ({}) is {what}: not moved without --force",
                info.map(|i| i.name).unwrap_or_default()
            )));
        }
    }
    Ok(inside)
}
