//! SQL that carries a credential, as a client echoes a statement or a server quotes it
//! (`STATEMENT:`, a syntax error, a slow-query log):
//!
//! - `IDENTIFIED BY '…'` (MySQL, Oracle; also `IDENTIFIED WITH plugin BY '…'`,
//!   `IDENTIFIED BY PASSWORD '…'`, Oracle's unquoted `IDENTIFIED BY tiger`, `"…"`, and the
//!   old password of `REPLACE '…'` after it). An unquoted value goes when the keywords are
//!   in capitals or the line opens a `CREATE`/`ALTER USER`/`ROLE`/`LOGIN` statement, so
//!   prose (`the user is identified by their e-mail`) stays; `BY RANDOM PASSWORD` is a
//!   keyword, not a value;
//! - a string literal right after the word `PASSWORD` (`WITH PASSWORD '…'`,
//!   `LOGIN ENCRYPTED PASSWORD '…'`, SQL Server's `PASSWORD = N'…'`, PostgreSQL's
//!   dollar quotes `$$…$$`): PostgreSQL's
//!   `CREATE`/`ALTER ROLE`/`USER`, MySQL's `SET PASSWORD = '…'`;
//! - a duplicate-key detail whose column is named for a secret: PostgreSQL's
//!   `Key (api_token)=(…) already exists.` (with several columns, only the secret's value
//!   goes when the values split as the columns do), MySQL's
//!   `Duplicate entry '…' for key 'users.api_token'` (or an index with a secret's column,
//!   `users.uniq_token_user`), MongoDB's `index: token_1 dup key: { : "…" }`;
//! - a failing-row detail (`Failing row contains (…)`) after a message, at most two lines
//!   up, that names a column or constraint for a secret: the row's values go, except
//!   `null`, numbers, `t`/`f` and timestamps.
//!
//! `ERROR: syntax error at or near "IDENTIFIED"`, `password authentication failed` and a
//! key detail of an ordinary column (`Key (email)=(…)`, left to the personal layer) stay.
//! Limits: a failing row after a message that names no secret's column keeps its values
//! (which value is which column is not printed), and an unquoted lower-case
//! `identified by …` outside a statement that creates a login is read as prose.

use super::super::super::marker::REDACTED;
use super::super::super::names::{NOT_SECRETS, names_a_secret};
use super::lex::{BACK_REACH, Span, Text, line_end, line_start, quoted_end, skip_blanks, value_at};

/// Statements whose unquoted `IDENTIFIED BY` value is a password, in lower case.
const STATEMENTS: &[&str] = &[
    "create user",
    "alter user",
    "create role",
    "alter role",
    "create login",
    "alter login",
    "grant ",
];

/// Where an unquoted SQL value ends besides white space.
const SQL_STOPS: &[u8] = b";,)'\"";

pub(super) fn secrets(text: &Text<'_>, out: &mut Vec<Span>) {
    identified_by(text, out);
    password_literals(text, out);
    key_details(text, out);
    failing_rows(text, out);
    mongo_duplicate_keys(text, out);
}

