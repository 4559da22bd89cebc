//! `partition create`: check, plan, save the state, then change.

use crate::kernel::{errno, errno_name, is_simulated_kill, Kernel};
use crate::knobs::{self, Knobs};
use crate::scope::{parent_dir, MustExist};
use anyhow::{anyhow, bail, Context};
use rtshield_isolation::{
    boot_advice, manager_warnings, state_path, BootParam, FileChange, Knob, Phase, State, TaskMove,
    STATE_VERSION,
};
use rtshield_sys::{parse_task_ids, CgroupKind, Hierarchy, TaskInfo};
use rtshield_vocab::{CpuSet, InputError};
use serde::Serialize;
use std::collections::BTreeSet;

/// Upper bound on move passes: a fork bomb in the parent must not keep us
/// here forever; what is left is reported.
pub(crate) const MAX_PASSES: usize = 50;

/// What `partition create` is asked: which CPUs to shield, under which parent
/// cgroup, and which knob families to change.
#[derive(Debug, Clone)]
pub struct CreateOptions {
    /// The CPUs of the rt partition; every other online CPU goes to nrt.
    pub cpus: CpuSet,
    /// The cgroup the partitions are made under (`None`: the hierarchy's root, the whole machine).
    pub parent: Option<String>,
    /// The knob families to change besides the cgroups.
    pub knobs: Knobs,
    /// The two cpusets' directory names (`rt`, `nrt` by default).
    pub names: crate::SetNames,
}

/// Something the kernel would not do (a task it would not move, a file it would not
/// take), with the reason in words.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Refusal {
    /// A TID or a file path.
    pub what: String,
    /// The task's `comm`, or the knob's family (`irq`, `sysctl`).
    pub name: String,
    /// Why, in words, errno first (`EINVAL: per-CPU kernel thread`).
    pub reason: String,
}

/// What a create did (or, with `--dry-run`, would do), printed as text or JSON.
#[derive(Debug, Clone, Serialize, Default)]
pub struct CreateReport {
    /// Nothing was written: [`CreateReport::plan`] lists the writes.
    pub dry_run: bool,
    /// The hierarchy's label (`cgroup v2`).
    pub hierarchy: String,
    /// The parent cgroup directory the partitions are under.
    pub parent: String,
    /// The rt cgroup directory.
    pub rt_dir: String,
    /// The nrt cgroup directory.
    pub nrt_dir: String,
    /// The rt CPUs (list syntax).
    pub rt_cpus: String,
    /// The nrt CPUs (list syntax).
    pub nrt_cpus: String,
    /// The state file `undo` reads.
    pub state_file: String,
    /// Tasks moved from the parent into nrt.
    pub moved_tasks: usize,
    /// Passes over the parent's tasks until none was left or the limit (50) was
    /// reached (tasks fork while they move).
    pub move_passes: usize,
    /// Tasks the kernel would not move (per-CPU kernel threads, ...).
    pub refused_tasks: Vec<Refusal>,
    /// Files changed (knobs and cgroup settings).
    pub changed: Vec<FileChange>,
    /// Knob writes the kernel refused (IRQs answering EIO, ...).
    pub refused_files: Vec<Refusal>,
    /// v2: the `cpuset.cpus.partition` value the rt cgroup ended with.
    pub v2_partition: Option<String>,
    /// What the kernel did differently from the plan and why (an exclusive flag
    /// refused, a v2 partition downgraded).
    pub notes: Vec<String>,
    /// Other managers that may undo the partition (irqbalance, tuned, systemd's `CPUAffinity`).
    pub warnings: Vec<String>,
    /// Boot parameters that would complete the isolation (`nohz_full=`,
    /// `rcu_nocbs=`, `irqaffinity=`).
    pub boot_params: Vec<BootParam>,
    /// Dry run: every write that would be made, in order.
    pub plan: Vec<String>,
}

pub(crate) fn cpus_of(k: &Kernel, h: &Hierarchy, dir: &str) -> Option<CpuSet> {
    let eff = k.read_opt(&h.file(dir, "effective_cpus"));
    let cpus = k.read_opt(&h.file(dir, "cpus"));
    eff.filter(|s| !s.trim().is_empty())
        .or(cpus)
        .and_then(|s| CpuSet::parse_list(s.trim()).ok())
}

