//! Learned values that a line break cut: a program that wraps long lines (stackprinter, a
//! terminal-width table) prints the start of a value at the end of one line and the rest at
//! the start of the next (`    'Q9wE2rT7yU'` under a line that ends in the value's head).
//!
//! At every line break, the run that ends the line is looked up among the learned values'
//! starts, and the run that starts the next line (after its indentation and any tree
//! drawing) among their ends: a piece of [`MIN_CUT`] characters or more that one of them
//! begins or ends with goes, and with it the value's other piece on the other side of the
//! break, however short. Each line is read a bounded number of times (a few candidate
//! pieces, each a binary search among the values), so the pass is linear.

/// Fewest characters of a piece of a value that a line break cut.
const MIN_CUT: usize = 8;
/// Most bytes of a line's end or start read for a piece.
const REACH: usize = 512;
/// Most places a piece may begin (or end) at, per line.
const CANDIDATES: usize = 8;

/// The byte ranges of the pieces of `values` that line breaks in `text` cut.
pub(crate) fn cut_ends(text: &str, values: &[String]) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    if !values.iter().any(|v| v.len() > MIN_CUT) || !text.contains('\n') {
        return spans;
    }
    let mut starts: Vec<&str> = values.iter().map(String::as_str).collect();
    starts.sort_unstable();
    let mut ends: Vec<Vec<u8>> = values.iter().map(|v| v.bytes().rev().collect()).collect();
    ends.sort_unstable();
    let b = text.as_bytes();
    let mut line_start = 0;
    while let Some(at) = memchr(b'\n', &b[line_start..]) {
        let nl = line_start + at;
        let next_end = memchr(b'\n', &b[nl + 1..]).map_or(b.len(), |at| nl + 1 + at);
        let line_end = if nl > line_start && b[nl - 1] == b'\r' {
            nl - 1
        } else {
            nl
        };
        let head = head_run(text, nl + 1, next_end);
        if let Some((s, value)) = tail_piece(text, line_start, line_end, &starts) {
            spans.push((s, line_end));
            let rest = &value[line_end - s..];
            let kept = common_prefix(&text[head.0..next_end], rest);
            if kept == rest.len() || text[head.0..head.0 + kept].chars().count() >= MIN_CUT {
                spans.push((head.0, head.0 + kept));
            }
        }
        if let Some((e, value)) = head_piece(text, head, &ends) {
            spans.push((head.0, e));
            // The value's front, or as much of its end as the line ends with: a value
            // learned with its name (`api_key=…`) may be printed without it.
            let front = &value[..value.len() - (e - head.0)];
            let kept = common_suffix(&text[line_start..line_end], front);
            if kept == front.len() || text[line_end - kept..line_end].chars().count() >= MIN_CUT {
                spans.push((line_end - kept, line_end));
            }
        }
        line_start = nl + 1;
    }
    spans.sort_unstable();
    spans.dedup();
    spans
}

/// Bytes at the start of `a` that `b` starts with too, a whole number of characters.
fn common_prefix(a: &str, b: &str) -> usize {
    let mut n = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    while !a.is_char_boundary(n) {
        n -= 1;
    }
    n
}

/// Bytes at the end of `a` that `b` ends with too, a whole number of characters.
fn common_suffix(a: &str, b: &str) -> usize {
    let pairs = a.bytes().rev().zip(b.bytes().rev());
    let mut n = pairs.take_while(|(x, y)| x == y).count();
    while !a.is_char_boundary(a.len() - n) {
        n -= 1;
    }
    n
}

fn memchr(needle: u8, haystack: &[u8]) -> Option<usize> {
    haystack.iter().position(|&c| c == needle)
}

/// Whether `c` may stand inside a run: not a blank and not a quote.
fn in_run(c: u8) -> bool {
    !c.is_ascii_whitespace() && !b"'\"`".contains(&c)
}

