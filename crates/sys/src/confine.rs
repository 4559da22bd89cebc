//! Keeping kernel paths read from a file (the partition state) inside the
//! places rtshield itself writes.
//!
//! `partition undo` writes back values to paths taken from its state file.
//! Even a state file that passed the ownership checks is validated path by
//! path: each must be absolute, free of `..`, and lie (after dropping `.`
//! and repeated `/`) below one of the roots `create` writes under — the
//! cpuset hierarchy recorded in the state, or [`KNOB_ROOTS`] — and, on a
//! fake tree (`--sysroot`), resolve to a file inside that tree.

use crate::Root;
use std::path::{Component, Path};

/// Machine-wide knob families `partition create` changes: IRQ affinities,
/// sysctls (timer migration, vmstat interval, watchdog mask, RT
/// throttling) and workqueue CPU masks (both the device and the bus view),
/// x86 machine-check polling (`--profile partrt`/`tuned`).
pub const KNOB_ROOTS: &[&str] = &[
    "/proc/irq",
    "/proc/sys",
    "/sys/devices/virtual/workqueue",
    "/sys/bus/workqueue",
    "/sys/devices/system/machinecheck",
];

/// `p` in canonical textual form: absolute, single `/` separators, no `.`
/// components, no trailing `/`. Refused (with the reason): a relative
/// path, any `..`, a NUL byte, an empty path.
pub fn normalise(p: &str) -> Result<String, String> {
    if p.is_empty() {
        return Err("empty path".into());
    }
    if p.contains('\0') {
        return Err("path contains a NUL byte".into());
    }
    if !p.starts_with('/') {
        return Err("not an absolute path".into());
    }
    let mut out = String::new();
    for c in Path::new(p).components() {
        match c {
            Component::RootDir | Component::CurDir => {}
            Component::ParentDir => return Err("path contains `..`".into()),
            Component::Normal(n) => {
                out.push('/');
                out.push_str(&n.to_string_lossy());
            }
            Component::Prefix(_) => return Err("not a Unix path".into()),
        }
    }
    if out.is_empty() {
        out.push('/');
    }
    Ok(out)
}

/// Whether normalised `p` is `base` or below it (component-wise: `/proc/irqx`
/// is not below `/proc/irq`). Both must be normalised.
pub fn is_under(p: &str, base: &str) -> bool {
    if base == "/" {
        return true;
    }
    p == base || p.strip_prefix(base).is_some_and(|r| r.starts_with('/'))
}

/// Whether normalised `p` is strictly below `base`.
pub fn is_strictly_under(p: &str, base: &str) -> bool {
    p != base && is_under(p, base)
}

/// On a fake tree, whether `abs` (normalised) resolves to a place inside
/// the tree once symlinks are followed: the longest existing prefix of
/// `root.path(abs)` is canonicalised and must stay below the canonical
/// base. Always true on the host (everything is inside `/`).
pub fn resolves_inside(root: &Root, abs: &str) -> bool {
    if root.is_host() {
        return true;
    }
    let Ok(base) = root.base().canonicalize() else {
        return false;
    };
    let mut p = root.path(abs);
    loop {
        match p.canonicalize() {
            Ok(c) => return c.starts_with(&base),
            Err(_) => {
                if !p.pop() {
                    return false;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalise_drops_dots_and_refuses_parent_components() {
        assert_eq!(normalise("/proc//irq/./3/").unwrap(), "/proc/irq/3");
        assert_eq!(normalise("/").unwrap(), "/");
        for bad in ["", "proc/irq", "/proc/irq/../../etc/passwd", "/a\0b", "/.."] {
            assert!(normalise(bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            normalise("/sys/../../..").unwrap_err(),
            "path contains `..`"
        );
    }

    #[test]
    fn under_is_component_wise() {
        assert!(is_under("/proc/irq/3/smp_affinity_list", "/proc/irq"));
        assert!(is_under("/proc/irq", "/proc/irq"));
        assert!(!is_strictly_under("/proc/irq", "/proc/irq"));
        assert!(!is_under("/proc/irqx/1", "/proc/irq"));
        assert!(!is_under("/etc/passwd", "/proc/sys"));
        assert!(is_under("/anything", "/"));
    }

    #[test]
    fn symlink_out_of_a_fake_tree_is_seen() {
        let t = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(t.path().join("proc/irq/1")).unwrap();
        std::os::unix::fs::symlink(outside.path(), t.path().join("proc/irq/2")).unwrap();
        let root = Root::new(t.path());
        assert!(resolves_inside(&root, "/proc/irq/1/smp_affinity_list"));
        assert!(resolves_inside(&root, "/proc/irq/9/missing"));
        assert!(!resolves_inside(&root, "/proc/irq/2/smp_affinity_list"));
        assert!(resolves_inside(&Root::host(), "/etc/passwd"));
    }
}
