//! Credentials in URL-encoded text: query parameters and percent-encoded assignments.
//!
//! A query parameter (`?name=value`, `&name=value`, `&amp;name=value`) loses its value when
//! its name is a secret's ([`names_a_secret`]: `api_key`, `access_token`, `private_token`,
//! `client_secret`, `X-Amz-Signature`, `hapikey`, `circle-token`, `my_signature`…), is one of
//! [`SECRET_PARAMS`] (`sig`, `code`), or says credential and the value looks generated
//! (`mailgun_key=…`). `key` and `auth` alone are weak: their value goes only when it looks
//! like a credential (eight characters or more with letters and digits, or generated), so
//! `?key=ab`, `?key=date` and `?auth=basic` stay. Cursors are not credentials:
//! `page_token`, `nextPageToken`, `NextToken` keep their values (unless a value's shape says
//! credential to the token rules). `sort_key`, `monkey`, `keyboard` are not secrets' names.
//!
//! The value ends at the next `&`, `;`, white space, quote or angle bracket, and at `#` in
//! a URL; the name and the rest of the query stay. Limits: a value that holds an unencoded
//! `&` or `;` (not valid in a query) is cut there; `?key=report2024` goes (letters and
//! digits), though it may be an ordinary key.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;

use super::super::marker::{Overlap, REDACTED, splice};
use super::super::names::{looks_generated, names_a_credential_context, names_a_secret};
use super::values::{REACH, back};

/// Names that make a query parameter's value a credential though [`names_a_secret`] does
/// not say so: Azure's SAS `sig` and the OAuth authorization `code`. The vendors' other
/// names are secrets' by its rules already: `api_key`, `apikey`, `hapikey`, `access_token`,
/// `private_token`, `circle-token`, `client_secret`, `X-Amz-Signature`, `X-Amz-Credential`,
/// `X-Goog-Signature`.
const SECRET_PARAMS: &[&str] = &["sig", "code"];

/// Names that make a value a credential only when it looks like one: `?key=AIza…9f` and
/// `?auth=9f3kq2…` go, `?key=ab`, `?key=date` and `?auth=basic` stay.
const WEAK_PARAMS: &[&str] = &["key", "auth"];

/// A query parameter's name at `[?&]` (or `&amp;`): group 1 the lead, group 2 the name.
static QUERY_PARAM: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"([?&]|&amp;)([A-Za-z_][A-Za-z0-9_.\-]*)=").expect("valid pattern")
});

/// Whether the `=` at `eq` ends a query parameter's name: the name follows `?`, `&` or
/// `&amp;`. Such values are [`redact_query`]'s to judge.
pub(super) fn is_query_name(text: &str, name_start: usize, eq: usize) -> bool {
    let before = &text[..name_start];
    text[eq..].starts_with('=') && (before.ends_with(['?', '&']) || before.ends_with("&amp;"))
}

/// Where a query value that starts at `start` ends: before `&`, `;`, white space, a quote
/// or `<`/`>`, none of which a percent-encoded value holds; and before `#` in a URL, where
/// it starts the fragment. A form body (`a=1&b=2`, no `?` before it) has no fragment, and a
/// `#` there is the value's own.
fn query_value_end(text: &str, start: usize) -> usize {
    let floor = back(text, start, REACH);
    let b = text.as_bytes();
    let run_start = b[floor..start]
        .iter()
        .rposition(u8::is_ascii_whitespace)
        .map_or(floor, |i| floor + i + 1);
    let in_url = b[run_start..start].contains(&b'?');
    b[start..]
        .iter()
        .position(|&c| {
            c.is_ascii_whitespace()
                || matches!(c, b'&' | b';' | b'"' | b'\'' | b'<' | b'>')
                || c == b'#' && in_url
        })
        .map_or(text.len(), |n| start + n)
}

/// Whether the parameter `name` holds a credential when its value is `value`.
fn param_is_secret(name: &str, value: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    if WEAK_PARAMS.contains(&lower.as_str()) {
        // Longer than any ordinary word or key: a credential, and no need to read it all.
        let b = value.as_bytes();
        return b.len() > 512
            || looks_generated(value)
            || b.len() >= 8
                && b.iter().any(u8::is_ascii_digit)
                && b.iter().any(u8::is_ascii_alphabetic);
    }
    SECRET_PARAMS.contains(&lower.as_str())
        || names_a_secret(name)
        || names_a_credential_context(name) && looks_generated(value)
}

