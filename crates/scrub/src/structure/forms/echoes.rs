//! Values a program quotes back when it cannot use them, where what quotes them says they
//! are (a piece of) a secret:
//!
//! - configparser's `'%' must be followed by '%' or '(', found: '%«…»'`: the rest of an
//!   option's value after a `%`, most often a password's;
//! - ftp's ``Unknown .netrc keyword `«…»'`` (a password with blanks in `.netrc` reads as
//!   keywords), and a `.netrc` line's (`machine h login u password «…»`) password to the
//!   line's end or its next keyword;
//! - pydantic's `input_value='«…»'` under a field whose name is a secret's (the name stands
//!   alone on the line above);
//! - sed's `s/@DB_PASSWORD@/«…»/` (any delimiter), a template filled in by a script: the
//!   replacement when the pattern is a secret's name;
//! - a string literal that opens with an HTTP authorization scheme, `"Bearer «…»"`,
//!   `b"Token «…»"`, as a traceback quotes the source line (not `"Token expired"`, a
//!   challenge `'Basic realm="api"'`, nor `"Bearer " + token`);
//! - bash's `./app.env: line 2: «…»: command not found` for a file of settings (`.env`,
//!   `app.env`, `.env.local`): such a file holds only assignments, so a "command" in it is
//!   the second word of a value with a blank in it (`DB_PASSWORD=two words`);
//! - Python's `http.client.InvalidURL: nonnumeric port: '«…»'`: what followed the last `:`
//!   of an authority, a password when the user info was not split off;
//! - a Telegram Bot API path, `/bot«…»/sendMessage`: the token between `bot` and the
//!   method (a word in lower camel case), at least [`MIN_BOT_TOKEN`] characters.

use super::super::super::marker::REDACTED;
use super::super::super::names::{NOT_SECRETS, names_a_secret};
use super::lex::{Span, Text, line_end, line_end_within, line_start, quoted_end};

/// Keywords of a `.netrc` line.
const NETRC_WORDS: &[&str] = &[
    "machine", "default", "login", "password", "account", "macdef",
];

pub(super) fn configparser(text: &Text<'_>, out: &mut Vec<Span>) {
    let cue = "must be followed by '%' or '(', found: '%";
    for (at, _) in text.lower.match_indices(cue) {
        let inner = at + cue.len();
        push(text, (inner, quoted_end(text.raw, inner, b'\'')), out);
    }
}

pub(super) fn netrc(text: &Text<'_>, out: &mut Vec<Span>) {
    let cue = "unknown .netrc keyword `";
    for (at, _) in text.lower.match_indices(cue) {
        let inner = at + cue.len();
        let end = line_end(text.raw, inner);
        if let Some(close) = text.raw[inner..end].find('\'') {
            push(text, (inner, inner + close), out);
        }
    }
    for at in text.words("password") {
        let start = line_start(text.raw, at);
        let head = text.lower[start..at].trim_start();
        let entry = head.starts_with("machine ") || head.starts_with("default ");
        if !entry || !head.contains(" login ") {
            continue;
        }
        let from = at + "password ".len();
        let end = line_end(text.raw, at);
        if from >= end {
            continue;
        }
        // To the next keyword (`… password a b login x`), or the line's end.
        let mut stop = end;
        let mut i = from;
        for word in text.raw[from..end].split(' ') {
            if i > from && NETRC_WORDS.contains(&word) {
                stop = i - 1;
                break;
            }
            i += word.len() + 1;
        }
        push(text, (from, stop), out);
    }
}

pub(super) fn pydantic(text: &Text<'_>, out: &mut Vec<Span>) {
    for (at, _) in text.raw.match_indices("input_value=") {
        let start = line_start(text.raw, at);
        if start == 0 {
            continue;
        }
        let above = text.raw[line_start(text.raw, start - 1)..start - 1].trim();
        let named = !above.is_empty()
            && above
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || b"_.-".contains(&c))
            && above.split('.').any(names_a_secret);
        let inner = at + "input_value=".len() + 1;
        match text.bytes().get(inner - 1) {
            Some(&q @ (b'\'' | b'"')) if named => {
                push(text, (inner, quoted_end(text.raw, inner, q)), out)
            }
            _ => {}
        }
    }
}

pub(super) fn sed(text: &Text<'_>, out: &mut Vec<Span>) {
    let b = text.bytes();
    for at in text.words("sed") {
        let end = line_end(text.raw, at);
        let mut i = at + 3;
        while i + 2 < end {
            let opens = b[i] == b's'
                && matches!(b[i + 1], b'/' | b'|' | b'#')
                && matches!(b[i - 1], b'\'' | b'"' | b' ' | b';');
            if !opens {
                i += 1;
                continue;
            }
            let delimiter = b[i + 1];
            let pattern = i + 2;
            let Some(middle) = part_end(b, pattern, end, delimiter) else {
                break;
            };
            let Some(close) = part_end(b, middle + 1, end, delimiter) else {
                break;
            };
            let name = text.raw[pattern..middle]
                .trim_matches(|c: char| !(c.is_ascii_alphanumeric() || c == '_'));
            if names_a_secret(name) {
                push(text, (middle + 1, close), out);
            }
            i = close + 1;
        }
    }
}

/// Authorization schemes that open a string literal before a credential.
const SCHEMES: &[&str] = &["Bearer ", "Token ", "Basic "];

