//! Long random-looking tokens that the high-entropy rule keeps, because the rule can tell
//! them apart from credentials:
//!
//! - **Base64 of ordinary text.** The token decodes (standard or URL-safe alphabet, padded
//!   or not) to at least [`MIN_PROSE`] bytes of printable text that reads as prose: three
//!   words or more, blanks between them (one per [`MAX_WORD_RUN`] bytes at least), mostly
//!   letters, at least one small English word (`is`, `the`, `this`, … from
//!   [`NOT_SECRETS`]), and no `a:b`, `a@b` or `a=b` (so `user:pass`, an e-mail address or
//!   `key=value` in base64 stays a secret) and no word that names a secret (`password`,
//!   `token`). `SGVsbG8gd29ybGQsIHRoaXMgaXMgYSBsb2cgbGluZQ==` ("Hello world, this is a log
//!   line") stays; base64 of binary (keys, random bytes) or of `admin:hunter2` goes.
//! - **Request and trace ids** by their label, right before the token: `X-Request-Id:`,
//!   `x-amz-request-id:`, `x-amz-id-2:`, `x-amzn-RequestId:`, `x-amzn-trace-id: Root=`,
//!   `traceparent:`, `request_id=`, `"requestId": "`, `trace id`, `correlation-id`,
//!   `cf-ray:`…; and tokens that start with `req_` (the request ids of Stripe, OpenAI,
//!   Anthropic). W3C trace ids (`00-4bf92f…-00f067aa…-01`) are hex and stay anyway.
//!
//! Limits: only the high-entropy rule listens to this. A vendor's token stays a token
//! whatever its label (`X-Request-Id: ghp_…` goes), and a name that says secret wins
//! (`token: SGVsbG8g…` goes). An id far from its label (`id 3 of request …`) is judged as
//! any token, and so is base64 of text that is not English prose (`a.b.c`, other
//! languages without the small words). A passphrase of ordinary words with a small word
//! in it (`this is my passphrase`), in base64, stays: it reads as prose.

use std::sync::LazyLock;

use regex::Regex;

use super::super::names::{NOT_SECRETS, names_a_secret};
use crate::text::floor_char_boundary;

/// Fewest decoded bytes that can read as prose.
const MIN_PROSE: usize = 16;
/// Most bytes per blank in prose: words are shorter than this on average.
const MAX_WORD_RUN: usize = 12;

/// A label that says the token after it is a request's or a trace's id.
static ID_LABEL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?i)(?:(?-u:\b)(?:x-)?(?:amzn?-|ms-|goog-|b3-|cloud-|client-)?",
        r"(?:request|req|trace|correlation|span|operation|transaction|parent|message|event|execution|host|connection)",
        r"[-_ ]?ids?(?:-2)?|(?-u:\b)x-amz-id-2|(?-u:\b)x-amz-cf-id|(?-u:\b)traceparent|(?-u:\b)tracestate|(?-u:\b)cf-ray|(?-u:\b)content-md5|(?-u:\b)etag)",
        r#"["']?\s*(?:[:=]\s*|\s)["']?(?:Root=)?$"#,
    ))
    .expect("valid pattern")
});

/// Whether the high-entropy rule should keep `token`, which follows `before`.
pub(super) fn is_benign(before: &str, token: &str) -> bool {
    let tail = &before[floor_char_boundary(before, before.len().saturating_sub(64))..];
    token.starts_with("req_") || ID_LABEL.is_match(tail) || decodes_to_prose(token)
}

/// Whether `token` is base64 of ordinary text (see the module documentation).
fn decodes_to_prose(token: &str) -> bool {
    decode_base64(token).is_some_and(|bytes| reads_as_prose(&bytes))
}

fn reads_as_prose(bytes: &[u8]) -> bool {
    let printable = bytes
        .iter()
        .all(|&c| (b' '..=b'~').contains(&c) || matches!(c, b'\t' | b'\n' | b'\r'));
    if bytes.len() < MIN_PROSE || !printable {
        return false;
    }
    let text = String::from_utf8_lossy(bytes);
    let words: Vec<&str> = text.split_whitespace().collect();
    let blanks = bytes.iter().filter(|c| c.is_ascii_whitespace()).count();
    let letters = bytes.iter().filter(|c| c.is_ascii_alphabetic()).count();
    let glued = bytes.windows(3).any(|w| {
        !w[0].is_ascii_whitespace() && b":@=".contains(&w[1]) && !w[2].is_ascii_whitespace()
    });
    let small_word = words.iter().any(|w| {
        let w = w
            .trim_matches(|c: char| !c.is_ascii_alphabetic())
            .to_ascii_lowercase();
        NOT_SECRETS.contains(&w.as_str())
    });
    let names_secret = text
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .any(names_a_secret);
    words.len() >= 3
        && blanks * MAX_WORD_RUN >= bytes.len()
        && letters * 10 >= (bytes.len() - blanks) * 7
        && small_word
        && !glued
        && !names_secret
}

