//! SQL `INSERT` statements as a client or server echoes them (`STATEMENT:  INSERT INTO …`,
//! MySQL's `--verbose` echo, a driver's `sql: "INSERT …"` in an error object): the values
//! given to columns named for a secret (`password_hash`, `api_token`) go, matched to the
//! column list by position.
//!
//! `INSERT INTO users (name, password_hash) VALUES ('ops', '…'), ('dev', '…')` loses both
//! passwords and keeps the names. The statement is read on its line only: a table name, a
//! column list in parentheses, `VALUES` and one or more tuples of literals (quoted strings
//! with `''` or `\'` inside, numbers, `NULL`, words). A tuple that holds anything else (a
//! call, a sub-select) or does not split into as many values as there are columns is left
//! to the other rules, since which value is which column is then unknown.

use super::super::super::marker::REDACTED;
use super::super::super::names::names_a_secret;
use super::lex::{Span, Text, line_end, quoted_end, skip_blanks};

pub(super) fn secrets(text: &Text<'_>, out: &mut Vec<Span>) {
    let mut resume = 0;
    for (at, _) in text.lower.match_indices("insert into ") {
        if at < resume {
            continue;
        }
        let end = line_end(text.raw, at);
        resume = end;
        statement(text, at + "insert into ".len(), end, out);
    }
}

/// Reads one statement from just after `INSERT INTO` up to `end`, the line's end.
fn statement(text: &Text<'_>, from: usize, end: usize, out: &mut Vec<Span>) {
    let lower = &text.lower[..end];
    let Some(open) = lower[from..].find('(').map(|n| from + n) else {
        return;
    };
    // The table name: one word, perhaps quoted or qualified, and nothing else.
    if text.raw[from..open].trim().contains(char::is_whitespace) {
        return;
    }
    let Some(close) = lower[open..].find(')').map(|n| open + n) else {
        return;
    };
    let secret: Vec<bool> = text.raw[open + 1..close]
        .split(',')
        .map(|c| column_is_secret(c.trim().trim_matches(['"', '`', '[', ']'])))
        .collect();
    if !secret.contains(&true) {
        return;
    }
    let b = text.bytes();
    let mut i = skip_blanks(b, close + 1);
    if !lower[i..].starts_with("values") {
        return;
    }
    i = skip_blanks(b, i + "values".len());
    while i < end && b[i] == b'(' {
        let Some((values, after)) = tuple(text, i + 1, end) else {
            return;
        };
        if values.len() == secret.len() {
            for (span, _) in values.iter().zip(&secret).filter(|(_, s)| **s) {
                let value = &text.raw[span.0..span.1];
                if !value.is_empty()
                    && value != REDACTED
                    && !value.eq_ignore_ascii_case("null")
                    && !is_placeholder(value)
                {
                    out.push(*span);
                }
            }
        }
        i = skip_blanks(b, after);
        if b.get(i) != Some(&b',') {
            return;
        }
        i = skip_blanks(b, i + 1);
    }
}

/// Whether an unquoted value is a bound parameter's placeholder, not a value: `?`, `%s`,
/// `%(name)s`, `$1`, `:name`, `@name`.
fn is_placeholder(value: &str) -> bool {
    let name = |s: &str| !s.is_empty() && s.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_');
    value == "?"
        || value == "%s"
        || value.strip_prefix("%(").is_some_and(|r| r.ends_with(")s"))
        || value
            .strip_prefix('$')
            .is_some_and(|r| r.bytes().all(|c| c.is_ascii_digit()) && !r.is_empty())
        || value.strip_prefix([':', '@']).is_some_and(name)
}

/// Whether a column's name, or one of its words (`password_hash`), is a secret's.
fn column_is_secret(column: &str) -> bool {
    names_a_secret(column) || column.split('_').any(names_a_secret)
}

/// The values of a tuple whose inside starts at `from` (the inside of each quoted one),
/// and where reading goes on after its `)`; `None` when it holds more than literals.
fn tuple(text: &Text<'_>, from: usize, end: usize) -> Option<(Vec<Span>, usize)> {
    let b = text.bytes();
    let mut values = Vec::new();
    let mut i = skip_blanks(b, from);
    loop {
        match *b.get(i).filter(|_| i < end)? {
            q @ (b'\'' | b'"') => {
                let close = quoted_end(text.raw, i + 1, q);
                if close >= end || b[close] != q {
                    return None;
                }
                values.push((i + 1, close));
                i = close + 1;
            }
            _ => {
                let start = i;
                while i < end && !matches!(b[i], b',' | b')' | b'(' | b'\'' | b'"') {
                    i += 1;
                }
                if b.get(i) == Some(&b'(') {
                    return None;
                }
                let value = text.raw[start..i].trim_end();
                values.push((start, start + value.len()));
            }
        }
        i = skip_blanks(b, i);
        match b.get(i).filter(|_| i < end)? {
            b',' => i = skip_blanks(b, i + 1),
            b')' => return Some((values, i + 1)),
            _ => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::assert_lexed;
    use super::*;

    #[test]
    fn values_of_secret_columns_go() {
        assert_lexed(
            secrets,
            &[
                (
                    "STATEMENT:  INSERT INTO users (name, password_hash) VALUES ('ops', 'Zq8 x''m2');",
                    "STATEMENT:  INSERT INTO users (name, password_hash) VALUES ('ops', '[REDACTED]');",
                ),
                (
                    "INSERT INTO `keys` (`owner`, `api_token`, n) VALUES ('b', 'Xk2@q/9:z', 3), ('c', \"Lm7\", NULL)",
                    "INSERT INTO `keys` (`owner`, `api_token`, n) VALUES ('b', '[REDACTED]', 3), ('c', \"[REDACTED]\", NULL)",
                ),
                (
                    "  sql: \"INSERT INTO api_keys (owner, api_token) VALUES ('b', 'Mq-fx11!&')\"",
                    "  sql: \"INSERT INTO api_keys (owner, api_token) VALUES ('b', '[REDACTED]')\"",
                ),
                (
                    "insert into creds (id, secret) values (7, Wq8zLm)",
                    "insert into creds (id, secret) values (7, [REDACTED])",
                ),
            ],
        );
    }

    #[test]
    fn other_columns_and_unclear_tuples_stay() {
        for text in [
            "INSERT INTO users (name, email) VALUES ('ops', 'x')",
            "INSERT INTO users (name, password_hash) VALUES ('ops', crypt('x', gen_salt('bf')))",
            "INSERT INTO users (name, password_hash) VALUES ('ops')",
            "INSERT INTO users (name, password_hash) SELECT name, pw FROM old",
            "INSERT INTO users (name, password_hash) VALUES ('ops', NULL)",
            "the insert into the queue (of jobs) failed",
            "cur.execute(\"INSERT INTO keys (owner, api_token) VALUES (%s, %s)\", (o, t))",
            "text(\"INSERT INTO keys (owner, api_token) VALUES (:owner, :api_token)\")",
            "INSERT INTO keys (owner, api_token) VALUES (?, ?), ($1, $2), (%(o)s, %(t)s), (@o, @t)",
        ] {
            assert_lexed(secrets, &[(text, text)]);
        }
    }
}
