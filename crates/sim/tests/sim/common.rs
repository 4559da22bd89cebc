//! Scenario builders for the simulator tests (no parser needed).
#![allow(dead_code)]

use rtshield_scenario::{Globals, Scenario, TaskSpec};
use rtshield_vocab::CpuSet;
use rtshield_vocab::Policy;

pub fn task(id: usize, group: &str, loops: u64) -> TaskSpec {
    TaskSpec {
        id,
        name: format!("t{id}"),
        group: group.to_string(),
        loops,
        sloop: None,
        sleep_ns: 0,
        irq_period: None,
        policy: Policy::Other,
        priority: 0,
        nice: 0,
        cpu_mask: None,
        line: id + 1,
    }
}

pub fn normal(id: usize, loops: u64) -> TaskSpec {
    task(id, "normal", loops)
}

/// A FIFO task bound to `cpu` that computes `sloop` iterations then sleeps `sleep_us`.
pub fn fifo(id: usize, prio: i32, cpu: u32, loops: u64, sloop: u64, sleep_us: u64) -> TaskSpec {
    let mut t = task(id, "rt", loops);
    t.policy = Policy::Fifo;
    t.priority = prio;
    t.cpu_mask = Some(CpuSet::single(cpu));
    t.sloop = Some(sloop);
    t.sleep_ns = sleep_us * 1000;
    t
}

pub fn scenario(tasks: Vec<TaskSpec>, loops_per_us: f64) -> Scenario {
    let tasks = tasks
        .into_iter()
        .enumerate()
        .map(|(i, mut t)| {
            t.id = i;
            t
        })
        .collect();
    Scenario {
        source: "test.scn".into(),
        globals: Globals {
            loops_per_us: Some(loops_per_us),
            timeout_ns: None,
        },
        tasks,
    }
}

/// The ARTiS thesis's annex B: 13 normal tasks, three RT0 tasks on CPUs 1-3.
pub fn annex_b(scale: u64) -> Scenario {
    let mut v: Vec<TaskSpec> = (0..13).map(|i| normal(i, 10_000_000 / scale)).collect();
    for (i, cpu) in [1, 2, 3].into_iter().enumerate() {
        v.push(fifo(13 + i, 99, cpu, 110_000_000 / scale, 5000, 5000));
    }
    scenario(v, 0.1)
}

/// Thesis §3.2.1 on two CPUs: `n` normal tasks and a FIFO 99 task bound to
/// CPU 1 that computes `run_ms` then sleeps `sleep_ms` (RT share
/// run/(run + sleep)).
pub fn rt_fraction(run_ms: u64, sleep_ms: u64, n: usize) -> Scenario {
    let mut tasks: Vec<_> = (0..n).map(|i| normal(i, 100_000_000)).collect();
    tasks.push(fifo(
        n,
        99,
        1,
        1_000_000_000,
        run_ms * 1000,
        sleep_ms * 1000,
    ));
    scenario(tasks, 1.0)
}
