//! Credentials recognised by where they stand rather than by their shape: the value goes,
//! the name around it stays.
//!
//! - `scheme://user:password@host` in any URL or DSN (postgres, mysql, mongodb+srv, redis,
//!   amqp, `jdbc:…`): the whole user-info part goes, since a user name can be a token too;
//! - `Authorization:`, `Proxy-Authorization:`, `Cookie:`, `Set-Cookie:`, `X-Api-Key:` and
//!   similar headers: everything after the colon;
//! - `curl -u user:pass` and `--user user:pass`;
//! - credential query parameters (`access_token`, `api_key`, `sig`, `client_secret`,
//!   `X-Amz-Signature`, …);
//! - `name=value`, `name: value`, `"name": "value"` and `--name value` where the name is a
//!   secret's: its parts (split at `_`, `-`, `.` and camelCase humps) include a word such as
//!   `password`, `secret`, `token`, `credentials`, `dsn`, `cookie`, `session`, or `key` after
//!   `api`, `access`, `private`, `secret`, `signing`… Names ending in `file`, `path` or `dir`
//!   hold a location, not a secret, and names ending in `Error` or `Exception` are error
//!   classes; both are left alone.
//!
//! Text such as `password authentication failed for user "app"` has no value position and
//! stays as it is.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::{Captures, Regex};

use crate::scrub::REDACTED;

/// Words that make a name a secret's wherever they stand in it.
const SECRET_WORDS: &[&str] = &[
    "password",
    "passwd",
    "pwd",
    "pass",
    "passphrase",
    "secret",
    "secrets",
    "token",
    "tokens",
    "apikey",
    "credential",
    "credentials",
    "creds",
    "dsn",
    "cookie",
    "session",
    "sessionid",
    "auth",
    "authorization",
    "bearer",
    "signature",
    "privatekey",
    "accesskey",
    "secretkey",
];
/// Words that make a following `key` (or `id` for `secret`) a secret's.
const KEY_QUALIFIERS: &[&str] = &[
    "api",
    "access",
    "private",
    "secret",
    "signing",
    "encryption",
    "master",
    "account",
    "client",
    "license",
    "app",
    "auth",
    "service",
];
/// Last parts of names that hold a location or a fact about the secret, not the secret, or
/// that make the name an error's (`NoCredentialsError: Unable to locate credentials`).
const NOT_A_VALUE: &[&str] = &[
    "file",
    "path",
    "dir",
    "env",
    "length",
    "len",
    "expiry",
    "expires",
    "type",
    "error",
    "errors",
    "exception",
    "err",
    "warning",
    "failure",
    "failed",
    "invalid",
    "expired",
    "missing",
    "required",
    "mismatch",
];

static URL_USERINFO: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b([a-z][a-z0-9+.\-]*:(?:[a-z0-9+.\-]+:)?//)([^\s/?#@\[\]]+)@")
        .expect("valid pattern")
});

static HEADER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"(?im)\b((?:proxy-)?authorization|set-cookie|cookie|x-api-key|api-key|x-auth-token|x-access-token|x-amz-security-token|private-token|x-vault-token)(\s*:\s*)([^\r\n"'}]+)"#,
    )
    .expect("valid pattern")
});

static CURL_USER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(\s(?:-u|--user|--proxy-user)(?:\s+|=))("[^"]*"|'[^']*'|\S+)"#)
        .expect("valid pattern")
});

/// `Password=…;` and `Pwd=…;` in connection strings, where a value may hold spaces.
static CONNECTION_STRING: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b((?:password|pwd)\s*=\s*)([^;\r\n\[][^;\r\n]*);").expect("valid pattern")
});

static QUERY_PARAM: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)([?&;](?:access_token|refresh_token|id_token|auth_token|api_key|apikey|api-key|key|sig|signature|client_secret|code|password|passwd|token|secret|x-amz-signature|x-amz-credential|x-amz-security-token|x-goog-signature|x-goog-credential)=)([^&;\s#'\x22<>\[][^&;\s#'\x22<>]*)",
    )
    .expect("valid pattern")
});

