//! What protocol traces carry, as a client's debug output or a `-v` run prints them:
//!
//! - FTP's and POP3's `PASS …`: the rest of the command (a password may hold blanks), up to
//!   the end of the line, a literal `\r\n` or the quote a repr closes (`*cmd* 'PASS …'`,
//!   `send: b'PASS …\r\n'`);
//! - SMTP's and IMAP's `AUTH`/`AUTHENTICATE` with `PLAIN`, `LOGIN`, `XOAUTH2` or
//!   `OAUTHBEARER`: the base64 after the mechanism and on the client's next lines (the
//!   server's `334 …` or `+ ` prompts between them stay; a word of capitals names a
//!   mechanism, not base64);
//! - IMAP's `<tag> LOGIN <user> <password>`: the password, an atom or a quoted string (not
//!   SQL Server's `ALTER LOGIN sa WITH …`);
//! - the ftp client's `ftp> user <name> <password>`: the password;
//! - Redis `MONITOR`'s `"AUTH" "…"` and `"auth" "<user>" "…"`: the last argument.
//!
//! A command counts only where a trace puts one: at the start of a line, or after `>`, `<`,
//! `C:`, or a quote that opens a repr. So Go's `--- PASS: TestX`, Jest's ` PASS  app.test.js`
//! and an SMTP server's `250-AUTH LOGIN PLAIN` stay. `Authorization:` values are the header
//! rule's (`structure`). Limits: only `PASS` in capitals is the command (a lower-case
//! `pass` could start a sentence), so `---> pass …` is not seen.

use super::super::super::marker::REDACTED;
use super::lex::{
    Span, Text, bare_end, is_word_byte_at, line_end, line_start, quoted_end, skip_blanks, value_at,
};

/// How many of the lines after `AUTH` are read for the client's base64.
const AUTH_LINES: usize = 6;

pub(super) fn secrets(text: &Text<'_>, out: &mut Vec<Span>) {
    pass(text, out);
    auth(text, out);
    imap_login(text, out);
    ftp_user(text, out);
    redis_auth(text, out);
}

/// The ftp client's `user <name> <password>` at its prompt: the password.
fn ftp_user(text: &Text<'_>, out: &mut Vec<Span>) {
    let b = text.bytes();
    for (at, _) in text.lower.match_indices("ftp> user ") {
        let user = skip_blanks(b, at + "ftp> user ".len());
        let Some((_, after_user)) = value_at(text.raw, user, b"") else {
            continue;
        };
        let password = skip_blanks(b, after_user);
        if password > after_user
            && let Some((span, _)) = value_at(text.raw, password, b"")
        {
            out.push(span);
        }
    }
}

/// Redis `MONITOR`'s `"AUTH" "<password>"` and `"auth" "<user>" "<password>"`: the last
/// quoted argument of the command.
fn redis_auth(text: &Text<'_>, out: &mut Vec<Span>) {
    let b = text.bytes();
    for (at, _) in text.lower.match_indices("\"auth\" \"") {
        let mut last = None;
        let mut i = at + "\"auth\" ".len();
        for _ in 0..2 {
            let end = quoted_end(text.raw, i + 1, b'"');
            if b.get(end) != Some(&b'"') {
                break;
            }
            last = Some((i + 1, end));
            if !text.raw[end..].starts_with("\" \"") {
                break;
            }
            i = end + 2;
        }
        if let Some((start, end)) = last
            && start < end
            && &text.raw[start..end] != REDACTED
        {
            out.push((start, end));
        }
    }
}

/// Whether a command at `at` stands where a trace puts one.
fn in_command_position(text: &str, at: usize) -> bool {
    let prefix = &text[line_start(text, at)..at];
    let trimmed = prefix.trim_end();
    trimmed.is_empty()
        || trimmed.ends_with(['>', '<'])
        || trimmed.ends_with("C:")
        || prefix.ends_with(['\'', '"'])
}

fn pass(text: &Text<'_>, out: &mut Vec<Span>) {
    let b = text.bytes();
    let mut resume = 0;
    for (at, _) in text.raw.match_indices("PASS ") {
        let from = at + "PASS ".len();
        if at < resume
            || is_word_byte_at(b, at.wrapping_sub(1))
            || b.get(from).is_none_or(|c| c.is_ascii_whitespace())
            || !in_command_position(text.raw, at)
        {
            continue;
        }
        let quote = b
            .get(at.wrapping_sub(1))
            .copied()
            .filter(|c| matches!(c, b'\'' | b'"'));
        let end = line_end(text.raw, from);
        let stop = text.raw[from..end]
            .find(|c: char| quote.is_some_and(|q| c == q as char))
            .map_or(end, |n| from + n);
        let stop = text.raw[from..stop].find("\\r").map_or(stop, |n| from + n);
        let value = text.raw[from..stop].trim_end();
        resume = stop;
        let masked = value.bytes().all(|c| c == b'*');
        if !masked && !value.starts_with(REDACTED) {
            out.push((from, from + value.len()));
        }
    }
}

