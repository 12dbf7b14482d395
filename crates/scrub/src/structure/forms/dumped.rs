//! Variables that a traceback prints beside its source lines, when the variable is named
//! for a secret:
//!
//! - loguru (`diagnose=True`) and better_exceptions draw a tree under the source line, each
//!   `└` under the first character of the name whose value follows it:
//!   `    connect("db", db_password)` then `    │             └ '«…»'`; the value goes when
//!   the name above that column is a secret's;
//! - stackprinter lists `name = value` between dotted rules (`    .....`) and wraps a long value onto
//!   lines indented one past where the value starts; the value goes, every wrapped piece of
//!   it, when the name is a secret's, and so does a secret's value inside a dict it prints
//!   (`os.environ = environ({'API_TOKEN': '«…»', …})`, wrapped anywhere).

use super::super::super::marker::REDACTED;
use super::super::super::names::names_a_secret;
use super::lex::{Span, Text};

/// The most tree lines read under one source line.
const TREE_LINES: usize = 40;

pub(super) fn trees(text: &Text<'_>, out: &mut Vec<Span>) {
    let lines = lines(text.raw);
    for (k, &(start, line)) in lines.iter().enumerate() {
        let Some(branch) = line.find('└') else {
            continue;
        };
        if !is_tree(&line[..branch]) {
            continue;
        }
        // The source line: the first line above that is no tree line.
        let source = (k.saturating_sub(TREE_LINES)..k)
            .rev()
            .map(|j| lines[j].1)
            .find(|l| !l.trim_start().starts_with(['│', '└']));
        let Some(source) = source else {
            continue;
        };
        let column = line[..branch].chars().count();
        let name: String = source
            .chars()
            .skip(column)
            .take_while(|&c| c.is_alphanumeric() || c == '_' || c == '.')
            .collect();
        let last = name.rsplit('.').next().unwrap_or("");
        let value = branch + '└'.len_utf8() + 1;
        if names_a_secret(last) && value < line.len() && line[value..].trim() != REDACTED {
            out.push((start + value, start + line.len()));
        }
    }
}

/// Whether the text before a `└` is blanks and `│` only.
fn is_tree(head: &str) -> bool {
    head.chars().all(|c| c == ' ' || c == '│')
}

/// The lines of `text` with where each starts, without their terminators.
fn lines(text: &str) -> Vec<(usize, &str)> {
    let mut at = 0;
    text.split_inclusive('\n')
        .map(|l| {
            let start = at;
            at += l.len();
            (start, l.trim_end_matches(['\n', '\r']))
        })
        .collect()
}

/// A stackprinter entry's wrapped value: the pieces of it, each a span of the text.
type Pieces = Vec<Span>;

pub(super) fn stackprinter(text: &Text<'_>, out: &mut Vec<Span>) {
    let lines = lines(text.raw);
    let mut k = 0;
    // Inside a block of variables, between two dotted rules.
    let mut inside = false;
    while k < lines.len() {
        let (start, line) = lines[k];
        k += 1;
        if is_rule(line) {
            inside = !inside;
            continue;
        }
        let Some((name, value_col)) = entry(line).filter(|_| inside) else {
            continue;
        };
        let mut pieces: Pieces = vec![(start + value_col, start + line.len())];
        let indent = value_col + 1;
        while let Some(&(s, next)) = lines.get(k) {
            let wrapped = next.len() > indent
                && next.as_bytes()[..indent].iter().all(|&c| c == b' ')
                && next.as_bytes()[indent] != b' ';
            if !wrapped {
                break;
            }
            pieces.push((s + indent, s + next.len()));
            k += 1;
        }
        let last = name.rsplit('.').next().unwrap_or("");
        if names_a_secret(last) {
            let unmarked = |&&(s, e): &&Span| text.raw[s..e].trim() != REDACTED;
            out.extend(pieces.iter().filter(unmarked));
        } else {
            dict_secrets(text.raw, &pieces, out);
        }
    }
}

/// Whether a line is stackprinter's rule around a block of variables: four blanks, then
/// dots only (ten or more).
fn is_rule(line: &str) -> bool {
    line.strip_prefix("    ")
        .is_some_and(|dots| dots.len() >= 10 && dots.bytes().all(|c| c == b'.'))
}

/// `     name = value`: a stackprinter entry (five blanks, a dotted name, ` = `), its name and
/// the byte column where the value starts.
fn entry(line: &str) -> Option<(&str, usize)> {
    let rest = line.strip_prefix("     ")?;
    let (name, _) = rest.split_once(" = ")?;
    let named = !name.is_empty()
        && name
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'.');
    named.then_some((name, 5 + name.len() + 3))
}

