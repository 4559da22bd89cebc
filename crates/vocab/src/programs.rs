//! The vocabulary of supervised programs and built-in loads, shared by the
//! configuration parser (which names them) and the load crate (which runs
//! them), kept here so the parser does not depend on the runner.

use std::fmt;
use std::path::PathBuf;

/// Where a program's stdout or stderr goes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Output {
    /// rtshield's own stdout/stderr.
    #[default]
    Inherit,
    /// `/dev/null`.
    Null,
    /// A file, truncated when the run starts, appended to by respawns.
    File(PathBuf),
}

/// What to do when a program ends (`termination.ok` / `termination.ko`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Termination {
    /// Start it again, after a back-off when it keeps failing fast.
    Respawn,
    /// End the whole run.
    Stop,
    /// Leave it dead.
    #[default]
    Ignore,
}

impl Termination {
    /// `RESPAWN` (or `RESTART`), `STOP` (or `END`), `IGNORE` (or `NONE`);
    /// case-insensitive.
    pub fn parse(s: &str) -> Option<Termination> {
        Some(match s.trim().to_ascii_uppercase().as_str() {
            "RESPAWN" | "RESTART" => Termination::Respawn,
            "STOP" | "END" => Termination::Stop,
            "IGNORE" | "NONE" => Termination::Ignore,
            _ => return None,
        })
    }

    /// The name configuration files and reports use (`RESPAWN`).
    pub fn name(self) -> &'static str {
        match self {
            Termination::Respawn => "RESPAWN",
            Termination::Stop => "STOP",
            Termination::Ignore => "IGNORE",
        }
    }
}

/// A built-in load. Each runs as one or more worker processes
/// (`rtshield __load KIND`), one per CPU of its affinity, pinned there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Builtin {
    /// Busy arithmetic loop (always SCHED_OTHER).
    Cpu,
    /// Map, touch every page, unmap, again: page faults and memory bandwidth.
    Memory,
    /// Write + fsync files in a private temp dir (removed at the end).
    Io,
    /// The torture article's syscall mix: /proc/interrupts, /proc/stat, ps-like /proc
    /// walks, getpid storms.
    Syscall,
    /// fork/exec storm (`/bin/true`), one child at a time.
    Fork,
    /// UDP and TCP flood between two sockets on 127.0.0.1 (never elsewhere).
    Net,
    /// All of the above on every CPU, like Xenomai's `dohell`.
    Hell,
    /// The partitioning article's `stress-cpu`: threads (150 by default)
    /// looping on `usleep(1)`: a storm of timer expiries and wake-ups.
    Timers,
    /// The partitioning article's `stress-io`: threads (150 by default)
    /// each doing a small `O_SYNC` write then `usleep(1)`: disk interrupts.
    SyncIo,
}

/// Thread count of `timers` and `syncio` (their `size`): the range.
pub const LOAD_THREADS_MAX: u64 = 1000;

