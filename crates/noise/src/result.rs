//! Helpers of the noise run's result (`rtshield_results::NoiseResult`,
//! built in `engine`): the longest-k list and the priority text of a
//! traced thread. The file format is `rtshield-results`'; the summary
//! table and the pictures are `rtshield-report`'s.

use rtshield_results::{Histogram, NOISE_TAIL_RESOLUTION_NS, NOISE_TAIL_SIZE_NS};
use rtshield_trace::priority_text;
use rtshield_trace::NoiseSource as Source;
use std::collections::BTreeMap;

/// The gaps beyond the main histogram, in coarser buckets
/// ([`NOISE_TAIL_RESOLUTION_NS`] up to [`NOISE_TAIL_SIZE_NS`]): on a VM a
/// maximum of 8 to 60 ms is usual, and `runs compare` needs their lengths
/// to give the maximum an interval (the main histogram knows them only as
/// "beyond 10 ms"). 10 001 counters per CPU.
#[derive(Debug, Clone)]
pub(crate) struct Tail {
    buckets: Vec<u64>,
    overflow: u64,
}

impl Tail {
    pub(crate) fn new() -> Tail {
        Tail {
            buckets: vec![0; (NOISE_TAIL_SIZE_NS / NOISE_TAIL_RESOLUTION_NS + 1) as usize],
            overflow: 0,
        }
    }

    pub(crate) fn record(&mut self, len_ns: u64) {
        let i = usize::try_from(len_ns / NOISE_TAIL_RESOLUTION_NS).unwrap_or(usize::MAX);
        match self.buckets.get_mut(i) {
            Some(c) => *c += 1,
            None => self.overflow += 1,
        }
    }

    pub(crate) fn to_histogram(&self) -> Histogram {
        Histogram {
            resolution_ns: NOISE_TAIL_RESOLUTION_NS,
            buckets: self.buckets.len() as u64,
            counts: self
                .buckets
                .iter()
                .enumerate()
                .filter(|(_, c)| **c > 0)
                .map(|(i, c)| [i as u64, *c])
                .collect(),
            overflow: self.overflow,
            underflow: 0,
        }
    }
}

/// The `k` items with the largest keys (ties: the first offered).
#[derive(Debug, Clone)]
pub(crate) struct TopK<T> {
    k: usize,
    /// Largest first.
    items: Vec<(u64, T)>,
}

impl<T> TopK<T> {
    pub(crate) fn new(k: usize) -> Self {
        TopK {
            k,
            items: Vec::with_capacity(k + 1),
        }
    }

    pub(crate) fn offer(&mut self, key: u64, item: T) {
        if self.items.len() == self.k && self.items.last().is_none_or(|(m, _)| key <= *m) {
            return;
        }
        let at = self.items.partition_point(|(m, _)| *m >= key);
        self.items.insert(at, (key, item));
        self.items.truncate(self.k);
    }

    pub(crate) fn into_sorted(self) -> Vec<T> {
        self.items.into_iter().map(|(_, t)| t).collect()
    }
}

/// The priority text of a traced thread: `FIFO 99` when `live` (read
/// after the run) has it under the same name and priority, else from the
/// traced prio (`RT 99`, `nice 0`, `deadline`).
pub(crate) fn thread_priority(
    src: &Source,
    live: &BTreeMap<u32, rtshield_trace::LiveRt>,
) -> String {
    let kp = src.kernel_prio;
    if let (Some(kp), Some(pid)) = (kp, src.pid) {
        if let Some(l) = live.get(&pid) {
            if (0..100).contains(&kp) && l.comm == src.name && l.priority as i32 == 99 - kp {
                let name = match l.policy {
                    rtshield_trace::RtPolicy::Fifo => "FIFO",
                    rtshield_trace::RtPolicy::Rr => "RR",
                };
                return format!("{name} {}", l.priority);
            }
        }
    }
    priority_text(kp)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_counts_in_100_us_buckets_up_to_1_s() {
        let mut t = Tail::new();
        for v in [
            10_001_000,
            10_099_999,
            56_070_000,
            1_000_099_999,
            1_000_100_000,
        ] {
            t.record(v);
        }
        let h = t.to_histogram();
        assert_eq!((h.resolution_ns, h.buckets), (100_000, 10_001));
        assert_eq!(h.counts, vec![[100, 2], [560, 1], [10_000, 1]]);
        assert_eq!(h.overflow, 1);
    }

    #[test]
    fn top_k_keeps_the_largest_in_order() {
        let mut t = TopK::new(3);
        for (k, v) in [(5, 'a'), (1, 'b'), (9, 'c'), (5, 'd'), (7, 'e'), (2, 'f')] {
            t.offer(k, v);
        }
        assert_eq!(t.into_sorted(), vec!['c', 'e', 'a']);
        let t: TopK<u8> = TopK::new(0);
        assert!(t.into_sorted().is_empty());
    }

    #[test]
    fn live_policy_only_for_the_same_thread() {
        use rtshield_trace::CauseKind;
        use rtshield_trace::{LiveRt, RtPolicy};
        let src = Source {
            kind: CauseKind::Thread,
            name: "busy".into(),
            number: None,
            pid: Some(9),
            kernel_prio: Some(0),
        };
        let mut live = BTreeMap::new();
        assert_eq!(thread_priority(&src, &live), "RT 99");
        live.insert(
            9,
            LiveRt {
                comm: "busy".into(),
                policy: RtPolicy::Fifo,
                priority: 99,
            },
        );
        assert_eq!(thread_priority(&src, &live), "FIFO 99");
        live.get_mut(&9).unwrap().comm = "other".into();
        assert_eq!(thread_priority(&src, &live), "RT 99");
    }
}
