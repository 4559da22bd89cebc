//! Every configuration key: where it is allowed, its type, its default and
//! what it means. The README's reference table is generated from this list
//! (`rtshield run --keys`), so the two cannot drift apart.

/// Which stanza a key belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    /// The `main` stanza: the run as a whole, and defaults of the other stanzas.
    Main,
    /// A `timer_thread[N]` stanza: one measuring thread.
    Timer,
    /// A `program[N]` stanza: one load program or built-in load.
    Program,
}

impl Section {
    /// The stanza's name as written in a file (`timer_thread[N]` for any index).
    pub fn name(self) -> &'static str {
        match self {
            Section::Main => "main",
            Section::Timer => "timer_thread[N]",
            Section::Program => "program[N]",
        }
    }
}

/// One documented key.
#[derive(Debug, Clone, Copy)]
pub struct KeyDoc {
    /// The stanzas where the key is allowed.
    pub sections: &'static [Section],
    /// The key as written (`sched.policy`).
    pub key: &'static str,
    /// The value's form, as shown in error messages (`a duration like 2 s`).
    pub form: &'static str,
    /// The value used when the key is absent, in words.
    pub default: &'static str,
    /// What the key does, one or two sentences (the README's table).
    pub meaning: &'static str,
}

use Section::{Main as M, Program as P, Timer as T};

