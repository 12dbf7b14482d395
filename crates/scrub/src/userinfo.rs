//! The user info of every URL and DSN (`scheme://user:password@host`), found by lexing the
//! authority as RFC 3986 lays it out rather than by a pattern with guessed boundaries, so
//! that it goes whatever follows the host or port: a path, a `:` (`dial tcp: lookup
//! postgres://app:pw@db:5432: no such host`), a full stop, `!`, `]`, a space or the end.
//!
//! For each `://` after a scheme (`postgres`, `mongodb+srv`, `jdbc:mysql`), the authority
//! candidate runs to white space, a quote, `<`, `>` or a backtick. Its user info ends at:
//! - the last `@` before the first `/`, `?` or `#` (a password may hold `@`:
//!   `user:p@ss@db` loses `user:p@ss`);
//! - failing that, when the text before that first `/` is `user:` and something that is
//!   not a port, the first `@` after it that a host follows (a password may hold `/`:
//!   `app:pa/ss@db/x`). A port (`host:8080/@scope/pkg`) or no `:` at all
//!   (`https://registry/@types/node`) means the `@` is in the path, and nothing goes.
//! - when the host that `@` leaves is no host name (no `.`, a capital in it:
//!   `u:p@Kx9q/rest@db.example:5432`, a password with `@` and `/` that a client masked up
//!   to its first `@` only), the next `@` that a dotted host or an IP address follows;
//! - when `user:` is followed by no `@` before a blank, and the line goes on with a few
//!   words of a password (blanks inside, no `/`, `,` or `;`) then `@` and a host (Go's, Java's
//!   and Ruby's parse errors quote such a URL whole: `parse "redis://svc:two words@cache"`),
//!   that `@`. The user name must hold no `.` (`example.com:port is wrong` is a host).
//!
//! The whole user info goes, user name included (a user name can be a token:
//! `https://ghp_…@github.com`); the scheme, host, port and path stay.

use std::borrow::Cow;

use super::marker::{self, Overlap, REDACTED};

/// `text` with the user info of every URL replaced by [`REDACTED`].
pub fn redact(text: &str) -> Cow<'_, str> {
    if !text.contains("://") {
        return Cow::Borrowed(text);
    }
    let mut spans = Vec::new();
    let mut from = 0;
    while let Some(found) = text[from..].find("://") {
        let authority = from + found + 3;
        from = authority;
        if !after_scheme(&text[..authority - 3]) {
            continue;
        }
        // The authority ends before the next URL starts: scanning no further keeps a line
        // of many URLs with no space between them linear.
        let next = text[authority..]
            .find("://")
            .map_or(text.len(), |at| authority + at);
        if let Some(end) = user_info_end(&text[authority..next]) {
            let info = &text[authority..authority + end];
            if info != REDACTED {
                spans.push((authority, authority + end));
            }
            from = authority + end;
        }
    }
    marker::splice(text, &spans, Overlap::FirstWins)
}

/// Whether `before` ends with a scheme: a letter, then letters, digits, `+`, `-`, `.`.
fn after_scheme(before: &str) -> bool {
    let scheme = before
        .bytes()
        .rev()
        .take_while(|&b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
        .count();
    scheme > 0 && before.as_bytes()[before.len() - scheme].is_ascii_alphabetic()
}

/// Where the user info of the authority starting `rest` ends (the position of its `@`),
/// if it has any.
fn user_info_end(rest: &str) -> Option<usize> {
    let candidate = &rest[..rest
        .find(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '<' | '>' | '`'))
        .unwrap_or(rest.len())];
    if let Some(at) = user_info_with_blanks(rest, candidate.len()) {
        return Some(at);
    }
    let path = candidate.find(['/', '?', '#']).unwrap_or(candidate.len());
    let at = match candidate[..path].rfind('@') {
        Some(at) => at,
        None => {
            let (_, after_colon) = candidate[..path].split_once(':')?;
            // `host:8080/…`: a port, so any `@` further on is in the path.
            if after_colon.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            path + candidate[path..].find('@')?
        }
    };
    // `user:password@` goes whatever follows, even no host at all (`@/db`, `@:5432`, an
    // unset host variable); a bare `name@` only before a host.
    let credentials = candidate[..at].contains(':');
    let at = match credentials {
        true => past_a_false_host(candidate, at),
        false => at,
    };
    (at > 0 && (credentials || host_starts(&candidate[at + 1..]))).then_some(at)
}

