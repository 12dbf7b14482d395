//! `name=value`, `name: value`, `"name": "value"` and `--name value`, found by a scan of
//! names: a value goes when its name is a secret's.

use std::borrow::Cow;

use super::super::marker::REDACTED;
use super::super::names::{
    NOT_SECRETS, looks_generated, looks_generated_strictly, names_a_credential_context,
    names_a_secret,
};
use super::query::is_query_name;
use super::values::value_span;

/// The next name and its separator from `at` on: `(name start, name end, separator end)`.
///
/// A name is `--?[A-Za-z][\w.-]*` or `[A-Za-z_][\w.-]*`, the separator `=`, `:` or `=>`
/// (with any quotes and spaces around them: `"name": `, `\"name\":`) or spaces (for
/// `--flag value`). The name is judged in code ([`names_a_secret`]) and only then is its
/// value read ([`value_span`]). This is a hand-written scan rather than a regex with
/// captures: a line of many short names (`a=a=a=…`) costs one pass, not a regex call each.
fn next_assignment(text: &str, mut at: usize) -> Option<(usize, usize, usize)> {
    let b = text.as_bytes();
    let is_name_char = |c: char| c.is_alphanumeric() || matches!(c, '_' | '.' | '-');
    while at < text.len() {
        let rest = &text[at..];
        let skip = rest.find(is_name_char)?;
        let run_start = at + skip;
        let run_end = text[run_start..]
            .find(|c: char| !is_name_char(c))
            .map_or(text.len(), |n| run_start + n);
        let starts_name = |p: usize| {
            b[p].is_ascii_alphabetic()
                || b[p] == b'_'
                || b[p] == b'-'
                    && (b.get(p + 1).is_some_and(u8::is_ascii_alphabetic)
                        || b.get(p + 1) == Some(&b'-')
                            && b.get(p + 2).is_some_and(u8::is_ascii_alphabetic))
        };
        let name_start = (run_start..run_end).find(|&p| starts_name(p));
        if let (Some(start), Some(sep_end)) = (name_start, separator_at(b, run_end)) {
            return Some((start, run_end, sep_end));
        }
        at = run_end;
    }
    None
}

/// End of the separator starting at `i`: `\?["']?[ \t]*(=>|:|=)[ \t]*`, else `[ \t]+`.
fn separator_at(b: &[u8], i: usize) -> Option<usize> {
    let blanks = |mut j: usize| {
        while j < b.len() && matches!(b[j], b' ' | b'\t') {
            j += 1;
        }
        j
    };
    let mut j = i;
    if b.get(j) == Some(&b'\\') {
        j += 1;
    }
    if matches!(b.get(j), Some(b'"' | b'\'')) {
        j += 1;
    }
    j = blanks(j);
    if b[j..].starts_with(b"=>") {
        return Some(blanks(j + 2));
    }
    if matches!(b.get(j), Some(b':' | b'=')) {
        return Some(blanks(j + 1));
    }
    let j = blanks(i);
    (j > i).then_some(j)
}

/// `token: 400 Bad Request`: an HTTP status and its reason, not a value.
fn http_status_at(text: &str, start: usize) -> bool {
    let b = text.as_bytes();
    let digits = b[start..].iter().take_while(|c| c.is_ascii_digit()).count();
    digits == 3
        && matches!(b[start], b'1'..=b'5')
        && b.get(start + 3) == Some(&b' ')
        && b.get(start + 4).is_some_and(u8::is_ascii_uppercase)
}

/// Scans for assignments one name at a time and replaces the values of secrets' names.
pub(super) fn redact_assignments(text: &str) -> Cow<'_, str> {
    let mut out = String::new();
    let mut copied = 0;
    let mut at = 0;
    while let Some((name_start, name_end, sep_end)) = next_assignment(text, at) {
        let name = &text[name_start..name_end];
        at = name_end;
        if is_query_name(text, name_start, name_end) {
            continue;
        }
        // `word value` is prose; `--flag value` pairs count, and so does a credential word
        // right before a value that can only be a generated credential (`api key 9f…`).
        let spaced = text[name_end..sep_end].trim_matches([' ', '\t']).is_empty();
        let prose_pair = spaced && !name.starts_with('-');
        let strong = names_a_secret(name);
        if !strong && !names_a_credential_context(name) {
            continue;
        }
        let (value_start, value_end) = value_span(text, name_start, sep_end);
        let value = &text[value_start..value_end];
        if prose_pair && !looks_generated_strictly(value) || !strong && !looks_generated(value) {
            continue;
        }
        let quoted = value_start > 0 && text[..value_start].ends_with(['"', '\'']);
        let prose = !quoted
            && (NOT_SECRETS.iter().any(|w| value.eq_ignore_ascii_case(w))
                || http_status_at(text, value_start));
        if value.is_empty()
            || prose
            || text[value_start..].starts_with(REDACTED)
            // `PWD={[REDACTED]}`: a marker in the value's own brackets is done.
            || value.trim_matches(['{', '}', '(', ')']) == REDACTED
            || value.starts_with('-')
        {
            continue;
        }
        out.push_str(&text[copied..value_start]);
        out.push_str(REDACTED);
        copied = value_end;
        at = value_end;
    }
    if copied == 0 {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}
