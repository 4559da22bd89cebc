//! `rtshield partrt ARGS…` (or rtshield started under the name `partrt`):
//! partrt's own command line (OpenEneaLinux rt-tools), for scripts and
//! test suites written for partrt. It reads partrt's grammar — global
//! `-r NAME`/`-n NAME` before the sub-command, per-command getopts letters,
//! hex CPU masks, `run` without `--`, `move PID PARTITION` — and makes the
//! same calls as `rtshield partition` with the `partrt` profile, PID 1
//! moved as partrt does. docs/manual/partition.md maps every option.

use crate::cli::Global;
use crate::cmd::partition::open_kernel;
use rtshield_partition::{CreateOptions, Keep, Knobs, Profile, SetNames};
use rtshield_sys::set_scheduler;
use rtshield_text::{errln, outln};
use rtshield_vocab::{CpuSet, InputError, Policy};

#[derive(clap::Args, Debug)]
#[command(disable_help_flag = true, disable_version_flag = true)]
pub(crate) struct Args {
    /// partrt's arguments: `[-r NAME] [-n NAME] create|undo|run|move|list …` (`-h` for its usage).
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        num_args = 0..,
        value_name = "ARGS"
    )]
    args: Vec<String>,
}

const USAGE: &str = "\
partrt (rtshield) - Create real time CPU partitions on SMP Linux

Usage:
partrt [options] <cmd>
partrt [options] create [cmd-options] <cpumask>
partrt [options] undo [cmd-options]
partrt [options] run [cmd-options] <partition> <command>
partrt [options] move [cmd-options] <pid> <partition>
partrt [options] list [cmd-options]

partrt's command line, run by rtshield: the same commands as
`rtshield partition` with `--profile partrt --move-init`
(docs/manual/partition.md, \"partrt's command line\").

Options:
        -r NAME      Name the real time partition 'NAME' (default: rt)
        -n NAME      Name the non-real time partition 'NAME' (default: nrt)
        -v, -x       Accepted; no effect
        -V           Show version information and exit
        -h           Show this help text and exit

create [-a] [-b] [-c] [-d] [-m] [-r] [-t] [-u] [-w] <cpumask>:
        <cpumask>    hexadecimal mask of the real time CPUs (8 or 0x8: CPU 3)
        -a           Keep the writeback workqueue's NUMA affinity
        -b           Do not migrate the block (writeback) workqueue
        -c           Do not disable machine check polling (x86)
        -d           Accepted (tick deferment: not in mainline kernels)
        -m           Do not delay vmstat housekeeping
        -r           Do not restart hotplug CPUs
        -t           Do not disable real-time throttling
        -u           Do not migrate the other unbound workqueues
        -w           Do not disable the watchdog

undo [-s file]:
        Restores what create changed, from rtshield's own state file
        (/run/rtshield). -s is accepted and the file is never read.

run [-c <cpumask>] [-f <prio> | -r <prio> | -o] <partition> <command>:
        -c <cpumask> Run on these CPUs of the partition (hexadecimal)
        -f <prio>    SCHED_FIFO at <prio>; -r <prio> SCHED_RR; -o SCHED_OTHER

move [-c <cpumask>] <pid> <partition>:
        Move every thread of <pid>, then pin it to <cpumask> if given

list:
        Name:<partition> CPUs: <list>, one line per partition
";

/// One option letter and its value.
type Opt = (char, Option<String>);

/// partrt's getopts over `args`: the letters of `spec` that take a value
/// end with `:`. Stops at the first word that is not an option (or after
/// `--`); returns the options in order and the rest.
fn getopts<'a>(
    args: &'a [String],
    spec: &str,
    cmd: &str,
) -> Result<(Vec<Opt>, &'a [String]), InputError> {
    let takes = |c: char| spec.find(c).map(|i| spec[i + 1..].starts_with(':'));
    let mut out = vec![];
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        if a == "--" {
            i += 1;
            break;
        }
        if !a.starts_with('-') || a == "-" {
            break;
        }
        let letters: Vec<char> = a[1..].chars().collect();
        let mut j = 0;
        while j < letters.len() {
            let c = letters[j];
            match takes(c) {
                None => {
                    return Err(InputError::new(format!(
                        "partrt{cmd}: invalid option -{c} (see `partrt{cmd} -h`)"
                    )))
                }
                Some(false) => out.push((c, None)),
                Some(true) => {
                    let rest: String = letters[j + 1..].iter().collect();
                    let v = if !rest.is_empty() {
                        rest
                    } else {
                        i += 1;
                        args.get(i).cloned().ok_or_else(|| {
                            InputError::new(format!(
                                "partrt{cmd}: option -{c} needs a value (see `partrt{cmd} -h`)"
                            ))
                        })?
                    };
                    out.push((c, Some(v)));
                    break;
                }
            }
            j += 1;
        }
        i += 1;
    }
    Ok((out, &args[i.min(args.len())..]))
}

