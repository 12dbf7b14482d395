//! `sshpass -p` with a password of several words, as a program prints a command it ran by
//! joining its arguments with blanks (Node's `Command failed: sshpass -p two words ssh
//! host`): the words between `-p` and the program sshpass runs (`ssh`, `scp`, `sftp`,
//! `rsync`) are the password's. The `tool flags` form takes the first of them; this one
//! takes the rest. A quoted value is the `tool flags` form's alone.

use super::super::super::marker::REDACTED;
use super::lex::{Span, Text};

/// Programs sshpass runs.
const RUNS: &[&str] = &["ssh", "scp", "sftp", "rsync"];

/// Most words a password is read over.
const MAX_WORDS: usize = 8;

pub(super) fn secrets(text: &Text<'_>, out: &mut Vec<Span>) {
    for at in text.words("sshpass") {
        // Only `sshpass -p ` right after the name, and a few words on: the scan stays
        // bounded however many times the line names sshpass.
        let after = at + "sshpass".len();
        let Some(rest) = text.raw[after..].strip_prefix(" -p ") else {
            continue;
        };
        let from = text.raw.len() - rest.len();
        let end = super::lex::line_end_within(text.raw, from, WINDOW);
        let line = &text.raw[from..end];
        if line.starts_with(['\'', '"']) {
            continue;
        }
        let words = words(line, MAX_WORDS + 1);
        let Some(runs) = words.iter().position(|&(s, e)| RUNS.contains(&&line[s..e])) else {
            continue;
        };
        // `sshpass -p a sshpass -p b ssh`: the words before the next `sshpass` are the
        // first one's (its `-p` value), not a password of several words. (Else each pass
        // over a line of `sshpass -p a` repeated would take one more.)
        let again = words[..runs].iter().any(|&(s, e)| &line[s..e] == "sshpass");
        if runs < 2 || again {
            continue;
        }
        let (start, stop) = (words[1].0, words[runs - 1].1);
        let taken = line[start..stop].split(' ').all(|w| w == REDACTED);
        if !taken {
            out.push((from + start, from + stop));
        }
    }
}

/// How far after `-p ` the words are read.
const WINDOW: usize = 1024;

/// The first `most` blank-separated words of `line`, as byte ranges.
fn words(line: &str, most: usize) -> Vec<Span> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in line.char_indices() {
        if out.len() == most {
            return out;
        }
        match (c == ' ' || c == '\t', start) {
            (true, Some(s)) => {
                out.push((s, i));
                start = None;
            }
            (false, None) => start = Some(i),
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push((s, line.len()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::assert_lexed;
    use super::*;

    #[test]
    fn the_words_before_the_program_go() {
        assert_lexed(
            secrets,
            &[
                (
                    "Error: Command failed: sshpass -p alpha bravo charlie ssh -p 22 u@h true",
                    "Error: Command failed: sshpass -p alpha [REDACTED] ssh -p 22 u@h true",
                ),
                ("sshpass -p one ssh -p 22 h", "sshpass -p one ssh -p 22 h"),
                ("sshpass -p 'a b' ssh h", "sshpass -p 'a b' ssh h"),
                (
                    "sshpass -p a b c d e f g h i j ssh h",
                    "sshpass -p a b c d e f g h i j ssh h",
                ),
            ],
        );
    }
}
