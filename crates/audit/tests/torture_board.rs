//! `audit` on the torture article's Pandaboard: its literal `/proc/interrupts`
//! (per-CPU `twd` timer, `GIC` names, IPI rows, two-word names).

use rtshield_audit::{audit, AuditOptions};
use rtshield_sys::Root;
use rtshield_testkit::put;
use std::path::Path;
use std::time::Duration;

fn board() -> tempfile::TempDir {
    board_of("pandaboard", "0-1")
}

/// A fake tree with fixture `name` as `/proc/interrupts` and every
/// numbered IRQ allowed on every CPU.
fn board_of(name: &str, online: &str) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../sys/tests/fixtures/interrupts")
        .join(name);
    let intr = std::fs::read_to_string(fixture).unwrap();
    let w = |p: &str, s: &str| put(d.path(), p, s);
    w("proc/interrupts", &intr);
    w("sys/devices/system/cpu/online", &format!("{online}\n"));
    // Every numbered IRQ (twd included, as on the board) may use every CPU.
    for l in intr.lines().skip(1) {
        let id = l.split(':').next().unwrap().trim();
        if id.parse::<u32>().is_ok() {
            w(
                &format!("proc/irq/{id}/smp_affinity_list"),
                &format!("{online}\n"),
            );
        }
    }
    d
}

fn audit_of(d: &tempfile::TempDir) -> rtshield_audit::Audit {
    audit(
        &Root::new(d.path()),
        &AuditOptions {
            cpus: None,
            watch: Duration::ZERO,
        },
    )
    .unwrap()
}

/// No fix names a per-CPU IRQ (its number as a word of the command).
fn no_fix_moves(a: &rtshield_audit::Audit, ids: &[&str]) {
    for f in &a.fixes {
        let words: Vec<&str> = f
            .command
            .split(|c: char| c.is_whitespace() || c == ',' || c == '/')
            .collect();
        for id in ids {
            assert!(!words.contains(id), "{id} in {f:?}");
        }
    }
    for c in &a.cpus {
        assert!(
            c.irqs.iter().all(|i| !ids.contains(&i.irq.as_str())),
            "{:?}",
            c.irqs
        );
    }
}

#[test]
fn raspberry_pi_2_arch_timer_is_per_cpu_and_devices_are_on_cpu0() {
    let d = board_of("rpi2", "0-3");
    let a = audit_of(&d);
    assert_eq!(a.cpus.len(), 4);
    // 1005317 + 36 + 427715 + 478426356 + 411468 + 502 (arch_timer not counted).
    assert!(
        a.findings[0]
            .starts_with("Every device IRQ since boot (480271394 interrupts) was handled on CPU 0"),
        "{:?}",
        a.findings
    );
    no_fix_moves(&a, &["161", "162", "165"]);
    for c in &a.cpus {
        assert!(c.ipis.contains_key("162 (arch_timer)"), "{:?}", c.ipis);
    }
    let usb = a.cpus[0].irqs.iter().find(|i| i.irq == "56").unwrap();
    assert_eq!(usb.name, "dwc_otg, dwc_otg_pcd, dwc_otg_hcd:usb1");
    // The advice is never CPU 0.
    assert!(a.fixes[0].command.starts_with("rtshield partition create "));
    assert_ne!(a.fixes[0].command, "rtshield partition create 0");
}

#[test]
fn x86_laptop_spreads_device_irqs_and_loc_stays_per_cpu() {
    let d = board_of("x86-broadwell", "0-3");
    let a = audit_of(&d);
    assert!(
        a.findings
            .iter()
            .all(|f| !f.starts_with("Every device IRQ")),
        "{:?}",
        a.findings
    );
    for c in &a.cpus {
        assert!(c.ipis.contains_key("LOC"), "{:?}", c.ipis);
        assert!(c.irqs.iter().all(|i| i.irq.parse::<u32>().is_ok()));
    }
    // ahci fired on CPU 1 only, eth0 on CPU 3 only.
    assert!(a.cpus[1]
        .irqs
        .iter()
        .any(|i| i.name == "ahci[0000:00:1f.2]"));
    assert!(a.cpus[3].irqs.iter().any(|i| i.name == "eth0"));
    no_fix_moves(&a, &["LOC", "NMI", "RES", "CAL", "TLB", "MCP"]);
}

#[test]
fn this_vm_virtio_irqs_are_devices() {
    let d = board_of("x86-vm", "0-1");
    let a = audit_of(&d);
    assert!(a.cpus[1].irqs.iter().any(|i| i.name == "virtio1-req.0"));
    no_fix_moves(&a, &["LOC", "NMI", "RES", "CAL", "TLB"]);
}

#[test]
fn twd_is_per_cpu_and_the_verdict_is_every_device_irq_on_cpu0() {
    let d = board();
    let a = audit_of(&d);
    assert_eq!(a.cpus.len(), 2);
    // The article's finding: DMA, ehci and mmc interrupts all land on CPU 0.
    // 401065 + 6 + 9 + 240 + 13 + 1 + 160087021 + 435894 (every device IRQ
    // that fired), without twd's 1624296339.
    assert!(
        a.findings[0]
            .starts_with("Every device IRQ since boot (160924249 interrupts) was handled on CPU 0"),
        "{:?}",
        a.findings
    );
    // twd fires on both CPUs, is reported as per-CPU, never as a device IRQ.
    for c in &a.cpus {
        assert!(c.irqs.iter().all(|i| i.irq != "29"), "{:?}", c.irqs);
        assert_eq!(
            c.ipis.get("29 (twd)").copied(),
            Some([1624296339, 1089370474][c.cpu as usize])
        );
    }
    assert!(
        a.findings.iter().all(|f| !f.contains("irq 29")),
        "{:?}",
        a.findings
    );
    let cpu0 = &a.cpus[0];
    let mmc = cpu0.irqs.iter().find(|i| i.irq == "115").unwrap();
    assert_eq!((mmc.name.as_str(), mmc.total), ("mmc0", 435894));
    let dispc = cpu0.irqs.iter().find(|i| i.irq == "57").unwrap();
    assert_eq!(dispc.name, "OMAP DISPC");
    // No fix offers to move irq 29.
    for f in &a.fixes {
        let words: Vec<&str> = f.command.split_whitespace().collect();
        assert!(!words.contains(&"29"), "{f:?}");
    }
}

#[test]
fn cpu0_is_never_the_advice_even_when_it_is_the_quietest() {
    let d = tempfile::tempdir().unwrap();
    let w = |p: &str, s: &str| put(d.path(), p, s);
    // Every device IRQ on CPU 1 (irqaffinity=1 at boot, say): CPU 0 is quieter.
    w(
        "proc/interrupts",
        "           CPU0       CPU1\n 44:          0     401065       GIC  DMA\n 115:         0     435894       GIC  mmc0\nIPI0:          5          5  Timer broadcast interrupts\n",
    );
    w("sys/devices/system/cpu/online", "0-1\n");
    for id in ["44", "115"] {
        w(&format!("proc/irq/{id}/smp_affinity_list"), "1\n");
    }
    let a = audit_of(&d);
    assert!(a.cpus[0].score < a.cpus[1].score, "{:?}", a.cpus);
    let f = &a.fixes[0];
    assert_eq!(f.command, "rtshield partition create 1", "{f:?}");
    assert!(
        f.title.contains("CPU 0 scores less") && f.title.contains("kept for housekeeping"),
        "{f:?}"
    );
}
