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
//!
//! A value is taken as a whole word: where it stands inside a longer run of letters and
//! digits (`dbSup3r!5yit01`), the whole run goes, so the word is neither cut mid-way nor
//! left with a head or tail of the secret glued to the marker (`marker::splice` takes only
//! a tail, and only of a value ending in a letter or digit). Punctuation ends the word: the
//! `-backup` of `Sup3r!5yit-backup` stays; and a value a form found glued to a word before
//! it (Telegram's `/bot«token»`) takes no head anywhere, since the form drew that edge.

use super::super::super::marker::REDACTED;
use super::lex::{Span, Text};

/// Fewest bytes of a value that spreads.
const MIN_LEN: usize = 8;
/// Most distinct values spread from one text.
const MAX_VALUES: usize = 16;

/// Adds to `spans` every other place where the text of one of them stands.
pub(super) fn spread(text: &Text<'_>, spans: &mut Vec<Span>) {
    let b = text.raw.as_bytes();
    // Each value, and whether a form found it right after a letter or digit (`/bot«…»`):
    // the form drew that edge, so the value takes no head elsewhere either.
    let mut values: Vec<(&str, bool)> = Vec::new();
    for &(start, end) in spans.iter() {
        let value = &text.raw[start..end];
        let glued = start > 0 && b[start - 1].is_ascii_alphanumeric();
        if let Some((_, was)) = values.iter_mut().find(|(v, _)| *v == value) {
            *was |= glued;
        } else if distinctive(value) && values.len() < MAX_VALUES {
            values.push((value, glued));
        }
    }
    for (value, glued_head) in values {
        // The end of the last word taken: an occurrence inside it is taken already, and no
        // word start is looked for before it, so each byte is read once per value.
        let mut taken = 0;
        let word_end = |end: usize| match b[end - 1].is_ascii_alphanumeric() {
            true => {
                end + b[end..]
                    .iter()
                    .take_while(|c| c.is_ascii_alphanumeric())
                    .count()
            }
            false => end,
        };
        for (at, _) in text.raw.match_indices(value) {
            let end = at + value.len();
            if at < taken {
                // Inside the word just taken; it may reach past it.
                if end > taken {
                    taken = word_end(end);
                    if let Some(last) = spans.last_mut() {
                        last.1 = taken;
                    }
                }
                continue;
            }
            // A value glued to letters or digits (it starts or ends with one itself, and
            // one stands next to it) takes the rest of that run.
            let start = match !glued_head && b[at].is_ascii_alphanumeric() {
                true => {
                    at - b[taken..at]
                        .iter()
                        .rev()
                        .take_while(|c| c.is_ascii_alphanumeric())
                        .count()
                }
                false => at,
            };
            taken = word_end(end);
            spans.push((start, taken));
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

    /// The spans `spread` adds for the value `Sup3r!5yit` found at the text's start.
    fn spread_in(rest: &str) -> Vec<String> {
        let raw = format!("port: 'Sup3r!5yit'\n{rest}");
        let text = Text::new(&raw);
        let mut spans = vec![(7, 17)];
        spread(&text, &mut spans);
        // Without the value where it was found.
        spans[1..]
            .iter()
            .filter(|&&span| span != (7, 17))
            .map(|&(s, e)| raw[s..e].to_owned())
            .collect()
    }

    #[test]
    fn a_value_inside_a_longer_word_takes_the_whole_word() {
        assert_eq!(
            spread_in("host dbSup3r!5yit01.internal"),
            ["dbSup3r!5yit01"]
        );
        assert_eq!(
            spread_in("x Sup3r!5yitSup3r!5yit y"),
            ["Sup3r!5yitSup3r!5yit"]
        );
        // Punctuation ends the word.
        assert_eq!(spread_in("cp Sup3r!5yit-backup ."), ["Sup3r!5yit"]);
        assert_eq!(
            spread_in("(Sup3r!5yit) and =Sup3r!5yit;"),
            ["Sup3r!5yit", "Sup3r!5yit"]
        );
        // A piece of the value is no occurrence of it.
        assert!(spread_in("Sup3r and 5yit stay").is_empty());
        // Where a form found the value glued to a word, the value's own edge stands.
        let raw = "api.telegram.org/botSup3r!5yit/getMe\nGET /botSup3r!5yit01/sendMessage";
        let text = Text::new(raw);
        let mut spans = vec![(20, 30)];
        spread(&text, &mut spans);
        let got: Vec<&str> = spans[1..].iter().map(|&(s, e)| &raw[s..e]).collect();
        assert_eq!(got, ["Sup3r!5yit", "Sup3r!5yit01"]);
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
