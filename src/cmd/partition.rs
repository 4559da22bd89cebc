//! `rtshield partition create|undo|status|list|run|move`.

use crate::cli::Global;
use rtshield_isolation::Knob;
use rtshield_partition::{status, undo, CreateOptions, CreateReport, Knobs, UndoReport};
use rtshield_sys::set_scheduler;
use rtshield_text::{errln, outln};
use rtshield_vocab::Policy;
use rtshield_vocab::{CpuSet, InputError};

/// How the command opens the kernel. Test builds (the binary's
/// `fake-kernel` feature, enabled only from its own dev-dependencies)
/// emulate the kernel on a fake `--sysroot` tree when the test asks with
/// `RTSHIELD_FAKE_KERNEL=1`; release builds contain no emulation at all.
pub(crate) fn open_kernel(
    root: rtshield_sys::Root,
    dry_run: bool,
) -> std::io::Result<rtshield_partition::Kernel> {
    #[cfg(feature = "fake-kernel")]
    if std::env::var_os("RTSHIELD_FAKE_KERNEL").is_some() {
        return rtshield_fake_kernel::kernel(root, dry_run);
    }
    rtshield_partition::Kernel::open(root, dry_run)
}

#[derive(clap::Subcommand, Debug)]
pub(crate) enum Command {
    /// Create the rt partition with CPUS and nrt with the rest; move tasks, IRQs, workqueues off rt.
    Create(CreateArgs),
    /// Put back exactly what create changed (idempotent; works after an interrupted create).
    Undo {
        /// The cgroup that was partitioned (as given to create --parent).
        #[arg(long, value_name = "CGROUP")]
        parent: Option<String>,
        /// Print what would be written, change nothing.
        #[arg(long)]
        dry_run: bool,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Partitions, their CPUs and tasks.
    Status {
        /// The cgroup that was partitioned (as given to create --parent).
        #[arg(long, value_name = "CGROUP")]
        parent: Option<String>,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Partitions rtshield manages (one line each).
    List {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        /// `partrt`: partrt's format, `Name:rt CPUs: 3` per cpuset (for scripts written for partrt).
        #[arg(long, value_name = "NAME", default_value = "default")]
        profile: String,
    },
    /// Start a command inside a partition: `partition run rt --fifo 80 -- ./app`.
    Run {
        /// rt or nrt.
        partition: String,
        #[arg(long, value_name = "CGROUP")]
        parent: Option<String>,
        /// Run it SCHED_FIFO at this priority (1-99).
        #[arg(long, value_name = "PRIO", conflicts_with = "rr", value_parser = clap::value_parser!(i32).range(1..=99))]
        fifo: Option<i32>,
        /// Run it SCHED_RR at this priority (1-99).
        #[arg(long, value_name = "PRIO", value_parser = clap::value_parser!(i32).range(1..=99))]
        rr: Option<i32>,
        /// Pin it to these CPUs of the partition (a list or a partrt hex mask 0x8; partrt's `run -c`).
        #[arg(short = 'c', long, value_name = "CPUS", value_parser = parse_cpus)]
        cpus: Option<CpuSet>,
        /// The command and its arguments (after `--`).
        #[arg(last = true, required = true, value_name = "CMD")]
        cmd: Vec<String>,
    },
    /// Move processes (all their threads) into a partition: `move rt PID…`
    /// or `move PID… rt` (both orders are accepted).
    Move {
        /// rt or nrt, then the PIDs (or the PIDs, then rt or nrt).
        #[arg(required = true, value_name = "rt|nrt PID…")]
        args: Vec<String>,
        /// The partitioned cgroup: only processes inside it (or below) are moved.
        #[arg(long, value_name = "CGROUP")]
        parent: Option<String>,
        /// Move PID 1 or a kernel thread too (still only inside --parent's subtree).
        #[arg(long)]
        force: bool,
        /// Then pin them to these CPUs of the partition (a list or a partrt hex mask; partrt's `move -c`).
        #[arg(short = 'c', long, value_name = "CPUS", value_parser = parse_cpus)]
        cpus: Option<CpuSet>,
    },
}

/// `-c CPUS`: a CPU list or a hex mask (`0x8`), as `create` takes them.
fn parse_cpus(s: &str) -> Result<CpuSet, String> {
    CpuSet::parse(s).map_err(|e| e.to_string())
}

#[derive(clap::Args, Debug)]
pub(crate) struct CreateArgs {
    /// CPUs for the rt partition: a list (3, 2-3, 1,3-5) or a partrt hex mask (0x8).
    pub(crate) cpus: String,
    /// Partition this cgroup (path below the cpuset mount) instead of the whole
    /// machine; then IRQs, workqueues and sysctls are left alone unless --with lists them.
    #[arg(long, value_name = "CGROUP")]
    pub(crate) parent: Option<String>,
    /// Knobs to leave alone: irq, workqueue, sysctl, rt-throttle (comma-separated).
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub(crate) skip: Vec<String>,
    /// With --parent: machine-wide knobs to tune anyway (irq, workqueue, sysctl).
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub(crate) with: Vec<String>,
    /// `off` sets sched_rt_runtime_us=-1 (no RT throttling; restored by undo).
    #[arg(long, value_name = "on|off", default_value = "on")]
    pub(crate) rt_throttle: String,
    /// Whose sysctl values to write: default (rtshield's), partrt, tuned
    /// (cpu-partitioning). See docs/manual/partition.md for the table.
    #[arg(long, value_name = "NAME", default_value = "default")]
    pub(crate) profile: String,
    /// Move PID 1 (init) into nrt too, as partrt does (default: it stays in the root group).
    #[arg(long)]
    pub(crate) move_init: bool,
    /// Name the rt cpuset's directory NAME (partrt's `-r NAME`; default rt).
    #[arg(long, value_name = "NAME")]
    pub(crate) rt_name: Option<String>,
    /// Name the nrt cpuset's directory NAME (partrt's `-n NAME`; default nrt).
    #[arg(long, value_name = "NAME")]
    pub(crate) nrt_name: Option<String>,
    /// Print every write it would make, change nothing.
    #[arg(long)]
    pub(crate) dry_run: bool,
    /// Print the outcome (every write, refusals, advice) as JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

pub(crate) fn run(c: Command, g: &Global) -> anyhow::Result<i32> {
    let root = g.root();
    match c {
        Command::Create(a) => create(a, root),
        Command::Undo {
            parent,
            dry_run,
            json,
        } => {
            let parent = chosen_parent(&root, parent)?;
            let mut k = open_kernel(root, dry_run)?;
            let rep = undo(&mut k, parent.as_deref())?;
            if json {
                println!("{}", serde_json::to_string_pretty(&rep)?);
            } else {
                print_undo(&rep);
            }
            Ok(if rep.errors.is_empty() { 0 } else { 1 })
        }
        Command::Status { parent, json } => {
            let parent = chosen_parent(&root, parent)?;
            let k = open_kernel(root, false)?;
            let st = status(&k, parent.as_deref())?;
            if json {
                println!("{}", serde_json::to_string_pretty(&st)?);
                return Ok(0);
            }
            print_status(&st);
            Ok(0)
        }
        Command::List { json, profile } => list(&root, json, &profile),
        Command::Move {
            args,
            parent,
            force,
            cpus,
        } => {
            let (partition, pids) = move_args(&args)?;
            let mut k = open_kernel(root, false)?;
            // Every process checked (scope, PID 1, kernel threads, the
            // CPUs) before the first one moves.
            let plan =
                rtshield_partition::plan_move(&k, parent.as_deref(), &partition, &pids, force)?;
            if let Some(c) = &cpus {
                rtshield_partition::check_cpu_subset(&k, parent.as_deref(), &partition, c)?;
            }
            let mut code = 0;
            for (pid, tids) in &plan.moves {
                let o = rtshield_partition::move_threads(&mut k, &plan.h, &plan.dir, *pid, tids);
                outln!("{pid}: {} thread(s) moved to {partition}", o.moved);
                for r in &o.refused {
                    outln!("  refused: {r}");
                    code = 1;
                }
                if let Some(c) = &cpus {
                    for tid in tids {
                        if let Err(e) = k.set_affinity(*tid, c) {
                            println!("  {tid}: cannot pin to CPUs {}: {e}", c.to_list());
                            code = 1;
                        }
                    }
                    println!("{pid}: pinned to CPUs {}", c.to_list());
                }
            }
            Ok(code)
        }
        Command::Run {
            partition,
            parent,
            fifo,
            rr,
            cpus,
            cmd,
        } => {
            let mut k = open_kernel(root, false)?;
            if let Some(c) = &cpus {
                rtshield_partition::check_cpu_subset(&k, parent.as_deref(), &partition, c)?;
            }
            rtshield_partition::enter_partition(&mut k, parent.as_deref(), &partition)?;
            if let Some(c) = &cpus {
                // This process, which becomes the command: after joining
                // the cpuset, whose CPUs it would otherwise get.
                rtshield_sys::set_affinity(0, c)
                    .map_err(|e| anyhow::anyhow!("cannot pin to CPUs {}: {e}", c.to_list()))?;
            }
            let sched = fifo
                .map(|p| (Policy::Fifo, p))
                .or(rr.map(|p| (Policy::Rr, p)));
            if let Some((pol, prio)) = sched {
                set_scheduler(0, pol, prio).map_err(|e| {
                    anyhow::anyhow!(rtshield_sys::fifo_refusal_reason(&e, None)).context(format!(
                        "cannot set SCHED_{} {prio}",
                        pol.name().to_uppercase()
                    ))
                })?;
            }
            use std::os::unix::process::CommandExt;
            let e = std::process::Command::new(&cmd[0]).args(&cmd[1..]).exec();
            Err(anyhow::anyhow!(e).context(format!("cannot run {}", cmd[0])))
        }
    }
}

/// `--parent` as given, or the only rtshield partition's (said on stderr,
/// so `--json` output stays clean).
fn chosen_parent(
    root: &rtshield_sys::Root,
    given: Option<String>,
) -> Result<Option<String>, InputError> {
    let p = rtshield_partition::pick_parent(root, given.as_deref())?;
    if given.is_none() {
        if let Some(p) = &p {
            errln!("the only rtshield partition is under --parent {p}: acting on it");
        }
    }
    Ok(p)
}

/// `rt|nrt PID…` (the order) or `PID… rt|nrt` (SPEC §1's): the
/// partition is the first or the last word that is not a number (`rt`,
/// `nrt`, or the name create gave it), every other one a PID.
fn move_args(args: &[String]) -> Result<(String, Vec<u32>), InputError> {
    let is_part = |s: &String| s.parse::<u32>().is_err();
    let (part, rest) = match (args.first(), args.last()) {
        (Some(f), _) if is_part(f) => (f, &args[1..]),
        (_, Some(l)) if is_part(l) => (l, &args[..args.len() - 1]),
        _ => {
            return Err(InputError::new(format!(
                "partition move: no partition named in '{}' (expected `move rt|nrt PID…` or `move PID… rt|nrt`)",
                args.join(" ")
            )))
        }
    };
    let pids = rest
        .iter()
        .map(|p| {
            // PIDs are 1..=4194304 (the kernel's PID_MAX_LIMIT); 0 is no process.
            p.parse::<u32>()
                .ok()
                .filter(|n| (1..=4_194_304).contains(n))
                .ok_or_else(|| {
                    InputError::new(format!(
                        "partition move: '{p}' is not a PID 1..4194304 (expected `move rt|nrt PID…` or `move PID… rt|nrt`)"
                    ))
                })
        })
        .collect::<Result<Vec<u32>, _>>()?;
    if pids.is_empty() {
        return Err(InputError::new("partition move: no PID given"));
    }
    Ok((part.clone(), pids))
}

fn create(a: CreateArgs, root: rtshield_sys::Root) -> anyhow::Result<i32> {
    let cpus = CpuSet::parse(&a.cpus).map_err(|e| InputError::new(e.to_string()))?;
    let rt_off = match a.rt_throttle.as_str() {
        "on" => false,
        "off" => true,
        o => {
            return Err(
                InputError::new(format!("--rt-throttle: '{o}' (expected on or off)")).into(),
            )
        }
    };
    let profile = rtshield_partition::Profile::parse(&a.profile)?;
    let mut knobs = Knobs::resolve(a.parent.is_some(), &a.skip, &a.with, rt_off)
        .map_err(|e| InputError::new(format!("--skip/--with: {e}")))?
        .with_profile(profile, &a.skip);
    knobs.move_init = a.move_init;
    let names = rtshield_partition::SetNames::new(
        a.rt_name.as_deref(),
        a.nrt_name.as_deref(),
        ["--rt-name", "--nrt-name"],
    )?;
    let mut k = open_kernel(root, a.dry_run)?;
    let rep = rtshield_partition::create(
        &mut k,
        &CreateOptions {
            cpus,
            parent: a.parent,
            knobs,
            names,
        },
    )
    .map_err(|e| bare_number_hint(e, &a.cpus))?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&rep)?);
    } else {
        print_create(&rep);
    }
    Ok(0)
}

