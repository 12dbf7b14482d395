//! Arguments of a PHP stack frame, `#0 /app/db.php(12): PDO->__construct('mysql:host=db',
//! 'app', '«Xk29fjQmLr»')`. PHP prints each frame's arguments unless
//! `zend.exception_ignore_args` is on: strings in `'…'` (cut after
//! `zend.exception_string_param_max_len` characters, `...` added, nothing escaped),
//! numbers, `NULL`, `true`, `Array`, `Object(Class)`. PHP 8.2 prints a parameter marked
//! sensitive as `Object(SensitiveParameterValue)`, but older versions, and functions of
//! one's own that pass a password on, print it as it is.
//!
//! A string argument goes when the frame's function puts a password there: the class of a
//! constructor or the function's name, in lower case without `_`, in [`PASSWORD_PLACES`] or
//! in the shared [`PASSWORD_ARGUMENTS`] (`PDO->__construct`, `mysqli_connect`,
//! `mysqli->real_connect`, `ftp_login`, `ldap_bind`, `ssh2_auth_password`, `imap_open`,
//! `oci_connect`); when the first argument is a PDO data source name (`'mysql:host=…'`),
//! whatever the function (a wrapper of one's own: `connect('pgsql:host=db', 'app', '…')`),
//! the third, and so when a function named for connecting, opening or logging in is given
//! a host first (`Db::open('127.0.0.1', 'app', '…')`); and every string argument of a
//! function named for a secret it is given (`setPassword('…')`).

use super::super::super::names::{PASSWORD_ARGUMENTS, names_a_secret_input};
use super::lex::{Span, Text, line_end};

/// PHP functions and methods (lower case, no `_`) and the place of their password.
const PASSWORD_PLACES: &[(&str, usize)] = &[
    ("realconnect", 2),
    ("ftplogin", 2),
    ("ldapbind", 2),
    ("ldapsaslbind", 2),
    ("ssh2authpassword", 2),
    ("imapopen", 2),
    ("ociconnect", 1),
    ("ocipconnect", 1),
    ("ocinewconnect", 1),
    ("mysqlipconnect", 2),
];

/// The drivers of a PDO data source name (`mysql:host=db;dbname=app`).
const PDO_DRIVERS: &[&str] = &[
    "mysql:",
    "pgsql:",
    "sqlsrv:",
    "dblib:",
    "oci:",
    "odbc:",
    "firebird:",
    "ibm:",
    "informix:",
    "cubrid:",
];

pub(super) fn secrets(text: &Text<'_>, out: &mut Vec<Span>) {
    let b = text.bytes();
    for (at, _) in text.raw.match_indices('#') {
        // Only blanks between the line's start and the `#` (read back over them alone, so a
        // line of many `#` costs one pass).
        let mut start = at;
        while start > 0 && matches!(b[start - 1], b' ' | b'\t') {
            start -= 1;
        }
        if start > 0 && b[start - 1] != b'\n' {
            continue;
        }
        let end = line_end(text.raw, at);
        let Some(head) = frame_head(&text.raw[at + 1..end]) else {
            continue;
        };
        let base = at + 1 + head;
        let call = &text.raw[base..end];
        let Some(open) = call.find('(') else {
            continue;
        };
        let args = arguments(call, open + 1);
        for n in password_places(&call[..open], &args, call) {
            if let Some(&(s, e)) = args.get(n)
                && call.as_bytes()[s] == b'\''
                && e > s + 2
            {
                out.push((base + s + 1, base + e - 1));
            }
        }
    }
}

/// Where the call starts in a frame line after its `#`: `12 /app/db.php(12): `, `0 [internal
/// function]: `, `0 Command line code(1): `.
fn frame_head(line: &str) -> Option<usize> {
    let digits = line.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || !line[digits..].starts_with(' ') {
        return None;
    }
    if let Some(rest) = line[digits..].strip_prefix(" [internal function]: ") {
        return Some(line.len() - rest.len());
    }
    let colon = line.find("): ")?;
    let (_, number) = line[..colon].rsplit_once('(')?;
    let numbered = !number.is_empty() && number.bytes().all(|c| c.is_ascii_digit());
    numbered.then_some(colon + 3)
}

/// Which arguments of a call to `function` hold a password.
fn password_places(function: &str, args: &[Span], call: &str) -> Vec<usize> {
    // `PDO->__construct`, `mysqli::__construct`: the class says; else the method or function.
    let (class, method) = function
        .rsplit_once("->")
        .or_else(|| function.rsplit_once("::"))
        .unwrap_or(("", function));
    let class = class.rsplit('\\').next().unwrap_or(class);
    let name = match method {
        "__construct" => class,
        _ => method.rsplit('\\').next().unwrap_or(method),
    };
    let folded = name.to_ascii_lowercase().replace('_', "");
    let place = PASSWORD_PLACES
        .iter()
        .chain(PASSWORD_ARGUMENTS)
        .find(|(f, _)| *f == folded)
        .map(|&(_, place)| place);
    if let Some(place) = place {
        return vec![place];
    }
    let first = args.first().map_or("", |&(s, e)| &call[s..e]);
    let dsn = first
        .strip_prefix('\'')
        .is_some_and(|v| PDO_DRIVERS.iter().any(|d| v.starts_with(d)));
    // `Db::open('127.0.0.1', 'app', '…')`: a function that connects, given a host first.
    let connects = ["connect", "open", "login"]
        .iter()
        .any(|w| folded.contains(w));
    if dsn || connects && args.len() >= 3 && names_a_host(first) {
        return vec![2];
    }
    if names_a_secret_input(name) {
        return (0..args.len()).collect();
    }
    Vec::new()
}

