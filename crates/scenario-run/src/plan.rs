//! From a parsed scenario to what runs on this machine: CPU masks trimmed
//! to the CPUs present, `--scale` applied, and the dangerous task refused.

use rtshield_scenario::{Scenario, TaskSpec};
use rtshield_vocab::{CpuSet, InputError};

/// One task as it will run.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedTask {
    /// The task as the scenario wrote it.
    pub spec: TaskSpec,
    /// The mask applied (never empty, only online CPUs).
    pub mask: CpuSet,
    /// `spec.loops` after `--scale` (at least 1).
    pub loops: u64,
}

/// What will run on this machine: every task with its mask and loop count, and what
/// the plan changed.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// Every task, in scenario order.
    pub tasks: Vec<PlannedTask>,
    /// What was changed and why, one sentence each (printed and kept in
    /// the report's warnings).
    pub notes: Vec<String>,
}

/// Options that change the plan.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlanOptions {
    /// Multiplies every `loop` (not `sloop`, `sleep` or `irq_period`, so the
    /// tasks keep their rhythm and only run for less long).
    pub scale: f64,
    /// Run a FIFO/RR 99 task that never sleeps on every CPU anyway.
    pub force: bool,
    /// Iterations per microsecond the run will use (`--loops-per-us`,
    /// `--rt-share` or the file's `loops_per_us`); `None`: measured here
    /// (the runner measures it the same way at start), to know how long a
    /// task works before it sleeps.
    pub loops_per_us: Option<f64>,
}

impl Default for PlanOptions {
    fn default() -> Self {
        PlanOptions {
            scale: 1.0,
            force: false,
            loops_per_us: None,
        }
    }
}

/// The largest share of its CPU a real-time task may work, between its
/// sleeps, before it counts as holding the CPU: the kernel's default RT
/// throttling share (`sched_rt_runtime_us` 950000 of 1000000). Above it,
/// only throttling (which may be off) lets anything else run there.
pub const MAX_RT_DUTY: f64 = 0.95;

/// Why a real-time task holds its CPU (`None`: it leaves it often enough),
/// from what it will do: `loops` iterations, a sleep of `sleep_ns` after
/// every `sloop` of them. `lpu` gives the time of the work between sleeps.
fn holds_cpu(t: &TaskSpec, loops: u64, lpu: &mut dyn FnMut() -> f64) -> Option<String> {
    if !t.policy.is_rt() {
        return None;
    }
    let Some(sloop) = t.sloop.filter(|_| t.sleep_ns > 0) else {
        return Some("never sleeps".into());
    };
    if sloop >= loops {
        // The runner sleeps after every `sloop` iterations: none before
        // the work is done.
        return Some(format!(
            "never sleeps (sloop {sloop} is not less than its loop {loops}: the work is done before the first sleep)"
        ));
    }
    let l = lpu();
    let work_ns = sloop as f64 * 1_000.0 / l;
    let duty = work_ns / (work_ns + t.sleep_ns as f64);
    (duty > MAX_RT_DUTY).then(|| {
        format!(
            "works {:.1} % of the time (sloop {sloop} at {l:.1} loops/µs is {}, then a {} sleep; at most {} % allowed)",
            duty * 100.0,
            human_ns(work_ns),
            human_ns(t.sleep_ns as f64),
            MAX_RT_DUTY * 100.0
        )
    })
}

/// `1.5 ms`, `20 ns`.
fn human_ns(ns: f64) -> String {
    match ns {
        n if n >= 1e9 => format!("{:.1} s", n / 1e9),
        n if n >= 1e6 => format!("{:.1} ms", n / 1e6),
        n if n >= 1e3 => format!("{:.1} µs", n / 1e3),
        n => format!("{n:.0} ns"),
    }
}

