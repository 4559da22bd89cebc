//! The value checks of the systress parser: one function per kind of
//! value (a duration within its range, a CPU list on this machine, a
//! policy, a load cycle...), each refusing with the entry's line and column
//! and the key's expected form.

use crate::keys::{self, Section};
use crate::model::{Cycle, Machine, Partition, Sched};
use crate::syntax::{self, display_name, Entry, Errs, Stanza};
use rtshield_limits::{self as limits, Range};
use rtshield_vocab::Policy;
use rtshield_vocab::{format_duration_ns, parse_duration_ns};
use rtshield_vocab::{CpuSet, InputError};
use rtshield_vocab::{Output, Termination};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Checking context for one stanza.
pub(crate) struct Cx<'a> {
    pub(crate) e: &'a Errs<'a>,
    pub(crate) machine: &'a Machine,
    pub(crate) warnings: &'a mut Vec<String>,
    /// (CPU in the file, CPU measured here) of each timer thread, for
    /// programs: with `--fold-cpus` a load is never folded onto a measured CPU.
    pub(crate) measured: Vec<(u32, u32)>,
}

/// Entries of a stanza by key, refusing unknown and duplicate keys.
pub(crate) fn entries<'s>(
    e: &Errs,
    st: &'s Stanza,
    section: Section,
) -> Result<BTreeMap<&'s str, &'s Entry>, InputError> {
    let mut m: BTreeMap<&str, &Entry> = BTreeMap::new();
    for en in &st.entries {
        if keys::lookup(section, &en.key).is_none() {
            let elsewhere = keys::KEYS.iter().find(|k| k.key == en.key);
            let msg = match elsewhere {
                Some(k) => format!(
                    "key '{}' is not allowed in {} (it belongs in {}); expected one of: {}",
                    en.key,
                    display_name(st),
                    k.sections
                        .iter()
                        .map(|s| s.name())
                        .collect::<Vec<_>>()
                        .join(", "),
                    keys::names_in(section)
                ),
                None => format!(
                    "unknown key '{}' in {} (expected one of: {})",
                    en.key,
                    display_name(st),
                    keys::names_in(section)
                ),
            };
            return Err(e.at(en.key_at, msg));
        }
        if let Some(first) = m.get(en.key.as_str()) {
            return Err(e.at(
                en.key_at,
                format!(
                    "duplicate key '{}' (already set at line {})",
                    en.key, first.key_at.line
                ),
            ));
        }
        m.insert(&en.key, en);
    }
    Ok(m)
}

