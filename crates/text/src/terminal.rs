//! The terminal: what rtshield prints on a terminal (messages, tables,
//! errors) when a part of it comes from a file, the system or the user.
//!
//! A terminal interprets some characters: ESC starts sequences that set
//! the window title, clear the screen, move the cursor or (on some
//! terminals) write files; BEL rings; CR goes back to the start of the line
//! and lets a line overwrite what came before; the C1 controls (U+0080 to
//! U+009F) are ESC sequences in one character on some terminals; the
//! Unicode bidirectional controls reorder what is shown. None of them may
//! reach the terminal from data: each is shown escaped, as Rust writes it
//! (`\x1b`, `\r`, `\u{202e}`). And a token (a run of characters without a
//! space) longer than [`TOKEN_MAX`] characters is cut, with an ellipsis and
//! its length (`LLLL…(5000000 bytes)`): a 5 MB label does not fill the
//! screen (or a log) and the message still says what it is about.
//!
//! Two entry points: [`value`] for one value put into a message (a newline
//! in it is escaped too: a value is one line), and [`lines`] for a whole
//! text that rtshield laid out itself (a table, a message of several
//! lines): newlines and tabs kept, everything else as [`value`].

use std::borrow::Cow;
use std::fmt::Write as _;

/// The longest token (characters without a space, after escaping) shown
/// whole.
pub const TOKEN_MAX: usize = 256;

/// How many characters of a cut token are kept before the ellipsis.
pub const TOKEN_KEEP: usize = 64;

/// The most characters of one message (an error): a file quoted line after
/// line, each line short, is still cut.
pub const MESSAGE_MAX: usize = 4096;

/// Whether a character must not reach a terminal as it is: the C0 controls
/// (newline and tab included: callers that lay out lines keep those), DEL,
/// the C1 controls, the line and paragraph separators, the bidirectional
/// controls ("Trojan Source", CVE-2021-42574: U+202A–U+202E,
/// U+2066–U+2069, U+200E/U+200F, U+061C) and every other invisible format
/// character ([`is_invisible_format`]). Every encoder of this crate shows
/// them escaped (`\u{202e}`), so a label cannot reorder or hide what a
/// reader sees.
pub fn is_control(c: char) -> bool {
    matches!(c, '\0'..='\x1f' | '\x7f'..='\u{9f}' | '\u{2028}'..='\u{202e}')
        || is_invisible_format(c)
}

/// The invisible format characters (Unicode category Cf, and the fillers
/// shown as nothing) beyond the C0/C1 controls: the soft hyphen, the Arabic
/// and Syriac marks, the zero-width space, joiners and marks (U+200B–U+200F),
/// the word joiner and invisible operators, the bidirectional isolates and
/// the deprecated format controls (U+2060–U+206F), the byte-order mark, the
/// interlinear annotation controls, the Hangul fillers, the tag characters
/// (U+E0000–U+E007F) and the other format controls of the supplementary
/// planes. Variation selectors are left: emoji need them.
pub fn is_invisible_format(c: char) -> bool {
    matches!(c,
        '\u{ad}' | '\u{34f}' | '\u{600}'..='\u{605}' | '\u{61c}' | '\u{6dd}' | '\u{70f}'
        | '\u{890}'..='\u{891}' | '\u{8e2}' | '\u{115f}'..='\u{1160}' | '\u{17b4}'..='\u{17b5}'
        | '\u{180b}'..='\u{180f}' | '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}'
        | '\u{2060}'..='\u{206f}' | '\u{3164}' | '\u{feff}' | '\u{ffa0}'
        | '\u{fff9}'..='\u{fffb}' | '\u{110bd}' | '\u{110cd}' | '\u{13430}'..='\u{1343f}'
        | '\u{1bca0}'..='\u{1bca3}' | '\u{1d173}'..='\u{1d17a}' | '\u{e0000}'..='\u{e007f}')
}

/// `c` written as Rust writes it in a string literal: `\n`, `\t`, `\r`,
/// `\x1b` for the other ASCII controls, `\u{202e}` beyond ASCII.
pub fn push_escaped(out: &mut String, c: char) {
    match c {
        '\n' => out.push_str("\\n"),
        '\t' => out.push_str("\\t"),
        '\r' => out.push_str("\\r"),
        c if (c as u32) < 0x80 => {
            let _ = write!(out, "\\x{:02x}", c as u32);
        }
        c => {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        }
    }
}