/// partrt reads `create 8` as the hex mask 0x8; rtshield reads a list. When
/// a bare number names a CPU that does not exist, say so.
fn bare_number_hint(e: anyhow::Error, arg: &str) -> anyhow::Error {
    let t = arg.trim();
    let bare = !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    match e.downcast_ref::<InputError>() {
        Some(ie)
            if bare
                && ie.to_string().starts_with("CPU ")
                && ie.to_string().contains("does not exist") =>
        {
            let mask = u64::from_str_radix(t, 16)
                .ok()
                .map(|m| {
                    let cpus: CpuSet = (0..64).filter(|b| m & (1u64 << b) != 0).collect();
                    format!(
                        " (as partrt's hex mask 0x{t} it would be CPUs {})",
                        cpus.to_list()
                    )
                })
                .unwrap_or_default();
            InputError::new(format!(
                "{ie}; `{t}` is read as a CPU list (`2` = CPU 2, `1,3-5`), not as partrt's \
                 hex mask: write `0x{t}` for the mask{mask}"
            ))
            .into()
        }
        _ => e,
    }
}

fn print_create(r: &CreateReport) {
    if r.dry_run {
        outln!("Dry run: nothing was changed. These writes would be made, in order:");
        for l in &r.plan {
            outln!("  {l}");
        }
        outln!();
    }
    outln!(
        "{} {} ({}):",
        if r.dry_run {
            "Would partition"
        } else {
            "Partitioned"
        },
        r.parent,
        r.hierarchy
    );
    outln!("  rt   CPUs {:<8} {}", r.rt_cpus, r.rt_dir);
    outln!("  nrt  CPUs {:<8} {}", r.nrt_cpus, r.nrt_dir);
    if let Some(p) = &r.v2_partition {
        outln!("  rt cpuset.cpus.partition = {p}");
    }
    if !r.dry_run {
        outln!(
            "Moved {} task(s) to nrt in {} pass(es).",
            r.moved_tasks,
            r.move_passes
        );
    }
    if !r.refused_tasks.is_empty() {
        outln!(
            "Tasks the kernel keeps where they are ({}):",
            r.refused_tasks.len()
        );
        for t in &r.refused_tasks {
            outln!("  {:>7} {:<24} {}", t.what, t.name, t.reason);
        }
    }
    let count = |k: Knob| r.changed.iter().filter(|c| c.knob == k).count();
    if !r.dry_run {
        outln!(
            "Changed: {} cgroup file(s), {} IRQ affinit(ies), {} workqueue mask(s), {} sysctl(s){}.",
            count(Knob::Cgroup),
            count(Knob::Irq),
            count(Knob::Workqueue),
            count(Knob::Sysctl),
            if count(Knob::RtThrottle) > 0 {
                ", RT throttling off"
            } else {
                ""
            }
        );
    }
    if !r.refused_files.is_empty() {
        outln!("Refused by the kernel ({}):", r.refused_files.len());
        for f in &r.refused_files {
            outln!("  {:<28} {}  ({})", f.name, f.reason, f.what);
        }
    }
    for n in &r.notes {
        outln!("note: {n}");
    }
    for w in &r.warnings {
        outln!("warning: {w}");
    }
    if !r.boot_params.is_empty() {
        outln!("Boot parameters that would complete the isolation (cannot be set at run time):");
        for b in &r.boot_params {
            let tag = if b.present {
                "present"
            } else if !b.available {
                "n/a"
            } else {
                "missing"
            };
            outln!("  [{tag:<7}] {:<36} {}", b.param, b.why);
        }
        let missing: Vec<&str> = r
            .boot_params
            .iter()
            .filter(|b| !b.present && b.available)
            .map(|b| b.param.as_str())
            .collect();
        if !missing.is_empty() {
            outln!("  add to the kernel command line: {}", missing.join(" "));
        }
    }
    if !r.dry_run {
        outln!(
            "State saved in {}; undo with `rtshield partition undo{}`.",
            r.state_file,
            parent_flag(r)
        );
    }
}

