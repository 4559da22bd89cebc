//! Isolation drift: what changed, during a run, in what shields the
//! measured CPUs (an IRQ's affinity, a task allowed there, a cpuset, a
//! knob), as the drift watch (`rtshield-drift`) saw it. This module owns
//! the event's shape in `results.json` (the `drift` array and the
//! `drift_watch` object, one [`Drift`] flattened into [`crate::RunResult`]),
//! the `drift` column of `timeline.csv` ([`timeline_cell`]), the one-line
//! text of an event, and which events are named next to a spike
//! ([`before_spike`]). Schema: docs/formats.md.

use rtshield_text::terminal;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// A drift event is named next to a spike when its change may have
/// happened within this long before the spike (see [`before_spike`]).
pub const SPIKE_WINDOW_NS: u64 = 30_000_000_000;

/// The kinds of change ([`DriftEvent::kind`]).
pub mod kind {
    /// An IRQ's effective affinity (else its `smp_affinity_list`).
    pub const IRQ_AFFINITY: &str = "irq_affinity";
    /// `/proc/irq/default_smp_affinity`: where new IRQs go.
    pub const IRQ_DEFAULT_AFFINITY: &str = "irq_default_affinity";
    /// A task joined or left the shielded (rt) cpuset.
    pub const RT_TASK: &str = "rt_task";
    /// A task's `Cpus_allowed_list` (or a new task's, against its parent's).
    pub const TASK_AFFINITY: &str = "task_affinity";
    /// A partition cpuset's `cpus`.
    pub const CPUSET_CPUS: &str = "cpuset_cpus";
    /// A cgroup v2 partition's `cpuset.cpus.partition` (`root`, `isolated`,
    /// `root invalid (...)`).
    pub const CPUSET_PARTITION: &str = "cpuset_partition";
    /// An unbound workqueue `cpumask` (the global one or a workqueue's).
    pub const WORKQUEUE_CPUMASK: &str = "workqueue_cpumask";
    /// `kernel.timer_migration`.
    pub const TIMER_MIGRATION: &str = "timer_migration";
    /// `kernel.sched_rt_runtime_us` or `sched_rt_period_us`.
    pub const RT_THROTTLING: &str = "rt_throttling";
    /// A measured CPU's cpufreq governor.
    pub const CPUFREQ_GOVERNOR: &str = "cpufreq_governor";
    /// A measured CPU's cpuidle state `disable`.
    pub const CPUIDLE_STATE: &str = "cpuidle_state";
    /// The online CPUs (hotplug).
    pub const CPU_ONLINE: &str = "cpu_online";
    /// Every kind, in the order the watch reads them.
    pub const ALL: &[&str] = &[
        CPU_ONLINE,
        IRQ_DEFAULT_AFFINITY,
        IRQ_AFFINITY,
        CPUSET_CPUS,
        CPUSET_PARTITION,
        RT_TASK,
        TASK_AFFINITY,
        WORKQUEUE_CPUMASK,
        TIMER_MIGRATION,
        RT_THROTTLING,
        CPUFREQ_GOVERNOR,
        CPUIDLE_STATE,
    ];
}

/// What a change does to the measured CPUs' shield.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Effect {
    /// It lets something new disturb a measured CPU (an IRQ, a task, a
    /// workqueue now allowed there; the CPU left the rt set; throttling,
    /// a frequency-scaling governor or a deep idle state turned on).
    Exposes,
    /// The reverse: something that could disturb a measured CPU no longer can.
    Shields,
    /// Neither, or it cannot be told (a hotplug, an idle state's name).
    Changes,
}

impl Effect {
    /// `exposes`, `shields`, `changes`.
    pub fn name(self) -> &'static str {
        match self {
            Effect::Exposes => "exposes",
            Effect::Shields => "shields",
            Effect::Changes => "changes",
        }
    }

    /// The spelling of [`Effect::name`] read back; `None` for another word.
    pub fn parse(s: &str) -> Option<Effect> {
        match s {
            "exposes" => Some(Effect::Exposes),
            "shields" => Some(Effect::Shields),
            "changes" => Some(Effect::Changes),
            _ => None,
        }
    }
}

/// One change, seen once: the watch read `before` at its tick ending at
/// `since_ns` (or earlier) and `after` at the tick ending at `at_ns`, so
/// the change happened in `(since_ns, at_ns]`. Times are the run's clock
/// (nanoseconds since the start of the measurement, the clock of
/// `timeline.csv`'s `elapsed_s`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DriftEvent {
    /// When the change was seen (end of the tick that read `after`).
    pub at_ns: u64,
    /// The object was last seen unchanged at this time or later.
    pub since_ns: u64,
    /// One of [`kind`].
    pub kind: String,
    /// What changed: `irq 36 (virtio1-req.0)`, `task 4242 (sleep)`, a
    /// cgroup directory, `cpu1`, `global`.
    pub object: String,
    /// The value before; `None`: it did not exist (a new task, a new IRQ).
    pub before: Option<String>,
    /// The value after; `None`: it no longer exists.
    pub after: Option<String>,
    /// What it does to the shield.
    pub effect: Effect,
    /// The measured CPUs it concerns (CPU list; empty when it concerns
    /// them all, as a knob does).
    pub cpus: String,
}

