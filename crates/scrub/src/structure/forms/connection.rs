//! Connection strings (ADO.NET, ODBC, OLE DB, and the `pw=` some drivers take):
//! `Password=…;`, `Pwd=…;` and `pw=…;` between `;`s, the name in any case.
//!
//! The value ends where the connection string's own rules end it. Unquoted, it runs to the
//! next `;` and may hold spaces (`Password=p@ss w;`): `Password=a;b` is the password `a`.
//! A value holding `;` must be quoted, with `"…"` or `'…'` (a doubled quote inside is one
//! quote) or, in ODBC, `{…}` (a doubled `}` is one brace): `Password="a;b"` goes whole, and
//! its quotes stay around the marker. A doubled `;` is one `;` of an unquoted value
//! (`PWD=a;;b;`). The name must follow a `;` (or start the line or a word and have its
//! value end at a `;`), so `password = x y` in prose is left to the assignments.

use super::super::super::marker::REDACTED;
use super::super::values::ahead;
use super::lex::{Span, Text, VALUE_REACH, skip_blanks};

/// The names a connection string gives its password, in lower case.
const NAMES: &[&str] = &["password", "pwd", "pw"];

pub(super) fn secrets(text: &Text<'_>, out: &mut Vec<Span>) {
    for name in NAMES {
        // Where the last value read ended: a name inside it is part of it.
        let mut resume = 0;
        for at in text.words(name) {
            if at < resume {
                continue;
            }
            if let Some(span) = value_after(text, at, at + name.len(), &mut resume) {
                out.push(span);
            }
        }
    }
}

/// The password of the name at `name..name_end`, if it is a connection string's.
fn value_after(text: &Text<'_>, name: usize, name_end: usize, resume: &mut usize) -> Option<Span> {
    let b = text.bytes();
    let lead = b[..name]
        .iter()
        .rev()
        .find(|c| !matches!(c, b' ' | b'\t'))
        .copied();
    let after_separator = lead == Some(b';');
    if !(after_separator || name == 0 || matches!(b[name - 1], b' ' | b'\t' | b'\n')) {
        return None;
    }
    let eq = skip_blanks(b, name_end);
    if b.get(eq) != Some(&b'=') || b.get(eq + 1) == Some(&b'=') {
        return None;
    }
    let at = skip_blanks(b, eq + 1);
    let (inner, after) = match b.get(at) {
        Some(&q @ (b'"' | b'\'')) => closed(text.raw, at + 1, q, resume)?,
        Some(b'{') => closed(text.raw, at + 1, b'}', resume)?,
        Some(_) => {
            let end = unquoted_end(text.raw, at);
            let value = text.raw[at..end].trim_end_matches([' ', '\t']);
            ((at, at + value.len()), end)
        }
        None => return None,
    };
    *resume = after;
    let ends = matches!(
        b.get(skip_blanks(b, after)),
        None | Some(b';' | b'\r' | b'\n')
    );
    let ended_by_separator = b.get(skip_blanks(b, after)) == Some(&b';');
    let value = &text.raw[inner.0..inner.1];
    let fresh = !value.is_empty() && !value.starts_with(REDACTED);
    (fresh && ends && (after_separator || ended_by_separator)).then_some(inner)
}

/// Where an unquoted value that starts at `at` ends: at a `;` that is not doubled, or the
/// line's end.
fn unquoted_end(text: &str, at: usize) -> usize {
    let b = &text.as_bytes()[..ahead(text, at, VALUE_REACH)];
    let mut i = at;
    while i < b.len() && !matches!(b[i], b'\n' | b'\r') {
        if b[i] == b';' {
            if b.get(i + 1) != Some(&b';') {
                return i;
            }
            i += 1;
        }
        i += 1;
    }
    i.min(b.len())
}

/// The inside of a value quoted up to `close` (doubled, it is one of the value's), and
/// where it ends; `None` if it does not close on its line (and then `resume` is past what
/// was read: a name there would find no close either).
fn closed(text: &str, inner: usize, close: u8, resume: &mut usize) -> Option<(Span, usize)> {
    let b = &text.as_bytes()[..ahead(text, inner, VALUE_REACH)];
    let mut i = inner;
    while i < b.len() && !matches!(b[i], b'\n' | b'\r') {
        if b[i] == close {
            if b.get(i + 1) == Some(&close) {
                i += 2;
                continue;
            }
            return Some(((inner, i), i + 1));
        }
        i += 1;
    }
    *resume = i;
    None
}

#[cfg(test)]
mod tests {
    fn r(text: &str) -> String {
        super::super::lexed(super::secrets, text)
    }

    #[test]
    fn a_value_ends_where_the_connection_string_ends_it() {
        let cases = [
            (
                "Server=db;Password=a;b;User Id=sa",
                "Server=db;Password=[REDACTED];b;User Id=sa",
            ),
            (
                r#"Server=db;Password="a;b";User Id=sa"#,
                r#"Server=db;Password="[REDACTED]";User Id=sa"#,
            ),
            (
                "Server=db;Password='a;b';User Id=sa",
                "Server=db;Password='[REDACTED]';User Id=sa",
            ),
            (
                "Driver={ODBC Driver 18};PWD={a;b}}c};UID=sa",
                "Driver={ODBC Driver 18};PWD={[REDACTED]};UID=sa",
            ),
            (
                r#"Server=db;Password="say ""a;b"" twice";Encrypt=true"#,
                r#"Server=db;Password="[REDACTED]";Encrypt=true"#,
            ),
            (
                "Server=db;Password=p@ss w!;Encrypt=true",
                "Server=db;Password=[REDACTED];Encrypt=true",
            ),
            (
                "Data Source=db;Pwd=P@ss!w0rd#2024$%^&*()",
                "Data Source=db;Pwd=[REDACTED]",
            ),
            (
                "Server=db;uid=sa;pw=Xq7w9Lm2;Database=x",
                "Server=db;uid=sa;pw=[REDACTED];Database=x",
            ),
            (
                "DRIVER=x;PWD=Str0ng pass;;x;DATABASE=y",
                "DRIVER=x;PWD=[REDACTED];DATABASE=y",
            ),
            (
                "DSN=prod;Password=Hunter two;",
                "DSN=prod;Password=[REDACTED];",
            ),
        ];
        super::super::assert_lexed(super::secrets, &cases);
    }

    #[test]
    fn prose_is_left_to_the_assignments() {
        for text in [
            "password = two words",
            "reset the password=x now",
            "",
            "pw == 3; pw is set",
            "Server=db;Pwd=;UID=sa",
            "Server=db;Pwd={unclosed;UID=sa",
            "Server=db;Password=[REDACTED];UID=sa",
        ] {
            assert_eq!(r(text), text);
        }
    }
}