/// One value for a message: every control character escaped (newline and
/// tab too), a value longer than [`TOKEN_MAX`] characters cut.
pub fn value(s: &str) -> Cow<'_, str> {
    if s.len() <= TOKEN_MAX && !s.chars().any(is_control) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len().min(TOKEN_MAX + 32));
    push_token(&mut out, s, s.len());
    Cow::Owned(out)
}

/// A text laid out by rtshield (lines, tables): newlines and tabs kept,
/// other controls escaped, each token longer than [`TOKEN_MAX`] characters
/// cut.
pub fn lines(s: &str) -> Cow<'_, str> {
    let clean = !s.chars().any(|c| is_control(c) && c != '\n' && c != '\t')
        && s.split([' ', '\n', '\t']).all(|t| t.len() <= TOKEN_MAX);
    if clean {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len().min(1 << 16));
    let mut rest = s;
    while !rest.is_empty() {
        let end = rest.find([' ', '\n', '\t']).unwrap_or(rest.len());
        push_token(&mut out, &rest[..end], end);
        if let Some(sep) = rest[end..].chars().next() {
            out.push(sep);
            rest = &rest[end + sep.len_utf8()..];
        } else {
            rest = "";
        }
    }
    Cow::Owned(out)
}

/// A text file rtshield writes for people to read (`spikes.txt`,
/// `trace.txt`, `balance.txt`): `cat` or `less -R` sends it to a terminal
/// as it is, so it gets the terminal's rule — newlines and tabs kept,
/// every other control escaped as [`lines`] does — but nothing is cut (a
/// file keeps every word of a long name).
pub fn file_text(s: &str) -> Cow<'_, str> {
    if !s.chars().any(|c| is_control(c) && c != '\n' && c != '\t') {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        if is_control(c) && c != '\n' && c != '\t' {
            push_escaped(&mut out, c);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// An error message for the terminal: as [`lines`], then cut after
/// [`MESSAGE_MAX`] characters with `…(N bytes in all)`.
pub fn message(s: &str) -> Cow<'_, str> {
    let l = lines(s);
    match l.char_indices().nth(MESSAGE_MAX) {
        None => l,
        Some((at, _)) => Cow::Owned(format!("{}…({} bytes in all)", &l[..at], s.len())),
    }
}

/// Append `token` escaped, cut after [`TOKEN_KEEP`] characters (with
/// `…(N bytes)`, N = `len`) when its escaped form is longer than
/// [`TOKEN_MAX`].
fn push_token(out: &mut String, token: &str, len: usize) {
    let mut esc = String::new();
    let mut kept = 0;
    let mut cut = false;
    for c in token.chars() {
        let before = esc.len();
        if is_control(c) {
            push_escaped(&mut esc, c);
        } else {
            esc.push(c);
        }
        // Escapes are ASCII: bytes added = characters added.
        kept += if c.is_ascii() || is_control(c) {
            esc.len() - before
        } else {
            1
        };
        if kept > TOKEN_MAX {
            cut = true;
            break;
        }
    }
    if !cut {
        out.push_str(&esc);
        return;
    }
    out.extend(esc.chars().take(TOKEN_KEEP));
    let _ = write!(out, "…({len} bytes)");
}

/// `println!` for a person: the formatted text through [`lines`]. For
/// text that may hold a part from data (a label, a path, a thread name, a
/// message from a file); data in a file format (JSON, CSV, an export)
/// written to standard output is printed as it is, by `print!`. The macro
/// expands in the caller: this crate does no I/O.
#[macro_export]
macro_rules! outln {
    () => { ::std::println!() };
    ($($arg:tt)*) => {
        ::std::println!("{}", $crate::terminal::lines(&::std::format!($($arg)*)))
    };
}

/// `print!` for a person: see [`outln!`](crate::outln).
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => {
        ::std::print!("{}", $crate::terminal::lines(&::std::format!($($arg)*)))
    };
}