impl DriftEvent {
    /// One line for a terminal or a text file:
    /// `12.003 s  exposes CPU 1  irq_affinity  irq 36 (x): 0 → 0-1  (since 11.002 s)`.
    pub fn line(&self) -> String {
        let who = if self.cpus.is_empty() {
            String::new()
        } else {
            format!(" CPU {}", self.cpus)
        };
        format!(
            "{:.3} s  {}{who}  {}  {}: {} → {}  (changed after {:.3} s)",
            secs(self.at_ns),
            self.effect.name(),
            terminal::value(&self.kind),
            terminal::value(&self.object),
            terminal::value(shown(&self.before)),
            terminal::value(shown(&self.after)),
            secs(self.since_ns)
        )
    }
}

fn secs(ns: u64) -> f64 {
    ns as f64 / 1e9
}

/// A value as text: `(absent)` when there was none.
fn shown(v: &Option<String>) -> &str {
    v.as_deref().unwrap_or("(absent)")
}

/// How the drift watch ran: what it watched, how often, what it cost.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct DriftWatch {
    /// The measured CPUs it watched (CPU list).
    pub cpus: String,
    /// Where the watch ran (the housekeeping CPUs), when it could be kept
    /// off the measured ones.
    pub ran_on: Option<String>,
    /// Time between two ticks (the run's `stats.period`).
    pub period_ns: u64,
    /// Ticks read, the first (the baseline) included.
    pub ticks: u64,
    /// CLOCK_MONOTONIC at the run's time 0 (to place trace timestamps,
    /// which are CLOCK_MONOTONIC, on the run's clock).
    pub mono_zero_ns: Option<u64>,
    /// Mean and longest tick (reading and comparing), µs; `None` before
    /// the second tick.
    pub tick_mean_us: Option<f64>,
    /// The longest tick, µs.
    pub tick_max_us: Option<f64>,
    /// Tasks (threads) tracked at the last tick.
    pub tasks: u64,
    /// IRQs read at the last tick.
    pub irqs: u64,
    /// Task status files re-read per tick at most (beyond new tasks and
    /// the rt set's, read every tick); a task's change is seen within
    /// `ceil(tasks / task_budget)` ticks.
    pub task_budget: u64,
    /// What could not be watched on this machine, and why.
    #[serde(default)]
    pub unwatched: Vec<String>,
}

/// The drift part of `results.json`, flattened into it: two top-level
/// keys, both absent when the run was not watched (unknown, not "no
/// change"). `drift: []` means watched, nothing changed.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Drift {
    /// Every change seen, in the order seen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drift: Option<Vec<DriftEvent>>,
    /// How the watch ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drift_watch: Option<DriftWatch>,
}

impl Drift {
    /// The events of a resumed run: the checkpoint's, then this part's
    /// (each part's clock already continues the previous one's). Watched
    /// when either part was.
    pub fn merged(prev: &Drift, cur: &Drift) -> Drift {
        let drift = match (&prev.drift, &cur.drift) {
            (None, None) => None,
            (a, b) => Some(
                a.iter()
                    .chain(b.iter())
                    .flatten()
                    .cloned()
                    .collect::<Vec<_>>(),
            ),
        };
        Drift {
            drift,
            drift_watch: cur.drift_watch.clone().or_else(|| prev.drift_watch.clone()),
        }
    }

    /// The events, empty when the run was not watched.
    pub fn events(&self) -> &[DriftEvent] {
        self.drift.as_deref().unwrap_or(&[])
    }

    /// One line for a summary: `drift: 2 changes seen, 1 exposing a measured CPU`,
    /// `drift: none seen`, or why there is no watch.
    pub fn summary(&self) -> String {
        let Some(ev) = &self.drift else {
            return "drift: not watched".into();
        };
        if ev.is_empty() {
            return "drift: no change seen".into();
        }
        let exposes = ev.iter().filter(|e| e.effect == Effect::Exposes).count();
        let mut s = format!(
            "drift: {} change{} seen",
            ev.len(),
            if ev.len() == 1 { "" } else { "s" }
        );
        if exposes > 0 {
            let _ = write!(s, ", {exposes} exposing a measured CPU");
        }
        s
    }
}

/// The events whose change may have happened within `window_ns` before a
/// spike at CLOCK_MONOTONIC `spike_mono_ns`: the change's interval
/// `(since, at]` meets `[spike − window, spike]` (a change seen only after
/// the spike counts when it may have happened before it). Empty when the
/// watch did not record its clock.
pub fn before_spike(drift: &Drift, spike_mono_ns: u64, window_ns: u64) -> Vec<&DriftEvent> {
    let Some(zero) = drift.drift_watch.as_ref().and_then(|w| w.mono_zero_ns) else {
        return Vec::new();
    };
    let Some(t) = spike_mono_ns.checked_sub(zero) else {
        return Vec::new();
    };
    drift
        .events()
        .iter()
        .filter(|e| e.since_ns < t && e.at_ns > t.saturating_sub(window_ns))
        .collect()
}

