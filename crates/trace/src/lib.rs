//! Kernel trace events in, explanations out. Pure: this crate reads no
//! file and makes no syscall; `rtshield_sys::tracefs` records the text, this
//! crate parses it ([`parse`]) and explains one late wake-up ([`analyse`])
//! or splits every wake-up into IRQ and thread latency ([`split`]).
//! See docs/trace.md.
#![forbid(unsafe_code)]

pub mod analyse;
pub mod parse;

pub use analyse::{
    analyse, analyse_until, fmt_ns, priority_text, render_text, split, AnalyseError, Item,
    ItemKind, Spike, SpikeFile, Split, Splitter, ThreadItem,
};
pub use parse::{parse, parse_from, parse_line, Event, ParseError, Record};
