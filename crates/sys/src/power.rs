//! Frequency, idle states and temperature: what makes the same code run
//! slower or wake up later (the systress article warns that a Raspberry Pi
//! throttles when hot). Read from cpufreq
//! (`/sys/devices/system/cpu/cpuN/cpufreq`), cpuidle
//! (`/sys/devices/system/cpu/cpuN/cpuidle/stateK`) and the thermal zones
//! (`/sys/class/thermal/thermal_zoneN`); each is absent on many machines
//! (VMs have no cpufreq and no thermal zone), which gives empty lists.

use crate::Root;
use serde::{Deserialize, Serialize};

const CPU_DIR: &str = "/sys/devices/system/cpu";
const THERMAL_DIR: &str = "/sys/class/thermal";

/// One CPU's frequency scaling.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuFreq {
    /// The CPU number (`cpuN`).
    pub cpu: u32,
    /// `scaling_governor` (`performance`, `ondemand`, `powersave`, `schedutil`…).
    pub governor: Option<String>,
    /// `scaling_driver` (`intel_pstate`, `acpi-cpufreq`, `cpufreq-dt`…).
    pub driver: Option<String>,
    /// `scaling_cur_freq`, kHz.
    pub cur_khz: Option<u64>,
    /// `cpuinfo_max_freq` (else `scaling_max_freq`), kHz.
    pub max_khz: Option<u64>,
}

/// One idle state of one CPU.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IdleState {
    /// `stateK`'s K.
    pub index: u32,
    /// The state's `name` (`POLL`, `C1`, `C6`…).
    pub name: String,
    /// Exit latency, µs (`latency`).
    pub latency_us: u64,
    /// Disabled through `disable` (so never entered).
    pub disabled: bool,
}

/// The idle states of one CPU.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuIdle {
    /// The CPU number (`cpuN`).
    pub cpu: u32,
    /// Its states in `stateK` order (shallowest first).
    pub states: Vec<IdleState>,
}

impl CpuIdle {
    /// The enabled state with the longest exit latency above `limit_us`
    /// (a "deep" state: waking from it delays the RT thread).
    pub fn deepest_enabled_over(&self, limit_us: u64) -> Option<&IdleState> {
        self.states
            .iter()
            .filter(|s| !s.disabled && s.latency_us > limit_us)
            .max_by_key(|s| s.latency_us)
    }
}

/// One thermal zone's temperature.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ThermalZone {
    /// `thermal_zoneN`'s N.
    pub zone: u32,
    /// `type` (`x86_pkg_temp`, `cpu-thermal`, `acpitz`…).
    pub kind: String,
    /// °C (`temp` is in millidegrees).
    pub temp_c: f64,
}

/// `cpuN` directory names under `dir`, as numbers, sorted.
fn numbered(root: &Root, dir: &str, prefix: &str) -> Vec<u32> {
    let mut v: Vec<u32> = root
        .read_dir_names(dir)
        .unwrap_or_default()
        .iter()
        .filter_map(|n| n.strip_prefix(prefix)?.parse().ok())
        .collect();
    v.sort_unstable();
    v
}

fn read_u64(root: &Root, path: &str) -> Option<u64> {
    root.read_opt(path)?.parse().ok()
}

/// cpufreq of every CPU that has it.
pub(crate) fn cpufreq(root: &Root) -> Vec<CpuFreq> {
    numbered(root, CPU_DIR, "cpu")
        .into_iter()
        .filter_map(|cpu| {
            let d = format!("{CPU_DIR}/cpu{cpu}/cpufreq");
            let f = CpuFreq {
                cpu,
                governor: root.read_opt(format!("{d}/scaling_governor")),
                driver: root.read_opt(format!("{d}/scaling_driver")),
                cur_khz: read_u64(root, &format!("{d}/scaling_cur_freq"))
                    .or_else(|| read_u64(root, &format!("{d}/cpuinfo_cur_freq"))),
                max_khz: read_u64(root, &format!("{d}/cpuinfo_max_freq"))
                    .or_else(|| read_u64(root, &format!("{d}/scaling_max_freq"))),
            };
            let any = f.governor.is_some() || f.cur_khz.is_some() || f.max_khz.is_some();
            any.then_some(f)
        })
        .collect()
}

/// The cpuidle driver in use (`haltpoll`, `intel_idle`, `acpi_idle`, `psci_idle`…).
pub(crate) fn cpuidle_driver(root: &Root) -> Option<String> {
    root.read_opt(format!("{CPU_DIR}/cpuidle/current_driver"))
}

/// The idle states of every CPU that has them.
pub(crate) fn cpuidle(root: &Root) -> Vec<CpuIdle> {
    numbered(root, CPU_DIR, "cpu")
        .into_iter()
        .filter_map(|cpu| {
            let d = format!("{CPU_DIR}/cpu{cpu}/cpuidle");
            let states: Vec<IdleState> = numbered(root, &d, "state")
                .into_iter()
                .filter_map(|k| {
                    let s = format!("{d}/state{k}");
                    Some(IdleState {
                        index: k,
                        name: root.read_opt(format!("{s}/name"))?,
                        latency_us: read_u64(root, &format!("{s}/latency")).unwrap_or(0),
                        disabled: read_u64(root, &format!("{s}/disable")).unwrap_or(0) != 0,
                    })
                })
                .collect();
            (!states.is_empty()).then_some(CpuIdle { cpu, states })
        })
        .collect()
}

