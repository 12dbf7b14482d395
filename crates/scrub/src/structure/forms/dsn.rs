//! Data source names without a scheme, whose user info goes whole (a user name can be a
//! token too): Go's MySQL driver, `user:password@tcp(host:3306)/db` (also `tcp6`, `udp`,
//! `unix`), and `user:password@host:port/db` as libraries print a DSN.
//!
//! Read from each `@`: after it a protocol's `(` or `host:port` (two to five digits and no
//! word character after them); before it the user info, a word that starts after a blank,
//! a quote, `=`, `(` or `,`, and holds a `:` after a user name of `[A-Za-z0-9_.$#-]`. A
//! password cannot be empty. Before a protocol's `(` the driver's grammar says where the
//! password ends (at the last `@` before the address), so there it may hold blanks, `@`
//! and `/` (`open app:two words@tcp(db:3306)/x`, as Go's `sql.Open` errors print it): the
//! user info starts at the leftmost user name and `:` on the line after a blank, a quote,
//! `=`, `(` or `,` with no `: ` after it, and before the last `)` ahead of the `@` (the end
//! of a DSN before it). A
//! password cannot be empty: `jdbc:oracle:thin:@db:1521:ORCL` is a URL prefix, not a
//! user, and stays; `git@github.com:org/repo` has no `:` before its `@`.

use super::super::super::marker::REDACTED;
use super::lex::{BACK_REACH, Span, Text};

/// What may follow the `@` and start a Go MySQL address.
const PROTOCOLS: &[&[u8]] = &[b"tcp(", b"tcp6(", b"udp(", b"unix("];

pub(super) fn secrets(text: &Text<'_>, out: &mut Vec<Span>) {
    let b = text.bytes();
    // Where the last protocol's address opened (after its `(`): a DSN's user info starts
    // after it, as it would once that DSN's own user info is a marker, so that one pass
    // finds what any later pass would (`a:b@tcp(c:d@tcp(` is two DSNs), and no user info
    // is read back past an address.
    let mut address = 0;
    for (at, _) in text.raw.match_indices('@') {
        let after = &b[at + 1..];
        let protocol = PROTOCOLS.iter().find(|p| after.starts_with(p));
        let floor = address;
        if let Some(p) = protocol {
            address = at + 1 + p.len();
        }
        let protocol = protocol.is_some();
        if !protocol && !host_and_port(after) {
            if let Some(start) = quoted_user_info(text.raw, at) {
                out.push((start, at));
            }
            continue;
        }
        let start = match protocol {
            true => {
                driver_user_info_before(text.raw, floor, at).or_else(|| user_info_before(b, at))
            }
            false => user_info_before(b, at),
        };
        // A piece of the password may be redacted already (a random run between its `@`
        // and `/`); the user info still goes whole.
        if let Some(start) = start
            && !text.raw[start..at].starts_with(REDACTED)
        {
            out.push((start, at));
        }
    }
}

/// `host:port` then no word character.
fn host_and_port(after: &[u8]) -> bool {
    let host = after
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric() || b".-".contains(c))
        .count();
    let Some(rest) = after[host..].strip_prefix(b":") else {
        return false;
    };
    let port = rest.iter().take_while(|c| c.is_ascii_digit()).count();
    host > 0
        && (2..=5).contains(&port)
        && !rest
            .get(port)
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
}

/// Where the user info starts when a quoted string is `user:password@host` whole, the
/// password perhaps with blanks (`'admin:two words@127.0.0.1'`, as Python's
/// `http.client.InvalidURL` quotes an authority): the quote's inside, when it opens with a
/// user name and `:`, and the `@` is followed by a host and then the closing quote, a
/// port or a path.
fn quoted_user_info(text: &str, at: usize) -> Option<usize> {
    let b = text.as_bytes();
    let floor = super::lex::line_start(text, at).max(at.saturating_sub(BACK_REACH));
    let open = (floor..at).rev().find(|&i| matches!(b[i], b'\'' | b'"'))?;
    let quote = b[open];
    let host = b[at + 1..]
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric() || b".-".contains(c))
        .count();
    let next = b.get(at + 1 + host).copied();
    let dotted = text[at + 1..at + 1 + host].contains('.');
    if host == 0 || !dotted || !(next == Some(quote) || matches!(next, Some(b':' | b'/'))) {
        return None;
    }
    let inside = &text[open + 1..at];
    let user = inside
        .bytes()
        .take_while(|&c| c.is_ascii_alphanumeric() || b"_.$#-".contains(&c))
        .count();
    let fresh = !inside.contains(REDACTED) && !inside.contains("://");
    // `12:30 …` is a time, `see: …` a label: a password starts right after the `:`.
    let named = user > 0 && !inside[..user].bytes().all(|c| c.is_ascii_digit());
    let password = inside.get(user + 1..).unwrap_or("");
    let shaped = inside.as_bytes().get(user) == Some(&b':')
        && password.starts_with(|c: char| !c.is_whitespace())
        && !password.contains(": ");
    (named && shaped && fresh).then_some(open + 1)
}

