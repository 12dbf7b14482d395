//! Credentials in URL-encoded text: query parameters and percent-encoded assignments.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;

use super::super::marker::REDACTED;
use super::super::names::names_a_secret;

pub(super) static QUERY_PARAM: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)([?&](?:access_token|refresh_token|id_token|auth_token|api_key|apikey|api-key|key|sig|signature|client_secret|code|password|passwd|token|secret|x-amz-signature|x-amz-credential|x-amz-security-token|x-goog-signature|x-goog-credential)=)([^&;\s#'\x22<>\[][^&;\s#'\x22<>]*)",
    )
    .expect("valid pattern")
});

/// A percent-encoded `name=value` or `"name":"value"` (`password%3Dhunter2`,
/// `%22token%22%3A%22…%22`): group 1 the name, group 2 the separator.
static ENCODED_ASSIGNMENT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)([A-Za-z_][A-Za-z0-9_.\-]*)((?:%22)?(?:%3D|%3A)(?:%20)*(?:%22)?)")
        .expect("valid pattern")
});

/// The end of a percent-encoded value starting at `start`: before white space, `&`, a quote,
/// or an encoded `&`, `"`, `,`, space or `}`.
fn encoded_value_end(text: &str, start: usize) -> usize {
    let b = text.as_bytes();
    let mut i = start;
    while i < b.len() {
        if b[i].is_ascii_whitespace() || matches!(b[i], b'&' | b'"' | b'\'' | b';') {
            break;
        }
        // Bytes, not a slice of the text: what follows `%` may be any character.
        if b[i] == b'%' && b.len() >= i + 3 {
            let code = [b[i + 1].to_ascii_uppercase(), b[i + 2].to_ascii_uppercase()];
            if matches!(&code, b"26" | b"22" | b"2C" | b"20" | b"7D" | b"27") {
                break;
            }
        }
        i += 1;
    }
    i
}

pub(super) fn redact_encoded_assignments(text: &str) -> Cow<'_, str> {
    if !text.contains('%') {
        return Cow::Borrowed(text);
    }
    let mut out = String::new();
    let mut copied = 0;
    for caps in ENCODED_ASSIGNMENT.captures_iter(text) {
        let (Some(name), Some(sep)) = (caps.get(1), caps.get(2)) else {
            continue;
        };
        if name.start() < copied || !names_a_secret(name.as_str()) {
            continue;
        }
        let end = encoded_value_end(text, sep.end());
        if end == sep.end() || text[sep.end()..].starts_with(REDACTED) {
            continue;
        }
        out.push_str(&text[copied..sep.end()]);
        out.push_str(REDACTED);
        copied = end;
    }
    if copied == 0 {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}