/// Every check that must pass before anything is written.
pub(crate) struct Checked {
    pub h: Hierarchy,
    pub parent: String,
    pub rt: CpuSet,
    pub nrt: CpuSet,
    pub state_file: String,
    /// What could not be checked (a dry run without root), for the report.
    pub notes: Vec<String>,
}

pub(crate) fn check(k: &Kernel, opts: &CreateOptions) -> anyhow::Result<Checked> {
    if !k.is_fake() && !k.dry_run && !rtshield_sys::is_root() {
        bail!(
            "partition create needs root (it writes cgroup, IRQ and sysctl files); \
             run it with sudo, or see what it would do with --dry-run"
        );
    }
    let h = Hierarchy::detect(&k.root)?;
    // A sub-cgroup, existing, inside the hierarchy (never its root by
    // another name: `""` or `/` would move every task of the machine).
    let parent = parent_dir(k, &h, opts.parent.as_deref(), MustExist::Yes)?;
    // Another tool's exclusive sets (cset's user/system, partrt's rt/nrt)
    // would hold the same CPUs: two managers of one CPU never agree.
    if let Some(f) = rtshield_isolation::foreign_partition(&k.root) {
        return Err(InputError::new(format!(
            "a {}; rtshield will not partition next to it: undo it first with `{}`",
            f.describe(),
            f.undo
        ))
        .into());
    }
    let rt = opts.cpus.clone();
    if rt.is_empty() {
        return Err(InputError::new("no CPU given for the rt partition").into());
    }
    let online = rtshield_sys::online_cpus(&k.root).context("cannot read the online CPUs")?;
    let possible = rtshield_sys::possible_cpus(&k.root).unwrap_or_else(|_| online.clone());
    let missing = rt.difference(&possible);
    if !missing.is_empty() {
        return Err(InputError::new(format!(
            "CPU {} does not exist (this machine has CPUs {})",
            missing.to_list(),
            possible.to_list()
        ))
        .into());
    }
    let offline = rt.difference(&online);
    if !offline.is_empty() {
        return Err(InputError::new(format!(
            "CPU {} is offline (online: {}); bring it online with \
             `echo 1 > {}` first",
            offline.to_list(),
            online.to_list(),
            rtshield_sys::kpath::cpu_online(offline.first().unwrap())
        ))
        .into());
    }
    let pcpus = cpus_of(k, &h, &parent)
        .with_context(|| format!("cannot read the CPUs of cgroup {parent}"))?;
    let outside = rt.difference(&pcpus);
    if !outside.is_empty() {
        return Err(InputError::new(format!(
            "CPU {} is not in cgroup {parent} (its CPUs: {})",
            outside.to_list(),
            pcpus.to_list()
        ))
        .into());
    }
    let nrt = pcpus.difference(&rt);
    if nrt.is_empty() {
        return Err(InputError::new(format!(
            "rt would take every CPU of {parent} ({}): at least one housekeeping CPU must stay in nrt",
            pcpus.to_list()
        ))
        .into());
    }
    let state_file = state_path(&h, &parent);
    let mut notes = vec![];
    let saved = match State::load(&k.root, &state_file) {
        // A dry run by another user than root: the state directory is
        // root's; the real create (as root) checks it.
        Err(e) if k.dry_run && crate::unreadable_state(&e) => {
            notes.push(format!(
                "{} is readable by root only: whether a partition's state already exists \
                 there is checked when create runs as root",
                rtshield_isolation::STATE_DIR
            ));
            None
        }
        r => r?,
    };
    if let Some(s) = saved {
        bail!(
            "a partition already exists (rt {} / nrt {}, state {state_file}): \
             run `rtshield partition undo` first",
            s.rt_cpus,
            s.nrt_cpus
        );
    }
    for d in [&opts.names.rt, &opts.names.nrt] {
        let p = format!("{parent}/{d}");
        if k.exists(&p) {
            bail!(
                "cgroup {p} already exists but rtshield has no state for it \
                 (made by partrt or cset?): remove it first (move its tasks out, then rmdir {p})"
            );
        }
    }
    Ok(Checked {
        h,
        parent,
        rt,
        nrt,
        state_file,
        notes,
    })
}

