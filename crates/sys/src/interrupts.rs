//! `/proc/interrupts` and `/proc/softirqs`: per-CPU counter tables with a
//! `CPU0 CPU1 …` header (offline CPUs have no column).
//!
//! Each `/proc/interrupts` line is classified: a numbered line is a device
//! IRQ whose affinity can be changed, except the per-CPU timer and PMU
//! interrupts of ARM boards (`twd`, `arch_timer`, `arm-pmu`, the
//! `bcm2836-timer` chip), which fire on every CPU and cannot move; named
//! lines are per-CPU vectors (x86 `LOC`, `NMI`, ...), inter-processor
//! interrupts (ARM `IPI0`…, x86 `RES`/`CAL`/`TLB`), or machine-wide
//! summaries (`ERR`, `MIS`). Handler names keep every word (`OMAP DISPC`).

use crate::kpath;
use crate::Root;
use rtshield_vocab::CpuSet;
use serde::Serialize;

/// What a line of `/proc/interrupts` counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum IrqClass {
    /// A device IRQ: `/proc/irq/N/smp_affinity_list` can move it.
    Device,
    /// Fires on every CPU and cannot be moved (per-CPU timers, x86 `LOC`).
    PerCpu,
    /// An inter-processor interrupt (sent by another CPU).
    Ipi,
    /// One machine-wide count (`ERR`, `MIS`), on no CPU.
    Summary,
}

/// Handler names of per-CPU (non-movable) interrupts with an IRQ number.
const PER_CPU_NAMES: &[&str] = &[
    "twd",
    "arch_timer",
    "arch_timer_virt",
    "local_timer",
    "arm-pmu",
    "armv7-pmu",
    "armv8-pmu",
];
/// Interrupt chips that serve only per-CPU interrupts.
const PER_CPU_CHIPS: &[&str] = &["bcm2836-timer", "bcm2836-pmu"];
/// x86 named lines that are inter-processor interrupts.
const X86_IPIS: &[&str] = &["RES", "CAL", "TLB"];

/// One line of `/proc/interrupts` or `/proc/softirqs`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Line {
    /// `36`, `LOC`, `RES`, `TIMER` (without the colon).
    pub id: String,
    /// Count per column (see [`Table::cpus`]).
    pub counts: Vec<u64>,
    /// The rest of the line: chip, hwirq, handler names (`virtio1-req.0`).
    pub desc: String,
    /// The chip of a numbered line (`GIC`, `IO-APIC`); empty for named ones.
    pub chip: String,
    /// Handler name(s), every word kept (`OMAP DISPC`, `ahci, snd_hda`);
    /// for named lines, the description (`Local timer interrupts`).
    pub name: String,
    /// What kind of interrupt it is, which says whether it can be moved off a CPU.
    pub class: IrqClass,
}

impl Line {
    /// A device IRQ: numbered, and movable.
    pub fn is_device(&self) -> bool {
        self.class == IrqClass::Device
    }

    /// Whether writing its affinity can take it off a CPU.
    pub fn is_movable(&self) -> bool {
        self.is_device()
    }

    /// The handler name (see [`Line::name`] field).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Split the description of line `id` and classify it.
    fn classify(id: &str, desc: &str) -> (String, String, IrqClass) {
        if id.bytes().all(|b| b.is_ascii_digit()) && !id.is_empty() {
            let mut words = desc.split_whitespace().peekable();
            let chip = words.next().unwrap_or("").to_string();
            // Optional hwirq (`5-edge`, `30`) and trigger (`Level`, `Edge`).
            if words
                .peek()
                .is_some_and(|w| w.starts_with(|c: char| c.is_ascii_digit()))
            {
                words.next();
            }
            if words.peek().is_some_and(|w| {
                ["level", "edge", "fasteoi"].contains(&w.to_ascii_lowercase().as_str())
            }) {
                words.next();
            }
            let name = words.collect::<Vec<_>>().join(" ");
            let per_cpu = PER_CPU_CHIPS.contains(&chip.as_str())
                || name.split(", ").any(|n| PER_CPU_NAMES.contains(&n));
            let class = if per_cpu {
                IrqClass::PerCpu
            } else {
                IrqClass::Device
            };
            return (chip, name, class);
        }
        let class = if id.starts_with("IPI") || X86_IPIS.contains(&id) {
            IrqClass::Ipi
        } else if matches!(id, "ERR" | "MIS" | "Err") {
            IrqClass::Summary
        } else {
            IrqClass::PerCpu
        };
        (String::new(), desc.to_string(), class)
    }
}

