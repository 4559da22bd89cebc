//! [`Measurement`] → [`RunResult`] (the file schema).

use crate::Measurement;
use rtshield_results::{ProgramResult, RunResult, Settings, ThreadResult, SCHEMA};
use rtshield_sys::SysInfo;
use std::collections::BTreeMap;

/// What the caller knows that the engine does not.
#[derive(Debug, Clone, Default)]
pub struct ResultContext {
    /// argv of the command that produced the run.
    pub command: Vec<String>,
    /// The configuration file's text, when run from one.
    pub config: Option<String>,
    pub label: Option<String>,
    pub tags: BTreeMap<String, String>,
    pub programs: Vec<ProgramResult>,
    /// Added after the engine's own warnings.
    pub warnings: Vec<String>,
    pub sysinfo: SysInfo,
}

impl Measurement {
    pub fn to_result(&self, ctx: &ResultContext) -> RunResult {
        let spec = &self.spec;
        let threads = self
            .threads
            .iter()
            .map(|t| {
                let h = &t.hist;
                ThreadResult {
                    index: t.spec.index,
                    tid: t.tid,
                    cpu: t.cpu,
                    policy: t.policy.name().to_string(),
                    priority: t.priority,
                    requested_policy: (t.policy != t.spec.policy)
                        .then(|| t.spec.policy.name().to_string()),
                    period_ns: t.spec.period_ns,
                    samples: t.exact.count,
                    min_ns: t.exact.min_or0(),
                    max_ns: t.exact.max_or0(),
                    cur_ns: t.exact.cur,
                    avg_ns: t.exact.avg(),
                    overruns: t.exact.overruns,
                    missed_periods: t.exact.missed,
                    lost: t.exact.lost,
                    histogram: h.to_histogram(),
                    hist_stats: h.hist_stats(),
                    percentiles: h.percentiles(),
                    corrected: h.corrected(),
                }
            })
            .collect();
        let mut warnings = self.warnings.clone();
        warnings.extend(ctx.warnings.iter().cloned());
        RunResult {
            schema: SCHEMA.to_string(),
            tool: format!("rtshield {}", env!("CARGO_PKG_VERSION")),
            label: ctx.label.clone(),
            started_at: self.started_at.clone(),
            duration_s: self.elapsed_ns as f64 / 1e9,
            command: ctx.command.clone(),
            config: ctx.config.clone(),
            settings: Settings {
                mode: spec.mode.name().to_string(),
                resolution_ns: spec.resolution_ns,
                histo_buckets: spec.histo_size_ns / spec.resolution_ns.max(1) + 1,
                stats_period_ns: spec.stats_period_ns,
                requested_duration_ns: spec.duration_ns,
                requested_samples: spec.samples,
                memlock: self.memlocked,
                cpu_dma_latency: self.cpu_dma_latency,
            },
            sysinfo: ctx.sysinfo.clone(),
            warnings,
            end_reason: self.end.name(),
            threads,
            programs: ctx.programs.clone(),
            tags: ctx.tags.clone(),
        }
    }
}
