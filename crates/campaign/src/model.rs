//! The campaign file (TOML): a matrix of measurement runs.
//!
//! ```toml
//! name = "isolation"
//! cpus = "1"                 # measured CPUs
//! duration = "20s"           # per run
//! repeat = 2
//! [measure]                  # settings shared by every cell
//! period = "200us"
//! [axes]                     # the cross product is the matrix
//! isolation = ["none", "partition"]
//! load = ["idle", "hell"]
//! [partition]                # how `isolation = "partition"` partitions
//! parent = "rtshield-campaign"
//! with = ["irq"]
//! [[exclude]]
//! isolation = "partition"
//! load = "idle"
//! ```
//!
//! Unknown keys and bad values are refused with FILE:LINE:COL before
//! anything runs.

use rtshield_limits as limits;
use rtshield_vocab::parse_duration_ns;
use rtshield_vocab::InputError;
use serde::Deserialize;
use std::collections::BTreeMap;

/// Axis names that are not measurement settings.
/// The isolation axis.
pub(crate) const AXIS_ISOLATION: &str = "isolation";
/// The load axis.
pub(crate) const AXIS_LOAD: &str = "load";

/// Measurement settings an axis or `[measure]` may set, with the
/// `rtshield measure` option each one becomes.
pub(crate) const SETTINGS: &[(&str, &str)] = &[
    ("period", "--period"),
    ("priority", "--prio"),
    ("policy", "--policy"),
    ("mode", "--mode"),
    ("histo_size", "--histo-size"),
    ("resolution", "--resolution"),
    ("max_latency", "--max-latency"),
    // A switch: `true` adds the option, `false` leaves it out.
    ("split", "--split"),
];

/// The implicit axis every campaign has: the kernel each run was measured
/// on (release and preemption model, from the run's `sysinfo`). Runs of
/// another kernel are never pooled (unless `pool = ["kernel"]`) and never
/// count as done for `--resume`.
pub(crate) const POOL_KERNEL: &str = "kernel";

/// The isolation methods.
pub(crate) const ISOLATIONS: &[&str] = &["none", "partition", "isolcpus", "existing"];

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    name: toml::Spanned<String>,
    cpus: toml::Spanned<String>,
    /// A string with its unit (`"20s"`) or a bare number of seconds.
    #[serde(default)]
    duration: Option<toml::Spanned<toml::Value>>,
    #[serde(default)]
    samples: Option<toml::Spanned<u64>>,
    #[serde(default)]
    pool: Option<toml::Spanned<Vec<toml::Spanned<String>>>>,
    #[serde(default)]
    repeat: Option<toml::Spanned<u64>>,
    #[serde(default)]
    order: Option<toml::Spanned<String>>,
    #[serde(default)]
    measure: BTreeMap<String, toml::Spanned<toml::Value>>,
    axes: BTreeMap<String, toml::Spanned<Vec<toml::Spanned<toml::Value>>>>,
    #[serde(default)]
    partition: Option<RawPartition>,
    #[serde(default)]
    exclude: Vec<BTreeMap<String, toml::Value>>,
    #[serde(default)]
    include: Vec<BTreeMap<String, toml::Value>>,
    #[serde(default)]
    load_cpus: Option<toml::Spanned<String>>,
}

#[derive(Debug, Deserialize, Clone, PartialEq, Eq, Default)]
#[serde(deny_unknown_fields)]
/// `[partition]`: how `isolation = "partition"` partitions.
pub struct RawPartition {
    #[serde(default)]
    /// The parent cgroup of the rt/nrt sets (None: the root).
    pub parent: Option<String>,
    #[serde(default)]
    /// What `partition create --with` also moves (e.g. `irq`).
    pub with: Vec<String>,
}

/// How cells are ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// Round 1 of every cell, then round 2, …: slow drift of the machine
    /// spreads over all cells instead of biasing the last ones.
    Interleaved,
    /// Every round of cell 1, then cell 2, …
    Sequential,
}

/// One cell of the matrix: a value per axis.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cell {
    /// `isolation=none,load=hell` (axis order of the file), every
    /// password of a value masked (`rtshield_text::secret`).
    pub id: String,
    /// (axis, value), in the file's axis order.
    pub values: Vec<(String, String)>,
}

impl Cell {
    /// The cell's value on `axis`.
    pub fn get(&self, axis: &str) -> Option<&str> {
        self.values
            .iter()
            .find(|(k, _)| k == axis)
            .map(|(_, v)| v.as_str())
    }
    /// The isolation method (`none` without that axis).
    pub fn isolation(&self) -> &str {
        self.get(AXIS_ISOLATION).unwrap_or("none")
    }
    /// The load (`idle` without that axis).
    pub fn load(&self) -> &str {
        self.get(AXIS_LOAD).unwrap_or("idle")
    }
    /// The load as it may be shown or recorded: a `cmd:` load's password
    /// masked.
    pub fn load_shown(&self) -> std::borrow::Cow<'_, str> {
        rtshield_text::secret::redact(self.load())
    }
    /// The built-in load the measure runs beside itself (not `idle`, not
    /// an external `cmd:` load, which the campaign starts).
    pub fn builtin_load(&self) -> Option<&str> {
        let load = self.load();
        (load != "idle" && !load.starts_with("cmd:")).then_some(load)
    }
}

