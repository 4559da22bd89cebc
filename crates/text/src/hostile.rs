//! Hostile strings for the encoders' property tests: what an attacker puts
//! in a label, a tag, a host name or a file name.

use proptest::prelude::*;

/// The pieces a hostile string is made of.
const PIECES: &[&str] = &[
    "\n",
    "\r",
    "\r\n",
    "\t",
    "\x1b]0;PWNED\x07",
    "\x1b[2J",
    "\x00",
    "\x7f",
    "\u{9b}",
    "\u{202e}",
    "\u{2028}",
    "\u{feff}",
    // Round 5 (A), F09: the other bidirectional and invisible characters,
    // a character reference to one, formulas behind white space or in
    // full-width forms.
    "\u{202a}",
    "\u{2066}",
    "\u{2069}",
    "\u{200e}",
    "\u{200b}",
    "\u{061c}",
    "\u{e0041}",
    "\u{ad}",
    "&#x202e;",
    "&#8238;",
    " =1+1",
    "\t=1",
    "\r=1",
    "\u{ff1d}1",
    "'",
    "\"",
    "`",
    "`touch /tmp/PWNED`",
    "\\",
    "|",
    "=",
    "+",
    "-",
    "@",
    "=HYPERLINK(\"http://evil.example/\",\"x\")",
    "@SUM(1)",
    "-1+1",
    "]]>",
    "</script><script>alert(1)</script>",
    "<img src=x>",
    "&amp;",
    "${x}",
    "$(id)",
    "@x",
    "#",
    ",",
    ";",
    "{",
    "}",
    "\"} evil{a=\"b",
    "µs",
    "é",
    "日本",
    "😀",
    " ",
    "a",
    "0",
    "-5",
    "1e3",
];

/// A hostile string: pieces from [`PIECES`], any characters, and now and
/// then a long token.
pub(crate) fn hostile() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        6 => proptest::sample::select(PIECES).prop_map(str::to_owned),
        2 => "\\PC{0,8}",
        2 => "[\\x00-\\x1f\\x7f-\\u{9f}]{1,3}",
        1 => "[\\u{200b}-\\u{200f}\\u{202a}-\\u{202e}\\u{2060}-\\u{206f}\\u{e0000}-\\u{e007f}]{1,3}",
        1 => (200usize..700).prop_map(|n| "L".repeat(n)),
    ];
    proptest::collection::vec(piece, 0..10).prop_map(|v| v.concat())
}
