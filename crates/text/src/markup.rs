//! HTML and XML: one escaper for both (they share the five special
//! characters), in two places a string can go.
//!
//! Control characters XML 1.0 cannot carry (C0 other than tab, newline and
//! carriage return) become U+FFFD in both: a validator refuses them in
//! XML, and in HTML they are parse errors. DEL, the C1 controls and the
//! bidirectional and invisible format characters are shown escaped as on
//! the terminal (`\u{202e}`): a browser would obey them.

/// A string for element content (`<td>…</td>`, `<pre>…</pre>`): `&` `<`
/// `>` `"` `'` as references; newlines and tabs kept, so `<pre>` text
/// keeps its lines.
pub fn text(s: &str) -> String {
    escape(s, false)
}

/// A string for an attribute value (`name="…"`): as [`text`], and
/// newlines and tabs as character references, which attribute-value
/// normalisation would otherwise turn into spaces.
pub fn attribute(s: &str) -> String {
    escape(s, true)
}

/// A whole XML document made by another library (plotters' SVG, which
/// escapes `&`, `<` and `>` in text but passes controls through): every
/// character XML 1.0 cannot carry (C0 controls other than tab, newline
/// and carriage return; U+FFFE, U+FFFF) becomes U+FFFD, as [`text`] does.
/// Markup is untouched: only a control can change, and markup has none.
pub fn xml_chars(doc: &str) -> std::borrow::Cow<'_, str> {
    let bad = |c: char| {
        ((c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r'))
            || matches!(c, '\u{fffe}' | '\u{ffff}')
    };
    if !doc.chars().any(bad) {
        return std::borrow::Cow::Borrowed(doc);
    }
    std::borrow::Cow::Owned(
        doc.chars()
            .map(|c| if bad(c) { '\u{FFFD}' } else { c })
            .collect(),
    )
}

/// JSON text (as serde_json writes it) for a page's `<script>` element:
/// `<` as `\u003c`, so the data never closes its element, and each
/// control, bidirectional or invisible format character (which can only be
/// inside a JSON string, and which serde_json leaves as it is beyond C0)
/// written as the visible text `\u{202e}` (JSON `\\u{202e}`): the page's
/// script shows what the other encoders show, never a character that
/// reorders the page (round 5 (A), F09).
pub fn script_json(json: &str) -> String {
    let mut o = String::with_capacity(json.len());
    for c in json.chars() {
        match c {
            '<' => o.push_str("\\u003c"),
            c if crate::terminal::is_control(c) => {
                o.push('\\');
                crate::terminal::push_escaped(&mut o, c);
            }
            c => o.push(c),
        }
    }
    o
}

fn escape(s: &str, attribute: bool) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            // `&#39;`, not `&apos;`: HTML 4 does not know the latter.
            '\'' => o.push_str("&#39;"),
            '\n' if attribute => o.push_str("&#10;"),
            '\t' if attribute => o.push_str("&#9;"),
            '\n' | '\t' | '\r' if !attribute => o.push(c),
            // U+FFFE/U+FFFF are outside XML 1.0's Char too (round-4 D1:
            // a tag of someone's results.json made the JUnit export invalid).
            c if (c as u32) < 0x20 || matches!(c, '\u{fffe}' | '\u{ffff}') => o.push('\u{FFFD}'),
            // DEL, the C1 controls, the bidirectional and other invisible
            // format characters (round 5 (A), F09: a label's U+202E
            // reordered the page's text): shown escaped, as on the terminal.
            c if crate::terminal::is_control(c) => crate::terminal::push_escaped(&mut o, c),
            c => o.push(c),
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_document_loses_only_the_characters_xml_forbids() {
        assert_eq!(
            xml_chars("<text>T\x1b]0;X\x07\u{ffff}</text>\n\t\r"),
            "<text>T\u{FFFD}]0;X\u{FFFD}\u{FFFD}</text>\n\t\r"
        );
        assert!(matches!(
            xml_chars("<a b=\"c\">é</a>"),
            std::borrow::Cow::Borrowed(_)
        ));
    }

    #[test]
    fn the_five_characters_and_controls() {
        assert_eq!(
            text("a<b>&\"c\"'d'\n\te"),
            "a&lt;b&gt;&amp;&quot;c&quot;&#39;d&#39;\n\te"
        );
        assert_eq!(attribute("x\ny\tz\u{1}"), "x&#10;y&#9;z\u{FFFD}");
        assert_eq!(text("\u{7}\r"), "\u{FFFD}\r");
        assert_eq!(attribute("\r"), "\u{FFFD}");
        assert_eq!(text("</script>]]>"), "&lt;/script&gt;]]&gt;");
        // Round 5 (A), F09: bidirectional and invisible characters.
        assert_eq!(
            text("a\u{202e}b\u{2066}c\u{200b}d\u{9b}e\u{e0041}"),
            "a\\u{202e}b\\u{2066}c\\u{200b}d\\u{9b}e\\u{e0041}"
        );
        // Round-4 D1: the two noncharacters XML 1.0 forbids.
        assert_eq!(text("k\u{ffff}v\u{fffe}"), "k\u{FFFD}v\u{FFFD}");
        assert_eq!(attribute("\u{fffe}"), "\u{FFFD}");
    }

    #[test]
    fn f09_json_for_a_page_shows_controls_as_text() {
        let v = serde_json_like("a\u{202e}b</script>\u{85}");
        let o = script_json(&v);
        assert_eq!(o, "\"a\\\\u{202e}b\\u003c/script>\\\\u{85}\"");
    }

    /// A JSON string as serde_json writes one (C0 escaped, the rest raw).
    fn serde_json_like(s: &str) -> String {
        format!("\"{s}\"")
    }

    proptest::proptest! {
        #[test]
        fn hostile_strings_stay_text(s in crate::hostile::hostile()) {
            for out in [text(&s), attribute(&s)] {
                proptest::prop_assert!(!out.contains("</script"));
                proptest::prop_assert!(!out.contains("]]>"));
                proptest::prop_assert!(!out.contains(['<', '>', '"', '\'']));
                // Round 5 (A), F09: nothing that reorders or hides text.
                proptest::prop_assert!(
                    !out.chars().any(|c| crate::terminal::is_control(c) && !"\n\t\r".contains(c)),
                    "{out:?}"
                );
            }
        }

        #[test]
        fn nothing_special_survives(s in "\\PC*|[<>&\"'\\x00-\\x1f]*") {
            for out in [text(&s), attribute(&s)] {
                proptest::prop_assert!(!out.contains(['<', '>', '"', '\'']));
                proptest::prop_assert!(!out.chars().any(|c| (c as u32) < 0x20 && !"\n\t\r".contains(c)));
                // Every `&` starts a reference.
                for (i, _) in out.match_indices('&') {
                    proptest::prop_assert!(out[i..].find(';').is_some_and(|e| e <= 6), "{out}");
                }
            }
            proptest::prop_assert!(!attribute(&s).contains(['\n', '\t', '\r']));
        }
    }
}
