//! rtshield-text: text across language boundaries, one encoder per
//! language.
//!
//! Its one job: every parser turns bytes into text with [`decode_utf8`]
//! (one rule, one message: `FILE:LINE:COL: byte 0xff is not UTF-8 …` once
//! the caller adds its file name), and every writer puts a string into
//! another language through that language's encoder: [`markdown_cell`],
//! [`csv_table`], [`markup_text`] and [`markup_attribute`] (HTML and XML),
//! [`gnuplot_quoted`].
//!
//! What it may not do: call the OS (no file, no `unsafe`), so the simulator
//! and the scenario model may use it too; or know any rtshield format (it
//! escapes strings, the callers build the documents).

#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![warn(unreachable_pub)]

mod csv;
mod gnuplot;
mod markdown;
mod markup;
mod utf8;

pub use csv::table as csv_table;
pub use gnuplot::double_quoted as gnuplot_quoted;
pub use markdown::cell as markdown_cell;
pub use markup::{attribute as markup_attribute, text as markup_text};
pub use utf8::{decode as decode_utf8, decode_str as decode_utf8_str, NotUtf8};