/// Most words a password with blanks is read over.
const MAX_PASSWORD_WORDS: usize = 6;

/// The `@` after `user:` and a password with blanks in it, when the authority candidate
/// (`rest[..word]`) is `user:` and a word with no `@`, and the line goes on to one.
fn user_info_with_blanks(rest: &str, word: usize) -> Option<usize> {
    let (user, first) = rest[..word].split_once(':')?;
    let plain = |s: &str| !s.contains(['@', '/', '?', '#', '.', ',', ';']);
    if user.is_empty() || !plain(user) || first.is_empty() || first.contains(['@', '/']) {
        return None;
    }
    if first.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let line = &rest[..rest.find(['\n', '\r']).unwrap_or(rest.len())];
    let mut end = word;
    for _ in 0..MAX_PASSWORD_WORDS {
        let blank = line[end..].len() - line[end..].trim_start_matches([' ', '\t']).len();
        if blank == 0 {
            return None;
        }
        let start = end + blank;
        let next = line[start..]
            .find(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '<' | '>' | '`'))
            .map_or(line.len(), |n| start + n);
        let w = &line[start..next];
        if let Some(at) = w.find('@') {
            let host = &w[at + 1..];
            let shaped = host.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '[');
            return (shaped && !w[..at].contains(['/', ',', ';'])).then_some(start + at);
        }
        if w.is_empty() || w.contains(['/', ',', ';', ':']) || w.contains("://") {
            return None;
        }
        end = next;
    }
    None
}

/// The `@` that ends the user info when the one at `at` leaves a host that is no host
/// name (no `.`, a capital: host names are written in small letters) and a later `@` before `?` or `#` is followed by a
/// dotted host or an IP address: the password held `@` and `/`.
fn past_a_false_host(candidate: &str, at: usize) -> usize {
    let after = &candidate[at + 1..];
    let host = &after[..after.find(['/', ':', '?', '#', '@']).unwrap_or(after.len())];
    let false_host = !host.contains('.') && host.bytes().any(|b| b.is_ascii_uppercase());
    if !false_host {
        return at;
    }
    let stop = after.find(['?', '#']).unwrap_or(after.len());
    let Some(next) = after[..stop].rfind('@') else {
        return at;
    };
    let real = &after[next + 1..];
    let real = &real[..real.find(['/', ':', '?', '#']).unwrap_or(real.len())];
    let dotted = real.contains('.')
        && real
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-');
    match dotted {
        true => at + 1 + next,
        false => at,
    }
}

