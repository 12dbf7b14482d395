//! A copy of the text as a reader sees it, with the way back to the text: what hides a
//! learned value from the automaton but not from whoever reads the summary is taken out.
//!
//! - JSON's `\uXXXX` escapes (a surrogate pair too) become the character they stand for:
//!   JSON may escape any character, so no list of spellings holds every mix;
//! - ANSI escape sequences (CSI `ESC [ … final`, OSC `ESC ] … BEL` or `ESC \`, and two-byte
//!   `ESC x`) are dropped: a terminal shows nothing of them;
//! - no-break and other fixed-width spaces inside a word (U+00A0, U+2007, U+202F) are
//!   dropped;
//! - a single space or colon between two hex digits is dropped, so hex printed a byte or
//!   two at a time (`53 75 70`, `53:75:70`, xxd's `5375 7033`) reads as one run (a hex
//!   dump is one line, `[hex dump]`, before this: `traces::hexdump`).
//!
//! Every byte of the copy remembers the byte range of the text it came from, so a match in
//! the copy maps back to the text it covers, dropped pieces inside it included. One pass
//! over the text builds it; an OSC sequence is read for at most [`OSC_REACH`] bytes.

/// Most bytes of an OSC sequence read for its end.
const OSC_REACH: usize = 512;

/// The copy and, for each of its bytes, where its piece of the text starts and ends.
pub(crate) struct View {
    pub(crate) text: String,
    starts: Vec<u32>,
    ends: Vec<u32>,
}

impl View {
    /// The view of `text`; `None` when it would be the text itself (or the text is too long
    /// for the map).
    pub(crate) fn of(text: &str) -> Option<View> {
        if text.len() >= u32::MAX as usize || !worth_a_view(text) {
            return None;
        }
        let b = text.as_bytes();
        let mut view = View {
            text: String::with_capacity(text.len()),
            starts: Vec::with_capacity(text.len()),
            ends: Vec::with_capacity(text.len()),
        };
        let mut i = 0;
        let mut changed = false;
        while i < b.len() {
            if b[i] == 0x1b {
                i = escape_end(b, i);
                changed = true;
                continue;
            }
            if b[i] == b'\\'
                && let Some((c, end)) = json_escape(text, i)
            {
                view.push(c, i, end);
                i = end;
                changed = true;
                continue;
            }
            let c = text[i..].chars().next().unwrap_or_default();
            let len = c.len_utf8();
            let hex_gap = matches!(c, ' ' | ':')
                && i > 0
                && b[i - 1].is_ascii_hexdigit()
                && b.get(i + 1).is_some_and(u8::is_ascii_hexdigit);
            if hex_gap || matches!(c, '\u{a0}' | '\u{2007}' | '\u{202f}') {
                changed = true;
            } else {
                view.push(c, i, i + len);
            }
            i += len;
        }
        changed.then_some(view)
    }

    fn push(&mut self, c: char, start: usize, end: usize) {
        for _ in 0..c.len_utf8() {
            self.starts.push(start as u32);
            self.ends.push(end as u32);
        }
        self.text.push(c);
    }

    /// The byte range of the text that the copy's `start..end` (on char boundaries, not
    /// empty) came from.
    pub(crate) fn back(&self, start: usize, end: usize) -> (usize, usize) {
        (self.starts[start] as usize, self.ends[end - 1] as usize)
    }
}

/// Whether `text` holds anything a view changes.
fn worth_a_view(text: &str) -> bool {
    let b = text.as_bytes();
    text.contains(['\u{1b}', '\u{a0}', '\u{2007}', '\u{202f}'])
        || text.contains("\\u")
        || b.windows(3).any(|w| {
            matches!(w[1], b' ' | b':') && w[0].is_ascii_hexdigit() && w[2].is_ascii_hexdigit()
        })
}

/// Where the escape sequence starting at `i` (an ESC) ends.
fn escape_end(b: &[u8], i: usize) -> usize {
    match b.get(i + 1) {
        Some(b'[') => {
            let mut j = i + 2;
            while j < b.len() && (0x20..0x40).contains(&b[j]) {
                j += 1;
            }
            match b.get(j) {
                Some(0x40..=0x7e) => j + 1,
                _ => j,
            }
        }
        Some(b']') => {
            let ceiling = b.len().min(i + 2 + OSC_REACH);
            let mut j = i + 2;
            while j < ceiling {
                match b[j] {
                    0x07 => return j + 1,
                    0x1b if b.get(j + 1) == Some(&b'\\') => return j + 2,
                    b'\n' => return j,
                    _ => j += 1,
                }
            }
            j
        }
        Some(0x40..=0x5f) => i + 2,
        _ => i + 1,
    }
}

/// The character a JSON `\uXXXX` escape (or a surrogate pair of two) at `i` stands for,
/// and where the escape ends.
fn json_escape(text: &str, i: usize) -> Option<(char, usize)> {
    let unit = |at: usize| -> Option<u32> {
        let digits = text.get(at..at + 6)?.strip_prefix("\\u")?;
        if !digits.bytes().all(|c| c.is_ascii_hexdigit()) {
            return None;
        }
        u32::from_str_radix(digits, 16).ok()
    };
    let high = unit(i)?;
    if (0xd800..0xdc00).contains(&high) {
        let low = unit(i + 6).filter(|l| (0xdc00..0xe000).contains(l))?;
        let c = char::from_u32(0x10000 + ((high - 0xd800) << 10) + (low - 0xdc00))?;
        return Some((c, i + 12));
    }
    char::from_u32(high).map(|c| (c, i + 6))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(text: &str) -> String {
        View::of(text).map_or_else(|| text.to_owned(), |v| v.text)
    }

    #[test]
    fn what_a_reader_sees() {
        for (text, want) in [
            ("a\\u0056b \\ud83d\\ude00", "aVb \u{1f600}"),
            ("red\u{1b}[31;1mtext\u{1b}[0m!", "redtext!"),
            ("title\u{1b}]0;hello\u{7}x", "titlex"),
            ("nb\u{a0}sp", "nbsp"),
            ("53 75:70 7033 zz 1  2", "5375707033 zz 1  2"),
            ("\\u00zz and \\ud800 only", "\\u00zz and \\ud800 only"),
        ] {
            assert_eq!(seen(text), want, "{text:?}");
        }
        assert!(View::of("plain words only").is_none());
    }

    #[test]
    fn a_match_maps_back_to_what_it_covers() {
        let text = "x S\u{1b}[0mup\\u0033r y";
        let view = View::of(text).unwrap();
        let s = view.text.find("Sup3r").unwrap();
        let (a, b) = view.back(s, s + 5);
        assert_eq!(&text[a..b], "S\u{1b}[0mup\\u0033r");
    }
}
