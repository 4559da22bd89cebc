//! Secrets in recorded text: the command line a result records, a store's
//! URL in a message.
//!
//! A password on the command line (`--store postgres://u:PW@db/rt`) must
//! not reach a file, a store or a terminal: [`redact`] replaces it with
//! [`MASK`] where the command line is captured, before anything is
//! written. What is a password: the password of a URL's user information
//! (`scheme://user:PW@host`, any scheme); the value of a parameter named
//! `password`, `sslpassword`, `pgpassword`, `passwd` or `pass` (any case)
//! after `=` or `:` (a URL's query, libpq's `key=value` connection
//! strings, `PGPASSWORD=X cmd` in a program's command, `pass:X`); and the
//! value of such an option given as the next word (`--password X`, `-pass
//! X`). Over-redaction is preferred to a leak: in a URL
//! everything from the user's `:` to the last `@` before the query is
//! masked, so a password holding an unencoded `/` or `@` is masked whole.

use std::borrow::Cow;

/// What a password is replaced with.
pub const MASK: &str = "***";

/// The parameters whose value is a password (round-2 note H22 added
/// `pgpassword`, `passwd`, `pass`). Longest first: `password` is tried
/// before `pass`.
const PASSWORD_KEYS: [&str; 5] = ["sslpassword", "pgpassword", "password", "passwd", "pass"];

/// `s` with every password in it replaced by [`MASK`].
pub fn redact(s: &str) -> Cow<'_, str> {
    let mut out = Cow::Borrowed(s);
    if s.contains("://") {
        out = Cow::Owned(redact_userinfo(&out));
    }
    if PASSWORD_KEYS.iter().any(|k| contains_ignore_case(&out, k)) {
        out = Cow::Owned(redact_params(&out));
    }
    out
}

/// A command line with every argument through [`redact`].
/// The argument after a password option (`--password`, `-pass`, …,
/// without a value of its own) is masked whole.
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
                redact(a).into_owned()
            };
            after_option = is_password_option(a);
            out
        })
        .collect()
}

/// `--password`, `-pass`, `--PGPASSWORD`…: an option naming a password,
/// whose value is the next argument.
fn is_password_option(a: &str) -> bool {
    let name = a.trim_start_matches('-');
    name.len() < a.len() && PASSWORD_KEYS.iter().any(|k| name.eq_ignore_ascii_case(k))
}

fn contains_ignore_case(s: &str, needle: &str) -> bool {
    s.to_ascii_lowercase().contains(needle)
}

/// Mask the password of every `scheme://user:PW@` in `s`.
fn redact_userinfo(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find("://") {
        out.push_str(&rest[..i + 3]);
        rest = &rest[i + 3..];
        // The URL ends at white space. Its user information ends at the
        // last `@` before the query (`?`) or fragment (`#`): a password
        // may hold an unencoded `/` or `@`, a path rarely holds an `@`.
        let url_end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let url = &rest[..url_end];
        let query = url.find(['?', '#']).unwrap_or(url.len());
        let at = url[..query].rfind('@');
        let Some(at) = at else { continue };
        match url[..at].find(':') {
            Some(colon) => {
                out.push_str(&url[..colon + 1]);
                out.push_str(MASK);
                out.push_str(&url[at..url_end]);
            }
            None => out.push_str(url),
        }
        rest = &rest[url_end..];
    }
    out.push_str(rest);
    out
}

/// Mask the value of every `password=` / `sslpassword=` parameter: up to
/// `&`, `#` or white space (a quoted libpq value up to its closing quote).
fn redact_params(s: &str) -> String {
    let lower = s.to_ascii_lowercase();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        let hit = PASSWORD_KEYS.iter().find_map(|k| {
            let before = (i > 0).then(|| lower.as_bytes()[i - 1]);
            let starts_word = before.is_none_or(|b| !b.is_ascii_alphanumeric());
            let rest = &lower[i..];
            let after = rest.strip_prefix(k)?;
            // The key is a whole word: `passport=` is no `pass`.
            if !starts_word || after.starts_with(|c: char| c.is_ascii_alphanumeric()) {
                return None;
            }
            let eq = after.len() - after.trim_start().len();
            if after[eq..].starts_with(['=', ':']) {
                return Some(k.len() + eq + 1);
            }
            // `--password VALUE`: an option, its value the next word
            // (not another option).
            let next = after[eq..].chars().next();
            let option = before == Some(b'-') && eq > 0 && next.is_some_and(|c| c != '-');
            option.then_some(k.len())
        });
        let Some(key_len) = hit else {
            let c = s[i..].chars().next().expect("within the string");
            out.push(c);
            i += c.len_utf8();
            continue;
        };
        out.push_str(&s[i..i + key_len]);
        i += key_len;
        let value = &s[i..];
        let skip = value.len() - value.trim_start_matches([' ', '\t']).len();
        out.push_str(&value[..skip]);
        let value = &value[skip..];
        let len = if let Some(q) = value.strip_prefix('\'') {
            // libpq quoting: `'…'` with `\'` and `\\` inside.
            let mut end = q.len();
            let mut esc = false;
            for (j, c) in q.char_indices() {
                match (esc, c) {
                    (true, _) => esc = false,
                    (false, '\\') => esc = true,
                    (false, '\'') => {
                        end = j + 1;
                        break;
                    }
                    _ => {}
                }
            }
            1 + end
        } else {
            value
                .find(|c: char| c == '&' || c == '#' || c.is_whitespace())
                .unwrap_or(value.len())
        };
        out.push_str(MASK);
        i += skip + len;
    }
    out
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
            (
                "postgres://db:5432/rt?application_name=a@b",
                "postgres://db:5432/rt?application_name=a@b",
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

    proptest::proptest! {
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
