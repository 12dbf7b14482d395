//! Tests of the rows: each row is complete and its sample, generated afresh many times
//! from the template written from the vendor's page, is found whole (and only its secret
//! part), while its near miss is left.

use regex::Regex;

use super::sample::{self, Rng};
use super::*;

/// Tokens generated per row.
const TRIES: u64 = 64;

/// Text around a token where nothing but the table can tell it is one.
const PLAIN: &[(&str, &str)] = &[("error: ", " end"), ("\"", "\""), ("(", ")"), ("", "\n")];

/// Fails with every message in `problems`, one a line, so that one run shows them all.
fn report(problems: Vec<String>) {
    assert!(
        problems.is_empty(),
        "{} problems:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

/// What is wrong with `row` as a definition, if anything.
fn incomplete(row: &Format) -> Option<String> {
    let title = row.title();
    if row.vendor.is_empty() || row.kind.is_empty() {
        return Some(format!("{row:?}: no vendor or kind"));
    }
    if !row.doc.starts_with("https://") || row.doc.contains(' ') {
        return Some(format!(
            "{title}: doc must be the vendor's page: {:?}",
            row.doc
        ));
    }
    for template in [row.kept, row.sample, row.near_miss] {
        if let Err(e) = sample::check(template) {
            return Some(format!("{title}: {e}"));
        }
    }
    (row.sample.is_empty() || row.near_miss.is_empty())
        .then(|| format!("{title}: no sample or near miss"))
}

#[test]
fn every_row_is_complete() {
    report(all().filter_map(incomplete).collect());
}

#[test]
fn every_sample_is_found_whole() {
    let mut problems = Vec::new();
    for (n, row) in all().enumerate() {
        let mut rng = Rng::new(n as u64 + 1);
        for _ in 0..TRIES {
            let kept = sample::render(row.kept, &mut rng);
            let secret = sample::render(row.sample, &mut rng);
            for (before, after) in PLAIN {
                let text = format!("{before}{kept}{secret}{after}");
                let start = before.len() + kept.len();
                let found = find(&text);
                if found != [(start, start + secret.len())] {
                    problems.push(format!("{}: {text:?} gave {found:?}", row.title()));
                }
            }
        }
    }
    report(problems);
}

#[test]
fn every_near_miss_is_left() {
    let mut problems = Vec::new();
    for (n, row) in all().enumerate() {
        let mut rng = Rng::new(n as u64 + 1);
        for _ in 0..TRIES {
            let near = sample::render(row.near_miss, &mut rng);
            let text = format!("error: {near} end");
            if !find(&text).is_empty() {
                problems.push(format!("{}: near miss found in {text:?}", row.title()));
            }
        }
    }
    report(problems);
}

#[test]
fn every_sample_starts_with_a_trigger() {
    let mut problems = Vec::new();
    for row in all().filter(|row| !row.triggers.is_empty()) {
        let whole = format!("{}{}", row.kept, row.sample);
        if !row.triggers.iter().any(|t| whole.starts_with(t)) {
            problems.push(format!(
                "{}: {whole} starts with none of {:?}",
                row.title(),
                row.triggers
            ));
        }
    }
    report(problems);
}

#[test]
fn no_trigger_starts_another() {
    let triggers: Vec<&str> = all().flat_map(|f| f.triggers.iter().copied()).collect();
    for a in &triggers {
        for b in &triggers {
            assert!(a == b || !b.starts_with(a), "{a} starts {b}");
        }
    }
}

#[test]
fn patterns_keep_at_most_a_prefix() {
    for row in all() {
        let re = Regex::new(row.pattern).expect("valid pattern");
        let start = row.pattern.trim_start_matches(r"\b");
        assert!(re.captures_len() <= 2, "{}", row.title());
        assert!(
            re.captures_len() == 1 || (start.starts_with('(') && !start.starts_with("(?")),
            "{}: only a first group may be kept text",
            row.title()
        );
    }
}

#[test]
fn odd_text_never_panics() {
    let mut rng = Rng::new(3);
    let alphabet: Vec<char> = "aZ09_-.:|/~é€ghp_xoxb-AKIAsk-eyJ".chars().collect();
    let noise: String = (0..20_000)
        .map(|_| alphabet[rng.below(alphabet.len())])
        .collect();
    for skip in [0usize, 1, 2, 3, 5, 7] {
        let start = crate::text::ceil_char_boundary(&noise, skip);
        let _ = find(&noise[start..]);
    }
}
