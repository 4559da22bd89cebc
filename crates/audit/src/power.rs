//! Frequency scaling and idle states on the real-time CPUs: a CPU that
//! slows down or sleeps deeply between periods wakes up later (the
//! systress article's Raspberry Pi throttles when hot; cyclictest holds
//! `/dev/cpu_dma_latency` for the same reason).

use rtshield_sys::{kpath, SysInfo};
use rtshield_vocab::CpuSet;

/// Governors that lower the frequency when the CPU looks idle: a periodic
/// RT thread that sleeps most of the time runs slow and wakes late.
pub(crate) const SCALING_GOVERNORS: &[&str] =
    &["ondemand", "powersave", "conservative", "schedutil"];

/// Exit latency (µs) above which an idle state counts as deep.
pub(crate) const DEEP_IDLE_US: u64 = 10;

/// `(title, command)` fixes for the CPUs of `sel`, from what `si` recorded.
pub(crate) fn fixes(si: &SysInfo, sel: &CpuSet) -> Vec<(String, String)> {
    let mut v = Vec::new();
    let slow: Vec<(u32, &str)> = si
        .cpufreq
        .iter()
        .filter(|f| sel.contains(f.cpu))
        .filter_map(|f| {
            let g = f.governor.as_deref()?;
            SCALING_GOVERNORS.contains(&g).then_some((f.cpu, g))
        })
        .collect();
    if !slow.is_empty() {
        let cpus: CpuSet = slow.iter().map(|(c, _)| *c).collect();
        let mut govs: Vec<&str> = slow.iter().map(|(_, g)| *g).collect();
        govs.dedup();
        v.push((
            format!(
                "CPU {} run the {} governor: the frequency drops while the RT thread sleeps, so it wakes up slower; use performance",
                cpus.to_list(),
                govs.join("/")
            ),
            format!(
                "for c in {}; do echo performance > {}; done",
                cpus.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(" "),
                kpath::cpufreq_governor("$c")
            ),
        ));
    }
    let deep: Vec<(u32, String, u64)> = si
        .cpuidle
        .iter()
        .filter(|c| sel.contains(c.cpu))
        .filter_map(|c| {
            let s = c.deepest_enabled_over(DEEP_IDLE_US)?;
            Some((c.cpu, s.name.clone(), s.latency_us))
        })
        .collect();
    if let Some(worst) = deep.iter().max_by_key(|d| d.2) {
        let cpus: CpuSet = deep.iter().map(|d| d.0).collect();
        let intel = si.cpuidle_driver.as_deref() == Some("intel_idle");
        v.push((
            format!(
                "CPU {} may enter deep idle states (up to {} with a {} us exit latency, added to a wake-up): hold {} at 0 during the run (rtshield measure/run do unless --no-dma-latency), or limit idle at boot",
                cpus.to_list(),
                worst.1,
                worst.2,
                kpath::CPU_DMA_LATENCY
            ),
            format!(
                "add to the kernel command line: {} (or idle=poll, which keeps the CPU busy and hot)",
                if intel {
                    "intel_idle.max_cstate=1"
                } else {
                    "processor.max_cstate=1"
                }
            ),
        ));
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtshield_sys::{CpuFreq, CpuIdle, IdleState};

    fn si() -> SysInfo {
        let st = |index, name: &str, latency_us, disabled| IdleState {
            index,
            name: name.into(),
            latency_us,
            disabled,
        };
        SysInfo {
            cpufreq: vec![
                CpuFreq {
                    cpu: 0,
                    governor: Some("ondemand".into()),
                    ..Default::default()
                },
                CpuFreq {
                    cpu: 2,
                    governor: Some("performance".into()),
                    ..Default::default()
                },
                CpuFreq {
                    cpu: 3,
                    governor: Some("powersave".into()),
                    ..Default::default()
                },
            ],
            cpuidle: vec![
                CpuIdle {
                    cpu: 2,
                    states: vec![st(0, "POLL", 0, false), st(1, "C6", 133, true)],
                },
                CpuIdle {
                    cpu: 3,
                    states: vec![
                        st(0, "POLL", 0, false),
                        st(1, "C1", 2, false),
                        st(2, "C6", 133, false),
                    ],
                },
            ],
            cpuidle_driver: Some("intel_idle".into()),
            ..Default::default()
        }
    }

    #[test]
    fn warns_about_the_rt_cpus_only() {
        let f = fixes(&si(), &CpuSet::parse_list("2-3").unwrap());
        assert_eq!(f.len(), 2, "{f:?}");
        // CPU 0's ondemand is housekeeping: not listed.
        assert!(
            f[0].0.starts_with("CPU 3 run the powersave governor"),
            "{f:?}"
        );
        assert_eq!(
            f[0].1,
            "for c in 3; do echo performance > /sys/devices/system/cpu/cpu$c/cpufreq/scaling_governor; done"
        );
        // CPU 2's C6 is disabled; CPU 3 may enter it.
        assert!(
            f[1].0
                .starts_with("CPU 3 may enter deep idle states (up to C6 with a 133 us"),
            "{f:?}"
        );
        assert!(f[1].0.contains("/dev/cpu_dma_latency"));
        assert!(f[1].1.contains("intel_idle.max_cstate=1"), "{f:?}");
        assert!(f[1].1.contains("idle=poll"));
        // Performance and no deep state: nothing to say.
        assert!(fixes(&si(), &CpuSet::single(2)).is_empty());
    }
}
