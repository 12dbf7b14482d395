//! Makes text safe to leave the program on one line: ANSI escape sequences, control
//! characters and bidirectional-override characters are removed.
//!
//! Tabs and line breaks (LF, CR, VT, FF, NEL, U+2028, U+2029) become a single space so that
//! what was several lines reads as one. Where lines are kept (a body, the text a summary line
//! is picked from), only LF and CR split them: the other line breaks become a space.

/// A path on one line, whatever it holds (a newline in a path would split a message).
pub fn path(path: &std::path::Path) -> String {
    one_line(&path.display().to_string())
}

/// Returns `text` on one line, with escape sequences and control characters removed.
pub fn one_line(text: &str) -> String {
    clean(text, false)
}

/// Returns `text` with escape sequences and control characters removed but its line breaks
/// (`\n` and `\r`) and tabs kept (stack frames are told apart by their indentation), so that secrets coloured by escapes are seen whole by the scrubber
/// and lines can still be told apart.
pub fn keep_lines(text: &str) -> String {
    clean(text, true)
}

fn clean(text: &str, keep_lines: bool) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => skip_escape(&mut chars),
            // CSI introduced by the single C1 character instead of ESC [.
            '\u{9b}' => skip_csi(&mut chars),
            '\n' | '\r' | '\t' if keep_lines => out.push(c),
            // The other line breaks (VT, FF, NEL, U+2028, U+2029) become a space even where
            // lines are kept: a line is split only at LF and CR, so that a `key=value` with
            // one of them inside is scrubbed whole, not as a key line and a value line.
            c if keep_lines && is_other_break(c) => out.push(' '),
            c if '\t' == c || '\n' == c || '\r' == c || is_other_break(c) => {
                if !out.ends_with(' ') {
                    out.push(' ');
                }
            }
            c if c.is_control() || is_bidi_control(c) => {}
            c => out.push(c),
        }
    }
    out
}

/// Line breaks other than LF and CR: vertical tab, form feed, next line (NEL), and the
/// Unicode line and paragraph separators.
fn is_other_break(c: char) -> bool {
    matches!(c, '\u{b}' | '\u{c}' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

/// Unicode characters that reorder how text is displayed (Trojan Source): embeddings,
/// overrides, isolates and the invisible marks.
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

type Chars<'a> = std::iter::Peekable<std::str::Chars<'a>>;

/// Skips what follows an ESC: a CSI sequence (`ESC [ … final`), an OSC/DCS/PM/APC string
/// (terminated by BEL or `ESC \`), or a two-character escape.
fn skip_escape(chars: &mut Chars<'_>) {
    match chars.next() {
        Some('[') => skip_csi(chars),
        // nF escapes such as `ESC ( B` (select character set, from `tput sgr0`):
        // intermediate bytes, then one final byte.
        Some(' '..='/') => {
            while chars.next_if(|c| (' '..='/').contains(c)).is_some() {}
            chars.next();
        }
        Some(']' | 'P' | '^' | '_' | 'X') => {
            while let Some(c) = chars.next() {
                if c == '\u{7}' || (c == '\u{1b}' && chars.next_if_eq(&'\\').is_some()) {
                    break;
                }
            }
        }
        _ => {}
    }
}

/// Skips CSI parameter and intermediate bytes up to and including the final byte.
fn skip_csi(chars: &mut Chars<'_>) {
    for c in chars.by_ref() {
        if ('\u{40}'..='\u{7e}').contains(&c) || !(' '..='\u{7e}').contains(&c) {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::one_line;

    #[test]
    fn strips_escapes_and_controls() {
        assert_eq!(one_line("\x1b[1;31merror\x1b[0m: bad"), "error: bad");
        assert_eq!(
            one_line("\x1b]8;;http://x\x07link\x1b]8;;\x1b\\ text"),
            "link text"
        );
        assert_eq!(one_line("a\u{7}b\u{0}c\u{7f}d"), "abcd");
        assert_eq!(one_line("a\r\n\tb"), "a b");
        assert_eq!(one_line("safe\u{202e}txt.exe\u{2066}"), "safetxt.exe");
        assert_eq!(one_line("\u{9b}2Jclear"), "clear");
        assert_eq!(
            one_line("\x1b[1mERROR\x1b(B\x1b[m: disk full"),
            "ERROR: disk full"
        );
        assert_eq!(one_line("plain ü ✓"), "plain ü ✓");
        assert_eq!(super::keep_lines("a\x1b[31mb\r\nc\td\u{7}"), "ab\r\nc\td");
    }

    #[test]
    fn every_line_break_keeps_words_apart() {
        for line_break in ['\u{b}', '\u{c}', '\u{85}', '\u{2028}', '\u{2029}'] {
            let text = format!("disk{line_break}full");
            assert_eq!(one_line(&text), "disk full", "{line_break:?}");
            assert_eq!(super::keep_lines(&text), "disk full", "{line_break:?}");
        }
    }

    #[test]
    fn strips_character_set_escapes() {
        // `tput sgr0` ends with ESC ( B.
        assert_eq!(
            one_line("\x1b[1mERROR\x1b(B\x1b[m: disk full"),
            "ERROR: disk full"
        );
    }
}