impl Cx<'_> {
    pub(crate) fn bad(&self, en: &Entry, what: impl std::fmt::Display) -> InputError {
        let form = keys::KEYS
            .iter()
            .find(|k| k.key == en.key)
            .map_or("", |k| k.form);
        self.e.at(
            en.value_at,
            format!("{what} for '{}' (expected {form})", en.key),
        )
    }

    pub(crate) fn need_value<'v>(&self, en: &'v Entry) -> Result<&'v str, InputError> {
        if en.value.is_empty() {
            return Err(self.bad(en, "missing value"));
        }
        Ok(&en.value)
    }

    pub(crate) fn duration(
        &self,
        en: &Entry,
        default_unit: Option<&str>,
    ) -> Result<u64, InputError> {
        let v = self.need_value(en)?;
        parse_duration_ns(v, default_unit).map_err(|err| self.bad(en, err))
    }

    pub(crate) fn positive_duration(
        &self,
        en: &Entry,
        default_unit: Option<&str>,
    ) -> Result<u64, InputError> {
        let d = self.duration(en, default_unit)?;
        if d == 0 {
            return Err(self.bad(en, "a zero duration"));
        }
        Ok(d)
    }

    /// A duration within `range` (the documented range, docs/ranges.md).
    pub(crate) fn duration_in(
        &self,
        en: &Entry,
        default_unit: Option<&str>,
        range: Range<u64>,
    ) -> Result<u64, InputError> {
        let d = self.positive_duration(en, default_unit)?;
        if !range.contains(d) {
            return Err(self.bad(
                en,
                format!(
                    "{} outside {}..{}",
                    format_duration_ns(d),
                    format_duration_ns(range.min),
                    format_duration_ns(range.max)
                ),
            ));
        }
        Ok(d)
    }

    /// An integer within `range`.
    pub(crate) fn int_in<T: std::str::FromStr>(
        &self,
        en: &Entry,
        range: Range<impl Into<i64>>,
    ) -> Result<T, InputError> {
        self.int(en, range.min.into(), range.max.into())
    }

    /// A histogram resolution: a whole number of nanoseconds, at most 1ms.
    pub(crate) fn resolution(&self, en: &Entry) -> Result<u64, InputError> {
        if en.value.contains('.') {
            return Err(self.bad(en, format!("a fractional resolution '{}'", en.value)));
        }
        self.duration_in(en, Some("ns"), limits::RESOLUTION_NS)
    }

    /// A duration of at least `min_ns` (`what` names the bound in the message).
    /// `start.delay`: 0 .. 1 day.
    pub(crate) fn start_delay(&self, en: &Entry) -> Result<u64, InputError> {
        let d = self.duration(en, None)?;
        if !limits::START_DELAY_NS.contains(d) {
            return Err(self.bad(
                en,
                format!(
                    "{} is more than the {} maximum",
                    format_duration_ns(d),
                    format_duration_ns(limits::START_DELAY_NS.max)
                ),
            ));
        }
        Ok(d)
    }

    pub(crate) fn off_or_duration(&self, en: &Entry) -> Result<Option<u64>, InputError> {
        match en.value.to_ascii_lowercase().as_str() {
            "off" | "none" | "no" => Ok(None),
            "0" => Err(self.bad(en, "0 (write 'off' to disable)")),
            _ => self.positive_duration(en, None).map(Some),
        }
    }

    pub(crate) fn int<T: std::str::FromStr>(
        &self,
        en: &Entry,
        lo: i64,
        hi: i64,
    ) -> Result<T, InputError> {
        let v = self.need_value(en)?;
        match v.parse::<i64>() {
            Ok(n) if (lo..=hi).contains(&n) => v
                .parse::<T>()
                .map_err(|_| self.bad(en, format!("invalid number '{v}'"))),
            Ok(n) => Err(self.bad(en, format!("{n} is out of range {lo}..{hi}"))),
            Err(_) => Err(self.bad(en, format!("invalid number '{v}'"))),
        }
    }

    pub(crate) fn flag(&self, en: &Entry) -> Result<bool, InputError> {
        match en.value.to_ascii_lowercase().as_str() {
            "" | "on" | "yes" | "true" | "1" => Ok(true),
            "off" | "no" | "false" | "0" => Ok(false),
            v => Err(self.bad(en, format!("invalid switch '{v}'"))),
        }
    }

    pub(crate) fn cpus(&mut self, en: &Entry) -> Result<CpuSet, InputError> {
        let v = self.need_value(en)?;
        let set = CpuSet::parse(v).map_err(|err| self.bad(en, err))?;
        if set.is_empty() {
            return Err(self.bad(en, "an empty CPU list"));
        }
        let online = &self.machine.online;
        let missing = set.difference(online);
        if missing.is_empty() && !self.machine.fold_cpus {
            return Ok(set);
        }
        if !missing.is_empty() && (!self.machine.fold_cpus || online.is_empty()) {
            let (word, verb) = if missing.len() == 1 {
                ("CPU", "does")
            } else {
                ("CPUs", "do")
            };
            let list = missing.to_list();
            return Err(self.e.at(
                en.value_at,
                format!(
                    "{word} {list} of '{}' {verb} not exist on this machine (online CPUs: {}; use --fold-cpus to map them onto these)",
                    en.key,
                    online.to_list()
                ),
            ));
        }
        // A load folded onto a measured CPU (or a timer folded onto the
        // load's CPUs) would measure the load, not the machine: every CPU a
        // timer was folded onto is kept out of a program's set, unless the
        // file itself put that timer on one of the program's CPUs.
        let avoid: CpuSet = self
            .measured
            .iter()
            .filter(|(asked, _)| !set.contains(*asked))
            .map(|&(_, here)| here)
            .collect();
        let ons: Vec<u32> = online.difference(&avoid).iter().collect();
        if ons.is_empty() {
            return Err(self.e.at(
                en.value_at,
                format!(
                    "cannot fold '{}' {}: every online CPU ({}) is measured by a timer thread, and a load is never folded onto a measured CPU",
                    en.key,
                    set.to_list(),
                    online.to_list()
                ),
            ));
        }
        let folded: CpuSet = set
            .iter()
            .filter(|c| !avoid.contains(*c))
            .map(|c| {
                if online.contains(c) {
                    c
                } else {
                    ons[c as usize % ons.len()]
                }
            })
            .collect();
        let folded = if folded.is_empty() {
            // Every CPU of the set was measured: the first other one.
            CpuSet::single(ons[0])
        } else {
            folded
        };
        if folded == set {
            return Ok(set);
        }
        self.warnings.push(format!(
            "{}:{}:{}: {} {} folded onto {} (this machine has CPUs {}{})",
            self.e.file,
            en.value_at.line,
            en.value_at.col,
            en.key,
            set.to_list(),
            folded.to_list(),
            online.to_list(),
            if avoid.is_empty() {
                String::new()
            } else {
                format!("; CPU {} measured, kept free of loads", avoid.to_list())
            }
        ));
        Ok(folded)
    }

    pub(crate) fn policy(&self, en: &Entry) -> Result<Policy, InputError> {
        let v = self.need_value(en)?;
        match Policy::parse(v) {
            Some(Policy::Deadline) => Err(self.bad(en, "SCHED_DEADLINE is not supported here")),
            Some(p) => Ok(p),
            None => Err(self.bad(en, format!("unknown policy '{v}'"))),
        }
    }

    /// `sched.policy` and `sched.priority` together.
    pub(crate) fn sched(&self, m: &BTreeMap<&str, &Entry>) -> Result<Option<Sched>, InputError> {
        let pol = m
            .get("sched.policy")
            .map(|en| self.policy(en))
            .transpose()?;
        let prio: Option<i32> = m
            .get("sched.priority")
            .map(|en| self.int_in(en, limits::PRIORITY))
            .transpose()?;
        Ok(match (pol, prio) {
            (None, None) => None,
            (None, Some(0)) => Some(Sched::default()),
            (None, Some(p)) => Some(Sched {
                policy: Policy::Fifo,
                priority: p,
            }),
            (Some(pol), p) => {
                let p = p.unwrap_or(if pol.is_rt() { 1 } else { 0 });
                if pol.is_rt() && p == 0 {
                    return Err(self.bad(m["sched.priority"], "priority 0 with a real-time policy"));
                }
                if !pol.is_rt() && p != 0 {
                    return Err(self.bad(
                        m["sched.priority"],
                        format!(
                            "priority {p} needs sched.policy FIFO or RR, not {}",
                            pol.name().to_uppercase()
                        ),
                    ));
                }
                Some(Sched {
                    policy: pol,
                    priority: p,
                })
            }
        })
    }

    pub(crate) fn cgroup(&self, en: &Entry) -> Result<Partition, InputError> {
        match en.value.to_ascii_lowercase().as_str() {
            "rt" => Ok(Partition::Rt),
            "nrt" => Ok(Partition::Nrt),
            v => Err(self.bad(en, format!("unknown partition '{v}'"))),
        }
    }

    pub(crate) fn cycle(&self, en: &Entry) -> Result<Option<Cycle>, InputError> {
        let v = self.need_value(en)?;
        if matches!(v.to_ascii_lowercase().as_str(), "off" | "none" | "no") {
            return Ok(None);
        }
        // Two durations, each optionally after its phase's name (`rest 60 s
        // load 5 min`: phases in the order written); a unit may be a word
        // of its own: `5 min 30 s`.
        let toks: Vec<&str> = v.split_whitespace().collect();
        let mut durs = Vec::new();
        let mut names: Vec<Option<bool>> = Vec::new();
        let mut pending: Option<bool> = None;
        let mut i = 0;
        while i < toks.len() {
            let word = toks[i].to_ascii_lowercase();
            if word == "load" || word == "rest" {
                if pending.is_some() {
                    return Err(self.bad(en, format!("'{word}' where a duration was expected")));
                }
                pending = Some(word == "load");
                i += 1;
                continue;
            }
            let starts_digit = toks[i].starts_with(|c: char| c.is_ascii_digit() || c == '.');
            let has_unit = toks[i].contains(|c: char| c.is_ascii_alphabetic());
            let item = if starts_digit && !has_unit && i + 1 < toks.len() {
                i += 2;
                format!("{} {}", toks[i - 2], toks[i - 1])
            } else {
                i += 1;
                toks[i - 1].to_string()
            };
            let d = parse_duration_ns(&item, None).map_err(|err| self.bad(en, err))?;
            durs.push(d);
            names.push(pending.take());
        }
        if pending.is_some() {
            return Err(self.bad(en, "a phase name without its duration"));
        }
        let rest_first = match names.as_slice() {
            [None, None] => false,
            [Some(true), Some(false)] => false,
            [Some(false), Some(true)] => true,
            [_, _] => {
                return Err(self.bad(
                    en,
                    "name both phases, one 'load' and one 'rest' (e.g. rest 60 s load 5 min), or neither (ON OFF)",
                ))
            }
            _ => return Err(self.bad(en, format!("{} duration(s) instead of two", durs.len()))),
        };
        let phase_ok = |d: &u64| limits::CYCLE_PHASE_NS.contains(*d);
        match durs.as_slice() {
            [a, b] if phase_ok(a) && phase_ok(b) => Ok(Some(if rest_first {
                Cycle {
                    on_ns: *b,
                    off_ns: *a,
                    rest_first,
                }
            } else {
                Cycle {
                    on_ns: *a,
                    off_ns: *b,
                    rest_first,
                }
            })),
            _ => Err(self.bad(
                en,
                format!(
                    "a phase outside {}..{}",
                    format_duration_ns(limits::CYCLE_PHASE_NS.min),
                    format_duration_ns(limits::CYCLE_PHASE_NS.max)
                ),
            )),
        }
    }

    pub(crate) fn output(&self, en: &Entry) -> Result<Output, InputError> {
        let v = self.need_value(en)?;
        let words = syntax::split_words(v).map_err(|(_, m)| self.bad(en, m))?;
        match words.as_slice() {
            [w] if w == "/dev/null" || w.eq_ignore_ascii_case("null") => Ok(Output::Null),
            [w] if matches!(
                w.to_ascii_lowercase().as_str(),
                "inherit" | "-" | "stdout" | "stderr" | "tty"
            ) =>
            {
                Ok(Output::Inherit)
            }
            [w] => Ok(Output::File(PathBuf::from(w))),
            _ => Err(self.bad(en, "several words (quote a file name with spaces)")),
        }
    }

    pub(crate) fn termination(&self, en: &Entry) -> Result<Termination, InputError> {
        let v = self.need_value(en)?;
        Termination::parse(v)
            .ok_or_else(|| self.bad(en, format!("unknown termination policy '{v}'")))
    }
}
