//! A URL parser quoting a password's piece back as the port. When a password holds a `/`
//! (as `openssl rand -base64` makes them) or a `#` or `?`, a parser ends the authority
//! there: `postgresql://app:Kq8v/N2xL@db/x` has the authority `app:Kq8v`, no `@`, so
//! `app` reads as the host and `Kq8v`, the password's first piece, as its port. The
//! parser's error quotes that "port":
//!
//! - libpq (psql, pg_dump, psycopg2): `invalid integer value "«Kq8v»" for connection option
//!   "port"`;
//! - Python's `urllib.parse`: `Port could not be cast to integer value as '«Kq8v»'` (a repr:
//!   `"…"` when the piece holds a `'`);
//! - Go's `net/url`: `invalid port ":«Kq8v»" after host`.
//!
//! Go's error also quotes the URL before it (`parse "postgres://app:Kq8v/N2xL": invalid
//! port ":Kq8v" after host`): there the quoted "port" stands after the authority's `:`, and
//! what follows it up to the closing quote (or the last `@`, before the host) is the rest of
//! the password (the path the parser took it for), so it goes too ([`go_url_rest`]).
//!
//! The quoted piece goes unless it is digits only (`"99999"`, a port out of range) or empty.
//!
//! Java's `NumberFormatException: For input string: "«…»"` quotes a whole value given where
//! a number was expected: Spring Framework's conversion of a property or a constructor
//! argument to `int` (a password given for the port, the arguments in the wrong order).
//! It goes when it is [`MIN_JAVA`] characters or more and holds something other than a
//! number's characters (`"12.5"`, `"1e3"`, `"abc"` stay).
//! (Python's `nonnumeric port: '…'` of `http.client` is in `echoes`.)

use super::lex::{Span, Text, quoted_end};

/// The text before a quoted port, in lower case, and the quotes that may open it (Python's
/// repr takes `"` when the piece holds a `'`).
const CUES: &[(&str, &[u8])] = &[
    ("invalid integer value ", b"\""),
    ("port could not be cast to integer value as ", b"'\""),
    ("invalid port ", b"\""),
    ("numberformatexception: for input string: ", b"\""),
];

/// The shortest value Java's `For input string` quotes that goes: shorter ones are words
/// and typos (`"abc"`, `"null"`), as the learned values' own floor.
const MIN_JAVA: usize = 6;

pub(super) fn secrets(text: &Text<'_>, out: &mut Vec<Span>) {
    let b = text.bytes();
    for (cue, quotes) in CUES {
        for (at, _) in text.lower.match_indices(cue) {
            let open = at + cue.len();
            let Some(&quote) = b.get(open).filter(|q| quotes.contains(q)) else {
                continue;
            };
            let mut inner = open + 1;
            let end = quoted_end(text.raw, inner, quote);
            let after = &text.lower[(end + 1).min(b.len())..];
            let piece = match *cue {
                // Only the port of a connection option, not any integer option.
                "invalid integer value " => after.starts_with(" for connection option \"port\""),
                // Go writes the port with its `:`, and says where it stands.
                "invalid port " => {
                    let colon = b.get(inner) == Some(&b':');
                    inner += usize::from(colon);
                    let piece = colon && after.starts_with(" after host");
                    if piece
                        && let Some(rest) =
                            go_url_rest(text.raw, at, &text.raw[inner.min(end)..end])
                    {
                        out.push(rest);
                    }
                    piece
                }
                "numberformatexception: for input string: " => {
                    let value = &text.raw[inner.min(end)..end];
                    value.chars().count() >= MIN_JAVA
                        && value.bytes().any(|c| !b"0123456789+-.,_eE".contains(&c))
                }
                _ => true,
            };
            let value = &text.raw[inner.min(end)..end];
            if piece && !value.bytes().all(|c| c.is_ascii_digit()) {
                out.push((inner, end));
            }
        }
    }
}

/// Most bytes of the URL that Go's error quotes before `invalid port`, read back.
const URL_REACH: usize = 2048;

