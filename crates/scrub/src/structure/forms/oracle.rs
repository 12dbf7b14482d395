//! Oracle's logon, `user/password@connect_identifier`, as SQL*Plus, Data Pump, SQL*Loader
//! and RMAN take it on their command line (`sqlplus -s scott/tiger@ORCL`,
//! `expdp system/pw@ORCL`, `rman target sys/pw@prod`) and as the thin driver's URL holds it
//! (`jdbc:oracle:thin:scott/tiger@//db:1521/ORCL`). The password goes; the user and the
//! connect identifier stay.
//!
//! Read back from each `@`: a password (no blank, `/` or `@` in it, or one in double
//! quotes, `scott/"p@ss"@db`), a `/`, and a user that starts a word (after a blank, a quote,
//! `=` as in `userid=`, or the thin driver's `jdbc:oracle:thin:`), never one inside a path
//! (`/usr/lib/a/b@2x.png`). After the `@` the connect identifier must say Oracle on its
//! own (`//host…`, `(DESCRIPTION=…`, `host:port`), or the line must: the thin driver's
//! prefix, or an Oracle tool or `connect` before the logon. So `pkg/name@1.2.3`,
//! `actions/checkout@v4` and `node_modules/@types/node` stay, and
//! `jdbc:oracle:thin:@db:1521:ORCL` (no logon) keeps its prefix.
//!
//! Inside the thin driver's URL the prefix says where the logon starts, so the password
//! runs from the `/` after the user to the `@` before the connect identifier whatever it
//! holds (`jdbc:oracle:thin:scott/two words, #%@//db:1521/ORCL`): the last `@` that Oracle's
//! identifier follows, before the line's end or the next `jdbc:`.
//!
//! A logon without a connect identifier (`sqlplus -s scott/tiger`, `expdp
//! userid=system/pw directory=…`, `CONNECT app/pw`) is read forward from the program or
//! command: its first operand (after its flags), alone or after `userid=`, when it is
//! `user/password`. `sqlplus /nolog` and `sqlplus / as sysdba` name no password.

use super::super::super::marker::REDACTED;
use super::lex::{BACK_REACH, Span, Text};

/// Programs that take a logon, and the SQL*Plus commands that do.
const LOGON_WORDS: &[&str] = &[
    "sqlplus", "sql", "sqlldr", "expdp", "impdp", "exp", "imp", "rman", "dgmgrl", "tkprof",
    "connect", "conn", "orapwd",
];

/// The thin and OCI drivers' URL prefixes, in lower case.
const JDBC_PREFIXES: &[&str] = &["jdbc:oracle:thin:", "jdbc:oracle:oci:", "jdbc:oracle:oci8:"];

pub(super) fn secrets(text: &Text<'_>, out: &mut Vec<Span>) {
    logons_after_tools(text, out);
    thin_urls(text, out);
    let b = text.bytes();
    let mut line = Line::default();
    for (at, _) in text.raw.match_indices('@') {
        // Only a word's last `@` ends a logon: a password may hold one (`scott/p@ss@ORCL`).
        let rest = &b[at + 1..];
        let word = rest
            .iter()
            .position(|c| c.is_ascii_whitespace() || matches!(c, b'@' | b'\'' | b'"'));
        if word.is_some_and(|n| rest[n] == b'@') {
            continue;
        }
        let Some((user, password)) = logon_before(text, at) else {
            continue;
        };
        let jdbc = JDBC_PREFIXES
            .iter()
            .any(|p| text.lower[..user].ends_with(p));
        if !jdbc && b.get(user.wrapping_sub(1)) == Some(&b':') {
            continue;
        }
        let strong = identifier_says_oracle(&b[at + 1..]);
        let named = jdbc || strong || line.tool_before(text, user);
        let identifier = b
            .get(at + 1)
            .is_some_and(|c| c.is_ascii_alphanumeric() || b"/(\"".contains(c));
        if named && identifier && &text.raw[password.0..password.1] != REDACTED {
            out.push(password);
        }
    }
}