/// A partrt cpumask: hexadecimal, with or without `0x` (`8` is CPU 3).
fn mask(option: &str, s: &str) -> Result<CpuSet, InputError> {
    let t = s
        .trim()
        .strip_prefix("0x")
        .or_else(|| s.trim().strip_prefix("0X"))
        .unwrap_or(s.trim());
    let set = CpuSet::parse_mask(t)
        .map_err(|e| InputError::new(format!("partrt: {option}: illegal CPU mask '{s}': {e}")))?;
    if set.is_empty() {
        return Err(InputError::new(format!(
            "partrt: {option}: illegal CPU mask '{s}': no CPU"
        )));
    }
    Ok(set)
}

/// `rtshield partrt ARGS…`.
pub(crate) fn run(a: Args, g: &Global) -> anyhow::Result<i32> {
    let (opts, rest) = getopts(&a.args, "hn:r:vVwx", "")?;
    let (mut rt, mut nrt) = (None, None);
    for (c, v) in opts {
        match c {
            'h' => return usage(),
            'V' => {
                outln!(
                    "partrt (rtshield {}): partrt's command line",
                    env!("CARGO_PKG_VERSION")
                );
                return Ok(0);
            }
            'r' => rt = v,
            'n' => nrt = v,
            _ => {} // -v, -x, -w: accepted, no effect.
        }
    }
    let names = SetNames::new(rt.as_deref(), nrt.as_deref(), ["partrt -r", "partrt -n"])?;
    let Some((cmd, args)) = rest.split_first() else {
        return Err(
            InputError::new("partrt: expected sub-command. Use 'partrt -h' for help.").into(),
        );
    };
    match cmd.as_str() {
        "create" => create(args, names, g),
        "undo" => undo(args, g),
        "run" => run_cmd(args, g),
        "move" => move_cmd(args, g),
        "list" => list(args, g),
        other => Err(InputError::new(format!(
            "partrt: illegal sub-command: '{other}'. Valid commands: create undo run move list. \
             Use 'partrt -h' for help."
        ))
        .into()),
    }
}

fn usage() -> anyhow::Result<i32> {
    print!("{USAGE}");
    Ok(0)
}

fn create(args: &[String], names: SetNames, g: &Global) -> anyhow::Result<i32> {
    let (opts, rest) = getopts(args, "abcdhmn:rtuw", " create")?;
    let mut keep = Keep::default();
    let mut throttle_off = true;
    for (c, v) in opts {
        match c {
            'h' => return usage(),
            'a' => keep.writeback_numa = true,
            'b' => keep.writeback_cpumask = true,
            'c' => keep.machine_check = true,
            'm' => keep.stat_interval = true,
            'r' => keep.hotplug = true,
            't' => throttle_off = false,
            'u' => keep.unbound_workqueues = true,
            'w' => keep.watchdog = true,
            'n' => {
                let node = v.unwrap_or_default();
                return Err(InputError::new(format!(
                    "partrt create -n {node}: NUMA partitioning is not offered; give the node's \
                     CPUs as a mask (/sys/devices/system/node/node{node}/cpumap)"
                ))
                .into());
            }
            _ => {} // -d: tick deferment, a file mainline kernels lack.
        }
    }
    let [m] = rest else {
        return Err(InputError::new(if rest.is_empty() {
            "partrt create: missing mandatory cpumask".to_string()
        } else {
            format!(
                "partrt create: one cpumask expected, got '{}'",
                rest.join(" ")
            )
        })
        .into());
    };
    let cpus = mask("create", m)?;
    let mut knobs = Knobs::resolve(false, &[], &[], throttle_off)
        .map_err(|e| InputError::new(e.to_string()))?
        .with_profile(Profile::Partrt, &[]);
    knobs.rt_throttle_off = throttle_off;
    knobs.move_init = true;
    knobs.keep = keep;
    let mut k = open_kernel(g.root(), false)?;
    let rep = rtshield_partition::create(
        &mut k,
        &CreateOptions {
            cpus,
            parent: None,
            knobs,
            names: names.clone(),
        },
    )?;
    for r in &rep.refused_tasks {
        errln!(
            "partrt: note: task {} ({}) not moved: {}",
            r.what,
            r.name,
            r.reason
        );
    }
    for r in &rep.refused_files {
        errln!("partrt: note: {} refused: {}", r.name, r.reason);
    }
    for n in rep.notes.iter().chain(&rep.warnings) {
        errln!("partrt: note: {n}");
    }
    outln!("System was successfully divided into following partitions:");
    outln!("Isolated CPUs ({}):{}", names.rt, rep.rt_cpus);
    outln!("Non-isolated CPUs ({}):{}", names.nrt, rep.nrt_cpus);
    Ok(0)
}