impl Builtin {
    /// Every built-in load, in documentation order.
    pub const ALL: &'static [Builtin] = &[
        Builtin::Cpu,
        Builtin::Memory,
        Builtin::Io,
        Builtin::Syscall,
        Builtin::Fork,
        Builtin::Net,
        Builtin::Hell,
        Builtin::Timers,
        Builtin::SyncIo,
    ];

    /// `cpu`, `memory` (or `mem`, `vm`), `io`, `syscall` (or `sys`), `fork`,
    /// `net`, `hell` (or `dohell`), `timers` and `syncio` (or the
    /// partitioning article's names `stress-cpu` and `stress-io`);
    /// case-insensitive.
    pub fn parse(s: &str) -> Option<Builtin> {
        Some(match s.trim().to_ascii_lowercase().as_str() {
            "cpu" => Builtin::Cpu,
            "memory" | "mem" | "vm" => Builtin::Memory,
            "io" => Builtin::Io,
            "syscall" | "sys" | "syscalls" => Builtin::Syscall,
            "fork" => Builtin::Fork,
            "net" | "network" => Builtin::Net,
            "hell" | "dohell" => Builtin::Hell,
            "timers" | "stress-cpu" => Builtin::Timers,
            "syncio" | "stress-io" => Builtin::SyncIo,
            _ => return None,
        })
    }

    /// The name `--load`, configuration files and the `load` tag use.
    pub fn name(self) -> &'static str {
        match self {
            Builtin::Cpu => "cpu",
            Builtin::Memory => "memory",
            Builtin::Io => "io",
            Builtin::Syscall => "syscall",
            Builtin::Fork => "fork",
            Builtin::Net => "net",
            Builtin::Hell => "hell",
            Builtin::Timers => "timers",
            Builtin::SyncIo => "syncio",
        }
    }

    /// One line for `--help` and the README.
    pub fn describe(self) -> &'static str {
        match self {
            Builtin::Cpu => "busy arithmetic loop",
            Builtin::Memory => "map, touch every page, unmap (size: bytes per worker, default 64M)",
            Builtin::Io => "write + fsync in a private temp dir, removed at the end (size: file size, default 16M)",
            Builtin::Syscall => "read /proc/interrupts, /proc/stat, walk /proc like ps, getpid storms",
            Builtin::Fork => "fork/exec /bin/true, one child at a time",
            Builtin::Net => "UDP + TCP flood between two sockets on 127.0.0.1",
            Builtin::Hell => "cpu + memory + io + syscall + fork + net on every CPU (dohell)",
            Builtin::Timers => "threads looping on usleep(1) (size: threads per worker, 1..1000, default 150)",
            Builtin::SyncIo => "threads doing a 512-byte O_SYNC write then usleep(1) in a private temp dir (size: threads per worker, 1..1000, default 150)",
        }
    }

    /// The kinds a worker process can run (everything but `hell`).
    pub fn expand(self) -> Vec<Builtin> {
        match self {
            // dohell's set: the article-specific thread storms are not in it.
            Builtin::Hell => vec![
                Builtin::Cpu,
                Builtin::Memory,
                Builtin::Io,
                Builtin::Syscall,
                Builtin::Fork,
                Builtin::Net,
            ],
            k => vec![k],
        }
    }

    /// Default `size` for loads that have one: bytes for `memory`/`io`,
    /// threads per worker for `timers`/`syncio` (the article's 150).
    pub fn default_size(self) -> Option<u64> {
        match self {
            Builtin::Memory | Builtin::Hell => Some(64 << 20),
            Builtin::Io => Some(16 << 20),
            Builtin::Timers | Builtin::SyncIo => Some(150),
            _ => None,
        }
    }

    /// Whether `size` counts threads (1..[`LOAD_THREADS_MAX`]) rather than bytes.
    pub fn size_is_threads(self) -> bool {
        matches!(self, Builtin::Timers | Builtin::SyncIo)
    }

    /// Whether a worker needs a private temp dir (`--dir`).
    pub fn needs_dir(self) -> bool {
        matches!(self, Builtin::Io | Builtin::SyncIo)
    }

    /// The list of names for error messages: `cpu, memory, io, ...`.
    pub fn names() -> String {
        Builtin::ALL
            .iter()
            .map(|b| b.name())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl fmt::Display for Builtin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Builtin {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Builtin::parse(s).ok_or_else(|| {
            format!(
                "unknown built-in load '{s}' (expected one of {})",
                Builtin::names()
            )
        })
    }
}

/// Parse a byte size: `4096`, `64K`, `64M`, `1G`, `1 GiB`, `512MB`.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: u64 = num
        .parse()
        .map_err(|_| format!("invalid size '{s}' (expected a number of bytes with an optional K, M or G suffix, e.g. 64M)"))?;
    let mult: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        u => {
            return Err(format!(
                "invalid size '{s}': unknown unit '{u}' (expected K, M or G)"
            ))
        }
    };
    n.checked_mul(mult)
        .ok_or_else(|| format!("invalid size '{s}': too large"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for b in Builtin::ALL {
            assert_eq!(Builtin::parse(b.name()), Some(*b));
            assert_eq!(b.name().parse::<Builtin>().unwrap(), *b);
        }
        assert_eq!(Builtin::parse("DOHELL"), Some(Builtin::Hell));
        let e = "tornado".parse::<Builtin>().unwrap_err();
        assert!(
            e.contains("cpu, memory, io, syscall, fork, net, hell, timers, syncio"),
            "{e}"
        );
    }

    #[test]
    fn hell_expands_to_every_worker_kind() {
        let k = Builtin::Hell.expand();
        assert_eq!(k.len(), 6);
        assert!(!k.contains(&Builtin::Hell));
        assert_eq!(Builtin::Cpu.expand(), vec![Builtin::Cpu]);
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4096").unwrap(), 4096);
        assert_eq!(parse_size("64M").unwrap(), 64 << 20);
        assert_eq!(parse_size("1 GiB").unwrap(), 1 << 30);
        assert_eq!(parse_size("2kb").unwrap(), 2048);
        assert!(parse_size("12 parsecs").is_err());
        assert!(parse_size("M").is_err());
        assert!(parse_size("99999999999999G").is_err());
    }
}