/// The cgroup side of the plan: files in the parent and in the new dirs.
fn cgroup_plan(k: &Kernel, c: &Checked, rt_dir: &str, nrt_dir: &str) -> Vec<FileChange> {
    let h = &c.h;
    let mut v = vec![];
    let new_file = |path: String, new: &str| FileChange {
        knob: Knob::Cgroup,
        path,
        old: None,
        new: format!("{new}\n"),
        restore: None,
    };
    let (r, n) = (c.rt.to_list(), c.nrt.to_list());
    match h.kind {
        CgroupKind::V1 { .. } => {
            let mems = k
                .read_opt(&h.file(&c.parent, "mems"))
                .unwrap_or_default()
                .trim()
                .to_string();
            v.push(new_file(h.file(nrt_dir, "cpus"), &n));
            v.push(new_file(h.file(nrt_dir, "mems"), &mems));
            v.push(new_file(h.file(rt_dir, "cpus"), &r));
            v.push(new_file(h.file(rt_dir, "mems"), &mems));
            v.push(new_file(h.file(rt_dir, "cpu_exclusive"), "1"));
            v.push(new_file(h.file(rt_dir, "sched_load_balance"), "0"));
            // The parent must stop balancing across all its CPUs, or the
            // rt CPUs stay in its scheduling domain.
            let p = h.file(&c.parent, "sched_load_balance");
            if let Some(old) = k.read_opt(&p) {
                if old.trim() != "0" {
                    v.push(FileChange {
                        knob: Knob::Cgroup,
                        path: p,
                        old: Some(old),
                        new: "0\n".into(),
                        restore: None,
                    });
                }
            }
        }
        CgroupKind::V2 => {
            let p = format!("{}/cgroup.subtree_control", c.parent);
            let old = k.read_opt(&p).unwrap_or_default();
            if !old.split_whitespace().any(|w| w == "cpuset") {
                v.push(FileChange {
                    knob: Knob::Cgroup,
                    path: p,
                    old: Some(old),
                    new: "+cpuset".into(),
                    restore: Some("-cpuset".into()),
                });
            }
            v.push(new_file(h.file(nrt_dir, "cpus"), &n));
            v.push(new_file(h.file(rt_dir, "cpus"), &r));
            v.push(new_file(format!("{rt_dir}/cpuset.cpus.exclusive"), &r));
            v.push(new_file(
                format!("{rt_dir}/cpuset.cpus.partition"),
                "isolated",
            ));
        }
    }
    v
}

/// What went wrong, and whether it must stop the create.
enum Step {
    Fatal(anyhow::Error),
    Killed(std::io::Error),
}

/// Shield `opts.cpus`: check everything, plan every change, save the plan to the
/// state file, then write. A refusal changes nothing; a failure after the state is
/// saved leaves a state `undo` can work from.
pub fn create(k: &mut Kernel, opts: &CreateOptions) -> anyhow::Result<CreateReport> {
    let c = check(k, opts)?;
    let h = c.h.clone();
    let rt_dir = format!("{}/{}", c.parent, opts.names.rt);
    let nrt_dir = format!("{}/{}", c.parent, opts.names.nrt);
    let mut files = cgroup_plan(k, &c, &rt_dir, &nrt_dir);
    let knob_changes = knobs::plan(k, &opts.knobs, &c.rt, &c.nrt);
    files.extend(knob_changes);
    let mut state = State {
        version: STATE_VERSION,
        phase: Phase::Applying,
        created_unix: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        hierarchy: h.clone(),
        parent: c.parent.clone(),
        rt_dir: rt_dir.clone(),
        nrt_dir: nrt_dir.clone(),
        rt_cpus: c.rt.to_list(),
        nrt_cpus: c.nrt.to_list(),
        dirs: vec![rt_dir.clone(), nrt_dir.clone()],
        files,
        tasks: vec![],
        refused: Default::default(),
    };
    let mut rep = CreateReport {
        dry_run: k.dry_run,
        hierarchy: h.label().into(),
        parent: c.parent.clone(),
        rt_dir: rt_dir.clone(),
        nrt_dir: nrt_dir.clone(),
        rt_cpus: state.rt_cpus.clone(),
        nrt_cpus: state.nrt_cpus.clone(),
        state_file: c.state_file.clone(),
        notes: c.notes.clone(),
        ..Default::default()
    };
    save(k, &state, &c.state_file)?;
    match apply(k, &mut state, &c, &mut rep, &opts.knobs) {
        Ok(()) => {}
        Err(Step::Killed(e)) => return Err(anyhow!(e)),
        Err(Step::Fatal(e)) => {
            // Put everything back now rather than leave half a partition.
            let u = crate::undo::undo_state(k, &state);
            return Err(if u.errors.is_empty() {
                let _ = State::remove(&k.root, &c.state_file);
                e.context("partition create failed; every change made so far was undone")
            } else {
                e.context(format!(
                    "partition create failed and undoing it failed too ({}); \
                     state kept in {}: run `rtshield partition undo`",
                    u.errors.join("; "),
                    c.state_file
                ))
            });
        }
    }
    state.phase = Phase::Complete;
    state.refused = rep
        .refused_files
        .iter()
        .map(|r| (r.what.clone(), r.reason.clone()))
        .collect();
    save(k, &state, &c.state_file)?;
    rep.plan = std::mem::take(&mut k.log);
    rep.warnings = manager_warnings(&k.root, &h, opts.knobs.irq);
    let (bp, note) = boot_advice(&k.root, &c.rt, &c.nrt);
    rep.boot_params = bp;
    rep.notes.extend(note);
    Ok(rep)
}