/// One run of the campaign: a cell and its repeat number (1-based).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// The cell's place in [`Campaign::cells`].
    pub cell: usize,
    /// The repeat number (1-based).
    pub repeat: u64,
}

/// A parsed, checked campaign.
#[derive(Debug, Clone, PartialEq)]
pub struct Campaign {
    /// The campaign's name (tags, directory, report).
    pub name: String,
    /// The measured CPUs, as written.
    pub cpus: String,
    /// The built-in loads' CPUs, as written.
    pub load_cpus: Option<String>,
    /// Each run's duration, ns (None: each run ends after `samples`).
    pub duration_ns: Option<u64>,
    /// Each run's sample count per thread (`measure --samples`: the
    /// partitioning article's `cyclictest -l1000000`), if given.
    pub samples: Option<u64>,
    /// Axes the report pools (`pool = ["period"]`): their values are
    /// merged in the figure-11 tables and the comparisons. Every other
    /// declared axis, and the kernel, is kept apart.
    pub pool: Vec<String>,
    /// Runs per cell.
    pub repeat: u64,
    /// The order of the runs.
    pub order: Order,
    /// Settings shared by every cell (`rtshield measure` option, value).
    pub measure: Vec<(String, String)>,
    /// How partition cells partition.
    pub partition: RawPartition,
    /// The cells of the matrix, after exclude and include.
    pub cells: Vec<Cell>,
    /// A fingerprint of the file's content: `--resume` only skips runs of
    /// the very same campaign.
    pub fingerprint: String,
}

fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before
        .rfind('\n')
        .map_or(before.len(), |i| before.len() - i - 1)
        + 1;
    (line, col)
}

fn value_str(v: &toml::Value) -> Option<String> {
    match v {
        toml::Value::String(s) => Some(s.clone()),
        toml::Value::Integer(i) => Some(i.to_string()),
        toml::Value::Float(f) => Some(f.to_string()),
        toml::Value::Boolean(b) => Some(b.to_string()),
        _ => None,
    }
}

/// Is `load` a load this build can run: `idle`, a built-in load, or an
/// external command (`cmd:…`)?
fn check_load(v: &str) -> Result<(), String> {
    if v == "idle" || v.starts_with("cmd:") || rtshield_vocab::Builtin::parse(v).is_some() {
        Ok(())
    } else if v.starts_with("net:") {
        // `net:peer=ADDR`, with measure's checks (an IPv4 remote peer).
        v.parse::<rtshield_load::LoadArg>().map(|_| ())
    } else {
        Err(format!(
            "unknown load `{v}`: expected idle, a built-in load ({}) or cmd:COMMAND LINE",
            rtshield_vocab::Builtin::names()
        ))
    }
}

fn check_setting(key: &str, v: &str) -> Result<(), String> {
    if matches!(key, "period" | "histo_size" | "max_latency") && v.trim_start().starts_with('-') {
        return Err(format!("{key} `{v}`: a duration is not negative"));
    }
    match key {
        "period" | "histo_size" => {
            let ns = parse_duration_ns(v, Some("us")).map_err(|e| format!("{key}: {e}"))?;
            // measure's ranges (docs/ranges.md): period up to 1 h, the
            // histogram up to 1 s.
            let (range, max_text) = if key == "period" {
                (limits::CAMPAIGN_PERIOD_NS, "1 h")
            } else {
                (limits::CAMPAIGN_HISTO_SIZE_NS, "1 s")
            };
            if !range.contains(ns) {
                return Err(format!("{key} `{v}` out of range 1 us .. {max_text}"));
            }
        }
        "priority" => {
            let p: i64 = v
                .parse()
                .map_err(|_| format!("priority `{v}` is not an integer"))?;
            let r = limits::PRIORITY;
            if !(i64::from(r.min)..=i64::from(r.max)).contains(&p) {
                return Err(format!("priority {p} out of range {}..{}", r.min, r.max));
            }
        }
        "policy" if !["fifo", "rr", "other"].contains(&v.to_ascii_lowercase().as_str()) => {
            return Err(format!("policy `{v}`: expected fifo, rr or other"));
        }
        "mode" if !["nanosleep", "posix-timer", "interval", "interval-posix"].contains(&v) => {
            return Err(format!(
                "mode `{v}`: expected nanosleep, posix-timer, interval or interval-posix"
            ));
        }
        "resolution" if !["us", "ns"].contains(&v) => {
            return Err(format!("resolution `{v}`: expected us or ns"));
        }
        "split" if !["true", "false"].contains(&v) => {
            return Err(format!("split `{v}`: expected true or false"));
        }
        "max_latency" => {
            // measure's --max-latency: a duration with its unit.
            let ns = parse_duration_ns(v, None).map_err(|e| format!("{key}: {e}"))?;
            if !limits::MAX_LATENCY_NS.contains(ns) {
                return Err(format!("{key} `{v}`: must be more than 0 and at most 1 h"));
            }
        }
        _ => {}
    }
    Ok(())
}

