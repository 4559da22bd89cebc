//! The verdict as data: the limits a run was given and whether each thread
//! and the run passed them. `measure --max-latency` records it in
//! results.json ([`RunResult::verdict`]); every CI export derives its
//! pass/fail from it (cyclictest-json `return_code`, JUnit failures, KCIDB
//! status), so a failed run exports as failed without the limit being
//! given again. `export --max-latency` may add a limit at export time:
//! [`effective_verdict`] says which one wins.

use crate::{RunResult, ThreadResult};
use serde::{Deserialize, Serialize};

/// The exit status of a run that failed its limits (`measure
/// --max-latency`), and the `return_code` of its cyclictest-json export.
pub const EXIT_LIMIT_EXCEEDED: i32 = 3;

/// The limits a run is judged against, each absent when not given. Only
/// `max_latency_ns` exists today; a new limit is a new optional field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Limits {
    /// A thread fails when its maximum latency exceeds this (ns), or when
    /// it measured nothing (its maximum is unknown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_latency_ns: Option<u64>,
}

impl Limits {
    /// No limit given.
    pub fn is_empty(&self) -> bool {
        self.max_latency_ns.is_none()
    }

    /// These limits, and `base`'s where these give none (the export-time
    /// limit of a kind replaces the recorded one of the same kind).
    pub fn or(self, base: Limits) -> Limits {
        Limits {
            max_latency_ns: self.max_latency_ns.or(base.max_latency_ns),
        }
    }
}

/// The run's verdict: its limits, and pass/fail per thread and overall.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    /// The limits judged against.
    pub limits: Limits,
    /// Every thread passed every limit.
    pub passed: bool,
    /// One entry per thread, in the order of `threads`.
    pub threads: Vec<ThreadVerdict>,
}

/// One thread's verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThreadVerdict {
    /// The thread's `index`.
    pub index: u32,
    /// It passed every limit.
    pub passed: bool,
    /// The limits it failed (empty when it passed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failures: Vec<LimitFailure>,
}

/// One limit a thread failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LimitFailure {
    /// The limit's key in [`Limits`] (`max_latency_ns`).
    pub limit: String,
    /// The limit's value.
    pub allowed: u64,
    /// What the thread measured; absent when it measured nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured: Option<i64>,
}

impl LimitFailure {
    /// One line for a person (JUnit's failure message).
    pub fn message(&self) -> String {
        match self.measured {
            None => "no sample measured: the maximum latency is unknown".into(),
            Some(m) => format!(
                "maximum latency {:.1} us exceeds the limit {:.1} us",
                m as f64 / 1000.0,
                self.allowed as f64 / 1000.0
            ),
        }
    }
}

impl Verdict {
    /// Judge `threads` against `limits`.
    pub fn judge(threads: &[ThreadResult], limits: Limits) -> Verdict {
        let threads: Vec<ThreadVerdict> = threads
            .iter()
            .map(|t| {
                let mut failures = Vec::new();
                if let Some(l) = limits.max_latency_ns {
                    // Nothing measured: no maximum (whatever a figure says).
                    let measured = t.max_ns.filter(|_| t.samples != Some(0));
                    if measured.is_none_or(|m| m > l as i64) {
                        failures.push(LimitFailure {
                            limit: "max_latency_ns".into(),
                            allowed: l,
                            measured,
                        });
                    }
                }
                ThreadVerdict {
                    index: t.index,
                    passed: failures.is_empty(),
                    failures,
                }
            })
            .collect();
        Verdict {
            limits,
            passed: threads.iter().all(|t| t.passed),
            threads,
        }
    }

    /// The verdict of the thread with `index`.
    pub fn thread(&self, index: u32) -> Option<&ThreadVerdict> {
        self.threads.iter().find(|t| t.index == index)
    }
}

