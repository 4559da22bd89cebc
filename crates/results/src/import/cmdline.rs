//! What the command line recorded in a cyclictest `--json` file says
//! about the run: cyclictest's own options (rt-tests 2.x rules, defaults
//! where an option is absent), or rtshield's when rtshield wrote the file
//! (`measure --json-format cyclictest`, `export --format cyclictest-json`).
//! A setting the command line does not fix is unknown.

use rtshield_vocab::parse_duration_ns;
use rtshield_vocab::Mode;
use rtshield_vocab::Policy;

/// What the run was, per thread and as a whole, as far as the command
/// line says.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct RunArgs {
    /// Policy, priority and period of thread `i` (a function of the
    /// thread's position: cyclictest spreads periods and priorities).
    threads: ThreadRule,
    /// `nanosleep`, `posix-timer`, `interval`, `interval-posix`.
    pub mode: Option<String>,
    /// mlockall in force.
    pub memlock: Option<bool>,
    /// Samples beyond this many buckets are the histogram's overflow.
    pub histogram_buckets: Option<u64>,
    /// Whether the run kept a histogram at all.
    pub has_histogram: Option<bool>,
    /// `-D` / `--duration`, ns.
    pub duration_ns: Option<u64>,
    /// `-l` / `--samples`.
    pub loops: Option<u64>,
    /// `-a` / `--cpus`: every thread's CPU when it is one CPU.
    pub single_cpu: Option<u32>,
    /// The affinity as written (`-a 1-3`), for the `affinity` tag.
    pub affinity: Option<String>,
    /// Something the reader must say: rtshield's command line gives the
    /// policy asked for, not a fallback.
    pub note: Option<String>,
}

/// How policy, priority and period depend on the thread's position.
#[derive(Debug, Clone, Default, PartialEq)]
struct ThreadRule {
    policy: Option<Policy>,
    /// First thread's priority.
    priority: Option<i32>,
    /// `--priospread`: each next thread one lower.
    priospread: bool,
    /// First thread's period, ns.
    period_ns: Option<u64>,
    /// Each next thread's period this much longer, ns.
    distance_ns: u64,
}

/// What thread `i` ran with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ThreadArgs {
    pub(crate) policy: Option<Policy>,
    pub(crate) priority: Option<i32>,
    pub(crate) period_ns: Option<u64>,
}

impl RunArgs {
    /// Read `argv` (the file's `cmdline:`, split at spaces): rtshield's
    /// options when `by_rtshield` or the command line is rtshield's
    /// ([`is_rtshield`]), else cyclictest's. An empty command line says
    /// nothing.
    pub(crate) fn parse(argv: &[String], by_rtshield: bool) -> RunArgs {
        if argv.is_empty() {
            RunArgs::default()
        } else if by_rtshield || is_rtshield(argv) {
            rtshield(argv)
        } else {
            cyclictest(argv)
        }
    }

    /// Thread `i`'s policy, priority and period.
    pub(crate) fn thread(&self, i: usize) -> ThreadArgs {
        let r = &self.threads;
        let i = i as i64;
        let priority = r.priority.map(|p| {
            if r.priospread {
                (p as i64 - i).max(0) as i32
            } else {
                p
            }
        });
        // cyclictest: a real-time policy needs a priority above 0, else
        // the thread runs SCHED_OTHER (priority 0).
        let (policy, priority) = match (r.policy, priority) {
            (Some(p), Some(n)) if p.is_rt() && n > 0 => (Some(p), Some(n)),
            (Some(p), Some(_)) if p.is_rt() => (Some(Policy::Other), Some(0)),
            (Some(p), _) if !p.is_rt() => (Some(p), Some(0)),
            (p, n) => (p, n),
        };
        ThreadArgs {
            policy,
            priority,
            // Saturating: `-i`/`-d` are the file's numbers (F15: `-i
            // 18446744073709551615` panicked); a period past the range is
            // refused by the range check, naming the thread.
            period_ns: r
                .period_ns
                .map(|p| p.saturating_add(r.distance_ns.saturating_mul(i as u64))),
        }
    }
}

/// One option of a getopt-style command line: its name (`p`,
/// `priority`) and value (attached, or the next word when it takes one).
struct Opt {
    name: String,
    value: Option<String>,
}

