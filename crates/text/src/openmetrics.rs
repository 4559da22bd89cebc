//! The Prometheus text exposition format and OpenMetrics.

/// A label value, for the inside of `name="…"`: `\` as `\\`, `"` as `\"`
/// and a newline as `\n`, the three escapes both formats define. Other
/// characters are UTF-8 as they are (both formats allow any).
pub fn label_value(v: &str) -> String {
    let mut o = String::with_capacity(v.len());
    for c in v.chars() {
        match c {
            '\\' => o.push_str("\\\\"),
            '"' => o.push_str("\\\""),
            '\n' => o.push_str("\\n"),
            c => o.push(c),
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::label_value;
    use crate::hostile::hostile;

    #[test]
    fn the_three_escapes() {
        assert_eq!(label_value("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
        assert_eq!(label_value("\"} evil{a=\"b"), "\\\"} evil{a=\\\"b");
    }

    /// The value back, read as the exposition format's parser reads it;
    /// `None` when the value would end before the end of the text.
    fn read_back(s: &str) -> Option<String> {
        let mut out = String::new();
        let mut it = s.chars();
        while let Some(c) = it.next() {
            match c {
                '\\' => match it.next()? {
                    'n' => out.push('\n'),
                    c @ ('\\' | '"') => out.push(c),
                    _ => return None,
                },
                '"' | '\n' => return None,
                c => out.push(c),
            }
        }
        Some(out)
    }

    proptest::proptest! {
        #[test]
        fn a_value_stays_inside_its_quotes(s in hostile()) {
            let v = label_value(&s);
            proptest::prop_assert_eq!(read_back(&v), Some(s.clone()));
        }
    }
}