/// Whether a printed argument is a host: `'127.0.0.1'`, `'localhost'`, `'db.internal:3306'`.
fn names_a_host(arg: &str) -> bool {
    let Some(host) = arg.strip_prefix('\'').and_then(|a| a.strip_suffix('\'')) else {
        return false;
    };
    (host.contains(['.', ':']) || host == "localhost")
        && host
            .bytes()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || b".-:_".contains(&c))
}

/// The arguments of a frame's call whose `(` ends at `from` in `call`: strings in `'…'`
/// (which PHP does not escape: one ends at a `'` before `, ` or the closing `)`), and other
/// values up to `, ` or `)`.
fn arguments(call: &str, from: usize) -> Vec<Span> {
    let b = call.as_bytes();
    let mut args = Vec::new();
    let mut i = from;
    while i < b.len() && b[i] != b')' {
        let end = match b[i] {
            b'\'' => (i + 1..b.len())
                .find(|&j| {
                    b[j] == b'\'' && (b[j + 1..].starts_with(b", ") || b.get(j + 1) == Some(&b')'))
                })
                .map(|j| j + 1),
            _ => value_end(b, i),
        };
        let Some(end) = end else {
            break;
        };
        args.push((i, end));
        i = end;
        if b[i..].starts_with(b", ") {
            i += 2;
        }
    }
    args
}

/// Where a value that is no string ends: at `,` or `)` outside its own brackets
/// (`Object(FTP\Connection)`).
fn value_end(b: &[u8], from: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (j, &c) in b.iter().enumerate().skip(from) {
        match c {
            b'(' => depth += 1,
            b')' if depth > 0 => depth -= 1,
            b')' | b',' => return Some(j),
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::super::assert_lexed;
    use super::*;

    #[test]
    fn a_password_argument_of_a_frame_goes() {
        assert_lexed(
            secrets,
            &[
                (
                    "#0 /app/db.php(12): PDO->__construct('mysql:host=db;d...', 'app', 'Xk29fjQmLr')",
                    "#0 /app/db.php(12): PDO->__construct('mysql:host=db;d...', 'app', '[REDACTED]')",
                ),
                (
                    "#0 /tmp/pdo2.php(6): connect('mysql:host=127....', 'app', 'Xk29fjQmLr/q+8=')",
                    "#0 /tmp/pdo2.php(6): connect('mysql:host=127....', 'app', '[REDACTED]')",
                ),
                (
                    "#0 Command line code(1): mysqli_connect('127.0.0.1', 'app', 'Xk29, fj'Q', 'app', 1)",
                    "#0 Command line code(1): mysqli_connect('127.0.0.1', 'app', '[REDACTED]', 'app', 1)",
                ),
                (
                    "#1 /app/Db.php(40): mysqli->real_connect('db', 'app', 'Xk29fjQmLr', 'app')",
                    "#1 /app/Db.php(40): mysqli->real_connect('db', 'app', '[REDACTED]', 'app')",
                ),
                (
                    "#2 /app/Mail.php(9): ftp_login(Object(FTP\\Connection), 'backup', 'Xk29fjQmLr')",
                    "#2 /app/Mail.php(9): ftp_login(Object(FTP\\Connection), 'backup', '[REDACTED]')",
                ),
                (
                    "#1 /app/job.php(10): Db::open('127.0.0.1', 'app', 'mcKzKaEwpCFm0rgwT', 'app')",
                    "#1 /app/job.php(10): Db::open('127.0.0.1', 'app', '[REDACTED]', 'app')",
                ),
                (
                    "#3 [internal function]: App\\Auth->setPassword('Xk29fjQmLr')",
                    "#3 [internal function]: App\\Auth->setPassword('[REDACTED]')",
                ),
            ],
        );
    }

    #[test]
    fn other_arguments_and_other_frames_stay() {
        for text in [
            "#0 /tmp/pdo2.php(3): PDO->__construct('...', '...', Object(SensitiveParameterValue))",
            "#0 /app/db.php(12): PDO->__construct('sqlite:/tmp/x.db')",
            "#1 /app/run.php(8): import('customers.csv', 'app', 'daily')",
            "#1 /app/run.php(8): open_report('reports', 'daily', 'q3')",
            "#2 {main}",
            "  thrown in /tmp/pdo2.php on line 3",
            "see PDO->__construct('mysql:host=db', 'app', 'x') in the manual",
        ] {
            assert_lexed(secrets, &[(text, text)]);
        }
    }
}
