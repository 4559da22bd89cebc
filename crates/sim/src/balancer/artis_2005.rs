//! The ARTiS patch posted to LKML on 2005-05-03 (against 2.6.11): the
//! mechanism of [`super::artis`] with the patch's own choices where it
//! departs from the thesis.

use super::artis::{ForcedTo, Rules};
use crate::config::{BalancerKind, SimConfig};
use crate::stats;

#[derive(Debug, Clone, Copy)]
pub(crate) struct Patch2005;

impl Rules for Patch2005 {
    fn kind(&self) -> BalancerKind {
        BalancerKind::Artis2005
    }
    fn return_ticks(&self, _cfg: &SimConfig) -> u64 {
        // The patch tries to send RT tasks back on every tick.
        1
    }
    fn first_attempt_has_period(&self) -> bool {
        // The patch only initialises the timestamp on the first attempt.
        false
    }
    fn may_go_rt(&self, pm: u64, td: u64, now: u64, cfg: &SimConfig) -> bool {
        patch2005_allows(pm, td, now, cfg.artis_c_ns)
    }
    fn multiplier(&self, rt_stat: u64) -> f64 {
        stats::rt_ratio_2005(rt_stat) as f64
    }
    fn forced_to(&self) -> ForcedTo {
        // complete_migration(): "for the time being we choose the first one
        // which respects the affinity".
        ForcedTo::FirstAllowed
    }
    fn tests_rt_to_rt(&self) -> bool {
        // can_migrate_task() tests every move to an RT CPU.
        true
    }
    fn lifo_drain(&self) -> bool {
        // artis_valois_pull_all() hands the queue back last-in first.
        true
    }
}

/// The 2005 patch's `can_migrate_task()` test, as published: refuse when
/// `now > next − C && now > next + 2·Pm` with `next = td + Pm`, in unsigned
/// arithmetic (when `next < C` the subtraction wraps and the first test
/// fails, so a task that never masked is allowed).
pub(crate) fn patch2005_allows(pm: u64, td: u64, now: u64, c: u64) -> bool {
    let next = td + pm;
    let first = next.checked_sub(c).is_some_and(|x| now > x);
    let second = now > next + pm * 2;
    !(first && second)
}

#[cfg(test)]
mod tests {
    use super::patch2005_allows;

    const MS: u64 = 1_000_000;

    #[test]
    fn patch_2005_condition_as_published() {
        let c = 2 * MS;
        // Never masked: next = 0 < C, the subtraction wraps: allowed.
        assert!(patch2005_allows(0, 0, 10_000 * MS, c));
        // Masks every 100 ms, last at 1000 ms: allowed up to next + 2·Pm = 1300 ms…
        assert!(patch2005_allows(100 * MS, 1000 * MS, 1099 * MS, c));
        assert!(patch2005_allows(100 * MS, 1000 * MS, 1300 * MS, c));
        // …and refused once the attempt is overdue by more than two periods.
        assert!(!patch2005_allows(100 * MS, 1000 * MS, 1301 * MS, c));
    }
}