/// Parse and check a campaign file's text; `file` names it in errors.
/// Only this file's own ranges: see [`parse_checked`] for the checks of
/// `rtshield measure` itself (the tests' way in; the command checks all).
#[cfg(test)]
pub(crate) fn parse(text: &str, file: &str) -> Result<Campaign, InputError> {
    parse_with_spans(text, file).map(|(c, _)| c)
}

/// Parse and check a campaign file's text (`file` names it in errors),
/// then every cell's measure request (with its partition for a
/// partition cell) goes through measure's own validation
/// ([`rtshield_run::MeasureRequest::validate`]), so a value measure would
/// refuse is refused here, at the value that set it, before anything runs.
pub fn parse_checked(text: &str, file: &str) -> Result<Campaign, InputError> {
    let (c, spans) = parse_with_spans(text, file)?;
    let pos = Pos { text, file };
    // `partition create --parent` refuses these too, but only once a cell
    // runs (and the start-up undo would fail first, less clearly).
    if let Some(p) = &c.partition.parent {
        if p.trim_matches('/').is_empty() || rtshield_isolation::parent_syntax_error(p).is_some() {
            return Err(pos.whole(format!(
                "[partition] parent = {p:?}: must name a cgroup below the cpuset hierarchy's \
                 root, without `.` or `..` or control characters (leave it out to partition the whole machine)"
            )));
        }
    }
    for cell in &c.cells {
        if let Err(r) = c.request(cell).and_then(|r| r.validate()) {
            // Point at the value measure refuses: the cell's own (an axis
            // value), else `[measure]`'s, else the top-level key.
            let key = crate::cells::key_of(r.setting).unwrap_or("");
            let off = cell
                .get(key)
                .and_then(|v| spans.values.get(&(key.to_string(), v.to_string())))
                .or_else(|| spans.values.get(&(key.to_string(), String::new())))
                .copied()
                .or(match key {
                    "cpus" => Some(spans.cpus),
                    "load_cpus" => spans.load_cpus,
                    "duration" => spans.duration,
                    "samples" => spans.samples,
                    _ => None,
                });
            let msg = format!("cell {}: `rtshield measure` refuses {r}", cell.id);
            return Err(match off {
                Some(off) => pos.at(off, msg),
                None => pos.whole(msg),
            });
        }
    }
    Ok(c)
}

/// Where a file's values are: errors name their line and column.
struct Pos<'a> {
    text: &'a str,
    file: &'a str,
}

impl Pos<'_> {
    /// An error at byte `off` of the file.
    fn at(&self, off: usize, msg: String) -> InputError {
        let (l, c) = line_col(self.text, off);
        InputError::at(self.file, l, c, msg)
    }

    /// An error that belongs to no single value (the matrix as a whole).
    fn whole(&self, msg: String) -> InputError {
        InputError::at(self.file, 1, 1, msg)
    }
}

/// Where each value came from (byte offsets), for the refusals of
/// measure's validation, found once the whole file is parsed.
struct Spans {
    /// (setting or axis, value; empty for `[measure]`'s) -> offset.
    values: BTreeMap<(String, String), usize>,
    cpus: usize,
    load_cpus: Option<usize>,
    duration: Option<usize>,
    samples: Option<usize>,
}

/// [`parse`], with where each value came from.
fn parse_with_spans(text: &str, file: &str) -> Result<(Campaign, Spans), InputError> {
    let pos = Pos { text, file };
    let raw: Raw = toml::from_str(text).map_err(|e| {
        let off = e.span().map_or(0, |s| s.start);
        pos.at(off, e.message().trim().to_string())
    })?;
    let (duration_ns, repeat, order) = header(&raw, &pos)?;
    let samples = samples(&raw, &pos)?;
    let mut spans = Spans {
        values: BTreeMap::new(),
        cpus: raw.cpus.span().start,
        load_cpus: raw.load_cpus.as_ref().map(|l| l.span().start),
        duration: raw.duration.as_ref().map(|d| d.span().start),
        samples: raw.samples.as_ref().map(|d| d.span().start),
    };
    let measure = measure_settings(&raw, &pos, &mut spans)?;
    let axis_values = axes(&raw, &pos, &mut spans)?;
    let pool = pool(&raw, &axis_values, &pos)?;
    let cells = matrix(&raw, &axis_values, &pos)?
        .into_iter()
        .map(|values| Cell {
            // The id names the cell in tags, the summary, the campaign's
            // record and messages: a `cmd:` load's password is not in it.
            id: values
                .iter()
                .map(|(k, v)| format!("{k}={}", rtshield_text::secret::redact(v)))
                .collect::<Vec<_>>()
                .join(","),
            values,
        })
        .collect();
    let c = Campaign {
        name: raw.name.get_ref().clone(),
        cpus: raw.cpus.get_ref().clone(),
        load_cpus: raw.load_cpus.as_ref().map(|l| l.get_ref().clone()),
        duration_ns,
        samples,
        pool,
        repeat,
        order,
        measure,
        partition: raw.partition.unwrap_or_default(),
        cells,
        fingerprint: fingerprint(text),
    };
    Ok((c, spans))
}