/// Split `argv[1..]` into options, getopt-style: `-p98`, `-p 98`, `-mq`
/// (bundled flags), `--priority=98`, `--priority 98`. `takes(name)`: the
/// option takes a value (required, or optional when the next word is a
/// number: cyclictest's `-a`, `-t`).
fn options(argv: &[String], takes: impl Fn(&str) -> Takes) -> Vec<Opt> {
    let mut out = Vec::new();
    let mut i = 1;
    while i < argv.len() {
        let a = &argv[i];
        i += 1;
        let numeric =
            |w: Option<&String>| w.is_some_and(|w| w.starts_with(|c: char| c.is_ascii_digit()));
        if let Some(long) = a.strip_prefix("--") {
            let (name, attached) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (long, None),
            };
            let value = match (attached, takes(name)) {
                (Some(v), _) => Some(v),
                (None, Takes::Value) => argv.get(i).inspect(|_| i += 1).cloned(),
                (None, Takes::Optional) if numeric(argv.get(i)) => {
                    argv.get(i).inspect(|_| i += 1).cloned()
                }
                _ => None,
            };
            out.push(Opt {
                name: name.to_string(),
                value,
            });
        } else if let Some(flags) = a.strip_prefix('-').filter(|f| !f.is_empty()) {
            for (k, c) in flags.char_indices() {
                let name = c.to_string();
                let rest = &flags[k + c.len_utf8()..];
                match takes(&name) {
                    Takes::No => out.push(Opt { name, value: None }),
                    t => {
                        let value = if !rest.is_empty() {
                            Some(rest.trim_start_matches('=').to_string())
                        } else if t == Takes::Value || numeric(argv.get(i)) {
                            argv.get(i).inspect(|_| i += 1).cloned()
                        } else {
                            None
                        };
                        out.push(Opt { name, value });
                        break;
                    }
                }
            }
        }
    }
    out
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Takes {
    No,
    Value,
    Optional,
}

/// cyclictest 2.x (cyclictest.c): `-p N` sets the priority and makes the
/// policy SCHED_FIFO unless fifo or rr was chosen before; `--policy=NAME`;
/// `--priospread`; `-i N` the first thread's interval in µs (default
/// 1000), each next thread `-d N` µs longer (default 500) unless `-h`
/// keeps them equal; `-h`/`-H N` a histogram of N µs; `-m`; `-x` POSIX
/// timers; `-r` relative sleeps (no rtshield mode matches: unknown).
fn cyclictest(argv: &[String]) -> RunArgs {
    let takes = |n: &str| match n {
        "a" | "affinity" | "t" | "threads" => Takes::Optional,
        "A" | "aligned" | "b" | "breaktrace" | "c" | "clock" | "d" | "distance" | "D"
        | "duration" | "F" | "fifo" | "h" | "histogram" | "H" | "histofall" | "histfile" | "i"
        | "interval" | "json" | "latency" | "l" | "loops" | "mainaffinity" | "o" | "oscope"
        | "p" | "priority" | "policy" | "spike" | "spike-nodes" => Takes::Value,
        _ => Takes::No,
    };
    let us = |v: &Option<String>| v.as_deref().and_then(|v| v.trim().parse::<u64>().ok());
    let mut a = RunArgs {
        mode: Some(Mode::Nanosleep.name().to_string()),
        memlock: Some(false),
        has_histogram: Some(false),
        threads: ThreadRule {
            policy: Some(Policy::Other),
            priority: Some(0),
            period_ns: Some(1_000_000),
            distance_ns: 500_000,
            ..ThreadRule::default()
        },
        ..RunArgs::default()
    };
    let mut hist = false;
    for o in options(argv, takes) {
        let t = &mut a.threads;
        match o.name.as_str() {
            "p" | "priority" => {
                t.priority = us(&o.value).and_then(|p| i32::try_from(p).ok());
                if !t.policy.is_some_and(Policy::is_rt) {
                    t.policy = Some(Policy::Fifo);
                }
            }
            // cyclictest runs every policy but fifo and rr as SCHED_OTHER.
            "policy" => {
                t.policy = o.value.as_deref().and_then(Policy::parse).map(|p| {
                    if p.is_rt() {
                        p
                    } else {
                        Policy::Other
                    }
                })
            }
            "priospread" => t.priospread = true,
            "i" | "interval" => t.period_ns = us(&o.value).map(|v| v.saturating_mul(1000)),
            "d" | "distance" => t.distance_ns = us(&o.value).map_or(0, |v| v.saturating_mul(1000)),
            "h" | "histogram" | "H" | "histofall" => {
                hist = true;
                a.histogram_buckets = us(&o.value);
            }
            "m" | "mlockall" => a.memlock = Some(true),
            "x" | "posix_timers" => a.mode = Some(Mode::PosixTimer.name().to_string()),
            "r" | "relative" => a.mode = None,
            "D" | "duration" => a.duration_ns = o.value.as_deref().and_then(cyclictest_duration),
            "l" | "loops" => a.loops = us(&o.value).filter(|l| *l > 0),
            "a" | "affinity" => a.affinity = Some(o.value.unwrap_or_else(|| "all".into())),
            _ => {}
        }
    }
    a.has_histogram = Some(hist);
    if hist {
        // -h: the same interval (and priority) on every thread.
        a.threads.distance_ns = 0;
    }
    a.single_cpu = a.affinity.as_deref().and_then(|a| a.parse().ok());
    a
}