/// Where Go's `parse "«url»": invalid port ":«port»" after host` (the cue at `cue`) quotes
/// the URL, and `port` stands in it after the authority's `:` and before a `/`, `?` or `#`:
/// the port and the rest of the URL after it, up to the closing quote or the last `@`.
fn go_url_rest(raw: &str, cue: usize, port: &str) -> Option<Span> {
    let close = cue
        .checked_sub(3)
        .filter(|&c| raw.get(c..cue) == Some("\": "))?;
    let mut floor = close.saturating_sub(URL_REACH);
    while !raw.is_char_boundary(floor) {
        floor += 1;
    }
    let open = floor + raw[floor..close].rfind("parse \"")? + "parse \"".len();
    let url = &raw[open..close];
    let authority = url.find("://")? + 3;
    let ends = authority + url[authority..].find(['/', '?', '#'])?;
    let start = ends.checked_sub(port.len())?;
    let whole =
        start > authority && url[..ends].ends_with(port) && url.as_bytes()[start - 1] == b':';
    if port.bytes().all(|c| c.is_ascii_digit()) || !whole {
        return None;
    }
    let end = url[ends..].rfind('@').map_or(url.len(), |at| ends + at);
    Some((open + start, open + end))
}

#[cfg(test)]
mod tests {
    use super::super::assert_lexed;
    use super::*;

    #[test]
    fn a_password_piece_quoted_as_a_port_goes() {
        assert_lexed(
            secrets,
            &[
                (
                    "psql: error: invalid integer value \"Kq8vN2xL\" for connection option \"port\"",
                    "psql: error: invalid integer value \"[REDACTED]\" for connection option \"port\"",
                ),
                (
                    "ValueError: Port could not be cast to integer value as 'Kq8vN2xL'",
                    "ValueError: Port could not be cast to integer value as '[REDACTED]'",
                ),
                (
                    "ValueError: Port could not be cast to integer value as \"Kq8v'N2\"",
                    "ValueError: Port could not be cast to integer value as \"[REDACTED]\"",
                ),
                (
                    "config: parse \"redis://svc\": invalid port \":Kq8vN2xL\" after host",
                    "config: parse \"redis://svc\": invalid port \":[REDACTED]\" after host",
                ),
                // Go's own output for a password holding `/` and `#`: the URL keeps none of it.
                (
                    "error: parse \"postgres://app:Meadow48/Thistle48river\": invalid port \":Meadow48\" after host",
                    "error: parse \"postgres://app:[REDACTED]\": invalid port \":[REDACTED]\" after host",
                ),
                (
                    "parse \"redis://:Kq8v#N2xL@cache:6379/0\": invalid port \":Kq8v\" after host",
                    "parse \"redis://:[REDACTED]@cache:6379/0\": invalid port \":[REDACTED]\" after host",
                ),
                (
                    "required type 'int'; nested exception is java.lang.NumberFormatException: For input string: \"Tundra-mango10!#\"",
                    "required type 'int'; nested exception is java.lang.NumberFormatException: For input string: \"[REDACTED]\"",
                ),
            ],
        );
    }

    #[test]
    fn ports_that_are_numbers_and_other_options_stay() {
        for text in [
            "psql: error: invalid integer value \"99999\" for connection option \"port\"",
            "psql: error: invalid integer value \"abc\" for connection option \"connect_timeout\"",
            "ValueError: Port could not be cast to integer value as ''",
            "invalid port \":8080\" after host",
            "parse \"http://svc:8080/health\": invalid port \":8080\" after host",
            "invalid port number in config",
            "raise ValueError(f\"Port could not be cast to integer value as {port!r}\")",
            "java.lang.NumberFormatException: For input string: \"abc\"",
            "java.lang.NumberFormatException: For input string: \"12.5e-3\"",
            "java.lang.NumberFormatException: For input string: \"1,000,000\"",
        ] {
            assert_lexed(secrets, &[(text, text)]);
        }
    }
}
