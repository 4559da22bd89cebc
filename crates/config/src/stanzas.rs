//! The keys of each stanza (`main`, `timer_thread[N]`, `program[N]`):
//! which value check each key takes, and the checks across keys.

use crate::check::{entries, Cx};
use crate::keys::Section;
use crate::model::{Action, CpuLoadShow, Format, Main, Mode, Program, Sched, Timer};
use crate::syntax::{self, display_name, Entry, Pos, Stanza};
use rtshield_limits as limits;
use rtshield_vocab::format_duration_ns;
use rtshield_vocab::InputError;
use rtshield_vocab::{parse_size, Builtin, Output, Termination};
use std::collections::BTreeMap;

impl Cx<'_> {
    pub(crate) fn main(&mut self, st: &Stanza) -> Result<Main, InputError> {
        let m = entries(self.e, st, Section::Main)?;
        let mut out = Main::default();
        for (&k, &en) in &m {
            match k {
                "cpu_affinity" => out.cpu_affinity = Some(self.cpus(en)?),
                "sched.policy" | "sched.priority" => {}
                "cgroup" => out.cgroup = Some(self.cgroup(en)?),
                "mode" => {
                    let v = self.need_value(en)?;
                    out.mode = Mode::parse(v)
                        .ok_or_else(|| self.bad(en, format!("unknown mode '{v}'")))?;
                }
                "period" => out.period_ns = self.duration_in(en, None, limits::PERIOD_NS)?,
                "lifetime.duration" => {
                    out.duration_ns = Some(self.duration_in(en, None, limits::DURATION_NS)?)
                }
                "stats.histo_size" => {
                    out.histo_size_ns = self.duration_in(en, Some("us"), limits::HISTO_SIZE_NS)?
                }
                "histo.resolution" => out.resolution_ns = self.resolution(en)?,
                "stats.period" => {
                    out.stats_period_ns = self.duration_in(en, None, limits::STATS_PERIOD_NS)?
                }
                "stats.format" => out.formats = self.formats(en)?,
                "stats.cpu_load" => out.cpu_load = self.cpu_load(en)?,
                "stats.checkpoint" => {
                    out.checkpoint_ns = self.off_or_duration(en)?.unwrap_or(0);
                    if out.checkpoint_ns > 0 && out.checkpoint_ns < limits::CHECKPOINT_MIN_NS {
                        return Err(self.bad(en, "an interval below the 100ms minimum"));
                    }
                }
                "stats.rotate" => {
                    out.rotate_ns = self.off_or_duration(en)?;
                    if let Some(r) = out.rotate_ns {
                        if !limits::ROTATE_NS.contains(r) {
                            return Err(self.bad(
                                en,
                                format!(
                                    "{} outside {}..{}",
                                    format_duration_ns(r),
                                    format_duration_ns(limits::ROTATE_NS.min),
                                    format_duration_ns(limits::ROTATE_NS.max)
                                ),
                            ));
                        }
                    }
                }
                "memlock" => out.memlock = self.flag(en)?,
                "cpu_dma_latency" => out.cpu_dma_latency = self.flag(en)?,
                "dbg_level" => out.dbg_level = self.int_in(en, limits::DBG_LEVEL)?,
                "start.delay" => out.start_delay_ns = self.start_delay(en)?,
                "load.cycle" => out.load_cycle = self.cycle(en)?,
                "trace.on_latency" => {
                    out.trace.on_latency_ns =
                        Some(self.duration_in(en, None, limits::TRACE_LATENCY_NS)?)
                }
                "trace.stop" => out.trace.stop = self.flag(en)?,
                "trace.split" => out.trace.split = self.flag(en)?,
                "trace.buffer_kb" => {
                    out.trace.buffer_kb = Some(self.int_in(en, limits::TRACE_BUFFER_KB)?)
                }
                _ => unreachable!("key table and match disagree on {k}"),
            }
        }
        if let Some(en) = m.get("trace.stop") {
            if out.trace.stop && out.trace.on_latency_ns.is_none() {
                return Err(self.bad(en, "trace.stop without trace.on_latency"));
            }
        }
        out.sched = self.sched(&m)?;
        if let Some(en) = m.get("histo.resolution").or(m.get("stats.histo_size")) {
            if out.resolution_ns > out.histo_size_ns {
                return Err(self.bad(en, "a resolution coarser than stats.histo_size"));
            }
            if limits::too_many_buckets(out.histo_size_ns, out.resolution_ns) {
                return Err(self.bad(en, "more than 10 million histogram buckets"));
            }
        }
        Ok(out)
    }

    fn formats(&self, en: &Entry) -> Result<Vec<Format>, InputError> {
        let v = self.need_value(en)?;
        let mut out = Vec::new();
        for w in v
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|w| !w.is_empty())
        {
            let f = match w.to_ascii_lowercase().as_str() {
                "txt" | "text" => Format::Txt,
                "csv" => Format::Csv,
                "json" => Format::Json,
                "cyclictest" | "hist" => Format::Cyclictest,
                _ => return Err(self.bad(en, format!("unknown format '{w}'"))),
            };
            if !out.contains(&f) {
                out.push(f);
            }
        }
        out.sort();
        Ok(out)
    }

    fn cpu_load(&mut self, en: &Entry) -> Result<CpuLoadShow, InputError> {
        match en.value.to_ascii_lowercase().as_str() {
            "" | "all" | "on" => Ok(CpuLoadShow::All),
            "total" | "global" => Ok(CpuLoadShow::Total),
            "none" | "off" => Ok(CpuLoadShow::None),
            v if v.starts_with(|c: char| c.is_ascii_digit()) => {
                Ok(CpuLoadShow::Cpus(self.cpus(en)?))
            }
            v => Err(self.bad(en, format!("unknown value '{v}'"))),
        }
    }

    pub(crate) fn timer(
        &mut self,
        st: &Stanza,
        index: u32,
        main: &Main,
    ) -> Result<Timer, InputError> {
        let m = entries(self.e, st, Section::Timer)?;
        let mut t = Timer {
            index,
            cpu: None,
            sched: Sched::default(),
            cgroup: None,
            period_ns: main.period_ns,
            duration_ns: None,
            samples: None,
            histo_size_ns: main.histo_size_ns,
            resolution_ns: main.resolution_ns,
            filename: format!("timer_thread{index:02}.txt"),
        };
        for (&k, &en) in &m {
            match k {
                "cpu_affinity" => {
                    let set = self.cpus(en)?;
                    if set.len() != 1 {
                        return Err(self.bad(
                            en,
                            format!("{} CPUs (a timer thread measures one CPU)", set.len()),
                        ));
                    }
                    t.cpu = set.first();
                }
                "sched.policy" | "sched.priority" => {}
                "cgroup" => t.cgroup = Some(self.cgroup(en)?),
                "period" => t.period_ns = self.duration_in(en, None, limits::PERIOD_NS)?,
                "lifetime.duration" => {
                    t.duration_ns = Some(self.duration_in(en, None, limits::DURATION_NS)?)
                }
                "lifetime.samples" => {
                    t.samples = Some(self.int(en, 1, limits::SAMPLES.max as i64)?)
                }
                "stats.histo_size" => {
                    t.histo_size_ns = self.duration_in(en, Some("us"), limits::HISTO_SIZE_NS)?
                }
                "histo.resolution" => t.resolution_ns = self.resolution(en)?,
                "stats.filename" => {
                    let v = self.need_value(en)?;
                    let w = syntax::split_words(v).map_err(|(_, msg)| self.bad(en, msg))?;
                    match w.as_slice() {
                        [f] if !f.contains('/')
                            && f != "."
                            && f != ".."
                            && !f.contains('\0')
                            && f.len() <= 255 =>
                        {
                            t.filename = f.clone()
                        }
                        [f] if f.contains('\0') || f.len() > 255 => {
                            return Err(self.bad(
                                en,
                                "a name the file system cannot hold (NUL byte or over 255 bytes)",
                            ))
                        }
                        [_] => {
                            return Err(self.bad(
                                en,
                                "a path (give a plain file name; --out chooses the directory)",
                            ))
                        }
                        _ => return Err(self.bad(en, "several words")),
                    }
                }
                _ => unreachable!("key table and match disagree on {k}"),
            }
        }
        if let Some(s) = self.sched(&m)? {
            t.sched = s;
        }
        if t.resolution_ns > t.histo_size_ns {
            let en = m
                .get("histo.resolution")
                .or(m.get("stats.histo_size"))
                .copied();
            if let Some(en) = en {
                return Err(self.bad(en, "a histogram smaller than its resolution"));
            }
        }
        // The timer's own keys (main's values were checked with main).
        if limits::too_many_buckets(t.histo_size_ns, t.resolution_ns) {
            let en = m.get("stats.histo_size").or(m.get("histo.resolution"));
            if let Some(en) = en {
                return Err(self.bad(en, "more than 10 million histogram buckets"));
            }
        }
        Ok(t)
    }

    /// What a program runs: its `cmdline`, or a built-in `load` with its
    /// `load.size` and `load.workers` (exactly one of the two).
    fn program_action(
        &self,
        st: &Stanza,
        m: &BTreeMap<&str, &Entry>,
    ) -> Result<Action, InputError> {
        Ok(match (m.get("cmdline"), m.get("load")) {
            (Some(c), Some(l)) => {
                let (first, second) = if c.key_at.line < l.key_at.line {
                    (c, l)
                } else {
                    (l, c)
                };
                return Err(self.e.at(
                    second.key_at,
                    format!(
                        "'{}' and '{}' (line {}) in one program (expected one of cmdline or load)",
                        second.key, first.key, first.key_at.line
                    ),
                ));
            }
            (None, None) => {
                return Err(self.e.at(
                    st.at,
                    format!(
                        "{} has neither 'cmdline' nor 'load' (expected one of them)",
                        display_name(st)
                    ),
                ))
            }
            (Some(c), None) => {
                let v = self.need_value(c)?;
                let words = syntax::split_words(v).map_err(|(off, msg)| {
                    self.e.at(
                        Pos {
                            line: c.value_at.line,
                            col: c.value_at.col + v[..off].chars().count(),
                        },
                        format!("{msg} in 'cmdline'"),
                    )
                })?;
                if words.first().is_none_or(|w| w.is_empty()) {
                    return Err(self.bad(c, "an empty command"));
                }
                Action::Command(words)
            }
            (None, Some(l)) => {
                let v = self.need_value(l)?;
                // `net:peer=ADDR` as `measure --load` takes it, same checks.
                let (kind, peer) = match Builtin::parse(v) {
                    Some(k) => (k, None),
                    None if v.contains(':') => {
                        let a: rtshield_load::LoadArg =
                            v.parse().map_err(|err| self.e.at(l.value_at, err))?;
                        (a.kind, a.peer)
                    }
                    None => {
                        return Err(self.e.at(
                            l.value_at,
                            format!(
                            "unknown built-in load '{v}' (expected one of {}, or net:peer=ADDR)",
                            Builtin::names()
                        ),
                        ))
                    }
                };
                let size = m
                    .get("load.size")
                    .map(|en| {
                        let v = self.need_value(en)?;
                        if kind.size_is_threads() {
                            // timers/syncio: a thread count, not bytes.
                            let max = rtshield_vocab::LOAD_THREADS_MAX as i64;
                            return self.int::<u64>(en, 1, max);
                        }
                        let n = parse_size(v).map_err(|err| self.e.at(en.value_at, err))?;
                        let r = limits::LOAD_SIZE_BYTES;
                        if !r.contains(n) {
                            return Err(self.e.at(
                                en.value_at,
                                format!(
                                    "load.size {v}: {n} bytes is out of range {} .. {} bytes \
                                     (4K .. 64G per worker, docs/ranges.md)",
                                    r.min, r.max
                                ),
                            ));
                        }
                        Ok(n)
                    })
                    .transpose()?;
                let workers = m
                    .get("load.workers")
                    .map(|en| self.int_in(en, limits::LOAD_WORKERS))
                    .transpose()?
                    .unwrap_or(1);
                Action::Builtin {
                    kind,
                    size,
                    workers,
                    peer,
                }
            }
        })
    }

    pub(crate) fn program(
        &mut self,
        st: &Stanza,
        index: u32,
        main: &Main,
    ) -> Result<Program, InputError> {
        let m = entries(self.e, st, Section::Program)?;
        let action = self.program_action(st, &m)?;
        if matches!(action, Action::Command(_)) {
            for k in ["load.size", "load.workers"] {
                if let Some(en) = m.get(k) {
                    return Err(self.e.at(
                        en.key_at,
                        format!("'{k}' only applies to a built-in 'load'"),
                    ));
                }
            }
        }
        let mut p = Program {
            index,
            action,
            cpu_affinity: None,
            sched: None,
            cgroup: None,
            stdout: Output::Inherit,
            stderr: Output::Inherit,
            on_ok: Termination::Ignore,
            on_ko: Termination::Ignore,
            start_delay_ns: 0,
            load_cycle: main.load_cycle,
        };
        for (&k, &en) in &m {
            match k {
                "cmdline" | "load" | "load.size" | "load.workers" | "sched.policy"
                | "sched.priority" => {}
                "cpu_affinity" => p.cpu_affinity = Some(self.cpus(en)?),
                "cgroup" => p.cgroup = Some(self.cgroup(en)?),
                "output.out" => p.stdout = self.output(en)?,
                "output.err" => p.stderr = self.output(en)?,
                "termination.ok" => p.on_ok = self.termination(en)?,
                "termination.ko" => p.on_ko = self.termination(en)?,
                "start.delay" => p.start_delay_ns = self.start_delay(en)?,
                "load.cycle" => p.load_cycle = self.cycle(en)?,
                _ => unreachable!("key table and match disagree on {k}"),
            }
        }
        // Programs never inherit the real-time main thread: SCHED_OTHER
        // unless set, and said so by `--check`.
        p.sched = Some(self.sched(&m)?.unwrap_or_default());
        if let (Action::Builtin { .. }, Some(s)) = (&p.action, p.sched) {
            if s.policy.is_rt() {
                let en = m
                    .get("sched.policy")
                    .or(m.get("sched.priority"))
                    .copied()
                    .expect("sched came from a key");
                return Err(self.bad(
                    en,
                    "a real-time policy for a built-in load (they busy-loop: use OTHER, BATCH or IDLE)",
                ));
            }
        }
        Ok(p)
    }
}
