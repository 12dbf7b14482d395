//! The second of the two passes over the whole text: every occurrence of every learned
//! value goes, wherever it stands.
//!
//! The first pass (the layers, run by [`Scrubber`](super::Scrubber)) learns a value from
//! every range a rule replaced (`marker::learning`); with the run's own secrets and the job
//! environment's, these are what [`Remover`] looks for: in any case and in the spellings of
//! `learned` (percent-encoded, JSON- and shell-escaped, hex), in base64 (the run of base64
//! characters that carries one goes whole), and cut by a line break (`wrapped`).
//!
//! One automaton finds them all in one pass: the `aho-corasick` crate's, built from every
//! spelling of every value (in time linear in their total length) and run over the text in
//! time linear in the text, however many values there are. ASCII letters match in either
//! case; a value with other letters is also looked for in lower and upper case whole. A
//! second automaton finds the base64 cores, which match only as they are. Both are built
//! only when something was learned or is known, which only a failure reaches.
//!
//! Nothing skips the removal: when an automaton cannot be built (more states than its
//! identifiers can number), every text goes whole as the marker ([`Remover::remove`]), as
//! no value that should go can be told from the rest.
//!
//! The automaton and the wrapped ends also read a copy of the text as a reader sees it
//! (`view`: JSON `\u` escapes decoded, ANSI escape sequences and no-break spaces dropped,
//! hex printed in bytes joined), and what they find there goes from the text. That is one
//! more pass over the text, not one per value.

mod view;

use std::collections::HashSet;

use aho_corasick::automaton::Automaton;
use aho_corasick::nfa::contiguous::{self, NFA};
use aho_corasick::{Input, MatchKind};

use super::learned;
use super::marker::{self, Overlap, REDACTED};
use super::wrapped;

/// Most bytes read either way from a base64 core for the run that carries it.
const BASE64_REACH: usize = 4096;

/// The learned values, as the automata that find them.
pub(crate) struct Remover {
    /// Every value's spellings, in any case; `Err` when it could not be built.
    spelled: Result<Option<NFA>, Unbuilt>,
    /// Every value's base64 cores, as they are; `Err` when it could not be built.
    base64: Result<Option<NFA>, Unbuilt>,
    /// The values themselves, for the ends a line break cut.
    values: Vec<String>,
}

impl Remover {
    /// The automata for `values` (already filtered: `learned::worth_learning`).
    pub(crate) fn new(values: Vec<String>) -> Remover {
        let spelled = values.iter().flat_map(|v| {
            let mut spellings = learned::spellings(v);
            if !v.is_ascii() {
                // Only ASCII letters are read in either case: other letters' cases whole.
                spellings.extend(learned::spellings(&v.to_lowercase()));
                spellings.extend(learned::spellings(&v.to_uppercase()));
            }
            spellings
        });
        let cores = values.iter().flat_map(|v| learned::base64_cores(v));
        Remover {
            spelled: automaton(spelled, true),
            base64: automaton(cores, false),
            values,
        }
    }

    /// `text` with every occurrence of every value replaced by the marker; `None` when there
    /// was none. When an automaton could not be built, the whole text is the marker: what
    /// it would have removed cannot be found otherwise, and sending it is a leak.
    pub(crate) fn remove(&self, text: &str) -> Option<String> {
        let (Ok(spelled), Ok(base64)) = (&self.spelled, &self.base64) else {
            return (text != REDACTED).then(|| REDACTED.to_owned());
        };
        let mut spans: Vec<(usize, usize)> = Vec::new();
        let view = view::View::of(text);
        if let Some(spelled) = spelled {
            // The spellings are in lower case: ASCII letters are matched in either case by
            // reading the text in lower case too (the same bytes at the same offsets).
            spans.extend(matches(spelled, &text.to_ascii_lowercase()));
            if let Some(view) = &view {
                let found = matches(spelled, &view.text.to_ascii_lowercase());
                spans.extend(found.into_iter().map(|(s, e)| view.back(s, e)));
            }
        }
        if let Some(base64) = base64 {
            let found = matches(base64, text).into_iter();
            spans.extend(found.map(|(s, e)| base64_run(text, s, e)));
        }
        match &view {
            Some(view) => spans.extend(
                wrapped::cut_ends(&view.text, &self.values)
                    .into_iter()
                    .filter(|&(s, e)| s < e)
                    .map(|(s, e)| view.back(s, e)),
            ),
            None => spans.extend(wrapped::cut_ends(text, &self.values)),
        }
        if spans.is_empty() {
            return None;
        }
        spans.sort_unstable();
        let spans = merged(spans);
        match marker::splice(text, &spans, Overlap::FirstWins) {
            std::borrow::Cow::Owned(out) => Some(out),
            std::borrow::Cow::Borrowed(_) => None,
        }
    }
}