/// `samples = N`: each run's sample count, measure's range.
fn samples(raw: &Raw, pos: &Pos) -> Result<Option<u64>, InputError> {
    let Some(s) = &raw.samples else {
        return Ok(None);
    };
    let n = *s.get_ref();
    if !limits::SAMPLES.contains(n) {
        return Err(pos.at(
            s.span().start,
            format!(
                "samples {n} out of range {}..{}",
                limits::SAMPLES.min,
                limits::SAMPLES.max
            ),
        ));
    }
    Ok(Some(n))
}

/// `pool = ["AXIS", ...]`: only declared axes other than isolation and
/// load (the figure-11 tables' blocks and rows), or `kernel`.
fn pool(
    raw: &Raw,
    axis_values: &[(String, Vec<String>)],
    pos: &Pos,
) -> Result<Vec<String>, InputError> {
    let Some(p) = &raw.pool else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for a in p.get_ref() {
        let name = a.get_ref();
        let off = a.span().start;
        if name == AXIS_ISOLATION || name == AXIS_LOAD {
            return Err(pos.at(
                off,
                format!(
                    "pool `{name}`: isolation and load are the figure-11 tables' blocks and rows, \
                     they are never pooled"
                ),
            ));
        }
        if name != POOL_KERNEL && !axis_values.iter().any(|(k, _)| k == name) {
            let declared: Vec<&str> = axis_values
                .iter()
                .map(|(k, _)| k.as_str())
                .filter(|k| *k != AXIS_ISOLATION && *k != AXIS_LOAD)
                .chain([POOL_KERNEL])
                .collect();
            return Err(pos.at(
                off,
                format!(
                    "pool `{name}` is not a declared axis (expected one of: {})",
                    declared.join(", ")
                ),
            ));
        }
        if out.contains(name) {
            return Err(pos.at(off, format!("pool lists `{name}` twice")));
        }
        out.push(name.clone());
    }
    Ok(out)
}

/// `duration`: each run's length, ns. A string with its unit (`"20s"`,
/// `"1.5min"`), or a bare TOML number (integer or float) of seconds, as
/// `measure --duration 10` reads a number without unit; 1 s .. 7 d.
fn run_duration(v: &toml::Value) -> Result<u64, String> {
    const RANGE: &str = "out of range 1 s .. 7 d";
    let (shown, text) = match v {
        toml::Value::String(s) => (format!("`{s}`"), s.clone()),
        toml::Value::Integer(i) => (i.to_string(), format!("{i}s")),
        toml::Value::Float(f) if f.is_nan() => return Err("duration nan: not a number".into()),
        // Rust prints a float without exponent (`1e3` is `1000`).
        toml::Value::Float(f) => (f.to_string(), format!("{f}s")),
        other => {
            return Err(format!(
                "duration: expected a duration with its unit (\"20s\") or a number of seconds, \
                 not a TOML {}",
                other.type_str()
            ))
        }
    };
    if text.trim_start().starts_with('-') {
        return Err(format!(
            "duration {shown} {RANGE} (a duration is not negative)"
        ));
    }
    let ns = match parse_duration_ns(&text, Some("s")) {
        Ok(ns) => ns,
        // A number that is not negative fails only by overflowing u64 ns.
        Err(_) if !v.is_str() => return Err(format!("duration {shown} {RANGE}")),
        Err(e) => return Err(format!("duration: {e}")),
    };
    if !limits::CAMPAIGN_DURATION_NS.contains(ns) {
        return Err(format!("duration {shown} {RANGE}"));
    }
    Ok(ns)
}

/// The top-level keys: name, duration, repeat, cpus, order.
fn header(raw: &Raw, pos: &Pos) -> Result<(Option<u64>, u64, Order), InputError> {
    let name = raw.name.get_ref();
    if name.trim().is_empty() || name.contains(['/', '\0']) {
        return Err(pos.at(
            raw.name.span().start,
            format!("name `{name}`: give a plain name (no `/`)"),
        ));
    }
    let duration_ns = match &raw.duration {
        None if raw.samples.is_none() => return Err(pos.whole(
            "give `duration` (each run's length) or `samples` (each run's sample count), or both"
                .into(),
        )),
        None => None,
        Some(d) => Some(run_duration(d.get_ref()).map_err(|m| pos.at(d.span().start, m))?),
    };
    let repeat = raw.repeat.as_ref().map_or(1, |r| *r.get_ref());
    if !limits::CAMPAIGN_REPEAT.contains(repeat) {
        let off = raw.repeat.as_ref().map_or(0, |r| r.span().start);
        return Err(pos.at(
            off,
            format!(
                "repeat {repeat} out of range 1..{}",
                limits::CAMPAIGN_REPEAT.max
            ),
        ));
    }
    rtshield_vocab::CpuSet::parse(raw.cpus.get_ref()).map_err(|e| {
        pos.at(
            raw.cpus.span().start,
            format!("cpus `{}`: {e}", raw.cpus.get_ref()),
        )
    })?;
    let order = match &raw.order {
        None => Order::Interleaved,
        Some(o) => match o.get_ref().as_str() {
            "interleaved" => Order::Interleaved,
            "sequential" => Order::Sequential,
            other => {
                return Err(pos.at(
                    o.span().start,
                    format!("order `{other}`: expected interleaved or sequential"),
                ))
            }
        },
    };
    Ok((duration_ns, repeat, order))
}

