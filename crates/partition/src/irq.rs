//! IRQ naming helpers.

use crate::kernel::Kernel;

/// Handler names of IRQ `n`: the kernel makes one directory per action in
/// `/proc/irq/N/` (`virtio1-req.0`, `ttyS0`).
pub fn irq_actions(k: &Kernel, n: &str) -> Option<String> {
    let names: Vec<String> = k
        .dir_names(&format!("/proc/irq/{n}"))
        .ok()?
        .into_iter()
        .filter(|e| k.root.path(format!("/proc/irq/{n}/{e}")).is_dir())
        .collect();
    (!names.is_empty()).then(|| names.join(","))
}