/// The bytes `token` encodes in base64 (standard or URL-safe, padding optional), if it is
/// base64 at all.
fn decode_base64(token: &str) -> Option<Vec<u8>> {
    let body = token.trim_end_matches('=');
    if body.len() % 4 == 1 || token.len() - body.len() > 2 {
        return None;
    }
    let value = |c: u8| match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' | b'-' => Some(62),
        b'/' | b'_' => Some(63),
        _ => None,
    };
    let mut out = Vec::with_capacity(body.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for &c in body.as_bytes() {
        acc = (acc << 6) | u32::from(value(c)?);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_decodes() {
        assert_eq!(decode_base64("aGVsbG8=").as_deref(), Some(&b"hello"[..]));
        assert_eq!(decode_base64("aGVsbG8").as_deref(), Some(&b"hello"[..]));
        assert_eq!(
            decode_base64("-_-_").as_deref(),
            Some(&[0xfb, 0xff, 0xbf][..])
        );
        assert_eq!(decode_base64("a.b"), None);
        assert_eq!(decode_base64("abcde"), None);
    }

    #[test]
    fn prose_and_not_prose() {
        for yes in [
            "Hello world, this is a log line",
            "The quick brown fox jumps over the lazy dog.",
            "nightly export finished with 3 warnings",
        ] {
            assert!(reads_as_prose(yes.as_bytes()), "{yes}");
        }
        for no in [
            "admin:hunter2password123",
            "correct horse battery staple",
            "the password is hunter2 ok",
            "user=jane and the rest of it",
            "mail jane@example.com in the end",
            "aaaaaaaaaaaaaaaaaaaaaaaaaaaa is",
            "short is a",
            "abcdefghij       is",
            "1234 5678 is 9012 3456 7890",
            "Thisisaverylongwordwithoutspaces is a x",
            "\u{1}\u{2} binary is in the way",
        ] {
            assert!(!reads_as_prose(no.as_bytes()), "{no}");
        }
    }

    #[test]
    fn labels_of_ids() {
        for before in [
            "X-Request-Id: ",
            "x-amz-request-id: 4442587FB7D0A2F9 x-amz-id-2: ",
            "x-amzn-RequestId: ",
            "x-amzn-trace-id: Root=",
            "{\"requestId\": \"",
            "request_id=",
            "AWS request id: ",
            "trace id ",
            "X-Correlation-ID:",
            "traceparent: ",
        ] {
            assert!(ID_LABEL.is_match(before), "{before}");
        }
        for before in [
            "token: ",
            "id: ",
            "password=",
            "request failed: ",
            "user id ",
        ] {
            assert!(!ID_LABEL.is_match(before), "{before}");
        }
    }
}

#[cfg(test)]
mod through_the_rule {
    use super::super::redact;

    #[test]
    fn look_alikes_stay() {
        for text in [
            "payload SGVsbG8gd29ybGQsIHRoaXMgaXMgYSBsb2cgbGluZQ== rejected",
            "data VGhpcyBpcyBhIGxvbmcgcGllY2Ugb2Ygb3JkaW5hcnkgdGV4dCBpbiBiYXNlNjQ",
            "request req_011CSHoEeqs5C35K2UUqR7FyA1b2C3d4 failed",
            "X-Request-Id: Rk9PQmFyQmF6UXV4MTIzNDU2Nzg5MGFiY2RlZg",
            "x-amz-id-2: vlR7PnpV2Ce81l0PRw6jlUpck7Jo5ZsQjryTjKlc5aLWGVHPZLj5NeC6qMa0emYBDXOo6QBMXgo=",
            "AWS request id: 7a62c49f-347e-4fc4-9331-6e8eEXAMPLE",
            r#"{"requestId": "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZkdI"}"#,
            "traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        ] {
            assert_eq!(redact(text), text);
        }
    }

    #[test]
    fn secrets_in_base64_and_after_id_labels_still_go() {
        for (text, want) in [
            // admin:hunter2password123
            ("auth YWRtaW46aHVudGVyMnBhc3N3b3JkMTIz", "auth [REDACTED]"),
            // Binary: random bytes.
            (
                "blob 3q2+7wABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZ ok",
                "blob [REDACTED] ok",
            ),
            // "the password is hunter2 and more"
            (
                "x dGhlIHBhc3N3b3JkIGlzIGh1bnRlcjIgYW5kIG1vcmU=",
                "x [REDACTED]",
            ),
            // A vendor's token stays a token after any label.
            (
                "X-Request-Id: ghp_rObX5YF9yNO1nVSbEPEciYCsX9OAHZ9731xm",
                "X-Request-Id: [REDACTED]",
            ),
            // A random token after a label that is not an id's.
            (
                "request failed: k3J9xQ2mP7vL4nR8tW1yZ5aB6cD0eF2g",
                "request failed: [REDACTED]",
            ),
        ] {
            assert_eq!(redact(text), want, "{text}");
        }
    }
}