/// The `drift` cell of a `timeline.csv` row: the kinds of the events
/// seen in the row's interval, `;`-separated in the order seen (kinds
/// hold no comma), empty when none.
pub fn timeline_cell(events: &[DriftEvent]) -> String {
    let kinds: Vec<&str> = events.iter().map(|e| e.kind.as_str()).collect();
    kinds.join(";")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(at_s: u64, since_s: u64, effect: Effect) -> DriftEvent {
        DriftEvent {
            at_ns: at_s * 1_000_000_000,
            since_ns: since_s * 1_000_000_000,
            kind: kind::IRQ_AFFINITY.into(),
            object: "irq 36 (ahci, snd_hda)".into(),
            before: Some("0".into()),
            after: Some("0-1,3".into()),
            effect,
            cpus: "1".into(),
        }
    }

    #[test]
    fn lines_and_timeline_cells() {
        let e = ev(12, 11, Effect::Exposes);
        let gone = DriftEvent {
            after: None,
            ..e.clone()
        };
        let other = DriftEvent {
            kind: kind::RT_TASK.into(),
            ..e.clone()
        };
        assert_eq!(timeline_cell(&[e.clone(), other]), "irq_affinity;rt_task");
        assert_eq!(timeline_cell(&[]), "");
        assert_eq!(
            e.line(),
            "12.000 s  exposes CPU 1  irq_affinity  irq 36 (ahci, snd_hda): 0 → 0-1,3  (changed after 11.000 s)"
        );
        assert!(gone.line().contains("0 → (absent)"));
        let evil = DriftEvent {
            object: "task 7 (\u{1b}[2Jx\n)".into(),
            ..e.clone()
        };
        assert!(
            evil.line().contains("task 7 (\\x1b[2Jx\\n)"),
            "{}",
            evil.line()
        );
    }

    #[test]
    fn unwatched_is_absent_and_watched_without_change_is_empty() {
        let none = Drift::default();
        let v = serde_json::to_value(&none).unwrap();
        assert_eq!(v, serde_json::json!({}));
        assert_eq!(none.summary(), "drift: not watched");
        let quiet = Drift {
            drift: Some(vec![]),
            drift_watch: Some(DriftWatch::default()),
        };
        let v = serde_json::to_value(&quiet).unwrap();
        assert_eq!(v["drift"], serde_json::json!([]));
        assert_eq!(quiet.summary(), "drift: no change seen");
        let back: Drift = serde_json::from_value(v).unwrap();
        assert_eq!(back, quiet);
    }

    #[test]
    fn merged_keeps_both_parts_in_order() {
        let a = Drift {
            drift: Some(vec![ev(1, 0, Effect::Exposes)]),
            drift_watch: None,
        };
        let b = Drift {
            drift: Some(vec![ev(9, 8, Effect::Shields)]),
            drift_watch: Some(DriftWatch::default()),
        };
        let m = Drift::merged(&a, &b);
        assert_eq!(m.events().len(), 2);
        assert_eq!(m.events()[1].effect, Effect::Shields);
        assert!(m.drift_watch.is_some());
        assert_eq!(
            Drift::merged(&Drift::default(), &Drift::default()),
            Drift::default()
        );
        assert_eq!(
            m.summary(),
            "drift: 2 changes seen, 1 exposing a measured CPU"
        );
    }

    #[test]
    fn spikes_name_the_changes_that_may_precede_them() {
        let zero = 5_000_000_000;
        let d = Drift {
            drift: Some(vec![
                ev(10, 9, Effect::Exposes),  // (9, 10] s
                ev(50, 49, Effect::Exposes), // (49, 50] s
                ev(100, 99, Effect::Exposes),
            ]),
            drift_watch: Some(DriftWatch {
                mono_zero_ns: Some(zero),
                ..Default::default()
            }),
        };
        let at = |s: u64| zero + s * 1_000_000_000;
        let w = SPIKE_WINDOW_NS;
        let near = |s| {
            before_spike(&d, at(s), w)
                .iter()
                .map(|e| e.at_ns / 1_000_000_000)
                .collect::<Vec<_>>()
        };
        assert_eq!(near(20), vec![10]);
        assert_eq!(near(45), Vec::<u64>::new(), "10 s is 35 s before");
        assert_eq!(near(49), Vec::<u64>::new(), "changed after the spike");
        // Seen at 50 s, may have changed at 49.5 s: named.
        assert_eq!(near(50), vec![50]);
        assert_eq!(near(60), vec![50]);
        assert!(before_spike(&d, zero - 1, w).is_empty());
        assert!(before_spike(&Drift::default(), at(20), w).is_empty());
    }

    #[test]
    fn kinds_and_effects_spell_as_documented() {
        for k in kind::ALL {
            assert!(k.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'));
        }
        assert_eq!(Effect::parse("shields"), Some(Effect::Shields));
        assert_eq!(Effect::parse("x"), None);
    }
}
