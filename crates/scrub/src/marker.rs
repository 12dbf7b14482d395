//! The marker every scrubbing layer leaves where it removed something, and the one splice
//! that puts it over the byte ranges a layer found.
//!
//! It lives in a module of its own so that the layers and the [`Scrubber`](super::Scrubber)
//! that runs them all look down to it, and no layer imports its caller.
//!
//! The splice is also where the scrubber learns (`whole`): while [`learning`] runs, the
//! original text of every range any layer replaces is kept, so that a value one rule
//! recognised on one line can be removed wherever else it stands. A layer that finds a new
//! kind of secret teaches it by splicing it, and needs nothing more.

use std::borrow::Cow;
use std::cell::RefCell;

/// What a removed secret or piece of personal data becomes.
pub const REDACTED: &str = "[REDACTED]";

/// What [`splice`] does with a range that starts before the one before it ended.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Overlap {
    /// The range that starts first wins; the later one is left out, and what of it lies
    /// past the first stays as it was (`structure`'s forms, whose lexers may claim the same
    /// text).
    FirstWins,
    /// The later range extends the marker already written (`personal`, whose kinds of data
    /// may overlap and all go).
    Merge,
}

/// `text` with each of `spans` (byte ranges on char boundaries, sorted by their start)
/// replaced by [`REDACTED`], in order (a range that ends inside a word takes the rest of
/// it: `word_end`); borrowed when there are none. Ranges that touch get
/// a marker each; an empty range inserts one; overlapping ranges are as `overlap` says.
pub(crate) fn splice<'t>(
    text: &'t str,
    spans: &[(usize, usize)],
    overlap: Overlap,
) -> Cow<'t, str> {
    if spans.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    for &(start, end) in spans {
        if start < copied {
            if overlap == Overlap::Merge {
                copied = copied.max(end);
            }
            continue;
        }
        let end = word_end(text, start, end);
        out.push_str(&text[copied..start]);
        out.push_str(REDACTED);
        learn(&text[start..end]);
        copied = end;
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

/// `end`, or past it to the end of the word when the range `start..end` stops inside one
/// (a letter or digit on both sides of `end`) and is a value's length
/// ([`WORD_PIECE`] bytes or more; shorter ranges are pieces a layer chose): a value found short (a hex dump's column
/// cut at 16 bytes, found again where the whole value stands) takes the rest of its word,
/// so no tail of a secret is left glued to the marker.
const WORD_PIECE: usize = 8;

fn word_end(text: &str, start: usize, end: usize) -> usize {
    let b = text.as_bytes();
    if end < start + WORD_PIECE || end >= b.len() || !b[end - 1].is_ascii_alphanumeric() {
        return end;
    }
    end + b[end..]
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric())
        .count()
}

/// Most bytes of replaced text kept while [`learning`] runs: the text scrubbed is bounded,
/// and so is what it can teach.
const MAX_LEARNED_BYTES: usize = 1 << 20;

thread_local! {
    /// What the splices replaced since [`learning`] began; `None` when nothing is learning.
    static LEARNED: RefCell<Option<Learned>> = const { RefCell::new(None) };
}

/// The replaced pieces, and their bytes together.
#[derive(Default)]
struct Learned {
    pieces: Vec<String>,
    bytes: usize,
}

/// Runs `f`, and returns with its result the original text of every range [`splice`]
/// replaced meanwhile (on this thread), each piece between markers already there on its
/// own. Nested calls keep their own pieces.
pub(crate) fn learning<T>(f: impl FnOnce() -> T) -> (T, Vec<String>) {
    let outer = LEARNED.with(|l| l.replace(Some(Learned::default())));
    let result = f();
    let learned = LEARNED.with(|l| l.replace(outer));
    (result, learned.map(|l| l.pieces).unwrap_or_default())
}

