//! CPU sets: the kernel's list format (`0-2,5`), its mask format
//! (`ff,ffffffff`, as in `smp_affinity`) and partrt's hex masks (`0x8`).

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;

/// A set of CPU numbers, kept sorted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CpuSet(BTreeSet<u32>);

/// Largest CPU number we accept; guards against `0-4294967295` eating memory.
pub const MAX_CPU: u32 = 8191;

/// A CPU set that does not parse; its message quotes the input and says
/// what is wrong with it, then shows the two accepted notations.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid CPU set '{input}': {reason} (expected a list like 1,3-5 or a hex mask like 0x8)")]
pub struct CpuSetError {
    /// The text as given, untrimmed, so the user recognises it.
    pub input: String,
    /// What is wrong (`bad range 3-1`, `CPU 99999 above 8191`).
    pub reason: String,
}

impl CpuSet {
    /// The empty set (no CPU), what an empty kernel list parses to.
    pub fn new() -> Self {
        CpuSet(BTreeSet::new())
    }

    /// The set holding CPU `cpu` alone.
    pub fn single(cpu: u32) -> Self {
        CpuSet(std::iter::once(cpu).collect())
    }

    /// CPUs `first` to `last`, both included (empty when `first > last`).
    pub fn range(first: u32, last: u32) -> Self {
        CpuSet((first..=last).collect())
    }

    /// Parse what a user types: a list (`3`, `2-3`, `1,3-5`, `0-7:2`) or a
    /// partrt-style hex mask (`0x8`).
    pub fn parse(s: &str) -> Result<Self, CpuSetError> {
        let t = s.trim();
        if let Some(hex) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
            return Self::parse_mask(hex).map_err(|e| CpuSetError {
                input: s.to_string(),
                reason: e.reason,
            });
        }
        Self::parse_list(t).map_err(|e| CpuSetError {
            input: s.to_string(),
            reason: e.reason,
        })
    }

    /// The kernel's list format (`/sys/devices/system/cpu/online`,
    /// `cpuset.cpus`, `smp_affinity_list`). Empty string = empty set.
    pub fn parse_list(s: &str) -> Result<Self, CpuSetError> {
        let err = |reason: String| CpuSetError {
            input: s.to_string(),
            reason,
        };
        let mut set = BTreeSet::new();
        let s = s.trim();
        if s.is_empty() {
            return Ok(CpuSet(set));
        }
        for part in s.split(',') {
            let part = part.trim();
            if part.is_empty() {
                return Err(err("empty element".into()));
            }
            let (range, stride) = match part.split_once(':') {
                Some((r, st)) => {
                    let st: u32 = st.parse().map_err(|_| err(format!("bad stride '{st}'")))?;
                    if st == 0 {
                        return Err(err("stride 0".into()));
                    }
                    (r, st)
                }
                None => (part, 1),
            };
            let num = |x: &str| -> Result<u32, CpuSetError> {
                let v: u32 = x
                    .trim()
                    .parse()
                    .map_err(|_| err(format!("'{x}' is not a CPU number")))?;
                if v > MAX_CPU {
                    return Err(err(format!("CPU {v} is beyond {MAX_CPU}")));
                }
                Ok(v)
            };
            match range.split_once('-') {
                Some((a, b)) => {
                    let (a, b) = (num(a)?, num(b)?);
                    if a > b {
                        return Err(err(format!("range {a}-{b} goes backwards")));
                    }
                    set.extend((a..=b).step_by(stride as usize));
                }
                None => {
                    set.insert(num(range)?);
                }
            }
        }
        Ok(CpuSet(set))
    }

    /// The kernel's mask format: hex digits, optionally in comma-separated
    /// 32-bit groups (`ff,ffffffff`), most significant group first.
    pub fn parse_mask(s: &str) -> Result<Self, CpuSetError> {
        let err = |reason: &str| CpuSetError {
            input: s.to_string(),
            reason: reason.to_string(),
        };
        let digits: String = s.trim().chars().filter(|c| *c != ',').collect();
        if digits.is_empty() {
            return Err(err("empty mask"));
        }
        let mut set = BTreeSet::new();
        for (i, c) in digits.chars().rev().enumerate() {
            let v = c.to_digit(16).ok_or_else(|| err("not a hex digit"))?;
            for bit in 0..4 {
                if v & (1 << bit) != 0 {
                    let cpu = (i * 4 + bit) as u32;
                    if cpu > MAX_CPU {
                        return Err(err("mask too wide"));
                    }
                    set.insert(cpu);
                }
            }
        }
        Ok(CpuSet(set))
    }

    /// `0-2,5`: the kernel's list format.
    pub fn to_list(&self) -> String {
        let mut out = String::new();
        let mut it = self.0.iter().copied().peekable();
        while let Some(start) = it.next() {
            let mut end = start;
            while it.peek() == Some(&(end + 1)) {
                end = it.next().unwrap();
            }
            if !out.is_empty() {
                out.push(',');
            }
            if end == start {
                out.push_str(&start.to_string());
            } else {
                out.push_str(&format!("{start}-{end}"));
            }
        }
        out
    }

    /// The kernel's mask format for `smp_affinity`, with at least `ncpus`
    /// bits worth of digits: `3`, `00000003,ffffffff`.
    pub fn to_mask(&self, ncpus: u32) -> String {
        let top = self
            .0
            .iter()
            .next_back()
            .map_or(0, |c| c + 1)
            .max(ncpus)
            .max(1);
        let words = top.div_ceil(32) as usize;
        let mut groups = Vec::with_capacity(words);
        for w in (0..words).rev() {
            let mut v: u32 = 0;
            for b in 0..32 {
                if self.0.contains(&(w as u32 * 32 + b)) {
                    v |= 1 << b;
                }
            }
            groups.push(v);
        }
        if words == 1 {
            // Single word: as many hex digits as ncpus needs, like the kernel.
            let digits = (top.div_ceil(4)) as usize;
            return format!("{:0width$x}", groups[0], width = digits);
        }
        groups
            .iter()
            .map(|g| format!("{g:08x}"))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// `0x8`: partrt's notation.
    pub fn to_hex(&self) -> String {
        let m = self.to_mask(1).replace(',', "");
        let t = m.trim_start_matches('0');
        format!("0x{}", if t.is_empty() { "0" } else { t })
    }

    /// Whether CPU `cpu` is in the set.
    pub fn contains(&self, cpu: u32) -> bool {
        self.0.contains(&cpu)
    }
    /// Add CPU `cpu`; false when it was already there.
    pub fn insert(&mut self, cpu: u32) -> bool {
        self.0.insert(cpu)
    }
    /// Take CPU `cpu` out; false when it was not there.
    pub fn remove(&mut self, cpu: u32) -> bool {
        self.0.remove(&cpu)
    }
    /// How many CPUs the set holds.
    pub fn len(&self) -> usize {
        self.0.len()
    }
    /// Whether the set holds no CPU.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    /// The CPU numbers in increasing order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = u32> + '_ {
        self.0.iter().copied()
    }
    /// The lowest CPU number, `None` for the empty set.
    pub fn first(&self) -> Option<u32> {
        self.0.iter().next().copied()
    }
    /// The highest CPU number, `None` for the empty set.
    pub fn last(&self) -> Option<u32> {
        self.0.iter().next_back().copied()
    }
    /// The CPUs in either set.
    pub fn union(&self, o: &CpuSet) -> CpuSet {
        CpuSet(self.0.union(&o.0).copied().collect())
    }
    /// The CPUs in both sets.
    pub fn intersection(&self, o: &CpuSet) -> CpuSet {
        CpuSet(self.0.intersection(&o.0).copied().collect())
    }
    /// The CPUs of this set that are not in `o`.
    pub fn difference(&self, o: &CpuSet) -> CpuSet {
        CpuSet(self.0.difference(&o.0).copied().collect())
    }
    /// Whether every CPU of this set is also in `o` (true for the empty set).
    pub fn is_subset(&self, o: &CpuSet) -> bool {
        self.0.is_subset(&o.0)
    }
}

