//! Credentials recognised by where they stand rather than by their shape: the value goes,
//! the name around it stays.
//!
//! - `scheme://user:password@host` in any URL or DSN (postgres, mysql, mongodb+srv, redis,
//!   amqp, `jdbc:…`): the whole user-info part goes, since a user name can be a token too;
//! - `Authorization:`, `Proxy-Authorization:`, `Cookie:`, `Set-Cookie:`, `X-Api-Key:` and
//!   similar headers: everything after the colon, up to the line's end or, in a repr
//!   (`send: b'…\r\nAuthorization: …\r\n…'`), its `\r\n` escape;
//! - `curl -u user:pass` and `--user user:pass`;
//! - the credential forms databases, servers and tools print, one table with a lexer each
//!   (`forms`): Oracle logons (`scott/…@ORCL`, also in `jdbc:oracle:thin:`), DSNs without a
//!   scheme (`user:pw@tcp(…)`), connection strings (`Pwd=…;`, `pw=…;`), SQL echoes
//!   (`IDENTIFIED BY '…'`, `PASSWORD '…'`, a key detail of a secret's column), server
//!   configuration (`requirepass …`), the password flags, operands and variables of tools
//!   (`zip -P …`, `htpasswd -b f u …`, `['sshpass', '-p', '…']`, `SSHPASS=…`; rows in
//!   `tool_flags`), `Setting --password (password) to …`, protocol traces (`PASS …`,
//!   `AUTH PLAIN …`, IMAP `LOGIN`) and host names with `@` (`host name "…@db"`);
//! - credential query parameters (`access_token`, `api_key`, `sig`, `client_secret`,
//!   `X-Amz-Signature`, `hapikey`, …; `key` and `auth` only with a credential-like value;
//!   not cursors such as `page_token`) (`query`);
//! - `name=value`, `name: value`, `"name": "value"` and `--name value` where the name is a
//!   secret's: its parts (split at `_`, `-`, `.` and camelCase humps) include a word such as
//!   `password`, `pw`, `secret`, `token`, `credentials`, `dsn`, `cookie`, `session`, `key` last
//!   after a vendor's name (`ACME_KEY`, not `primary_key`), or `key` after
//!   `api`, `access`, `private`, `secret`, `signing`… (`names` decides). Names ending in
//!   `file`, `path`, `dir`, `ref`, `user`, `timeout`, `header`, `source`… hold a location, a reference or a fact
//!   about the secret, and names ending in `Error` or `Exception` are error classes; both
//!   are left alone, and so are file names (`TokenService.java:142`), facts
//!   (`(using password: YES)`), references (`-pass env:PW`), labels
//!   (`--password (password)`) and test verdicts (`--- PASS: TestX`). A YAML value (the
//!   name first on its line) runs to the end of the line: `password: correct horse battery
//!   staple` goes whole. A typed default goes after its type
//!   (`password: str = "…"`), and a call or lookup as a value is code, not a secret
//!   (`token = os.environ.get("API_TOKEN")`) (`assignments`);
//! - call arguments known by the function's name: `setPassword("…")`, `with_token("…")`,
//!   the password's place in `login("admin", "…")` or `getConnection(url, user, "…")`
//!   (`calls`);
//! - defaults of lookups by a secret's name and values of (name, value) pairs:
//!   `os.getenv("DB_PASSWORD", "…")`, `process.env.API_TOKEN || "…"`,
//!   `${DB_PASSWORD:-…}`, `${db.password:…}`, Kubernetes `- name: DB_PASSWORD` /
//!   `value: …` (`defaults`);
//! - the text of XML elements named for a secret, `<password>…</password>` (`markup`).
//!
//! A value goes whole, however much punctuation it holds (`P@ss!w0rd#2024$%^&*()`); where
//! it ends depends on how it is framed (`values`): a quoted value at its closing quote, an
//! unquoted one at white space or at the separator of its framing (`,` in `a=1,password=…`,
//! `&` in a query, the bracket that opened before its name).
//!
//! Text such as `password authentication failed for user "app"` has no value position and
//! stays as it is.

mod assignments;
mod calls;
mod defaults;
mod forms;
mod markup;
mod query;
#[cfg(test)]
mod tests;
mod values;

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::{Captures, Regex};

use super::marker::{self, Overlap, REDACTED};
use super::names::names_a_secret;

static HEADER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"(?im)((?:(?-u:\b)|\\n)(?:(?:proxy-)?authorization|set-cookie|cookie|x-api-key|api-key|x-auth-token|x-access-token|x-amz-security-token|private-token|x-vault-token))(\s*:\s*)((?:[^\r\n"'}\\]|\\[^rn"'])+)"#,
    )
    .expect("valid pattern")
});