/// The verdict every export uses (the one function they all call): the
/// recorded limits — replaced, kind by kind, by limits the export gives
/// (`extra`, e.g. `export --max-latency`) — judged again on the threads'
/// recorded figures. The recorded `passed` flags are never trusted as
/// they are: a file whose `passed` contradicts its own limit and maxima
/// (edited, or with `threads` emptied) would otherwise export as passed
/// in one format and failed in another (adversary round 3, C12;
/// docs/formats.md). None: no verdict recorded and no limit given.
pub fn effective_verdict(res: &RunResult, extra: Limits) -> Option<Verdict> {
    if extra.is_empty() && res.verdict.is_none() {
        return None;
    }
    let base = res.verdict.as_ref().map(|v| v.limits).unwrap_or_default();
    Some(Verdict::judge(&res.threads, extra.or(base)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::example::example_result;

    #[test]
    fn a_thread_over_the_limit_fails_the_run() {
        let r = example_result(); // max 150.4 us
        let v = Verdict::judge(
            &r.threads,
            Limits {
                max_latency_ns: Some(100_000),
            },
        );
        assert!(!v.passed);
        assert_eq!(
            v.threads[0].failures[0].message(),
            "maximum latency 150.4 us exceeds the limit 100.0 us"
        );
        let v = Verdict::judge(
            &r.threads,
            Limits {
                max_latency_ns: Some(150_400),
            },
        );
        assert!(v.passed, "equal to the limit passes");
    }

    #[test]
    fn a_thread_that_measured_nothing_fails_a_limit() {
        let mut r = example_result();
        r.threads[0].samples = Some(0);
        let v = Verdict::judge(
            &r.threads,
            Limits {
                max_latency_ns: Some(1),
            },
        );
        assert!(!v.passed);
        assert_eq!(v.threads[0].failures[0].measured, None);
    }

    /// Adversary round 3, C12: a recorded verdict whose `passed` flags
    /// contradict its limit and maxima (one thread's verdict removed, or
    /// `passed: true` over a maximum beyond the limit) is judged again:
    /// every export sees the same, true verdict.
    #[test]
    fn a_recorded_verdict_that_contradicts_its_figures_is_judged_again() {
        let mut r = example_result(); // max 150.4 us
        let limits = Limits {
            max_latency_ns: Some(100_000),
        };
        let mut forged = Verdict::judge(&r.threads, limits);
        forged.threads.clear();
        r.verdict = Some(forged.clone());
        let v = effective_verdict(&r, Limits::default()).unwrap();
        assert!(!v.passed);
        assert!(!v.thread(r.threads[0].index).unwrap().passed);
        forged.passed = true;
        r.verdict = Some(forged);
        assert!(!effective_verdict(&r, Limits::default()).unwrap().passed);
    }

    #[test]
    fn an_export_limit_replaces_the_recorded_one() {
        let mut r = example_result();
        assert_eq!(effective_verdict(&r, Limits::default()), None);
        r.verdict = Some(Verdict::judge(
            &r.threads,
            Limits {
                max_latency_ns: Some(1_000),
            },
        ));
        let v = effective_verdict(&r, Limits::default()).unwrap();
        assert!(!v.passed, "recorded verdict used as is");
        let v = effective_verdict(
            &r,
            Limits {
                max_latency_ns: Some(1_000_000),
            },
        )
        .unwrap();
        assert!(v.passed, "the export's limit wins");
        assert_eq!(v.limits.max_latency_ns, Some(1_000_000));
    }

    #[test]
    fn the_json_shape() {
        let r = example_result();
        let v = Verdict::judge(
            &r.threads,
            Limits {
                max_latency_ns: Some(1_000),
            },
        );
        assert_eq!(
            serde_json::to_string(&v).unwrap(),
            r#"{"limits":{"max_latency_ns":1000},"passed":false,"threads":[{"index":0,"passed":false,"failures":[{"limit":"max_latency_ns","allowed":1000,"measured":150400}]}]}"#
        );
    }
}