/// A name, its separator (with any quotes), and the value, quoted or bare. The name is
/// judged in code ([`names_a_secret`]).
static ASSIGNMENT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"(?x)
        (?P<name>--?[A-Za-z][\w.\-]*|[A-Za-z_][\w.\-]*)
        (?P<sep>
            "?\s*[:=]\s*"(?P<dq>[^"\n]*)"
          | '?\s*[:=]\s*'(?P<sq>[^'\n]*)'
          | ["']?[\ \t]*[:=][\ \t]*(?P<bare>[^\s"',;&\[\]\)\}][^\s"',;&\]\)\}]*)
          | [\ \t]+(?P<flag>[^\s"'-][^\s"',;&]*)
        )"#,
    )
    .expect("valid pattern")
});

/// Replaces structurally placed credentials with [`REDACTED`].
pub fn redact(text: &str) -> Cow<'_, str> {
    let mut text = Cow::Borrowed(text);
    replace(&mut text, &URL_USERINFO, |c| {
        format!("{}{REDACTED}@", &c[1])
    });
    replace(&mut text, &HEADER, |c| {
        format!("{}{}{REDACTED}", &c[1], &c[2])
    });
    replace(&mut text, &CURL_USER, |c| format!("{}{REDACTED}", &c[1]));
    replace(&mut text, &CONNECTION_STRING, |c| {
        format!("{}{REDACTED};", &c[1])
    });
    replace(&mut text, &QUERY_PARAM, |c| format!("{}{REDACTED}", &c[1]));
    if let Cow::Owned(new) = redact_assignments(&text) {
        text = Cow::Owned(new);
    }
    text
}

fn replace(text: &mut Cow<'_, str>, pattern: &Regex, with: impl Fn(&Captures<'_>) -> String) {
    if let Cow::Owned(new) = pattern.replace_all(text, |c: &Captures<'_>| with(c)) {
        *text = Cow::Owned(new);
    }
}

/// Scans for assignments one name at a time. A candidate whose name is not a secret's
/// gives up only its name: what looked like its value is scanned again, since it may hold
/// an assignment of its own (this keeps the result the same however often it is scrubbed).
fn redact_assignments(text: &str) -> Cow<'_, str> {
    let mut out = String::new();
    let mut copied = 0;
    let mut at = 0;
    while let Some(caps) = ASSIGNMENT.captures_at(text, at) {
        let Some(name) = caps.name("name") else { break };
        match secret_value(&caps) {
            Some(value) => {
                out.push_str(&text[copied..value.start()]);
                out.push_str(REDACTED);
                copied = value.end();
                at = value.end();
            }
            None => at = name.end(),
        }
    }
    if copied == 0 {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

/// The value of an assignment whose name is a secret's, unless already redacted.
fn secret_value<'t>(caps: &Captures<'t>) -> Option<regex::Match<'t>> {
    let name = caps.name("name")?.as_str();
    // A `--flag value` pair only counts for flags; `word value` is just prose.
    let is_flag = caps.name("flag").is_some();
    if is_flag && !name.starts_with('-') || !names_a_secret(name) {
        return None;
    }
    let value = ["dq", "sq", "bare", "flag"]
        .iter()
        .find_map(|g| caps.name(g))?;
    (!value.as_str().is_empty() && value.as_str() != REDACTED).then_some(value)
}

/// Whether a name (`DB_PASSWORD`, `apiKey`, `--auth-token`, `x.client_secret`) is that of
/// a secret.
pub fn names_a_secret(name: &str) -> bool {
    let parts = split_name(name.trim_start_matches('-'));
    if parts
        .last()
        .is_some_and(|last| NOT_A_VALUE.contains(&last.as_str()))
    {
        return false;
    }
    parts.iter().enumerate().any(|(i, part)| {
        SECRET_WORDS.contains(&part.as_str())
            // Run-together names such as PGPASSWORD or MYSQL_ROOTPASSWD.
            || part.contains("password")
            || part.contains("passwd")
            || (part == "key" && i > 0 && KEY_QUALIFIERS.contains(&parts[i - 1].as_str()))
    })
}