/// SASL mechanisms whose client messages carry the credential.
const MECHANISMS: &[&str] = &["plain", "login", "xoauth2", "oauthbearer"];

fn auth(text: &Text<'_>, out: &mut Vec<Span>) {
    let b = text.bytes();
    for command in ["authenticate", "auth"] {
        let mut resume = 0;
        for at in text.words(command) {
            if at < resume {
                continue;
            }
            let position = in_command_position(text.raw, at)
                || command == "authenticate" && tagged(text.raw, at).is_some();
            let i = skip_blanks(b, at + command.len());
            let Some(mechanism) = MECHANISMS.iter().find(|m| text.lower[i..].starts_with(**m))
            else {
                continue;
            };
            let after = i + mechanism.len();
            if !position || is_word_byte_at(b, after) || b.get(after) == Some(&b'-') {
                continue;
            }
            // LOGIN sends the user and the password; the others send one message.
            let mut wanted = if *mechanism == "login" { 2 } else { 1 };
            let inline = skip_blanks(b, after);
            if inline > after
                && let Some(span) = base64_at(text.raw, inline)
            {
                out.push(span);
                wanted -= 1;
            }
            let mut line = line_end(text.raw, at);
            resume = line;
            for _ in 0..AUTH_LINES {
                // The line must end within reach, in a line feed.
                let next = match (b.get(line), b.get(line + 1)) {
                    (Some(b'\n'), _) => line + 1,
                    (Some(b'\r'), Some(b'\n')) => line + 2,
                    _ => break,
                };
                if wanted == 0 {
                    break;
                }
                line = line_end(text.raw, next);
                resume = line;
                match client_line(text.raw, next, line) {
                    Some(Some(span)) => {
                        out.push(span);
                        wanted -= 1;
                    }
                    Some(None) => {}
                    None => break,
                }
            }
        }
    }
}

/// The line `start..end` after an `AUTH` command: `Some(None)` for the server's prompt,
/// `Some(Some(span))` for the client's base64, `None` for anything else.
fn client_line(text: &str, start: usize, end: usize) -> Option<Option<Span>> {
    let line = &text[start..end];
    let content = line.trim_start();
    let lead = start + line.len() - content.len();
    const SERVER: &[&str] = &["reply:", "334", "+ ", "+\r", "S: ", "< ", "<- "];
    if content == "+" || SERVER.iter().any(|s| content.starts_with(s)) {
        return Some(None);
    }
    let skip = [
        "send: b'",
        "send: b\"",
        "send: '",
        "send: \"",
        "C: ",
        "> ",
        "-> ",
    ]
    .iter()
    .find(|p| content.starts_with(**p))
    .map_or(0, |p| p.len());
    let span = base64_at(text, lead + skip)?;
    let rest = text[span.1..end]
        .trim_start_matches("\\r\\n")
        .trim_matches(['\'', '"', ' ', '\t']);
    rest.is_empty().then_some(Some(span))
}

/// A base64 word at `at` (at least two characters, not only padding).
fn base64_at(text: &str, at: usize) -> Option<Span> {
    let end = bare_end(text, at, b"'\"");
    let word = &text[at..end];
    // Capitals and digits only name a mechanism (`AUTH PLAIN LOGIN CRAM-MD5`, a server's
    // list of them), not base64 of a credential.
    let mechanism = word
        .bytes()
        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit());
    let base64 = word.len() >= 2
        && !mechanism
        && word
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || b"+/=".contains(&c))
        && !word.bytes().all(|c| c == b'=');
    base64.then_some((at, end))
}

/// The IMAP tag before the command at `at` (`A1` in `A1 LOGIN`), where it starts, if the
/// tag stands where a trace puts a command.
fn tagged(text: &str, at: usize) -> Option<usize> {
    let before = text[..at].strip_suffix(' ')?;
    let tag_len = before
        .bytes()
        .rev()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == b'.')
        .count();
    let tag = before.len() - tag_len;
    ((1..=12).contains(&tag_len) && in_command_position(text, tag)).then_some(tag)
}