/// Every thermal zone whose temperature can be read.
pub fn thermal(root: &Root) -> Vec<ThermalZone> {
    numbered(root, THERMAL_DIR, "thermal_zone")
        .into_iter()
        .filter_map(|zone| {
            let d = format!("{THERMAL_DIR}/thermal_zone{zone}");
            // Millidegrees; a zone whose sensor is off reads an error.
            let milli: i64 = root.read_opt(format!("{d}/temp"))?.parse().ok()?;
            Some(ThermalZone {
                zone,
                kind: root.read_opt(format!("{d}/type")).unwrap_or_default(),
                temp_c: milli as f64 / 1000.0,
            })
        })
        .collect()
}

/// The hottest zone, °C (one figure per timeline row).
pub fn max_temp_c(zones: &[ThermalZone]) -> Option<f64> {
    zones.iter().map(|z| z.temp_c).reduce(f64::max)
}

/// `/proc/uptime`'s first field, seconds.
pub fn uptime_s(root: &Root) -> Option<f64> {
    root.read_opt("/proc/uptime")?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
        .filter(|v: &f64| v.is_finite())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put(base: &std::path::Path, rel: &str, text: &str) {
        let p = base.join(rel.trim_start_matches('/'));
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    /// A two-CPU board: CPU 0 ondemand at 600 of 1500 MHz, CPU 1
    /// performance; POLL + WFI + a 2 ms deep state (disabled on CPU 1);
    /// two thermal zones, one without a readable temperature.
    pub(crate) fn board() -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        let b = d.path();
        for (cpu, gov, cur) in [(0, "ondemand", "600000"), (1, "performance", "1500000")] {
            let f = format!("sys/devices/system/cpu/cpu{cpu}/cpufreq");
            put(b, &format!("{f}/scaling_governor"), &format!("{gov}\n"));
            put(b, &format!("{f}/scaling_driver"), "cpufreq-dt\n");
            put(b, &format!("{f}/scaling_cur_freq"), &format!("{cur}\n"));
            put(b, &format!("{f}/cpuinfo_max_freq"), "1500000\n");
            for (k, name, lat, dis) in [
                (0, "POLL", 0, 0),
                (1, "WFI", 1, 0),
                (2, "cpu-sleep", 2000, cpu),
            ] {
                let s = format!("sys/devices/system/cpu/cpu{cpu}/cpuidle/state{k}");
                put(b, &format!("{s}/name"), &format!("{name}\n"));
                put(b, &format!("{s}/latency"), &format!("{lat}\n"));
                put(b, &format!("{s}/disable"), &format!("{dis}\n"));
            }
        }
        put(b, "sys/devices/system/cpu/online", "0-1\n");
        put(
            b,
            "sys/devices/system/cpu/cpuidle/current_driver",
            "psci_idle\n",
        );
        put(b, "sys/class/thermal/thermal_zone0/type", "cpu-thermal\n");
        put(b, "sys/class/thermal/thermal_zone0/temp", "61852\n");
        put(b, "sys/class/thermal/thermal_zone1/type", "gpu-thermal\n");
        put(b, "proc/uptime", "86412.37 160000.02\n");
        d
    }

    #[test]
    fn reads_a_fake_board() {
        let d = board();
        let r = Root::new(d.path());
        let f = cpufreq(&r);
        assert_eq!(f.len(), 2);
        assert_eq!(f[0].governor.as_deref(), Some("ondemand"));
        assert_eq!(
            (f[0].cur_khz, f[0].max_khz),
            (Some(600_000), Some(1_500_000))
        );
        assert_eq!(f[1].governor.as_deref(), Some("performance"));
        let i = cpuidle(&r);
        assert_eq!(i.len(), 2);
        assert_eq!(i[0].states.len(), 3);
        assert_eq!(i[0].states[2].name, "cpu-sleep");
        assert_eq!(
            i[0].deepest_enabled_over(10).map(|s| s.latency_us),
            Some(2000)
        );
        assert_eq!(i[1].deepest_enabled_over(10), None, "disabled on CPU 1");
        assert_eq!(cpuidle_driver(&r).as_deref(), Some("psci_idle"));
        let t = thermal(&r);
        assert_eq!(t.len(), 1, "the zone without temp is left out");
        assert_eq!((t[0].zone, t[0].kind.as_str()), (0, "cpu-thermal"));
        assert_eq!(t[0].temp_c, 61.852);
        assert_eq!(max_temp_c(&t), Some(61.852));
        assert_eq!(uptime_s(&r), Some(86412.37));
    }

    #[test]
    fn nothing_present_gives_empty_lists() {
        let d = tempfile::tempdir().unwrap();
        let r = Root::new(d.path());
        assert!(cpufreq(&r).is_empty() && cpuidle(&r).is_empty() && thermal(&r).is_empty());
        assert_eq!(max_temp_c(&[]), None);
        assert_eq!(uptime_s(&r), None);
    }
}