/// Every key the parser accepts, in the README's order: the parser, the
/// `rtshield run --keys` table and the manual all read this one list.
pub const KEYS: &[KeyDoc] = &[
    KeyDoc { sections: &[M, T, P], key: "cpu_affinity", form: "a CPU list like 0-6 or 1,3 (one CPU for a timer thread)", default: "inherited (all CPUs)", meaning: "CPUs the main thread, the measuring thread or the program runs on. Every CPU must be online on this machine." },
    KeyDoc { sections: &[M, T, P], key: "sched.policy", form: "OTHER, FIFO, RR, BATCH or IDLE", default: "OTHER (FIFO when only sched.priority is given)", meaning: "Scheduling policy. Built-in loads accept OTHER, BATCH and IDLE only (no busy loop at real-time priority)." },
    KeyDoc { sections: &[M, T, P], key: "sched.priority", form: "an integer 1..99 (FIFO/RR)", default: "0", meaning: "Real-time priority for FIFO/RR." },
    KeyDoc { sections: &[M, T, P], key: "cgroup", form: "rt or nrt", default: "none", meaning: "Run in the rt or nrt partition made by `rtshield partition create` (cgroup v2 or v1 cpuset)." },
    KeyDoc { sections: &[M], key: "mode", form: "nanosleep, posix-timer, interval or interval-posix", default: "nanosleep", meaning: "How measuring threads wait: absolute clock_nanosleep (cyclictest), a POSIX timer + signal (the torture article), the time between clock_nanosleep wake-ups (interval), or the time between the signals of a periodic POSIX timer (interval-posix, the torture article's method)." },
    KeyDoc { sections: &[M, T], key: "period", form: "a duration like 1 ms or 100 us (at least 1 us)", default: "1 ms", meaning: "Period of the measuring thread's timer. In main: the default of every timer thread." },
    KeyDoc { sections: &[M, T], key: "lifetime.duration", form: "a duration like 10 min", default: "until Ctrl-C", meaning: "How long to measure. The run lasts the longest of main's and the timer threads' values; `run --duration` overrides them all." },
    KeyDoc { sections: &[T], key: "lifetime.samples", form: "an integer 1..10^12", default: "unlimited", meaning: "Stop after this many samples per thread." },
    KeyDoc { sections: &[M, T], key: "stats.histo_size", form: "a duration like 200 us (a bare number is in µs)", default: "1 ms", meaning: "Largest latency kept in the histogram (one bucket per histo.resolution, at most 10 million buckets). Larger samples are counted as overflow and still enter min/max/avg and the percentiles." },
    KeyDoc { sections: &[M, T], key: "histo.resolution", form: "a duration like 1 us or 100 ns (a bare number is in ns)", default: "1 us", meaning: "Histogram bucket width." },
    KeyDoc { sections: &[T], key: "stats.filename", form: "a file name", default: "timer_threadNN.txt", meaning: "Name of this thread's systress text file, inside the output directory." },
    KeyDoc { sections: &[M], key: "stats.period", form: "a duration like 1500 ms (10 ms .. 1 h)", default: "1 s", meaning: "Display refresh and timeline.csv interval." },
    KeyDoc { sections: &[M], key: "stats.format", form: "txt, csv, json, cyclictest (several allowed)", default: "txt csv json cyclictest", meaning: "Result files to write in the output directory (results.json is always written: reports and checkpoints need it)." },
    KeyDoc { sections: &[M], key: "stats.cpu_load", form: "all, total, none or a CPU list", default: "none", meaning: "Per-CPU and total load (from /proc/stat) shown under the latency table and written to timeline.csv." },
    KeyDoc { sections: &[M], key: "stats.checkpoint", form: "a duration (at least 100 ms), or off", default: "1 min", meaning: "Write the results so far every interval (temp file + rename), at the next stats.period tick: a crash or kill -9 loses at most the larger of the two." },
    KeyDoc { sections: &[M], key: "stats.rotate", form: "a duration like 1 d, or off", default: "off", meaning: "Start new numbered result directories (DIR-1, DIR-2, ...) every interval, like the torture article's daily files." },
    KeyDoc { sections: &[M], key: "memlock", form: "nothing, on or off", default: "off", meaning: "mlockall() for the run (no page faults in the measuring threads)." },
    KeyDoc { sections: &[M], key: "cpu_dma_latency", form: "nothing, on or off", default: "off", meaning: "Hold /dev/cpu_dma_latency at 0 for the run (no deep C-states)." },
    KeyDoc { sections: &[M], key: "dbg_level", form: "an integer 0..9", default: "0", meaning: "Verbosity: 1 also prints every program exit (failures to start and STOP are always printed, and so are load phase changes when load.cycle is set)." },
    KeyDoc { sections: &[M, P], key: "start.delay", form: "a duration (at most 1 day)", default: "0", meaning: "In main: let the loads run this long before measuring. In a program: wait this long before starting it." },
    KeyDoc { sections: &[M, P], key: "load.cycle", form: "two durations ON OFF like 5 min 30 s (load first), or both phases named in their order like rest 60 s load 5 min (each 100 ms .. 1 day), or off", default: "off (always on)", meaning: "Alternate load and rest phases (the torture article): programs run ON, are stopped for OFF, and so on; the first phase starts with the measurement. In main: the default of every program. Phases are marked in timeline.csv." },
    KeyDoc { sections: &[M], key: "trace.on_latency", form: "a duration like 300 us (1 us..1 s)", default: "off", meaning: "Explain every wake-up later than this from kernel trace events (a private tracefs instance on the measured CPUs; root): spikes.json and spikes.txt in the output directory. See docs/trace.md." },
    KeyDoc { sections: &[M], key: "trace.stop", form: "nothing, on or off", default: "off", meaning: "With trace.on_latency: stop tracing and the run at the first such wake-up and keep the trace (trace.txt), like cyclictest -b." },
    KeyDoc { sections: &[M], key: "trace.split", form: "nothing, on or off", default: "off", meaning: "Split every wake-up into timer IRQ latency and thread latency from trace events: two more histograms per thread, next to the total, in every result file." },
    KeyDoc { sections: &[M], key: "trace.buffer_kb", form: "an integer 1..1048576", default: "sized from the period", meaning: "Per-CPU trace buffer in KiB (overwrite mode: the newest events are kept). Without the key: room for the busiest measured CPU's wake-ups at 256 B each over 1 s with trace.split, 250 ms without; at least 256, the buffers of all CPUs at most 1/32 of RAM (docs/trace.md). Each explained spike reads the whole buffer: larger costs more CPU per spike, smaller may lose the start of a long spike." },
    KeyDoc { sections: &[P], key: "cmdline", form: "a command line; \"...\" and '...' quote, no shell (use sh -c \"...\")", default: "(cmdline or load required)", meaning: "The program to run, in its own process group." },
    KeyDoc { sections: &[P], key: "load", form: "cpu, memory, io, syscall, fork, net, hell, timers or syncio; or net:peer=ADDR", default: "(cmdline or load required)", meaning: "A built-in load instead of a command: one worker per CPU of cpu_affinity (every CPU when unset). net:peer=ADDR floods that remote IPv4 host with ICMP echo requests (ping -f, root or CAP_NET_RAW; never loopback, broadcast or multicast), as measure --load does." },
    KeyDoc { sections: &[P], key: "load.size", form: "a size like 64M; timers/syncio: 1..1000", default: "memory 64M, io 16M, timers/syncio 150", meaning: "Bytes per worker for the memory and io loads; threads per worker for timers and syncio." },
    KeyDoc { sections: &[P], key: "load.workers", form: "an integer 1..64", default: "1", meaning: "Workers per CPU of a built-in load." },
    KeyDoc { sections: &[P], key: "output.out", form: "/dev/null, inherit, or a file name", default: "inherit", meaning: "Where the program's standard output goes (a file, relative to the current directory, is truncated at start and appended to by respawns)." },
    KeyDoc { sections: &[P], key: "output.err", form: "/dev/null, inherit, or a file name", default: "inherit", meaning: "Where the program's standard error goes." },
    KeyDoc { sections: &[P], key: "termination.ok", form: "RESPAWN, STOP or IGNORE", default: "IGNORE", meaning: "What to do when the program exits with status 0. RESPAWN restarts it (back-off 100 ms doubling to 10 s while it keeps ending within 1 s), STOP ends the run, IGNORE leaves it dead." },
    KeyDoc { sections: &[P], key: "termination.ko", form: "RESPAWN, STOP or IGNORE", default: "IGNORE", meaning: "Same, when it fails: non-zero status, killed by a signal, or cannot be started." },
];

/// The documentation of `key` if it is allowed in `section`.
pub(crate) fn lookup(section: Section, key: &str) -> Option<&'static KeyDoc> {
    KEYS.iter()
        .find(|k| k.key == key && k.sections.contains(&section))
}

/// Keys allowed in a section, for "unknown key" messages.
pub(crate) fn names_in(section: Section) -> String {
    KEYS.iter()
        .filter(|k| k.sections.contains(&section))
        .map(|k| k.key)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The reference table in Markdown (README).
pub fn markdown_table() -> String {
    let mut s =
        String::from("| key | stanzas | value | default | meaning |\n|---|---|---|---|---|\n");
    for k in KEYS {
        let secs = k
            .sections
            .iter()
            .map(|s| s.name())
            .collect::<Vec<_>>()
            .join(", ");
        s.push_str(&format!(
            "| `{}` | {} | {} | {} | {} |\n",
            k.key,
            secs,
            rtshield_text::markdown_cell(k.form),
            k.default,
            rtshield_text::markdown_cell(k.meaning)
        ));
    }
    s
}
