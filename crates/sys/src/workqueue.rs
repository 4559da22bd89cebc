//! Unbound workqueues (`/sys/devices/virtual/workqueue`): the global
//! `cpumask` and the `cpumask` of each workqueue exported to sysfs (mask
//! syntax).

use crate::kpath::{self, WORKQUEUE_CPUMASK, WORKQUEUE_DIR};
use crate::Root;
use rtshield_vocab::CpuSet;

/// The mask files that exist: the global one first, then each workqueue's.
pub fn cpumask_files(root: &Root) -> Vec<String> {
    let mut out = vec![];
    if root.exists(WORKQUEUE_CPUMASK) {
        out.push(WORKQUEUE_CPUMASK.to_string());
    }
    for wq in root.read_dir_names(WORKQUEUE_DIR).unwrap_or_default() {
        let f = kpath::workqueue_cpumask(&wq);
        if root.exists(&f) {
            out.push(f);
        }
    }
    out
}

/// The global unbound-workqueue mask, when readable.
pub fn global_mask(root: &Root) -> Option<CpuSet> {
    CpuSet::parse_mask(root.read_opt(WORKQUEUE_CPUMASK)?.trim()).ok()
}

/// Each workqueue with its own readable mask, by name.
pub fn masks(root: &Root) -> Vec<(String, CpuSet)> {
    root.read_dir_names(WORKQUEUE_DIR)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|n| {
            let m = root.read_opt(kpath::workqueue_cpumask(&n))?;
            Some((n, CpuSet::parse_mask(m.trim()).ok()?))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_on_a_fake_tree() {
        let d = tempfile::tempdir().unwrap();
        let w = |p: &str, s: &str| {
            let f = d.path().join(p.trim_start_matches('/'));
            std::fs::create_dir_all(f.parent().unwrap()).unwrap();
            std::fs::write(f, s).unwrap();
        };
        w(WORKQUEUE_CPUMASK, "f\n");
        w(&kpath::workqueue_cpumask("writeback"), "3\n");
        w(&kpath::workqueue_cpumask("bad"), "zz\n");
        std::fs::create_dir_all(d.path().join("sys/devices/virtual/workqueue/nomask")).unwrap();
        let r = Root::new(d.path());
        assert_eq!(global_mask(&r).unwrap().to_list(), "0-3");
        let m = masks(&r);
        assert_eq!(m.len(), 1);
        assert_eq!(
            (m[0].0.as_str(), m[0].1.to_list()),
            ("writeback", "0-1".into())
        );
        assert_eq!(
            cpumask_files(&r),
            vec![
                WORKQUEUE_CPUMASK.to_string(),
                kpath::workqueue_cpumask("bad"),
                kpath::workqueue_cpumask("writeback")
            ]
        );
    }
}
