//! Credentials recognised by where they stand rather than by their shape: the value goes,
//! the name around it stays.
//!
//! - `scheme://user:password@host` in any URL or DSN (postgres, mysql, mongodb+srv, redis,
//!   amqp, `jdbc:…`): the whole user-info part goes, since a user name can be a token too;
//! - `Authorization:`, `Proxy-Authorization:`, `Cookie:`, `Set-Cookie:`, `X-Api-Key:` and
//!   similar headers: everything after the colon;
//! - `curl -u user:pass` and `--user user:pass`, and the password flags of other tools
//!   (`tool_flags`);
//! - credential query parameters (`access_token`, `api_key`, `sig`, `client_secret`,
//!   `X-Amz-Signature`, …);
//! - `name=value`, `name: value`, `"name": "value"` and `--name value` where the name is a
//!   secret's: its parts (split at `_`, `-`, `.` and camelCase humps) include a word such as
//!   `password`, `secret`, `token`, `credentials`, `dsn`, `cookie`, `session`, or `key` after
//!   `api`, `access`, `private`, `secret`, `signing`… Names ending in `file`, `path` or `dir`
//!   hold a location, not a secret, and names ending in `Error` or `Exception` are error
//!   classes; both are left alone.
//!
//! Text such as `password authentication failed for user "app"` has no value position and
//! stays as it is.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::{Captures, Regex};

use super::marker::REDACTED;
use super::names::{
    NOT_SECRETS, looks_generated, looks_generated_strictly, names_a_credential_context,
    names_a_secret,
};

static URL_USERINFO: LazyLock<Regex> = LazyLock::new(|| {
    // `user:password` may hold `/`, `#`, `?` and `@`: the user info ends at the `@` that is
    // followed by a host (and port) and then the end of the authority.
    Regex::new(
        r#"(?im)\b([a-z][a-z0-9+.\-]*:(?:[a-z0-9+.\-]+:)?//)([^\s:/?#@\[\]]*:\S*?|[^\s/?#@\[\]]+)@((?:[a-z0-9.\-]+|\[[0-9a-f:.]+\])(?::\d+)?(?:[/?#\s,;'")]|$))"#,
    )
    .expect("valid pattern")
});

static HEADER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"(?im)\b((?:proxy-)?authorization|set-cookie|cookie|x-api-key|api-key|x-auth-token|x-access-token|x-amz-security-token|private-token|x-vault-token)(\s*:\s*)([^\r\n"'}]+)"#,
    )
    .expect("valid pattern")
});

static CURL_USER: LazyLock<Regex> = LazyLock::new(|| {
    // Only `user:password`: `sudo -u postgres` names a user, nothing secret.
    Regex::new(
        r#"(\s(?:-u|--user|--proxy-user)(?:\s+|=))("[^"]*:[^"]*"|'[^']*:[^']*'|[^\s:]*:\S+)"#,
    )
    .expect("valid pattern")
});

/// `-p` passwords of tools that take them on the command line: `mysql -pSECRET`,
/// `docker login -u me -p SECRET`, `sshpass -p SECRET`.
static DASH_P: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?m)(\b(?:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump)\b[^\n]*?\s-p)([^\s\-\[][^\s]*)|(\b(?:(?:docker|podman|buildah|nerdctl)\s+(?:\S+\s+)*?login|sshpass)\b[^\n]*?\s-p\s+)([^\s\-\[][^\s]*)",
    )
    .expect("valid pattern")
});

/// `Password=…;` and `Pwd=…;` in connection strings, where a value may hold spaces.
static CONNECTION_STRING: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?im)(;[\ \t]*|^|[\ \t])((?:password|pwd)\s*=\s*)([^;\r\n\[][^;\r\n]*)(;|$)")
        .expect("valid pattern")
});

