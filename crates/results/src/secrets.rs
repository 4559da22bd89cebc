//! No secret leaves a result: every text of a [`RunResult`] a password can
//! reach (its command line, its programs' and loads' commands, the
//! configuration it recorded, its label and tags: a campaign's `cmd:` load
//! is a tag) goes through the one redactor, `rtshield_text::secret`, where
//! the result is read, rendered into files and stored. The capture points
//! redact too (`measure`, `run`, `noise`, `demo`, a campaign's cells):
//! this is the last gate, for a result built by any other path (an import,
//! an older rtshield's file, a future capture point).

use crate::RunResult;
use rtshield_text::secret::{redact, redact_args};
use std::borrow::Cow;

impl RunResult {
    /// Every password in the result's texts replaced by `***`.
    pub fn redact_secrets(&mut self) {
        self.command = redact_args(&self.command);
        for p in &mut self.programs {
            p.command = redact(&p.command).into_owned();
        }
        if let Some(c) = &mut self.config {
            *c = redact(c).into_owned();
        }
        if let Some(l) = &mut self.label {
            *l = redact(l).into_owned();
        }
        for v in self.tags.values_mut() {
            *v = redact(v).into_owned();
        }
    }

    /// Whether [`RunResult::redact_secrets`] would change anything.
    pub fn holds_secrets(&self) -> bool {
        let changes = |s: &str| matches!(redact(s), Cow::Owned(o) if o != s);
        redact_args(&self.command) != self.command
            || self.programs.iter().any(|p| changes(&p.command))
            || self.config.as_deref().is_some_and(changes)
            || self.label.as_deref().is_some_and(changes)
            || self.tags.values().any(|v| changes(v))
    }

    /// The result as it may be written or stored: borrowed when it holds
    /// no secret, else a redacted copy.
    pub fn without_secrets(&self) -> Cow<'_, RunResult> {
        if self.holds_secrets() {
            let mut r = self.clone();
            r.redact_secrets();
            Cow::Owned(r)
        } else {
            Cow::Borrowed(self)
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::example_result;

    /// Round 5 (A), F02: the last gate redacts every text of a result.
    #[test]
    fn f02_no_text_of_a_result_keeps_a_password() {
        let mut r = example_result();
        assert!(!r.holds_secrets());
        assert!(matches!(r.without_secrets(), std::borrow::Cow::Borrowed(_)));
        r.command = vec!["rtshield".into(), "--db-password".into(), "S3cret".into()];
        r.config = Some("store = postgres://u:S3cret@db/rt\n".into());
        r.label = Some("PGPASSWORD=S3cret".into());
        r.tags
            .insert("load".into(), "cmd:psql password='S3 cret'".into());
        assert!(r.holds_secrets());
        let clean = r.without_secrets();
        let json = serde_json::to_string(&*clean).unwrap();
        assert!(!json.contains("S3cret") && !json.contains("cret"), "{json}");
        let files = crate::ExportManager::all().render(&r);
        for (name, text) in files {
            assert!(!text.contains("S3cret"), "{name}");
        }
    }
}