/// `[measure]`: settings shared by every cell.
fn measure_settings(
    raw: &Raw,
    pos: &Pos,
    spans: &mut Spans,
) -> Result<Vec<(String, String)>, InputError> {
    let mut measure = Vec::new();
    for (k, v) in &raw.measure {
        let off = v.span().start;
        if !SETTINGS.iter().any(|(s, _)| s == k) {
            return Err(pos.at(
                off,
                format!(
                    "unknown measurement setting `{k}` (expected one of: {})",
                    names()
                ),
            ));
        }
        let s = value_str(v.get_ref())
            .ok_or_else(|| pos.at(off, format!("{k}: expected a string or number")))?;
        check_setting(k, &s).map_err(|m| pos.at(off, m))?;
        spans.values.insert((k.clone(), String::new()), off);
        measure.push((k.clone(), s));
    }
    Ok(measure)
}

/// `[axes]`, in file order (TOML tables are sorted by our BTreeMap, so the
/// spans restore the order the user wrote), each value checked.
fn axes(raw: &Raw, pos: &Pos, spans: &mut Spans) -> Result<Vec<(String, Vec<String>)>, InputError> {
    type Axis = toml::Spanned<Vec<toml::Spanned<toml::Value>>>;
    let mut axes: Vec<(&String, &Axis)> = raw.axes.iter().collect();
    axes.sort_by_key(|(_, v)| v.span().start);
    let mut axis_values: Vec<(String, Vec<String>)> = Vec::new();
    for (k, v) in axes {
        let off = v.span().start;
        let known = k == AXIS_ISOLATION || k == AXIS_LOAD || SETTINGS.iter().any(|(s, _)| s == k);
        if !known {
            return Err(pos.at(
                off,
                format!(
                    "unknown axis `{k}` (expected isolation, load or one of: {})",
                    names()
                ),
            ));
        }
        if v.get_ref().is_empty() {
            return Err(pos.at(off, format!("axis `{k}` has no value")));
        }
        let mut vals = Vec::new();
        for x in v.get_ref() {
            let off = x.span().start;
            let s = value_str(x.get_ref())
                .ok_or_else(|| pos.at(off, format!("{k}: expected strings or numbers")))?;
            let check = match k.as_str() {
                AXIS_ISOLATION if !ISOLATIONS.contains(&s.as_str()) => Err(format!(
                    "isolation `{s}`: expected none, partition, isolcpus or existing"
                )),
                AXIS_LOAD => check_load(&s),
                AXIS_ISOLATION => Ok(()),
                _ => check_setting(k, &s),
            };
            check.map_err(|m| pos.at(off, m))?;
            if vals.contains(&s) {
                return Err(pos.at(off, format!("axis `{k}` lists `{s}` twice")));
            }
            spans.values.insert((k.clone(), s.clone()), off);
            vals.push(s);
        }
        axis_values.push((k.clone(), vals));
    }
    Ok(axis_values)
}

/// The cells: the cross product of the axes, less `[[exclude]]`, plus
/// `[[include]]`.
fn matrix(
    raw: &Raw,
    axis_values: &[(String, Vec<String>)],
    pos: &Pos,
) -> Result<Vec<Vec<(String, String)>>, InputError> {
    let mut cells = vec![Vec::<(String, String)>::new()];
    for (k, vals) in axis_values {
        let mut next = Vec::new();
        for c in &cells {
            for v in vals {
                let mut c2 = c.clone();
                c2.push((k.clone(), v.clone()));
                next.push(c2);
            }
        }
        cells = next;
        if cells.len() > limits::CAMPAIGN_MAX_CELLS {
            return Err(pos.whole(format!(
                "the matrix has more than {} cells",
                limits::CAMPAIGN_MAX_CELLS
            )));
        }
    }
    let to_pairs = |m: &BTreeMap<String, toml::Value>,
                    what: &str|
     -> Result<Vec<(String, String)>, InputError> {
        m.iter()
            .map(|(k, v)| {
                if !axis_values.iter().any(|(a, _)| a == k) {
                    return Err(pos.whole(format!("{what} names `{k}`, which is not an axis")));
                }
                Ok((k.clone(), value_str(v).unwrap_or_default()))
            })
            .collect()
    };
    for ex in &raw.exclude {
        let pairs = to_pairs(ex, "exclude")?;
        cells.retain(|c| !pairs.iter().all(|p| c.contains(p)));
    }
    for inc in &raw.include {
        let pairs = to_pairs(inc, "include")?;
        // A full cell: every axis must be given.
        if pairs.len() != axis_values.len() {
            return Err(pos.whole("include must give a value for every axis".into()));
        }
        let cell: Vec<(String, String)> = axis_values
            .iter()
            .map(|(a, _)| {
                pairs
                    .iter()
                    .find(|(k, _)| k == a)
                    .cloned()
                    .expect("checked")
            })
            .collect();
        if !cells.contains(&cell) {
            cells.push(cell);
        }
    }
    if cells.is_empty() {
        return Err(pos.whole("every cell is excluded: nothing to run".into()));
    }
    Ok(cells)
}

