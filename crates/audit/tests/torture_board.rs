//! `audit` on the torture article's Pandaboard: its literal `/proc/interrupts`
//! (per-CPU `twd` timer, `GIC` names, IPI rows, two-word names).

use rtshield_audit::{audit, AuditOptions};
use rtshield_sys::Root;
use std::path::Path;
use std::time::Duration;

fn board() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../sys/tests/fixtures/interrupts/pandaboard");
    let intr = std::fs::read_to_string(fixture).unwrap();
    let w = |p: &str, s: &str| {
        let f = d.path().join(p);
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(f, s).unwrap();
    };
    w("proc/interrupts", &intr);
    w("sys/devices/system/cpu/online", "0-1\n");
    // Every numbered IRQ (twd included, as on the board) may use both CPUs.
    for l in intr.lines().skip(1) {
        let id = l.split(':').next().unwrap().trim();
        if id.parse::<u32>().is_ok() {
            w(&format!("proc/irq/{id}/smp_affinity_list"), "0-1\n");
        }
    }
    d
}

#[test]
fn twd_is_per_cpu_and_the_verdict_is_every_device_irq_on_cpu0() {
    let d = board();
    let a = audit(
        &Root::new(d.path()),
        &AuditOptions {
            cpus: None,
            watch: Duration::ZERO,
        },
    )
    .unwrap();
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
    let w = |p: &str, s: &str| {
        let f = d.path().join(p);
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(f, s).unwrap();
    };
    // Every device IRQ on CPU 1 (irqaffinity=1 at boot, say): CPU 0 is quieter.
    w(
        "proc/interrupts",
        "           CPU0       CPU1\n 44:          0     401065       GIC  DMA\n 115:         0     435894       GIC  mmc0\nIPI0:          5          5  Timer broadcast interrupts\n",
    );
    w("sys/devices/system/cpu/online", "0-1\n");
    for id in ["44", "115"] {
        w(&format!("proc/irq/{id}/smp_affinity_list"), "1\n");
    }
    let a = audit(
        &Root::new(d.path()),
        &AuditOptions {
            cpus: None,
            watch: Duration::ZERO,
        },
    )
    .unwrap();
    assert!(a.cpus[0].score < a.cpus[1].score, "{:?}", a.cpus);
    let f = &a.fixes[0];
    assert_eq!(f.command, "rtshield partition create 1", "{f:?}");
    assert!(
        f.title.contains("CPU 0 scores less") && f.title.contains("kept for housekeeping"),
        "{f:?}"
    );
}
