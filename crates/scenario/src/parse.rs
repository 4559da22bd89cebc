//! The scenario file format (lollobrigida, the ARTiS thesis's annex B).
//!
//! ```text
//! # comment                      anything after '#' is ignored...
//! loops_per_us = 100             ...global keys live outside blocks
//! timeout = 30s
//! {                              one block = one task (or `count` tasks)
//! cpu_mask = 0xffff              key = value, one per line (or ';'-separated)
//! loop = 10000000
//! }
//! #2                             ...except a line that is exactly '#N':
//! {                              a copy marker ("the next block is copy N
//! ...                            of the series"), see below
//! }
//! ```
//!
//! Copy markers (`#N`, `#` directly followed by digits, alone on its line,
//! between blocks): annex B writes every copy of a task out in full and
//! numbers the copies `#2`, `#3`, ... So a marker never creates tasks; it
//! says the next block continues the series of the block before it, which
//! puts it in the same group. `#N` must be the next number of the series
//! (`#2` after the first block, `#3` after `#2`, counting `count` copies),
//! or `#1`, which starts a new series. Anything else is an error: a
//! mis-numbered copy usually means a block was lost in editing.

use crate::model::{Globals, Scenario, TaskSpec};
use rtshield_vocab::parse_duration_ns;
use rtshield_vocab::Policy;
use rtshield_vocab::{CpuSet, InputError};
use std::collections::HashMap;

/// More tasks than this is a typo (`count = 1000000`), not a scenario.
pub(crate) const MAX_TASKS: usize = 10_000;
/// The most iterations `loop`, `sloop` and `irq_period` may give (10^12).
pub const MAX_ITERATIONS: u64 = 1_000_000_000_000;
/// The longest `sleep` and `timeout` (1 h).
pub const MAX_SLEEP_NS: u64 = 3_600_000_000_000;

const BLOCK_KEYS: &[&str] = &[
    "loop",
    "sloop",
    "sleep",
    "irq_period",
    "sched",
    "priority",
    "nice",
    "cpu_mask",
    "name",
    "group",
    "count",
];
const GLOBAL_KEYS: &[&str] = &["loops_per_us", "timeout"];

/// Parse a scenario file's bytes (the caller reads the file: this crate
/// makes no OS calls). Text that is not UTF-8 is refused at the line and
/// column of the first bad byte; `source` names the file in messages.
pub fn parse_bytes(bytes: &[u8], source: &str) -> Result<Scenario, InputError> {
    let text = rtshield_text::decode_utf8_str(bytes)
        .map_err(|e| InputError::at(source, e.line, e.col, e))?;
    parse_str(text, source)
}

/// Parse scenario text; `source` names it in error messages.
pub fn parse_str(text: &str, source: &str) -> Result<Scenario, InputError> {
    Parser {
        source,
        globals: Globals::default(),
        global_lines: HashMap::new(),
        blocks: Vec::new(),
        open: None,
        pending_marker: None,
        after_close: true,
    }
    .run(text)
}

/// A `key = value` with where each half starts.
#[derive(Debug, Clone)]
struct Entry {
    key: String,
    value: String,
    line: usize,
    key_col: usize,
    value_col: usize,
}

#[derive(Debug, Clone, Copy)]
struct Marker {
    n: u64,
    line: usize,
    col: usize,
}

#[derive(Debug)]
struct Block {
    line: usize,
    col: usize,
    marker: Option<Marker>,
    entries: Vec<Entry>,
}

/// One block after its values were checked.
#[derive(Debug)]
struct Task {
    line: usize,
    marker: Option<Marker>,
    name: Option<String>,
    group: Option<String>,
    count: u64,
    loops: u64,
    sloop: Option<u64>,
    sleep_ns: u64,
    irq_period: Option<u64>,
    policy: Policy,
    priority: i32,
    nice: i32,
    cpu_mask: Option<CpuSet>,
}

impl Task {
    /// What "same properties" means for default grouping.
    fn key(&self) -> String {
        format!(
            "{:?}/{}/{}/{}/{:?}/{}/{:?}/{}",
            self.policy,
            self.priority,
            self.nice,
            self.loops,
            self.sloop,
            self.sleep_ns,
            self.irq_period,
            self.cpu_mask
                .as_ref()
                .map(|m| m.to_list())
                .unwrap_or_default()
        )
    }

    /// Base of a default group name: `other`, `fifo99`, `other+5`.
    fn group_stem(&self) -> String {
        let mut s = self.policy.name().to_string();
        if self.policy.is_rt() {
            s.push_str(&self.priority.to_string());
        } else if self.nice != 0 {
            s.push_str(&format!("{:+}", self.nice));
        }
        s
    }
}