/// Trim a mask to `online`. Bits for absent CPUs are dropped; a mask left
/// with no CPU at all goes to the highest online CPU: the annex keeps CPU 0
/// for normal tasks and numbers its RT CPUs upward, so folding to the top
/// keeps CPU 0 free of tasks meant for other CPUs (and keeps a small machine
/// usable). Returns the mask and what was trimmed, if anything.
pub(crate) fn trim_mask(mask: &CpuSet, online: &CpuSet) -> (CpuSet, Option<String>) {
    let kept = mask.intersection(online);
    let dropped = mask.difference(online);
    if dropped.is_empty() {
        return (kept, None);
    }
    if kept.is_empty() {
        let top = online.last().map(CpuSet::single).unwrap_or_default();
        let why = format!(
            "cpu_mask {} names no CPU present (online: {}); the task runs on CPU {} instead",
            mask.to_hex(),
            online.to_list(),
            top.to_list()
        );
        return (top, Some(why));
    }
    let why = format!(
        "cpu_mask {} trimmed to the CPUs present: {} (dropped {})",
        mask.to_hex(),
        kept.to_list(),
        shorten_list(&dropped)
    );
    (kept, Some(why))
}

/// `2-15`, or `2-15,...` shortened when very long.
fn shorten_list(s: &CpuSet) -> String {
    let l = s.to_list();
    if l.len() > 40 {
        format!("{}…", &l[..l[..40].rfind(',').unwrap_or(40)])
    } else {
        l
    }
}

/// Accepted `--scale` factors.
pub(crate) const MIN_SCALE: f64 = 1e-6;
pub(crate) const MAX_SCALE: f64 = 1e6;

/// The plan of scenario `s` on the `online` CPUs: masks trimmed to them, `--scale`
/// applied (refused outside 1e-6..1e6 or past the parser's iteration limit), and
/// real-time tasks that hold their CPU (never sleep, reach their first sleep only
/// once their work is done, or work more than [`MAX_RT_DUTY`] of the time) and
/// could hold every CPU refused unless `o.force`.
pub fn plan(s: &Scenario, online: &CpuSet, o: PlanOptions) -> Result<Plan, InputError> {
    if !(o.scale.is_finite() && (MIN_SCALE..=MAX_SCALE).contains(&o.scale)) {
        return Err(InputError::new(format!(
            "--scale must be a positive number between {MIN_SCALE} and {MAX_SCALE}, got {:?}",
            o.scale
        )));
    }
    let mut notes = Vec::new();
    let mut tasks = Vec::with_capacity(s.tasks.len());
    // Trimming notes are the same for every copy of a mask: say it once.
    let mut said: Vec<String> = Vec::new();
    // The tasks that hold their CPU (indexes into `tasks`).
    let mut hogs = Vec::new();
    // Measured once, and only if a sleeping real-time task needs it.
    let mut measured = None;
    let mut lpu = || {
        o.loops_per_us
            .or(s.globals.loops_per_us)
            .unwrap_or_else(|| *measured.get_or_insert_with(crate::busy::calibrate))
    };
    for t in &s.tasks {
        let (mask, why) = match &t.cpu_mask {
            Some(m) => trim_mask(m, online),
            None => (online.clone(), None),
        };
        if let Some(why) = why {
            if !said.contains(&why) {
                let who: Vec<&str> = s
                    .tasks
                    .iter()
                    .filter(|x| x.cpu_mask == t.cpu_mask)
                    .map(|x| x.name.as_str())
                    .collect();
                notes.push(format!("{} ({})", why, name_list(&who)));
                said.push(why);
            }
        }
        // Checked: a scaled loop stays within the parser's range instead of
        // saturating at u64::MAX.
        let scaled = (t.loops as f64 * o.scale).round();
        if scaled > rtshield_scenario::MAX_ITERATIONS as f64 {
            return Err(InputError::new(format!(
                "--scale {}: task '{}' would run {scaled} iterations, more than {}",
                o.scale,
                t.name,
                rtshield_scenario::MAX_ITERATIONS
            )));
        }
        let loops = (scaled as u64).max(1);
        if let Some(why) = holds_cpu(t, loops, &mut lpu) {
            if t.priority == 99 && mask == *online && !o.force {
                return Err(InputError::at(
                    &s.source,
                    t.line,
                    1,
                    format!(
                        "task {} is {} priority 99, {why} and may run on every CPU: it would \
                         starve this machine (give it `sloop`/`sleep`, a smaller cpu_mask, or pass --force)",
                        t.name,
                        t.policy.name().to_uppercase()
                    ),
                ));
            }
            notes.push(format!(
                "task {} is {} {} and {why}: it holds CPU {} until its loop is done; only the \
                 kernel's RT throttling (sched_rt_runtime_us) lets other tasks run there",
                t.name,
                t.policy.name().to_uppercase(),
                t.priority,
                mask.to_list()
            ));
            hogs.push((tasks.len(), why.starts_with("never sleeps")));
        }
        tasks.push(PlannedTask {
            spec: t.clone(),
            mask,
            loops,
        });
    }
    if !o.force {
        refuse_rt_cover(s, &tasks, &hogs, online)?;
    }
    if o.scale != 1.0 {
        notes.push(format!(
            "--scale {}: every task's loop multiplied by {} (sloop, sleep and irq_period unchanged)",
            o.scale, o.scale
        ));
    }
    Ok(Plan { tasks, notes })
}

