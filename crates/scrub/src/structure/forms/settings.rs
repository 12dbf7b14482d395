//! What a program says it set an option to: `wget --debug` prints each option it reads as
//! `Setting --password (password) to …` (also `--http-password`, `--ftp-password`,
//! `--proxy-password`). When the option is named for a secret ([`names_a_secret`]), the
//! rest of the line goes: the value may hold blanks. `Setting --user (user) to bob` stays.

use super::super::super::marker::REDACTED;
use super::super::super::names::names_a_secret;
use super::lex::{Span, Text, line_end};

pub(super) fn secrets(text: &Text<'_>, out: &mut Vec<Span>) {
    let mut resume = 0;
    for (at, _) in text.lower.match_indices("setting --") {
        let name_start = at + "setting ".len();
        if at < resume {
            continue;
        }
        let end = line_end(text.raw, name_start);
        resume = end;
        let line = &text.raw[name_start..end];
        let Some(name_len) = line.find(' ') else {
            continue;
        };
        let Some(to) = line.find(") to ").map(|n| n + ") to ".len()) else {
            continue;
        };
        let value = &line[to..];
        if names_a_secret(&line[..name_len]) && !value.is_empty() && !value.starts_with(REDACTED) {
            out.push((name_start + to, end));
        }
    }
}

#[cfg(test)]
mod tests {

    fn r(text: &str) -> String {
        super::super::lexed(super::secrets, text)
    }

    #[test]
    fn secret_options_lose_their_values() {
        let cases = [
            (
                "Setting --password (password) to bhVhCOixkajBBg",
                "Setting --password (password) to [REDACTED]",
            ),
            (
                "Setting --http-password (httppassword) to two words\r\nnext",
                "Setting --http-password (httppassword) to [REDACTED]\r\nnext",
            ),
            (
                "Setting --proxy-password (proxypassword) to x",
                "Setting --proxy-password (proxypassword) to [REDACTED]",
            ),
        ];
        super::super::assert_lexed(super::secrets, &cases);
    }

    #[test]
    fn other_options_stay() {
        for text in [
            "Setting --user (user) to bob",
            "Setting --output-document (outputdocument) to /dev/null",
            "Setting --password (password) to [REDACTED]",
            "Setting --password",
        ] {
            assert_eq!(r(text), text);
        }
    }
}
