//! Generated distribution files: man pages (`rtshield.1`, one page per
//! subcommand, `rtshield.conf.5` for the configuration keys) and shell
//! completions (bash, zsh, fish). They are committed under `dist/` so a
//! package build needs no generator; `tests/up_to_date.rs` fails when the
//! committed copies differ from what the current CLI generates.
//!
//! Regenerate with `cargo run -p rtshield-xtask -- dist`.
//!
//! Its one job: turn the CLI's clap definition and the configuration keys
//! into those files. What it may not do: ship (the binary holds none of
//! it: `clap_mangen` and `clap_complete` are this crate's dependencies
//! only) or describe an option itself (every word comes from the CLI
//! definition or the key table, so the pages cannot drift from the code).

#![deny(missing_docs)]
#![warn(unreachable_pub)]

use clap_complete::Shell;
use clap_mangen::roff::{bold, italic, roman, Roff};
use clap_mangen::Man;
use rtshield_config::{Section, KEYS};
use rtshield_safefs::{DirPolicy, SafeDir};
use std::path::Path;

/// Directories below the output directory, as (name, files).
pub type Tree = Vec<(&'static str, Vec<(String, Vec<u8>)>)>;

/// Every generated file, grouped by subdirectory (`man`, `completions`).
pub fn generate() -> anyhow::Result<Tree> {
    Ok(vec![("man", man_pages()?), ("completions", completions())])
}

/// The rtshield command as clap sees it, built (subcommands named
/// `rtshield-measure`, ...), without the `help` subcommand.
fn command() -> clap::Command {
    let mut cmd = rtshield::command().disable_help_subcommand(true);
    cmd.build();
    cmd
}

fn man_pages() -> anyhow::Result<Vec<(String, Vec<u8>)>> {
    fn walk(cmd: &clap::Command, out: &mut Vec<(String, Vec<u8>)>) -> anyhow::Result<()> {
        let man = Man::new(cmd.clone()).manual("rtshield manual");
        let mut buf = Vec::new();
        man.render(&mut buf)?;
        out.push((man.get_filename(), buf));
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            walk(sub, out)?;
        }
        Ok(())
    }
    let mut out = Vec::new();
    walk(&command(), &mut out)?;
    out.push(("rtshield.conf.5".to_string(), conf_page().into_bytes()));
    out.sort();
    Ok(out)
}

fn completions() -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for (shell, name) in [
        (Shell::Bash, "rtshield.bash"),
        (Shell::Zsh, "_rtshield"),
        (Shell::Fish, "rtshield.fish"),
    ] {
        let mut cmd = command();
        let mut buf = Vec::new();
        clap_complete::generate(shell, &mut cmd, "rtshield", &mut buf);
        out.push((name.to_string(), buf));
    }
    out.sort();
    out
}

/// rtshield.conf(5): the systress configuration format and every key, from
/// the same table (`rtshield_config::KEYS`) that the parser uses.
pub(crate) fn conf_page() -> String {
    let version = env!("CARGO_PKG_VERSION");
    let mut r = Roff::new();
    r.control(
        "TH",
        [
            "RTSHIELD.CONF",
            "5",
            "",
            &format!("rtshield {version}"),
            "rtshield manual",
        ],
    );
    r.control("SH", ["NAME"]);
    r.text([roman(
        "rtshield.conf - systress configuration files for rtshield run",
    )]);
    r.control("SH", ["SYNOPSIS"]);
    r.text([
        bold("rtshield run"),
        roman(" "),
        italic("FILE"),
        roman(".cfg"),
    ]);
    r.control("SH", ["DESCRIPTION"]);
    r.text([roman(
        "A configuration file describes one measuring run in the format of the systress article: \
         a main stanza, one or more timer_thread[N] stanzas (each a measuring thread), and any \
         number of program[N] stanzas (loads started, supervised and stopped by the run). \
         A stanza is its name followed by keys between braces, one key and its value per line; \
         # starts a comment.",
    )]);
    r.control("PP", []);
    r.text([roman(
        "Every value is checked when the file is read: a bad value is reported as \
         FILE:LINE:COL with the expected form, the exit status is 2 and nothing is started. \
         rtshield run --check FILE prints the effective settings without running.",
    )]);
    r.control("SH", ["EXAMPLE"]);
    r.control("nf", []);
    for line in [
        "main",
        "{",
        "  cpu_affinity 0",
        "  memlock",
        "}",
        "timer_thread[0]",
        "{",
        "  cpu_affinity 1",
        "  sched.priority 90",
        "  period 500 us",
        "  lifetime.duration 30 s",
        "}",
        "program[0]",
        "{",
        "  load cpu",
        "  cpu_affinity 0",
        "}",
    ] {
        r.text([roman(line)]);
    }
    r.control("fi", []);
    for section in [Section::Main, Section::Timer, Section::Program] {
        let title = format!("KEYS OF {}", section.name().to_uppercase());
        r.control("SH", [title.as_str()]);
        for k in KEYS.iter().filter(|k| k.sections.contains(&section)) {
            r.control("TP", []);
            r.text([bold(k.key), roman(" "), italic(k.form)]);
            r.text([roman(format!("{} Default: {}.", k.meaning, k.default))]);
        }
    }
    r.control("SH", ["FILES"]);
    r.text([roman(
        "Examples are installed in /usr/share/doc/rtshield/examples (Debian package).",
    )]);
    r.control("SH", ["SEE ALSO"]);
    r.text([
        bold("rtshield"),
        roman("(1), "),
        bold("rtshield-run"),
        roman("(1)"),
    ]);
    r.render()
}

/// Write every generated file below `out` (creating `out/man` and
/// `out/completions`), and remove files there that are no longer generated.
pub fn write(out: &Path) -> anyhow::Result<()> {
    let top = SafeDir::open_or_create(out, 0o755, DirPolicy::AllowUnsafe)?;
    for (dir, files) in generate()? {
        let d = top.subdir(dir, 0o755)?;
        for (name, bytes) in &files {
            d.write(name, bytes)?;
        }
        for name in d.list()? {
            if !files.iter().any(|(n, _)| *n == name) {
                d.remove_file(&name)?;
            }
        }
    }
    Ok(())
}