/// A duration as `measure` reads it: the short form when it is exact.
fn duration_arg(ns: u64) -> String {
    let short = rtshield_vocab::format_duration_ns(ns);
    match parse_duration_ns(&short, Some("s")) {
        Ok(back) if back == ns => short,
        _ => format!("{ns}ns"),
    }
}

fn names() -> String {
    SETTINGS
        .iter()
        .map(|(s, _)| *s)
        .collect::<Vec<_>>()
        .join(", ")
}

/// 64-bit FNV-1a of the text, hex.
fn fingerprint(text: &str) -> String {
    let mut h: u64 = 0xcbf29ce484222325;
    for b in text.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    format!("{h:016x}")
}

impl Campaign {
    /// The declared axes and their values (after exclude/include), in the
    /// file's order: what the report keeps apart.
    pub fn axes(&self) -> Vec<(String, Vec<String>)> {
        let mut out: Vec<(String, Vec<String>)> = Vec::new();
        for cell in &self.cells {
            for (k, v) in &cell.values {
                // As the runs' tags hold them: a `cmd:` load's password
                // masked (the summary names the axes' values).
                let v = &rtshield_text::secret::redact(v).into_owned();
                match out.iter_mut().find(|(a, _)| a == k) {
                    Some((_, vals)) if !vals.contains(v) => vals.push(v.clone()),
                    Some(_) => {}
                    None => out.push((k.clone(), vec![v.clone()])),
                }
            }
        }
        out
    }

    /// The runs in the order they are made.
    pub fn steps(&self) -> Vec<Step> {
        let mut out = Vec::new();
        match self.order {
            Order::Interleaved => {
                for r in 1..=self.repeat {
                    for c in 0..self.cells.len() {
                        out.push(Step { cell: c, repeat: r });
                    }
                }
            }
            Order::Sequential => {
                for c in 0..self.cells.len() {
                    for r in 1..=self.repeat {
                        out.push(Step { cell: c, repeat: r });
                    }
                }
            }
        }
        out
    }

    /// Measuring time of the whole campaign, ns (checked: the ranges keep
    /// it far below u64::MAX, but say so rather than wrap).
    pub fn total_ns(&self) -> u64 {
        self.cells
            .iter()
            .try_fold(0u64, |acc, c| {
                self.run_ns(c)
                    .checked_mul(self.repeat)
                    .and_then(|n| acc.checked_add(n))
            })
            .unwrap_or(u64::MAX)
    }

    /// Measuring time of one run of `cell`, ns: the duration, or with
    /// `samples` only, samples × the cell's period (measure's 1 ms default).
    pub fn run_ns(&self, cell: &Cell) -> u64 {
        match (self.duration_ns, self.samples) {
            (Some(d), _) => d,
            (None, Some(n)) => {
                let period = self
                    .settings(cell)
                    .iter()
                    .find(|(k, _)| k == "period")
                    .and_then(|(_, v)| parse_duration_ns(v, Some("us")).ok())
                    .unwrap_or(1_000_000);
                n.saturating_mul(period)
            }
            (None, None) => 0,
        }
    }

    /// The measurement settings of a cell: `[measure]`'s, then the cell's
    /// own, which win (key, value as written).
    pub fn settings(&self, cell: &Cell) -> Vec<(String, String)> {
        let mut settings: Vec<(String, String)> = self.measure.clone();
        for (k, v) in &cell.values {
            if SETTINGS.iter().any(|(s, _)| s == k) {
                settings.retain(|(a, _)| a != k);
                settings.push((k.clone(), v.clone()));
            }
        }
        settings
    }

    /// The `rtshield measure` options equivalent to a cell's request (see
    /// [`Campaign::request`]), as `--dry-run` shows them and the results
    /// record them.
    pub fn measure_args(&self, cell: &Cell) -> Vec<String> {
        let mut args = vec!["--cpus".to_string(), self.cpus.clone()];
        if let Some(d) = self.duration_ns {
            args.extend(["--duration".into(), duration_arg(d)]);
        }
        if let Some(n) = self.samples {
            args.extend(["--samples".into(), n.to_string()]);
        }
        for (k, v) in self.settings(cell) {
            match k.as_str() {
                // A switch: no value.
                "split" if v == "true" => args.push(option_of(&k).into()),
                "split" => {}
                _ => {
                    args.push(option_of(&k).into());
                    args.push(v);
                }
            }
        }
        if let Some(load) = cell.builtin_load() {
            args.push("--load".into());
            args.push(load.into());
            if let Some(lc) = &self.load_cpus {
                args.push("--load-cpus".into());
                args.push(lc.clone());
            }
        }
        args
    }
}