/// The word at `at` if it is `word` (lower case) standing alone, and where it ends.
fn word_at(text: &Text<'_>, at: usize, word: &str) -> Option<usize> {
    let b = text.bytes();
    let end = at + word.len();
    (text.lower[at..].starts_with(word)
        && !b
            .get(end)
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_'))
    .then_some(end)
}

fn identified_by(text: &Text<'_>, out: &mut Vec<Span>) {
    let b = text.bytes();
    let mut resume = 0;
    for at in text.words("identified").collect::<Vec<_>>() {
        if at < resume {
            continue;
        }
        let mut i = skip_blanks(b, at + "identified".len());
        if let Some(end) = word_at(text, i, "with") {
            // The plugin's name.
            let plugin = skip_blanks(b, end);
            let name = b[plugin..]
                .iter()
                .take_while(|c| c.is_ascii_alphanumeric() || b"_-".contains(c))
                .count();
            i = skip_blanks(b, plugin + name);
        }
        let Some(end) = word_at(text, i, "by").or_else(|| word_at(text, i, "as")) else {
            continue;
        };
        i = skip_blanks(b, end);
        for keyword in ["password", "values"] {
            if let Some(end) = word_at(text, i, keyword)
                && matches!(b.get(skip_blanks(b, end)), Some(b'\'' | b'"'))
            {
                i = skip_blanks(b, end);
            }
        }
        let capitals = text.raw[at..].starts_with("IDENTIFIED");
        let Some((span, after)) = sql_value(text, i, capitals || opens_statement(text, at)) else {
            continue;
        };
        out.push(span);
        resume = after;
        // Oracle's `IDENTIFIED BY new REPLACE old`.
        let next = skip_blanks(b, after);
        if let Some(end) = word_at(text, next, "replace")
            && let Some((span, after)) = sql_value(text, skip_blanks(b, end), true)
        {
            out.push(span);
            resume = after;
        }
    }
}

/// A value at `at`: a quoted one always, an unquoted one when `bare` says the statement
/// is SQL, and not a keyword or a word that starts a sentence.
fn sql_value(text: &Text<'_>, at: usize, bare: bool) -> Option<(Span, usize)> {
    let quoted = matches!(text.bytes().get(at), Some(b'\'' | b'"'));
    if !quoted && !bare {
        return None;
    }
    let (span, after) = value_at(text.raw, at, SQL_STOPS)?;
    let value = &text.raw[span.0..span.1];
    let keyword = !quoted
        && (value.eq_ignore_ascii_case("random")
            || NOT_SECRETS.iter().any(|w| value.eq_ignore_ascii_case(w)));
    (!keyword).then_some((span, after))
}

/// Whether the line of `at` opens a statement that creates or changes a login.
fn opens_statement(text: &Text<'_>, at: usize) -> bool {
    let start = line_start(text.raw, at);
    STATEMENTS.iter().any(|s| text.lower[start..at].contains(s))
}

/// PostgreSQL's dollar-quoted string at `at` (`$$…$$`, `$tag$…$tag$`) on its line: the
/// inside, and where reading goes on.
fn dollar_quoted(text: &str, at: usize) -> Option<(Span, usize)> {
    let rest = text.get(at..)?.strip_prefix('$')?;
    let tag_len = rest
        .bytes()
        .take(64)
        .take_while(|c| c.is_ascii_alphanumeric() || *c == b'_')
        .count();
    let tag = text.get(at..at + tag_len + 2)?;
    if !tag.ends_with('$') {
        return None;
    }
    let inner = at + tag.len();
    let line = line_end(text, inner);
    let close = text[inner..line].find(tag)?;
    (close > 0).then_some(((inner, inner + close), inner + close + tag.len()))
}

fn password_literals(text: &Text<'_>, out: &mut Vec<Span>) {
    let b = text.bytes();
    let mut resume = 0;
    for at in text.words("password").collect::<Vec<_>>() {
        if at < resume {
            continue;
        }
        let mut i = skip_blanks(b, at + "password".len());
        if i == at + "password".len() && b.get(i) != Some(&b'=') {
            continue;
        }
        // MySQL's `SET PASSWORD FOR 'u'@'%' = '…'`.
        if let Some(end) = word_at(text, i, "for") {
            let line = line_end(text.raw, end);
            resume = line;
            match text.raw[end..line].find('=') {
                Some(n) => i = end + n,
                None => continue,
            }
        }
        if b.get(i) == Some(&b'=') && b.get(i + 1) != Some(&b'=') {
            i = skip_blanks(b, i + 1);
        }
        // SQL Server's `N'…'`, PostgreSQL's `E'…'`.
        if matches!(b.get(i), Some(b'N' | b'E' | b'n' | b'e')) && b.get(i + 1) == Some(&b'\'') {
            i += 1;
        }
        if let Some((span, after)) = dollar_quoted(text.raw, i) {
            out.push(span);
            resume = after;
            continue;
        }
        if !matches!(b.get(i), Some(b'\'' | b'"')) {
            continue;
        }
        if let Some((span, after)) = value_at(text.raw, i, SQL_STOPS) {
            out.push(span);
            resume = after;
        }
    }
}

fn key_details(text: &Text<'_>, out: &mut Vec<Span>) {
    let mut resume = 0;
    for (at, _) in text.lower.match_indices("key (") {
        if at < resume {
            continue;
        }
        let cols_start = at + "key (".len();
        let end = line_end(text.raw, cols_start);
        // A detail that does not parse on this line leaves none after it to parse.
        resume = end;
        let Some(close) = text.raw[cols_start..end]
            .find(")=(")
            .map(|n| cols_start + n)
        else {
            continue;
        };
        let columns: Vec<&str> = text.raw[cols_start..close].split(", ").collect();
        if !columns.iter().any(|c| names_a_secret(c.trim_matches('"'))) {
            continue;
        }
        let values_start = close + 3;
        let rest = &text.lower[values_start..end];
        let values_end = [
            ") already exists",
            ") is not present",
            ") conflicts with",
            ") is still referenced",
        ]
        .iter()
        .filter_map(|tail| rest.find(tail))
        .min()
        .or_else(|| rest.rfind(')'))
        .map_or(end, |n| values_start + n);
        resume = values_end;
        let values = &text.raw[values_start..values_end];
        if values.is_empty() || values.starts_with(REDACTED) {
            continue;
        }
        let parts: Vec<&str> = values.split(", ").collect();
        if parts.len() != columns.len() {
            out.push((values_start, values_end));
            continue;
        }
        let mut from = values_start;
        for (column, value) in columns.iter().zip(&parts) {
            if names_a_secret(column.trim_matches('"')) && !value.is_empty() && *value != REDACTED {
                out.push((from, from + value.len()));
            }
            from += value.len() + 2;
        }
    }
    duplicate_entries(text, out);
}

/// MySQL: `Duplicate entry '…' for key 'table.column'`.
fn duplicate_entries(text: &Text<'_>, out: &mut Vec<Span>) {
    let mut resume = 0;
    for (at, _) in text.lower.match_indices("duplicate entry '") {
        if at < resume {
            continue;
        }
        let inner = at + "duplicate entry '".len();
        let end = line_end(text.raw, inner);
        resume = end;
        let Some(close) = text.lower[inner..end]
            .rfind("' for key '")
            .map(|n| inner + n)
        else {
            continue;
        };
        let key_start = close + "' for key '".len();
        let key = text.raw[key_start..end].split('\'').next().unwrap_or("");
        let value = &text.raw[inner..close];
        if names_a_secret_index(key) && !value.is_empty() && value != REDACTED {
            out.push((inner, close));
        }
    }
}

/// Whether an index or key name holds a secret's column: the name itself
/// (`users.api_token`) or one of its words after the table (`users.uniq_token_user`,
/// MongoDB's `token_1`).
fn names_a_secret_index(key: &str) -> bool {
    let name = key.rsplit('.').next().unwrap_or(key);
    names_a_secret(key) || name.split('_').any(names_a_secret)
}

/// MongoDB's `E11000 duplicate key error … index: token_1 dup key: { : "…" }`: the quoted
/// values in the braces, when the index is a secret's.
fn mongo_duplicate_keys(text: &Text<'_>, out: &mut Vec<Span>) {
    let b = text.bytes();
    let mut resume = 0;
    for (at, _) in text.lower.match_indices(" dup key: {") {
        if at < resume {
            continue;
        }
        let start = line_start(text.raw, at);
        let Some(index) = text.lower[start..at]
            .rfind("index: ")
            .map(|n| start + n + 7)
        else {
            continue;
        };
        if !names_a_secret_index(&text.raw[index..at]) {
            continue;
        }
        let end = line_end(text.raw, at);
        let close = text.raw[at..end].find('}').map_or(end, |n| at + n);
        resume = close;
        let mut i = at + " dup key: {".len();
        while i < close {
            match b[i] {
                b'"' => {
                    let inner_end = quoted_end(text.raw, i + 1, b'"');
                    if inner_end > i + 1 && &text.raw[i + 1..inner_end] != REDACTED {
                        out.push((i + 1, inner_end));
                    }
                    i = inner_end + 1;
                }
                _ => i += 1,
            }
        }
    }
}

fn failing_rows(text: &Text<'_>, out: &mut Vec<Span>) {
    let mut resume = 0;
    for (at, _) in text.lower.match_indices("failing row contains (") {
        if at < resume {
            continue;
        }
        let open = at + "failing row contains (".len();
        let end = line_end(text.raw, open);
        resume = end;
        let Some(close) = text.raw[open..end].rfind(')').map(|n| open + n) else {
            continue;
        };
        if !names_a_secret_above(text, at) {
            continue;
        }
        let mut from = open;
        for value in text.raw[open..close].split(", ") {
            if !is_fact(value) {
                out.push((from, from + value.len()));
            }
            from += value.len() + 2;
        }
    }
}

/// Whether a `column "…"` or `constraint "…"` named for a secret stands on the line of
/// `at` or the two before it.
fn names_a_secret_above(text: &Text<'_>, at: usize) -> bool {
    let mut start = line_start(text.raw, at);
    for _ in 0..2 {
        if start == 0 {
            break;
        }
        start = line_start(text.raw, start - 1);
    }
    let floor = start.max(at.saturating_sub(4 * BACK_REACH));
    let above = &text.lower[floor..at];
    ["column \"", "constraint \""].iter().any(|word| {
        above.match_indices(word).any(|(i, _)| {
            let name = above[i + word.len()..].split('"').next().unwrap_or("");
            names_a_secret(name)
        })
    })
}

/// A value of a failing row that says nothing secret: `null`, a number, `t` or `f`, a
/// date or timestamp, or a marker.
fn is_fact(value: &str) -> bool {
    let v = value.trim();
    v.is_empty()
        || v == "null"
        || v == "t"
        || v == "f"
        || v == REDACTED
        || v.bytes()
            .all(|c| c.is_ascii_digit() || b".-+:T Z".contains(&c))
}

#[cfg(test)]
mod tests {

    fn r(text: &str) -> String {
        super::super::lexed(super::secrets, text)
    }

    #[test]
    fn statements_lose_their_passwords() {
        let cases = [
            (
                "ALTER USER app IDENTIFIED BY 'Xk9#pw q';",
                "ALTER USER app IDENTIFIED BY '[REDACTED]';",
            ),
            (
                "ALTER USER app IDENTIFIED BY Xk9pwq77;",
                "ALTER USER app IDENTIFIED BY [REDACTED];",
            ),
            (
                "alter user app identified by Xk9pwq77 account unlock",
                "alter user app identified by [REDACTED] account unlock",
            ),
            (
                "CREATE USER 'a'@'%' IDENTIFIED WITH caching_sha2_password BY 'it''s x';",
                "CREATE USER 'a'@'%' IDENTIFIED WITH caching_sha2_password BY '[REDACTED]';",
            ),
            (
                "ALTER USER scott IDENTIFIED BY \"n3w pw\" REPLACE 0ldpw;",
                "ALTER USER scott IDENTIFIED BY \"[REDACTED]\" REPLACE [REDACTED];",
            ),
            (
                "GRANT ALL ON x.* TO u IDENTIFIED BY PASSWORD '*6BB4837EB74329105EE4568DDA7DC67ED2CA2AD9'",
                "GRANT ALL ON x.* TO u IDENTIFIED BY PASSWORD '[REDACTED]'",
            ),
            (
                "CREATE USER bob WITH PASSWORD 'Xk9#pw q';",
                "CREATE USER bob WITH PASSWORD '[REDACTED]';",
            ),
            (
                "STATEMENT:  CREATE ROLE bob LOGIN ENCRYPTED PASSWORD 'Xk9#pw q';",
                "STATEMENT:  CREATE ROLE bob LOGIN ENCRYPTED PASSWORD '[REDACTED]';",
            ),
            (
                "ALTER ROLE bob PASSWORD 'Xk9' VALID UNTIL 'infinity';",
                "ALTER ROLE bob PASSWORD '[REDACTED]' VALID UNTIL 'infinity';",
            ),
            (
                "CREATE LOGIN etl WITH PASSWORD = N'Xk9#pw q', CHECK_POLICY = OFF",
                "CREATE LOGIN etl WITH PASSWORD = N'[REDACTED]', CHECK_POLICY = OFF",
            ),
            (
                "SET PASSWORD FOR 'u'@'%' = 'Xk9'",
                "SET PASSWORD FOR 'u'@'%' = '[REDACTED]'",
            ),
            ("SET PASSWORD = 'Xk9pw'", "SET PASSWORD = '[REDACTED]'"),
        ];
        super::super::assert_lexed(super::secrets, &cases);
    }

    #[test]
    fn details_lose_the_values_of_secret_columns() {
        let cases = [
            (
                "DETAIL:  Key (api_token)=(tok_9f8e7d6c5b4a) already exists.",
                "DETAIL:  Key (api_token)=([REDACTED]) already exists.",
            ),
            (
                "DETAIL:  Key (tenant, api_token)=(7, a, b) already exists.",
                "DETAIL:  Key (tenant, api_token)=([REDACTED]) already exists.",
            ),
            (
                "DETAIL:  Key (tenant, api_token)=(7, ab(c)) already exists.",
                "DETAIL:  Key (tenant, api_token)=(7, [REDACTED]) already exists.",
            ),
            (
                "ERROR 1062 (23000): Duplicate entry 'tok_9f8e' for key 'users.api_token'",
                "ERROR 1062 (23000): Duplicate entry '[REDACTED]' for key 'users.api_token'",
            ),
            (
                "ERROR:  new row for relation \"keys\" violates check constraint \"keys_secret_check\"\nDETAIL:  Failing row contains (42, bob, Zq8xwLm2pe, null, 2026-12-04 10:00:00+00).",
                "ERROR:  new row for relation \"keys\" violates check constraint \"keys_secret_check\"\nDETAIL:  Failing row contains (42, [REDACTED], [REDACTED], null, 2026-12-04 10:00:00+00).",
            ),
        ];
        super::super::assert_lexed(super::secrets, &cases);
    }

    #[test]
    fn prose_and_ordinary_columns_stay() {
        for text in [
            "ERROR: syntax error at or near \"IDENTIFIED\"",
            "the user is identified by their e-mail",
            "CREATE USER u IDENTIFIED BY RANDOM PASSWORD",
            "CREATE USER u IDENTIFIED EXTERNALLY",
            "FATAL:  password authentication failed for user \"app\"",
            "password '' is empty",
            "DETAIL:  Key (email)=(x@y.org) already exists.",
            "DETAIL:  Key (id)=(42) already exists.",
            "ERROR 1062 (23000): Duplicate entry '42' for key 'users.PRIMARY'",
            "DETAIL:  Failing row contains (42, bob, null).",
            "ALTER USER app IDENTIFIED BY '[REDACTED]';",
        ] {
            assert_eq!(r(text), text);
        }
    }
}
