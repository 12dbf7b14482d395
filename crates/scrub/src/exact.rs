//! The first scrubbing layer: values known to be secret, replaced wherever they appear.
//!
//! crontap-run knows some secrets outright: the heartbeat URL and its parts, the state
//! store's user and password, and the values of its own environment variables whose names
//! look secret (`TOKEN`, `SECRET`, `PASSWORD`, `PASSWD`, `PWD`, `KEY`, `DSN`, `CREDENTIAL`,
//! `AUTH`, `COOKIE`, `SESSION`). A job that prints one of them, whatever its shape, has it
//! replaced before any other layer looks at the text.

use std::borrow::Cow;
use std::ffi::OsString;
use std::sync::OnceLock;

use regex::{Regex, RegexBuilder};

use url::Url;

use super::marker::REDACTED;

/// Values shorter than this are not matched exactly: they would hit ordinary words.
const MIN_EXACT_LEN: usize = 6;

/// Parts of environment variable names that mark their values as secret.
const SECRET_NAME_PARTS: &[&str] = &[
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "PWD",
    "KEY",
    "DSN",
    "CREDENTIAL",
    "AUTH",
    "COOKIE",
    "SESSION",
];

/// Last parts of variable names that say where a secret is or how it is used, not what it
/// is (`GOOGLE_APPLICATION_CREDENTIALS_FILE`, `AUTH_METHOD=password`).
const NOT_A_SECRET_SUFFIX: &[&str] = &[
    "FILE", "PATH", "DIR", "METHOD", "PROVIDER", "TYPE", "MODE", "KIND", "ENABLED", "REQUIRED",
    "NAME",
];

/// Well-known variables whose names match [`SECRET_NAME_PARTS`] but hold no secret (the
/// working directory, desktop session facts, the SSH agent's socket), and names ending in
/// [`NOT_A_SECRET_SUFFIX`].
fn known_harmless(name: &str) -> bool {
    let suffix = name.rsplit('_').next().unwrap_or(name);
    NOT_A_SECRET_SUFFIX.contains(&suffix)
        || matches!(
            name,
            "PWD"
                | "OLDPWD"
                | "SSH_AUTH_SOCK"
                | "XAUTHORITY"
                | "DESKTOP_SESSION"
                | "SESSION_MANAGER"
        )
        || name.starts_with("XDG_")
}

/// The credentials `url` carries: its user and its password, each as written and
/// percent-decoded, without repeats. Empty when it carries none.
pub fn url_credentials(url: &Url) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for part in [url.username(), url.password().unwrap_or_default()] {
        let decoded = percent_encoding::percent_decode_str(part).decode_utf8_lossy();
        for s in [part, &decoded] {
            if !s.is_empty() && !out.iter().any(|o| o == s) {
                out.push(s.to_owned());
            }
        }
    }
    out
}

/// Last parts of variable names that name a credential beyond [`SECRET_NAME_PARTS`]
/// (`DB_PASS`, `SMTP_PW`, `GPG_PASSPHRASE`, `AWS_SECRET_ACCESS_KEY`, `SA_CREDENTIALS`).
const SECRET_NAME_ENDS: &[&str] = &["PASS", "PW", "PASSPHRASE", "CREDENTIALS", "PIN"];

/// The values of the variables in `env` whose names look secret (a name holding one of
/// [`SECRET_NAME_PARTS`] or ending in one of [`SECRET_NAME_ENDS`]), and the password of
/// every value that is a URL or DSN with user info (`DATABASE_URL=postgres://app:…@db`),
/// as written and percent-decoded.
pub fn secret_values(
    env: impl IntoIterator<Item = (OsString, OsString)>,
) -> impl Iterator<Item = String> {
    env.into_iter().flat_map(|(name, value)| {
        let name = name.to_string_lossy().to_ascii_uppercase();
        let last = name.rsplit('_').next().unwrap_or(&name);
        let named = SECRET_NAME_PARTS.iter().any(|part| name.contains(part))
            || SECRET_NAME_ENDS.contains(&last);
        let value = value.into_string().ok();
        let mut out = Vec::new();
        if let Some(value) = value {
            out.extend(url_password(&value));
            if named && !known_harmless(&name) {
                out.push(value);
            }
        }
        out
    })
}

/// The password of `value` when it is a URL with user info, as written and decoded.
fn url_password(value: &str) -> Vec<String> {
    let value = value.trim();
    if !value.contains("://") || !value.contains('@') {
        return Vec::new();
    }
    match Url::parse(value) {
        Ok(url) => match url.password() {
            Some(password) => {
                let decoded = percent_encoding::percent_decode_str(password)
                    .decode_utf8_lossy()
                    .into_owned();
                let mut out = vec![password.to_owned()];
                if decoded != password {
                    out.push(decoded);
                }
                out
            }
            None => Vec::new(),
        },
        Err(_) => Vec::new(),
    }
}

/// Exact secret values, longest first so that a value containing another is replaced whole.
///
/// A value is found however it was written out: in any case (`TOKEN` for `token`, as a
/// log line or a header may print it), with any of its characters percent-encoded
/// (`s3cr%33t`, `p%40ss`, as a URL or a form body carries it; `+` for a space), and, since
/// the scrubber drops zero-width characters first, with those slipped inside. The pattern
/// that does so compiles on the first use, which only a failure reaches.
pub struct Values {
    values: Vec<String>,
    pattern: OnceLock<Option<Regex>>,
}

impl Values {
    pub fn new(values: impl IntoIterator<Item = String>) -> Values {
        // A mounted secret often ends in a newline: match the value with and without the
        // surrounding whitespace.
        let mut values: Vec<String> = values
            .into_iter()
            .flat_map(|v| [v.trim().to_owned(), v])
            .filter(|v| v.trim().len() >= MIN_EXACT_LEN)
            .collect();
        values.sort_by_key(|v| std::cmp::Reverse(v.len()));
        values.dedup();
        Values {
            values,
            pattern: OnceLock::new(),
        }
    }

