//! Secrets in recorded text: the command line a result records, a store's
//! URL in a message.
//!
//! A password on the command line (`--store postgres://u:PW@db/rt`) must
//! not reach a file, a store or a terminal: [`redact`] replaces it with
//! [`MASK`] where the command line is captured, before anything is
//! written. What is a password: the password of a URL's user information
//! (`scheme://user:PW@host`, any scheme), and the value of a `password=`
//! or `sslpassword=` parameter (a URL's query, libpq's `key=value`
//! connection strings). Over-redaction is preferred to a leak: in a URL
//! everything from the user's `:` to the last `@` before the query is
//! masked, so a password holding an unencoded `/` or `@` is masked whole.

use std::borrow::Cow;

/// What a password is replaced with.
pub const MASK: &str = "***";

/// The parameters whose value is a password.
const PASSWORD_KEYS: [&str; 2] = ["password", "sslpassword"];

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
pub fn redact_args<I, S>(args: I) -> Vec<String>
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    args.into_iter()
        .map(|a| redact(a.as_ref()).into_owned())
        .collect()
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
            let starts_word = i == 0 || !lower.as_bytes()[i - 1].is_ascii_alphanumeric();
            let rest = &lower[i..];
            let after = rest.strip_prefix(k)?;
            let eq = after.len() - after.trim_start().len();
            (starts_word && after[eq..].starts_with('=')).then_some(k.len() + eq + 1)
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
        let skip = value.len() - value.trim_start_matches(' ').len();
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