/// The password of each driver URL's logon, `jdbc:oracle:thin:user/«…»@identifier`, up to
/// the last `@` before an identifier only Oracle writes (within [`BACK_REACH`] bytes, on
/// the line, before another `jdbc:`).
fn thin_urls(text: &Text<'_>, out: &mut Vec<Span>) {
    let b = text.bytes();
    for prefix in JDBC_PREFIXES {
        for (at, _) in text.lower.match_indices(prefix) {
            let user = at + prefix.len();
            let slash = user
                + b[user..]
                    .iter()
                    .take_while(|c| c.is_ascii_alphanumeric() || b"_$#.".contains(c))
                    .count();
            if slash == user || b.get(slash) != Some(&b'/') {
                continue;
            }
            let mut end = super::lex::line_end_within(text.raw, slash, BACK_REACH);
            if let Some(next) = text.lower[slash..end].find("jdbc:") {
                end = slash + next;
            }
            let Some(sign) = (slash + 1..end)
                .rev()
                .find(|&i| b[i] == b'@' && identifier_says_oracle(&b[i + 1..]))
            else {
                continue;
            };
            if sign > slash + 1 && !text.raw[slash + 1..sign].contains(REDACTED) {
                out.push((slash + 1, sign));
            }
        }
    }
}

/// Logons without `@` as the first operand of a program or command that takes one.
fn logons_after_tools(text: &Text<'_>, out: &mut Vec<Span>) {
    let b = text.bytes();
    for word in LOGON_WORDS {
        for at in text.words(word) {
            if !commands(text.raw, at) {
                continue;
            }
            let mut i = at + word.len();
            // Its flags, then the first operand (a few words on at most).
            for _ in 0..8 {
                i = super::lex::skip_blanks(b, i);
                let end = i + b[i..]
                    .iter()
                    .take_while(|c| !c.is_ascii_whitespace())
                    .count();
                if end == i || end - i > BACK_REACH {
                    break;
                }
                let operand = &text.raw[i..end];
                if operand.starts_with('-') {
                    i = end;
                    continue;
                }
                let logon = if text.lower[i..end].starts_with("userid=") {
                    i + 7
                } else {
                    i
                };
                if let Some(span) = bare_logon(text.raw, logon, end) {
                    out.push(span);
                }
                break;
            }
        }
    }
}

/// Whether the word at `at` stands where a command does: first on its line (after blanks,
/// `set -x`'s `+`, a shell's `$` or `#`, SQL*Plus's `SQL>`), or after `;`, `&&` or `|`,
/// perhaps with its directory (`/opt/oracle/bin/sqlplus`). So prose (`conn reset: conn
/// a/b`) keeps its words.
fn commands(text: &str, at: usize) -> bool {
    let start = text[..at]
        .rfind(|c: char| c.is_ascii_whitespace())
        .map_or(0, |n| n + 1);
    let path = &text[start..at];
    if !path.is_empty() && !path.ends_with('/') {
        return false;
    }
    let before = text[super::lex::line_start(text, start)..start].trim_end();
    before.is_empty()
        || before.bytes().all(|c| c == b'+')
        || ["$", "#", ">", ";", "&&", "|"]
            .iter()
            .any(|end| before.ends_with(end))
}

/// The password of `user/password` at `start..end`, with no `@` and a user of Oracle's
/// name characters.
fn bare_logon(text: &str, start: usize, end: usize) -> Option<Span> {
    let word = &text[start..end];
    let (user, password) = word.split_once('/')?;
    let named = !user.is_empty()
        && user
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || b"_$#.".contains(&c));
    let fresh = !password.is_empty() && !password.contains(['@', '/']) && password != REDACTED;
    (named && fresh).then(|| (start + user.len() + 1, end))
}