/// A per-CPU counter table with a `CPU0 CPU1 …` header.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Table {
    /// CPU number of each column (offline CPUs have no column).
    pub cpus: Vec<u32>,
    /// The counter lines, in file order.
    pub lines: Vec<Line>,
}

impl Table {
    /// The table of `/proc/interrupts` or `/proc/softirqs` text. Lines
    /// without a `:` are skipped; a line with fewer counts than CPUs
    /// (`ERR`, `MIS`) keeps the ones it has.
    pub fn parse(text: &str) -> Table {
        let mut it = text.lines();
        let Some(header) = it.next() else {
            return Table::default();
        };
        let cpus: Vec<u32> = header
            .split_whitespace()
            .filter_map(|w| w.strip_prefix("CPU").and_then(|n| n.parse().ok()))
            .collect();
        let mut lines = vec![];
        for l in it {
            let Some((id, rest)) = l.split_once(':') else {
                continue;
            };
            let mut counts = vec![];
            let mut words = rest.split_whitespace().peekable();
            while counts.len() < cpus.len() {
                match words.peek().and_then(|w| w.parse::<u64>().ok()) {
                    Some(v) => {
                        counts.push(v);
                        words.next();
                    }
                    None => break,
                }
            }
            let desc = words.collect::<Vec<_>>().join(" ");
            let id = id.trim().to_string();
            let (chip, name, class) = Line::classify(&id, &desc);
            lines.push(Line {
                id,
                counts,
                desc,
                chip,
                name,
                class,
            });
        }
        Table { cpus, lines }
    }

    /// The column of CPU `cpu` in [`Table::cpus`]; `None` for a CPU the file has no
    /// column for (offline).
    pub fn col(&self, cpu: u32) -> Option<usize> {
        self.cpus.iter().position(|&c| c == cpu)
    }

    /// Count of line `l` on `cpu` (0 when the line has no such column).
    /// `ERR:` and `MIS:` hold one machine-wide count, not CPU 0's: they
    /// count on no CPU.
    pub fn count(&self, l: &Line, cpu: u32) -> u64 {
        if l.counts.len() < self.cpus.len() {
            return 0;
        }
        self.col(cpu)
            .and_then(|i| l.counts.get(i).copied())
            .unwrap_or(0)
    }

    /// `self − before`, line by line (lines matched by id; counters that
    /// went backwards, e.g. a re-registered IRQ, count from zero).
    pub fn delta(&self, before: &Table) -> Table {
        let lines = self
            .lines
            .iter()
            .map(|l| {
                let b = before.lines.iter().find(|x| x.id == l.id);
                let counts = l
                    .counts
                    .iter()
                    .enumerate()
                    .map(|(i, &v)| {
                        let old = b.and_then(|b| b.counts.get(i).copied()).unwrap_or(0);
                        v.checked_sub(old).unwrap_or(v)
                    })
                    .collect();
                Line {
                    counts,
                    ..l.clone()
                }
            })
            .collect();
        Table {
            cpus: self.cpus.clone(),
            lines,
        }
    }

    /// Sum of every line on `cpu`.
    pub fn total(&self, cpu: u32) -> u64 {
        self.lines.iter().map(|l| self.count(l, cpu)).sum()
    }
}

/// `/proc/interrupts`; an empty table when unreadable.
pub fn interrupts(root: &Root) -> Table {
    root.read("/proc/interrupts")
        .map(|t| Table::parse(&t))
        .unwrap_or_default()
}

/// `/proc/softirqs` (same layout, one line per softirq: `TIMER`, `NET_RX`...).
pub fn softirqs(root: &Root) -> Table {
    root.read("/proc/softirqs")
        .map(|t| Table::parse(&t))
        .unwrap_or_default()
}

/// Numbers of the IRQs that have a `/proc/irq/N` directory, ascending.
pub fn irq_numbers(root: &Root) -> Vec<String> {
    root.read_dir_names(kpath::IRQ_DIR)
        .unwrap_or_default()
        .into_iter()
        .filter(|n| n.parse::<u32>().is_ok())
        .collect()
}

