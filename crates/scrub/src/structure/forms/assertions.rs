//! pytest's report of a failed assertion whose source line names a secret
//! (`>       assert token == os.environ["VAULT_TOKEN"]`): the values it compares, on the
//! `E` lines below (`E  AssertionError: assert '«…»' == '«…»'`, and the diff's
//! `E    - «…»` and `E    + «…»`). An assertion about other names keeps its values.
//!
//! Node's `AssertionError [ERR_ASSERTION]: <message>` whose message names a secret
//! (`token rotated?`): the diff's `+ '«…»'` and `- '«…»'` lines and the error object's
//! `actual: '«…»'` and `expected: '«…»'`, up to the object's closing `}`.

use super::super::super::marker::REDACTED;
use super::super::super::names::names_a_secret;
use super::lex::{Span, Text, line_end, quoted_end};

/// Most `E` lines read after a source line.
const MAX_E_LINES: usize = 16;

pub(super) fn secrets(text: &Text<'_>, out: &mut Vec<Span>) {
    let mut resume = 0;
    for at in text.words("assert") {
        if at < resume {
            continue;
        }
        let start = super::lex::line_start(text.raw, at);
        let end = line_end(text.raw, at);
        let source = &text.raw[start..end];
        if !source.trim_start().starts_with('>') || !names_one(&text.raw[at..end]) {
            continue;
        }
        let mut line = end;
        for _ in 0..MAX_E_LINES {
            let Some(next) = text.raw[line..].find('\n').map(|n| line + n + 1) else {
                break;
            };
            let stop = line_end(text.raw, next);
            let body = &text.raw[next..stop];
            let Some(rest) = body.strip_prefix('E') else {
                break;
            };
            e_line(text, next + 1, rest, out);
            line = stop;
        }
        resume = line;
    }
}

/// Most lines of a Node assertion's report read after its message.
const MAX_NODE_LINES: usize = 40;

pub(super) fn node(text: &Text<'_>, out: &mut Vec<Span>) {
    let cue = "assertionerror [err_assertion]: ";
    let mut resume = 0;
    for (at, _) in text.lower.match_indices(cue) {
        if at < resume {
            continue;
        }
        let end = line_end(text.raw, at);
        if !names_one(&text.raw[at + cue.len()..end]) {
            continue;
        }
        let mut line = end;
        for _ in 0..MAX_NODE_LINES {
            let Some(next) = text.raw[line..].find('\n').map(|n| line + n + 1) else {
                break;
            };
            let stop = line_end(text.raw, next);
            let body = &text.raw[next..stop];
            let trimmed = body.trim_start();
            let valued = ["+ ", "- ", "actual: ", "expected: "]
                .iter()
                .any(|p| trimmed.starts_with(p));
            if valued {
                let from = next + (body.len() - trimmed.len());
                quoted_values(text, from, stop, out);
            }
            line = stop;
            if trimmed.starts_with('}') {
                break;
            }
        }
        resume = line;
    }
}

/// Whether a word of `code` is a secret's name.
fn names_one(code: &str) -> bool {
    code.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .any(|w| w != "assert" && names_a_secret(w))
}

/// One `E` line's values: a diff line's text, or the quoted strings.
fn e_line(text: &Text<'_>, from: usize, rest: &str, out: &mut Vec<Span>) {
    let trimmed = rest.trim_start();
    let indent = rest.len() - trimmed.len();
    if let Some(value) = trimmed
        .strip_prefix("- ")
        .or_else(|| trimmed.strip_prefix("+ "))
    {
        let start = from + indent + 2;
        if !value.trim().is_empty() && value.trim() != REDACTED {
            out.push((start, start + value.trim_end().len()));
        }
        return;
    }
    quoted_values(text, from, from + rest.len(), out);
}

/// Pushes the inside of every quoted string between `from` and `end`.
fn quoted_values(text: &Text<'_>, from: usize, end: usize, out: &mut Vec<Span>) {
    let b = text.bytes();
    let mut i = from;
    while i < end {
        match b[i] {
            q @ (b'\'' | b'"') => {
                let close = quoted_end(text.raw, i + 1, q).min(end);
                let value = &text.raw[i + 1..close];
                if !value.is_empty() && value != REDACTED {
                    out.push((i + 1, close));
                }
                i = close + 1;
            }
            _ => i += 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::assert_lexed;
    use super::*;

    #[test]
    fn compared_values_of_a_secret_go() {
        assert_lexed(
            secrets,
            &[
                (
                    ">       assert token == os.environ[\"VAULT_TOKEN\"]\nE       AssertionError: assert 'Mq-c14!&' == 'dea65a1b...51f1f3585e'\nE         \nE         - dea65a1be49bc14eb8\nE         + Mq-c14!&\n\ntest_t.py:5: AssertionError",
                    ">       assert token == os.environ[\"VAULT_TOKEN\"]\nE       AssertionError: assert '[REDACTED]' == '[REDACTED]'\nE         \nE         - [REDACTED]\nE         + [REDACTED]\n\ntest_t.py:5: AssertionError",
                ),
                (
                    ">       assert user == 'bob'\nE       AssertionError: assert 'al' == 'bob'",
                    ">       assert user == 'bob'\nE       AssertionError: assert 'al' == 'bob'",
                ),
            ],
        );
        assert_lexed(
            node,
            &[
                (
                    "AssertionError [ERR_ASSERTION]: token rotated?\n+ actual - expected\n\n+ 'a@b/c:d'\n- 'Xq7w'\n    at f (x.js:3:8) {\n  code: 'ERR_ASSERTION',\n  actual: 'a@b/c:d',\n  expected: 'Xq7w',\n}",
                    "AssertionError [ERR_ASSERTION]: token rotated?\n+ actual - expected\n\n+ '[REDACTED]'\n- '[REDACTED]'\n    at f (x.js:3:8) {\n  code: 'ERR_ASSERTION',\n  actual: '[REDACTED]',\n  expected: '[REDACTED]',\n}",
                ),
                (
                    "AssertionError [ERR_ASSERTION]: count differs\n+ 'a'\n- 'b'",
                    "AssertionError [ERR_ASSERTION]: count differs\n+ 'a'\n- 'b'",
                ),
            ],
        );
    }
}
