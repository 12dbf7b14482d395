//! Lines of a hex dump: an offset, the bytes in hex, and often a column of the same bytes
//! as text, which spells whatever the dumped data held (a password in an LDAP bind request:
//! `ldapsearch -d -1`'s `0020:  65 78 … 4b 71  example..Kq`). The shapes, as the programs
//! print them here:
//!
//! - `xxd`: `00000010: 7377 6f72 643a 204b  sword: K` (groups of two bytes);
//! - `hexdump -C`: `00000010  73 77 6f 72  |swor|`; `od -A x -t x1z`: `000010 73 77  >sw<`;
//! - OpenLDAP's `ber_dump`: `  0020:  65 78 61 6d  exam`; `tcpdump -X`: `0x0020:  5018 ffff  P...`;
//! - `od -c`: `0000020   s   w   o   r   d   :` (each byte as a character, four columns wide).
//!
//! [`parse`] reads one line; the text column counts only when it is exactly the bytes, each
//! printable byte as itself and any other as `.`, so a line that merely starts with a number
//! is no dump. `traces` collapses a run of dump lines to one line, and the scrubber's
//! `structure` layer removes the text column of every dump line (or the characters of an
//! `od -c` line) wherever the text is sent whole.

use super::super::marker::REDACTED;

/// One line of a hex dump.
pub(crate) struct Line {
    /// The offset, as printed (hex, or octal for `od`).
    pub offset: u64,
    /// How many bytes the line shows.
    pub bytes: usize,
    /// The byte range in the line of the text column (or of the characters of an `od -c`
    /// line), if it has one.
    pub column: Option<(usize, usize)>,
}

/// The most bytes one line of a dump shows (`xxd -c 32`).
const MAX_BYTES: usize = 64;

/// The line as a dump line, if it is one.
pub(crate) fn parse(line: &str) -> Option<Line> {
    let b = line.as_bytes();
    let indent = b.iter().take_while(|c| matches!(c, b' ' | b'\t')).count();
    let hex_prefix = b[indent..].starts_with(b"0x");
    let start = indent + if hex_prefix { 2 } else { 0 };
    let digits = b[start..]
        .iter()
        .take_while(|c| c.is_ascii_hexdigit())
        .count();
    if !(4..=16).contains(&digits) {
        return None;
    }
    let offset_text = &line[start..start + digits];
    let mut i = start + digits;
    let colon = b.get(i) == Some(&b':');
    i += usize::from(colon);
    if !matches!(b.get(i), Some(b' ')) {
        return None;
    }
    if let Some(line) = od_chars(line, offset_text, i) {
        return Some(line);
    }
    let offset = u64::from_str_radix(offset_text, 16).ok()?;
    let (bytes, after) = hex_groups(b, i)?;
    let column = text_column(line, after, &bytes)?;
    Some(Line {
        offset,
        bytes: bytes.len(),
        column,
    })
}

/// The bytes of the hex groups from `at` on (groups of one or two bytes, one or two blanks
/// between them), and where they end; `None` for fewer than four bytes.
fn hex_groups(b: &[u8], mut at: usize) -> Option<(Vec<u8>, usize)> {
    let mut bytes = Vec::new();
    let mut width = None;
    loop {
        let gap = b[at..].iter().take_while(|&&c| c == b' ').count();
        let run = b[at + gap..]
            .iter()
            .take_while(|c| c.is_ascii_hexdigit())
            .count();
        let ends = b.get(at + gap + run).is_none_or(|&c| c == b' ');
        // A group is one or two bytes, every group of a line the same (the last may be shorter).
        let fits = matches!(run, 2 | 4) && width.is_none_or(|w| run <= w);
        if gap == 0 || gap > 2 || !ends || !fits || bytes.len() >= MAX_BYTES {
            break;
        }
        width.get_or_insert(run);
        for k in (0..run).step_by(2) {
            let pair = std::str::from_utf8(&b[at + gap + k..at + gap + k + 2]).ok()?;
            bytes.push(u8::from_str_radix(pair, 16).ok()?);
        }
        at += gap + run;
    }
    (bytes.len() >= 4).then_some((bytes, at))
}

/// The text column after the hex groups ending at `at`: `None` when something other than
/// the bytes' text stands there, `Some(None)` when nothing does.
fn text_column(line: &str, at: usize, bytes: &[u8]) -> Option<Option<(usize, usize)>> {
    let rest = &line[at..];
    let lead = rest.len() - rest.trim_start_matches(' ').len();
    if rest.trim().is_empty() {
        return Some(None);
    }
    if lead < 2 {
        return None;
    }
    let from = at + lead;
    let inner = line[from..].trim_end_matches(' ');
    // `|…|` of `hexdump -C`, `>…<` of `od -z`.
    let (inner, from) = match inner.as_bytes() {
        [b'|', .., b'|'] | [b'>', .., b'<'] if inner.len() >= 2 => {
            (&inner[1..inner.len() - 1], from + 1)
        }
        _ => (inner, from),
    };
    let shown: String = bytes
        .iter()
        .map(|&c| match c {
            0x20..=0x7e => c as char,
            _ => '.',
        })
        .collect();
    // A blank the bytes end with is trimmed from the line as well.
    let matches = shown_as(shown.trim_end_matches(' '), inner);
    matches.then_some(Some((from, from + inner.len())))
}