fn undo(args: &[String], g: &Global) -> anyhow::Result<i32> {
    let (opts, rest) = getopts(args, "hs:", " undo")?;
    for (c, v) in opts {
        match c {
            'h' => return usage(),
            _ => errln!(
                "partrt: note: -s {}: not read; rtshield restores the values create saved in its \
                 own state file ({})",
                v.unwrap_or_default(),
                rtshield_isolation::STATE_DIR
            ),
        }
    }
    if let Some(w) = rest.first() {
        return Err(InputError::new(format!("partrt undo: unexpected argument '{w}'")).into());
    }
    let mut k = open_kernel(g.root(), false)?;
    let rep = rtshield_partition::undo(&mut k, None)?;
    for e in &rep.errors {
        errln!("partrt: {e}");
    }
    if !rep.errors.is_empty() {
        return Ok(1);
    }
    outln!("System was successfully restored");
    Ok(0)
}

/// `-c MASK` of run and move: `None` when absent or 0 (partrt: no pinning).
fn pin(v: Option<String>, cmd: &str) -> Result<Option<CpuSet>, InputError> {
    match v {
        Some(m) if m.trim_start_matches("0x").trim_matches('0').is_empty() && !m.is_empty() => {
            Ok(None)
        }
        Some(m) => mask(&format!("{cmd} -c"), &m).map(Some),
        None => Ok(None),
    }
}

fn prio(v: Option<String>, opt: &str) -> Result<i32, InputError> {
    let v = v.unwrap_or_default();
    v.parse::<i32>()
        .ok()
        .filter(|p| (1..=99).contains(p))
        .ok_or_else(|| InputError::new(format!("partrt run {opt} '{v}': a priority 1..99")))
}

fn run_cmd(args: &[String], g: &Global) -> anyhow::Result<i32> {
    let (opts, rest) = getopts(args, "c:f:hor:", " run")?;
    let (mut cpus, mut sched) = (None, None);
    for (c, v) in opts {
        match c {
            'h' => return usage(),
            'c' => cpus = pin(v, "run")?,
            'f' => sched = Some((Policy::Fifo, prio(v, "-f")?)),
            'r' => sched = Some((Policy::Rr, prio(v, "-r")?)),
            _ => sched = None, // -o: SCHED_OTHER, what the command inherits.
        }
    }
    let Some((partition, cmd)) = rest.split_first() else {
        return Err(InputError::new("partrt run: missing mandatory partition name").into());
    };
    if cmd.is_empty() {
        return Err(InputError::new("partrt run: no command to execute").into());
    }
    let mut k = open_kernel(g.root(), false)?;
    if let Some(c) = &cpus {
        rtshield_partition::check_cpu_subset(&k, None, partition, c)?;
    }
    rtshield_partition::enter_partition(&mut k, None, partition)?;
    if let Some(c) = &cpus {
        rtshield_sys::set_affinity(0, c)
            .map_err(|e| anyhow::anyhow!("cannot pin to CPUs {}: {e}", c.to_list()))?;
    }
    if let Some((pol, p)) = sched {
        set_scheduler(0, pol, p).map_err(|e| {
            anyhow::anyhow!(rtshield_sys::fifo_refusal_reason(&e, None)).context(format!(
                "cannot set SCHED_{} {p}",
                pol.name().to_uppercase()
            ))
        })?;
    }
    use std::os::unix::process::CommandExt;
    let e = std::process::Command::new(&cmd[0]).args(&cmd[1..]).exec();
    Err(anyhow::anyhow!(e).context(format!("cannot run {}", cmd[0])))
}