/// `eprintln!` for a person: see [`outln!`](crate::outln).
#[macro_export]
macro_rules! errln {
    () => { ::std::eprintln!() };
    ($($arg:tt)*) => {
        ::std::eprintln!("{}", $crate::terminal::lines(&::std::format!($($arg)*)))
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hostile::hostile;

    #[test]
    fn a_text_file_keeps_its_lines_and_every_word() {
        assert_eq!(file_text("a\tb\nc"), "a\tb\nc");
        assert_eq!(
            file_text("x\x1b]0;PWN\x07\r\u{202e}\n"),
            "x\\x1b]0;PWN\\x07\\r\\u{202e}\n"
        );
        let long = "L".repeat(5000);
        assert_eq!(file_text(&long), long, "nothing cut");
    }

    proptest::proptest! {
        #[test]
        fn a_text_file_has_no_control_but_its_lines(s in hostile()) {
            let t = file_text(&s);
            proptest::prop_assert!(!t.chars().any(|c| is_control(c) && c != '\n' && c != '\t'));
            proptest::prop_assert_eq!(t.matches('\n').count(), s.matches('\n').count());
        }
    }

    #[test]
    fn controls_are_shown_escaped() {
        assert_eq!(
            value("a\x1b]0;PWNED\x07\x1b[2Jb"),
            "a\\x1b]0;PWNED\\x07\\x1b[2Jb"
        );
        assert_eq!(value("x\ny\tz\r\x7f"), "x\\ny\\tz\\r\\x7f");
        assert_eq!(value("\u{9b}31m \u{202e}cba"), "\\u{9b}31m \\u{202e}cba");
        assert_eq!(value("plain µs ≥ 5"), "plain µs ≥ 5");
        assert!(matches!(value("plain"), Cow::Borrowed(_)));
        assert_eq!(lines("a\nb\tc\x1b"), "a\nb\tc\\x1b");
        assert!(matches!(lines("a table\n| x |\n"), Cow::Borrowed(_)));
    }

    #[test]
    fn long_tokens_are_cut_with_their_length() {
        let big = "L".repeat(5_000_000);
        let v = value(&big);
        assert_eq!(v, format!("{}…(5000000 bytes)", "L".repeat(TOKEN_KEEP)));
        let msg = format!("error: {big}: not a plain file name\nnext line");
        let l = lines(&msg);
        assert_eq!(
            l,
            format!(
                "error: {}…(5000001 bytes) not a plain file name\nnext line",
                "L".repeat(TOKEN_KEEP)
            )
        );
        // A token of exactly the limit is kept whole.
        let edge = "é".repeat(TOKEN_MAX);
        assert_eq!(value(&edge), edge);
        assert_eq!(lines(&edge), edge);
        // A message of many short tokens is cut as a whole.
        let many = "word ".repeat(1_000_000);
        let m = message(&many);
        assert!(
            m.ends_with("…(5000000 bytes in all)"),
            "{}",
            &m[m.len() - 40..]
        );
        assert_eq!(
            m.chars().count(),
            MESSAGE_MAX + "…(5000000 bytes in all)".len() - 2
        );
        // Escaping counts: 100 ESC are 400 characters shown.
        let esc = "\x1b".repeat(100);
        assert!(value(&esc).ends_with("…(100 bytes)"), "{}", value(&esc));
    }

    proptest::proptest! {
        #[test]
        fn nothing_a_terminal_interprets_gets_through(s in hostile()) {
            let v = value(&s);
            proptest::prop_assert!(!v.chars().any(is_control), "{v:?}");
            for t in v.split(' ') {
                proptest::prop_assert!(t.chars().count() <= TOKEN_MAX + 32, "{t:?}");
            }
            let l = lines(&s);
            proptest::prop_assert!(!l.chars().any(|c| is_control(c) && c != '\n' && c != '\t'));
            // The lines stay the lines of the input.
            proptest::prop_assert_eq!(l.matches('\n').count(), s.matches('\n').count());
            for t in l.split([' ', '\n', '\t']) {
                proptest::prop_assert!(t.chars().count() <= TOKEN_MAX + 32, "{t:?}");
            }
        }
    }
}