    /// The values themselves, longest first.
    pub fn values(&self) -> &[String] {
        &self.values
    }

    /// `text` with every known value replaced by [`REDACTED`].
    pub fn redact<'t>(&self, text: &'t str) -> Cow<'t, str> {
        match self.pattern.get_or_init(|| pattern(&self.values)) {
            Some(pattern) => pattern.replace_all(text, REDACTED),
            None => Cow::Borrowed(text),
        }
    }
}

/// One pattern for all `values`, longest first (the leftmost alternative wins where two
/// start at the same place), each character literal or percent-encoded, in any case.
fn pattern(values: &[String]) -> Option<Regex> {
    if values.is_empty() {
        return None;
    }
    let alternatives: Vec<String> = values.iter().map(|v| spelled_any_way(v)).collect();
    let pattern = format!("(?i:{})", alternatives.join("|"));
    // A pattern too large to compile (values of many kilobytes) falls back to nothing
    // rather than stopping the report; the other layers still run.
    RegexBuilder::new(&pattern)
        .size_limit(16 << 20)
        .build()
        .ok()
}

/// `value` as a pattern in which every character may also be percent-encoded or escaped
/// as JSON escapes it (`\u0026`, `\/`), and one space may stand between two characters (a
/// line-like character the scrubber turned into a space, or a wrapped line, split it).
fn spelled_any_way(value: &str) -> String {
    let mut out = String::with_capacity(value.len() * 16);
    let mut utf8 = [0; 4];
    for (i, c) in value.chars().enumerate() {
        if i > 0 {
            out.push_str("[ \t]?");
        }
        out.push_str("(?:");
        out.push_str(&regex::escape(c.encode_utf8(&mut utf8)));
        out.push('|');
        for byte in c.encode_utf8(&mut utf8).bytes() {
            out.push_str(&format!("%{byte:02X}"));
        }
        if let Ok(unit) = u16::try_from(u32::from(c)) {
            out.push_str(&format!(r"|\\u{unit:04X}"));
        }
        if matches!(c, '/' | '"' | '\\') {
            out.push_str(r"|\\");
            out.push_str(&regex::escape(c.encode_utf8(&mut utf8)));
        }
        if c == ' ' {
            out.push_str(r"|\+");
        }
        out.push(')');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn credentials(url: &str) -> Vec<String> {
        url_credentials(&Url::parse(url).unwrap())
    }

    #[test]
    fn url_credentials_are_user_and_password_as_written_and_decoded() {
        assert_eq!(
            credentials("redis://ops:p%40ss%2Fword@cache.example:6379/0"),
            ["ops", "p%40ss%2Fword", "p@ss/word"]
        );
        assert_eq!(credentials("https://token@hc.example/x"), ["token"]);
        assert_eq!(credentials("postgres://:secret1@db/jobs"), ["secret1"]);
        assert!(credentials("https://hc.example/ping/abc?x=1").is_empty());
    }

    #[test]
    fn environment_secrets() {
        let env = [
            ("DB_PASS", "Pq7wXr2mKt"),
            ("MYSQL_PWD", "Lm3nB8vCx"),
            ("API_KEY", "k-2938475"),
            ("GITHUB_TOKEN", "ghp_example0"),
            ("AWS_SECRET_ACCESS_KEY", "aws-secret-1"),
            ("SA_CREDENTIALS", "{\"k\":1}"),
            ("DATABASE_URL", "postgres://app:Zx9%40Wq4r@db/jobs"),
            ("SSH_AUTH_SOCK", "/tmp/ssh-agent.sock"),
            ("PASSPORT_COUNTRY", "NZ"),
            ("HOME", "/root"),
            ("SITE_URL", "https://example.com/"),
        ]
        .map(|(k, v)| (OsString::from(k), OsString::from(v)));
        let got: Vec<String> = secret_values(env).collect();
        assert_eq!(
            got,
            [
                "Pq7wXr2mKt",
                "Lm3nB8vCx",
                "k-2938475",
                "ghp_example0",
                "aws-secret-1",
                "{\"k\":1}",
                "Zx9%40Wq4r",
                "Zx9@Wq4r",
            ]
        );
    }

    #[test]
    fn known_values_are_found_however_they_are_written() {
        let values = Values::new(["s3cr3tT0ken".to_owned(), "p@ss word/1".to_owned()]);
        for text in [
            "s3cr3tT0ken",
            "S3CR3TT0KEN",
            "s3cr%33tT0ken",
            "%73%33%63%72%33%74%54%30%6b%65%6e",
            "p%40ss%20word%2F1",
            "P%40SS+WORD%2f1",
            "p@ss word/1",
        ] {
            assert_eq!(
                values.redact(&format!("<{text}>")),
                "<[REDACTED]>",
                "{text}"
            );
        }
        // JSON's escapes, and a space where a line-like character split the value.
        for text in [
            "p@ss word\\/1",
            "p\\u0040ss word/1",
            "s3cr3t T0ken",
            "s3cr3tT0k\ten",
        ] {
            assert_eq!(
                values.redact(&format!("<{text}>")),
                "<[REDACTED]>",
                "{text}"
            );
        }
        // Only the value: its neighbours stay.
        assert_eq!(values.redact("xs3cr3tT0kenx"), "x[REDACTED]x");
        assert_eq!(values.redact("s3cr3tT0ke"), "s3cr3tT0ke");
        assert_eq!(Values::new([]).redact("anything"), "anything");
    }
}