/// Real-time tasks that never sleep (or work more than [`MAX_RT_DUTY`] of
/// the time between their sleeps: `holding`, with whether they never sleep)
/// each hold a CPU until their loop is done: as many of them as there are CPUs, with masks covering every CPU,
/// can take the whole machine (only RT throttling would save it, and it may
/// be off). Refused, naming the task that completes the cover, unless --force.
fn refuse_rt_cover(
    s: &Scenario,
    tasks: &[PlannedTask],
    holding: &[(usize, bool)],
    online: &CpuSet,
) -> Result<(), InputError> {
    let mut cover = CpuSet::new();
    let mut hogs: Vec<&str> = Vec::new();
    let mut all_never_sleep = true;
    for (t, never) in holding.iter().map(|&(i, never)| (&tasks[i], never)) {
        all_never_sleep &= never;
        cover = cover.union(&t.mask);
        hogs.push(&t.spec.name);
        if hogs.len() >= online.len() && online.is_subset(&cover) {
            return Err(InputError::at(
                &s.source,
                t.spec.line,
                1,
                format!(
                    "tasks {} are real-time, {} and together can hold every CPU ({}): they \
                     would starve this machine (give them `sloop`/`sleep`, smaller cpu_masks, or pass --force)",
                    name_list(&hogs),
                    if all_never_sleep {
                        "never sleep".to_string()
                    } else {
                        format!("never sleep or work more than {} % of the time", MAX_RT_DUTY * 100.0)
                    },
                    online.to_list()
                ),
            ));
        }
    }
    Ok(())
}

