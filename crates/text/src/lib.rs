//! rtshield-text: text across language boundaries, one encoder per
//! language.
//!
//! Every parser turns bytes into text with [`decode_utf8`] (one rule, one
//! message: `FILE:LINE:COL: byte 0xff is not UTF-8 …` once the caller adds
//! its file name); every writer puts a string into another language
//! through that language's encoder: [`markdown::cell`], [`csv::table`]
//! (formula-neutralised cells, [`csv::cell`]), [`markup::text`] and
//! [`markup::attribute`] (HTML and XML), [`gnuplot::single_quoted`] and
//! [`gnuplot::comment`], [`openmetrics::label_value`], and the terminal:
//! [`terminal::value`] and [`terminal::lines`] (controls shown escaped,
//! long tokens cut). [`secret::redact`] takes passwords out of a command
//! line before it is recorded, and [`excerpt`] decides whether an error
//! may quote a file. Each encoder has property tests over hostile strings
//! (controls, newlines, quotes, backquotes, formula prefixes, `]]>`,
//! `</script>`, long tokens). Pure: no OS calls, so the simulator and the
//! scenario model may use it too.

#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![warn(unreachable_pub)]

pub mod csv;
pub mod excerpt;
pub mod gnuplot;
#[cfg(test)]
mod hostile;
pub mod markdown;
pub mod markup;
pub mod openmetrics;
pub mod secret;
pub mod terminal;
pub mod utf8;

pub use csv::table as csv_table;
pub use markdown::cell as markdown_cell;
pub use markup::{attribute as markup_attribute, text as markup_text};
pub use utf8::{decode as decode_utf8, decode_str as decode_utf8_str, NotUtf8};
