//! Where a value ends: inside its quotes when quoted, else where its framing says.

/// Words that introduce the credential in an `Authorization` value.
const AUTH_SCHEMES: &[&str] = &[
    "bearer",
    "basic",
    "token",
    "digest",
    "negotiate",
    "bot",
    "apikey",
];

/// The value that starts at `start`, as a byte range: inside its quotes when quoted (also
/// in escaped JSON, `\"…\"`, and in a list, `["…"]`), else up to white space or a
/// closing bracket or comma. An authorization scheme word takes the credential after it
/// along.
pub(super) fn value_span(text: &str, start: usize) -> (usize, usize) {
    let mut pos = start;
    if text[pos..].starts_with('[') && text[pos + 1..].starts_with(['"', '\'', '\\']) {
        pos += 1;
    }
    let escaped = text[pos..].starts_with("\\\"");
    if escaped {
        pos += 1;
    }
    if let Some(quote) = text[pos..]
        .chars()
        .next()
        .filter(|c| *c == '"' || *c == '\'')
    {
        let inner = pos + 1;
        return (inner, quoted_end(text, inner, quote as u8, escaped));
    }
    let bare_end = |from: usize| {
        text[from..]
            .find(|c: char| {
                c.is_whitespace() || matches!(c, '"' | '\'' | ',' | ';' | '}' | ')' | ']')
            })
            .map_or(text.len(), |n| from + n)
    };
    let end = bare_end(start);
    if AUTH_SCHEMES
        .iter()
        .any(|scheme| text[start..end].eq_ignore_ascii_case(scheme))
    {
        let next = end + (text[end..].len() - text[end..].trim_start_matches([' ', '\t']).len());
        if next > end && next < text.len() {
            return (start, bare_end(next));
        }
    }
    (start, end)
}

/// Where a quoted value that starts at `inner` ends: at its closing `quote` (or the end of
/// the line), past quotes a backslash escapes (`"p\"ss"`, `'p\'ss'`). In escaped JSON
/// (`escaped`: the value opened with `\"`), it closes at `\"`, and `\\\"` is a quote the
/// value holds.
fn quoted_end(text: &str, inner: usize, quote: u8, escaped: bool) -> usize {
    let b = text.as_bytes();
    let mut i = inner;
    // In escaped JSON, whether the last character of the value was a backslash of its own.
    let mut held_backslash = false;
    while i < b.len() {
        match b[i] {
            b'\n' => return i,
            b'\\' if escaped => match b.get(i + 1) {
                Some(&c) if c == quote && !held_backslash => return i,
                Some(b'\\') => {
                    held_backslash = !held_backslash;
                    i += 2;
                }
                _ => {
                    held_backslash = false;
                    i += 2;
                }
            },
            b'\\' => i += 2,
            c if c == quote && !escaped => return i,
            _ => {
                held_backslash = false;
                i += 1;
            }
        }
    }
    b.len()
}
