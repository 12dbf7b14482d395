//! Connection strings (ADO.NET, ODBC, OLE DB): `Password=…;` and `Pwd=…;` between `;`s.
//!
//! The value ends where the connection string's own rules end it. Unquoted, it runs to the
//! next `;` and may hold spaces (`Password=p@ss w;`): `Password=a;b` is the password `a`.
//! A value holding `;` must be quoted, with `"…"` or `'…'` (a doubled quote inside is one
//! quote) or, in ODBC, `{…}` (a doubled `}` is one brace): `Password="a;b"` goes whole, and
//! its quotes stay around the marker.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::{Captures, Regex};

use super::super::marker::REDACTED;

/// Group 1 the lead (`;` and blanks, or the line start, or a blank), 2 the name and `=`,
/// 3–5 a value in `"…"`, `'…'` or `{…}`, 6 an unquoted value (which starts with none of
/// those), 7 the `;` or end after it.
static CONNECTION_STRING: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?im)(;[\ \t]*|^|[\ \t])((?:password|pwd)\s*=\s*)",
        r#"(?:"((?:[^"\r\n]|"")*)"|'((?:[^'\r\n]|'')*)'|\{((?:[^}\r\n]|\}\})*)\}"#,
        r#"|([^;\r\n\["'{][^;\r\n]*))[\ \t]*(;|$)"#,
    ))
    .expect("valid pattern")
});

/// Replaces the passwords of connection strings with [`REDACTED`].
pub(super) fn redact(text: &str) -> Cow<'_, str> {
    CONNECTION_STRING.replace_all(text, |c: &Captures<'_>| {
        // Neither after a `;` nor before one: not a connection string, but perhaps
        // `password = x y` in prose, left to the assignments.
        if !c[1].starts_with(';') && c[7].is_empty() {
            return c[0].to_owned();
        }
        let (open, close) = match (c.get(3), c.get(4), c.get(5)) {
            (Some(_), _, _) => ("\"", "\""),
            (_, Some(_), _) => ("'", "'"),
            (_, _, Some(_)) => ("{", "}"),
            _ => ("", ""),
        };
        format!("{}{}{open}{REDACTED}{close}{}", &c[1], &c[2], &c[7])
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(text: &str) -> String {
        redact(text).into_owned()
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
        ];
        for (text, want) in cases {
            assert_eq!(r(text), want, "{text}");
        }
    }

    #[test]
    fn prose_is_left_to_the_assignments() {
        for text in ["password = two words", "reset the password=x now", ""] {
            assert_eq!(r(text), text);
        }
    }
}
