//! Finding the rows' tokens in text: one regex of every trigger, each row's own pattern
//! tried anchored where its trigger starts, and one regex for the rows without triggers.

use std::collections::HashMap;
use std::sync::{LazyLock, OnceLock};

use regex::Regex;

use super::{Check, Format};
use crate::text::ceil_char_boundary;

/// Every row, in table order (within one trigger the more specific rows come first).
static ROWS: LazyLock<Vec<&'static Format>> = LazyLock::new(|| super::all().collect());

/// The regex of every trigger, longest first, and the rows each trigger starts.
static TRIGGERS: LazyLock<(Regex, HashMap<&'static str, Vec<usize>>)> = LazyLock::new(|| {
    let mut by_trigger: HashMap<&'static str, Vec<usize>> = HashMap::new();
    for (i, row) in ROWS.iter().enumerate() {
        for &t in row.triggers {
            by_trigger.entry(t).or_default().push(i);
        }
    }
    let mut literals: Vec<&str> = by_trigger.keys().copied().collect();
    literals.sort_by_key(|t| (std::cmp::Reverse(t.len()), *t));
    let alternation: Vec<String> = literals
        .iter()
        .map(|t| {
            // `\b` only where the trigger starts with a word character.
            let lead = if t.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_') {
                r"\b"
            } else {
                ""
            };
            format!("{lead}{}", regex::escape(t))
        })
        .collect();
    let re = Regex::new(&format!("(?-u)(?:{})", alternation.join("|"))).expect("valid pattern");
    (re, by_trigger)
});

/// The rows without triggers as one alternation, each in a group of its own so that the
/// kept text of each (its first inner group) can be told apart.
static UNTRIGGERED: LazyLock<Regex> = LazyLock::new(|| {
    let patterns: Vec<&str> = ROWS
        .iter()
        .filter(|row| row.triggers.is_empty())
        .map(|row| row.pattern)
        .collect();
    Regex::new(&format!("(?-u){}", patterns.join("|"))).expect("valid pattern")
});

/// Each row's pattern, anchored, compiled when first needed.
static COMPILED: LazyLock<Vec<OnceLock<Regex>>> =
    LazyLock::new(|| ROWS.iter().map(|_| OnceLock::new()).collect());

fn row_regex(i: usize) -> &'static Regex {
    COMPILED[i].get_or_init(|| {
        Regex::new(&format!("(?-u)^(?:{})", ROWS[i].pattern)).expect("valid pattern")
    })
}

/// The secret part (without any kept text) of the row `i` token starting at `text[at..]`.
fn match_row(text: &str, at: usize, i: usize) -> Option<(usize, usize)> {
    let caps = row_regex(i).captures(&text[at..])?;
    let whole = caps.get(0)?;
    let kept = caps.get(1).map_or(0, |m| m.end());
    let row = ROWS[i];
    if row.check == Check::Mixed {
        let trigger = row
            .triggers
            .iter()
            .find(|t| whole.as_str().starts_with(**t))
            .map_or(0, |t| t.len());
        let body = &whole.as_str()[trigger..];
        let letters = body.bytes().any(|c| c.is_ascii_alphabetic());
        let digits = body.bytes().any(|c| c.is_ascii_digit());
        if !(letters && digits) {
            return None;
        }
    }
    (whole.end() > kept).then_some((at + kept, at + whole.end()))
}

/// Byte ranges of documented tokens in `text`, sorted and disjoint. Text a row keeps in
/// front of its token (a URL path, a name) is not part of the range.
pub(crate) fn find(text: &str) -> Vec<(usize, usize)> {
    let mut ranges = Vec::new();
    let (triggers, by_trigger) = &*TRIGGERS;
    let mut pos = 0;
    while let Some(m) = triggers.find_at(text, pos) {
        let found = by_trigger
            .get(m.as_str())
            .into_iter()
            .flatten()
            .find_map(|&i| match_row(text, m.start(), i));
        match found {
            Some(range) => {
                ranges.push(range);
                pos = range.1;
            }
            None => pos = m.start() + 1,
        }
        // Triggers and tokens are ASCII, so `pos` is a char boundary unless a token was
        // not found; then step to the next one.
        pos = ceil_char_boundary(text, pos);
    }
    for caps in UNTRIGGERED.captures_iter(text) {
        let whole = caps.get(0).expect("group 0 always matches");
        let start = caps
            .iter()
            .skip(1)
            .flatten()
            .next()
            .map_or(whole.start(), |kept| kept.end());
        if whole.end() > start {
            ranges.push((start, whole.end()));
        }
    }
    merge(ranges)
}

/// Sorted, with overlapping or touching ranges joined.
fn merge(mut ranges: Vec<(usize, usize)>) -> Vec<(usize, usize)> {
    ranges.sort_unstable();
    let mut out: Vec<(usize, usize)> = Vec::with_capacity(ranges.len());
    for (start, end) in ranges {
        match out.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => out.push((start, end)),
        }
    }
    out
}
