//! What an error may show of the file it is about.
//!
//! A parse error points at the place (`FILE:LINE:COL`) and may quote what
//! it found there, as a short excerpt ([`quote`]: at most
//! [`EXCERPT_MAX`] characters, controls escaped). It quotes nothing when
//! the file is not one every user of the machine may read: rtshield runs
//! as root, and a link planted by another user (`scn -> /etc/shadow`) must
//! not turn root's error message into a way to read a file. The reader
//! says which files may be quoted (`safefs::read_input_public`); for the
//! others the caller passes the error through [`withhold`], which keeps
//! the position and drops the rest.

use crate::terminal::{is_control, push_escaped};

/// The most characters of a file an error quotes.
pub const EXCERPT_MAX: usize = 40;

/// `s` as an error quotes it: controls escaped, at most [`EXCERPT_MAX`]
/// characters, then `…`.
pub fn quote(s: &str) -> String {
    let mut o = String::new();
    for (n, c) in s.chars().enumerate() {
        if n == EXCERPT_MAX {
            o.push('…');
            break;
        }
        if is_control(c) {
            push_escaped(&mut o, c);
        } else {
            o.push(c);
        }
    }
    o
}

/// Whether an error about a file may quote it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quote {
    /// Every user may read the file: its text may be quoted.
    Allowed,
    /// Not every user may read it: positions only.
    Withheld,
}

/// `msg`, an error about `file`, as it may be shown: unchanged when
/// `quote` is [`Quote::Allowed`]; else what precedes `file` and `file:LINE:COL`
/// (or `file:LINE`, or `file`) kept, and the rest replaced by a sentence
/// saying why it is not shown.
pub fn withhold(msg: &str, file: &str, quote: Quote) -> String {
    if quote == Quote::Allowed {
        return msg.to_string();
    }
    let why = "not accepted here (the text is not shown: this file is not readable by every user)";
    let Some(at) = msg.find(file).filter(|_| !file.is_empty()) else {
        return format!("{file}: {why}");
    };
    let mut end = at + file.len();
    // `:LINE` and `:COL`, when there.
    for _ in 0..2 {
        let rest = &msg[end..];
        let digits = rest
            .strip_prefix(':')
            .map_or(0, |r| r.bytes().take_while(u8::is_ascii_digit).count());
        if digits == 0 {
            break;
        }
        end += 1 + digits;
    }
    format!("{}: {why}", &msg[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_private_file_is_never_quoted() {
        let m = "link:1:5: unexpected ':$y$j9T$SECRETHASH' after 'root'";
        assert_eq!(withhold(m, "link", Quote::Allowed), m);
        let w = withhold(m, "link", Quote::Withheld);
        assert!(w.starts_with("link:1:5: not accepted here"), "{w}");
        assert!(!w.contains("SECRET") && !w.contains("root"), "{w}");
        let w = withhold(
            "cannot read scenario: t.scn:2: found `x`",
            "t.scn",
            Quote::Withheld,
        );
        assert!(
            w.starts_with("cannot read scenario: t.scn:2: not accepted"),
            "{w}"
        );
        assert!(!withhold("other: zzz", "f", Quote::Withheld).contains("zzz"));
    }

    #[test]
    fn excerpts_are_short_and_escaped() {
        assert_eq!(quote("a\x1bb"), "a\\x1bb");
        let q = quote(&"L".repeat(5_000_000));
        assert_eq!(q, format!("{}…", "L".repeat(EXCERPT_MAX)));
    }
}
