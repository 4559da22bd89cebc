//! The effective settings, printed back in the configuration format with
//! every default filled in (what `rtshield run --check` shows). The output
//! is itself a valid configuration that means the same thing.

use crate::model::*;
use rtshield_vocab::format_duration_ns as dur;
use rtshield_vocab::{Output, Termination};
use std::fmt::Write;

fn sched_lines(out: &mut String, s: Option<Sched>) {
    let Some(s) = s else {
        return;
    };
    let _ = writeln!(out, "  sched.policy {}", s.policy.name().to_uppercase());
    if s.policy.is_rt() {
        let _ = writeln!(out, "  sched.priority {}", s.priority);
    }
}

fn output(o: &Output) -> String {
    match o {
        Output::Inherit => "inherit".into(),
        Output::Null => "/dev/null".into(),
        Output::File(p) => quote(&p.to_string_lossy()),
    }
}

fn quote(w: &str) -> String {
    if !w.is_empty() && !w.contains(|c: char| c.is_whitespace() || "\"'\\#".contains(c)) {
        return w.to_string();
    }
    let mut s = String::from("\"");
    for c in w.chars() {
        if matches!(c, '"' | '\\' | '$' | '`') {
            s.push('\\');
        }
        s.push(c);
    }
    s.push('"');
    s
}

fn cycle(c: Option<Cycle>) -> String {
    c.map_or("off".into(), |c| {
        if c.rest_first {
            format!("rest {} load {}", dur(c.off_ns), dur(c.on_ns))
        } else {
            format!("{} {}", dur(c.on_ns), dur(c.off_ns))
        }
    })
}

fn term(t: Termination) -> &'static str {
    t.name()
}

/// The whole configuration with defaults made explicit.
pub fn effective(cfg: &Config) -> String {
    let mut o = String::new();
    let m = &cfg.main;
    let _ = writeln!(
        o,
        "# effective settings of {} (defaults filled in)",
        cfg.file
    );
    o.push_str("main\n{\n");
    if let Some(c) = &m.cpu_affinity {
        let _ = writeln!(o, "  cpu_affinity {c}");
    }
    sched_lines(&mut o, m.sched);
    if let Some(c) = m.cgroup {
        let _ = writeln!(o, "  cgroup {}", c.name());
    }
    let _ = writeln!(o, "  mode {}", m.mode.name());
    let _ = writeln!(o, "  period {}", dur(m.period_ns));
    if let Some(d) = m.duration_ns {
        let _ = writeln!(o, "  lifetime.duration {}", dur(d));
    }
    let _ = writeln!(o, "  stats.histo_size {}", dur(m.histo_size_ns));
    let _ = writeln!(o, "  histo.resolution {}", dur(m.resolution_ns));
    let _ = writeln!(o, "  stats.period {}", dur(m.stats_period_ns));
    let f: Vec<&str> = m.formats.iter().map(|f| f.name()).collect();
    let _ = writeln!(o, "  stats.format {}", f.join(" "));
    let cl = match &m.cpu_load {
        CpuLoadShow::None => "none".to_string(),
        CpuLoadShow::All => "all".into(),
        CpuLoadShow::Total => "total".into(),
        CpuLoadShow::Cpus(c) => c.to_list(),
    };
    let _ = writeln!(o, "  stats.cpu_load {cl}");
    let cp = if m.checkpoint_ns == 0 {
        "off".into()
    } else {
        dur(m.checkpoint_ns)
    };
    let _ = writeln!(o, "  stats.checkpoint {cp}");
    let _ = writeln!(
        o,
        "  stats.rotate {}",
        m.rotate_ns.map_or("off".into(), dur)
    );
    let _ = writeln!(o, "  memlock {}", if m.memlock { "on" } else { "off" });
    let _ = writeln!(
        o,
        "  cpu_dma_latency {}",
        if m.cpu_dma_latency { "on" } else { "off" }
    );
    let _ = writeln!(o, "  dbg_level {}", m.dbg_level);
    let _ = writeln!(o, "  start.delay {}", dur(m.start_delay_ns));
    let _ = writeln!(o, "  load.cycle {}", cycle(m.load_cycle));
    // Only when tracing is asked for: other configurations read as before.
    if m.trace.wanted() {
        if let Some(l) = m.trace.on_latency_ns {
            let _ = writeln!(o, "  trace.on_latency {}", dur(l));
        }
        let on = |b: bool| if b { "on" } else { "off" };
        let _ = writeln!(o, "  trace.stop {}", on(m.trace.stop));
        let _ = writeln!(o, "  trace.split {}", on(m.trace.split));
        // Absent: sized from the period (the same when read back).
        if let Some(kb) = m.trace.buffer_kb {
            let _ = writeln!(o, "  trace.buffer_kb {kb}");
        }
    }
    o.push_str("}\n");
    for t in &cfg.timers {
        let _ = writeln!(o, "\ntimer_thread[{}]\n{{", t.index);
        if let Some(c) = t.cpu {
            let _ = writeln!(o, "  cpu_affinity {c}");
        }
        sched_lines(&mut o, Some(t.sched));
        if let Some(c) = t.cgroup {
            let _ = writeln!(o, "  cgroup {}", c.name());
        }
        let _ = writeln!(o, "  period {}", dur(t.period_ns));
        if let Some(d) = t.duration_ns {
            let _ = writeln!(o, "  lifetime.duration {}", dur(d));
        }
        if let Some(s) = t.samples {
            let _ = writeln!(o, "  lifetime.samples {s}");
        }
        let _ = writeln!(o, "  stats.histo_size {}", dur(t.histo_size_ns));
        let _ = writeln!(o, "  histo.resolution {}", dur(t.resolution_ns));
        let _ = writeln!(o, "  stats.filename {}", quote(&t.filename));
        o.push_str("}\n");
    }
    for p in &cfg.programs {
        program(&mut o, p);
    }
    o
}

/// A `program[N]` stanza, every key explicit.
fn program(o: &mut String, p: &Program) {
    let _ = writeln!(o, "\nprogram[{}]\n{{", p.index);
    match &p.action {
        Action::Command(w) => {
            let ws: Vec<String> = w.iter().map(|w| quote(w)).collect();
            let _ = writeln!(o, "  cmdline {}", ws.join(" "));
        }
        Action::Builtin {
            kind,
            size,
            workers,
            peer,
        } => {
            let arg = rtshield_load::LoadArg {
                kind: *kind,
                peer: *peer,
            };
            let _ = writeln!(o, "  load {arg}");
            match (size, kind.default_size()) {
                (Some(s), _) => {
                    let _ = writeln!(o, "  load.size {s}");
                }
                (None, Some(d)) => {
                    let _ = writeln!(o, "  # load.size {d} (default)");
                }
                (None, None) => {}
            }
            let _ = writeln!(o, "  load.workers {workers}");
        }
    }
    if let Some(c) = &p.cpu_affinity {
        let _ = writeln!(o, "  cpu_affinity {c}");
    }
    sched_lines(o, p.sched);
    if let Some(c) = p.cgroup {
        let _ = writeln!(o, "  cgroup {}", c.name());
    }
    let _ = writeln!(o, "  output.out {}", output(&p.stdout));
    let _ = writeln!(o, "  output.err {}", output(&p.stderr));
    let _ = writeln!(o, "  termination.ok {}", term(p.on_ok));
    let _ = writeln!(o, "  termination.ko {}", term(p.on_ko));
    let _ = writeln!(o, "  start.delay {}", dur(p.start_delay_ns));
    let _ = writeln!(o, "  load.cycle {}", cycle(p.load_cycle));
    o.push_str("}\n");
}