/// `-D 5`, `-D 10m`, `-D 2h`, `-D 1d` (s by default), ns.
fn cyclictest_duration(d: &str) -> Option<u64> {
    let (n, mult) = match d.char_indices().last()? {
        (i, 'm') => (&d[..i], 60),
        (i, 'h') => (&d[..i], 3600),
        (i, 'd') => (&d[..i], 86_400),
        (i, 's') => (&d[..i], 1),
        _ => (d, 1),
    };
    n.parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mult * 1_000_000_000))
}

/// Whether `argv` is an rtshield command line: its program is named
/// rtshield (`rtshield`, `/usr/bin/rtshield`, `rtshield-0.1.0-aarch64`),
/// or its first argument is one of the subcommands that measure. The
/// second rule finds a renamed or copied binary (`/opt/x/rts measure
/// ...`): cyclictest takes no subcommand, its first argument is an
/// option. (Since its `rt_test_version:` became rt-tests' own number,
/// the command line is what tells rtshield's files apart.)
fn is_rtshield(argv: &[String]) -> bool {
    let prog = argv
        .first()
        .map(|a| a.rsplit('/').next().unwrap_or(a))
        .unwrap_or_default();
    prog.starts_with("rtshield")
        || matches!(
            argv.get(1).map(String::as_str),
            Some("measure" | "run" | "demo" | "campaign" | "noise")
        )
}

/// `rtshield measure …` (its defaults: fifo 98, a 1 ms period,
/// nanosleep, a 1 ms histogram at µs resolution). The policy and
/// priority are those asked for: the file has no field for a fallback to
/// SCHED_OTHER (results.json has). Another subcommand (`rtshield run
/// CONFIG`) says nothing here.
fn rtshield(argv: &[String]) -> RunArgs {
    if argv.get(1).map(String::as_str) != Some("measure") {
        return RunArgs::default();
    }
    let takes = |n: &str| match n {
        "q" | "quiet" | "no-memlock" | "no-dma-latency" | "partition" | "force-unsafe-dir"
        | "trace-stop" | "split" => Takes::No,
        _ => Takes::Value,
    };
    let dur = |v: &Option<String>| v.as_deref().and_then(|v| parse_duration_ns(v, None).ok());
    let (mut policy, mut prio, mut period) = (Policy::Fifo, 98, Some(1_000_000));
    let (mut mode, mut timer) = (Some(Mode::Nanosleep), None);
    let (mut histo, mut res) = (None, Some(1000u64));
    let mut a = RunArgs {
        has_histogram: Some(true),
        ..RunArgs::default()
    };
    for o in options(argv.get(1..).unwrap_or_default(), takes) {
        let v = o.value.as_deref();
        match o.name.as_str() {
            "policy" => policy = v.and_then(Policy::parse).unwrap_or(policy),
            "prio" | "priority" => prio = v.and_then(|v| v.parse().ok()).unwrap_or(prio),
            "period" => period = dur(&o.value),
            "mode" => mode = v.and_then(Mode::parse),
            "timer" => timer = v.map(str::to_string),
            "histo-size" => histo = dur(&o.value),
            "resolution" => {
                res = match v {
                    Some("us") => Some(1000),
                    Some("ns") => Some(1),
                    _ => None,
                }
            }
            "no-memlock" => a.memlock = Some(false),
            "duration" => a.duration_ns = dur(&o.value),
            "samples" => a.loops = v.and_then(|v| v.parse().ok()),
            "cpus" | "cpu" => a.affinity = o.value.clone(),
            _ => {}
        }
    }
    let mode = match (mode, timer.as_deref()) {
        (m, None) => m,
        (Some(Mode::Interval | Mode::IntervalPosix), Some("posix" | "posix-timer")) => {
            Some(Mode::IntervalPosix)
        }
        (Some(Mode::Interval | Mode::IntervalPosix), Some("nanosleep")) => Some(Mode::Interval),
        (Some(_), Some("posix" | "posix-timer")) => Some(Mode::PosixTimer),
        (Some(_), Some("nanosleep")) => Some(Mode::Nanosleep),
        _ => None,
    };
    // The histogram's size as `measure` chooses it (crates/run's request).
    let size = match (histo, mode, period) {
        (Some(h), _, _) => Some(h),
        (None, Some(m), Some(p)) if m.is_interval() => Some(p.saturating_mul(2).max(1_000_000)),
        (None, Some(_), _) => Some(1_000_000),
        _ => None,
    };
    a.histogram_buckets = size.zip(res).map(|(s, r)| (s / r.max(1)).saturating_add(1));
    a.mode = mode.map(|m| m.name().to_string());
    // Without --no-memlock, mlockall was asked for: whether it was
    // refused is in results.json only (unknown here).
    a.threads = ThreadRule {
        policy: Some(policy),
        priority: Some(if policy.is_rt() { prio } else { 0 }),
        priospread: false,
        period_ns: period,
        distance_ns: 0,
    };
    a.single_cpu = a.affinity.as_deref().and_then(|c| c.parse().ok());
    a.note = Some(
        "rtshield's cyclictest JSON: policy, priority, period and mode read from its command line (what was asked; results.json records a fallback to SCHED_OTHER)"
            .into(),
    );
    a
}

