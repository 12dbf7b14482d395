//! The scrubbing corpus under tests/corpus, scored through the crate's public API only:
//! every secret line must lose its marked parts, and every benign line must survive byte
//! for byte. The test prints the scores and fails below 100 %.
//!
//! The lines are literal text: a token in `secrets.txt` is written out, not generated from
//! a pattern, so a format the scrubber stops finding fails here.

use std::ffi::OsString;

use crontap_scrub::{REDACTED, Scrubber};

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/corpus");

/// The run's known secrets: the heartbeat URL and its token, as the binary would pass them,
/// and one secret-looking variable.
fn scrubber() -> Scrubber {
    Scrubber::new(
        [
            "https://hb.example/ping/corpus-token-123".to_owned(),
            "corpus-token-123".to_owned(),
        ],
        [(
            OsString::from("DB_PASSWORD"),
            OsString::from("correct-horse-battery"),
        )],
    )
}

/// The lines of a corpus file, without blank lines and `#` comments.
fn cases(file: &str) -> Vec<String> {
    std::fs::read_to_string(format!("{CORPUS}/{file}"))
        .unwrap_or_else(|e| panic!("{file}: {e}"))
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_owned)
        .collect()
}

/// A secret line as input text (`\n` is a line break) and the parts between `«` and `»`.
fn marked(line: &str) -> (String, Vec<String>) {
    let line = line.replace("\\n", "\n");
    let mut text = String::new();
    let mut marks = Vec::new();
    let mut rest = line.as_str();
    while let Some(start) = rest.find('«') {
        text.push_str(&rest[..start]);
        let after = &rest[start + '«'.len_utf8()..];
        let end = after.find('»').expect("every « has a »");
        text.push_str(&after[..end]);
        marks.push(after[..end].to_owned());
        rest = &after[end + '»'.len_utf8()..];
    }
    text.push_str(rest);
    assert!(!marks.is_empty(), "a secret line without a mark: {line:?}");
    (text, marks)
}

/// Whether a piece of the secret `mark` (a run of four letters or digits or more) is in
/// `out` more often than in the rest of `input`: a secret cut in two by a marker is kept
/// as surely as one left whole (`p\"ss w0rd` redacted up to its escaped quote kept
/// `w0rd`).
fn piece_kept(input: &str, mark: &str, out: &str) -> bool {
    let rest = input.replacen(mark, " ", 1);
    mark.split(|c: char| !c.is_alphanumeric())
        .filter(|piece| piece.chars().count() >= 4)
        .any(|piece| out.matches(piece).count() > rest.matches(piece).count())
}

fn score(total: usize, failed: usize) -> String {
    format!(
        "{}/{total} ({:.0} %)",
        total - failed,
        100.0 * (total - failed) as f64 / total.max(1) as f64
    )
}

#[test]
fn corpus_scores_100_percent() {
    let scrubber = scrubber();
    let mut failures = Vec::new();

    let secrets = cases("secrets.txt");
    for line in &secrets {
        let (input, marks) = marked(line);
        let out = scrubber.scrub(&input);
        let leaked = marks
            .iter()
            .any(|m| out.contains(m.trim()) || piece_kept(&input, m, &out));
        if leaked || !out.contains(REDACTED) {
            failures.push(format!("secret kept: {line:?}\n    -> {out:?}"));
        }
    }
    let secrets_failed = failures.len();

    let benign = cases("benign.txt");
    for line in &benign {
        let out = scrubber.scrub(line);
        if out != *line {
            failures.push(format!("benign changed: {line:?}\n    -> {out:?}"));
        }
    }
    let benign_failed = failures.len() - secrets_failed;

    println!(
        "corpus: secrets {}, benign {}",
        score(secrets.len(), secrets_failed),
        score(benign.len(), benign_failed),
    );
    assert!(
        failures.is_empty(),
        "{} corpus failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