/// Whether a host (a name, an IP address, `[` of an IPv6 one, or a marker that stands for
/// one) starts `text`.
fn host_starts(text: &str) -> bool {
    text.starts_with(|c: char| c.is_alphanumeric() || c == '[' || c == '%')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scrub(text: &str) -> String {
        redact(text).into_owned()
    }

    #[test]
    fn user_info_goes_whatever_follows_the_host() {
        for (text, want) in [
            (
                "dial tcp: lookup postgres://app:PgPass77x@db:5432: no such host",
                "dial tcp: lookup postgres://[REDACTED]@db:5432: no such host",
            ),
            (
                "see postgres://app:pw@db:5432.",
                "see postgres://[REDACTED]@db:5432.",
            ),
            (
                "redis://svc:pw@cache: connection refused",
                "redis://[REDACTED]@cache: connection refused",
            ),
            ("[amqp://u:p@rabbit]", "[amqp://[REDACTED]@rabbit]"),
            (
                "mongodb+srv://u:p@c0.example.net!",
                "mongodb+srv://[REDACTED]@c0.example.net!",
            ),
            ("x=https://u:p@h", "x=https://[REDACTED]@h"),
            ("http://u:p@[::1]:8080/", "http://[REDACTED]@[::1]:8080/"),
            (
                "jdbc:mysql://root:toor@db:3306/app",
                "jdbc:mysql://[REDACTED]@db:3306/app",
            ),
            ("'postgres://a:b@h/x'", "'postgres://[REDACTED]@h/x'"),
            (
                "https://ghp_abc@github.com/o/r",
                "https://[REDACTED]@github.com/o/r",
            ),
            (
                "redis://:r3dis@cache:6379/0",
                "redis://[REDACTED]@cache:6379/0",
            ),
        ] {
            assert_eq!(scrub(text), want, "{text}");
        }
    }

    #[test]
    fn passwords_with_at_signs_and_slashes_go_whole() {
        assert_eq!(
            scrub("postgres://app:p@ss@w0rd@db/x"),
            "postgres://[REDACTED]@db/x"
        );
        assert_eq!(
            scrub("postgres://app:pa/ss@db/x fails"),
            "postgres://[REDACTED]@db/x fails"
        );
        assert_eq!(
            scrub("ftp://me@example.com@files/x"),
            "ftp://[REDACTED]@files/x"
        );
    }

    #[test]
    fn passwords_with_blanks_go_whole() {
        for (text, want) in [
            (
                "config: parse \"redis://svc:two words here@cache:6379/0\": net/url: invalid userinfo",
                "config: parse \"redis://[REDACTED]@cache:6379/0\": net/url: invalid userinfo",
            ),
            (
                "Illegal character in authority at index 8: https://deploy:a b c@repo.internal/x",
                "Illegal character in authority at index 8: https://[REDACTED]@repo.internal/x",
            ),
            (
                "Looking in indexes: http://app:****@Kx9qZ/rest:2V8@127.0.0.1:3747/simple",
                "Looking in indexes: http://[REDACTED]@127.0.0.1:3747/simple",
            ),
        ] {
            assert_eq!(scrub(text), want, "{text}");
        }
        for (text, want) in [
            (
                "see http://localhost:8080 or mail admin@example.com",
                "see http://localhost:8080 or mail admin@example.com",
            ),
            (
                "http://example.com:port is wrong, ask ops@example.com",
                "http://example.com:port is wrong, ask ops@example.com",
            ),
            ("http://host:abc/x then y@z", "http://host:abc/x then y@z"),
            (
                "https://u:p@db/pkg/@types/node",
                "https://[REDACTED]@db/pkg/@types/node",
            ),
            ("https://u:p@Db/x@y", "https://[REDACTED]@Db/x@y"),
        ] {
            assert_eq!(scrub(text), want, "{text}");
        }
    }

    #[test]
    fn at_signs_in_paths_and_plain_urls_stay() {
        for text in [
            "https://registry.npmjs.org/@types/node",
            "http://host:8080/@scope/pkg",
            "https://example.com/a?b=c@d",
            "https://example.com#x@y",
            "no scheme://here",
            "://@host",
            "https://example.com/x y@z",
            "postgres://[REDACTED]@db/x",
        ] {
            assert_eq!(scrub(text), text);
        }
    }

    #[test]
    fn a_password_goes_though_no_host_follows() {
        for (text, want) in [
            (
                "DATABASE_URL=postgres://app:PgPass77x@/app",
                "DATABASE_URL=postgres://[REDACTED]@/app",
            ),
            (
                "postgres://app:pw@:5432/app",
                "postgres://[REDACTED]@:5432/app",
            ),
            (
                "postgres://app:PgPass77x@ failed",
                "postgres://[REDACTED]@ failed",
            ),
            ("postgres://app:PgPass77x@", "postgres://[REDACTED]@"),
        ] {
            assert_eq!(scrub(text), want, "{text}");
        }
    }

    /// Many URLs on one line with nothing between them: each authority is read only up to
    /// the next URL, so the work grows with the line, not with its square.
    #[test]
    fn many_urls_on_one_line_stay_linear() {
        let line = "a://".repeat(16 * 1024);
        assert_eq!(scrub(&line), line);
        let line = "http://u:p@h/,".repeat(4 * 1024);
        assert_eq!(
            scrub(&line).matches("[REDACTED]").count(),
            4 * 1024,
            "every URL's user info"
        );
    }

    #[test]
    fn every_url_on_a_line() {
        assert_eq!(
            scrub("from redis://a:b@r to https://c:d@e:1: done"),
            "from redis://[REDACTED]@r to https://[REDACTED]@e:1: done"
        );
    }
}