/// An automaton could not be built (more states than it can number).
#[derive(Debug)]
struct Unbuilt;

/// The automaton that finds any of `literals` (in ASCII lower case when `any_case`, for a
/// text read in lower case), the longest where two start at the same place; `None` when there are none.
///
/// A contiguous NFA: its failure links are followed at most once per byte of the text on
/// average, so the search is linear, and it takes a few bytes per pattern byte, where a DFA
/// takes a row of transitions per state. (Used directly rather than through `AhoCorasick`,
/// which would link the other kinds' code into the binary for nothing.)
fn automaton(
    literals: impl Iterator<Item = String>,
    any_case: bool,
) -> Result<Option<NFA>, Unbuilt> {
    let mut seen: HashSet<String> = HashSet::new();
    let mut patterns: Vec<String> = Vec::new();
    for literal in literals {
        let literal = match any_case {
            true => literal.to_ascii_lowercase(),
            false => literal,
        };
        if !literal.is_empty() && seen.insert(literal.clone()) {
            patterns.push(literal);
        }
    }
    if patterns.is_empty() {
        return Ok(None);
    }
    // Spellings in lower case, matched against the text in lower case, rather than the
    // automaton's own case folding: that doubles its transitions and takes a set of its
    // states to build, several times the time for tens of thousands of values.
    contiguous::Builder::new()
        .match_kind(MatchKind::LeftmostLongest)
        .build(&patterns)
        .map(Some)
        .map_err(|_| Unbuilt)
}

/// Where `automaton` matches in `text`, one match after another, as byte ranges. (An
/// unanchored search of an NFA cannot fail; if it did, the whole text would go.)
fn matches(automaton: &NFA, text: &str) -> Vec<(usize, usize)> {
    let found = automaton.try_find_iter(Input::new(text));
    let whole = found.is_err().then_some((0, text.len()));
    found
        .into_iter()
        .flatten()
        .map(|m| (m.start(), m.end()))
        .chain(whole)
        .collect()
}

/// The run of base64 characters (and its `=` padding) around `start..end`, within
/// [`BASE64_REACH`] bytes either way.
fn base64_run(text: &str, start: usize, end: usize) -> (usize, usize) {
    let b = text.as_bytes();
    let base64 = |c: u8| c.is_ascii_alphanumeric() || b"+/-_".contains(&c);
    let floor = start.saturating_sub(BASE64_REACH);
    let ceiling = (end + BASE64_REACH).min(b.len());
    let s = (floor..start)
        .rev()
        .find(|&i| !base64(b[i]))
        .map_or(floor, |i| i + 1);
    let mut e = (end..ceiling).find(|&i| !base64(b[i])).unwrap_or(ceiling);
    while e < ceiling && e - end < BASE64_REACH && b[e] == b'=' {
        e += 1;
    }
    // ASCII bytes only were crossed, so both ends are char boundaries.
    (s, e)
}

/// Sorted `spans` with those that overlap or touch made one.
fn merged(spans: Vec<(usize, usize)>) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::with_capacity(spans.len());
    for (s, e) in spans {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn remove(values: &[&str], text: &str) -> String {
        let remover = Remover::new(values.iter().map(|v| v.to_string()).collect());
        remover.remove(text).unwrap_or_else(|| text.to_owned())
    }

    #[test]
    fn every_spelling_goes() {
        let v = "Winter42harbor$";
        for (text, want) in [
            ("x Winter42harbor$ y", "x [REDACTED] y"),
            ("x WINTER42HARBOR$ y", "x [REDACTED] y"),
            ("│   └ 'Winter42harbor$'", "│   └ '[REDACTED]'"),
            ("pw=Winter42harbor%24&x=1", "pw=[REDACTED]&x=1"),
            ("{\"p\": \"Winter42harbor$\"}", "{\"p\": \"[REDACTED]\"}"),
            ("+ mysql -pWinter42harbor\\$ db", "+ mysql -p[REDACTED] db"),
            (
                "hex 57696e7465723432686172626f7224 end",
                "hex [REDACTED] end",
            ),
            ("b64 V2ludGVyNDJoYXJib3Ik end", "b64 [REDACTED] end"),
            (
                "Basic YXBwOldpbnRlcjQyaGFyYm9yJA==\r\n",
                "Basic [REDACTED]\r\n",
            ),
            (
                "AUTH PLAIN AGFwcABXaW50ZXI0MmhhcmJvciQ=",
                "AUTH PLAIN [REDACTED]",
            ),
        ] {
            assert_eq!(remove(&[v], text), want, "{text}");
        }
        assert_eq!(remove(&[v], "nothing here"), "nothing here");
        assert_eq!(remove(&[], "Winter42harbor$"), "Winter42harbor$");
    }
}