/// DSNs without a scheme: Go's MySQL driver (`user:pass@tcp(host:3306)/db`), Oracle easy
/// connect (`scott/tiger@//host:1521/svc`, `scott/tiger@host:1521/svc`), and
/// `user:pass@host:port/db` as libraries print them. Group 1 is the user info.
static BARE_DSN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?:^|[\s'\x22=(,])([A-Za-z0-9_.$#\-]*:[^\s@/'\x22]+|[A-Za-z0-9_.$#\-]+/[^\s@/'\x22]+)",
        r"@(?:(?:tcp|tcp6|udp|unix)\(|//[A-Za-z0-9.\-\[]|[A-Za-z0-9.\-]+:[0-9]{2,5}\b)",
    ))
    .expect("valid pattern")
});

/// A `.netrc` line (`machine host login user password secret`, also `default …`), quoted
/// in an error message. Group 1 is everything up to the password; group 2 the password.
static NETRC: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(\b(?:machine\s+\S+\s+|default\s+)login\s+\S+(?:\s+account\s+\S+)?\s+password\s+)",
        r"(\S+)",
    ))
    .expect("valid pattern")
});

/// XML settings that name the secret in an attribute: NuGet's
/// `<add key="ClearTextPassword" value="…"/>`, .NET `appSettings`. Group 1 is the name,
/// group 2 the value.
static KEY_VALUE_ATTRIBUTES: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?i)\bkey\s*=\s*"([^"\n]{1,64})"\s+value\s*=\s*"([^"\n]*)""#)
        .expect("valid pattern")
});

fn redact_key_value_attributes(text: &str) -> Cow<'_, str> {
    if !text.contains("value") {
        return Cow::Borrowed(text);
    }
    let mut out = String::new();
    let mut copied = 0;
    for caps in KEY_VALUE_ATTRIBUTES.captures_iter(text) {
        let (Some(name), Some(value)) = (caps.get(1), caps.get(2)) else {
            continue;
        };
        if !names_a_secret(name.as_str())
            || value.as_str().is_empty()
            || value.as_str().starts_with(REDACTED)
        {
            continue;
        }
        out.push_str(&text[copied..value.start()]);
        out.push_str(REDACTED);
        copied = value.end();
    }
    if copied == 0 {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

/// A percent-encoded `name=value` or `"name":"value"` (`password%3Dhunter2`,
/// `%22token%22%3A%22…%22`): group 1 the name, group 2 the separator.
static ENCODED_ASSIGNMENT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)([A-Za-z_][A-Za-z0-9_.\-]*)((?:%22)?(?:%3D|%3A)(?:%20)*(?:%22)?)")
        .expect("valid pattern")
});

/// The end of a percent-encoded value starting at `start`: before white space, `&`, a quote,
/// or an encoded `&`, `"`, `,`, space or `}`.
fn encoded_value_end(text: &str, start: usize) -> usize {
    let b = text.as_bytes();
    let mut i = start;
    while i < b.len() {
        if b[i].is_ascii_whitespace() || matches!(b[i], b'&' | b'"' | b'\'' | b';') {
            break;
        }
        // Bytes, not a slice of the text: what follows `%` may be any character.
        if b[i] == b'%' && b.len() >= i + 3 {
            let code = [b[i + 1].to_ascii_uppercase(), b[i + 2].to_ascii_uppercase()];
            if matches!(&code, b"26" | b"22" | b"2C" | b"20" | b"7D" | b"27") {
                break;
            }
        }
        i += 1;
    }
    i
}

