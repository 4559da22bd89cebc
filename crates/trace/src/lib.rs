//! rtshield-trace: kernel trace events in, explanations out.
//!
//! Its one job: turn the text of a tracefs instance into events and the
//! events into answers. It parses the text ([`parse`], or [`parse_from`] a
//! time on), explains one late wake-up ([`analyse`], [`analyse_until`]),
//! splits every wake-up into IRQ and thread latency ([`split`], or
//! [`Splitter`] for a trace read as a stream), pairs each sample of the
//! measuring engine with its own wake-up's events ([`Pairer`]: the split
//! of `--split`, or why it is unknown; [`PairerSet`] hands each record to
//! the pairers of its CPU only), and names the cause of each
//! gap a spinning thread saw ([`NoiseTimeline`], [`NoiseTally`]).
//! See docs/trace.md.
//!
//! What it may not do: read a file or make a system call (it is pure:
//! `rtshield_sys`'s tracefs instance records the text, the callers hand it
//! over), or decide what to do about a spike (it explains; `measure`,
//! `run` and `noise` decide and report).
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![warn(unreachable_pub)]

mod analyse;
mod noise;
mod pair;
mod parse;
mod replay;
mod split;

pub use analyse::{
    analyse, analyse_until, fmt_ns, priority_text, render_text, AnalyseError, Item, ItemKind,
    LiveRt, RtPolicy, Spike, SpikeFile, Split, ThreadItem,
};
pub use noise::{
    explain_all as explain_noise, text_line as noise_text_line, Cause as NoiseCause, CauseKind,
    Class as NoiseClass, Explained, NoiseEvent, Options as NoiseOptions, Source as NoiseSource,
    SourceTotal, Tally as NoiseTally, TextLine as NoiseTextLine, Timeline as NoiseTimeline,
};
pub use pair::{lost_marker, EngineSample, Paired, Pairer, PairerSet, Unsplit};
pub use parse::{parse, parse_from, parse_line, Event, ParseError, Record};
pub use split::{split, Splitter};
