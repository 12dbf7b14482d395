//! A value a form found to be a secret goes wherever else it stands in the text: a program
//! that prints a password once where its form says so often prints it again where nothing
//! does (Python's `nonnumeric port: '…'` after `invalid literal for int() with base 10:
//! '…'`, a value echoed by a traceback's locals).
//!
//! Only values that cannot be ordinary words spread: one word (no blank, quote, bracket or
//! list separator) of at least [`MIN_LEN`] bytes with a digit, punctuation or letters of
//! both cases, and at most [`MAX_VALUES`] of them, so the cost stays a few substring
//! searches of the text. (A passphrase does not spread: a form that read prose by mistake
//! must not carry it across the text.)

use super::super::super::marker::REDACTED;
use super::lex::{Span, Text};

/// Fewest bytes of a value that spreads.
const MIN_LEN: usize = 8;
/// Most distinct values spread from one text.
const MAX_VALUES: usize = 16;

/// Adds to `spans` every other place where the text of one of them stands.
pub(super) fn spread(text: &Text<'_>, spans: &mut Vec<Span>) {
    let mut values: Vec<&str> = Vec::new();
    for &(start, end) in spans.iter() {
        let value = &text.raw[start..end];
        if distinctive(value) && !values.contains(&value) {
            values.push(value);
            if values.len() == MAX_VALUES {
                break;
            }
        }
    }
    for value in values {
        for (at, _) in text.raw.match_indices(value) {
            spans.push((at, at + value.len()));
        }
    }
}

/// Whether `value` is long and mixed enough never to be an ordinary word.
fn distinctive(value: &str) -> bool {
    let b = value.as_bytes();
    let mixed = b.iter().any(u8::is_ascii_uppercase) && b.iter().any(u8::is_ascii_lowercase);
    let other = b.iter().any(|c| !c.is_ascii_alphabetic());
    // One word of a password's characters: a form that read prose by mistake (a value with
    // blanks, quotes or brackets) must not carry it across the text.
    let one_word = !b
        .iter()
        .any(|c| c.is_ascii_whitespace() || b"'\"`()[]{}<>|,;".contains(c));
    b.len() >= MIN_LEN && !value.contains(REDACTED) && one_word && (mixed || other)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_found_value_goes_everywhere() {
        let raw = "int() with base 10: 'Sup3r!5yit'\nnonnumeric port: 'Sup3r!5yit'";
        let text = Text::new(raw);
        let at = raw.rfind("Sup3r").unwrap();
        let mut spans = vec![(at, at + 10)];
        spread(&text, &mut spans);
        spans.sort_unstable();
        assert_eq!(spans.len(), 3);
        assert_eq!(&raw[spans[0].0..spans[0].1], "Sup3r!5yit");
    }

    #[test]
    fn words_do_not_spread() {
        for value in ["password", "short1", "lowercaseword"] {
            assert!(!distinctive(value), "{value}");
        }
        assert!(!distinctive("two words here"));
        assert!(!distinctive("` repeated (one line"));
        assert!(distinctive("Sup3r!5yit"));
    }
}