fn redact_encoded_assignments(text: &str) -> Cow<'_, str> {
    if !text.contains('%') {
        return Cow::Borrowed(text);
    }
    let mut out = String::new();
    let mut copied = 0;
    for caps in ENCODED_ASSIGNMENT.captures_iter(text) {
        let (Some(name), Some(sep)) = (caps.get(1), caps.get(2)) else {
            continue;
        };
        if name.start() < copied || !names_a_secret(name.as_str()) {
            continue;
        }
        let end = encoded_value_end(text, sep.end());
        if end == sep.end() || text[sep.end()..].starts_with(REDACTED) {
            continue;
        }
        out.push_str(&text[copied..sep.end()]);
        out.push_str(REDACTED);
        copied = end;
    }
    if copied == 0 {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

static QUERY_PARAM: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)([?&](?:access_token|refresh_token|id_token|auth_token|api_key|apikey|api-key|key|sig|signature|client_secret|code|password|passwd|token|secret|x-amz-signature|x-amz-credential|x-amz-security-token|x-goog-signature|x-goog-credential)=)([^&;\s#'\x22<>\[][^&;\s#'\x22<>]*)",
    )
    .expect("valid pattern")
});

/// The next name and its separator from `at` on: `(name start, name end, separator end)`.
///
/// A name is `--?[A-Za-z][\w.-]*` or `[A-Za-z_][\w.-]*`, the separator `=`, `:` or `=>`
/// (with any quotes and spaces around them: `"name": `, `\"name\":`) or spaces (for
/// `--flag value`). The name is judged in code ([`names_a_secret`]) and only then is its
/// value read ([`value_span`]). This is a hand-written scan rather than a regex with
/// captures: a line of many short names (`a=a=a=…`) costs one pass, not a regex call each.
fn next_assignment(text: &str, mut at: usize) -> Option<(usize, usize, usize)> {
    let b = text.as_bytes();
    let is_name_char = |c: char| c.is_alphanumeric() || matches!(c, '_' | '.' | '-');
    while at < text.len() {
        let rest = &text[at..];
        let skip = rest.find(is_name_char)?;
        let run_start = at + skip;
        let run_end = text[run_start..]
            .find(|c: char| !is_name_char(c))
            .map_or(text.len(), |n| run_start + n);
        let starts_name = |p: usize| {
            b[p].is_ascii_alphabetic()
                || b[p] == b'_'
                || b[p] == b'-'
                    && (b.get(p + 1).is_some_and(u8::is_ascii_alphabetic)
                        || b.get(p + 1) == Some(&b'-')
                            && b.get(p + 2).is_some_and(u8::is_ascii_alphabetic))
        };
        let name_start = (run_start..run_end).find(|&p| starts_name(p));
        if let (Some(start), Some(sep_end)) = (name_start, separator_at(b, run_end)) {
            return Some((start, run_end, sep_end));
        }
        at = run_end;
    }
    None
}

/// End of the separator starting at `i`: `\?["']?[ \t]*(=>|:|=)[ \t]*`, else `[ \t]+`.
fn separator_at(b: &[u8], i: usize) -> Option<usize> {
    let blanks = |mut j: usize| {
        while j < b.len() && matches!(b[j], b' ' | b'\t') {
            j += 1;
        }
        j
    };
    let mut j = i;
    if b.get(j) == Some(&b'\\') {
        j += 1;
    }
    if matches!(b.get(j), Some(b'"' | b'\'')) {
        j += 1;
    }
    j = blanks(j);
    if b[j..].starts_with(b"=>") {
        return Some(blanks(j + 2));
    }
    if matches!(b.get(j), Some(b':' | b'=')) {
        return Some(blanks(j + 1));
    }
    let j = blanks(i);
    (j > i).then_some(j)
}

/// `token: 400 Bad Request`: an HTTP status and its reason, not a value.
fn http_status_at(text: &str, start: usize) -> bool {
    let b = text.as_bytes();
    let digits = b[start..].iter().take_while(|c| c.is_ascii_digit()).count();
    digits == 3
        && matches!(b[start], b'1'..=b'5')
        && b.get(start + 3) == Some(&b' ')
        && b.get(start + 4).is_some_and(u8::is_ascii_uppercase)
}

/// Words that introduce the credential in an `Authorization` value.
const AUTH_SCHEMES: &[&str] = &[
    "bearer",
    "basic",
    "token",
    "digest",
    "negotiate",
    "bot",
    "apikey",
];