/// Where the user info before a Go MySQL address at `at` starts, its password read to
/// that `@` whatever it holds; not before `floor`, where the last address opened.
fn driver_user_info_before(text: &str, floor: usize, at: usize) -> Option<usize> {
    let b = text.as_bytes();
    let line = super::lex::line_start(text, at).max(floor);
    let floor = at.saturating_sub(BACK_REACH).max(line);
    let floor = text[floor..at].rfind(')').map_or(floor, |n| floor + n + 1);
    let user_char = |c: u8| c.is_ascii_alphanumeric() || b"_.$#-".contains(&c);
    (floor..at)
        .filter(|&i| i == line || b[i - 1].is_ascii_whitespace() || b"'\"=(,".contains(&b[i - 1]))
        .find(|&start| {
            let user = b[start..at].iter().take_while(|&&c| user_char(c)).count();
            let password = start + user + 1;
            user > 0
                && b.get(start + user) == Some(&b':')
                && password < at
                && !b[password].is_ascii_whitespace()
                && !text[password..at].contains(": ")
        })
}

/// Where the user info that ends at the `@` at `at` starts.
fn user_info_before(b: &[u8], at: usize) -> Option<usize> {
    if at == 0 || b[at - 1] == b':' {
        return None;
    }
    let floor = at.saturating_sub(BACK_REACH);
    let run = (floor..at)
        .rev()
        .find(|&i| b[i].is_ascii_whitespace() || b"@/'\"".contains(&b[i]))
        .map_or(floor, |i| i + 1);
    if run == floor && floor > 0 {
        return None;
    }
    // The leftmost start, the run's or one after `=`, `(` or `,`, where a user name and
    // `:` begin.
    let user_char = |c: u8| c.is_ascii_alphanumeric() || b"_.$#-".contains(&c);
    let mut starts =
        std::iter::once(run).chain((run..at).filter(|&i| b"=(,".contains(&b[i])).map(|i| i + 1));
    starts.find(|&start| {
        let user = b[start..at].iter().take_while(|&&c| user_char(c)).count();
        b.get(start + user) == Some(&b':') && start + user + 1 < at
    })
}

#[cfg(test)]
mod tests {

    fn r(text: &str) -> String {
        super::super::lexed(super::secrets, text)
    }

    #[test]
    fn the_user_info_goes() {
        let cases = [
            (
                "dsn user:pa55@tcp(db:3306)/app failed",
                "dsn [REDACTED]@tcp(db:3306)/app failed",
            ),
            (
                "DSN=app:Xq7(w)9@unix(/run/mysqld.sock)/x",
                "DSN=[REDACTED]@unix(/run/mysqld.sock)/x",
            ),
            (
                "connect app:s3cret@db.internal:5432/orders",
                "connect [REDACTED]@db.internal:5432/orders",
            ),
            ("'app:p:w@db:5432'", "'[REDACTED]@db:5432'"),
            (
                "open app:two words x@tcp(db:3306)/app: lookup app:two words x@tcp(db:3306)/app: no such host",
                "open [REDACTED]@tcp(db:3306)/app: lookup [REDACTED]@tcp(db:3306)/app: no such host",
            ),
            (
                "error: app:P@s/s!#%,q:z@tcp(db:3306)/x",
                "error: [REDACTED]@tcp(db:3306)/x",
            ),
            // Two DSNs, the first not closed: each user info goes, found in one pass.
            (
                "app:pw@tcp(app:pw@tcp(db:3306)/x",
                "[REDACTED]@tcp([REDACTED]@tcp(db:3306)/x",
            ),
            (
                "http.client.InvalidURL: URL can't contain control characters. 'admin:two words x@127.0.0.1' (found at least ' ')",
                "http.client.InvalidURL: URL can't contain control characters. '[REDACTED]@127.0.0.1' (found at least ' ')",
            ),
        ];
        super::super::assert_lexed(super::secrets, &cases);
    }

    #[test]
    fn look_alikes_stay() {
        for text in [
            "jdbc:oracle:thin:@db:1521:ORCL",
            "fatal: could not read from git@github.com:org/repo.git",
            "at 12:30 ops@example.com wrote",
            "user:@db:5432",
            "a:b@host:123456",
            "a:b@host:80x",
            "postgres://[REDACTED]@db:5432/x",
            "'see: ops@example.com'",
            "'at 12:30 mail ops@example.com'",
            "'12:30 mail ops@example.com'",
        ] {
            assert_eq!(r(text), text);
        }
    }
}