/// The `rtshield measure` option of a setting.
pub(crate) fn option_of(key: &str) -> &'static str {
    SETTINGS
        .iter()
        .find(|(s, _)| *s == key)
        .map(|(_, o)| *o)
        .expect("settings are checked when parsed")
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = r#"name = "isolation"
cpus = "1"
duration = "2s"
repeat = 2
[measure]
period = "200us"
priority = 99
[axes]
load = ["idle", "hell"]
isolation = ["none", "partition"]
[partition]
parent = "rtshield-campaign"
with = ["irq"]
"#;

    #[test]
    fn matrix_in_file_order_and_interleaved_steps() {
        let c = parse(FILE, "c.toml").unwrap();
        let ids: Vec<&str> = c.cells.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "load=idle,isolation=none",
                "load=idle,isolation=partition",
                "load=hell,isolation=none",
                "load=hell,isolation=partition"
            ]
        );
        let steps: Vec<(usize, u64)> = c.steps().iter().map(|s| (s.cell, s.repeat)).collect();
        assert_eq!(
            steps,
            [
                (0, 1),
                (1, 1),
                (2, 1),
                (3, 1),
                (0, 2),
                (1, 2),
                (2, 2),
                (3, 2)
            ]
        );
        assert_eq!(c.total_ns(), 8 * 2_000_000_000);
        assert!(c.pool.is_empty() && c.samples.is_none());
        assert_eq!(c.partition.with, ["irq"]);
        let a = c.measure_args(&c.cells[2]);
        assert_eq!(
            a,
            [
                "--cpus",
                "1",
                "--duration",
                "2s",
                "--period",
                "200us",
                "--prio",
                "99",
                "--load",
                "hell"
            ]
        );
    }

    #[test]
    fn a_net_peer_load_is_an_axis_value_with_measures_checks() {
        // The torture article's ping -f, from this side (192.0.2.0/24 is a
        // documentation network: nothing is sent by parsing).
        let t = FILE.replace(
            "load = [\"idle\", \"hell\"]",
            "load = [\"idle\", \"net:peer=192.0.2.10\"]",
        );
        let c = parse(&t, "c.toml").unwrap();
        let cell = c.cells.iter().find(|c| c.builtin_load().is_some()).unwrap();
        let a = c.measure_args(cell);
        assert!(
            a.ends_with(&["--load".to_string(), "net:peer=192.0.2.10".to_string()]),
            "{a:?}"
        );
        let bad = FILE.replace(
            "load = [\"idle\", \"hell\"]",
            "load = [\"idle\", \"net:peer=127.0.0.1\"]",
        );
        let e = parse(&bad, "c.toml").unwrap_err().to_string();
        assert!(
            e.starts_with("c.toml:9:17:") && e.contains("not a single remote peer"),
            "{e}"
        );
    }

    #[test]
    fn exclude_include_and_sequential() {
        let t = FILE.to_string()
            + "[[exclude]]\nisolation = \"partition\"\n[[include]]\nload = \"idle\"\nisolation = \"partition\"\n";
        let t = t.replace("repeat = 2", "repeat = 2\norder = \"sequential\"");
        let c = parse(&t, "c.toml").unwrap();
        let ids: Vec<&str> = c.cells.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "load=idle,isolation=none",
                "load=hell,isolation=none",
                "load=idle,isolation=partition"
            ]
        );
        let steps: Vec<(usize, u64)> = c.steps().iter().map(|s| (s.cell, s.repeat)).collect();
        assert_eq!(steps[..3], [(0, 1), (0, 2), (1, 1)]);
    }

    /// `samples` (the partitioning article's `-l1000000`) instead of or
    /// with `duration`; `pool` names declared axes only, checked at parse
    /// time with the value's line and column.
    #[test]
    fn samples_and_pool_are_checked_where_written() {
        let t = FILE.replace("duration = \"2s\"", "samples = 1000") + "";
        let t = t.replace("repeat = 2", "repeat = 2\npool = [\"period\"]");
        let t = t
            .replace("priority = 99", "priority = 99\n[axes.x]")
            .replace("[axes.x]\n", "");
        let t = t.replace(
            "load = [\"idle\", \"hell\"]",
            "load = [\"idle\", \"hell\"]\nperiod = [\"300us\", \"500us\"]",
        );
        let c = parse(&t, "c.toml").unwrap();
        assert_eq!((c.duration_ns, c.samples), (None, Some(1000)));
        assert_eq!(c.pool, ["period"]);
        // 8 cells x 2 repeats x 1000 samples at 300 or 500 us.
        assert_eq!(c.total_ns(), 2 * 1000 * (4 * 300_000 + 4 * 500_000));
        let a = c.measure_args(&c.cells[0]);
        assert_eq!(a[..4], ["--cpus", "1", "--samples", "1000"]);
        let cases: &[(&str, &str, &str)] = &[
            (
                "pool = [\"period\"]",
                "pool = [\"priority\"]",
                "c.toml:5:9: pool `priority` is not a declared axis (expected one of: period, kernel)",
            ),
            (
                "pool = [\"period\"]",
                "pool = [\"period\", \"load\"]",
                "c.toml:5:19: pool `load`: isolation and load",
            ),
            ("samples = 1000", "samples = 0", "c.toml:3:11: samples 0 out of range"),
            ("samples = 1000", "", "c.toml:1:1: give `duration`"),
        ];
        for (from, to, want) in cases {
            let e = parse(&t.replace(from, to), "c.toml")
                .unwrap_err()
                .to_string();
            assert!(e.contains(want), "{to}: got {e}");
        }
        // The kernel can be pooled by name too.
        let k = t.replace("pool = [\"period\"]", "pool = [\"kernel\"]");
        assert_eq!(parse(&k, "c.toml").unwrap().pool, ["kernel"]);
    }

    /// A bare number in `duration` is seconds (as `measure --duration 10`),
    /// integer or float, with the same range and FILE:LINE:COL refusals as
    /// a string; in `period` and `histo_size` it stays µs (measure's unit).
    #[test]
    fn a_bare_duration_is_seconds() {
        let with = |v: &str| FILE.replace("duration = \"2s\"", &format!("duration = {v}"));
        assert_eq!(
            parse(&with("10"), "c.toml").unwrap().duration_ns,
            Some(10_000_000_000)
        );
        assert_eq!(
            parse(&with("1.5"), "c.toml").unwrap().duration_ns,
            Some(1_500_000_000)
        );
        assert_eq!(
            parse(&with("604800"), "c.toml").unwrap().duration_ns,
            Some(604_800_000_000_000)
        );
        for (v, want) in [
            ("0.5", "c.toml:3:12: duration 0.5 out of range 1 s .. 7 d"),
            ("604801", "c.toml:3:12: duration 604801 out of range 1 s .. 7 d"),
            ("1e300", "c.toml:3:12: duration 1000000000000000"),
            ("inf", "c.toml:3:12: duration inf out of range"),
            ("-5", "c.toml:3:12: duration -5 out of range 1 s .. 7 d (a duration is not negative)"),
            ("-0.0", "c.toml:3:12: duration -0 out of range"),
            ("nan", "c.toml:3:12: duration nan: not a number"),
            ("true", "c.toml:3:12: duration: expected a duration with its unit (\"20s\") or a number of seconds, not a TOML boolean"),
            ("[10]", "c.toml:3:12: duration: expected a duration with its unit (\"20s\") or a number of seconds, not a TOML array"),
            ("\"10 parsecs\"", "c.toml:3:12: duration: "),
        ] {
            let e = parse(&with(v), "c.toml").unwrap_err().to_string();
            assert!(e.contains(want), "duration = {v}: got {e}");
        }
        // period: a bare number is µs; a negative one is refused where it is.
        let p = |v: &str| FILE.replace("period = \"200us\"", &format!("period = {v}"));
        assert_eq!(
            parse(&p("200"), "c.toml").unwrap().measure[0],
            ("period".into(), "200".into())
        );
        let e = parse(&p("-200"), "c.toml").unwrap_err().to_string();
        assert!(
            e.contains("c.toml:6:10: period `-200`: a duration is not negative"),
            "{e}"
        );
        let e = parse(&p("true"), "c.toml").unwrap_err().to_string();
        assert!(
            e.contains("c.toml:6:10: period: invalid duration 'true'"),
            "{e}"
        );
        // max_latency needs its unit, as measure's --max-latency.
        let m = FILE.replace("priority = 99", "priority = 99\nmax_latency = 100");
        let e = parse(&m, "c.toml").unwrap_err().to_string();
        assert!(
            e.contains("c.toml:8:15: max_latency: ") && e.contains("missing unit"),
            "{e}"
        );
    }

    #[test]
    fn errors_name_line_and_column() {
        let cases: &[(&str, &str, &str)] = &[
            (
                "isolation = [\"none\", \"partition\"]",
                "isolation = [\"none\", \"cset\"]",
                "c.toml:10:22: isolation `cset`",
            ),
            (
                "priority = 99",
                "priority = 100",
                "c.toml:7:12: priority 100 out of range",
            ),
            (
                "priority = 99",
                "prio = 99",
                "c.toml:7:8: unknown measurement setting `prio`",
            ),
            (
                "repeat = 2",
                "repeat = 2\ncolour = 1",
                "c.toml:5:1: unknown field `colour`",
            ),
            (
                "load = [\"idle\", \"hell\"]",
                "load = [\"idle\", \"doom\"]",
                "c.toml:9:17: unknown load `doom`",
            ),
            (
                "duration = \"2s\"",
                "duration = \"0.5s\"",
                "c.toml:3:12: duration `0.5s` out of range",
            ),
            (
                "repeat = 2",
                "repeat = 0",
                "c.toml:4:10: repeat 0 out of range",
            ),
            (
                "name = \"isolation\"",
                "name = \"a/b\"",
                "c.toml:1:8: name `a/b`",
            ),
            ("cpus = \"1\"", "cpus = \"x\"", "c.toml:2:8: cpus `x`"),
            (
                "repeat = 2",
                "repeat = 2\norder = \"random\"",
                "c.toml:5:9: order `random`",
            ),
        ];
        for (from, to, want) in cases {
            let t = FILE.replace(from, to);
            let e = parse(&t, "c.toml").unwrap_err().to_string();
            assert!(e.contains(want), "{to}: got {e}");
        }
    }
}