impl FromIterator<u32> for CpuSet {
    fn from_iter<I: IntoIterator<Item = u32>>(iter: I) -> Self {
        CpuSet(iter.into_iter().collect())
    }
}

impl fmt::Display for CpuSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_list())
    }
}

impl FromStr for CpuSet {
    type Err = CpuSetError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        CpuSet::parse(s)
    }
}

impl serde::Serialize for CpuSet {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_list())
    }
}

impl<'de> serde::Deserialize<'de> for CpuSet {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        CpuSet::parse_list(&s).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_lists_and_masks() {
        assert_eq!(CpuSet::parse("3").unwrap().to_list(), "3");
        assert_eq!(CpuSet::parse("2-3").unwrap().to_list(), "2-3");
        assert_eq!(
            CpuSet::parse("1,3-5").unwrap().iter().collect::<Vec<_>>(),
            [1, 3, 4, 5]
        );
        assert_eq!(CpuSet::parse("0x8").unwrap().to_list(), "3");
        assert_eq!(CpuSet::parse("0xffff").unwrap().len(), 16);
        assert_eq!(CpuSet::parse("0-6:2").unwrap().to_list(), "0,2,4,6");
        assert_eq!(CpuSet::parse_mask("1,00000001").unwrap().to_list(), "0,32");
        assert_eq!(CpuSet::parse_mask("3").unwrap().to_list(), "0-1");
    }

    #[test]
    fn refuses_garbage_with_reason() {
        for bad in ["a", "3-1", "1,,2", "0xzz", "99999", "1-"] {
            let e = CpuSet::parse(bad).unwrap_err();
            assert!(e.to_string().contains(bad), "{e}");
        }
    }

    #[test]
    fn formats_masks_like_the_kernel() {
        assert_eq!(CpuSet::parse("0-1").unwrap().to_mask(2), "3");
        assert_eq!(CpuSet::parse("0").unwrap().to_mask(8), "01");
        assert_eq!(
            CpuSet::parse("0,33").unwrap().to_mask(40),
            "00000002,00000001"
        );
        assert_eq!(CpuSet::parse("3").unwrap().to_hex(), "0x8");
        assert_eq!(CpuSet::new().to_hex(), "0x0");
    }

    proptest! {
        #[test]
        fn list_and_mask_round_trip(cpus in proptest::collection::btree_set(0u32..200, 0..40)) {
            let set: CpuSet = cpus.iter().copied().collect();
            prop_assert_eq!(CpuSet::parse_list(&set.to_list()).unwrap(), set.clone());
            prop_assert_eq!(CpuSet::parse_mask(&set.to_mask(200)).unwrap(), set);
        }

        #[test]
        fn parse_never_panics(s in ".{0,30}") {
            let _ = CpuSet::parse(&s);
        }
    }
}
