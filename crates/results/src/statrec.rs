//! `rtshield stat --record FILE` (schema `rtshield.stat/1`) and
//! `rtshield stat --compare A B`: the PREEMPT_RT impact article compares
//! the same product with and without PREEMPT_RT (context switches/s
//! 1243 → 2168; 1790 → 10771 under `ping -f`); a record holds the mean of
//! each figure over the recording, the comparison is a table of ratios.

use rtshield_safefs::{DirPolicy, SafeError};
use rtshield_vocab::InputError;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::Path;

/// The schema identifier of a `--record` file; its major part must match to be read.
pub const STAT_SCHEMA: &str = "rtshield.stat/1";

/// One named figure, mean over the recording.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metric {
    /// The figure's name (`cs/s`, `in/s`, `load1`, `cpu2.us` ...).
    pub name: String,
    /// Its mean over the recording, in the figure's own unit.
    pub value: f64,
}

/// A thread (by name: TIDs change from one boot to the next), mean over
/// the samples it appeared in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadMean {
    /// The thread's command name (`comm`).
    pub name: String,
    /// Mean CPU use, % of one CPU.
    pub cpu_pct: f64,
    /// Voluntary context switches per second.
    pub cswch_per_s: f64,
    /// Involuntary context switches per second.
    pub nvcswch_per_s: f64,
}

/// What `rtshield stat --record FILE` keeps: the means of each figure over
/// the recording, and the machine it ran on, so two records of the same
/// product (with and without PREEMPT_RT) can be compared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StatRecord {
    /// Always [`STAT_SCHEMA`].
    pub schema: String,
    /// Names the column in a comparison (default: kernel release and
    /// preemption model).
    pub label: String,
    /// RFC 3339, UTC.
    pub started_at: String,
    /// Wall time recorded, seconds.
    pub duration_s: f64,
    /// Samples the means are taken over.
    pub samples: u64,
    /// `uname -r` of the machine, `None` when it could not be read.
    pub kernel_release: Option<String>,
    /// The kernel's preemption model (`PREEMPT_RT`, `PREEMPT_DYNAMIC` ...), `None` when unknown.
    pub preempt_model: Option<String>,
    /// In display order: `cs/s`, `in/s`, `runnable`, `load1`, `tasks`,
    /// the total time breakdown (`us` ... `st`), then `cpuN.us` ....
    pub metrics: Vec<Metric>,
    /// Busiest first.
    pub threads: Vec<ThreadMean>,
}

impl StatRecord {
    /// The mean of figure `name`, `None` when the record does not have it.
    pub fn metric(&self, name: &str) -> Option<f64> {
        self.metrics
            .iter()
            .find(|m| m.name == name)
            .map(|m| m.value)
    }

    /// The record as pretty JSON, newline-terminated (the file's content).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a record serialises") + "\n"
    }

    /// Write to `path` (atomically, through [`SafeDir`]).
    pub fn write(&self, path: &Path, policy: DirPolicy) -> Result<(), SafeError> {
        rtshield_safefs::write_file(path, self.to_json().as_bytes(), policy)
    }

    /// Read a record (bounded, regular files only); errors name the file.
    pub fn read(path: &Path) -> Result<StatRecord, InputError> {
        let name = path.display().to_string();
        let (bytes, public) =
            rtshield_safefs::read_input_public(path, rtshield_safefs::INPUT_LIMIT)
                .map_err(|e| InputError::new(format!("{name}: {e}")))?;
        // serde quotes what it found: only from a file every user may read.
        Self::parse(&String::from_utf8_lossy(&bytes), &name).map_err(|e| {
            if public {
                e
            } else {
                InputError::new(rtshield_text::excerpt::withhold(
                    &e.0,
                    &name,
                    rtshield_text::excerpt::Quote::Withheld,
                ))
            }
        })
    }

    /// Parse a record's text; `name` names it in errors (FILE:LINE:COL); another schema major is refused.
    pub fn parse(text: &str, name: &str) -> Result<StatRecord, InputError> {
        let r: StatRecord = serde_json::from_str(text).map_err(|e| {
            InputError::at(
                name,
                e.line(),
                e.column(),
                format!(
                    "not an `rtshield stat --record` file: {}",
                    crate::read::json_error(&e)
                ),
            )
        })?;
        if r.schema.split('/').next() != STAT_SCHEMA.split('/').next() {
            return Err(InputError::new(format!(
                "{name}: schema `{}`, expected {STAT_SCHEMA}",
                rtshield_text::excerpt::quote(&r.schema)
            )));
        }
        Ok(r)
    }
}

