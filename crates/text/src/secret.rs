//! Secrets in recorded text: the command line a result records, a store's
//! URL in a message, a program's or load's command, a configuration.
//!
//! The one redactor of rtshield: every place that captures text that may
//! hold a password (command lines, program and load commands, the
//! configuration a run records, a campaign's cells, store messages and
//! connection errors) passes it through [`redact`], [`redact_args`] or
//! [`redact_known`] before it is written, stored or shown.
//!
//! A password on the command line (`--store postgres://u:PW@db/rt`) must
//! not reach a file, a store or a terminal: [`redact`] replaces it with
//! [`MASK`]. What is a password:
//!
//! - the password of a URL's user information (`scheme://user:PW@host`,
//!   any scheme, any case): everything from the user's `:` to the URL's
//!   last `@`. The parsers disagree on where the user information ends
//!   (libpq: at the first `@` before a `/`; the Rust driver: at the first
//!   `@` anywhere) and a password may hold an unencoded `/`, `?`, `#` or
//!   `@`: over-redaction is preferred to a leak. A URL ends at white space
//!   (at the end of one argument of a command line), unless its first word
//!   has a `:`: then it runs to the white space after the line's last `@`
//!   (a quoted password with spaces);
//! - the value of a query parameter whose name, percent-decoded, is a
//!   password key (`?pass%77ord=PW`);
//! - the value of a parameter named `password`, `sslpassword`,
//!   `pgpassword`, `passwd`, `pass` or `pwd` (any case, a whole word, the
//!   name possibly quoted: `"password": "PW"`) after `=` or `:` (libpq's
//!   `key=value` strings, `PGPASSWORD=X cmd` in a program's command,
//!   `pass:X`, TOML, JSON); a value quoted with `'` or `"` is masked to its
//!   closing quote, an unquoted one to white space (and `&` or `#` in a
//!   query string), a backslash escaping the next character (libpq); in
//!   one argument that starts with the key (`--password=…`,
//!   `PGPASSWORD=…`), to the argument's end;
//! - the value of such an option given as the next word or argument
//!   (`--password X`, `-pass X`, `--db-password X`: an option whose last
//!   `-`/`_` part is a password key).

use std::borrow::Cow;

/// What a password is replaced with.
pub const MASK: &str = "***";

/// The parameters whose value is a password (round-2 note H22 added
/// `pgpassword`, `passwd`, `pass`; round 5 (A) `pwd`). Longest first:
/// `password` is tried before `pass`.
const PASSWORD_KEYS: [&str; 6] = [
    "sslpassword",
    "pgpassword",
    "password",
    "passwd",
    "pass",
    "pwd",
];

/// `s` with every password in it replaced by [`MASK`].
pub fn redact(s: &str) -> Cow<'_, str> {
    redact_in(s, false)
}

/// `s` as [`redact`] does it, then every occurrence of `secret` (a
/// password rtshield holds: from the URL, `PGPASSWORD`, the password file)
/// masked too: for messages made by another library (a connection error)
/// that may quote it in a form [`redact`] does not recognise.
pub fn redact_known<'a>(s: &'a str, secret: Option<&str>) -> Cow<'a, str> {
    let out = redact(s);
    match secret.filter(|p| !p.is_empty()) {
        Some(p) if out.contains(p) => Cow::Owned(out.replace(p, MASK)),
        _ => out,
    }
}

/// `s`, one whole argument: a URL in it runs to its end (white space
/// included), since the shell's quoting made it one word.
fn redact_in(s: &str, one_word: bool) -> Cow<'_, str> {
    let mut out = Cow::Borrowed(s);
    if s.contains("://") {
        out = Cow::Owned(redact_userinfo(&out, one_word));
    }
    if PASSWORD_KEYS.iter().any(|k| contains_ignore_case(&out, k)) {
        out = Cow::Owned(redact_params(&out, one_word));
    }
    out
}

