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

#[test]
fn every_row_is_complete() {
    for row in all() {
        let title = row.title();
        assert!(!row.vendor.is_empty() && !row.kind.is_empty(), "{row:?}");
        assert!(
            row.doc.starts_with("https://") && !row.doc.contains(' '),
            "{title}: doc must be the vendor's page: {:?}",
            row.doc
        );
        for template in [row.kept, row.sample, row.near_miss] {
            sample::check(template).unwrap_or_else(|e| panic!("{title}: {e}"));
        }
        assert!(
            !row.sample.is_empty() && !row.near_miss.is_empty(),
            "{title}"
        );
    }
}

#[test]
fn every_sample_is_found_whole() {
    for (n, row) in all().enumerate() {
        let mut rng = Rng::new(n as u64 + 1);
        for _ in 0..TRIES {
            let kept = sample::render(row.kept, &mut rng);
            let secret = sample::render(row.sample, &mut rng);
            for (before, after) in PLAIN {
                let text = format!("{before}{kept}{secret}{after}");
                let start = before.len() + kept.len();
                assert_eq!(
                    find(&text),
                    vec![(start, start + secret.len())],
                    "{}: {text}",
                    row.title()
                );
            }
        }
    }
}

#[test]
fn every_near_miss_is_left() {
    for (n, row) in all().enumerate() {
        let mut rng = Rng::new(n as u64 + 1);
        for _ in 0..TRIES {
            let near = sample::render(row.near_miss, &mut rng);
            let text = format!("error: {near} end");
            assert_eq!(find(&text), vec![], "{}: {text}", row.title());
        }
    }
}

#[test]
fn every_sample_starts_with_a_trigger() {
    for row in all().filter(|row| !row.triggers.is_empty()) {
        let whole = format!("{}{}", row.kept, row.sample);
        assert!(
            row.triggers.iter().any(|t| whole.starts_with(t)),
            "{}: {whole} starts with none of {:?}",
            row.title(),
            row.triggers
        );
    }
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
        let start = (skip..noise.len())
            .find(|&i| noise.is_char_boundary(i))
            .unwrap();
        let _ = find(&noise[start..]);
    }
}