/// `B / A`, or None when A is 0.
pub fn stat_ratio(a: f64, b: f64) -> Option<f64> {
    (a != 0.0).then(|| b / a)
}

/// The comparison table: every metric of `a` (in its order) that `b` has
/// too, then the threads present in both, by name. Columns: A, B, B/A.
pub fn compare_stat_records(a: &StatRecord, b: &StatRecord) -> String {
    let mut o = String::new();
    let w = 10;
    let _ = writeln!(
        o,
        "A: {} ({} samples, {:.0} s)",
        a.label, a.samples, a.duration_s
    );
    let _ = writeln!(
        o,
        "B: {} ({} samples, {:.0} s)",
        b.label, b.samples, b.duration_s
    );
    let _ = writeln!(o);
    let row = |o: &mut String, name: &str, x: f64, y: f64| {
        let r = stat_ratio(x, y).map_or("-".into(), |r| format!("{r:.2}"));
        let _ = writeln!(o, "{name:<28} {x:>w$.1} {y:>w$.1} {r:>7}");
    };
    let _ = writeln!(o, "{:<28} {:>w$} {:>w$} {:>7}", "metric", "A", "B", "B/A");
    for m in &a.metrics {
        if let Some(y) = b.metric(&m.name) {
            row(&mut o, &m.name, m.value, y);
        }
    }
    let both: Vec<(&ThreadMean, &ThreadMean)> = a
        .threads
        .iter()
        .filter_map(|t| Some((t, b.threads.iter().find(|u| u.name == t.name)?)))
        .collect();
    if !both.is_empty() {
        let _ = writeln!(o, "\nthreads in both (%CPU, context switches/s)");
        for (t, u) in both {
            row(&mut o, &format!("{} %CPU", t.name), t.cpu_pct, u.cpu_pct);
            row(
                &mut o,
                &format!("{} cs/s", t.name),
                t.cswch_per_s + t.nvcswch_per_s,
                u.cswch_per_s + u.nvcswch_per_s,
            );
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn record(label: &str, cs: f64, load: f64, irq_pct: Option<f64>) -> StatRecord {
        StatRecord {
            schema: STAT_SCHEMA.into(),
            label: label.into(),
            started_at: "2026-11-23T21:00:00Z".into(),
            duration_s: 60.0,
            samples: 60,
            kernel_release: None,
            preempt_model: None,
            metrics: vec![
                Metric {
                    name: "cs/s".into(),
                    value: cs,
                },
                Metric {
                    name: "load1".into(),
                    value: load,
                },
            ],
            threads: irq_pct
                .map(|p| ThreadMean {
                    name: "irq/150-eth0".into(),
                    cpu_pct: p,
                    cswch_per_s: 100.0,
                    nvcswch_per_s: 0.0,
                })
                .into_iter()
                .collect(),
        }
    }

    #[test]
    fn the_preempt_rt_impact_articles_ratios() {
        // Context switches/s without and with PREEMPT_RT: 1243 -> 2168.
        let a = record("vanilla", 1243.0, 0.0, None);
        let b = record("PREEMPT_RT", 2168.0, 1.5, Some(40.0));
        let t = compare_stat_records(&a, &b);
        assert!(
            t.contains("cs/s                             1243.0     2168.0    1.74"),
            "{t}"
        );
        // A zero in A has no ratio.
        assert!(
            t.contains("load1                               0.0        1.5       -"),
            "{t}"
        );
        // The IRQ thread exists only with PREEMPT_RT: not in the thread table.
        assert!(!t.contains("threads in both"), "{t}");
        // Under ping -f: 1790 -> 10771.
        assert_eq!(
            format!("{:.2}", stat_ratio(1790.0, 10771.0).unwrap()),
            "6.02"
        );
        let back = StatRecord::parse(&b.to_json(), "b.json").unwrap();
        assert_eq!(back, b);
        let e = StatRecord::parse("{\"schema\": 3}", "x.json").unwrap_err();
        assert!(e.to_string().starts_with("x.json:1:"), "{e}");
    }
}