/// The user's start and the password's range of a logon that ends at the `@` at `at`.
fn logon_before(text: &Text<'_>, at: usize) -> Option<(usize, Span)> {
    let b = text.bytes();
    let floor = at.saturating_sub(BACK_REACH);
    // The password, and the `/` that must stand before it.
    let (password, slash) = if at > 0 && b[at - 1] == b'"' {
        let open = (floor..at - 1).rev().find(|&i| b[i] == b'"')?;
        ((open + 1, at - 1), open.checked_sub(1)?)
    } else {
        let start = (floor..at)
            .rev()
            .find(|&i| b[i].is_ascii_whitespace() || b"/'\"(,=".contains(&b[i]))
            .map_or(floor, |i| i + 1);
        ((start, at), start.checked_sub(1)?)
    };
    if password.0 >= password.1 || b[slash] != b'/' {
        return None;
    }
    let user = (floor..slash)
        .rev()
        .find(|&i| !(b[i].is_ascii_alphanumeric() || b"_$#.".contains(&b[i])))
        .map_or(floor, |i| i + 1);
    let starts_word =
        user == 0 || b[user - 1].is_ascii_whitespace() || b"'\"=(,[:".contains(&b[user - 1]);
    (starts_word && user < slash).then_some((user, password))
}

/// Whether what follows the `@` is an identifier only Oracle writes: easy connect
/// (`//host…`), a connect descriptor (`(DESCRIPTION=…`), or `host:port` then `/` or `:`.
fn identifier_says_oracle(after: &[u8]) -> bool {
    if after.starts_with(b"//") || after.first() == Some(&b'(') {
        return true;
    }
    let host = after
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric() || b".-".contains(c))
        .count();
    let port = after[host..].strip_prefix(b":").map_or(0, |rest| {
        rest.iter().take_while(|c| c.is_ascii_digit()).count()
    });
    host > 0 && (2..=5).contains(&port) && matches!(after.get(host + 1 + port), Some(b'/' | b':'))
}

/// The line the last logon stood on, and where on it the first program or command that
/// takes a logon stands: read once a line, so a line of many logons costs one pass.
#[derive(Default)]
struct Line {
    start: usize,
    end: usize,
    first_tool: Option<usize>,
}

impl Line {
    /// Whether a program or command that takes a logon stands before `user` on its line.
    fn tool_before(&mut self, text: &Text<'_>, user: usize) -> bool {
        if user >= self.end || user < self.start || self.end == 0 {
            self.start = text.raw[..user].rfind('\n').map_or(0, |n| n + 1);
            self.end = text.raw[user..]
                .find('\n')
                .map_or(text.raw.len(), |n| user + n);
            self.first_tool = first_tool(text, self.start, self.end);
        }
        self.first_tool.is_some_and(|at| at < user)
    }
}

/// Where the first of [`LOGON_WORDS`] stands as a word in `start..end`.
fn first_tool(text: &Text<'_>, start: usize, end: usize) -> Option<usize> {
    let line = &text.lower[start..end];
    let mut at = start;
    for word in line.split(|c: char| c.is_ascii_whitespace() || c == '+') {
        let name = word.rsplit('/').next().unwrap_or(word);
        if LOGON_WORDS.contains(&name) {
            return Some(at);
        }
        at += word.len() + 1;
    }
    None
}

#[cfg(test)]
mod tests {
    fn r(text: &str) -> String {
        super::super::lexed(super::secrets, text)
    }