fn save(k: &mut Kernel, s: &State, path: &str) -> anyhow::Result<()> {
    if k.dry_run {
        k.log.push(format!("save state {path}"));
        return Ok(());
    }
    s.save(&k.root, path)
        .with_context(|| format!("cannot write the state file {path}"))
}

fn fatal(e: std::io::Error, what: &str) -> Step {
    if is_simulated_kill(&e) {
        Step::Killed(e)
    } else {
        Step::Fatal(anyhow!(e).context(what.to_string()))
    }
}

fn apply(
    k: &mut Kernel,
    state: &mut State,
    c: &Checked,
    rep: &mut CreateReport,
    knobs: &Knobs,
) -> Result<(), Step> {
    let h = c.h.clone();
    for d in state.dirs.clone() {
        k.mkdir(&d)
            .map_err(|e| fatal(e, &format!("cannot create cgroup {d}")))?;
    }
    let files = state.files.clone();
    // Cgroup settings first: tasks can only enter a cpuset with CPUs.
    for f in files.iter().filter(|f| f.knob == Knob::Cgroup) {
        let name = f.path.rsplit('/').next().unwrap_or("");
        if name == "cpuset.cpus.partition" {
            v2_partition(k, f, rep)?;
            continue;
        }
        match k.write(&f.path, &f.new) {
            Ok(()) => rep.changed.push(f.clone()),
            Err(e) if is_simulated_kill(&e) => return Err(Step::Killed(e)),
            // Exclusivity needs an exclusive parent; a sub-cgroup parent
            // often is not. The partition still works, without the guarantee.
            Err(e) if name.ends_with("cpu_exclusive") => rep.notes.push(format!(
                "{}: not set ({}): the parent cgroup is not cpu_exclusive, so rt CPUs are not guaranteed exclusive",
                f.path,
                errno(&e).map_or("error", errno_name)
            )),
            Err(e) if name == "cpuset.cpus.exclusive" => rep.notes.push(if errno(&e) == Some(libc::ENOENT) {
                "this kernel has no cpuset.cpus.exclusive (before 6.7); relying on cpuset.cpus".to_string()
            } else {
                format!(
                    "cpuset.cpus.exclusive refused ({}): the parent does not hand out these CPUs exclusively",
                    errno(&e).map_or("error", errno_name)
                )
            }),
            Err(e) => return Err(fatal(e, &format!("cannot write {}", f.path))),
        }
    }
    move_tasks(k, state, c, rep, &h, knobs.move_init)?;
    for f in files.iter().filter(|f| f.knob != Knob::Cgroup) {
        match k.write(&f.path, &f.new) {
            Ok(()) => rep.changed.push(f.clone()),
            Err(e) if is_simulated_kill(&e) => return Err(Step::Killed(e)),
            Err(e) => rep.refused_files.push(Refusal {
                what: f.path.clone(),
                name: describe_file(k, &f.path),
                reason: refusal_reason(f, &e, &state.rt_cpus),
            }),
        }
    }
    if knobs.profile == crate::knobs::Profile::Partrt && knobs.sysctl && !knobs.keep.hotplug {
        hotplug_cycle(k, state, c, rep, &files)?;
    }
    Ok(())
}

