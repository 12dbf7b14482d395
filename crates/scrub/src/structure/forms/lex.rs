//! What the form lexers share: the text with an ASCII-lower-cased copy (same byte offsets),
//! words and their boundaries, and values read as a line quotes them.
//!
//! Every scan here is bounded ([`VALUE_REACH`], [`BACK_REACH`]) and a lexer resumes after
//! the value it took, so a line of many cues costs one pass.

use super::super::super::marker::REDACTED;
use super::super::values::{ahead, back};

/// A byte range of the text, start inclusive, end exclusive.
pub(in super::super) type Span = (usize, usize);

/// How far a value is read after its start: a quote left open ends the value at the end of
/// its line or here.
pub(super) const VALUE_REACH: usize = 4096;

/// How far a lexer looks back from a cue (for a user name, a line's start, a context word).
pub(super) const BACK_REACH: usize = 256;

/// The text a lexer reads, and the same text with ASCII letters in lower case (so every
/// byte offset holds in both).
pub(super) struct Text<'t> {
    pub raw: &'t str,
    pub lower: String,
}

impl<'t> Text<'t> {
    pub fn new(raw: &'t str) -> Text<'t> {
        Text {
            raw,
            lower: raw.to_ascii_lowercase(),
        }
    }

    pub fn bytes(&self) -> &'t [u8] {
        self.raw.as_bytes()
    }

    /// Where the lower-case `word` stands as a whole word (no letter, digit or `_` on
    /// either side), in order.
    pub fn words<'a>(&'a self, word: &'a str) -> impl Iterator<Item = usize> + 'a {
        let b = self.lower.as_bytes();
        self.lower
            .match_indices(word)
            .map(|(i, _)| i)
            .filter(move |&i| {
                !is_word_byte_at(b, i.wrapping_sub(1)) && !is_word_byte_at(b, i + word.len())
            })
    }
}

/// Whether the byte at `i` exists and is a letter, digit or `_`.
pub(super) fn is_word_byte_at(b: &[u8], i: usize) -> bool {
    b.get(i)
        .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
}

/// `i` past any blanks (spaces, tabs and no-break spaces, U+00A0).
pub(super) fn skip_blanks(b: &[u8], mut i: usize) -> usize {
    loop {
        match (b.get(i), b.get(i + 1)) {
            (Some(b' ' | b'\t'), _) => i += 1,
            (Some(0xC2), Some(0xA0)) => i += 2,
            _ => return i,
        }
    }
}

/// The start of the line that holds `i`, looked for at most [`BACK_REACH`] bytes back.
pub(super) fn line_start(text: &str, i: usize) -> usize {
    let floor = back(text, i, BACK_REACH);
    text[floor..i].rfind('\n').map_or(floor, |n| floor + n + 1)
}

/// The end of the line that holds `i` (before `\r\n` or `\n`), looked for at most
/// [`VALUE_REACH`] bytes on.
pub(super) fn line_end(text: &str, i: usize) -> usize {
    let reach = ahead(text, i, VALUE_REACH);
    let end = text[i..reach].find('\n').map_or(reach, |n| i + n);
    if end > i && text.as_bytes()[end - 1] == b'\r' {
        end - 1
    } else {
        end
    }
}

/// [`line_end`] looked for at most `reach` bytes on (a lexer that reads a few words after
/// each cue need not look for the line's end further).
pub(super) fn line_end_within(text: &str, i: usize, reach: usize) -> usize {
    let reach = ahead(text, i, reach.min(VALUE_REACH));
    let end = text[i..reach].find('\n').map_or(reach, |n| i + n);
    if end > i && text.as_bytes()[end - 1] == b'\r' {
        end - 1
    } else {
        end
    }
}

/// A value at `at`, as a trace or a statement writes it: inside `'…'` or `"…"` (a doubled
/// quote or a backslash before one is part of it; a quote left open runs to the end of the
/// line), or else a run of bytes up to white space or one of `stops`. Returns the value's
/// range and where reading may go on. `None` for an empty value or one already redacted.
pub(super) fn value_at(text: &str, at: usize, stops: &[u8]) -> Option<(Span, usize)> {
    let b = text.as_bytes();
    let (span, after) = match b.get(at) {
        Some(&q @ (b'\'' | b'"')) => {
            let end = quoted_end(text, at + 1, q);
            ((at + 1, end), (end + 1).min(b.len()))
        }
        Some(_) => {
            let end = bare_end(text, at, stops);
            ((at, end), end)
        }
        None => return None,
    };
    let value = &text[span.0..span.1];
    let done = value.is_empty() || value.starts_with(REDACTED) || value.trim() == REDACTED;
    (!done).then_some((span, after))
}

/// Where a bare value that starts at `at` ends: at white space, at one of `stops`, at a
/// literal `\r` or `\n` escape (a value inside a repr such as `'PASS pw\r\n'`), or
/// [`VALUE_REACH`] bytes on.
pub(super) fn bare_end(text: &str, at: usize, stops: &[u8]) -> usize {
    let b = &text.as_bytes()[..ahead(text, at, VALUE_REACH)];
    let mut i = at;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace()
            || stops.contains(&c)
            || c == b'\\' && matches!(b.get(i + 1), Some(b'r' | b'n'))
        {
            return i;
        }
        i += 1;
    }
    b.len()
}

/// Where a value quoted with `quote` whose inside starts at `inner` ends: at the closing
/// quote (a doubled one or one after a backslash is part of the value), or the line's end.
pub(super) fn quoted_end(text: &str, inner: usize, quote: u8) -> usize {
    let b = &text.as_bytes()[..ahead(text, inner, VALUE_REACH)];
    let mut i = inner;
    while i < b.len() {
        match b[i] {
            b'\n' | b'\r' => return i,
            b'\\' => i += 2,
            c if c == quote && b.get(i + 1) == Some(&quote) => i += 2,
            c if c == quote => return i,
            _ => i += 1,
        }
    }
    b.len().min(text.len())
}
