//! The failure summary sent as `msg`: what happened, how long it took, and the last
//! meaningful line of the command's output, scrubbed, on one line, bounded in bytes.

use std::time::Duration;

use crate::run::outcome::Outcome;
use crate::sanitize;
use crontap_scrub::text::floor_char_boundary;
use crontap_scrub::{REDACTED, Scrubber, collapse_traces};

const ELLIPSIS: &str = "…";

/// Builds the summary: `exit 3 after 2m14s: ValueError: row 17 has no customer id`.
///
/// The detail is the last non-empty line of `stderr`, or of `stdout` when stderr has none.
/// Both tails are scrubbed as one text before a line is chosen: a secret recognised anywhere
/// in them (a value caught on one line, a key whose value is on the next) is gone from the
/// line chosen wherever it stands in it; and the finished summary is scrubbed again.
pub fn failure_message(
    outcome: &Outcome,
    elapsed: Duration,
    stdout: &[u8],
    stderr: &[u8],
    scrubber: &Scrubber,
    max_bytes: usize,
) -> String {
    failure_message_with(
        outcome.describe(elapsed),
        stdout,
        stderr,
        scrubber,
        max_bytes,
    )
}

/// As [`failure_message`], with the head already written: `exit 1 after 3s (attempt 3 of 3)`.
pub fn failure_message_with(
    head: String,
    stdout: &[u8],
    stderr: &[u8],
    scrubber: &Scrubber,
    max_bytes: usize,
) -> String {
    // Both streams are scrubbed as one text: a secret either of them shows anywhere in its
    // kept tail is gone from the line picked.
    let [stderr, stdout] =
        [stderr, stdout].map(|o| sanitize::keep_lines(&String::from_utf8_lossy(o)));
    let scrubbed = scrubber.scrub_all(&[&stderr, &stdout]);
    let detail = scrubbed.iter().find_map(|text| last_line(text));
    let message = match detail {
        Some(detail) => format!("{head}: {detail}"),
        None => head,
    };
    let message = sanitize::one_line(&scrubber.scrub(&message));
    truncate(message.trim(), max_bytes)
}

/// The last line with visible text of `text` (escapes removed and scrubbed), after
/// collapsing stack traces. A carriage return ends a line too, as on a terminal, so only
/// the final state of a progress line counts.
fn last_line(text: &str) -> Option<String> {
    let text = collapse_traces(text);
    text.split(['\n', '\r'])
        .rev()
        .map(|line| line.trim().to_owned())
        .find(|line| !line.is_empty())
}

/// Cuts `text` to at most `max_bytes` bytes on a UTF-8 boundary, ending with `…` when cut.
/// A `[REDACTED]` marker is kept whole or left out, never cut in two.
fn truncate(text: &str, max_bytes: usize) -> String {
    if text.len() <= max_bytes {
        return text.to_owned();
    }
    let mut cut = floor_char_boundary(text, max_bytes.saturating_sub(ELLIPSIS.len()));
    // A marker that starts before the cut and ends after it.
    let split_marker = text[..cut]
        .rfind('[')
        .filter(|&start| text[start..].starts_with(REDACTED) && start + REDACTED.len() > cut);
    if let Some(start) = split_marker {
        cut = start;
    }
    format!("{}{ELLIPSIS}", text[..cut].trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build(stdout: &str, stderr: &str, max: usize) -> String {
        let scrubber = Scrubber::new(Vec::new(), Vec::new());
        failure_message(
            &Outcome::Exited(3),
            Duration::from_secs(134),
            stdout.as_bytes(),
            stderr.as_bytes(),
            &scrubber,
            max,
        )
    }

    #[test]
    fn picks_last_meaningful_stderr_line() {
        let cases = [
            (
                "out\n",
                "first\nValueError: row 17\n\n  \n",
                ": ValueError: row 17",
            ),
            ("done 1\ndone 2\n", "", ": done 2"),
            ("", "", ""),
            ("", "10%\r50%\r\x1b[2Kfailed at 60%\n", ": failed at 60%"),
            (
                "",
                "password=hunter2 failed\n",
                ": password=[REDACTED] failed",
            ),
        ];
        for (stdout, stderr, detail) in cases {
            assert_eq!(
                build(stdout, stderr, 256),
                format!("exit 3 after 2m14s{detail}")
            );
        }
    }

    #[test]
    fn bounded_on_char_boundary() {
        let msg = build("", &"é".repeat(500), 64);
        assert!(msg.len() <= 64, "{}", msg.len());
        assert!(msg.ends_with(ELLIPSIS));
        assert_eq!(truncate("short", 32), "short");
        assert_eq!(
            truncate("exit 1 after 3s: --token [REDACTED]", 32),
            "exit 1 after 3s: --token…"
        );
        for max in 32..40 {
            assert!(truncate(&"ü✓a".repeat(30), max).len() <= max);
        }
    }

    #[test]
    fn non_utf8_output_is_decoded_lossily() {
        let scrubber = Scrubber::new(Vec::new(), Vec::new());
        let msg = failure_message(
            &Outcome::Exited(1),
            Duration::ZERO,
            b"",
            b"bad \xff\xfe bytes\n",
            &scrubber,
            256,
        );
        assert_eq!(msg, "exit 1 after 0s: bad \u{fffd}\u{fffd} bytes");
    }
}
