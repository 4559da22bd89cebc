//! Per-CPU load from `/proc/stat` deltas, as systress shows it under the
//! latency table (`CPU#0 :  54.3%` ... `CPU    :  52.3%`).

use rtshield_sys::Root;
use std::collections::BTreeMap;
use std::io;

use rtshield_sys::{CpuTicks, StatSnapshot};

/// Load over one interval, in percent (0..=100).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CpuLoad {
    /// Busy share of each CPU, %.
    pub per_cpu: BTreeMap<u32, f64>,
    /// Busy share of the whole machine (the aggregate `cpu` line), %.
    pub total: f64,
}

fn pct(a: CpuTicks, b: CpuTicks) -> f64 {
    a.busy_pct(b)
}

impl CpuLoad {
    /// The load between two snapshots (CPUs present in both).
    pub fn between(a: &StatSnapshot, b: &StatSnapshot) -> Self {
        CpuLoad {
            per_cpu: b
                .cpus
                .iter()
                .filter_map(|(c, tb)| a.cpus.get(c).map(|ta| (*c, pct(*ta, *tb))))
                .collect(),
            total: pct(a.all, b.all),
        }
    }

    /// systress's lines: one per CPU (only those in `cpus`, all when `None`),
    /// then the total when `total` is set.
    pub fn render(&self, cpus: Option<&rtshield_vocab::CpuSet>, total: bool) -> String {
        let mut out = String::new();
        for (c, v) in &self.per_cpu {
            if cpus.is_none_or(|s| s.contains(*c)) {
                out.push_str(&format!("CPU#{c:<2}: {v:5.1}%\n"));
            }
        }
        if total {
            out.push_str(&format!("CPU    : {:5.1}%\n", self.total));
        }
        out
    }
}

/// Samples `/proc/stat` and reports the load since the previous call.
#[derive(Debug)]
pub struct CpuLoadMeter {
    root: Root,
    last: StatSnapshot,
}

impl CpuLoadMeter {
    /// A meter whose first [`CpuLoadMeter::sample`] covers the time since now;
    /// fails when `/proc/stat` cannot be read.
    pub fn new(root: Root) -> io::Result<Self> {
        let last = StatSnapshot::read(&root)?;
        Ok(CpuLoadMeter { root, last })
    }

    /// Load since the last call (or since `new`).
    pub fn sample(&mut self) -> io::Result<CpuLoad> {
        let now = StatSnapshot::read(&self.root)?;
        let l = CpuLoad::between(&self.last, &now);
        self.last = now;
        Ok(l)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "cpu  100 0 100 800 0 0 0 0 0 0\ncpu0 50 0 50 400 0 0 0 0 0 0\ncpu1 50 0 50 400 0 0 0 0 0 0\nintr 1 2 3\n";
    // cpu0 fully busy for 100 ticks; cpu1 idle 90 of 100 (10 iowait counted idle).
    const B: &str = "cpu  200 0 100 890 10 0 0 0 0 0\ncpu0 150 0 50 400 0 0 0 0 0 0\ncpu1 50 0 50 490 10 0 0 0 0 0\n";

    #[test]
    fn load_from_deltas() {
        let l = CpuLoad::between(&StatSnapshot::parse(A), &StatSnapshot::parse(B));
        assert_eq!(l.per_cpu[&0], 100.0);
        assert_eq!(l.per_cpu[&1], 0.0);
        assert_eq!(l.total, 50.0);
        assert_eq!(
            l.render(None, true),
            "CPU#0 : 100.0%\nCPU#1 :   0.0%\nCPU    :  50.0%\n"
        );
        let only1 = rtshield_vocab::CpuSet::single(1);
        assert_eq!(l.render(Some(&only1), false), "CPU#1 :   0.0%\n");
    }

    #[test]
    fn no_time_no_load_and_garbage_is_skipped() {
        let a = StatSnapshot::parse(A);
        assert_eq!(CpuLoad::between(&a, &a).total, 0.0);
        let g = StatSnapshot::parse("cpu x y\ncpufoo 1 2 3 4\n\n");
        assert!(g.cpus.is_empty());
    }

    #[test]
    fn meter_reads_through_root() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("proc")).unwrap();
        std::fs::write(d.path().join("proc/stat"), A).unwrap();
        let mut m = CpuLoadMeter::new(Root::new(d.path())).unwrap();
        std::fs::write(d.path().join("proc/stat"), B).unwrap();
        assert_eq!(m.sample().unwrap().total, 50.0);
    }
}
