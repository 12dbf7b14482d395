//! Servers' configuration echoed back: Redis's and Valkey's `requirepass …`,
//! `masterauth …` and `primaryauth …` (a `redis.conf` line, `--requirepass …` on the
//! command line, `CONFIG SET requirepass …`, and `CONFIG GET`'s answer, whose value is on
//! the next line: `1) "requirepass"` then `2) "…"`), and Sentinel's
//! `sentinel auth-pass <master> …`.
//!
//! The value is the next word, or the inside of its quotes; a word that starts a sentence
//! (`requirepass is not set`, by [`NOT_SECRETS`]) is none, and so is a commented-out line.

use super::super::super::names::NOT_SECRETS;
use super::lex::{Span, Text, line_start, skip_blanks, value_at};

/// Directives whose value is a password, in lower case.
const DIRECTIVES: &[&str] = &["requirepass", "masterauth", "primaryauth"];

pub(super) fn secrets(text: &Text<'_>, out: &mut Vec<Span>) {
    let b = text.bytes();
    for directive in DIRECTIVES {
        for at in text.words(directive) {
            // A commented-out line (`# requirepass foobared`, as redis.conf ships).
            if text.raw[line_start(text.raw, at)..at]
                .trim_start()
                .starts_with('#')
            {
                continue;
            }
            let mut i = at + directive.len();
            // The directive quoted (`"requirepass" "…"`), or followed by `=` or `:`.
            if b.get(i) == Some(&b'"') && b.get(at.wrapping_sub(1)) == Some(&b'"') {
                i += 1;
            }
            if let Some(span) = next_line_answer(text, i) {
                out.push(span);
                continue;
            }
            i = skip_blanks(b, i);
            if matches!(b.get(i), Some(b'=' | b':')) {
                i = skip_blanks(b, i + 1);
            } else if i == at + directive.len() {
                continue;
            }
            push_value(text, i, out);
        }
    }
    for at in text.words("auth-pass") {
        // `sentinel auth-pass <master> <password>`.
        let master = skip_blanks(b, at + "auth-pass".len());
        let name = b[master..]
            .iter()
            .take_while(|c| !c.is_ascii_whitespace())
            .count();
        if name > 0 && text.lower[..at].trim_end().ends_with("sentinel") {
            push_value(text, skip_blanks(b, master + name), out);
        }
    }
}

fn push_value(text: &Text<'_>, at: usize, out: &mut Vec<Span>) {
    if let Some((span, _)) = value_at(text.raw, at, b"") {
        let value = &text.raw[span.0..span.1];
        let quoted = span.0 > at;
        if quoted || !NOT_SECRETS.iter().any(|w| value.eq_ignore_ascii_case(w)) {
            out.push(span);
        }
    }
}

/// `CONFIG GET requirepass` as redis-cli prints it: the directive ends its line, and the
/// next line is `2) "…"`.
fn next_line_answer(text: &Text<'_>, at: usize) -> Option<Span> {
    let b = text.bytes();
    let eol = skip_blanks(b, at);
    let next = match (b.get(eol), b.get(eol + 1)) {
        (Some(b'\n'), _) => eol + 1,
        (Some(b'\r'), Some(b'\n')) => eol + 2,
        _ => return None,
    };
    let mut i = skip_blanks(b, next);
    let digits = b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
    if digits == 0 || b.get(i + digits) != Some(&b')') {
        return None;
    }
    i = skip_blanks(b, i + digits + 1);
    (b.get(i) == Some(&b'"')).then_some(())?;
    value_at(text.raw, i, b"").map(|(span, _)| span)
}

#[cfg(test)]
mod tests {

    fn r(text: &str) -> String {
        super::super::lexed(super::secrets, text)
    }

    #[test]
    fn directives_lose_their_values() {
        let cases = [
            ("requirepass Xk9pwq77", "requirepass [REDACTED]"),
            ("masterauth \"Xk9 pwq77\"", "masterauth \"[REDACTED]\""),
            (
                "+ redis-server --port 7000 --requirepass Xk9pwq77 --save ''",
                "+ redis-server --port 7000 --requirepass [REDACTED] --save ''",
            ),
            (
                "127.0.0.1:6379> CONFIG SET requirepass Xk9pwq77",
                "127.0.0.1:6379> CONFIG SET requirepass [REDACTED]",
            ),
            (
                "1) \"requirepass\"\n2) \"Xk9pwq77\"",
                "1) \"requirepass\"\n2) \"[REDACTED]\"",
            ),
            ("primaryauth: Xk9pwq77", "primaryauth: [REDACTED]"),
            (
                "sentinel auth-pass mymaster Xk9pwq77",
                "sentinel auth-pass mymaster [REDACTED]",
            ),
        ];
        super::super::assert_lexed(super::secrets, &cases);
    }

    #[test]
    fn mentions_stay() {
        for text in [
            "requirepass is not set",
            "# requirepass foobared",
            "CONFIG GET requirepass",
            "1) \"requirepass\"\n2) \"\"",
            "requirepass [REDACTED]",
            "no requirepass",
        ] {
            assert_eq!(r(text), text);
        }
    }
}