/// SQL verbs that stand where an IMAP tag would, before `LOGIN` (SQL Server's logins).
const SQL_VERBS: &[&str] = &["alter", "create", "drop"];

fn imap_login(text: &Text<'_>, out: &mut Vec<Span>) {
    let b = text.bytes();
    for (at, _) in text.raw.match_indices(" LOGIN ") {
        // `ALTER LOGIN sa WITH PASSWORD …` is SQL (`sql`), not an IMAP tag and command.
        let Some(tag) = tagged(text.raw, at + 1) else {
            continue;
        };
        if SQL_VERBS.contains(&text.lower[tag..at].as_ref()) {
            continue;
        }
        let user = at + " LOGIN ".len();
        let Some((_, after_user)) = value_at(text.raw, user, b"") else {
            continue;
        };
        let password = skip_blanks(b, after_user);
        if password == after_user {
            continue;
        }
        if let Some((span, _)) = value_at(text.raw, password, b"'\"")
            && !text.raw[span.0..span.1].starts_with('{')
        {
            out.push(span);
        }
    }
}

#[cfg(test)]
mod tests {

    fn r(text: &str) -> String {
        super::super::lexed(super::secrets, text)
    }

    #[test]
    fn traces_lose_their_credentials() {
        let cases = [
            ("PASS Xq7w9Lm2", "PASS [REDACTED]"),
            (
                "> PASS two words\r\n< 230 ok",
                "> PASS [REDACTED]\r\n< 230 ok",
            ),
            ("---> PASS Xq7w9Lm2", "---> PASS [REDACTED]"),
            ("*cmd* 'PASS Xq7w9Lm2'", "*cmd* 'PASS [REDACTED]'"),
            (
                "send: b'PASS Xq7w9Lm2\\r\\n'",
                "send: b'PASS [REDACTED]\\r\\n'",
            ),
            (
                "send: 'AUTH PLAIN AGJvYgBTM2NyZXRQdw==\\r\\n'",
                "send: 'AUTH PLAIN [REDACTED]\\r\\n'",
            ),
            ("AUTH PLAIN AGJvYgBTM2NyZXRQdw==", "AUTH PLAIN [REDACTED]"),
            (
                "C: AUTH LOGIN\nS: 334 VXNlcm5hbWU6\nC: Ym9i\nS: 334 UGFzc3dvcmQ6\nC: UzNjcmV0UHc=\nS: 235 ok",
                "C: AUTH LOGIN\nS: 334 VXNlcm5hbWU6\nC: [REDACTED]\nS: 334 UGFzc3dvcmQ6\nC: [REDACTED]\nS: 235 ok",
            ),
            (
                "send: 'AUTH LOGIN Ym9i\\r\\n'\nreply: b'334 UGFzc3dvcmQ6\\r\\n'\nreply: retcode (334); Msg: b'UGFzc3dvcmQ6'\nsend: 'UzNjcmV0UHc=\\r\\n'",
                "send: 'AUTH LOGIN [REDACTED]\\r\\n'\nreply: b'334 UGFzc3dvcmQ6\\r\\n'\nreply: retcode (334); Msg: b'UGFzc3dvcmQ6'\nsend: '[REDACTED]\\r\\n'",
            ),
            (
                "C: a1 AUTHENTICATE PLAIN\nS: +\nC: AGJvYgBTM2NyZXRQdw==",
                "C: a1 AUTHENTICATE PLAIN\nS: +\nC: [REDACTED]",
            ),
            ("C: A1 LOGIN bob S3cretPw", "C: A1 LOGIN bob [REDACTED]"),
            (
                "A1 LOGIN \"bob\" \"two words\"",
                "A1 LOGIN \"bob\" \"[REDACTED]\"",
            ),
        ];
        super::super::assert_lexed(super::secrets, &cases);
    }

    #[test]
    fn test_reports_and_capabilities_stay() {
        for text in [
            "--- PASS: TestLogin (0.01s)",
            "PASS",
            " PASS  src/app.test.js",
            "ok  PASS 3 tests",
            "250-AUTH LOGIN PLAIN CRAM-MD5",
            "AUTH PLAIN LOGIN'",
            "reply: b'250-AUTH PLAIN LOGIN\\r\\n'",
            "*cmd* 'PASS **********'",
            "AUTH LOGIN\nHello there, world",
            "the auth plain text",
            "user LOGIN failed",
            "PASS [REDACTED]",
        ] {
            assert_eq!(r(text), text);
        }
    }
}
