//! Which CPUs exist, from sysfs. This is the one place that answers "the
//! online CPUs"; the CPUs this *process* may use is a different question,
//! answered by [`crate::sched::get_affinity`], and [`usable`] combines both
//! for callers that mean "online and allowed to me".

use crate::kpath;
use crate::Root;
use rtshield_vocab::CpuSet;
use std::io;

fn read_list(root: &Root, path: &str) -> io::Result<CpuSet> {
    let text = root.read_trim(path)?;
    CpuSet::parse_list(&text).map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{}: {e}", root.path(path).display()),
        )
    })
}

/// CPUs online now (`/sys/devices/system/cpu/online`). An error names the
/// file (missing or not a CPU list).
pub fn online(root: &Root) -> io::Result<CpuSet> {
    read_list(root, kpath::CPU_ONLINE)
}

/// CPUs that may ever come online; falls back to the online ones on kernels
/// without the file.
pub fn possible(root: &Root) -> io::Result<CpuSet> {
    read_list(root, kpath::CPU_POSSIBLE).or_else(|_| online(root))
}

/// CPUs isolated at boot (`isolcpus=`); empty when none or unreadable.
pub fn isolated(root: &Root) -> CpuSet {
    read_list(root, kpath::CPU_ISOLATED).unwrap_or_default()
}

/// CPUs running without the tick (`nohz_full=`); empty when none.
pub fn nohz_full(root: &Root) -> CpuSet {
    read_list(root, kpath::CPU_NOHZ_FULL).unwrap_or_default()
}

/// CPUs this process may run on: its affinity mask (`taskset`, a cpuset).
/// Not the machine's online CPUs: ask [`online`] for those.
pub fn allowed() -> io::Result<CpuSet> {
    crate::sched::get_affinity(0)
}

/// CPUs that are online *and* allowed to this process. On a fake tree the
/// host's affinity says nothing, so only the tree's online CPUs count.
/// When the two do not meet (a sysroot copied from another machine), the
/// online set wins; without a readable online list, the affinity; when
/// nothing can be read, CPU 0.
pub fn usable(root: &Root) -> CpuSet {
    let online = online(root).ok().filter(|s| !s.is_empty());
    let allowed = allowed().ok().filter(|s| !s.is_empty());
    match (online, allowed) {
        (Some(o), Some(a)) if root.is_host() && !o.intersection(&a).is_empty() => {
            o.intersection(&a)
        }
        (Some(o), _) => o,
        (None, Some(a)) => a,
        (None, None) => CpuSet::single(0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        for (p, s) in files {
            let f = d.path().join(p.trim_start_matches('/'));
            std::fs::create_dir_all(f.parent().unwrap()).unwrap();
            std::fs::write(f, s).unwrap();
        }
        d
    }

    #[test]
    fn reads_the_sysfs_lists() {
        let d = tree(&[
            (kpath::CPU_ONLINE, "0-2,5\n"),
            (kpath::CPU_ISOLATED, "\n"),
            (kpath::CPU_NOHZ_FULL, "5\n"),
        ]);
        let r = Root::new(d.path());
        assert_eq!(online(&r).unwrap().to_list(), "0-2,5");
        // No `possible` file: the online CPUs.
        assert_eq!(possible(&r).unwrap().to_list(), "0-2,5");
        assert!(isolated(&r).is_empty());
        assert_eq!(nohz_full(&r).to_list(), "5");
        // This process runs somewhere.
        assert!(!allowed().unwrap().is_empty());
        // A fake tree: the host's affinity does not matter.
        assert_eq!(usable(&r).to_list(), "0-2,5");
    }

    #[test]
    fn errors_name_the_file() {
        let d = tree(&[(kpath::CPU_ONLINE, "zero\n")]);
        let e = online(&Root::new(d.path())).unwrap_err();
        assert!(
            e.to_string().contains("sys/devices/system/cpu/online"),
            "{e}"
        );
        let e = online(&Root::new(d.path().join("nope"))).unwrap_err();
        assert!(e.to_string().contains("cpu/online"), "{e}");
    }
}