/// The values of secrets' keys in a dict printed across `pieces` (`'API_TOKEN': '…'`).
fn dict_secrets(raw: &str, pieces: &Pieces, out: &mut Vec<Span>) {
    let joined: String = pieces.iter().map(|&(s, e)| &raw[s..e]).collect();
    if !joined.contains("': '") {
        return;
    }
    // Where each piece starts in `joined`, to map a range back to the text.
    let mut starts = Vec::with_capacity(pieces.len());
    let mut at = 0;
    for &(s, e) in pieces {
        starts.push(at);
        at += e - s;
    }
    // Values come in order: the piece a value starts in only moves on (one pass).
    let mut first = 0;
    for (colon, _) in joined.match_indices("': '") {
        let key_start = joined[..colon].rfind('\'').map_or(colon, |i| i + 1);
        let key = &joined[key_start..colon];
        let inner = colon + 4;
        let Some(len) = joined[inner..].find('\'') else {
            continue;
        };
        if !names_a_secret(key) || len == 0 {
            continue;
        }
        // The value's range in `joined`, as spans of the text piece by piece.
        let (from, to) = (inner, inner + len);
        while first + 1 < pieces.len() && starts[first + 1] <= from {
            first += 1;
        }
        for (p, &(s, e)) in pieces.iter().enumerate().skip(first) {
            let (ps, pe) = (starts[p], starts[p] + (e - s));
            if ps >= to {
                break;
            }
            let (a, b) = (from.max(ps), to.min(pe));
            if a < b {
                out.push((s + a - ps, s + b - ps));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::assert_lexed;
    use super::*;

    #[test]
    fn a_secrets_value_in_a_tree_goes() {
        assert_lexed(
            trees,
            &[(
                "  File \"/app/job.py\", line 12, in main\n    connect(\"127.0.0.1\", 1, \"app\", db_password)\n    │                              └ 'Winter42harbor$'\n    └ <function connect at 0x7fc8fb1f4900>\n",
                "  File \"/app/job.py\", line 12, in main\n    connect(\"127.0.0.1\", 1, \"app\", db_password)\n    │                              └ [REDACTED]\n    └ <function connect at 0x7fc8fb1f4900>\n",
            )],
        );
        let keeps = "    sock = socket.create_connection((host, port), timeout=2)\n           │                  │     └ 1\n           │                  └ '127.0.0.1'\n           └ <module 'socket'>\n";
        assert_lexed(trees, &[(keeps, keeps)]);
    }

    #[test]
    fn a_secrets_wrapped_value_goes_piece_by_piece() {
        assert_lexed(
            stackprinter,
            &[
                (
                    "    ..................................................\n     api_token = 'eyJhbGciOiAiSFMyNTYiLCAidHlwIjogIkpXVCIsICJraWQiOiAiRmRJaXU\n                  2YTkifQ.eyJzdWIiOiAiWTQzSEhjelBKSCIsICJpYXQiOiAxNzYyODkwNTg2\n                  fQ.s3pcFYiXBVXBr4BW9780BLmvLymEHoZ9S0rcdZbZAu8'\n     host = '127.0.0.1'\n",
                    "    ..................................................\n     api_token = [REDACTED]\n                  [REDACTED]\n                  [REDACTED]\n     host = '127.0.0.1'\n",
                ),
                (
                    "    ..........\n     os.environ = environ({'API_TOKEN': 'tok_Q9wE2rT7yUaZ8xK3mN5pL1vB6cD4fG7hJ\n                   0sR2tY5uI8oP3aS6dF9', 'DB_PASSWORD': 'Win\n                   ter42harbor$', 'SHELL': '/bin/bash'})\n    ..........\n",
                    "    ..........\n     os.environ = environ({'API_TOKEN': '[REDACTED]\n                   [REDACTED]', 'DB_PASSWORD': '[REDACTED]\n                   [REDACTED]', 'SHELL': '/bin/bash'})\n    ..........\n",
                ),
            ],
        );
        let keeps = "    ..........\n     host = '127.0.0.1'\n     port = 1\n     os.environ = environ({'SHELL': '/bin/bash', 'HOME': '/root'})\n    ..........\n     password = get_password()\n";
        assert_lexed(stackprinter, &[(keeps, keeps)]);
    }
}