/// Whether `column` is `shown`, where a marker in `column` may stand for any run of it (a
/// column the scrubber has been over).
fn shown_as(shown: &str, column: &str) -> bool {
    let mut pieces = column.split(REDACTED);
    let first = pieces.next().unwrap_or("");
    let Some(mut rest) = shown.strip_prefix(first) else {
        return false;
    };
    let pieces: Vec<&str> = pieces.collect();
    let Some((last, middle)) = pieces.split_last() else {
        return rest.is_empty();
    };
    for piece in middle {
        match rest.find(piece) {
            Some(at) => rest = &rest[at + piece.len()..],
            None => return false,
        }
    }
    rest.ends_with(last)
}

/// An `od -c` line: an octal offset, then each byte in a cell four columns wide (a
/// character, `\n`-like escapes, or three octal digits), at least four of them.
fn od_chars(line: &str, offset: &str, at: usize) -> Option<Line> {
    if offset.len() != 7 || !offset.bytes().all(|c| (b'0'..=b'7').contains(&c)) {
        return None;
    }
    let cells = &line[at..];
    if !cells.len().is_multiple_of(4) || cells.len() < 16 || !cells.is_ascii() {
        return None;
    }
    let cell_ok = |cell: &[u8]| match cell.trim_ascii_start() {
        [c] => c.is_ascii_graphic(),
        [] => true, // the blank (0x20) itself
        [b'\\', c] => b"0abfnrtv\\".contains(c),
        [a, b, c] => [a, b, c].iter().all(|d| (b'0'..=b'7').contains(d)),
        _ => false,
    };
    let cells_ok = cells
        .as_bytes()
        .chunks(4)
        .all(|cell| cell[0] == b' ' && cell_ok(cell));
    cells_ok.then(|| Line {
        offset: u64::from_str_radix(offset, 8).unwrap_or(0),
        bytes: cells.len() / 4,
        column: Some((at, line.len())),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The text column of a line as parsed, or `None` for no dump line.
    fn column(line: &str) -> Option<&str> {
        parse(line).map(|l| l.column.map_or("", |(s, e)| &line[s..e]))
    }

    #[test]
    fn every_dump_shape_is_read_with_its_text_column() {
        let cases = [
            // `ldapsearch -d -1` (OpenLDAP 2.5's ber_dump), as printed here.
            (
                "  0020:  65 78 61 6d 70 6c 65 80  0f 4b 71 38 76 4e 32 78   example..Kq8vN2x  ",
                "example..Kq8vN2x",
            ),
            (
                "  0030:  4c 2f 52 74 35 70 51 39                            L/Rt5pQ9          ",
                "L/Rt5pQ9",
            ),
            // xxd 8.2
            (
                "00000010: 7377 6f72 643a 204b 7138 764e 3278 4c2f  sword: Kq8vN2xL/",
                "sword: Kq8vN2xL/",
            ),
            (
                "00000020: 5274 3570 5139 0a                        Rt5pQ9.",
                "Rt5pQ9.",
            ),
            // hexdump -C (util-linux)
            (
                "00000010  73 77 6f 72 64 3a 20 4b  71 38 76 4e 32 78 4c 2f  |sword: Kq8vN2xL/|",
                "sword: Kq8vN2xL/",
            ),
            // od -A x -t x1z (coreutils)
            (
                "000010 73 77 6f 72 64 3a 20 4b 71 38 76 4e 32 78 4c 2f  >sword: Kq8vN2xL/<",
                "sword: Kq8vN2xL/",
            ),
            // od -c
            (
                "0000020   s   w   o   r   d   :       K   q   8   v   N   2   x   L   /",
                "   s   w   o   r   d   :       K   q   8   v   N   2   x   L   /",
            ),
            // od -t x1: no text column
            (
                "0000000 64 6e 3a 20 63 6e 3d 61 64 6d 69 6e 0a 70 61 73",
                "",
            ),
        ];
        for (line, want) in cases {
            assert_eq!(column(line), Some(want), "{line}");
        }
    }

    #[test]
    fn lines_that_only_start_with_a_number_are_no_dump() {
        for line in [
            "2026: 12 07 18 13  deploy started",
            "0020:  65 78 61 6d   exam (edited)",
            "1024  bytes written",
            "00000010: 7377 6f72  something else",
            "404 Not Found",
            "2026-12-07 18:13:02 ERROR x",
            "0000020 error in record",
        ] {
            assert!(parse(line).is_none(), "{line}");
        }
    }
}