/// partrt's last step: take every rt CPU offline, then online again, so
/// timers and kernel work bound to them move to the other CPUs; a v1
/// cpuset loses an offlined CPU for good, so rt's settings are written
/// again. Nothing to undo (the CPUs end online). Refusals are reported.
fn hotplug_cycle(
    k: &mut Kernel,
    state: &State,
    c: &Checked,
    rep: &mut CreateReport,
    files: &[FileChange],
) -> Result<(), Step> {
    let cpus: Vec<u32> =
        c.rt.iter()
            .filter(|&n| k.exists(&rtshield_sys::kpath::cpu_online(n)))
            .collect();
    if cpus.is_empty() {
        rep.notes.push(
            "hotplug cycle skipped: the rt CPUs cannot be taken offline (no cpuN/online file)"
                .into(),
        );
        return Ok(());
    }
    let mut done = vec![];
    for val in ["0\n", "1\n"] {
        for &n in &cpus {
            let p = rtshield_sys::kpath::cpu_online(n);
            match k.write(&p, val) {
                Ok(()) => {}
                Err(e) if is_simulated_kill(&e) => return Err(Step::Killed(e)),
                Err(e) => {
                    rep.refused_files.push(Refusal {
                        what: p.clone(),
                        name: format!("CPU {n} hotplug"),
                        reason: format!("{}: {e}", errno(&e).map_or("error", errno_name)),
                    });
                    continue;
                }
            }
            if val == "1\n" {
                done.push(n);
            }
        }
    }
    for f in files
        .iter()
        .filter(|f| f.knob == Knob::Cgroup && f.path.starts_with(&format!("{}/", state.rt_dir)))
    {
        let name = f.path.rsplit('/').next().unwrap_or("");
        if name.ends_with("cpus") || name.ends_with("mems") || name.ends_with("cpu_exclusive") {
            let _ = k.write(&f.path, &f.new);
        }
    }
    if !done.is_empty() {
        rep.notes.push(format!(
            "CPU {} taken offline and back online (partrt's hotplug cycle: timers and \
             kernel work bound to them moved away); rt's cpuset written again",
            CpuSet::from_iter(done).to_list()
        ));
    }
    Ok(())
}

/// `irq 36 (virtio1-req.0)` for IRQ files; the path otherwise.
pub(crate) fn describe_file(k: &Kernel, path: &str) -> String {
    if let Some(n) = rtshield_sys::kpath::irq_of_path(path) {
        let action = rtshield_sys::irq_actions(&k.root, n);
        return format!(
            "irq {n}{}",
            action.map(|a| format!(" ({a})")).unwrap_or_default()
        );
    }
    path.to_string()
}

/// Make rt a partition, reading the result back: `isolated invalid
/// (reason)` (or an error, on older kernels) means refused; fall back to
/// `root`, then to a plain `member`, saying why each time.
fn v2_partition(k: &mut Kernel, f: &FileChange, rep: &mut CreateReport) -> Result<(), Step> {
    if k.dry_run {
        let _ = k.write(&f.path, &f.new);
        return Ok(());
    }
    for want in ["isolated", "root", "member"] {
        let res = k.write(&f.path, &format!("{want}\n"));
        if let Err(e) = &res {
            if is_simulated_kill(e) {
                return Err(Step::Killed(std::io::Error::other(e.to_string())));
            }
        }
        let got = k
            .read(&f.path)
            .map(|s| s.trim().to_string())
            .unwrap_or_default();
        let refusal = match &res {
            Err(e) => Some(format!(
                "`{want}` refused ({})",
                errno(e).map_or("error", errno_name)
            )),
            Ok(()) if got.contains("invalid") || !got.starts_with(want) => Some(format!("`{got}`")),
            Ok(()) => None,
        };
        match (refusal, want) {
            (None, _) => {
                rep.changed.push(FileChange {
                    new: format!("{want}\n"),
                    ..f.clone()
                });
                rep.v2_partition = Some(got);
                return Ok(());
            }
            (Some(r), "isolated") => rep.notes.push(format!(
                "the kernel refused an isolated partition: {r}; falling back to `root` \
                 (own scheduling domain, load balancing kept inside it)"
            )),
            (Some(r), "root") => rep.notes.push(format!(
                "the kernel refused a root partition too: {r}; rt stays a member cpuset \
                 (tasks are confined, but its CPUs still share the parent's scheduling domain)"
            )),
            (Some(r), _) => rep.notes.push(format!("even `member` was refused: {r}")),
        }
    }
    rep.v2_partition = k.read(&f.path).ok().map(|s| s.trim().to_string());
    Ok(())
}