struct Parser<'a> {
    source: &'a str,
    globals: Globals,
    global_lines: HashMap<String, usize>,
    blocks: Vec<Block>,
    open: Option<Block>,
    pending_marker: Option<Marker>,
    /// Nothing but blanks, comments and markers since the last `}` (or
    /// the start of the file): a `}` here is debris, like the page break
    /// of annex B as printed, and its error says so.
    after_close: bool,
}

/// 1-based column of byte offset `byte` in `line`, counting characters.
fn col_of(line: &str, byte: usize) -> usize {
    line[..byte].chars().count() + 1
}

/// `#N` alone on a line (leading/trailing blanks allowed).
fn marker_of(line: &str) -> Option<(u64, usize)> {
    let start = line.len() - line.trim_start().len();
    let t = line.trim();
    let digits = t.strip_prefix('#')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    // Too many digits to be a count: treat as a comment like any other.
    let n = digits.parse().ok()?;
    Some((n, col_of(line, start)))
}

impl Parser<'_> {
    fn err(&self, line: usize, col: usize, msg: impl std::fmt::Display) -> InputError {
        InputError::at(self.source, line, col, msg)
    }

    fn run(mut self, text: &str) -> Result<Scenario, InputError> {
        for (i, raw) in text.lines().enumerate() {
            self.line(i + 1, raw)?;
        }
        if let Some(b) = &self.open {
            return Err(self.err(
                b.line,
                b.col,
                "this block is never closed (missing `}` before the end of the file)",
            ));
        }
        if let Some(m) = self.pending_marker {
            return Err(self.err(
                m.line,
                m.col,
                format!("copy marker #{} is not followed by a block", m.n),
            ));
        }
        let tasks = self.build_tasks()?;
        Ok(Scenario {
            source: self.source.to_string(),
            globals: self.globals,
            tasks,
        })
    }

    fn line(&mut self, no: usize, raw: &str) -> Result<(), InputError> {
        if let Some((n, col)) = marker_of(raw) {
            return self.marker(Marker { n, line: no, col });
        }
        let code = match raw.find('#') {
            Some(i) => &raw[..i],
            None => raw,
        };
        let mut seg_start = 0;
        for (i, c) in code.char_indices() {
            if matches!(c, '{' | '}' | ';') {
                self.segment(no, raw, seg_start, &code[seg_start..i])?;
                seg_start = i + 1;
                match c {
                    '{' => self.open_block(no, col_of(raw, i))?,
                    '}' => self.close_block(no, col_of(raw, i))?,
                    _ => {}
                }
            }
        }
        self.segment(no, raw, seg_start, &code[seg_start..])
    }

    fn marker(&mut self, m: Marker) -> Result<(), InputError> {
        if self.open.is_some() {
            return Err(self.err(
                m.line,
                m.col,
                format!(
                    "copy marker #{} inside a block: markers go between blocks, before the `{{` of the copy",
                    m.n
                ),
            ));
        }
        if let Some(prev) = self.pending_marker {
            return Err(self.err(
                m.line,
                m.col,
                format!(
                    "copy marker #{} follows marker #{} (line {}) with no block between them",
                    m.n, prev.n, prev.line
                ),
            ));
        }
        self.pending_marker = Some(m);
        Ok(())
    }

    fn open_block(&mut self, line: usize, col: usize) -> Result<(), InputError> {
        if let Some(b) = &self.open {
            return Err(self.err(
                line,
                col,
                format!(
                    "`{{` inside a block: the block opened at line {} is not closed",
                    b.line
                ),
            ));
        }
        self.after_close = false;
        self.open = Some(Block {
            line,
            col,
            marker: self.pending_marker.take(),
            entries: Vec::new(),
        });
        Ok(())
    }

    fn close_block(&mut self, line: usize, col: usize) -> Result<(), InputError> {
        match self.open.take() {
            Some(b) => {
                self.blocks.push(b);
                self.after_close = true;
                Ok(())
            }
            None if self.after_close => Err(self.err(
                line,
                col,
                "`}` without a matching `{`; hint: a stray `}` after a closed block, like the page \
                 break of annex B as printed in the ARTiS thesis: delete this line",
            )),
            None => Err(self.err(line, col, "`}` without a matching `{`")),
        }
    }

    /// A piece of a line between braces/semicolons: blank or `key = value`.
    fn segment(&mut self, no: usize, raw: &str, start: usize, s: &str) -> Result<(), InputError> {
        if s.trim().is_empty() {
            return Ok(());
        }
        self.after_close = false;
        let lead = s.len() - s.trim_start().len();
        let key_col = col_of(raw, start + lead);
        let Some(eq) = s.find('=') else {
            return Err(self.err(
                no,
                key_col,
                format!(
                    "expected `key = value`, `{{` or `}}`, found `{}`",
                    rtshield_text::excerpt::quote(s.trim())
                ),
            ));
        };
        let key = s[..eq].trim();
        let value_part = &s[eq + 1..];
        let value = value_part.trim();
        let value_col = col_of(
            raw,
            start + eq + 1 + (value_part.len() - value_part.trim_start().len()),
        );
        if key.is_empty() {
            return Err(self.err(no, key_col, "missing key before `=`"));
        }
        if !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(self.err(no, key_col, format!("`{key}` is not a key name")));
        }
        if value.is_empty() {
            return Err(self.err(no, value_col, format!("missing value for `{key}`")));
        }
        let e = Entry {
            key: key.to_ascii_lowercase(),
            value: value.to_string(),
            line: no,
            key_col,
            value_col,
        };
        if self.open.is_some() {
            self.block_entry(e)
        } else {
            self.global_entry(e)
        }
    }

    fn block_entry(&mut self, e: Entry) -> Result<(), InputError> {
        if !BLOCK_KEYS.contains(&e.key.as_str()) {
            let hint = if GLOBAL_KEYS.contains(&e.key.as_str()) {
                " (a global key: put it outside the blocks)".to_string()
            } else {
                format!(" (task keys: {})", BLOCK_KEYS.join(", "))
            };
            return Err(self.err(e.line, e.key_col, format!("unknown key `{}`{hint}", e.key)));
        }
        let b = self.open.as_mut().expect("inside a block");
        if let Some(first) = b.entries.iter().find(|x| x.key == e.key) {
            let msg = format!(
                "`{}` given twice in this block (first at line {})",
                e.key, first.line
            );
            return Err(self.err(e.line, e.key_col, msg));
        }
        b.entries.push(e);
        Ok(())
    }

    fn global_entry(&mut self, e: Entry) -> Result<(), InputError> {
        if let Some(first) = self.global_lines.get(&e.key) {
            return Err(self.err(
                e.line,
                e.key_col,
                format!("`{}` given twice (first at line {first})", e.key),
            ));
        }
        match e.key.as_str() {
            "loops_per_us" => {
                let v: f64 = e
                    .value
                    .parse()
                    .ok()
                    .filter(|v: &f64| v.is_finite() && (1e-3..=1e6).contains(v))
                    .ok_or_else(|| {
                        self.err(
                            e.line,
                            e.value_col,
                            format!(
                                "loops_per_us must be a number between 0.001 and 1000000, got `{}`",
                                e.value
                            ),
                        )
                    })?;
                self.globals.loops_per_us = Some(v);
            }
            "timeout" => {
                let ns = parse_duration_ns(&e.value, Some("s"))
                    .map_err(|err| self.err(e.line, e.value_col, err))?;
                if ns == 0 || ns > MAX_SLEEP_NS {
                    return Err(self.err(
                        e.line,
                        e.value_col,
                        "timeout must be > 0 and at most 1h",
                    ));
                }
                self.globals.timeout_ns = Some(ns);
            }
            k if BLOCK_KEYS.contains(&k) => {
                return Err(self.err(
                    e.line,
                    e.key_col,
                    format!("`{k}` is a task key: put it inside a `{{ … }}` block"),
                ))
            }
            k => {
                return Err(self.err(
                    e.line,
                    e.key_col,
                    format!(
                        "unknown global key `{k}` (global keys: {}; task keys go inside `{{ … }}`)",
                        GLOBAL_KEYS.join(", ")
                    ),
                ))
            }
        }
        self.global_lines.insert(e.key, e.line);
        Ok(())
    }

    fn count_value(&self, e: &Entry, what: &str) -> Result<u64, InputError> {
        let digits: String = e.value.chars().filter(|c| *c != '_').collect();
        let v: u64 = if digits.bytes().all(|b| b.is_ascii_digit()) && !digits.is_empty() {
            digits
                .parse()
                .map_err(|_| self.err(e.line, e.value_col, format!("`{}` is too large", e.value)))?
        } else {
            return Err(self.err(
                e.line,
                e.value_col,
                format!("{} expects {what}, got `{}`", e.key, e.value),
            ));
        };
        if v == 0 {
            return Err(self.err(e.line, e.value_col, format!("{} must be at least 1", e.key)));
        }
        if v > MAX_ITERATIONS {
            return Err(self.err(
                e.line,
                e.value_col,
                format!("{} must be at most {MAX_ITERATIONS}, got {v}", e.key),
            ));
        }
        Ok(v)
    }

    fn int_value(&self, e: &Entry, lo: i32, hi: i32) -> Result<i32, InputError> {
        let v: i32 = e.value.parse().map_err(|_| {
            self.err(
                e.line,
                e.value_col,
                format!("{} expects a whole number, got `{}`", e.key, e.value),
            )
        })?;
        if !(lo..=hi).contains(&v) {
            return Err(self.err(
                e.line,
                e.value_col,
                format!("{} must be between {lo} and {hi}, got {v}", e.key),
            ));
        }
        Ok(v)
    }

    fn label_value(&self, e: &Entry) -> Result<String, InputError> {
        let v = e.value.trim();
        let v = v
            .strip_prefix('"')
            .and_then(|x| x.strip_suffix('"'))
            .unwrap_or(v);
        if v.is_empty() || v.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(self.err(
                e.line,
                e.value_col,
                format!(
                    "{} must be a non-empty word without spaces, got `{}`",
                    e.key, e.value
                ),
            ));
        }
        Ok(v.to_string())
    }

    fn check_block(&self, b: &Block) -> Result<Task, InputError> {
        let get = |k: &str| b.entries.iter().find(|e| e.key == k);
        let loop_e = get("loop").ok_or_else(|| {
            self.err(
                b.line,
                b.col,
                "this task has no `loop` (its amount of work, in busy-loop iterations)",
            )
        })?;
        let loops = self.count_value(loop_e, "a number of iterations")?;
        let (sloop, sleep_ns) = self.sleeps(b)?;
        let irq_period = get("irq_period")
            .map(|e| self.count_value(e, "a number of iterations"))
            .transpose()?;
        let (policy, priority, nice) = self.scheduling(b)?;
        let cpu_mask = match get("cpu_mask") {
            Some(e) => {
                let set =
                    CpuSet::parse(&e.value).map_err(|err| self.err(e.line, e.value_col, err))?;
                if set.is_empty() {
                    return Err(self.err(e.line, e.value_col, "cpu_mask allows no CPU at all"));
                }
                Some(set)
            }
            None => None,
        };
        let count = match get("count") {
            Some(e) => {
                let c = self.count_value(e, "a number of copies")?;
                if c > MAX_TASKS as u64 {
                    return Err(self.err(
                        e.line,
                        e.value_col,
                        format!("count {c} is more than the {MAX_TASKS} tasks a scenario may have"),
                    ));
                }
                c
            }
            None => 1,
        };
        Ok(Task {
            line: b.line,
            marker: b.marker,
            name: get("name").map(|e| self.label_value(e)).transpose()?,
            group: get("group").map(|e| self.label_value(e)).transpose()?,
            count,
            loops,
            sloop,
            sleep_ns: sleep_ns.unwrap_or(0),
            irq_period,
            policy,
            priority,
            nice,
            cpu_mask,
        })
    }

    /// A block's `sloop` and `sleep` (in ns): both or neither.
    fn sleeps(&self, b: &Block) -> Result<(Option<u64>, Option<u64>), InputError> {
        let get = |k: &str| b.entries.iter().find(|e| e.key == k);
        let sloop = get("sloop")
            .map(|e| self.count_value(e, "a number of iterations"))
            .transpose()?;
        let sleep_ns = match get("sleep") {
            Some(e) => {
                let ns = parse_duration_ns(&e.value, Some("us"))
                    .map_err(|err| self.err(e.line, e.value_col, err))?;
                if ns == 0 {
                    return Err(self.err(
                        e.line,
                        e.value_col,
                        "sleep must be > 0 (leave out sloop and sleep for a task that never sleeps)",
                    ));
                }
                if ns > MAX_SLEEP_NS {
                    return Err(self.err(e.line, e.value_col, "sleep must be at most 1h"));
                }
                Some(ns)
            }
            None => None,
        };
        match (sloop, sleep_ns) {
            (Some(_), None) => {
                let e = get("sloop").expect("present");
                return Err(self.err(
                    e.line,
                    e.key_col,
                    "sloop needs a `sleep` (how long to sleep every sloop iterations)",
                ));
            }
            (None, Some(_)) => {
                let e = get("sleep").expect("present");
                return Err(self.err(
                    e.line,
                    e.key_col,
                    "sleep needs a `sloop` (how many iterations between two sleeps)",
                ));
            }
            _ => {}
        }
        Ok((sloop, sleep_ns))
    }

    /// A block's `sched`, `priority` and `nice`, each checked against the
    /// policy (priority for FIFO and RR, nice for the others).
    fn scheduling(&self, b: &Block) -> Result<(Policy, i32, i32), InputError> {
        let get = |k: &str| b.entries.iter().find(|e| e.key == k);
        let policy = match get("sched") {
            Some(e) => match Policy::parse(&e.value) {
                Some(Policy::Deadline) | None => {
                    return Err(self.err(
                        e.line,
                        e.value_col,
                        format!(
                            "unknown sched `{}` (expected OTHER, FIFO, RR, BATCH or IDLE)",
                            e.value
                        ),
                    ))
                }
                Some(p) => p,
            },
            None => Policy::Other,
        };
        let priority = match get("priority") {
            Some(e) if policy.is_rt() => self.int_value(e, 1, 99)?,
            Some(e) => {
                let v = self.int_value(e, 0, 99)?;
                if v != 0 {
                    return Err(self.err(
                        e.line,
                        e.key_col,
                        format!(
                            "priority applies to FIFO and RR tasks; this one is {} (use `nice`)",
                            policy.name().to_uppercase()
                        ),
                    ));
                }
                0
            }
            None if policy.is_rt() => 1,
            None => 0,
        };
        let nice =
            match get("nice") {
                Some(e) if policy.is_rt() => return Err(self.err(
                    e.line,
                    e.key_col,
                    "nice applies to OTHER, BATCH and IDLE tasks; use `priority` for FIFO and RR",
                )),
                Some(e) => self.int_value(e, -20, 19)?,
                None => 0,
            };
        Ok((policy, priority, nice))
    }

    /// Checked blocks → tasks, with groups and names decided.
    fn build_tasks(&self) -> Result<Vec<TaskSpec>, InputError> {
        let mut out: Vec<TaskSpec> = Vec::new();
        // Default groups by property key, and names already taken.
        let mut auto_groups: HashMap<String, String> = HashMap::new();
        let mut group_names: Vec<String> = Vec::new();
        let mut per_group: HashMap<String, usize> = HashMap::new();
        // The series the previous block belongs to: its group and the copy
        // number the next `#N` must carry.
        let mut series: Option<(String, u64)> = None;

        for b in &self.blocks {
            let t = self.check_block(b)?;
            let continues = match t.marker {
                Some(m) if m.n >= 2 => {
                    let expected = series.as_ref().map(|s| s.1);
                    if expected != Some(m.n) {
                        let why = match expected {
                            Some(x) => format!("the previous block ends copy {} of its series, so the next marker is #{x} (or #1 to start a new series)", x - 1),
                            None => "there is no block before it to copy (the first copy has no marker, or #1)".into(),
                        };
                        return Err(self.err(
                            m.line,
                            m.col,
                            format!("copy marker #{}: {why}", m.n),
                        ));
                    }
                    true
                }
                _ => false,
            };
            let series_group = if continues {
                series.as_ref().map(|s| s.0.clone())
            } else {
                None
            };
            let group = match (&t.group, series_group) {
                (Some(g), _) => g.clone(),
                (None, Some(g)) => g,
                (None, None) => {
                    let key = t.key();
                    match auto_groups.get(&key) {
                        Some(g) => g.clone(),
                        None => {
                            let stem = t.group_stem();
                            let mut name = stem.clone();
                            let mut k = 2;
                            while group_names.contains(&name) {
                                name = format!("{stem}-{k}");
                                k += 1;
                            }
                            auto_groups.insert(key, name.clone());
                            name
                        }
                    }
                }
            };
            if !group_names.contains(&group) {
                group_names.push(group.clone());
            }
            let first_copy = if continues {
                series.as_ref().map_or(1, |s| s.1)
            } else {
                1
            };
            series = Some((group.clone(), first_copy + t.count));

            if out.len() + t.count as usize > MAX_TASKS {
                return Err(self.err(
                    b.line,
                    b.col,
                    format!("more than {MAX_TASKS} tasks in this scenario"),
                ));
            }
            for copy in 0..t.count {
                let idx = per_group.entry(group.clone()).or_insert(0);
                *idx += 1;
                let name = match &t.name {
                    Some(n) if t.count == 1 => n.clone(),
                    Some(n) => format!("{n}.{}", copy + 1),
                    None => format!("{group}.{idx}"),
                };
                out.push(TaskSpec {
                    id: out.len(),
                    name,
                    group: group.clone(),
                    loops: t.loops,
                    sloop: t.sloop,
                    sleep_ns: t.sleep_ns,
                    irq_period: t.irq_period,
                    policy: t.policy,
                    priority: t.priority,
                    nice: t.nice,
                    cpu_mask: t.cpu_mask.clone(),
                    line: t.line,
                });
            }
        }
        if out.is_empty() {
            return Err(InputError::new(format!(
                "{}: the scenario has no task (expected `{{ … }}` blocks with at least `loop = N`)",
                self.source
            )));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        parse_str(text, "t.scn").unwrap_err().to_string()
    }

    #[test]
    fn rt_share_sizes_the_annexs_rt_tasks() {
        let annex = include_str!("../../../examples/scenarios/annex-b.scn");
        let s = parse_str(annex, "annex-b.scn").unwrap();
        // The thesis's assumed share is the simulator's default 0.1; 50 %
        // is 1 loop/µs and 1/11 is 10 (the three rows of simulate.md).
        let l = s.rt_share_loops_per_us(crate::ANNEX_B_RT_SHARE).unwrap();
        assert!((l - 0.1).abs() < 1e-9, "{l}");
        assert!((s.rt_share_loops_per_us(0.5).unwrap() - 1.0).abs() < 1e-9);
        assert!((s.rt_share_loops_per_us(1.0 / 11.0).unwrap() - 10.0).abs() < 1e-9);
        for bad in [0.0, 1.0, f64::NAN, -0.5] {
            assert!(s.rt_share_loops_per_us(bad).is_err(), "{bad}");
        }
        let none = parse_str("{\nloop = 10\nsched = FIFO\npriority = 50\n}\n", "t.scn").unwrap();
        assert!(none
            .rt_share_loops_per_us(0.5)
            .unwrap_err()
            .contains("no real-time task sleeps"));
        let two = parse_str(
            "{\nloop = 10\nsched = FIFO\npriority = 50\nsloop = 10\nsleep = 10\n}\n{\nloop = 10\nsched = FIFO\npriority = 50\nsloop = 20\nsleep = 10\n}\n",
            "t.scn",
        )
        .unwrap();
        assert!(two
            .rt_share_loops_per_us(0.5)
            .unwrap_err()
            .contains("different sloop/sleep"));
    }

    #[test]
    fn minimal_block_and_defaults() {
        let s = parse_str("{\nloop = 1000\n}\n", "t.scn").unwrap();
        assert_eq!(s.tasks.len(), 1);
        let t = &s.tasks[0];
        assert_eq!(t.loops, 1000);
        assert_eq!(t.policy, Policy::Other);
        assert_eq!(t.priority, 0);
        assert_eq!(t.sloop, None);
        assert_eq!(t.cpu_mask, None);
        assert_eq!(t.group, "other");
        assert_eq!(t.name, "other.1");
        assert_eq!(t.line, 1);
        assert_eq!(s.globals, Globals::default());
    }

    #[test]
    fn all_keys() {
        let text = "loops_per_us = 2.5\ntimeout = 30s\n\
            {\n loop = 1_000 # work\n sloop = 10\n sleep = 2ms\n irq_period = 7\n sched = fifo\n\
             priority = 42\n cpu_mask = 1,3\n name = \"rt\"\n group = g\n count = 2\n}\n";
        let s = parse_str(text, "t.scn").unwrap();
        assert_eq!(s.globals.loops_per_us, Some(2.5));
        assert_eq!(s.globals.timeout_ns, Some(30_000_000_000));
        assert_eq!(s.tasks.len(), 2);
        let t = &s.tasks[1];
        assert_eq!(t.id, 1);
        assert_eq!(t.loops, 1000);
        assert_eq!(t.sloop, Some(10));
        assert_eq!(t.sleep_ns, 2_000_000);
        assert_eq!(t.irq_period, Some(7));
        assert_eq!(t.policy, Policy::Fifo);
        assert_eq!(t.priority, 42);
        assert_eq!(t.cpu_mask.as_ref().unwrap().to_list(), "1,3");
        assert_eq!(t.name, "rt.2");
        assert_eq!(t.group, "g");
    }

    #[test]
    fn sleep_defaults_to_microseconds_and_mask_to_hex() {
        let s = parse_str(
            "{ loop = 5; sloop = 1; sleep = 5000; cpu_mask = 0x6; nice = -3 }",
            "x",
        )
        .unwrap();
        assert_eq!(s.tasks[0].sleep_ns, 5_000_000);
        assert_eq!(s.tasks[0].cpu_mask.as_ref().unwrap().to_list(), "1-2");
        assert_eq!(s.tasks[0].nice, -3);
        assert_eq!(s.tasks[0].group, "other-3");
    }

    #[test]
    fn markers_continue_a_series_and_group_it() {
        let text = "{\nloop = 1\ncpu_mask = 0x2\nsched = FIFO\npriority = 99\nsloop = 1\nsleep = 1\n}\n\
            #2\n{\nloop = 1\ncpu_mask = 0x4\nsched = FIFO\npriority = 99\nsloop = 1\nsleep = 1\n}\n\
            #3\n{\nloop = 1\ncpu_mask = 0x8\nsched = FIFO\npriority = 99\nsloop = 1\nsleep = 1\n}\n";
        let s = parse_str(text, "t").unwrap();
        assert_eq!(s.tasks.len(), 3, "markers never add tasks");
        assert!(s.tasks.iter().all(|t| t.group == "fifo99"));
        let names: Vec<_> = s.tasks.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["fifo99.1", "fifo99.2", "fifo99.3"]);
    }

    #[test]
    fn same_properties_group_without_markers_different_ones_do_not() {
        let s = parse_str("{loop=1}\n{loop=1}\n{loop=2}\n{loop=1}\n", "t").unwrap();
        let g: Vec<_> = s.tasks.iter().map(|t| t.group.as_str()).collect();
        assert_eq!(g, ["other", "other", "other-2", "other"]);
    }

    #[test]
    fn count_advances_the_series() {
        let s = parse_str("{loop=1\ncount=3}\n#4\n{loop=9}\n", "t").unwrap();
        assert_eq!(s.tasks.len(), 4);
        assert!(s.tasks.iter().all(|t| t.group == "other"));
        assert_eq!(s.tasks[3].name, "other.4");
    }

    #[test]
    fn marker_one_starts_new_series() {
        let s = parse_str("{loop=1}\n#1\n{loop=2}\n#2\n{loop=3}\n", "t").unwrap();
        let g: Vec<_> = s.tasks.iter().map(|t| t.group.as_str()).collect();
        assert_eq!(g, ["other", "other-2", "other-2"]);
    }

    #[test]
    fn comments_are_not_markers() {
        let s = parse_str("# 2 tasks\n#2a\n{loop=1} # trailing\n", "t").unwrap();
        assert_eq!(s.tasks.len(), 1);
    }

    #[test]
    fn errors_name_file_line_column() {
        assert_eq!(
            err("{\nloop = abc\n}\n"),
            "t.scn:2:8: loop expects a number of iterations, got `abc`"
        );
        assert_eq!(
            err("{\nloop = 1\nfoo = 2\n}"),
            "t.scn:3:1: unknown key `foo` (task keys: loop, sloop, sleep, irq_period, sched, priority, nice, cpu_mask, name, group, count)"
        );
        assert_eq!(
            err("{\n  loop = 1\n"),
            "t.scn:1:1: this block is never closed (missing `}` before the end of the file)"
        );
        assert!(err("}\n").starts_with("t.scn:1:1: `}` without a matching `{`; hint: a stray `}`"));
        assert_eq!(
            err("loops_per_us = 1\n}\n"),
            "t.scn:2:1: `}` without a matching `{`",
            "no hint after a key: not page-break debris"
        );
        assert_eq!(
            err("{ loop = 1\n { }"),
            "t.scn:2:2: `{` inside a block: the block opened at line 1 is not closed"
        );
        assert_eq!(
            err("{\n}\n"),
            "t.scn:1:1: this task has no `loop` (its amount of work, in busy-loop iterations)"
        );
        assert_eq!(
            err("{loop=1\nloop=2}"),
            "t.scn:2:1: `loop` given twice in this block (first at line 1)"
        );
        assert_eq!(
            err("{loop=1\n  hello}"),
            "t.scn:2:3: expected `key = value`, `{` or `}`, found `hello`"
        );
        assert_eq!(
            err("{loop=1; sched = edf}"),
            "t.scn:1:18: unknown sched `edf` (expected OTHER, FIFO, RR, BATCH or IDLE)"
        );
        assert_eq!(
            err("{loop=1; sched=fifo; priority=100}"),
            "t.scn:1:31: priority must be between 1 and 99, got 100"
        );
        assert_eq!(
            err("{loop=1; priority=5}"),
            "t.scn:1:10: priority applies to FIFO and RR tasks; this one is OTHER (use `nice`)"
        );
        assert_eq!(err("{loop=1; sched=rr; nice=1}"), "t.scn:1:20: nice applies to OTHER, BATCH and IDLE tasks; use `priority` for FIFO and RR");
        assert_eq!(
            err("{loop=1; cpu_mask=0x0}"),
            "t.scn:1:19: cpu_mask allows no CPU at all"
        );
        assert!(err("{loop=1; cpu_mask=zz}").starts_with("t.scn:1:19: invalid CPU set 'zz'"));
        assert!(
            err("{loop=1; sloop=2; sleep=3 parsecs}").starts_with("t.scn:1:25: invalid duration")
        );
        assert_eq!(
            err("{loop=1; sloop=2}"),
            "t.scn:1:10: sloop needs a `sleep` (how long to sleep every sloop iterations)"
        );
        assert_eq!(
            err("{loop=1; sleep=2}"),
            "t.scn:1:10: sleep needs a `sloop` (how many iterations between two sleeps)"
        );
        assert_eq!(err("{loop=0}"), "t.scn:1:7: loop must be at least 1");
        assert_eq!(
            err("{loop=1; count=10001}"),
            "t.scn:1:16: count 10001 is more than the 10000 tasks a scenario may have"
        );
        assert_eq!(
            err("{loop=1; name=a b}"),
            "t.scn:1:15: name must be a non-empty word without spaces, got `a b`"
        );
        assert_eq!(err("{loop=1; = 3}"), "t.scn:1:10: missing key before `=`");
        assert_eq!(err("{loop=}"), "t.scn:1:7: missing value for `loop`");
    }

    #[test]
    fn global_and_marker_errors() {
        assert_eq!(
            err("loop = 3\n"),
            "t.scn:1:1: `loop` is a task key: put it inside a `{ … }` block"
        );
        assert_eq!(err("speed = 3\n"), "t.scn:1:1: unknown global key `speed` (global keys: loops_per_us, timeout; task keys go inside `{ … }`)");
        assert_eq!(
            err("loops_per_us = -1\n"),
            "t.scn:1:16: loops_per_us must be a number between 0.001 and 1000000, got `-1`"
        );
        assert_eq!(
            err("timeout = 1\ntimeout = 2\n"),
            "t.scn:2:1: `timeout` given twice (first at line 1)"
        );
        assert_eq!(
            err("{loop=1; timeout=3}"),
            "t.scn:1:10: unknown key `timeout` (a global key: put it outside the blocks)"
        );
        assert_eq!(err("{loop=1\n#2\n}"), "t.scn:2:1: copy marker #2 inside a block: markers go between blocks, before the `{` of the copy");
        assert_eq!(err("#2\n{loop=1}"), "t.scn:1:1: copy marker #2: there is no block before it to copy (the first copy has no marker, or #1)");
        assert_eq!(err("{loop=1}\n#3\n{loop=1}"), "t.scn:2:1: copy marker #3: the previous block ends copy 1 of its series, so the next marker is #2 (or #1 to start a new series)");
        assert_eq!(
            err("{loop=1}\n  #2\n#3\n{loop=1}"),
            "t.scn:3:1: copy marker #3 follows marker #2 (line 2) with no block between them"
        );
        assert_eq!(
            err("{loop=1}\n#2\n"),
            "t.scn:2:1: copy marker #2 is not followed by a block"
        );
        assert_eq!(
            err("# nothing\n"),
            "t.scn: the scenario has no task (expected `{ … }` blocks with at least `loop = N`)"
        );
    }

    #[test]
    fn columns_count_characters_not_bytes() {
        // "µ" is two bytes but one column.
        assert_eq!(err("{loop=1; µ=1; x}"), "t.scn:1:10: `µ` is not a key name");
    }

    #[test]
    fn annex_b_as_printed() {
        let text = include_str!("../../../examples/scenarios/annex-b.scn");
        let s = parse_str(text, "annex-b.scn").unwrap();
        assert_eq!(s.tasks.len(), 16);
        let normal: Vec<_> = s.tasks.iter().filter(|t| t.group == "other").collect();
        assert_eq!(normal.len(), 13);
        assert!(normal.iter().all(|t| t.loops == 10_000_000
            && t.cpu_mask.as_ref().unwrap().len() == 16
            && t.sloop.is_none()));
        let rt: Vec<_> = s.tasks.iter().filter(|t| t.group == "fifo99").collect();
        assert_eq!(rt.len(), 3);
        let masks: Vec<_> = rt
            .iter()
            .map(|t| t.cpu_mask.as_ref().unwrap().to_list())
            .collect();
        assert_eq!(masks, ["1", "2", "3"]);
        assert!(rt.iter().all(|t| t.is_rt0()
            && t.loops == 110_000_000
            && t.sloop == Some(5000)
            && t.sleep_ns == 5_000_000));
        assert_eq!(s.tasks[15].name, "fifo99.3");
    }

    mod props {
        use super::super::{parse_str, BLOCK_KEYS, GLOBAL_KEYS};
        use proptest::prelude::*;

        /// Lines that look like scenario lines, to get past the first error.
        fn line() -> impl Strategy<Value = String> {
            prop_oneof![
                Just("{".to_string()),
                Just("}".to_string()),
                Just("#2".to_string()),
                Just("#1".to_string()),
                Just("# comment".to_string()),
                (
                    // Every key the parser knows, and one it does not.
                    prop::sample::select(
                        BLOCK_KEYS
                            .iter()
                            .chain(GLOBAL_KEYS)
                            .copied()
                            .chain(["x"])
                            .collect::<Vec<_>>()
                    ),
                    prop::sample::select(vec![
                        "1",
                        "0",
                        "5000",
                        "0xffff",
                        "0x0",
                        "1-3",
                        "FIFO",
                        "rr",
                        "-5",
                        "99",
                        "100",
                        "2ms",
                        "1.5",
                        "abc",
                        "\"q\"",
                        "18446744073709551616",
                        "µs",
                        "",
                    ])
                )
                    .prop_map(|(k, v)| format!("{k} = {v}")),
                "\\PC{0,12}",
            ]
        }

        proptest! {
            #[test]
            fn never_panics_on_anything(text in "\\PC{0,200}") {
                let _ = parse_str(&text, "p");
            }

            #[test]
            fn never_panics_on_scenario_like_text(lines in prop::collection::vec(line(), 0..40)) {
                let text = lines.join("\n");
                match parse_str(&text, "p") {
                    Ok(s) => {
                        prop_assert!(!s.tasks.is_empty());
                        for (i, t) in s.tasks.iter().enumerate() {
                            prop_assert_eq!(t.id, i);
                            prop_assert!(t.loops >= 1);
                        }
                    }
                    Err(e) => prop_assert!(e.to_string().starts_with("p:"), "{}", e),
                }
            }
        }
    }
}