/// Seconds since the epoch of cyclictest's `start_time`/`end_time`
/// (`Tue, 24 Nov 2026 21:07:05 +0000`, strftime `%a, %d %b %Y %T %z`).
pub(crate) fn cyclictest_time(s: &str) -> Option<i64> {
    let mut w = s.split_whitespace();
    let _weekday = w.next()?;
    let day: i64 = w.next()?.parse().ok()?;
    let month = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ]
    .iter()
    .position(|m| Some(*m) == w.clone().next())? as i64
        + 1;
    w.next();
    let year: i64 = w.next()?.parse().ok()?;
    let mut hms = w.next()?.split(':').map(|x| x.parse::<i64>().ok());
    let (h, mi, sec) = (hms.next()??, hms.next()??, hms.next()??);
    let tz = w.next()?;
    let (sign, hh, mm) = match tz.as_bytes() {
        [s @ (b'+' | b'-'), ..] if tz.len() == 5 => (
            if *s == b'-' { -1 } else { 1 },
            tz[1..3].parse::<i64>().ok()?,
            tz[3..5].parse::<i64>().ok()?,
        ),
        _ => return None,
    };
    // Every field in its civil range (a year beyond 9999 or a negative
    // hour made the arithmetic below overflow: F15's class).
    if !(1..=31).contains(&day)
        || !(0..=9999).contains(&year)
        || !(0..=23).contains(&h)
        || !(0..=59).contains(&mi)
        || !(0..=60).contains(&sec)
    {
        return None;
    }
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400 + h * 3600 + mi * 60 + sec - sign * (hh * 3600 + mm * 60))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn cyclictest_rules() {
        let a = RunArgs::parse(&argv("cyclictest -q -m -p 98 -i 200 -D 5 -a 1 -t 1"), false);
        let t = a.thread(0);
        assert_eq!(
            (t.policy, t.priority, t.period_ns),
            (Some(Policy::Fifo), Some(98), Some(200_000))
        );
        assert_eq!(
            (a.memlock, a.duration_ns),
            (Some(true), Some(5_000_000_000))
        );
        assert_eq!((a.single_cpu, a.has_histogram), (Some(1), Some(false)));
        // Without -h each next thread's interval is -d (500 us) longer.
        assert_eq!(a.thread(2).period_ns, Some(1_200_000));
        // No -p: SCHED_OTHER; bundled flags and attached values.
        let b = RunArgs::parse(&argv("cyclictest -qmh400 -i500"), false);
        let t = b.thread(1);
        assert_eq!(
            (t.policy, t.priority, t.period_ns),
            (Some(Policy::Other), Some(0), Some(500_000))
        );
        assert_eq!((b.histogram_buckets, b.memlock), (Some(400), Some(true)));
        // --policy before -p keeps rr; --priospread lowers each next thread.
        let c = RunArgs::parse(
            &argv("cyclictest --policy=rr -p 80 --priospread -t 3"),
            false,
        );
        assert_eq!(c.thread(2).policy, Some(Policy::Rr));
        assert_eq!(c.thread(2).priority, Some(78));
        // -p then --policy=batch: cyclictest runs it as SCHED_OTHER.
        let d = RunArgs::parse(&argv("cyclictest -p 80 --policy=batch"), false);
        assert_eq!(
            (d.thread(0).policy, d.thread(0).priority),
            (Some(Policy::Other), Some(0))
        );
        assert_eq!(RunArgs::parse(&argv("cyclictest -r"), false).mode, None);
        assert_eq!(RunArgs::parse(&[], false), RunArgs::default());
    }

    #[test]
    fn rtshield_command_lines() {
        let a = RunArgs::parse(
            &argv("rtshield measure --cpus 1 --period 200us --duration 5s -q --out a/res --label a \"quoted\", label"),
            true,
        );
        let t = a.thread(0);
        assert_eq!(
            (t.policy, t.priority, t.period_ns),
            (Some(Policy::Fifo), Some(98), Some(200_000))
        );
        assert_eq!(a.mode.as_deref(), Some("nanosleep"));
        assert_eq!(a.histogram_buckets, Some(1001));
        assert_eq!(
            (a.single_cpu, a.duration_ns),
            (Some(1), Some(5_000_000_000))
        );
        let b = RunArgs::parse(
            &argv("/usr/bin/rtshield measure --policy=other --prio 5 --mode interval --timer posix --histo-size 50us --resolution ns"),
            false,
        );
        let t = b.thread(3);
        assert_eq!(
            (t.policy, t.priority, t.period_ns),
            (Some(Policy::Other), Some(0), Some(1_000_000))
        );
        assert_eq!(b.mode.as_deref(), Some("interval-posix"));
        assert_eq!(b.histogram_buckets, Some(50_001));
        // A renamed binary is still rtshield (the consumer check's
        // `/tmp/rts-main measure ...` read back as cyclictest's OTHER 0,
        // 1000 us: issue 22 #1 again); cyclictest's own line is not.
        let r = RunArgs::parse(
            &argv("/tmp/rts-main measure --cpus 1 --period 200us --duration 5s"),
            false,
        );
        let t = r.thread(0);
        assert_eq!(
            (t.policy, t.priority, t.period_ns),
            (Some(Policy::Fifo), Some(98), Some(200_000))
        );
        let cy = RunArgs::parse(&argv("/usr/bin/cyclictest -m -p 98 -i 200"), false);
        assert_eq!(cy.thread(0).period_ns, Some(200_000));
        assert_eq!(
            RunArgs::parse(&argv("cyclictest"), false)
                .thread(0)
                .period_ns,
            Some(1_000_000)
        );
        // Another subcommand says nothing.
        let c = RunArgs::parse(&argv("rtshield run cfg.cfg"), true);
        assert_eq!(c.thread(0).period_ns, None);
        assert_eq!(c.mode, None);
    }

    #[test]
    fn cyclictest_times() {
        let a = cyclictest_time("Tue, 24 Nov 2026 21:07:05 +0000").unwrap();
        let b = cyclictest_time("Tue, 24 Nov 2026 21:07:10 +0000").unwrap();
        assert_eq!(b - a, 5);
        // 1970-01-01T00:00:00Z, and a zone east of UTC.
        assert_eq!(cyclictest_time("Thu, 01 Jan 1970 00:00:00 +0000"), Some(0));
        assert_eq!(cyclictest_time("Thu, 01 Jan 1970 01:00:00 +0100"), Some(0));
        assert_eq!(
            cyclictest_time("Sun, 22 Nov 2026 06:09:19 +0000"),
            Some(1_795_327_759)
        );
        assert_eq!(cyclictest_time("yesterday"), None);
        assert_eq!(cyclictest_time("Tue, 24 Nov 2026 25:07:05 +0000"), None);
    }
}
