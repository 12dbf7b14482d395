//! The request body of a protocol that sends one (Healthchecks): the summary line, then the
//! tail of the command's output, both streams in the order they arrived.
//!
//! Every line is made safe as the summary is (escapes and control characters removed) and
//! scrubbed of secrets and personal data, but stack traces are kept whole: the body is where
//! an operator reads them. A progress line rewritten with carriage returns counts by its last
//! state. The body is at most `max` bytes: the oldest lines go first, and a line the output
//! tail begins in the middle of is dropped, so that no secret cut in two reaches the service
//! half scrubbed.

use crontap_scrub::Scrubber;
use crontap_scrub::text::{ceil_char_boundary, floor_char_boundary};

use crate::sanitize;

/// The output tail a body is made from: the last bytes of both streams, and whether older
/// bytes were dropped to keep it bounded (its first line may then be a part of one).
pub struct OutputTail<'a> {
    pub bytes: &'a [u8],
    pub cut: bool,
}

/// The body: `summary`, a newline, then as many of the output's last lines as fit in `max`
/// bytes. Empty when `max` is 0.
pub fn build(summary: &str, output: &OutputTail<'_>, scrubber: &Scrubber, max: usize) -> String {
    let summary = cut_to(summary, max);
    let room = max.saturating_sub(summary.len() + 1);
    // No output, no scrubbing: a quiet job's report compiles no pattern.
    let cleaned = match room == 0 || output.bytes.is_empty() {
        true => String::new(),
        false => clean(output, scrubber),
    };
    let lines = last_lines(&cleaned, room);
    match lines.is_empty() {
        true => summary.to_owned(),
        false => format!("{summary}\n{lines}"),
    }
}

/// The output as lines fit to send: decoded, escapes removed, scrubbed, each carriage-return
/// rewritten line at its last state, no empty line at the end, and the first line left out
/// when it is only the end of one.
fn clean(output: &OutputTail<'_>, scrubber: &Scrubber) -> String {
    let mut text = String::from_utf8_lossy(output.bytes);
    if output.cut {
        let whole = text.find('\n').map_or(text.len(), |at| at + 1);
        text = std::borrow::Cow::Owned(text[whole..].to_owned());
    }
    let text = scrubber.scrub(&sanitize::keep_lines(&text));
    let lines: Vec<&str> = text
        .split('\n')
        .map(|line| {
            line.rsplit('\r')
                .find(|part| !part.trim().is_empty())
                .unwrap_or_default()
                .trim_end()
        })
        .collect();
    let end = lines
        .iter()
        .rposition(|l| !l.is_empty())
        .map_or(0, |at| at + 1);
    lines[..end].join("\n")
}

/// The last whole lines of `text` that fit in `room` bytes; when even the last line does
/// not fit, its end, cut on a character boundary.
fn last_lines(text: &str, room: usize) -> &str {
    if text.len() <= room {
        return text;
    }
    let start = ceil_char_boundary(text, text.len() - room);
    // `start` is the first byte that fits: the lines from the first that begins at or
    // after it. A line that begins exactly there is kept whole.
    let begins_a_line = start == 0 || text.as_bytes()[start - 1] == b'\n';
    if begins_a_line {
        return &text[start..];
    }
    match text[start..].find('\n') {
        Some(at) => &text[start + at + 1..],
        None => &text[start..],
    }
}

/// `text` cut to at most `max` bytes on a character boundary.
fn cut_to(text: &str, max: usize) -> &str {
    &text[..floor_char_boundary(text, max)]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(output: &str, cut: bool, max: usize) -> String {
        let scrubber = Scrubber::new(vec!["hb-token-123456".into()], []);
        let tail = OutputTail {
            bytes: output.as_bytes(),
            cut,
        };
        build("exit 3 after 2s: boom", &tail, &scrubber, max)
    }

    #[test]
    fn summary_then_scrubbed_lines_traces_kept() {
        let out = "step 1\n\x1b[31mpassword=hunter2xyz\x1b[0m\nTraceback (most recent call last):\n  File \"x.py\", line 3, in f\nValueError: boom\n\n";
        assert_eq!(
            body(out, false, 10_000),
            "exit 3 after 2s: boom\nstep 1\npassword=[REDACTED]\nTraceback (most recent call last):\n  File \"x.py\", line 3, in f\nValueError: boom"
        );
        assert_eq!(body("", false, 10_000), "exit 3 after 2s: boom");
        assert_eq!(
            body("10%\r50%\r100%\ndone\n", false, 100),
            "exit 3 after 2s: boom\n100%\ndone"
        );
        assert!(!body("url hb-token-123456\n", false, 100).contains("hb-token"));
    }

    #[test]
    fn bounded_by_dropping_the_oldest_lines() {
        let out: String = (0..1000).map(|i| format!("line {i}\n")).collect();
        for max in [0, 1, 10, 21, 22, 23, 30, 31, 40, 200, 1000] {
            let b = body(&out, false, max);
            assert!(b.len() <= max, "{max}: {} bytes", b.len());
            if max > 40 {
                assert!(b.ends_with("\nline 999"), "{max}: {b}");
                // Whole lines only.
                let first = b.lines().nth(1).unwrap();
                assert!(first.starts_with("line "), "{max}: {b}");
            }
        }
        // A line that begins exactly where the room does is kept.
        assert_eq!(
            body("aaaa\nbbbb\ncccc\n", false, 31),
            "exit 3 after 2s: boom\nbbbb\ncccc"
        );
        assert_eq!(
            body("aaaa\nbbbb\ncccc\n", false, 30),
            "exit 3 after 2s: boom\ncccc"
        );
    }

    #[test]
    fn a_cut_tail_loses_its_partial_first_line() {
        assert_eq!(
            body("3cr3t-rest\nnext\n", true, 100),
            "exit 3 after 2s: boom\nnext"
        );
        assert_eq!(
            body("no newline at all", true, 100),
            "exit 3 after 2s: boom"
        );
    }

    #[test]
    fn cut_on_character_boundaries() {
        let out = "é".repeat(3000);
        for max in 20..60 {
            let b = body(&out, false, max);
            assert!(b.len() <= max);
            assert!(std::str::from_utf8(b.as_bytes()).is_ok());
        }
        let long = "ü".repeat(40);
        let scrubber = Scrubber::new(vec![], []);
        let tail = OutputTail {
            bytes: b"",
            cut: false,
        };
        assert_eq!(build(&long, &tail, &scrubber, 7).len(), 6);
    }
}
