//! Credentials passed as call arguments, known by the function's name:
//!
//! - a function named for a secret that it is given (`setPassword("…")`,
//!   `set_api_key('…')`, `with_token("…")`, `.bearer_auth("…")`, `SecretStr("…")`; by
//!   [`names_a_secret_input`]) loses every string literal it is passed;
//! - a function whose signature puts the password at a known place ([`PASSWORD_ARGUMENTS`]:
//!   `login("admin", "…")`, `smtp.login(user, "…")`, `authenticate(user, "…")`,
//!   `DriverManager.getConnection(url, "app", "…")`, `new PDO(dsn, user, "…")`) loses
//!   that argument when it is a string literal.
//!
//! An argument counts as a literal when it starts with one: `"…".toCharArray()`,
//! `"…".encode()`.
//!
//! Lookups are not given the secret: `getPassword("db")`, `read_token(path)` and
//! `get_secret("prod/db")` keep their arguments. Identifiers (`setPassword(newPassword)`)
//! and keyword arguments stay for the assignments to judge (`password="…"`). Only the
//! literal's inside goes; the call, its quotes and its other arguments stay. Limits: only
//! the part of a call on one line is read; a password passed elsewhere than its function's
//! usual place, or through a function whose name says nothing (`connect("db", "app", "…")`),
//! is not seen.

use super::super::names::{PASSWORD_ARGUMENTS, names_a_secret_input};
use super::defaults::is_value;
use super::values::{REACH, ahead, back, literal_at};

/// Byte ranges of the secrets passed to calls in `text`.
pub(super) fn secrets(text: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    if !text.contains('(') || !text.contains(['"', '\'', '`']) {
        return spans;
    }
    let b = text.as_bytes();
    let mut i = 0;
    while let Some(open) = text[i..].find('(').map(|n| i + n) {
        i = open + 1;
        let name_end = text[..open].trim_end_matches([' ', '\t']).len();
        // Bytes, not characters: what stands before the name may be any character.
        let floor = back(text, name_end, 64);
        let name_len = b[floor..name_end]
            .iter()
            .rev()
            .take_while(|&&c| c.is_ascii_alphanumeric() || c == b'_')
            .count();
        let name_start = name_end - name_len;
        let name = &text[name_start..name_end];
        if name.is_empty() || b[name_start].is_ascii_digit() {
            continue;
        }
        let folded = name.to_ascii_lowercase().replace('_', "");
        let place = PASSWORD_ARGUMENTS
            .iter()
            .find(|(function, _)| *function == folded)
            .map(|&(_, place)| place);
        if place.is_none() && !names_a_secret_input(name) {
            continue;
        }
        let args = arguments(text, open + 1);
        for (n, &(start, _)) in args.iter().enumerate() {
            let Some((inner, close, _)) = literal_at(text, start) else {
                continue;
            };
            if place.is_none_or(|p| p == n) && is_value(&text[inner..close]) {
                spans.push((inner, close));
            }
        }
    }
    spans
}

/// The arguments of a call whose `(` ends at `from`, as trimmed byte ranges, up to its `)`
/// or the end of the line (or [`REACH`] bytes on): split at the commas outside brackets and
/// string literals.
fn arguments(text: &str, from: usize) -> Vec<(usize, usize)> {
    let b = &text.as_bytes()[..ahead(text, from, REACH)];
    let mut args = Vec::new();
    let mut depth = 0usize;
    let mut start = from;
    let mut i = from;
    let mut push = |s: usize, e: usize| {
        let arg = &text[s..e];
        let lead = arg.len() - arg.trim_start().len();
        let trail = arg.len() - arg.trim_end().len();
        if s + lead < e - trail {
            args.push((s + lead, e - trail));
        }
    };
    while i < b.len() {
        match b[i] {
            b'"' | b'\'' | b'`' => match literal_at(text, i) {
                Some((_, _, after)) => {
                    i = after;
                    continue;
                }
                None => break,
            },
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' if depth > 0 => depth -= 1,
            b')' | b'\n' => break,
            b',' if depth == 0 => {
                push(start, i);
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    push(start, i.min(b.len()));
    args
}

#[cfg(test)]
mod tests {
    use super::super::redact;

    #[test]
    fn functions_named_for_a_secret_lose_their_literal_arguments() {
        let cases = [
            (
                r#"client.setPassword("Zq8!xw-Lm2pe")"#,
                r#"client.setPassword("[REDACTED]")"#,
            ),
            (
                "client.set_api_key('Zq8xwLm2pe')",
                "client.set_api_key('[REDACTED]')",
            ),
            (
                r#"Client.with_token("Zq8xwLm2pe").build()"#,
                r#"Client.with_token("[REDACTED]").build()"#,
            ),
            (
                r#"reqwest::Client::new().get(url).bearer_auth("Zq8xwLm2pe").send()"#,
                r#"reqwest::Client::new().get(url).bearer_auth("[REDACTED]").send()"#,
            ),
            (r#"SecretStr("Zq8 xw")"#, r#"SecretStr("[REDACTED]")"#),
            (
                r#"cfg.set_credentials("svc", "Zq8xwLm2pe", timeout=3)"#,
                r#"cfg.set_credentials("[REDACTED]", "[REDACTED]", timeout=3)"#,
            ),
        ];
        for (text, want) in cases {
            assert_eq!(redact(text), want, "{text}");
        }
    }

    #[test]
    fn functions_lose_the_argument_their_signature_puts_the_password_in() {
        let cases = [
            (
                r#"ftp.login("admin", "Zq8xwLm2pe")"#,
                r#"ftp.login("admin", "[REDACTED]")"#,
            ),
            (
                r#"smtp.login(user, 'Zq8xwLm2pe')"#,
                r#"smtp.login(user, '[REDACTED]')"#,
            ),
            (
                r#"authenticate(user, "Zq8xwLm2pe")"#,
                r#"authenticate(user, "[REDACTED]")"#,
            ),
            (
                r#"conn.simple_bind_s("cn=admin,dc=x", "Zq8xwLm2pe")"#,
                r#"conn.simple_bind_s("cn=admin,dc=x", "[REDACTED]")"#,
            ),
            (
                r#"signIn(email, `Zq8xwLm2pe`)"#,
                r#"signIn(email, `[REDACTED]`)"#,
            ),
        ];
        for (text, want) in cases {
            assert_eq!(redact(text), want, "{text}");
        }
    }

    #[test]
    fn lookups_and_other_calls_keep_their_arguments() {
        for text in [
            r#"getPassword("db")"#,
            r#"secrets.get_secret("prod/db")"#,
            r#"read_token("/run/secrets/token")"#,
            "setPassword(newPassword)",
            r#"login("admin")"#,
            r#"socket.bind(("0.0.0.0", 8080))"#,
            r#"print("token", count)"#,
            r#"InvalidTokenError("token expired")"#,
            r#"set_timeout(30); set_name("etl")"#,
            r#"ValidationError: setPassword("is too short")"#,
            r#"connect("db", "app")"#,
            r#"«set_token(» é("x") ☃getPassword("db")"#,
        ] {
            assert_eq!(redact(text), text);
        }
    }
}
