//! Kernel trace events in, explanations out. Pure: this crate reads no
//! file and makes no syscall; `rtshield_sys::tracefs` records the text, this
//! crate parses it ([`parse`], or [`parse_from`] a time on) and explains
//! one late wake-up ([`analyse`], [`analyse_until`]) or splits every
//! wake-up into IRQ and thread latency ([`split`], or [`Splitter`] for a
//! trace read as a stream).
//! See docs/trace.md.
#![forbid(unsafe_code)]

pub mod analyse;
pub mod noise;
pub mod parse;
mod replay;
mod split;

pub use analyse::{
    analyse, analyse_until, fmt_ns, priority_text, render_text, AnalyseError, Item, ItemKind,
    LiveRt, RtPolicy, Spike, SpikeFile, Split, ThreadItem,
};
pub use parse::{parse, parse_from, parse_line, Event, ParseError, Record};
pub use split::{split, Splitter};
