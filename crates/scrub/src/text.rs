//! Char boundaries: the byte position nearest a given one at which a `&str` may be cut.
//!
//! `str::floor_char_boundary` and `str::ceil_char_boundary` do the same, but are stable
//! only from Rust 1.91 and the crates build with 1.88; these two serve the scrubber and
//! crontap-run's report until then, and have the standard library's meaning so that
//! moving to it changes nothing.

/// The greatest char boundary of `text` at or before `i`; `text.len()` when `i` is past
/// the end.
pub fn floor_char_boundary(text: &str, i: usize) -> usize {
    if i >= text.len() {
        return text.len();
    }
    // A UTF-8 character is at most four bytes, so this walks back at most three.
    let mut i = i;
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The least char boundary of `text` at or after `i`; `text.len()` when `i` is past the
/// end.
pub fn ceil_char_boundary(text: &str, i: usize) -> usize {
    if i >= text.len() {
        return text.len();
    }
    let mut i = i;
    while !text.is_char_boundary(i) {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A character of each UTF-8 length: `a` (1 byte, 0..1), `é` (2, 1..3), `€` (3, 3..6),
    /// `😀` (4, 6..10), `z` (1, 10..11). Its boundaries are 0, 1, 3, 6, 10 and 11.
    const MIXED: &str = "a\u{e9}\u{20ac}\u{1f600}z";

    #[test]
    fn every_position_of_every_character_length() {
        assert_eq!(MIXED.len(), 11);
        // Index: position 0 to 13, two past the end.
        let floor = [0, 1, 1, 3, 3, 3, 6, 6, 6, 6, 10, 11, 11, 11];
        let ceil = [0, 1, 3, 3, 6, 6, 6, 10, 10, 10, 10, 11, 11, 11];
        for (i, (&floor, &ceil)) in floor.iter().zip(&ceil).enumerate() {
            assert_eq!(floor_char_boundary(MIXED, i), floor, "floor at {i}");
            assert_eq!(ceil_char_boundary(MIXED, i), ceil, "ceil at {i}");
        }
    }

    #[test]
    fn text_of_one_long_character() {
        // Every position inside a 4-byte character goes to its start or its end.
        for (i, (floor, ceil)) in [(0, 0), (0, 4), (0, 4), (0, 4), (4, 4), (4, 4)]
            .into_iter()
            .enumerate()
        {
            assert_eq!(floor_char_boundary("😀", i), floor, "floor at {i}");
            assert_eq!(ceil_char_boundary("😀", i), ceil, "ceil at {i}");
        }
    }

    #[test]
    fn empty_text_and_positions_far_past_the_end() {
        for i in [0, 1, 4, usize::MAX] {
            assert_eq!(floor_char_boundary("", i), 0);
            assert_eq!(ceil_char_boundary("", i), 0);
            assert_eq!(floor_char_boundary(MIXED, i.max(11)), 11);
            assert_eq!(ceil_char_boundary(MIXED, i.max(11)), 11);
        }
    }
}