fn move_cmd(args: &[String], g: &Global) -> anyhow::Result<i32> {
    let (opts, rest) = getopts(args, "c:h", " move")?;
    let mut cpus = None;
    for (c, v) in opts {
        match c {
            'h' => return usage(),
            _ => cpus = pin(v, "move")?,
        }
    }
    let [pid, partition] = rest else {
        return Err(InputError::new(format!(
            "partrt move: expected <pid> <partition>, got '{}'",
            rest.join(" ")
        ))
        .into());
    };
    let pid = pid
        .parse::<u32>()
        .ok()
        .filter(|n| (1..=4_194_304).contains(n))
        .ok_or_else(|| InputError::new(format!("partrt move: task ID {pid} does not exist")))?;
    let mut k = open_kernel(g.root(), false)?;
    let plan = rtshield_partition::plan_move(&k, None, partition, &[pid], false)?;
    if let Some(c) = &cpus {
        rtshield_partition::check_cpu_subset(&k, None, partition, c)?;
    }
    let mut code = 0;
    for (pid, tids) in &plan.moves {
        let o = rtshield_partition::move_threads(&mut k, &plan.h, &plan.dir, *pid, tids);
        for r in &o.refused {
            errln!("partrt: {pid}: refused: {r}");
            code = 1;
        }
        if let Some(c) = &cpus {
            for tid in tids {
                if let Err(e) = k.set_affinity(*tid, c) {
                    errln!("partrt: {tid}: cannot pin to CPUs {}: {e}", c.to_list());
                    code = 1;
                }
            }
        }
    }
    Ok(code)
}

fn list(args: &[String], g: &Global) -> anyhow::Result<i32> {
    let (opts, rest) = getopts(args, "h", " list")?;
    if !opts.is_empty() {
        return usage();
    }
    if let Some(w) = rest.first() {
        return Err(InputError::new(format!("partrt list: unexpected argument '{w}'")).into());
    }
    crate::cmd::partition::print_partrt_list(&g.root())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn getopts_reads_partrt_grammar() {
        let a = s(&["-r", "rt1", "-nnrt1", "create", "-ab", "0x2"]);
        let (o, rest) = getopts(&a, "hn:r:vVwx", "").unwrap();
        assert_eq!(o, [('r', Some("rt1".into())), ('n', Some("nrt1".into()))]);
        assert_eq!(rest, &a[3..]);
        let (o, rest) = getopts(&rest[1..], "abcdhmn:rtuw", " create").unwrap();
        assert_eq!(o, [('a', None), ('b', None)]);
        assert_eq!(rest, ["0x2"]);
        // Options stop at the partition: `run rt -f 60 ls` runs `-f`.
        let a = s(&["rt", "-f", "60", "ls"]);
        assert_eq!(getopts(&a, "c:f:hor:", " run").unwrap().1, &a[..]);
        assert!(getopts(&s(&["-z"]), "hn:r:vVwx", "").is_err());
        assert!(getopts(&s(&["-1"]), "abcdhmn:rtuw", " create").is_err());
        assert!(getopts(&s(&["-c"]), "c:h", " move").is_err());
    }

    #[test]
    fn masks_are_hex_as_in_partrt() {
        assert_eq!(mask("x", "8").unwrap().to_list(), "3");
        assert_eq!(mask("x", "0x8").unwrap().to_list(), "3");
        assert_eq!(mask("x", "1234").unwrap().to_list(), "2,4-5,9,12");
        assert!(mask("x", "asdf").is_err());
        assert!(mask("x", "0").is_err());
        assert_eq!(pin(Some("0".into()), "run").unwrap(), None);
        assert!(pin(Some("rt".into()), "run").is_err());
    }
}