fn move_tasks(
    k: &mut Kernel,
    state: &mut State,
    c: &Checked,
    rep: &mut CreateReport,
    h: &Hierarchy,
    move_init: bool,
) -> Result<(), Step> {
    let src = h.tasks_file(&c.parent);
    let dst = h.tasks_file(&state.nrt_dir);
    let mut refused: BTreeSet<u32> = BTreeSet::new();
    let mut gone: BTreeSet<u32> = BTreeSet::new();
    // PID 1 (and its threads) stays where it is unless asked: the
    // partitioning article keeps init in the root group (partrt moves it).
    if !move_init {
        let mut init: BTreeSet<u32> = k
            .root
            .read_dir_names(rtshield_sys::kpath::task_dir(1))
            .unwrap_or_default()
            .iter()
            .filter_map(|t| t.parse().ok())
            .collect();
        init.insert(1);
        let src_ids = parse_task_ids(&k.read_opt(&src).unwrap_or_default());
        if src_ids.iter().any(|t| init.contains(t)) {
            rep.notes.push(format!(
                "PID 1 ({}) kept in {} (use --move-init to move it into nrt too)",
                rtshield_sys::task_comm(&k.root, 1).unwrap_or_else(|| "init".into()),
                c.parent
            ));
        }
        gone.extend(init);
    }
    for pass in 1..=MAX_PASSES {
        let ids: Vec<u32> = parse_task_ids(
            &k.read(&src)
                .map_err(|e| fatal(e, &format!("cannot read {src}")))?,
        )
        .into_iter()
        .filter(|t| !refused.contains(t) && !gone.contains(t))
        .collect();
        rep.move_passes = pass;
        if ids.is_empty() {
            return Ok(());
        }
        // Record where each one comes from before moving it.
        let infos: Vec<(u32, Option<TaskInfo>)> = ids
            .iter()
            .map(|&t| (t, TaskInfo::read(&k.root, t)))
            .collect();
        for (t, info) in &infos {
            if !state.tasks.iter().any(|m| m.tid == *t) {
                state.tasks.push(TaskMove {
                    tid: *t,
                    name: info.as_ref().map(|i| i.name.clone()).unwrap_or_default(),
                    from: c.parent.clone(),
                });
            }
        }
        if k.dry_run {
            k.log.push(format!(
                "move {} tasks of {} to {} (then again until none is left)",
                ids.len(),
                c.parent,
                state.nrt_dir
            ));
            rep.moved_tasks = ids.len();
            return Ok(());
        }
        state
            .save(&k.root, &c.state_file)
            .map_err(|e| Step::Fatal(anyhow!(e).context("cannot update the state file")))?;
        for (t, info) in infos {
            match k.write(&dst, &format!("{t}\n")) {
                Ok(()) => rep.moved_tasks += 1,
                Err(e) if is_simulated_kill(&e) => return Err(Step::Killed(e)),
                Err(e) if errno(&e) == Some(libc::ESRCH) => {
                    gone.insert(t);
                }
                Err(e) => {
                    refused.insert(t);
                    let info = info.unwrap_or(TaskInfo {
                        tid: t,
                        ..Default::default()
                    });
                    rep.refused_tasks.push(Refusal {
                        what: t.to_string(),
                        name: info.name.clone(),
                        reason: crate::tasks::refusal_reason(&info, errno(&e)),
                    });
                }
            }
        }
    }
    rep.notes.push(format!(
        "tasks kept appearing in {} after {MAX_PASSES} passes (a fork storm?); \
         run `rtshield partition move nrt PID…` for the rest",
        c.parent
    ));
    Ok(())
}

/// Why a knob write failed, in terms the user can act on.
fn refusal_reason(f: &FileChange, e: &std::io::Error, rt: &str) -> String {
    let Some(c) = errno(e) else {
        return e.to_string();
    };
    let base = format!(
        "{}: {}",
        errno_name(c),
        std::io::Error::from_raw_os_error(c)
    );
    if f.knob == Knob::Irq && (c == libc::EPERM || c == libc::EIO) {
        format!(
            "{base} — the kernel manages this IRQ's affinity (a managed or per-CPU IRQ, \
             e.g. a multi-queue device's); only the boot parameter isolcpus=managed_irq,{rt} keeps it off"
        )
    } else {
        base
    }
}