fn parent_flag(r: &CreateReport) -> String {
    if r.state_file.ends_with("/partition.json") {
        String::new()
    } else {
        format!(" --parent {}", r.parent)
    }
}

fn print_undo(r: &UndoReport) {
    if r.nothing_to_undo {
        outln!("Nothing to undo (no state file {}).", r.state_file);
        return;
    }
    if r.dry_run {
        outln!("Dry run: nothing was changed. These writes would be made, in order:");
        for l in &r.plan {
            outln!("  {l}");
        }
        return;
    }
    if r.was_incomplete {
        outln!(
            "The create recorded in {} had been interrupted; undoing what it did.",
            r.state_file
        );
    }
    outln!(
        "Returned {} task(s), removed {} cgroup(s), restored {} file(s) ({} already had their old value).",
        r.tasks_returned,
        r.removed_dirs.len(),
        r.restored.len(),
        r.unchanged
    );
    if !r.vanished.is_empty() {
        outln!(
            "Gone since create, nothing to restore: {}",
            r.vanished.join(", ")
        );
    }
    if r.errors.is_empty() {
        outln!("Everything is back as it was; state file removed.");
    } else {
        outln!(
            "Could not restore ({}); state kept, run undo again:",
            r.errors.len()
        );
        for e in &r.errors {
            outln!("  {e}");
        }
    }
}