    #[test]
    fn the_password_of_a_logon_goes() {
        let cases = [
            (
                "+ sqlplus -s scott/tiger99@ORCL",
                "+ sqlplus -s scott/[REDACTED]@ORCL",
            ),
            (
                "expdp system/Xq7pw@ORCL directory=d",
                "expdp system/[REDACTED]@ORCL directory=d",
            ),
            (
                "sqlplus scott/tiger@//db:1521/svc",
                "sqlplus scott/[REDACTED]@//db:1521/svc",
            ),
            (
                "/opt/oracle/bin/sqlldr userid=app/Xq7pw@PROD control=x.ctl",
                "/opt/oracle/bin/sqlldr userid=app/[REDACTED]@PROD control=x.ctl",
            ),
            (
                "+ sqlplus -s scott/tiger99 @report.sql",
                "+ sqlplus -s scott/[REDACTED] @report.sql",
            ),
            (
                "+ expdp userid=system/Xq7pw directory=d",
                "+ expdp userid=system/[REDACTED] directory=d",
            ),
            ("SQL> CONNECT app/Xq7pw", "SQL> CONNECT app/[REDACTED]"),
            (
                "rman target sys/Xq7pw@prod",
                "rman target sys/[REDACTED]@prod",
            ),
            (
                "SQL> connect app/Xq7pw@orclpdb1",
                "SQL> connect app/[REDACTED]@orclpdb1",
            ),
            (
                "java.sql.SQLException: jdbc:oracle:thin:scott/tiger99@//db:1521/ORCL",
                "java.sql.SQLException: jdbc:oracle:thin:scott/[REDACTED]@//db:1521/ORCL",
            ),
            (
                "url=jdbc:oracle:thin:scott/tiger99@db:1521:ORCL",
                "url=jdbc:oracle:thin:scott/[REDACTED]@db:1521:ORCL",
            ),
            // Any tool: an easy-connect identifier says Oracle on its own.
            (
                "run.sh app/Xq7pw@db.internal:1521/svc failed",
                "run.sh app/[REDACTED]@db.internal:1521/svc failed",
            ),
            (
                r#"sqlplus scott/"p@ss w/d"@ORCL"#,
                r#"sqlplus scott/"[REDACTED]"@ORCL"#,
            ),
        ];
        super::super::assert_lexed(super::secrets, &cases);
    }

    /// A password with `@` in it: only the word's last `@` ends the logon.
    #[test]
    fn a_password_may_hold_an_at() {
        assert_eq!(
            r("+ sqlplus -s scott/p@ss@ORCL @x.sql"),
            "+ sqlplus -s scott/[REDACTED]@ORCL @x.sql"
        );
        assert_eq!(
            r("jdbc:oracle:thin:app/a@b@c@//db:1521/svc"),
            "jdbc:oracle:thin:app/[REDACTED]@//db:1521/svc"
        );
        // Inside the driver's URL, blanks and any punctuation too.
        for password in ["two words here", "Pa5#Kx,-%-q7", "a/b@c:d", "x'y\"z"] {
            assert_eq!(
                r(&format!(
                    "No suitable driver found for jdbc:oracle:thin:scott/{password}@//db:1521/ORCL"
                )),
                "No suitable driver found for jdbc:oracle:thin:scott/[REDACTED]@//db:1521/ORCL",
                "{password}"
            );
        }
        assert_eq!(
            r("jdbc:oracle:thin:a/p 1@//h1/X, jdbc:oracle:thin:b/p 2@h2:1521:Y"),
            "jdbc:oracle:thin:a/[REDACTED]@//h1/X, jdbc:oracle:thin:b/[REDACTED]@h2:1521:Y"
        );
    }

    #[test]
    fn paths_packages_and_logon_free_urls_stay() {
        for text in [
            "jdbc:oracle:thin:@db:1521:ORCL",
            "jdbc:oracle:thin:@//db:1521/ORCL",
            "/usr/lib/a/b@2x.png",
            "npm install pkg/name@1.2.3 @scope/pkg@1.2.3",
            "node_modules/@types/node",
            "uses: actions/checkout@v4",
            "go install golang.org/x/tools/gopls@v0.16.0",
            "sqlplus /nolog @script.sql",
            "sqlplus / as sysdba",
            "sqlplus -s /opt/x/report.sql",
            "exp(x)/log(y)",
            "conn reset by peer: conn a/b failed",
            "see imp ort/x",
            "the sql statement a/b",
            "sqlplus scott/[REDACTED]@ORCL",
            "a/b@ c/d@",
        ] {
            assert_eq!(r(text), text);
        }
    }
}