/// A command line with every argument through [`redact`].
/// The argument after a password option (`--password`, `-pass`,
/// `--db-password`, …, without a value of its own) is masked whole.
pub fn redact_args<I, S>(args: I) -> Vec<String>
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    let mut after_option = false;
    args.into_iter()
        .map(|a| {
            let a = a.as_ref();
            let out = if after_option {
                MASK.to_string()
            } else {
                redact_in(a, true).into_owned()
            };
            after_option = is_password_option(a);
            out
        })
        .collect()
}

/// A command line as one string: each argument through [`redact_args`],
/// then joined with spaces (redacting after joining would lose where an
/// argument holding a space ends).
pub fn redact_command<S: AsRef<str>>(args: &[S]) -> String {
    redact_args(args).join(" ")
}

/// `--password`, `-pass`, `--PGPASSWORD`, `--db-password`, `--pg_pass`…:
/// an option naming a password, whose value is the next argument.
fn is_password_option(a: &str) -> bool {
    let name = a.trim_start_matches('-');
    let last = name.rsplit(['-', '_']).next().unwrap_or(name);
    name.len() < a.len()
        && !name.contains('=')
        && PASSWORD_KEYS
            .iter()
            .any(|k| name.eq_ignore_ascii_case(k) || last.eq_ignore_ascii_case(k))
}

fn contains_ignore_case(s: &str, needle: &str) -> bool {
    s.to_ascii_lowercase().contains(needle)
}

/// Mask the password of every `scheme://user:PW@` in `s`, and the
/// password parameters of each URL's query.
fn redact_userinfo(s: &str, one_word: bool) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find("://") {
        out.push_str(&rest[..i + 3]);
        rest = &rest[i + 3..];
        let url_end = url_end(rest, one_word);
        let url = &rest[..url_end];
        // The user information ends at the URL's last `@`: the parsers
        // disagree (libpq stops at a `/`, the Rust driver at the first
        // `@`), and a password may hold `/`, `?`, `#` or `@`.
        let at = url.rfind('@');
        let tail = match at.and_then(|at| Some((at, url[..at].find(':')?))) {
            Some((at, colon)) => {
                out.push_str(&url[..colon + 1]);
                out.push_str(MASK);
                &url[at..]
            }
            None => url,
        };
        out.push_str(&redact_query(tail));
        rest = &rest[url_end..];
    }
    out.push_str(rest);
    out
}

/// Where the URL at the start of `rest` ends: white space (the end of
/// `rest` for one argument), or, when its first word has a `:` (a user's
/// password, or a port), the white space after the last `@` on the line
/// before another URL (a quoted password with spaces: masked whole).
fn url_end(rest: &str, one_word: bool) -> usize {
    if one_word {
        return rest.len();
    }
    let ws = rest.find(char::is_whitespace).unwrap_or(rest.len());
    if !rest[..ws].contains(':') || ws == rest.len() {
        return ws;
    }
    let line = rest.find('\n').unwrap_or(rest.len());
    let next_url = rest[ws..].find("://").map_or(rest.len(), |j| ws + j);
    let limit = line.min(next_url).max(ws);
    match rest[ws..limit].rfind('@') {
        Some(j) => {
            let at = ws + j;
            at + rest[at..]
                .find(char::is_whitespace)
                .unwrap_or(rest.len() - at)
        }
        None => ws,
    }
}

/// `tail` (`@host/db?query`) with the value of every query parameter whose
/// percent-decoded name is a password key masked.
fn redact_query(tail: &str) -> Cow<'_, str> {
    let Some(q) = tail.find('?') else {
        return Cow::Borrowed(tail);
    };
    let mut out = String::with_capacity(tail.len());
    out.push_str(&tail[..=q]);
    let (query, frag) = match tail[q + 1..].find('#') {
        Some(h) => (&tail[q + 1..q + 1 + h], &tail[q + 1 + h..]),
        None => (&tail[q + 1..], ""),
    };
    for (n, param) in query.split('&').enumerate() {
        if n > 0 {
            out.push('&');
        }
        match param.split_once('=') {
            Some((k, _)) if is_password_key(&percent_decode(k)) => {
                out.push_str(k);
                out.push('=');
                out.push_str(MASK);
            }
            _ => out.push_str(param),
        }
    }
    out.push_str(frag);
    Cow::Owned(out)
}

