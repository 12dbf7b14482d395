//! A "host name" with `@` in it: a password with an unescaped `@` makes a client read the
//! rest of the password as the host (`postgres://app:p@ss@db/x` connects to `ss@db`), and
//! its error prints it: libpq's `could not translate host name "…@db" to address`, MySQL's
//! `Unknown MySQL server host '…@db'`, Go's `dial tcp: lookup …@db: no such host`, Node's
//! `getaddrinfo ENOTFOUND …@db`, curl's `Could not resolve host: …@db`, redis-cli's `Could
//! not connect to Redis at …@db:6379: Name or service not known`. The part before
//! the last `@` goes; the host after it stays.
//!
//!
//! With the `@` in the password and a `/` after it, the client reads what lies between as
//! the host (`app:pw@Kx9qZ/rest@db` resolves `Kx9qZ`): a "host name" with no `.` that mixes
//! capitals, small letters and digits is no one's host name (DNS names are written in one
//! case) and goes whole.
//!
//! The host is the word after one of [`CUES`] (inside its quotes, if quoted). A URL there
//! (`lookup postgres://…@db`) is the URL rule's, and stays.

use super::super::super::marker::REDACTED;
use super::lex::{Span, Text, bare_end, quoted_end, skip_blanks};

/// What comes right before a host name in a resolver's error, in lower case.
const CUES: &[&str] = &[
    "host name",
    "server host",
    "unknown host",
    "resolve host",
    "resolve hostname",
    "lookup",
    "enotfound",
    "eai_again",
    "redis at",
];

pub(super) fn secrets(text: &Text<'_>, out: &mut Vec<Span>) {
    let b = text.bytes();
    for cue in CUES {
        for at in text.words(cue) {
            let mut i = skip_blanks(b, at + cue.len());
            if b.get(i) == Some(&b':') {
                i = skip_blanks(b, i + 1);
            }
            let (start, end) = match b.get(i) {
                Some(&q @ (b'"' | b'\'' | b'`')) => (i + 1, quoted_end(text.raw, i + 1, q)),
                Some(_) => (i, bare_end(text.raw, i, b"'\",;")),
                None => continue,
            };
            let host = &text.raw[start..end];
            let Some(last) = host.rfind('@') else {
                if is_password_piece(host) {
                    out.push((start, end));
                }
                continue;
            };
            let before = &host[..last];
            if !before.is_empty() && !before.contains("://") && !before.contains(REDACTED) {
                out.push((start, start + last));
            }
        }
    }
}

/// Whether a "host name" without `@` is a piece of a password: no `.`, and capitals,
/// small letters and digits all in it.
fn is_password_piece(host: &str) -> bool {
    let b = host.as_bytes();
    b.len() >= 6
        && b.iter().all(u8::is_ascii_alphanumeric)
        && b.iter().any(u8::is_ascii_uppercase)
        && b.iter().any(u8::is_ascii_lowercase)
        && b.iter().any(u8::is_ascii_digit)
}

#[cfg(test)]
mod tests {

    fn r(text: &str) -> String {
        super::super::lexed(super::secrets, text)
    }

    #[test]
    fn the_part_before_the_at_goes() {
        let cases = [
            (
                "psql: error: could not translate host name \"c41Y7W8U@127.0.0.1\" to address: Name or service not known",
                "psql: error: could not translate host name \"[REDACTED]@127.0.0.1\" to address: Name or service not known",
            ),
            (
                "ERROR 2005 (HY000): Unknown MySQL server host 'p@ss@db' (-2)",
                "ERROR 2005 (HY000): Unknown MySQL server host '[REDACTED]@db' (-2)",
            ),
            (
                "dial tcp: lookup Xq7w@db on 127.0.0.53:53: no such host",
                "dial tcp: lookup [REDACTED]@db on 127.0.0.53:53: no such host",
            ),
            (
                "Error: getaddrinfo ENOTFOUND Xq7w@db",
                "Error: getaddrinfo ENOTFOUND [REDACTED]@db",
            ),
            (
                "Could not connect to Redis at N2xLRt5pQ9@127.0.0.1:6390: Name or service not known",
                "Could not connect to Redis at [REDACTED]@127.0.0.1:6390: Name or service not known",
            ),
            (
                "curl: (6) Could not resolve host: Xq7w@db",
                "curl: (6) Could not resolve host: [REDACTED]@db",
            ),
            (
                "pg_dump: error: could not translate host name \"Kx9qZ4mWp\" to address: Name or service not known",
                "pg_dump: error: could not translate host name \"[REDACTED]\" to address: Name or service not known",
            ),
        ];
        super::super::assert_lexed(super::secrets, &cases);
    }

    #[test]
    fn host_names_without_a_password_stay() {
        for text in [
            "could not translate host name \"db.internal\" to address",
            "dial tcp: lookup db on 127.0.0.53:53: no such host",
            "dial tcp: lookup postgres://[REDACTED]@db:5432: no such host",
            "host name \"[REDACTED]@db\"",
            "DNS lookup failed",
            "Could not connect to Redis at 127.0.0.1:6390: Connection refused",
            "could not translate host name \"db01\" to address",
            "could not translate host name \"DBSERVER01\" to address",
            "could not translate host name \"Postgres\" to address",
        ] {
            assert_eq!(r(text), text);
        }
    }
}
