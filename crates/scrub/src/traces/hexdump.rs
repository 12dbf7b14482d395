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
//! is no dump. [`run_end`] says where a dump that starts on a line ends, and [`collapse`],
//! which the scrubber runs on every text before its layers, makes each dump one line
//! `[hex dump]`: the bytes in hex spell the data as plainly as the text column does, so
//! neither the summary nor the body keeps any of it. `traces` collapses dumps the same way
//! (for text that was not scrubbed).

use std::borrow::Cow;

use super::super::marker::REDACTED;

/// The line a dump becomes.
pub(crate) const COLLAPSED: &str = "[hex dump]";

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

/// The line as a dump line, if it is one (of four bytes or more).
pub(crate) fn parse(line: &str) -> Option<Line> {
    parse_min(line, 4)
}

/// The line as a dump line of at least `min` bytes, if it is one.
fn parse_min(line: &str, min: usize) -> Option<Line> {
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
    if let Some(line) = od_chars(line, offset_text, i, min) {
        return Some(line);
    }
    let offset = u64::from_str_radix(offset_text, 16).ok()?;
    let (bytes, after) = hex_groups(b, i, min)?;
    let column = text_column(line, after, &bytes)?;
    Some(Line {
        offset,
        bytes: bytes.len(),
        column,
    })
}

/// The bytes of the hex groups from `at` on (groups of one or two bytes, one or two blanks
/// between them), and where they end; `None` for fewer than `min` bytes.
fn hex_groups(b: &[u8], mut at: usize, min: usize) -> Option<(Vec<u8>, usize)> {
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
    (bytes.len() >= min.max(1)).then_some((bytes, at))
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

/// Where the dump that starts on line `i` ends (the index after its last line), if one
/// does: two or more dump lines, each at an offset past the bytes of the one before, or one
/// line whose text column is its bytes' (a line after the first may show as little as one
/// byte: the end of the data). Within it, a `*` line (`hexdump -C` and `od` print
/// one for repeated lines) stands for more lines; after it, a line of only an offset (the
/// length, as `hexdump -C` and `od` end) is its end. `vis(k)` is line `k` as a terminal
/// shows it, `None` past the last line.
pub(crate) fn run_end<'a>(i: usize, vis: impl Fn(usize) -> Option<&'a str>) -> Option<usize> {
    let first = parse(vis(i)?)?;
    let mut end = i + 1;
    let mut next_offset = first.offset.saturating_add(first.bytes as u64);
    loop {
        let repeated = vis(end).is_some_and(|l| l.trim() == "*");
        // A dump's last line may show fewer than the four bytes a first line must.
        let Some(next) = vis(end + usize::from(repeated)).and_then(|l| parse_min(l, 1)) else {
            break;
        };
        if next.offset < next_offset {
            break;
        }
        next_offset = next.offset.saturating_add(next.bytes as u64);
        end += 1 + usize::from(repeated);
    }
    if end == i + 1 && first.column.is_none() {
        return None;
    }
    let closing = vis(end).and_then(offset_only);
    Some(end + usize::from(closing.is_some_and(|at| at >= next_offset)))
}

/// The offset a line holds and nothing else (4 to 16 hex digits, read as hex).
fn offset_only(line: &str) -> Option<u64> {
    let digits = line.trim();
    let fits = (4..=16).contains(&digits.len()) && digits.bytes().all(|c| c.is_ascii_hexdigit());
    fits.then(|| u64::from_str_radix(digits, 16).ok()).flatten()
}

/// What a terminal shows of a line (terminator excluded): its last `\r` part that is not
/// blank, without trailing blanks.
pub(crate) fn visible(line: &str) -> &str {
    let content = line.strip_suffix('\n').unwrap_or(line);
    let vis = content.rsplit('\r').find(|p| !p.trim().is_empty());
    vis.unwrap_or("").trim_end()
}

/// `text` with every hex dump in it made one line, [`COLLAPSED`], that ends as the dump's
/// last line ended; every other line stays byte for byte. One pass: each line is read once.
pub(crate) fn collapse(text: &str) -> Cow<'_, str> {
    // A dump line starts with at least four hex digits, after blanks and `0x`.
    if !text
        .as_bytes()
        .windows(4)
        .any(|w| w.iter().all(u8::is_ascii_hexdigit))
    {
        return Cow::Borrowed(text);
    }
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut out = String::new();
    let mut copied = 0; // lines[..copied] are in `out`, or were left out
    let mut i = 0;
    while i < lines.len() {
        let Some(end) = run_end(i, |k| lines.get(k).map(|l| visible(l))) else {
            i += 1;
            continue;
        };
        if out.is_empty() {
            out.reserve(text.len());
        }
        lines[copied..i].iter().for_each(|l| out.push_str(l));
        let last = lines[end - 1];
        out.push_str(COLLAPSED);
        out.push_str(&last[last.trim_end_matches(['\n', '\r']).len()..]);
        (copied, i) = (end, end);
    }
    if copied == 0 {
        return Cow::Borrowed(text);
    }
    lines[copied..].iter().for_each(|l| out.push_str(l));
    Cow::Owned(out)
}