/// The value that starts at `start`, as a byte range: inside its quotes when quoted (also
/// in escaped JSON, `\"…\"`, and in a list, `["…"]`), else up to white space or a
/// closing bracket or comma. An authorization scheme word takes the credential after it
/// along.
fn value_span(text: &str, start: usize) -> (usize, usize) {
    let mut pos = start;
    if text[pos..].starts_with('[') && text[pos + 1..].starts_with(['"', '\'', '\\']) {
        pos += 1;
    }
    let escaped = text[pos..].starts_with("\\\"");
    if escaped {
        pos += 1;
    }
    if let Some(quote) = text[pos..]
        .chars()
        .next()
        .filter(|c| *c == '"' || *c == '\'')
    {
        let inner = pos + 1;
        return (inner, quoted_end(text, inner, quote as u8, escaped));
    }
    let bare_end = |from: usize| {
        text[from..]
            .find(|c: char| {
                c.is_whitespace() || matches!(c, '"' | '\'' | ',' | ';' | '}' | ')' | ']')
            })
            .map_or(text.len(), |n| from + n)
    };
    let end = bare_end(start);
    if AUTH_SCHEMES
        .iter()
        .any(|scheme| text[start..end].eq_ignore_ascii_case(scheme))
    {
        let next = end + (text[end..].len() - text[end..].trim_start_matches([' ', '\t']).len());
        if next > end && next < text.len() {
            return (start, bare_end(next));
        }
    }
    (start, end)
}

/// Where a quoted value that starts at `inner` ends: at its closing `quote` (or the end of
/// the line), past quotes a backslash escapes (`"p\"ss"`, `'p\'ss'`). In escaped JSON
/// (`escaped`: the value opened with `\"`), it closes at `\"`, and `\\\"` is a quote the
/// value holds.
fn quoted_end(text: &str, inner: usize, quote: u8, escaped: bool) -> usize {
    let b = text.as_bytes();
    let mut i = inner;
    // In escaped JSON, whether the last character of the value was a backslash of its own.
    let mut held_backslash = false;
    while i < b.len() {
        match b[i] {
            b'\n' => return i,
            b'\\' if escaped => match b.get(i + 1) {
                Some(&c) if c == quote && !held_backslash => return i,
                Some(b'\\') => {
                    held_backslash = !held_backslash;
                    i += 2;
                }
                _ => {
                    held_backslash = false;
                    i += 2;
                }
            },
            b'\\' => i += 2,
            c if c == quote && !escaped => return i,
            _ => {
                held_backslash = false;
                i += 1;
            }
        }
    }
    b.len()
}

/// Replaces structurally placed credentials with [`REDACTED`].
pub fn redact(text: &str) -> Cow<'_, str> {
    let mut text = Cow::Borrowed(text);
    replace(&mut text, &URL_USERINFO, |c| {
        format!("{}{REDACTED}@{}", &c[1], &c[3])
    });
    replace(&mut text, &HEADER, |c| {
        format!("{}{}{REDACTED}", &c[1], &c[2])
    });
    replace(&mut text, &CURL_USER, |c| format!("{}{REDACTED}", &c[1]));
    replace(&mut text, &DASH_P, |c| {
        let before = c.get(1).or(c.get(3)).map_or("", |m| m.as_str());
        format!("{before}{REDACTED}")
    });
    if let Cow::Owned(new) = super::tool_flags::redact(&text) {
        text = Cow::Owned(new);
    }
    // Only between `;`s: a connection string, where the value may hold spaces.
    replace(&mut text, &CONNECTION_STRING, |c| {
        match (c[1].starts_with(';'), &c[4]) {
            (false, "") => c[0].to_owned(),
            _ => format!("{}{}{REDACTED}{}", &c[1], &c[2], &c[4]),
        }
    });
    replace(&mut text, &QUERY_PARAM, |c| format!("{}{REDACTED}", &c[1]));
    replace(&mut text, &BARE_DSN, |c| {
        let whole = &c[0];
        let user_info = c.get(1).expect("group 1 always takes part");
        let lead = &whole[..user_info.start() - c.get(0).map_or(0, |m| m.start())];
        let rest = &whole[user_info.end() - c.get(0).map_or(0, |m| m.start())..];
        format!("{lead}{REDACTED}{rest}")
    });
    replace(&mut text, &NETRC, |c| format!("{}{REDACTED}", &c[1]));
    if let Cow::Owned(new) = redact_key_value_attributes(&text) {
        text = Cow::Owned(new);
    }
    if let Cow::Owned(new) = redact_encoded_assignments(&text) {
        text = Cow::Owned(new);
    }
    if let Cow::Owned(new) = redact_assignments(&text) {
        text = Cow::Owned(new);
    }
    text
}

