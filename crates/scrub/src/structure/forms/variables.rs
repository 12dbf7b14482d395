//! The environment variables through which command-line tools take a password
//! (`SSHPASS`, `MYSQL_PWD`, `RSYNC_PASSWORD`, `PGPASSWORD`, `REDISCLI_AUTH`, …; the list
//! and each tool's manual are in `tool_flags`), set before a command in a `set -x` trace
//! (`+ SSHPASS=… sshpass -e ssh h`), exported, or printed as a mapping
//! (`{'MYSQL_PWD': '…'}`, `MYSQL_PWD: …`). `SSHPASS` says nothing secret to the name rules,
//! which is why the tools' own names are listed.
//!
//! The name must stand alone (not inside a longer name) and be followed by `=` or `:` (its
//! quotes between), and the value ends where its framing ends it (`values`).

use super::super::super::marker::REDACTED;
use super::super::super::tool_flags::VARIABLES;
use super::super::values::{Framings, ahead, value_span};
use super::lex::{Span, Text, VALUE_REACH, skip_blanks};

pub(super) fn secrets(text: &Text<'_>, out: &mut Vec<Span>) {
    let b = text.bytes();
    for variable in VARIABLES {
        let mut resume = 0;
        let mut framings = Framings::default();
        for (at, _) in text.raw.match_indices(variable.name) {
            if at < resume {
                continue;
            }
            let end = at + variable.name.len();
            let inside = |i: usize| {
                b.get(i)
                    .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
            };
            // `${PGPASSWORD:?unset}` is a reference, not an assignment.
            let reference = matches!(b.get(at.wrapping_sub(1)), Some(b'$' | b'{'));
            if inside(at.wrapping_sub(1)) || inside(end) || reference {
                continue;
            }
            let mut i = end;
            if matches!(b.get(i), Some(b'"' | b'\'')) {
                i += 1;
            }
            i = skip_blanks(b, i);
            if !matches!(b.get(i), Some(b'=' | b':')) || b.get(i + 1) == Some(&b'=') {
                continue;
            }
            let from = skip_blanks(b, i + 1);
            if from >= b.len() || b[from] == b'\n' {
                continue;
            }
            // A value is read within reach: a line of `SSHPASS=SSHPASS=…` costs one pass.
            let scope = &text.raw[..ahead(text.raw, from, VALUE_REACH)];
            let (start, stop) = value_span(&mut framings, scope, at, from);
            resume = stop;
            let value = &text.raw[start..stop];
            if !value.is_empty() && !value.starts_with(REDACTED) && !value.starts_with('$') {
                out.push((start, stop));
            }
        }
    }
}

#[cfg(test)]
mod tests {

    fn r(text: &str) -> String {
        super::super::lexed(super::secrets, text)
    }

    #[test]
    fn every_variable_loses_its_value() {
        let cases = [
            (
                "+ SSHPASS=Xq7w9Lm2 sshpass -e ssh h",
                "+ SSHPASS=[REDACTED] sshpass -e ssh h",
            ),
            (
                "+ MYSQL_PWD=Xq7w9Lm2 mysql -u root",
                "+ MYSQL_PWD=[REDACTED] mysql -u root",
            ),
            (
                "export RSYNC_PASSWORD='two words'",
                "export RSYNC_PASSWORD='[REDACTED]'",
            ),
            (
                "PGPASSWORD=Xq7w9Lm2 psql -h db",
                "PGPASSWORD=[REDACTED] psql -h db",
            ),
            (
                "env: {'REDISCLI_AUTH': 'Xq7w9Lm2', 'HOME': '/root'}",
                "env: {'REDISCLI_AUTH': '[REDACTED]', 'HOME': '/root'}",
            ),
            ("SQLCMDPASSWORD: Xq7w9Lm2", "SQLCMDPASSWORD: [REDACTED]"),
            (
                "LFTP_PASSWORD=Xq7w9Lm2 lftp --env-password sftp://u@h",
                "LFTP_PASSWORD=[REDACTED] lftp --env-password sftp://u@h",
            ),
        ];
        super::super::assert_lexed(super::secrets, &cases);
    }

    #[test]
    fn mentions_and_references_stay() {
        for text in [
            "SSHPASS unset; sshpass -e exits 3",
            "MY_SSHPASS_FILE=/run/x",
            "if [ \"$SSHPASS\" == x ]",
            "SSHPASS=$SECRET sshpass -e ssh h",
            "SSHPASS=",
            "SSHPASS=[REDACTED] sshpass -e",
            "export PGPASSWORD=${PGPASSWORD:?unset}",
        ] {
            assert_eq!(r(text), text);
        }
    }
}