/// Handler names of IRQ `n`: the kernel makes one directory per action in
/// `/proc/irq/N/` (`virtio1-req.0`, `ttyS0`), joined by `,`.
pub fn irq_actions(root: &Root, n: &str) -> Option<String> {
    let dir = kpath::irq_dir(n);
    let names: Vec<String> = root
        .read_dir_names(&dir)
        .ok()?
        .into_iter()
        .filter(|e| root.path(format!("{dir}/{e}")).is_dir())
        .collect();
    (!names.is_empty()).then(|| names.join(","))
}

/// `smp_affinity_list` of IRQ `n`, trimmed (list syntax).
pub fn irq_affinity(root: &Root, n: &str) -> Option<String> {
    root.read_opt(kpath::irq_affinity_list(n))
}

/// `effective_affinity_list` of IRQ `n`, trimmed; absent on old kernels.
pub fn irq_effective_affinity(root: &Root, n: &str) -> Option<String> {
    root.read_opt(kpath::irq_effective_affinity_list(n))
}

/// The affinity new IRQs get (`/proc/irq/default_smp_affinity`, a mask).
pub fn default_affinity(root: &Root) -> Option<CpuSet> {
    CpuSet::parse_mask(root.read_opt(kpath::IRQ_DEFAULT_AFFINITY)?.trim()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const INTR: &str = "           CPU0       CPU1       \n 24:          1          0  IO-APIC   5-edge      ACPI:Ged\n 36:          0       9157 PCI-MSIX-0000:00:02.0   1-edge      virtio1-req.0\nNMI:          0          0   Non-maskable interrupts\nLOC:      23800      25870   Local timer interrupts\nERR:          0\nMIS:          0\n";

    #[test]
    fn parses_interrupts() {
        let t = Table::parse(INTR);
        assert_eq!(t.cpus, vec![0, 1]);
        assert_eq!(t.lines.len(), 6);
        let l = &t.lines[1];
        assert_eq!(l.id, "36");
        assert_eq!(l.counts, vec![0, 9157]);
        assert_eq!(l.name(), "virtio1-req.0");
        assert!(l.is_device());
        assert!(!t.lines[3].is_device());
        assert_eq!(t.lines[4].counts, vec![0]);
        assert_eq!(t.count(&t.lines[3], 1), 25870);
        assert_eq!(t.total(1), 9157 + 25870);
        // ERR/MIS are machine-wide, not CPU 0's.
        let t = Table::parse(&INTR.replace("ERR:          0", "ERR:          7"));
        assert_eq!(t.count(&t.lines[4], 0), 0);
        assert_eq!(t.total(0), 1 + 23800);
    }

    #[test]
    fn delta_by_id() {
        let a = Table::parse(INTR);
        let b = Table::parse(&INTR.replace("9157", "9200").replace("25870", "26000"));
        let d = b.delta(&a);
        assert_eq!(d.lines[1].counts, vec![0, 43]);
        assert_eq!(d.lines[3].counts, vec![0, 130]);
    }

    #[test]
    fn offline_cpu_columns() {
        let t = Table::parse("     CPU0  CPU2\n 5:  3  4  x y\n");
        assert_eq!(t.cpus, vec![0, 2]);
        assert_eq!(t.count(&t.lines[0], 2), 4);
        assert_eq!(t.count(&t.lines[0], 1), 0);
    }

    fn fixture(name: &str) -> String {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/interrupts")
            .join(name);
        std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    }

    #[test]
    fn pandaboard_of_the_torture_article() {
        let t = Table::parse(&fixture("pandaboard"));
        assert_eq!(t.cpus, vec![0, 1]);
        let get = |id: &str| t.lines.iter().find(|l| l.id == id).unwrap();
        // The per-CPU local timer: counted on both CPUs, never movable.
        let twd = get("29");
        assert_eq!((twd.chip.as_str(), twd.name()), ("GIC", "twd"));
        assert_eq!(twd.class, IrqClass::PerCpu);
        assert!(!twd.is_movable());
        assert_eq!(twd.counts, vec![1624296339, 1089370474]);
        // Multi-word names are kept whole.
        assert_eq!(get("57").name(), "OMAP DISPC");
        assert_eq!(get("69").name(), "gp timer");
        assert_eq!(get("363").chip, "twl6030");
        assert_eq!(get("363").name(), "rtc0");
        // DMA, ehci and mmc0: device IRQs, all on CPU 0 (the article's finding).
        for (id, name, n) in [
            ("44", "DMA", 401065),
            ("109", "ehci_hcd:usb1", 160087021),
            ("115", "mmc0", 435894),
        ] {
            let l = get(id);
            assert!(l.is_device(), "{id}");
            assert_eq!(l.name(), name);
            assert_eq!((t.count(l, 0), t.count(l, 1)), (n, 0), "{id}");
        }
        let devices_on_1: u64 = t
            .lines
            .iter()
            .filter(|l| l.is_device())
            .map(|l| t.count(l, 1))
            .sum();
        assert_eq!(devices_on_1, 0);
        assert_eq!(get("IPI1").class, IrqClass::Ipi);
        assert_eq!(get("IPI1").name(), "Rescheduling interrupts");
        assert_eq!(get("Err").class, IrqClass::Summary);
        assert_eq!(t.count(get("Err"), 0), 0);
    }

    #[test]
    fn x86_vm_lines() {
        let t = Table::parse(&fixture("x86-vm"));
        assert_eq!(t.cpus, vec![0, 1]);
        let get = |id: &str| t.lines.iter().find(|l| l.id == id).unwrap();
        assert_eq!(get("LOC").class, IrqClass::PerCpu);
        assert_eq!(get("NMI").class, IrqClass::PerCpu);
        assert_eq!(get("RES").class, IrqClass::Ipi);
        assert_eq!(get("TLB").class, IrqClass::Ipi);
        assert_eq!(get("ERR").class, IrqClass::Summary);
        let tty = get("26");
        assert_eq!((tty.chip.as_str(), tty.name()), ("IO-APIC", "ttyS0"));
        assert!(tty.is_device());
        assert_eq!(get("36").name(), "virtio1-req.0");
        assert_eq!(get("36").chip, "PCI-MSIX-0000:00:02.0");
        assert!(t
            .lines
            .iter()
            .filter(|l| l.id.parse::<u32>().is_ok())
            .all(|l| l.is_device()));
    }

    /// A Raspberry Pi 2 (Linux 4.19), as printed in Bootlin's embedded
    /// Linux training slides: per-CPU `arch_timer` of the `bcm2836-timer`
    /// chip, multi-word names, `FIQ` with no count, `IPI0`… rows.
    #[test]
    fn raspberry_pi_2_fixture() {
        let t = Table::parse(&fixture("rpi2"));
        assert_eq!(t.cpus, vec![0, 1, 2, 3]);
        let get = |id: &str| t.lines.iter().find(|l| l.id == id).unwrap();
        for id in ["161", "162", "165"] {
            assert_eq!(get(id).class, IrqClass::PerCpu, "{id}");
            assert!(!get(id).is_movable(), "{id}");
        }
        assert_eq!(get("162").name(), "arch_timer");
        assert_eq!(t.count(get("162"), 2), 16583353);
        assert_eq!(get("56").name(), "dwc_otg, dwc_otg_pcd, dwc_otg_hcd:usb1");
        assert_eq!(get("40").name(), "bcm2708_fb DMA");
        assert_eq!(get("18").name(), "VCHIQ doorbell");
        assert!(get("56").is_device() && get("80").is_device());
        assert!(get("FIQ").counts.is_empty());
        assert_eq!(get("IPI2").class, IrqClass::Ipi);
        assert_eq!(get("Err").class, IrqClass::Summary);
        // Every device IRQ on CPU 0, as on the torture article's Pandaboard.
        assert!(t
            .lines
            .iter()
            .filter(|l| l.is_device())
            .all(|l| (1..4).all(|c| t.count(l, c) == 0)));
    }

    /// A 4-CPU Broadwell laptop (Linux 4.16, IR-IO-APIC and IR-PCI-MSI
    /// chips, machine-check vectors): device IRQs spread over every CPU.
    #[test]
    fn x86_broadwell_fixture() {
        let t = Table::parse(&fixture("x86-broadwell"));
        assert_eq!(t.cpus, vec![0, 1, 2, 3]);
        let get = |id: &str| t.lines.iter().find(|l| l.id == id).unwrap();
        for id in ["NMI", "LOC", "PMI", "MCE", "MCP", "THR", "DFR", "SPU"] {
            assert_eq!(get(id).class, IrqClass::PerCpu, "{id}");
            assert!(!get(id).is_movable(), "{id}");
        }
        for id in ["RES", "CAL", "TLB"] {
            assert_eq!(get(id).class, IrqClass::Ipi, "{id}");
        }
        assert_eq!(get("MIS").class, IrqClass::Summary);
        let ahci = get("44");
        assert_eq!(
            (ahci.chip.as_str(), ahci.name()),
            ("IR-PCI-MSI", "ahci[0000:00:1f.2]")
        );
        assert_eq!(get("23").name(), "ehci_hcd:usb3");
        assert_eq!(get("9").name(), "acpi");
        assert_eq!(t.count(get("42"), 3), 161898);
        assert_eq!(get("LOC").name(), "Local timer interrupts");
    }

    #[test]
    fn raspberry_pi_style_lines() {
        // Modern ARM layout: chip, hwirq, trigger, name.
        let t = Table::parse(
            "           CPU0       CPU1       CPU2       CPU3\n \
             17:      1000       2000       3000       4000  bcm2836-timer   1 Edge      arch_timer\n \
             23:        10          0          0          0  ARMCTRL-level   1 Edge      3f00b880.mailbox\n \
             56:    500000          0          0          0  ARMCTRL-level  64 Edge      DMA IRQ\n \
             IPI0:      20         30         40         50  CPU wakeup interrupts\n",
        );
        let get = |id: &str| t.lines.iter().find(|l| l.id == id).unwrap();
        assert_eq!(get("17").class, IrqClass::PerCpu);
        assert_eq!(get("17").name(), "arch_timer");
        assert_eq!(get("23").name(), "3f00b880.mailbox");
        assert_eq!(get("56").name(), "DMA IRQ");
        assert!(get("56").is_device());
        assert_eq!(get("IPI0").class, IrqClass::Ipi);
        assert_eq!(t.count(get("17"), 3), 4000);
    }

    #[test]
    fn softirqs_table() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("proc")).unwrap();
        std::fs::write(
            d.path().join("proc/softirqs"),
            "                    CPU0       CPU1\n          HI:          1          0\n       TIMER:     193470     200215\n      NET_RX:         12        600\n",
        )
        .unwrap();
        let t = softirqs(&Root::new(d.path()));
        assert_eq!(t.lines.len(), 3);
        assert_eq!(t.lines[1].id, "TIMER");
        assert_eq!(t.count(&t.lines[2], 1), 600);
        assert!(interrupts(&Root::new(d.path())).lines.is_empty());
    }

    #[test]
    fn proc_irq_files() {
        let d = tempfile::tempdir().unwrap();
        let w = |p: &str, s: &str| {
            let f = d.path().join(p.trim_start_matches('/'));
            std::fs::create_dir_all(f.parent().unwrap()).unwrap();
            std::fs::write(f, s).unwrap();
        };
        w(&kpath::irq_affinity_list("36"), "0-3\n");
        w(&kpath::irq_effective_affinity_list("36"), "1\n");
        std::fs::create_dir_all(d.path().join("proc/irq/36/virtio1-req.0")).unwrap();
        w(&kpath::irq_affinity_list("9"), "0\n");
        w(kpath::IRQ_DEFAULT_AFFINITY, "f\n");
        let r = Root::new(d.path());
        assert_eq!(irq_numbers(&r), vec!["9", "36"]);
        assert_eq!(irq_actions(&r, "36").as_deref(), Some("virtio1-req.0"));
        assert_eq!(irq_actions(&r, "9"), None);
        assert_eq!(irq_affinity(&r, "36").as_deref(), Some("0-3"));
        assert_eq!(irq_effective_affinity(&r, "36").as_deref(), Some("1"));
        assert_eq!(irq_effective_affinity(&r, "9"), None);
        assert_eq!(default_affinity(&r).unwrap().to_list(), "0-3");
    }

    proptest::proptest! {
        #[test]
        fn never_panics(s in "\\PC{0,300}") {
            let t = Table::parse(&s);
            let _ = t.delta(&Table::parse(&s));
            let _ = t.total(0);
        }
    }
}