/// Replaces the values of credential query parameters with [`REDACTED`]; their names stay.
pub(super) fn redact_query(text: &str) -> Cow<'_, str> {
    if !text.contains(['?', '&']) {
        return Cow::Borrowed(text);
    }
    let mut spans: Vec<(usize, usize)> = Vec::new();
    // Where the last value read ended: a parameter that starts inside it ends there too
    // (`?a=x?b=y`), so a long line of them is read once.
    let mut last_end = 0;
    for caps in QUERY_PARAM.captures_iter(text) {
        let (Some(name), Some(whole)) = (caps.get(2), caps.get(0)) else {
            continue;
        };
        let start = whole.end();
        let end = if start < last_end {
            last_end
        } else {
            query_value_end(text, start)
        };
        last_end = end;
        let value = &text[start..end];
        if start < spans.last().map_or(0, |span| span.1)
            || value.is_empty()
            // `[REDACTED]%2BCFA0…`: a value an earlier layer cut short goes whole.
            || value == REDACTED
            || !param_is_secret(name.as_str(), value)
        {
            continue;
        }
        spans.push((start, end));
    }
    splice(text, &spans, Overlap::FirstWins)
}

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
    let mut spans: Vec<(usize, usize)> = Vec::new();
    for caps in ENCODED_ASSIGNMENT.captures_iter(text) {
        let (Some(name), Some(sep)) = (caps.get(1), caps.get(2)) else {
            continue;
        };
        if name.start() < spans.last().map_or(0, |span| span.1) || !names_a_secret(name.as_str()) {
            continue;
        }
        let end = encoded_value_end(text, sep.end());
        if end == sep.end() || text[sep.end()..].starts_with(REDACTED) {
            continue;
        }
        spans.push((sep.end(), end));
    }
    splice(text, &spans, Overlap::FirstWins)
}

#[cfg(test)]
mod tests {
    use super::super::redact;

    #[test]
    fn credential_parameters_lose_their_values_and_keep_their_names() {
        let cases = [
            (
                "GET /v1/x?api_key=k9Zq2&apikey=x1&access_token=t&private_token=p&client_secret=c",
                "GET /v1/x?api_key=[REDACTED]&apikey=[REDACTED]&access_token=[REDACTED]\
                 &private_token=[REDACTED]&client_secret=[REDACTED]",
            ),
            (
                "https://x.blob.core.windows.net/c?sv=2022-11-02&sig=Zm9v%3D&se=2026",
                "https://x.blob.core.windows.net/c?sv=2022-11-02&sig=[REDACTED]&se=2026",
            ),
            (
                "o?X-Amz-Date=20261129T000000Z&X-Amz-Signature=9f86d0&X-Goog-Signature=ab12",
                "o?X-Amz-Date=20261129T000000Z&X-Amz-Signature=[REDACTED]\
                 &X-Goog-Signature=[REDACTED]",
            ),
            (
                "/contacts?hapikey=1f2e3d4c-aaaa-bbbb-cccc-1234567890ab&count=10",
                "/contacts?hapikey=[REDACTED]&count=10",
            ),
            (
                "/api/v2/me?circle-token=abc123def456#top",
                "/api/v2/me?circle-token=[REDACTED]#top",
            ),
            (
                "/v1/a?auth=Zq8xwLm2pe&key=k3J9xQ2mP7vL4nR8&signature=s&secret_key=x&my_token=y",
                "/v1/a?auth=[REDACTED]&key=[REDACTED]&signature=[REDACTED]\
                 &secret_key=[REDACTED]&my_token=[REDACTED]",
            ),
            (
                "<a href=\"/x?a=1&amp;token=abc123&amp;b=2\">",
                "<a href=\"/x?a=1&amp;token=[REDACTED]&amp;b=2\">",
            ),
            (
                "body: grant_type=client_credentials&client_secret=P@ss!w0rd#2&scope=read",
                "body: grant_type=client_credentials&client_secret=[REDACTED]&scope=read",
            ),
        ];
        for (text, want) in cases {
            assert_eq!(redact(text), want, "{text}");
        }
    }

    #[test]
    fn look_alike_parameters_keep_their_values() {
        for text in [
            "GET /a?sort_key=date&monkey=1&keyboard=us&key=ab",
            "GET /a?key=date&key=en-US&auth=basic&auth=1&key=v2",
            "GET /items?page_token=CAUQAA&pageToken=20&NextToken=abc&continuation_token=x",
            "GET /search?q=token&type=password&keyword=secret",
            "GET /a?cache_key=v2-deps-3f2a&primary_key=42&public_key_id=7",
        ] {
            assert_eq!(redact(text), text);
        }
    }

    #[test]
    fn a_query_value_ends_at_the_next_parameter() {
        // Not at `)`, `,` or `!`: a value in a query is percent-encoded, and only `&`, `;`,
        // white space, quotes, angle brackets and a URL's fragment end it.
        assert_eq!(
            redact("see (https://x/?token=a,b!c) and ?page=2&password=x&user=bob"),
            "see (https://x/?token=[REDACTED] and ?page=2&password=[REDACTED]&user=bob"
        );
        assert_eq!(
            redact("https://x/cb?access_token=abc#state=1 and token=a#b"),
            "https://x/cb?access_token=[REDACTED]#state=1 and token=[REDACTED]"
        );
    }
}
