//! CSV (RFC 4180), written by the `csv` crate: a field is quoted only when
//! it holds a comma, a double quote, a carriage return or a newline; a
//! quote inside is doubled; records end with `\n`.

/// Rows of fields as CSV text.
pub fn table<R, F>(rows: impl IntoIterator<Item = R>) -> String
where
    R: IntoIterator<Item = F>,
    F: AsRef<str>,
{
    let mut w = ::csv::WriterBuilder::new()
        .flexible(true)
        .terminator(::csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    for r in rows {
        // Writing into memory cannot fail.
        w.write_record(r.into_iter().map(|f| f.as_ref().to_owned()))
            .expect("CSV into memory");
    }
    let bytes = w.into_inner().expect("CSV into memory");
    // The fields were strings and the separators are ASCII.
    String::from_utf8(bytes).expect("CSV of strings is UTF-8")
}

#[cfg(test)]
mod tests {
    use super::table;

    #[test]
    fn fields_are_quoted_only_when_they_must_be() {
        let t = table([
            vec!["a", "b,c", "d\"e", ""],
            vec!["x\ny", "r\rs", "plain", "=1+2"],
        ]);
        assert_eq!(t, "a,\"b,c\",\"d\"\"e\",\n\"x\ny\",\"r\rs\",plain,=1+2\n");
    }

    proptest::proptest! {
        #[test]
        fn every_record_has_its_fields(fields in proptest::collection::vec(".*", 1..6)) {
            // A leading "x": the reader drops a byte-order mark that
            // starts the text, a writer must not.
            let t = table([std::iter::once("x").chain(fields.iter().map(String::as_str))]);
            let mut r = ::csv::ReaderBuilder::new().has_headers(false).from_reader(t.as_bytes());
            let rec = r.records().next().unwrap().unwrap();
            let back: Vec<&str> = rec.iter().skip(1).collect();
            let want: Vec<&str> = fields.iter().map(String::as_str).collect();
            proptest::prop_assert_eq!(back, want);
        }
    }
}