static CURL_USER: LazyLock<Regex> = LazyLock::new(|| {
    // Only `user:password`: `sudo -u postgres` names a user, nothing secret. Also glued
    // (`-uadmin:pw`).
    Regex::new(
        r#"(\s(?:(?:-u|--user|--proxy-user)(?:\s+|=)|-u))("[^"]*:[^"]*"|'[^']*:[^']*'|[^\s:]*:\S+)"#,
    )
    .expect("valid pattern")
});

/// A `.netrc` line (`machine host login user password secret`, also `default …`), quoted
/// in an error message. Group 1 is everything up to the password; group 2 the password;
/// group 3 a quote that closes the message's quoting (`"machine … password pw"`), which
/// stays, and what follows.
static NETRC: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?m)((?-u:\b)(?:machine\s+\S+\s+|default\s+)login\s+\S+(?:\s+account\s+\S+)?\s+password\s+)",
        r#"(\S+?)(["']?(?:\s|$))"#,
    ))
    .expect("valid pattern")
});

/// XML settings that name the secret in an attribute: NuGet's
/// `<add key="ClearTextPassword" value="…"/>`, .NET `appSettings`. Group 1 is the name,
/// group 2 the value.
static KEY_VALUE_ATTRIBUTES: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?i)(?-u:\b)key\s*=\s*"([^"\n]{1,64})"\s+value\s*=\s*"([^"\n]*)""#)
        .expect("valid pattern")
});

fn redact_key_value_attributes(text: &str) -> Cow<'_, str> {
    if !text.contains("value") {
        return Cow::Borrowed(text);
    }
    let mut spans = Vec::new();
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
        spans.push((value.start(), value.end()));
    }
    marker::splice(text, &spans, Overlap::FirstWins)
}

/// Replaces structurally placed credentials with [`REDACTED`].
pub fn redact(text: &str) -> Cow<'_, str> {
    let mut text = Cow::Borrowed(text);
    if let Cow::Owned(new) = super::userinfo::redact(&text) {
        text = Cow::Owned(new);
    }
    // `Authorization: none` says there is no credential.
    replace(&mut text, &HEADER, |c| match c[3].trim() {
        "none" | "(none)" => c[0].to_owned(),
        _ => {
            marker::learn(&c[3]);
            format!("{}{}{REDACTED}", &c[1], &c[2])
        }
    });
    // `redis-cli -u redis://:pw@cache`: a URL, whose user info `userinfo` took.
    replace(&mut text, &CURL_USER, |c| match c[2].contains("://") {
        true => c[0].to_owned(),
        false => {
            marker::learn(&c[2]);
            format!("{}{REDACTED}", &c[1])
        }
    });
    // The forms databases and tools print (`forms`): one table, a lexer each.
    if let Cow::Owned(new) = splice(&text, forms::secrets(&text)) {
        text = Cow::Owned(new);
    }
    if let Cow::Owned(new) = query::redact_query(&text) {
        text = Cow::Owned(new);
    }
    replace(&mut text, &NETRC, |c| {
        marker::learn(&c[2]);
        format!("{}{REDACTED}{}", &c[1], &c[3])
    });
    if let Cow::Owned(new) = redact_key_value_attributes(&text) {
        text = Cow::Owned(new);
    }
    if let Cow::Owned(new) = query::redact_encoded_assignments(&text) {
        text = Cow::Owned(new);
    }
    let mut spans = defaults::secrets(&text);
    spans.extend(calls::secrets(&text));
    spans.extend(markup::secrets(&text));
    if let Cow::Owned(new) = splice(&text, spans) {
        text = Cow::Owned(new);
    }
    if let Cow::Owned(new) = assignments::redact_assignments(&text) {
        text = Cow::Owned(new);
    }
    text
}

/// `text` with each byte range in `spans` replaced by [`REDACTED`], in any order; a range
/// that overlaps one before it is dropped.
fn splice(text: &str, mut spans: Vec<(usize, usize)>) -> Cow<'_, str> {
    spans.sort_unstable();
    marker::splice(text, &spans, Overlap::FirstWins)
}

fn replace(text: &mut Cow<'_, str>, pattern: &Regex, with: impl Fn(&Captures<'_>) -> String) {
    if let Cow::Owned(new) = pattern.replace_all(text, |c: &Captures<'_>| with(c)) {
        *text = Cow::Owned(new);
    }
}