fn is_password_key(k: &str) -> bool {
    PASSWORD_KEYS
        .iter()
        .any(|p| k.trim().eq_ignore_ascii_case(p))
}

/// `%XX` decoded (bytes that are not UTF-8 kept as U+FFFD).
fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match (
            b[i],
            b.get(i + 1).copied().and_then(hex),
            b.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (c, _, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Mask the value of every password parameter (`password=`, `"pass":`,
/// …): a quoted value to its closing quote, else up to `&`, `#` or white
/// space, a backslash escaping the next character. In one argument that
/// starts with the key (`--password=…`, `PGPASSWORD=…`) the value is the
/// rest of the argument, as the program reading it takes it.
fn redact_params(s: &str, one_word: bool) -> String {
    let lower = s.to_ascii_lowercase();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        let Some(key_len) = password_key_at(&lower, i) else {
            let c = s[i..].chars().next().expect("within the string");
            out.push(c);
            i += c.len_utf8();
            continue;
        };
        // After `?` or `&` (a query string) a value ends at `&` or `#`.
        let query = i > 0 && matches!(s.as_bytes()[i - 1], b'?' | b'&');
        out.push_str(&s[i..i + key_len]);
        i += key_len;
        let value = &s[i..];
        let skip = value.len() - value.trim_start_matches([' ', '\t']).len();
        out.push_str(&value[..skip]);
        out.push_str(MASK);
        let whole = one_word && !s[..i - key_len].contains(char::is_whitespace);
        i += if whole {
            value.len()
        } else {
            skip + value_len(&value[skip..], query)
        };
    }
    out
}

/// The length of the key at `lower[i..]` and of what separates it from
/// its value (`password=`, `PASSWORD = `, `"password": `, `--password `),
/// if a password key starts there as a whole word.
fn password_key_at(lower: &str, i: usize) -> Option<usize> {
    PASSWORD_KEYS.iter().find_map(|k| {
        let before = (i > 0).then(|| lower.as_bytes()[i - 1]);
        let starts_word = before.is_none_or(|b| !b.is_ascii_alphanumeric());
        let after = lower[i..].strip_prefix(k)?;
        // The key is a whole word: `passport=` is no `pass`.
        if !starts_word || after.starts_with(|c: char| c.is_ascii_alphanumeric()) {
            return None;
        }
        // A quoted key (`"password": …`, `'pass' = …`).
        let quote = usize::from(
            before.is_some_and(|b| b == b'"' || b == b'\'') && after.starts_with(['"', '\'']),
        );
        let after = &after[quote..];
        let eq = after.len() - after.trim_start().len();
        if after[eq..].starts_with(['=', ':']) {
            let rest = &after[eq + 1..];
            // `password:` at a line's end (YAML's key with its value on
            // the next lines) or `::`: no value here.
            return (!rest.starts_with(':')).then_some(k.len() + quote + eq + 1);
        }
        // `--password VALUE`: an option, its value the next word
        // (not another option).
        let next = after[eq..].chars().next();
        let option = before == Some(b'-') && eq > 0 && next.is_some_and(|c| c != '-');
        option.then_some(k.len())
    })
}

/// The length of a parameter's value at the start of `value`: a quoted
/// one (`'…'` or `"…"`, with `\'` and `\\` inside) to its closing quote,
/// else up to white space (and `&` or `#` in a query string), a backslash
/// escaping the next character (libpq's unquoted values, where `,` or `&`
/// is part of the password), and white space after any backslash never
/// ending it (`password=a\\ b` in a configuration whose strings double
/// backslashes is libpq's `a\ b`).
fn value_len(value: &str, query: bool) -> usize {
    let quote = value.chars().next().filter(|c| *c == '\'' || *c == '"');
    let body = &value[quote.map_or(0, char::len_utf8)..];
    let mut esc = false;
    for (j, c) in body.char_indices() {
        let end = match (esc, quote) {
            (true, _) => {
                esc = false;
                false
            }
            (false, _) if c == '\\' => {
                esc = true;
                false
            }
            (false, Some(q)) => c == q,
            // White space after a backslash never ends it, however many
            // backslashes (a configuration's own quoting may double them).
            (false, None) => {
                (query && matches!(c, '&' | '#'))
                    || (c.is_whitespace() && !body[..j].ends_with('\\'))
            }
        };
        if end {
            return quote.map_or(0, char::len_utf8) + j + usize::from(quote.is_some());
        }
    }
    value.len()
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_passwords_are_masked() {
        for (i, o) in [
            ("postgres://u:S3cret@db/rt", "postgres://u:***@db/rt"),
            (
                "--store=postgres://u:S3cret@127.0.0.1:1/db",
                "--store=postgres://u:***@127.0.0.1:1/db",
            ),
            (
                "postgresql://u:p@ss@db:5432/rt?x=1",
                "postgresql://u:***@db:5432/rt?x=1",
            ),
            ("postgres://u:pa/ss@db/rt", "postgres://u:***@db/rt"),
            ("postgres://u@db/rt", "postgres://u@db/rt"),
            ("postgres://db:5432/rt", "postgres://db:5432/rt"),
            // The Rust driver reads everything to the first `@` as the
            // user information: "5432/rt?application_name=a" would be
            // its password.
            (
                "postgres://db:5432/rt?application_name=a@b",
                "postgres://db:***@b",
            ),
            (
                "postgres://db:5432/rt?application_name=ab",
                "postgres://db:5432/rt?application_name=ab",
            ),
            ("postgresql://%2Frun%2Fpg/rt", "postgresql://%2Frun%2Fpg/rt"),
            (
                "a http://x:y@h b https://p:q@h/",
                "a http://x:***@h b https://p:***@h/",
            ),
            ("plain label", "plain label"),
        ] {
            assert_eq!(redact(i), o, "{i}");
        }
    }

    #[test]
    fn password_parameters_are_masked() {
        for (i, o) in [
            (
                "postgres://u@db/rt?password=S3cret&sslmode=require",
                "postgres://u@db/rt?password=***&sslmode=require",
            ),
            (
                "host=db password=S3cret user=u",
                "host=db password=*** user=u",
            ),
            (
                "host=db PASSWORD = 'S3 c\\'ret' user=u",
                "host=db PASSWORD = *** user=u",
            ),
            ("sslpassword=k", "sslpassword=***"),
            ("mypassword=fine", "mypassword=fine"),
            // Round-2 note H22.
            ("PGPASSWORD=S3cret psql -h db", "PGPASSWORD=*** psql -h db"),
            ("env PGPASSWORD=S3cret psql", "env PGPASSWORD=*** psql"),
            ("tool --password S3cret -v", "tool --password *** -v"),
            ("tool --password=S3cret -v", "tool --password=*** -v"),
            ("tool -pass S3cret", "tool -pass ***"),
            ("login pass=S3cret user=u", "login pass=*** user=u"),
            ("login password:S3cret", "login password:***"),
            ("passwd=S3cret", "passwd=***"),
            (
                "passport=fine bypass=fine --pass --x",
                "passport=fine bypass=fine --pass --x",
            ),
            (
                "passwords are not named here",
                "passwords are not named here",
            ),
        ] {
            assert_eq!(redact(i), o, "{i}");
        }
        assert_eq!(
            redact_args(["rtshield", "measure", "--store", "postgres://u:PW@h/d"]),
            ["rtshield", "measure", "--store", "postgres://u:***@h/d"]
        );
        assert_eq!(
            redact_args(["tool", "--password", "S3 cret", "-v"]),
            ["tool", "--password", "***", "-v"]
        );
    }

    /// Round 5 (A), F02/F06: the forms the first redactor let through.
    #[test]
    fn f02_every_form_of_a_password_is_masked() {
        for (i, o) in [
            ("POSTGRES://u:S3cret@db/rt", "POSTGRES://u:***@db/rt"),
            ("postgres://u:pa?ss@db/rt", "postgres://u:***@db/rt"),
            ("postgres://u:pa#ss@db/rt", "postgres://u:***@db/rt"),
            ("postgres://u:p%40ss@db/rt", "postgres://u:***@db/rt"),
            (
                "psql 'postgres://u:p ss@db/rt' -c x",
                "psql 'postgres://u:***@db/rt' -c x",
            ),
            (
                "postgres://u@db/rt?pass%77ord=S3cret&x=1",
                "postgres://u@db/rt?pass%77ord=***&x=1",
            ),
            (
                "postgres://u@db/rt?PassWord=S3cret",
                "postgres://u@db/rt?PassWord=***",
            ),
            (
                "host=db password=S3\\ cret user=u",
                "host=db password=*** user=u",
            ),
            (
                "host=db password=a,b&c user=u",
                "host=db password=*** user=u",
            ),
            // A configuration's quoting doubles the backslash.
            (
                "\"host=db password=a\\\\ S3cret\"",
                "\"host=db password=***",
            ),
            (
                "sh -c 'PGPASSWORD=\"S3 cret\" psql'",
                "sh -c 'PGPASSWORD=*** psql'",
            ),
            (
                "{\"password\": \"S3 cret\", \"u\": 1}",
                "{\"password\": ***, \"u\": 1}",
            ),
            ("password = \"S3 cret\"", "password = ***"),
            ("ODBC;PWD=S3cret;UID=u", "ODBC;PWD=***"),
        ] {
            assert_eq!(redact(i), o, "{i}");
        }
        for (i, o) in [
            (
                vec!["psql", "postgres://u:p w@db/rt"],
                vec!["psql", "postgres://u:***@db/rt"],
            ),
            (
                vec!["tool", "--db-password", "S3cret", "-v"],
                vec!["tool", "--db-password", "***", "-v"],
            ),
            (
                vec!["tool", "--pg_pass", "S3cret"],
                vec!["tool", "--pg_pass", "***"],
            ),
            (
                vec!["env", "PGPASSWORD=S3 cret", "psql"],
                vec!["env", "PGPASSWORD=***", "psql"],
            ),
        ] {
            assert_eq!(redact_args(&i), o, "{i:?}");
        }
        assert_eq!(
            redact_command(&["psql", "postgres://u:p w@db/rt"]),
            "psql postgres://u:***@db/rt"
        );
        assert_eq!(
            redact_known("error: bad auth for 'S3cret'", Some("S3cret")),
            "error: bad auth for '***'"
        );
        assert_eq!(redact_known("fine", Some("")), "fine");
    }

    /// A password as the generators make it: letters `U V X Y Z` (which
    /// no other generated text holds, keys and schemes included) at both ends, and between them any of
    /// the characters that end a URL's parts or a parameter's value.
    fn password() -> impl proptest::strategy::Strategy<Value = String> {
        "[UVXYZ][UVXYZ@:/?#% &=+!,;'\"\\\\]{0,12}[UVXYZ]"
    }

    /// Whether `s` still holds a piece of a generated password.
    fn leaks(s: &str) -> bool {
        s.contains(['U', 'V', 'X', 'Y', 'Z'])
    }

    /// `pw` as a libpq `key=value` value: quoted (`'` and `\` escaped) or
    /// bare (white space, quotes and `\` escaped).
    fn libpq_value(pw: &str, quoted: bool) -> String {
        let mut v = String::new();
        for c in pw.chars() {
            if c == '\\' || c == '\'' || (!quoted && (c.is_whitespace() || c == '"')) {
                v.push('\\');
            }
            v.push(c);
        }
        if quoted {
            format!("'{v}'")
        } else {
            v
        }
    }

    /// `pw` percent-encoded where a URL's user information needs it (a
    /// careful user) or only `%` itself (a careless one).
    fn in_url(pw: &str, careful: bool) -> String {
        pw.chars()
            .map(|c| match c {
                '%' => "%25".to_string(),
                '@' | ':' | '/' | '?' | '#' | ' ' if careful => format!("%{:02X}", c as u32),
                c => c.to_string(),
            })
            .collect()
    }

    /// `pw` percent-encoded as a query value.
    fn in_query(pw: &str) -> String {
        pw.chars()
            .map(|c| match c {
                c if c.is_ascii_alphanumeric() => c.to_string(),
                c => format!("%{:02X}", c as u32),
            })
            .collect()
    }

    proptest::proptest! {
        #[test]
        fn f02_no_generated_password_survives(
            scheme in "(postgres|postgresql|POSTGRES|PostgreSQL|http)",
            user in "[a-j]{0,6}",
            pw in password(),
            careful in proptest::bool::ANY,
            quoted in proptest::bool::ANY,
            host in "[a-j]{1,6}(:[0-9]{1,5})?",
            query in "(\\?sslmode=require|\\?application_name=[a-j]{1,4}|)",
            key in "(password|PASSWORD|sslpassword|PGPASSWORD|passwd|pass|pwd)",
            pre in "[a-j0-9 ./=_-]{0,8}",
        ) {
            let u = in_url(&pw, careful);
            // In a URL's user information, in its query, in libpq's
            // key=value text, in a program's command, in argv.
            let texts = [
                format!("{pre} {scheme}://{user}:{u}@{host}/rt{query}"),
                format!("{pre} {scheme}://{user}@{host}/rt?{key}={}&x=1", in_query(&pw)),
                format!("host={host} {key}={} user={user}", libpq_value(&pw, quoted)),
                format!("{pre} env {key}={} psql -h {host}", libpq_value(&pw, true)),
            ];
            for t in &texts {
                let r = redact(t);
                proptest::prop_assert!(!leaks(&r), "{t} -> {r}");
            }
            let argvs = [
                vec!["psql".to_string(), format!("{scheme}://{user}:{u}@{host}/rt{query}")],
                vec!["tool".to_string(), format!("--{key}"), pw.clone(), "-v".into()],
                vec!["tool".to_string(), format!("--db-{key}"), pw.clone()],
                vec!["env".to_string(), format!("{key}={pw}"), "psql".into()],
                vec!["tool".to_string(), format!("--{key}={pw}")],
            ];
            for a in &argvs {
                let r = redact_args(a).join(" ");
                proptest::prop_assert!(!leaks(&r), "{a:?} -> {r}");
                let c = redact_command(a);
                proptest::prop_assert!(!leaks(&c), "{a:?} -> {c}");
            }
        }

        #[test]
        fn f02_text_without_a_secret_is_unchanged(
            words in proptest::collection::vec("[a-j0-9./_=-]{1,8}", 0..8),
            host in "[a-j]{1,6}(:[0-9]{1,5})?",
            query in "(\\?sslmode=require|\\?application_name=[a-j]{1,4}|)",
            user in "[a-j]{1,6}",
        ) {
            let mut t = words.join(" ");
            t.push_str(&format!(" postgres://{host}/rt{query} postgresql://{user}@{host}/rt{query}"));
            let r = redact(&t).into_owned();
            proptest::prop_assert_eq!(r, t.clone());
            let args: Vec<&str> = t.split(' ').collect();
            proptest::prop_assert_eq!(redact_args(&args), args);
        }

        #[test]
        fn a_password_never_survives(
            user in "[a-z]{1,8}",
            pw in "[A-Za-z0-9!$%^*()_+=/@:.-]{1,16}",
            host in "[a-z]{1,8}(:[0-9]{1,5})?",
            pre in "\\PC{0,8}",
        ) {
            let pw = format!("PW{pw}");
            let url = format!("{pre} postgres://{user}:{pw}@{host}/rt");
            let r = redact(&url);
            proptest::prop_assert!(!r.contains(&pw), "{r}");
            let kv = format!("host={host} password={pw} user={user}");
            proptest::prop_assert!(!redact(&kv).contains(&pw));
        }
    }
}