/// The run that ends the line `line_start..line_end` and begins a value, as the byte where
/// it starts and that value; `None` when none does.
fn tail_piece<'v>(
    text: &str,
    line_start: usize,
    line_end: usize,
    starts: &[&'v str],
) -> Option<(usize, &'v str)> {
    let b = text.as_bytes();
    let floor = line_start.max(line_end.saturating_sub(REACH));
    let run = (floor..line_end)
        .rev()
        .find(|&i| !in_run(b[i]))
        .map_or(floor, |i| i + 1);
    let places = std::iter::once(run)
        .chain((run..line_end).filter(|&i| i > run && !b[i - 1].is_ascii_alphanumeric()))
        .filter(|&i| text.is_char_boundary(i))
        .take(CANDIDATES);
    for s in places {
        let piece = &text[s..line_end];
        if piece.chars().count() < MIN_CUT {
            break;
        }
        let at = starts.partition_point(|v| *v < piece);
        if let Some(v) = starts.get(at)
            && v.len() > piece.len()
            && v.starts_with(piece)
        {
            return Some((s, v));
        }
    }
    None
}

/// The run that starts the line `start..end`, after its indentation and tree drawing
/// (`│`, `└`, `├`, `─`, `|`, `>`), as its byte range.
fn head_run(text: &str, start: usize, end: usize) -> (usize, usize) {
    let line = &text[start..end];
    let body = line.trim_start_matches(|c: char| {
        c.is_whitespace() || matches!(c, '│' | '└' | '├' | '─' | '|' | '>' | '\'' | '"')
    });
    let s = end - body.len();
    let ceiling = end.min(s + REACH);
    let b = text.as_bytes();
    let e = (s..ceiling).find(|&i| !in_run(b[i])).unwrap_or(ceiling);
    (s, e)
}

/// The piece of the run `head` that ends a value (the longest of a few), as the byte where
/// it ends and that value.
fn head_piece(text: &str, head: (usize, usize), ends: &[Vec<u8>]) -> Option<(usize, String)> {
    let b = text.as_bytes();
    let (s, e) = head;
    let places = std::iter::once(e)
        .chain(
            (s..e)
                .rev()
                .filter(|&i| i > s && !b[i].is_ascii_alphanumeric()),
        )
        .filter(|&i| text.is_char_boundary(i))
        .take(CANDIDATES);
    for end in places {
        if text[s..end].chars().count() < MIN_CUT {
            break;
        }
        let piece: Vec<u8> = b[s..end].iter().rev().copied().collect();
        let at = ends.partition_point(|v| *v < piece);
        if let Some(v) = ends.get(at)
            && v.len() > piece.len()
            && v.starts_with(&piece)
        {
            let value: Vec<u8> = v.iter().rev().copied().collect();
            return String::from_utf8(value).ok().map(|v| (end, v));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cut(values: &[&str], text: &str) -> Vec<String> {
        let values: Vec<String> = values.iter().map(|v| v.to_string()).collect();
        let mut spans = cut_ends(text, &values);
        spans.sort_unstable();
        spans.iter().map(|&(s, e)| text[s..e].to_owned()).collect()
    }

    #[test]
    fn both_pieces_of_a_wrapped_value_go() {
        let v = "Xk29fjQmLrAbQ9wE2rT7yU";
        assert_eq!(
            cut(&[v], "    password = 'Xk29fjQmLrAb\n    Q9wE2rT7yU'\n"),
            ["Xk29fjQmLrAb", "Q9wE2rT7yU"]
        );
        // The head alone on the line before it is short: it goes with the rest.
        assert_eq!(
            cut(&[v], "x = 'Xk29\n  fjQmLrAbQ9wE2rT7yU'"),
            ["Xk29", "fjQmLrAbQ9wE2rT7yU"]
        );
        // A tree-drawn continuation.
        assert_eq!(
            cut(&[v], "│   └ 'Xk29fjQmLrAbQ9\n│      wE2rT7yU'"),
            ["Xk29fjQmLrAbQ9", "wE2rT7yU"]
        );
    }

    #[test]
    fn short_pieces_and_other_text_stay() {
        let v = "Xk29fjQmLrAbQ9wE2rT7yU";
        assert!(cut(&[v], "ends in Xk29fjQ\nT7yU next").is_empty());
        assert!(cut(&[v], "whole Xk29fjQmLrAbQ9wE2rT7yU\nnext").is_empty());
        assert!(cut(&[v], "no line break Xk29fjQmLrAb").is_empty());
        assert!(cut(&[], "a\nb").is_empty());
    }
}