fn list(root: &rtshield_sys::Root, json: bool, profile: &str) -> anyhow::Result<i32> {
    let partrt = match profile {
        "default" => false,
        "partrt" => true,
        p => {
            return Err(
                InputError::new(format!("--profile: '{p}' (expected default or partrt)")).into(),
            )
        }
    };
    let (out, note) = rtshield_partition::list_partitions(root)?;
    if let Some(n) = &note {
        errln!("note: {n}");
    }
    if partrt && !json {
        print_partrt_lines(&out);
        return Ok(0);
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else if out.is_empty() && note.is_some() {
        outln!("no rt/nrt cpuset found");
    } else if out.is_empty() {
        outln!("no partition managed by rtshield");
    } else {
        for o in &out {
            outln!(
                "{}  rt {}  nrt {}  ({}{})",
                o.parent,
                o.rt_cpus,
                o.nrt_cpus,
                o.hierarchy,
                match o.complete {
                    Some(true) => "",
                    Some(false) => ", INCOMPLETE: run undo",
                    None => ", state not readable",
                }
            );
        }
    }
    Ok(0)
}

/// partrt's `list` lines for every rtshield partition, rt first:
/// `Name:<cpuset> CPUs: <list>` (the cpusets' own names, `-r`/`-n`'s
/// when create was given them), or `Could not find any partitions`.
fn print_partrt_lines(out: &[rtshield_partition::ListedPartition]) {
    if out.is_empty() {
        outln!("Could not find any partitions");
    }
    for o in out {
        let name = |p: &str| match o.below_mount.as_str() {
            "" => p.to_string(),
            b => format!("{b}/{p}"),
        };
        outln!("Name:{} CPUs: {}", name(&o.names.rt), o.rt_cpus);
        outln!("Name:{} CPUs: {}", name(&o.names.nrt), o.nrt_cpus);
    }
}

/// `partrt list` (the partrt entry point).
pub(crate) fn print_partrt_list(root: &rtshield_sys::Root) -> anyhow::Result<i32> {
    let (out, note) = rtshield_partition::list_partitions(root)?;
    if let Some(n) = &note {
        errln!("note: {n}");
    }
    print_partrt_lines(&out);
    Ok(0)
}

/// `partition status` as text: the hierarchy, the state file, each
/// partition with its tasks (rt's listed), and what is left to do.
fn print_status(st: &rtshield_partition::Status) {
    outln!("{} at {}, parent {}", st.hierarchy, st.mount, st.parent);
    outln!(
        "state: {} ({}{})",
        st.state,
        st.state_file,
        if st.saved_files > 0 {
            format!(", {} saved values", st.saved_files)
        } else {
            String::new()
        }
    );
    if let Some(n) = &st.state_note {
        outln!("note: {n}");
    }
    if st.partitions.is_empty() {
        outln!("no rtshield partition");
    }
    if let Some(f) = &st.foreign {
        outln!("made by another tool: {}", f.describe());
    }
    for p in &st.partitions {
        outln!(
            "{:<4} CPUs {:<8} {} task(s){}  {}",
            p.name,
            p.cpus.as_deref().unwrap_or("?"),
            p.tasks.len(),
            p.partition
                .as_ref()
                .map(|x| format!(", partition {x}"))
                .unwrap_or_default(),
            p.dir
        );
        if p.name == "rt" {
            for t in &p.tasks {
                outln!("       {:>7} {}", t.tid, t.name);
            }
        }
    }
    outln!("{} task(s) left in the parent", st.parent_tasks);
    if st.state == "incomplete" {
        outln!("create was interrupted: run `rtshield partition undo`");
    }
}
