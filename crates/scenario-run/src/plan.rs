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
}

impl Default for PlanOptions {
    fn default() -> Self {
        PlanOptions {
            scale: 1.0,
            force: false,
        }
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
/// real-time tasks that never sleep and could hold every CPU refused unless
/// `o.force`.
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
        if t.policy.is_rt() && t.sloop.is_none() {
            if t.priority == 99 && mask == *online && !o.force {
                return Err(InputError::at(
                    &s.source,
                    t.line,
                    1,
                    format!(
                        "task {} is {} priority 99, never sleeps and may run on every CPU: it would \
                         starve this machine (give it `sloop`/`sleep`, a smaller cpu_mask, or pass --force)",
                        t.name,
                        t.policy.name().to_uppercase()
                    ),
                ));
            }
            notes.push(format!(
                "task {} is {} {} and never sleeps: it holds CPU {} until its loop is done; only the \
                 kernel's RT throttling (sched_rt_runtime_us) lets other tasks run there",
                t.name,
                t.policy.name().to_uppercase(),
                t.priority,
                mask.to_list()
            ));
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
        tasks.push(PlannedTask {
            spec: t.clone(),
            mask,
            loops,
        });
    }
    if !o.force {
        refuse_rt_cover(s, &tasks, online)?;
    }
    if o.scale != 1.0 {
        notes.push(format!(
            "--scale {}: every task's loop multiplied by {} (sloop, sleep and irq_period unchanged)",
            o.scale, o.scale
        ));
    }
    Ok(Plan { tasks, notes })
}

/// Real-time tasks that never sleep each hold a CPU until their loop is
/// done: as many of them as there are CPUs, with masks covering every CPU,
/// can take the whole machine (only RT throttling would save it, and it may
/// be off). Refused, naming the task that completes the cover, unless --force.
fn refuse_rt_cover(s: &Scenario, tasks: &[PlannedTask], online: &CpuSet) -> Result<(), InputError> {
    let mut cover = CpuSet::new();
    let mut hogs: Vec<&str> = Vec::new();
    for t in tasks {
        if !(t.spec.policy.is_rt() && t.spec.sloop.is_none()) {
            continue;
        }
        cover = cover.union(&t.mask);
        hogs.push(&t.spec.name);
        if hogs.len() >= online.len() && online.is_subset(&cover) {
            return Err(InputError::at(
                &s.source,
                t.spec.line,
                1,
                format!(
                    "tasks {} are real-time, never sleep and together can hold every CPU ({}): they \
                     would starve this machine (give them `sloop`/`sleep`, smaller cpu_masks, or pass --force)",
                    name_list(&hogs),
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
            },
        )
        .unwrap();
        assert!(forced.notes[0].contains("never sleeps"));
        // Pinned to one CPU it is allowed (with a note), and so is a sleeping one.
        let s = parse_str("{loop=1; sched=fifo; priority=99; cpu_mask=1}\n{loop=1; sched=fifo; priority=99; sloop=1; sleep=1}", "f")
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

    #[test]
    fn bad_scale_is_input_error() {
        let s = parse_str("{loop=1}", "f").unwrap();
        for scale in [0.0, -1.0, f64::NAN] {
            let e = plan(
                &s,
                &set("0"),
                PlanOptions {
                    scale,
                    force: false,
                },
            )
            .unwrap_err();
            assert!(e
                .to_string()
                .starts_with("--scale must be a positive number"));
        }
    }
}