/// An `od -c` line: an octal offset, then each byte in a cell four columns wide (a
/// character, `\n`-like escapes, or three octal digits), at least `min` of them.
fn od_chars(line: &str, offset: &str, at: usize, min: usize) -> Option<Line> {
    if offset.len() != 7 || !offset.bytes().all(|c| (b'0'..=b'7').contains(&c)) {
        return None;
    }
    let cells = &line[at..];
    if !cells.len().is_multiple_of(4) || cells.len() < 4 * min.max(1) || !cells.is_ascii() {
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

    /// Dumps of a file holding a generated password (`dn: cn=admin,dc=corp` then
    /// `password: Wq7%nZ2rLx9!vKe4`), as this machine's `xxd`, `hexdump -C` and `od` print
    /// them, each between two lines of its own: the dump is one line, the neighbours stay.
    #[test]
    fn real_dumps_collapse_to_one_line_between_untouched_neighbours() {
        let dumps = [
            // xxd
            "00000000: 646e 3a20 636e 3d61 646d 696e 2c64 633d  dn: cn=admin,dc=\n00000010: 636f 7270 0a70 6173 7377 6f72 643a 2057  corp.password: W\n00000020: 7137 256e 5a32 724c 7839 2176 4b65 340a  q7%nZ2rLx9!vKe4.\n",
            // hexdump -C, with its closing offset
            "00000000  64 6e 3a 20 63 6e 3d 61  64 6d 69 6e 2c 64 63 3d  |dn: cn=admin,dc=|\n00000010  63 6f 72 70 0a 70 61 73  73 77 6f 72 64 3a 20 57  |corp.password: W|\n00000020  71 37 25 6e 5a 32 72 4c  78 39 21 76 4b 65 34 0a  |q7%nZ2rLx9!vKe4.|\n00000030\n",
            // hexdump -C of 48 bytes of `A` before it: `*` stands for the repeated lines
            "00000000  41 41 41 41 41 41 41 41  41 41 41 41 41 41 41 41  |AAAAAAAAAAAAAAAA|\n*\n00000030  64 6e 3a 20 63 6e 3d 61  64 6d 69 6e 2c 64 63 3d  |dn: cn=admin,dc=|\n00000040  63 6f 72 70 0a 70 61 73  73 77 6f 72 64 3a 20 57  |corp.password: W|\n00000050  71 37 25 6e 5a 32 72 4c  78 39 21 76 4b 65 34 0a  |q7%nZ2rLx9!vKe4.|\n00000060\n",
            // od -A x -t x1z
            "000000 64 6e 3a 20 63 6e 3d 61 64 6d 69 6e 2c 64 63 3d  >dn: cn=admin,dc=<\n000010 63 6f 72 70 0a 70 61 73 73 77 6f 72 64 3a 20 57  >corp.password: W<\n000020 71 37 25 6e 5a 32 72 4c 78 39 21 76 4b 65 34 0a  >q7%nZ2rLx9!vKe4.<\n000030\n",
            // od -c
            "0000000   d   n   :       c   n   =   a   d   m   i   n   ,   d   c   =\n0000020   c   o   r   p  \\n   p   a   s   s   w   o   r   d   :       W\n0000040   q   7   %   n   Z   2   r   L   x   9   !   v   K   e   4  \\n\n0000060\n",
            // od -t x1: no text column, the bytes alone
            "0000000 64 6e 3a 20 63 6e 3d 61 64 6d 69 6e 2c 64 63 3d\n0000020 63 6f 72 70 0a 70 61 73 73 77 6f 72 64 3a 20 57\n0000040 71 37 25 6e 5a 32 72 4c 78 39 21 76 4b 65 34 0a\n0000060\n",
        ];
        for dump in dumps {
            let text = format!("$ xxd /etc/ldap.secret\n{dump}exit status 1\n");
            assert_eq!(
                collapse(&text),
                "$ xxd /etc/ldap.secret\n[hex dump]\nexit status 1\n",
                "{dump}"
            );
            // At the very end, with no line end after it.
            let text = format!("before\n{}", dump.trim_end());
            assert_eq!(collapse(&text), "before\n[hex dump]", "{dump}");
        }
    }

    #[test]
    fn two_dumps_side_by_side_are_two_lines_and_other_text_is_left_alone() {
        // `ldapsearch -d 16` dumps one buffer, then the same from offset 0 again.
        let two = "  0020:  65 78 61 6d 70 6c 65 80  17 41 64 6d 31 6e 25 2b   example..Adm1n%+  \n  0000:  60 39 02 01 03 04 1b 63  6e 3d 61 64 6d 69 6e 2c   `9.....cn=admin,  \nldap_bind: Invalid credentials (49)\r\n";
        assert_eq!(
            collapse(two),
            "[hex dump]\n[hex dump]\nldap_bind: Invalid credentials (49)\r\n"
        );
        for text in [
            "2026: 12 07 18 13  deploy started\n2027: 12 07 18 13  deploy started\n",
            "0000000 64 6e 3a 20 63 6e 3d 61 64 6d 69 6e 0a 70 61 73\nok\n",
            "deadbeef\n*\n00000030\n",
            "no hex here at all",
        ] {
            assert!(matches!(collapse(text), Cow::Borrowed(_)), "{text}");
        }
    }
}