fn replace(text: &mut Cow<'_, str>, pattern: &Regex, with: impl Fn(&Captures<'_>) -> String) {
    if let Cow::Owned(new) = pattern.replace_all(text, |c: &Captures<'_>| with(c)) {
        *text = Cow::Owned(new);
    }
}

/// Scans for assignments one name at a time and replaces the values of secrets' names.
fn redact_assignments(text: &str) -> Cow<'_, str> {
    let mut out = String::new();
    let mut copied = 0;
    let mut at = 0;
    while let Some((name_start, name_end, sep_end)) = next_assignment(text, at) {
        let name = &text[name_start..name_end];
        at = name_end;
        // `word value` is prose; `--flag value` pairs count, and so does a credential word
        // right before a value that can only be a generated credential (`api key 9f…`).
        let spaced = text[name_end..sep_end].trim_matches([' ', '\t']).is_empty();
        let prose_pair = spaced && !name.starts_with('-');
        let strong = names_a_secret(name);
        if !strong && !names_a_credential_context(name) {
            continue;
        }
        let (value_start, value_end) = value_span(text, sep_end);
        let value = &text[value_start..value_end];
        if prose_pair && !looks_generated_strictly(value) || !strong && !looks_generated(value) {
            continue;
        }
        let quoted = value_start > 0 && text[..value_start].ends_with(['"', '\'']);
        let prose = !quoted
            && (NOT_SECRETS.iter().any(|w| value.eq_ignore_ascii_case(w))
                || http_status_at(text, value_start));
        if value.is_empty()
            || prose
            || text[value_start..].starts_with(REDACTED)
            || value.starts_with('-')
        {
            continue;
        }
        out.push_str(&text[copied..value_start]);
        out.push_str(REDACTED);
        copied = value_end;
        at = value_end;
    }
    if copied == 0 {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(text: &str) -> String {
        redact(text).into_owned()
    }

    #[test]
    fn names() {
        for yes in [
            "password",
            "DB_PASSWORD",
            "apiKey",
            "x-api-key",
            "AWS_SECRET_ACCESS_KEY",
            "--auth-token",
            "clientSecret",
            "session_id",
            "PGPASSWORD",
        ] {
            assert!(names_a_secret(yes), "{yes}");
        }
        for no in [
            "author",
            "keyboard",
            "key",
            "monkey",
            "password_file",
            "TOKEN_PATH",
            "passage",
            "user",
            "primary_key",
        ] {
            assert!(!names_a_secret(no), "{no}");
        }
    }

    #[test]
    fn url_user_info() {
        assert_eq!(
            r("postgres://app:pw1@db:5432/x"),
            "postgres://[REDACTED]@db:5432/x"
        );
        assert_eq!(
            r("mongodb+srv://u:p@cluster0.example.net/db"),
            "mongodb+srv://[REDACTED]@cluster0.example.net/db"
        );
        assert_eq!(
            r("jdbc:mysql://root:toor@db/app"),
            "jdbc:mysql://[REDACTED]@db/app"
        );
        assert_eq!(
            r("amqp://guest:guest@rabbit:5672/"),
            "amqp://[REDACTED]@rabbit:5672/"
        );
        assert_eq!(r("mail ops@example.com now"), "mail ops@example.com now");
    }

    #[test]
    fn headers_and_curl() {
        assert_eq!(
            r("Authorization: Bearer abc.def.ghi"),
            "Authorization: [REDACTED]"
        );
        assert_eq!(r("> cookie: sid=1; theme=dark"), "> cookie: [REDACTED]");
        assert_eq!(
            r(r#"{"X-Api-Key": "k-123"}"#),
            r#"{"X-Api-Key": "[REDACTED]"}"#
        );
        assert_eq!(
            r("curl -u admin:hunter2 https://x"),
            "curl -u [REDACTED] https://x"
        );
        assert_eq!(
            r("curl --user=admin:hunter2 https://x"),
            "curl --user=[REDACTED] https://x"
        );
    }

    #[test]
    fn query_parameters() {
        assert_eq!(
            r("GET /cb?code=abc123&state=xyz&access_token=tok9 HTTP/1.1"),
            "GET /cb?code=[REDACTED]&state=xyz&access_token=[REDACTED] HTTP/1.1"
        );
        assert_eq!(
            r("https://b.s3.amazonaws.com/o?X-Amz-Credential=AK%2F1&X-Amz-Signature=abcd"),
            "https://b.s3.amazonaws.com/o?X-Amz-Credential=[REDACTED]&X-Amz-Signature=[REDACTED]"
        );
        assert_eq!(
            r("https://x.blob.core.windows.net/c?sv=2022&sig=Zm9v%3D"),
            "https://x.blob.core.windows.net/c?sv=2022&sig=[REDACTED]"
        );
    }

    #[test]
    fn assignments() {
        assert_eq!(r("password=hunter2 failed"), "password=[REDACTED] failed");
        assert_eq!(
            r(r#"{"api_key": "k 123", "user": "bob"}"#),
            r#"{"api_key": "[REDACTED]", "user": "bob"}"#
        );
        assert_eq!(r("DB_PASSWD: s3cret; next"), "DB_PASSWD: [REDACTED]; next");
        assert_eq!(
            r("Server=db;User Id=sa;Password=p@ss w;"),
            "Server=db;User Id=sa;Password=[REDACTED];"
        );
        assert_eq!(
            r("mysql --password hunter2 -h db"),
            "mysql --password [REDACTED] -h db"
        );
        assert_eq!(r("login --token=abc"), "login --token=[REDACTED]");
        assert_eq!(r("secret_key = 'a b'"), "secret_key = '[REDACTED]'");
    }

    #[test]
    fn benign_text_survives() {
        for text in [
            "FATAL: password authentication failed for user \"app\"",
            "NoCredentialsError: Unable to locate credentials",
            "token expired, please log in again",
            "reading --password-file /run/secrets/db",
            "primary_key=42 author=jane",
            "a password is required",
            "key=user_id value=7",
            "validation failed: password: must be at least 12 characters",
            "status: failed, token: missing",
            "WARN deprecated option --password used",
        ] {
            assert_eq!(r(text), text);
        }
    }

    #[test]
    fn idempotent() {
        for text in [
            "password=hunter2",
            "Authorization: Bearer x",
            "postgres://a:b@h/x",
            "?sig=abc",
        ] {
            let once = r(text);
            assert_eq!(r(&once), once, "{text}");
        }
    }

    #[test]
    fn values_read_to_their_natural_end() {
        assert_eq!(
            r("authorization=Bearer lkwyla4szJxhvI3y next"),
            "authorization=[REDACTED] next"
        );
        assert_eq!(
            r("DJANGO_SECRET_KEY=StAZ&vl(Mz@B^k4o-pH1 ok"),
            "DJANGO_SECRET_KEY=[REDACTED] ok"
        );
        assert_eq!(
            r("Server=tcp:db;Password=Zx9!kq#Lm2$"),
            "Server=tcp:db;Password=[REDACTED]"
        );
        assert_eq!(
            r(r#"{"password"=>"hunter2pass", "a"=>1}"#),
            r#"{"password"=>"[REDACTED]", "a"=>1}"#
        );
        assert_eq!(r("password => 'x y'"), "password => '[REDACTED]'");
        assert_eq!(
            r(r#"{\"password\":\"hunter2pass\"}"#),
            r#"{\"password\":\"[REDACTED]\"}"#
        );
        assert_eq!(
            r("mysql --password 'hunter2pass' -h db"),
            "mysql --password '[REDACTED]' -h db"
        );
        assert_eq!(
            r(r#"{"Authorization":["Basic dTpaeDkha3EjTG0yJA=="]}"#),
            r#"{"Authorization":["[REDACTED]"]}"#
        );
    }

    #[test]
    fn quotes_a_quoted_value_escapes_stay_inside_it() {
        let cases = [
            (
                r#"{"password":"p\"ss w0rd"}"#,
                r#"{"password":"[REDACTED]"}"#,
            ),
            (
                r#"{"password":"ends with \\","user":"app"}"#,
                r#"{"password":"[REDACTED]","user":"app"}"#,
            ),
            (
                r"{'password': 'p\'ss w0rd', 'user': 'app'}",
                r"{'password': '[REDACTED]', 'user': 'app'}",
            ),
            (
                r#"{\"password\":\"p\\\"ss w0rd\"}"#,
                r#"{\"password\":\"[REDACTED]\"}"#,
            ),
            (
                r#"{\"password\":\"a\\\\\",\"user\":\"app\"}"#,
                r#"{\"password\":\"[REDACTED]\",\"user\":\"app\"}"#,
            ),
        ];
        for (text, want) in cases {
            assert_eq!(r(text), want, "{text}");
        }
    }

    #[test]
    fn passwords_with_url_characters() {
        assert_eq!(
            r("postgres://app:Zx9#kq/Lm2@db:5432/x"),
            "postgres://[REDACTED]@db:5432/x"
        );
        assert_eq!(
            r("mongodb://admin:p@ssw0rd@mongo:27017/db"),
            "mongodb://[REDACTED]@mongo:27017/db"
        );
        assert_eq!(
            r("see https://example.com/about for help"),
            "see https://example.com/about for help"
        );
    }

    #[test]
    fn user_flags_without_a_password_stay() {
        assert_eq!(
            r("sudo -u postgres pg_dump app"),
            "sudo -u postgres pg_dump app"
        );
        assert_eq!(
            r("curl -u 'deploy:a b' https://x"),
            "curl -u [REDACTED] https://x"
        );
    }

    #[test]
    fn credential_context_needs_a_generated_value() {
        assert_eq!(
            r("MAILGUN_KEY=0123456789abcdef0123456789abcdef"),
            "MAILGUN_KEY=[REDACTED]"
        );
        assert_eq!(
            r(r#"{"datadog_app": "k3j4h5g6f7d8s9a0q1w2e3r4"}"#),
            r#"{"datadog_app": "[REDACTED]"}"#
        );
        assert_eq!(
            r("license_key: 1b9d6bcd-bbfd-4b2d-9b5d-ab8dfbbd4bed"),
            "license_key: [REDACTED]"
        );
        for text in [
            "key=user_id value=7",
            "primary_key=0123456789abcdef0123456789abcdef",
            "cache_key=v2-deps-0123456789abcdef",
            "api_key_id=billing-prod-key",
            "credentialsId: 'a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d'",
            "token_endpoint=https://oauth2.example.com/token",
            "sentry_version=1.40.0-rc1",
            "WARN passing --password via the CLI is insecure",
            "oauth2: cannot fetch token: 400 Bad Request",
        ] {
            assert_eq!(r(text), text);
        }
        assert_eq!(
            r("twilio auth token 0123456789abcdef0123456789abcdef rejected"),
            "twilio auth token [REDACTED] rejected"
        );
        assert_eq!(
            r("using api key k3J9xQ2mP7vL4nR8tW1yZ5 for upload"),
            "using api key [REDACTED] for upload"
        );
        for text in [
            "cache key v2-deps-3f2a1b4c5d6e7f80 restored",
            "token for service account \"deployer\" expires in 3 days",
            "key fingerprint SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8",
            "secret rotation 20261129 done",
        ] {
            assert_eq!(r(text), text);
        }
        assert_eq!(r("session_id=abc123"), "session_id=[REDACTED]");
        assert_eq!(r("secret_id: s3cr3t-id"), "secret_id: [REDACTED]");
        assert_eq!(r("NGROK_AUTHTOKEN=x9y8z7"), "NGROK_AUTHTOKEN=[REDACTED]");
    }

    #[test]
    fn dsns_without_a_scheme() {
        assert_eq!(
            r("dsn user:pa55@tcp(db:3306)/app failed"),
            "dsn [REDACTED]@tcp(db:3306)/app failed"
        );
        assert_eq!(
            r("sqlplus scott/tiger@//db.example.com:1521/ORCL"),
            "sqlplus [REDACTED]@//db.example.com:1521/ORCL"
        );
        assert_eq!(
            r("connect app:s3cret@db.internal:5432/orders"),
            "connect [REDACTED]@db.internal:5432/orders"
        );
        for text in [
            "fatal: could not read from git@github.com:org/repo.git",
            "npm install lodash/fp@4.17.21 @scope/pkg@1.2.3",
            "at 12:30 ops@example.com wrote",
        ] {
            assert_eq!(r(text), text);
        }
    }

    #[test]
    fn secrets_named_in_attributes() {
        assert_eq!(
            r(r#"<add key="ClearTextPassword" value="feed-pw" />"#),
            r#"<add key="ClearTextPassword" value="[REDACTED]" />"#
        );
        let kept = r#"<add key="Username" value="deploy" />"#;
        assert_eq!(r(kept), kept);
    }

    #[test]
    fn netrc_lines() {
        assert_eq!(
            r("bad line in ~/.netrc: machine api.example.com login deploy password s3cr3t"),
            "bad line in ~/.netrc: machine api.example.com login deploy password [REDACTED]"
        );
        assert_eq!(
            r("default login anonymous password guest-pw"),
            "default login anonymous password [REDACTED]"
        );
        let prose = "machine learning password reset flow failed";
        assert_eq!(r(prose), prose);
    }

    #[test]
    fn percent_encoded_assignments() {
        assert_eq!(
            r("body=user%3Djane%26password%3Dhunter%252%26x%3D1"),
            "body=user%3Djane%26password%3D[REDACTED]%26x%3D1"
        );
        assert_eq!(
            r("q=%7B%22api_key%22%3A%22k-123%22%7D"),
            "q=%7B%22api_key%22%3A%22[REDACTED]%22%7D"
        );
        assert_eq!(r("path=%2Fhome%2Fapp"), "path=%2Fhome%2Fapp");
        // A `%` followed by a character of several bytes (found by the property test).
        assert_eq!(r("password%3D%𑏌"), "password%3D[REDACTED]");
        assert_eq!(r("password%3Dab%é%26x"), "password%3D[REDACTED]%26x");
    }

    #[test]
    fn command_line_passwords() {
        assert_eq!(
            r("mysql -uroot -phunter2pass app"),
            "mysql -uroot -p[REDACTED] app"
        );
        assert_eq!(
            r("docker login -u deploy -p hunter2pass registry"),
            "docker login -u deploy -p [REDACTED] registry"
        );
        assert_eq!(
            r("sshpass -p hunter2pass ssh host"),
            "sshpass -p [REDACTED] ssh host"
        );
        assert_eq!(r("mysql -p -h db"), "mysql -p -h db");
        assert_eq!(r("grep -p pattern file"), "grep -p pattern file");
    }
}
