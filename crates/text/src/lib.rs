//! Text across language boundaries, one encoder per language.
//!
//! Every parser turns bytes into text with [`utf8::decode`] (one rule, one
//! message: `FILE:LINE:COL: byte 0xff is not UTF-8 …` once the caller adds
//! its file name); every writer puts a string into another language
//! through that language's encoder: [`markdown::cell`], [`csv::table`],
//! [`markup::text`] and [`markup::attribute`] (HTML and XML),
//! [`gnuplot::double_quoted`]. Pure: no OS
//! calls, so the simulator and the scenario model may use it too.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod csv;
pub mod gnuplot;
pub mod markdown;
pub mod markup;
pub mod utf8;

pub use utf8::NotUtf8;