/// Keeps `replaced` (the text a range held) if something is learning.
pub(crate) fn learn(replaced: &str) {
    LEARNED.with(|l| {
        let mut l = l.borrow_mut();
        let Some(l) = l.as_mut() else {
            return;
        };
        for piece in replaced.split(REDACTED) {
            if !piece.trim().is_empty() && l.bytes + piece.len() <= MAX_LEARNED_BYTES {
                l.bytes += piece.len();
                l.pieces.push(piece.to_owned());
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::Overlap::{FirstWins, Merge};
    use super::*;

    /// Byte ranges, as the layers hand them over.
    type Spans = &'static [(usize, usize)];

    /// `text` spliced with `spans` under both policies.
    fn both(text: &str, spans: &[(usize, usize)]) -> (String, String) {
        (
            splice(text, spans, FirstWins).into_owned(),
            splice(text, spans, Merge).into_owned(),
        )
    }

    #[test]
    fn no_ranges_leave_the_text_borrowed() {
        for overlap in [FirstWins, Merge] {
            assert!(matches!(splice("abc", &[], overlap), Cow::Borrowed("abc")));
            assert!(matches!(splice("", &[], overlap), Cow::Borrowed("")));
        }
    }

    #[test]
    fn disjoint_ranges_go_in_order_under_either_policy() {
        // Text "0123456789"; each case's ranges are disjoint, so the policies agree.
        let cases: &[(Spans, &str)] = &[
            (&[(0, 10)], "[REDACTED]"),
            (&[(0, 3)], "[REDACTED]3456789"),
            (&[(7, 10)], "0123456[REDACTED]"),
            (&[(2, 4), (6, 8)], "01[REDACTED]45[REDACTED]89"),
            // Ranges that touch: a marker each.
            (&[(2, 4), (4, 6)], "01[REDACTED][REDACTED]6789"),
            // An empty range inserts a marker, at the start, inside and at the end.
            (&[(0, 0)], "[REDACTED]0123456789"),
            (&[(5, 5)], "01234[REDACTED]56789"),
            (&[(10, 10)], "0123456789[REDACTED]"),
            (&[(3, 3), (3, 5)], "012[REDACTED][REDACTED]56789"),
        ];
        for (spans, want) in cases {
            let (first, merged) = both("0123456789", spans);
            assert_eq!(first, *want, "{spans:?}, first wins");
            assert_eq!(merged, *want, "{spans:?}, merged");
        }
    }

    #[test]
    fn overlapping_ranges_as_the_policy_says() {
        // (ranges, first wins, merged)
        let cases: &[(Spans, &str, &str)] = &[
            // The second starts inside the first and ends past it.
            (&[(2, 5), (4, 8)], "01[REDACTED]56789", "01[REDACTED]89"),
            // The second lies inside the first.
            (&[(2, 8), (3, 5)], "01[REDACTED]89", "01[REDACTED]89"),
            // Both start together, the shorter first.
            (&[(2, 4), (2, 7)], "01[REDACTED]456789", "01[REDACTED]789"),
            // Both start together, the longer first.
            (&[(2, 7), (2, 4)], "01[REDACTED]789", "01[REDACTED]789"),
            // A chain: each overlaps the one before it, then one apart.
            (
                &[(1, 3), (2, 5), (4, 7), (8, 9)],
                "0[REDACTED]3[REDACTED]7[REDACTED]9",
                "0[REDACTED]7[REDACTED]9",
            ),
        ];
        for (spans, first_wins, merged) in cases {
            let (first, merge) = both("0123456789", spans);
            assert_eq!(first, *first_wins, "{spans:?}, first wins");
            assert_eq!(merge, *merged, "{spans:?}, merged");
        }
    }

    #[test]
    fn ranges_around_multi_byte_characters() {
        // "é€😀": é at 0..2, € at 2..5, 😀 at 5..9.
        let text = "\u{e9}\u{20ac}\u{1f600}";
        assert_eq!(
            splice(text, &[(2, 5)], FirstWins),
            "\u{e9}[REDACTED]\u{1f600}"
        );
        assert_eq!(
            splice(text, &[(0, 2), (5, 9)], Merge),
            "[REDACTED]\u{20ac}[REDACTED]"
        );
        assert_eq!(splice(text, &[(0, 5), (2, 9)], Merge), "[REDACTED]");
        assert_eq!(
            splice(text, &[(0, 5), (2, 9)], FirstWins),
            "[REDACTED]\u{1f600}"
        );
    }
}