/// `a, b, c` or `a, b, … (13 tasks)`.
fn name_list(names: &[&str]) -> String {
    if names.len() <= 3 {
        names.join(", ")
    } else {
        format!("{}, {}, … ({} tasks)", names[0], names[1], names.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtshield_scenario::parse_str;

    fn set(s: &str) -> CpuSet {
        CpuSet::parse(s).unwrap()
    }

    #[test]
    fn masks_are_trimmed_or_folded_to_the_top_cpu() {
        let online = set("0-1");
        assert_eq!(trim_mask(&set("0-1"), &online), (set("0-1"), None));
        let (m, why) = trim_mask(&set("0xffff"), &online);
        assert_eq!(m, set("0-1"));
        assert_eq!(
            why.unwrap(),
            "cpu_mask 0xffff trimmed to the CPUs present: 0-1 (dropped 2-15)"
        );
        let (m, why) = trim_mask(&set("0x8"), &online);
        assert_eq!(m, set("1"));
        assert_eq!(
            why.unwrap(),
            "cpu_mask 0x8 names no CPU present (online: 0-1); the task runs on CPU 1 instead"
        );
    }

    #[test]
    fn annex_b_plan_on_two_cpus() {
        let s = parse_str(
            include_str!("../../../examples/scenarios/annex-b.scn"),
            "annex-b.scn",
        )
        .unwrap();
        let p = plan(
            &s,
            &set("0-1"),
            PlanOptions {
                scale: 0.001,
                force: false,
                ..Default::default()
            },
        )
        .unwrap();
        let masks: Vec<String> = p.tasks.iter().map(|t| t.mask.to_list()).collect();
        assert!(masks[..13].iter().all(|m| m == "0-1"));
        assert_eq!(&masks[13..], ["1", "1", "1"]);
        assert_eq!(p.tasks[0].loops, 10_000);
        assert_eq!(p.tasks[13].loops, 110_000);
        assert_eq!(p.tasks[13].spec.sloop, Some(5000), "sloop is not scaled");
        assert_eq!(p.notes.len(), 4, "{:#?}", p.notes);
        assert_eq!(
            p.notes[0],
            "cpu_mask 0xffff trimmed to the CPUs present: 0-1 (dropped 2-15) (other.1, other.2, … (13 tasks))"
        );
        assert!(
            p.notes[1].ends_with("on CPU 1 instead (fifo99.2)"),
            "{}",
            p.notes[1]
        );
    }

    #[test]
    fn fifo_99_spinning_everywhere_is_refused_unless_forced() {
        let s = parse_str(
            "{\nloop = 1\n}\n{\nloop = 1\nsched = fifo\npriority = 99\n}\n",
            "f.scn",
        )
        .unwrap();
        let e = plan(&s, &set("0-1"), PlanOptions::default()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "f.scn:4:1: task fifo99.1 is FIFO priority 99, never sleeps and may run on every CPU: it would \
             starve this machine (give it `sloop`/`sleep`, a smaller cpu_mask, or pass --force)"
        );
        let forced = plan(
            &s,
            &set("0-1"),
            PlanOptions {
                scale: 1.0,
                force: true,
                ..Default::default()
            },
        )
        .unwrap();
        assert!(forced.notes[0].contains("never sleeps"));
        // Pinned to one CPU it is allowed (with a note), and so is a sleeping
        // one (that reaches its first sleep before its work is done).
        let s = parse_str("{loop=1; sched=fifo; priority=99; cpu_mask=1}\n{loop=2; sched=fifo; priority=99; sloop=1; sleep=1}", "f")
            .unwrap();
        let p = plan(&s, &set("0-1"), PlanOptions::default()).unwrap();
        assert_eq!(p.notes.len(), 1);
    }

    #[test]
    fn never_sleeping_rt_tasks_covering_every_cpu_are_refused_unless_forced() {
        let text = "{loop=1; sched=fifo; priority=10; cpu_mask=0}\n{loop=1; sched=rr; priority=5; cpu_mask=0x2}\n";
        let s = parse_str(text, "c.scn").unwrap();
        let e = plan(&s, &set("0-1"), PlanOptions::default()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "c.scn:2:1: tasks fifo10.1, rr5.1 are real-time, never sleep and together can hold every \
             CPU (0-1): they would starve this machine (give them `sloop`/`sleep`, smaller cpu_masks, or pass --force)"
        );
        let forced = PlanOptions {
            scale: 1.0,
            force: true,
            ..Default::default()
        };
        assert_eq!(plan(&s, &set("0-1"), forced).unwrap().tasks.len(), 2);
        // On a bigger machine the same two tasks leave CPUs free.
        assert!(plan(&s, &set("0-3"), PlanOptions::default()).is_ok());
        // Two on the same CPU hold only that CPU.
        let s = parse_str(
            "{loop=1; sched=fifo; priority=10; cpu_mask=0; count=2}\n",
            "c",
        )
        .unwrap();
        assert!(plan(&s, &set("0-1"), PlanOptions::default()).is_ok());
    }

    /// Round 3 (C6): a task that sleeps only once its work is done, or
    /// sleeps a nanosecond between long stretches of work, holds its CPU as
    /// much as one without `sloop`.
    #[test]
    fn rt_tasks_that_hardly_sleep_are_refused_like_those_that_never_do() {
        let lpu = |l| PlanOptions {
            loops_per_us: Some(l),
            ..Default::default()
        };
        let fifo99 = |body: &str| {
            parse_str(
                &format!("{{sched=fifo; priority=99; {body}}}\n#2\n{{sched=fifo; priority=99; {body}}}\n"),
                "h.scn",
            )
            .unwrap()
        };
        // sloop > loop: the task is done before its first sleep.
        let s = fifo99("loop=3600000000; sloop=1000000000000; sleep=1ns");
        let e = plan(&s, &set("0-1"), lpu(1.0)).unwrap_err().to_string();
        assert!(
            e.starts_with("h.scn:1:1: task fifo99.1 is FIFO priority 99, never sleeps (sloop 1000000000000 is not less than its loop 3600000000"),
            "{e}"
        );
        // ... and when --scale shrinks the loop below sloop.
        let s = fifo99("loop=1000000; sloop=1000; sleep=1ms");
        assert!(plan(&s, &set("0-1"), lpu(1.0)).is_ok());
        let scaled = PlanOptions {
            scale: 0.001,
            ..lpu(1.0)
        };
        assert!(plan(&s, &set("0-1"), scaled)
            .unwrap_err()
            .to_string()
            .contains("never sleeps"));
        // A 1 ns sleep after 1 ms of work: 99.9999 % of the CPU.
        let s = fifo99("loop=1000000; sloop=1000; sleep=1ns");
        let e = plan(&s, &set("0-1"), lpu(1.0)).unwrap_err().to_string();
        assert!(e.contains("works 100.0 % of the time (sloop 1000 at 1.0 loops/µs is 1.0 ms, then a 1 ns sleep; at most 95 % allowed)"), "{e}");
        // The same work with a 1 ms sleep is half the CPU: fine; faster
        // loops (the file's or measured) shorten the work.
        let s = fifo99("loop=1000000; sloop=1000; sleep=1ms");
        assert!(plan(&s, &set("0-1"), lpu(1.0)).is_ok());
        let s = fifo99("loop=1000000; sloop=100000; sleep=1ms");
        assert!(plan(&s, &set("0-1"), lpu(1.0)).is_err());
        assert!(plan(&s, &set("0-1"), lpu(1000.0)).is_ok());
        // Lower priorities: refused once they cover every CPU, with the
        // reason in the sentence; --force runs them.
        let s = parse_str(
            "{loop=1000000; sloop=1000; sleep=1ns; sched=fifo; priority=10; cpu_mask=0}\n\
             {loop=1000000; sloop=1000; sleep=1ns; sched=rr; priority=5; cpu_mask=0x2}\n",
            "c.scn",
        )
        .unwrap();
        let e = plan(&s, &set("0-1"), lpu(1.0)).unwrap_err().to_string();
        assert!(e.starts_with("c.scn:2:1: tasks fifo10.1, rr5.1 are real-time, never sleep or work more than 95 % of the time and together can hold every CPU (0-1)"), "{e}");
        let forced = PlanOptions {
            force: true,
            ..lpu(1.0)
        };
        let p = plan(&s, &set("0-1"), forced).unwrap();
        assert!(
            p.notes[0].contains("works 100.0 % of the time"),
            "{:?}",
            p.notes
        );
    }

    #[test]
    fn bad_scale_is_input_error() {
        let s = parse_str("{loop=1}", "f").unwrap();
        for scale in [0.0, -1.0, f64::NAN] {
            let e = plan(
                &s,
                &set("0"),
                PlanOptions {
                    scale,
                    ..Default::default()
                },
            )
            .unwrap_err();
            assert!(e
                .to_string()
                .starts_with("--scale must be a positive number"));
        }
    }
}