/// `DB_PASSWORD` → [db, password]; `apiKey` → [api, key]; `X-Amz-Signature` → [x, amz,
/// signature].
fn split_name(name: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut current = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if matches!(c, '_' | '-' | '.') {
            parts.push(std::mem::take(&mut current));
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower {
            parts.push(std::mem::take(&mut current));
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        current.extend(c.to_lowercase());
    }
    parts.push(current);
    parts.retain(|p| !p.is_empty());
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(text: &str) -> String {
        redact(text).into_owned()
    }

    #[test]
    fn names() {
        for yes in [
            "password",
            "DB_PASSWORD",
            "apiKey",
            "x-api-key",
            "AWS_SECRET_ACCESS_KEY",
            "--auth-token",
            "clientSecret",
            "session_id",
            "PGPASSWORD",
        ] {
            assert!(names_a_secret(yes), "{yes}");
        }
        for no in [
            "author",
            "keyboard",
            "key",
            "monkey",
            "password_file",
            "TOKEN_PATH",
            "passage",
            "user",
            "primary_key",
        ] {
            assert!(!names_a_secret(no), "{no}");
        }
    }

    #[test]
    fn url_user_info() {
        assert_eq!(
            r("postgres://app:pw1@db:5432/x"),
            "postgres://[REDACTED]@db:5432/x"
        );
        assert_eq!(
            r("mongodb+srv://u:p@cluster0.example.net/db"),
            "mongodb+srv://[REDACTED]@cluster0.example.net/db"
        );
        assert_eq!(
            r("jdbc:mysql://root:toor@db/app"),
            "jdbc:mysql://[REDACTED]@db/app"
        );
        assert_eq!(
            r("amqp://guest:guest@rabbit:5672/"),
            "amqp://[REDACTED]@rabbit:5672/"
        );
        assert_eq!(r("mail ops@example.com now"), "mail ops@example.com now");
    }

    #[test]
    fn headers_and_curl() {
        assert_eq!(
            r("Authorization: Bearer abc.def.ghi"),
            "Authorization: [REDACTED]"
        );
        assert_eq!(r("> cookie: sid=1; theme=dark"), "> cookie: [REDACTED]");
        assert_eq!(
            r(r#"{"X-Api-Key": "k-123"}"#),
            r#"{"X-Api-Key": "[REDACTED]"}"#
        );
        assert_eq!(
            r("curl -u admin:hunter2 https://x"),
            "curl -u [REDACTED] https://x"
        );
        assert_eq!(
            r("curl --user=admin:hunter2 https://x"),
            "curl --user=[REDACTED] https://x"
        );
    }

    #[test]
    fn query_parameters() {
        assert_eq!(
            r("GET /cb?code=abc123&state=xyz&access_token=tok9 HTTP/1.1"),
            "GET /cb?code=[REDACTED]&state=xyz&access_token=[REDACTED] HTTP/1.1"
        );
        assert_eq!(
            r("https://b.s3.amazonaws.com/o?X-Amz-Credential=AK%2F1&X-Amz-Signature=abcd"),
            "https://b.s3.amazonaws.com/o?X-Amz-Credential=[REDACTED]&X-Amz-Signature=[REDACTED]"
        );
        assert_eq!(
            r("https://x.blob.core.windows.net/c?sv=2022&sig=Zm9v%3D"),
            "https://x.blob.core.windows.net/c?sv=2022&sig=[REDACTED]"
        );
    }

    #[test]
    fn assignments() {
        assert_eq!(r("password=hunter2 failed"), "password=[REDACTED] failed");
        assert_eq!(
            r(r#"{"api_key": "k 123", "user": "bob"}"#),
            r#"{"api_key": "[REDACTED]", "user": "bob"}"#
        );
        assert_eq!(r("DB_PASSWD: s3cret; next"), "DB_PASSWD: [REDACTED]; next");
        assert_eq!(
            r("Server=db;User Id=sa;Password=p@ss w;"),
            "Server=db;User Id=sa;Password=[REDACTED];"
        );
        assert_eq!(
            r("mysql --password hunter2 -h db"),
            "mysql --password [REDACTED] -h db"
        );
        assert_eq!(r("login --token=abc"), "login --token=[REDACTED]");
        assert_eq!(r("secret_key = 'a b'"), "secret_key = '[REDACTED]'");
    }

    #[test]
    fn benign_text_survives() {
        for text in [
            "FATAL: password authentication failed for user \"app\"",
            "NoCredentialsError: Unable to locate credentials",
            "token expired, please log in again",
            "reading --password-file /run/secrets/db",
            "primary_key=42 author=jane",
            "a password is required",
            "key=user_id value=7",
        ] {
            assert_eq!(r(text), text);
        }
    }

    #[test]
    fn idempotent() {
        for text in [
            "password=hunter2",
            "Authorization: Bearer x",
            "postgres://a:b@h/x",
            "?sig=abc",
        ] {
            let once = r(text);
            assert_eq!(r(&once), once, "{text}");
        }
    }
}
