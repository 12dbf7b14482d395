//! The text column of a hex dump (`0020:  65 78 … 4b 71  example..Kq`), which spells what
//! the dumped data held: a password in an LDAP bind request (`ldapsearch -d -1`), an
//! `Authorization` header in a packet (`tcpdump -X`). The column goes, the offset and the
//! bytes in hex stay; an `od -c` line, all characters, loses them all. A line is read as a
//! dump line only when its column is exactly its bytes (`traces::hexdump`), so a line that
//! merely starts with a number stays.

use super::super::super::marker::REDACTED;
use super::super::super::traces::hexdump;
use super::lex::{Span, Text};

pub(super) fn secrets(text: &Text<'_>, out: &mut Vec<Span>) {
    let mut at = 0;
    for line in text.raw.split_inclusive('\n') {
        let content = line.trim_end_matches(['\n', '\r']);
        if let Some((start, end)) = hexdump::parse(content).and_then(|l| l.column) {
            let column = &content[start..end];
            if !column.replace(REDACTED, "").trim().is_empty() {
                out.push((at + start, at + end));
            }
        }
        at += line.len();
    }
}

#[cfg(test)]
mod tests {
    use super::super::assert_lexed;
    use super::*;

    #[test]
    fn a_dumps_text_column_goes() {
        assert_lexed(
            secrets,
            &[
                (
                    "ber_dump: buf=0x55e2da378fa0 ptr=0x55e2da378fa0 end=0x55e2da378fd8 len=56\n  0020:  65 78 61 6d 70 6c 65 80  0f 4b 71 38 76 4e 32 78   example..Kq8vN2x  \n  0030:  4c 2f 52 74 35 70 51 39                            L/Rt5pQ9          \n",
                    "ber_dump: buf=0x55e2da378fa0 ptr=0x55e2da378fa0 end=0x55e2da378fd8 len=56\n  0020:  65 78 61 6d 70 6c 65 80  0f 4b 71 38 76 4e 32 78   [REDACTED]  \n  0030:  4c 2f 52 74 35 70 51 39                            [REDACTED]          \n",
                ),
                (
                    "00000010  73 77 6f 72 64 3a 20 4b  71 38 76 4e 32 78 4c 2f  |sword: Kq8vN2xL/|",
                    "00000010  73 77 6f 72 64 3a 20 4b  71 38 76 4e 32 78 4c 2f  |[REDACTED]|",
                ),
                (
                    "00000010: 7377 6f72 643a 204b 7138 764e 3278 4c2f  sword: [REDACTED]",
                    "00000010: 7377 6f72 643a 204b 7138 764e 3278 4c2f  [REDACTED]",
                ),
            ],
        );
    }

    #[test]
    fn lines_that_are_no_dump_stay() {
        for text in [
            "2026: 12 07 18 13  deploy started",
            "0000000 64 6e 3a 20 63 6e 3d 61 64 6d 69 6e 0a 70 61 73",
            "00000010  73 77 6f 72  |[REDACTED]|",
        ] {
            assert_lexed(secrets, &[(text, text)]);
        }
    }
}
