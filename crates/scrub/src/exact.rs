//! The first scrubbing layer: values known to be secret, replaced wherever they appear.
//!
//! crontap-run knows some secrets outright: the heartbeat URL and its parts, the state
//! store's user and password, and the values of its own environment variables whose names
//! look secret (`TOKEN`, `SECRET`, `PASSWORD`, `PASSWD`, `PWD`, `KEY`, `DSN`, `CREDENTIAL`,
//! `AUTH`, `COOKIE`, `SESSION`). A job that prints one of them, whatever its shape, has it
//! replaced before any other layer looks at the text.

use std::borrow::Cow;
use std::ffi::OsString;

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

/// The values of the variables in `env` whose names look secret.
pub fn secret_values(
    env: impl IntoIterator<Item = (OsString, OsString)>,
) -> impl Iterator<Item = String> {
    env.into_iter().filter_map(|(name, value)| {
        let name = name.to_string_lossy().to_ascii_uppercase();
        let secret =
            SECRET_NAME_PARTS.iter().any(|part| name.contains(part)) && !known_harmless(&name);
        secret.then(|| value.into_string().ok()).flatten()
    })
}

/// Exact secret values, longest first so that a value containing another is replaced whole.
pub struct Values(Vec<String>);

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
        Values(values)
    }

    /// `text` with every known value replaced by [`REDACTED`].
    pub fn redact<'t>(&self, text: &'t str) -> Cow<'t, str> {
        let mut text = Cow::Borrowed(text);
        for value in &self.0 {
            if text.contains(value.as_str()) {
                text = Cow::Owned(text.replace(value.as_str(), REDACTED));
            }
        }
        text
    }
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
}