pub(super) fn auth_schemes(text: &Text<'_>, out: &mut Vec<Span>) {
    let b = text.bytes();
    for scheme in SCHEMES {
        for (at, _) in text.raw.match_indices(scheme) {
            let Some(&quote @ (b'"' | b'\'')) = at.checked_sub(1).and_then(|i| b.get(i)) else {
                continue;
            };
            let inner = at + scheme.len();
            let close = quoted_end(text.raw, inner, quote);
            let value = text.raw[inner..close].trim_end();
            let first = value.split(' ').next().unwrap_or("");
            let prose = NOT_SECRETS.iter().any(|w| first.eq_ignore_ascii_case(w));
            let code = value.starts_with(['{', '$', '%', '<', '+']);
            // A challenge (`'Basic realm="api"'`) names no credential.
            let challenge =
                first.contains("=\"") || first.to_ascii_lowercase().starts_with("realm");
            let code = code || challenge;
            if !prose && !code {
                push(text, (inner, inner + value.len()), out);
            }
        }
    }
}

pub(super) fn nonnumeric_port(text: &Text<'_>, out: &mut Vec<Span>) {
    let cue = "nonnumeric port: '";
    for (at, _) in text.lower.match_indices(cue) {
        let inner = at + cue.len();
        push(text, (inner, quoted_end(text.raw, inner, b'\'')), out);
    }
}

pub(super) fn env_file_commands(text: &Text<'_>, out: &mut Vec<Span>) {
    let cue = ": command not found";
    for (at, _) in text.lower.match_indices(cue) {
        let start = line_start(text.raw, at);
        let line = &text.raw[start..at];
        // `<file>: line <n>: <word>`
        let Some((head, word)) = line.rsplit_once(": ") else {
            continue;
        };
        let Some((file, number)) = head.rsplit_once(": line ") else {
            continue;
        };
        let name = file.rsplit('/').next().unwrap_or(file);
        let settings =
            name == ".env" || name == "env" || name.ends_with(".env") || name.starts_with(".env.");
        if settings && number.bytes().all(|c| c.is_ascii_digit()) && !word.contains(' ') {
            push(text, (at - word.len(), at), out);
        }
    }
}

/// Fewest characters of a bot token in a path (`/bots/list` is no token).
const MIN_BOT_TOKEN: usize = 8;

pub(super) fn telegram(text: &Text<'_>, out: &mut Vec<Span>) {
    for (at, _) in text.raw.match_indices("/bot") {
        let inner = at + "/bot".len();
        let end = line_end_within(text.raw, inner, 512);
        let rest = &text.raw[inner..end];
        let Some(slash) = rest.find(['/', ' ', '"', '\'']) else {
            continue;
        };
        if slash < MIN_BOT_TOKEN || rest.as_bytes()[slash] != b'/' {
            continue;
        }
        let method: String = rest[slash + 1..]
            .chars()
            .take_while(char::is_ascii_alphabetic)
            .collect();
        let camel = method.starts_with(|c: char| c.is_ascii_lowercase())
            && method.contains(|c: char| c.is_ascii_uppercase());
        if camel {
            push(text, (inner, inner + slash), out);
        }
    }
}

/// Where a part of a sed `s` command that starts at `from` ends: its unescaped delimiter.
fn part_end(b: &[u8], from: usize, end: usize, delimiter: u8) -> Option<usize> {
    let mut i = from;
    while i < end {
        match b[i] {
            b'\\' => i += 2,
            c if c == delimiter => return Some(i),
            _ => i += 1,
        }
    }
    None
}

/// Pushes `span` unless it is empty or holds nothing but markers and blanks.
fn push(text: &Text<'_>, span: Span, out: &mut Vec<Span>) {
    let value = &text.raw[span.0..span.1];
    if !value.replace(REDACTED, "").trim().is_empty() {
        out.push(span);
    }
}

#[cfg(test)]
mod tests {
    use super::super::assert_lexed;
    use super::*;

    #[test]
    fn quoted_back_values_go() {
        assert_lexed(
            configparser,
            &[(
                "InterpolationSyntaxError: '%' must be followed by '%' or '(', found: '%le two words'",
                "InterpolationSyntaxError: '%' must be followed by '%' or '(', found: '%[REDACTED]'",
            )],
        );
        assert_lexed(
            netrc,
            &[
                (
                    "ftp: Unknown .netrc keyword `maple'",
                    "ftp: Unknown .netrc keyword `[REDACTED]'",
                ),
                (
                    "machine db login backup password one two three",
                    "machine db login backup password [REDACTED]",
                ),
                (
                    "machine db login u password one two account backup",
                    "machine db login u password [REDACTED] account backup",
                ),
                (
                    "machine learning password reset flow failed",
                    "machine learning password reset flow failed",
                ),
                ("the password is wrong", "the password is wrong"),
            ],
        );
        assert_lexed(
            pydantic,
            &[
                (
                    "api_key\n  String too long [type=string_too_long, input_value='6IL32lNq', input_type=str]",
                    "api_key\n  String too long [type=string_too_long, input_value='[REDACTED]', input_type=str]",
                ),
                (
                    "name\n  String too long [type=string_too_long, input_value='bob', input_type=str]",
                    "name\n  String too long [type=string_too_long, input_value='bob', input_type=str]",
                ),
            ],
        );
        assert_lexed(
            sed,
            &[
                (
                    "+ sed -i 's/@DB_PASSWORD@/Mead-ow66!#/' app.conf",
                    "+ sed -i 's/@DB_PASSWORD@/[REDACTED]/' app.conf",
                ),
                (
                    "+ sed -e \"s|{{ api_token }}|x\\|y|g\" t",
                    "+ sed -e \"s|{{ api_token }}|[REDACTED]|g\" t",
                ),
                (
                    "+ sed -i 's/@HOST@/db/' app.conf",
                    "+ sed -i 's/@HOST@/db/' app.conf",
                ),
            ],
        );
    }
}
