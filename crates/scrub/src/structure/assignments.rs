//! `name=value`, `name: value`, `"name": "value"` and `--name value`, found by a scan of
//! names: a value goes when its name is a secret's. A YAML value (its name first on its
//! line, after blanks or `- `) runs to the end of the line, before a ` #` comment, and so
//! does any unquoted value followed by two to four plain words and the line's end
//! (`password=correct horse battery staple`). `passwd hunter22x`: a few names
//! (`SPACED_NAMES`) take one word of letters and digits after a blank. Not
//! values: a file and line (`TokenService.java:142`), a fact (`(using password: YES)`), a
//! reference (`-pass env:PW`), a label (`--password (password)`), a test's verdict
//! (`--- PASS: TestX`).

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;

use super::super::marker::{self, Overlap, REDACTED};
use super::super::names::{
    GENERATED_MIN, NOT_SECRETS, generated_char, looks_generated, looks_generated_strictly,
    names_a_credential_context, names_a_file, names_a_secret, names_a_secret_after,
};
use super::query::is_query_name;
use super::values::{Framings, REACH, ahead, back, value_span};

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
                // `пароль`, `密码`, `ｐａｓｓｗｏｒｄ`: a letter of another script.
                || b[p] >= 0xC0
                    && text[p..].chars().next().is_some_and(char::is_alphabetic)
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

/// End of the separator starting at `i`: `\?["']?[ \t]*(=>|:=|:|=)[ \t]*`, else `[ \t]+`;
/// none before `==`.
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
    if b[j..].starts_with(b"=>") || b[j..].starts_with(b":=") {
        return Some(blanks(j + 2));
    }
    // `token == ""` and `token === x` compare; they assign nothing.
    if b[j..].starts_with(b"==") {
        return None;
    }
    if matches!(b.get(j), Some(b':' | b'=')) {
        return Some(blanks(j + 1));
    }
    // The fullwidth `：` and `＝` of CJK text.
    if b[j..].starts_with("：".as_bytes()) || b[j..].starts_with("＝".as_bytes()) {
        return Some(blanks(j + 3));
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

/// Scans for assignments one name at a time and replaces the values of secrets' names.
pub(super) fn redact_assignments(text: &str) -> Cow<'_, str> {
    let mut spans = Vec::new();
    let mut at = 0;
    let mut framings = Framings::default();
    while let Some((name_start, name_end, sep_end)) = next_assignment(text, at) {
        at = name_end;
        let found = secret_value(&mut framings, text, (name_start, name_end), sep_end);
        let Some(value) = found else {
            continue;
        };
        spans.push(value);
        at = value.1;
    }
    marker::splice(text, &spans, Overlap::FirstWins)
}

/// A name an assignment's value may be a secret under.
#[derive(Clone, Copy)]
struct SecretName<'t> {
    name: &'t str,
    start: usize,
    /// It names a secret (`password`, `api key`), not only a credential's context
    /// (`auth`), whose values must look generated to go.
    strong: bool,
    /// The words `api key`, read as one name.
    api_key: bool,
}

/// The range of the secret value of the assignment whose name is `name_start..name_end`
/// and whose separator ends at `sep_end`, if its name is a secret's and the value is one.
fn secret_value(
    framings: &mut Framings,
    text: &str,
    (name_start, name_end): (usize, usize),
    sep_end: usize,
) -> Option<(usize, usize)> {
    let found = secret_name(text, name_start, name_end)?;
    let SecretName {
        name,
        strong,
        api_key,
        ..
    } = found;
    // `word value` is prose; `--flag value` pairs count, and so does a credential word
    // right before a value that can only be a generated credential (`api key 9f…`).
    let separator = &text[name_end..sep_end];
    let spaced = separator.trim_matches([' ', '\t']).is_empty();
    let annotated = separator.contains(':') || spaced;
    // `Bearer realm="api"`: another name and its `=` after a word are no value of it.
    if spaced && !name.starts_with('-') && names_next(text, sep_end) {
        return None;
    }
    let typed = annotated.then(|| typed_default(text, sep_end)).flatten();
    let from = typed.unwrap_or(sep_end);
    // A flag (`--password --user x`) is no value; known before the value is read, so a
    // long line of `password:-password:-…` costs one pass.
    if text[from..].starts_with('-') {
        return None;
    }
    // A value only its shape can make secret is at most 512 bytes long (`looks_generated`)
    // and holds `=` only as base64 padding at its end: no need to read past either. (So a
    // line of `key=key=…` costs each name a few bytes, not the rest of the line.)
    let scope = if strong { text } else { weak_scope(text, from) };
    if !strong && generated_run_too_short(text, scope, from) {
        return None;
    }
    let prose_pair = spaced && !name.starts_with('-') && typed.is_none();
    // `passwd hunter22x`, `api-key hunter22x`: a word that can only be a credential's name,
    // then one word of letters and digits.
    if prose_pair
        && (api_key || SPACED_NAMES.iter().any(|n| name.eq_ignore_ascii_case(n)))
        && let Some(end) = spaced_credential(text, from)
    {
        return Some((from, end));
    }
    if prose_pair && too_short_for_prose(text, from) {
        return None;
    }
    let (value_start, value_end) = value_span(framings, scope, name_start, from);
    let value_end = value_start + unframed_len(&text[value_start..value_end], &text[value_end..]);
    judged_value(text, found, separator, prose_pair, (value_start, value_end))
}

/// The name at `name_start..name_end`, if it is one and names a secret or a credential's
/// context.
fn secret_name(text: &str, name_start: usize, name_end: usize) -> Option<SecretName<'_>> {
    let name = &text[name_start..name_end];
    if not_a_name(text, name_start, name_end) {
        return None;
    }
    // `api key: …`: the words `api key` as one name.
    let api_key = name.eq_ignore_ascii_case("key")
        && name_start >= 4
        && text.as_bytes()[name_start - 4..name_start].eq_ignore_ascii_case(b"api ");
    let strong = names_a_secret(name) || api_key || names_a_secret_after(&text[..name_start], name);
    if !strong && !names_a_credential_context(name) {
        return None;
    }
    Some(SecretName {
        name,
        start: name_start,
        strong,
        api_key,
    })
}

/// The value at `value_start..value_end` after `name` and its `separator`, if it is a
/// secret (a `prose_pair` is a name and its value with only blanks between); where it ends
/// when a `:` separates them.
fn judged_value(
    text: &str,
    name: SecretName<'_>,
    separator: &str,
    prose_pair: bool,
    (value_start, value_end): (usize, usize),
) -> Option<(usize, usize)> {
    let SecretName {
        name,
        start: name_start,
        strong,
        ..
    } = name;
    let value = &text[value_start..value_end];
    // ODBC's `DSN=prod;`: a data source's name; a DSN with a password is a URL (`userinfo`).
    if name.eq_ignore_ascii_case("dsn")
        && value
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || b"_-.".contains(&c))
    {
        return None;
    }
    if prose_pair && !looks_generated_strictly(value) || !strong && !looks_generated(value) {
        return None;
    }
    let quoted = value_start > 0 && text[..value_start].ends_with(['"', '\'']);
    if !quoted && kind_word(text, separator, value_start, value) {
        return None;
    }
    if value.is_empty() || not_a_secret(text, name, separator, (value_start, value_end), quoted) {
        return None;
    }
    let colon = !quoted && strong && separator.trim_matches([' ', '\t']) == ":";
    let value_end = match colon {
        true => colon_value_end(text, name_start, value_start, value_end)?,
        false => value_end,
    };
    Some((value_start, value_end))
}

/// Whether the name at `name_start..name_end` is no assignment's: query parameters and
/// placeholders (`${DB_PASSWORD:?unset}`) have rules of their own, `TokenService.java:142`
/// is a file and a line, an ARN's parts are no names, and `-pMy9Passwd` is a short flag
/// with its value attached (`forms` reads it).
fn not_a_name(text: &str, name_start: usize, name_end: usize) -> bool {
    let name = &text[name_start..name_end];
    is_query_name(text, name_start, name_end)
        || text[..name_start].ends_with("${")
        || names_a_file(name)
        || in_arn(text, name_start)
        || attached_short_flag(name)
}

/// The text a weak name's value is read in: a value only its shape can make secret is at
/// most 512 bytes long (`looks_generated`) and holds `=` only as base64 padding at its end,
/// so there is no need to read past either (a line of `key=key=…` costs each name a few
/// bytes, not the rest of the line).
fn weak_scope(text: &str, from: usize) -> &str {
    let reach = ahead(text, from, 520);
    let b = &text.as_bytes()[from..reach];
    let inner_equals = (0..b.len())
        .find(|&i| b[i] == b'=' && b.get(i + 1).is_some_and(|c| c.is_ascii_alphanumeric()));
    &text[..inner_equals.map_or(reach, |i| from + i)]
}

/// Whether a bare value at `from`, which to look generated is all of `generated_char`, is
/// too short a run of them to be secret however it is read. (Checked before the value's
/// framing is read, which costs far more.)
fn generated_run_too_short(text: &str, scope: &str, from: usize) -> bool {
    text.as_bytes()
        .get(from)
        .is_some_and(|&c| generated_char(c))
        && scope.as_bytes()[from..]
            .iter()
            .take_while(|&&c| generated_char(c))
            .count()
            < GENERATED_MIN
}

/// `volume "db-password" : secret "importer-db" not found`: after a quoted name, a word
/// that says what kind of thing the quoted name after it is.
fn kind_word(text: &str, separator: &str, value_start: usize, value: &str) -> bool {
    let word = value.trim_end();
    separator.starts_with(['"', '\''])
        && !word.is_empty()
        && word.bytes().all(|c| c.is_ascii_lowercase())
        && text[value_start + word.len()..].starts_with(" \"")
}

/// Where an unquoted value after a secret's name and `:` ends: a YAML key's value runs to
/// the end of its line (none when the value is a message, not a secret), and so do plain words
/// after any colon's value (`password: correct horse battery staple`). Not after `=`: an
/// unquoted `key=value` ends at a blank (`password=hunter2 db down` keeps `db down`), as a
/// shell reads it.
fn colon_value_end(
    text: &str,
    name_start: usize,
    value_start: usize,
    value_end: usize,
) -> Option<usize> {
    let value_end = match names_a_yaml_key(text, name_start) {
        true => yaml_value_end(text, value_end),
        false => value_end,
    };
    if is_message(&text[value_start..value_end]) {
        return None;
    }
    Some(plain_words_end(text, value_end))
}

/// Names that, followed by a blank and a word, can only be a credential's: `passwd
/// hunter22x`, `apikey hunter22x`.
const SPACED_NAMES: &[&str] = &[
    "password",
    "passwd",
    "pwd",
    "passphrase",
    "apikey",
    "api-key",
    "api_key",
];

/// The end of a word at `from` that is a credential after a credential's name and a blank:
/// 6 to 64 characters with letters and digits, no punctuation that frames a value, and a
/// blank or the end after it.
fn spaced_credential(text: &str, from: usize) -> Option<usize> {
    let b = &text.as_bytes()[from..];
    let n = b
        .iter()
        .take(65)
        .take_while(|c| c.is_ascii_graphic() && !b"=:\"'()[]{}<>,;".contains(c))
        .count();
    let word = &b[..n];
    let ends = b.get(n).is_none_or(u8::is_ascii_whitespace);
    let credential = (6..=64).contains(&n)
        && word.iter().any(u8::is_ascii_alphabetic)
        && word.iter().any(u8::is_ascii_digit);
    (ends && credential).then_some(from + n)
}

/// Where a value that ended at `end` ends when plain words (two to four, lower-case
/// letters, none of them prose such as `failed`) follow it to the end of the line:
/// `password=correct horse battery staple` goes whole. Else `end`.
fn plain_words_end(text: &str, end: usize) -> usize {
    let b = text.as_bytes();
    let mut at = end;
    for words in 0..5 {
        if b.get(at).is_none_or(|&c| c == b'\n' || c == b'\r') {
            // One word after a value may be a sentence's (`password=x9 next`).
            return if words >= 2 { at } else { end };
        }
        let next = skip_blanks(b, at);
        if next == at || b.get(next).is_none_or(|&c| c == b'\n' || c == b'\r') {
            return end;
        }
        let len = b[next..]
            .iter()
            .take(33)
            .take_while(|c| c.is_ascii_lowercase())
            .count();
        let word = &text[next..next + len];
        let stops = b.get(next + len).is_none_or(u8::is_ascii_whitespace);
        if len == 0 || len > 32 || !stops || NOT_SECRETS.contains(&word) {
            return end;
        }
        at = next + len;
    }
    end
}

/// `i` past blanks (spaces and tabs).
fn skip_blanks(b: &[u8], mut i: usize) -> usize {
    while matches!(b.get(i), Some(b' ' | b'\t')) {
        i += 1;
    }
    i
}

/// Whether the name at `name_start` is a part of an AWS ARN
/// (`arn:aws:secretsmanager:…:secret:prod/db`), which names a resource, not its value.
fn in_arn(text: &str, name_start: usize) -> bool {
    if !text[..name_start].ends_with(':') {
        return false;
    }
    let floor = back(text, name_start, REACH);
    let before = &text[floor..name_start];
    // Most text holds no `arn:` at all: one fast search, not a walk back per name.
    if !before.contains("arn:") {
        return false;
    }
    run_before(before).starts_with("arn:")
}

/// The end of `before` after its last white space or quote: a byte walk back over ASCII,
/// which reads characters only where a byte is not ASCII (a line of `a:b:…` costs each
/// name a few instructions a byte, not a character's decoding).
fn run_before(before: &str) -> &str {
    let b = before.as_bytes();
    match b
        .iter()
        .rposition(|&c| c >= 0x80 || c.is_ascii_whitespace() || matches!(c, b'\x0b' | b'"' | b'\''))
    {
        None => before,
        Some(i) if b[i] < 0x80 => &before[i + 1..],
        // A blank of another script (U+00A0, U+3000) is more than one byte long.
        Some(_) => before
            .char_indices()
            .rev()
            .find(|&(_, c)| c.is_whitespace() || c == '"' || c == '\'')
            .map_or(before, |(i, c)| &before[i + c.len_utf8()..]),
    }
}

/// The length of a bare value without the punctuation of the sentence it ends, when the
/// line or a blank follows: a `)` the value did not open (`(password=hunter22x)`), a full
/// stop (`password=hunter22x.`). A quoted value (its own quotes around it) keeps all.
fn unframed_len(value: &str, after: &str) -> usize {
    let ends_here = after.is_empty() || after.starts_with(char::is_whitespace);
    if !ends_here || value.len() < 2 {
        return value.len();
    }
    let opens = value.bytes().filter(|&c| c == b'(').count();
    let closes = value.bytes().filter(|&c| c == b')').count();
    if value.ends_with(')') && closes > opens || value.ends_with('.') && !value.ends_with("..") {
        return value.len() - 1;
    }
    value.len()
}

/// Whether `name` is a short flag with a value glued on: one dash, a letter, then a
/// capital or a digit (`-pMy9Passwd`, `-P9x`), as `mysql -p…` writes a password.
fn attached_short_flag(name: &str) -> bool {
    let b = name.as_bytes();
    b.len() > 2
        && b[0] == b'-'
        && b[1].is_ascii_alphabetic()
        && (b[2].is_ascii_uppercase() || b[2].is_ascii_digit())
}

/// Whether an identifier and `=` start the text at `at` (`realm="api"`).
fn names_next(text: &str, at: usize) -> bool {
    let b = &text.as_bytes()[at..];
    let n = b
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
        .count();
    n > 0 && b[0].is_ascii_alphabetic() && b.get(n) == Some(&b'=')
}

/// Whether a YAML-like value of several words is a message, not a passphrase: plain words
/// of which one after the first is a word of prose about a secret (`passwd: Authentication
/// token manipulation error`, `auth: unsupported mechanism`).
fn is_message(value: &str) -> bool {
    let mut words = value.split([' ', '\t']).filter(|w| !w.is_empty());
    let plain = value
        .split([' ', '\t'])
        .all(|w| w.bytes().all(|c| c.is_ascii_alphabetic()));
    words.next().is_some()
        && plain
        && words.any(|w| NOT_SECRETS.iter().any(|n| w.eq_ignore_ascii_case(n)))
}

/// Whether a prose pair's value at `from` is bare and too short to be a credential: it
/// must be 20 letters, digits or `_` or more (`looks_generated_strictly`), and a shorter run
/// cannot be one, whatever follows it. (Checked before the framing is read: a line of
/// `pass pass …` costs one pass.)
fn too_short_for_prose(text: &str, from: usize) -> bool {
    let word = |c: &u8| c.is_ascii_alphanumeric() || *c == b'_';
    let b = text.as_bytes();
    b.get(from).is_some_and(word) && b[from..].iter().take_while(|c| word(c)).count() < 20
}

/// Whether the value at `value_start..value_end` after `name` and `separator` is something
/// else than a secret: prose, a type, code, a marker already, a stand-in, a count, a label,
/// a reference or a verdict.
fn not_a_secret(
    text: &str,
    name: &str,
    separator: &str,
    (value_start, value_end): (usize, usize),
    quoted: bool,
) -> bool {
    let value = &text[value_start..value_end];
    let annotated = separator.contains(':') || separator.trim_matches([' ', '\t']).is_empty();
    // An unquoted value that runs on (`"password": must not be empty`) is judged by its
    // first word (a block scalar, over several lines, is judged whole).
    let first = match value.contains('\n') {
        true => value,
        false => value.split([' ', '\t']).next().unwrap_or(value),
    };
    let prose = !quoted
        && (NOT_SECRETS.iter().any(|w| first.eq_ignore_ascii_case(w))
            || http_status_at(text, value_start)
            || annotated && is_type(value)
            || is_code(value)
            || is_attribute_reference(value));
    let done = text[value_start..].starts_with(REDACTED) && !glued_tail(&value[REDACTED.len().min(value.len())..])
        // `PWD={[REDACTED]}`: a marker in the value's own brackets is done.
        || value.trim_matches(['{', '}', '(', ')']) == REDACTED
        // `-pass pass:[REDACTED]`: a form (`forms`) took the value after its prefix.
        || value.strip_suffix(REDACTED).is_some_and(|head| {
            head.ends_with(':') && head.bytes().all(|c| c.is_ascii_alphanumeric() || c == b':')
        })
        || is_stand_in(value)
        || counts_tokens(name, value)
        || labels(name, value)
        || is_reference(value)
        || verdict(name, separator);
    prose || done
}

/// Whether what follows a marker at a value's start is the rest of the value that the
/// shape layer's token stopped at: `:` and token characters to the value's end
/// (`ACME_KEY=[REDACTED]:Cih`, a password with a `:` in it).
fn glued_tail(rest: &str) -> bool {
    rest.strip_prefix(':').is_some_and(|tail| {
        !tail.is_empty()
            && tail
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || b"_+~-".contains(&c))
    })
}

/// A value that says where the secret is, not what: OpenSSL's `env:VAR`, `file:path`,
/// `fd:N` and `stdin` (`-pass env:ZIP_PW`).
fn is_reference(value: &str) -> bool {
    let named = |prefix: &str| {
        value.strip_prefix(prefix).is_some_and(|rest| {
            !rest.is_empty()
                && rest
                    .bytes()
                    .all(|c| c.is_ascii_alphanumeric() || b"_/.-".contains(&c))
        })
    };
    let fd = value
        .strip_prefix("fd:")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit()));
    value == "stdin" || named("env:") || named("file:") || fd
}

/// `PASS: TestLogin`: a test's verdict in capitals (Go's `--- PASS:`, Automake's and
/// DejaGnu's `PASS: name`), not a name and its value.
fn verdict(name: &str, separator: &str) -> bool {
    name == "PASS" && separator.trim_start().starts_with(':')
}

/// `--password (password)`: the option's name again in brackets, as `wget --debug` labels
/// the value it prints after it, not the value.
fn labels(name: &str, value: &str) -> bool {
    let plain: String = name.trim_start_matches('-').replace(['-', '_'], "");
    value
        .strip_prefix('(')
        .and_then(|v| v.strip_suffix(')'))
        .is_some_and(|inner| inner.eq_ignore_ascii_case(&plain))
}

/// Whether the name at `name_start` is a YAML mapping's key: only blanks and `- ` stand
/// before it on its line.
fn names_a_yaml_key(text: &str, name_start: usize) -> bool {
    let floor = back(text, name_start, REACH);
    let before = &text[floor..name_start];
    let line = before.rfind('\n').map_or(before, |n| &before[n + 1..]);
    (floor == 0 || before.contains('\n')) && line.trim_start_matches([' ', '\t', '-']).is_empty()
}

/// Where a YAML value whose first word ends at `end` ends: a plain scalar runs to the end
/// of its line (`password: correct horse battery staple`), before a comment (` #`). Only
/// a word that ended at a blank is carried on: a value that ended at `;`, `,` or a quote
/// ended where its framing said.
fn yaml_value_end(text: &str, end: usize) -> usize {
    let b = text.as_bytes();
    let reach = ahead(text, end, REACH);
    let mut end = end;
    loop {
        let mut next = end;
        while next < reach && matches!(b[next], b' ' | b'\t') {
            next += 1;
        }
        if next == end || next >= reach || matches!(b[next], b'\n' | b'\r' | b'#') {
            return end;
        }
        end = next;
        while end < reach && !b[end].is_ascii_whitespace() {
            end += 1;
        }
    }
}

/// A value that stands in for the secret, not the secret: a mask (`********`, `***`,
/// `<redacted>`, `(hidden)`) or a template's placeholder (`{{ api_key }}`, `%(password)s`,
/// `%s`, `{password}`, `<your-token>`).
fn is_stand_in(value: &str) -> bool {
    // Every stand-in starts with one of these: no need to ask the pattern otherwise.
    value.starts_with(['*', '•', 'x', '{', '%', '<', '[', '(']) && STAND_IN.is_match(value)
}

static STAND_IN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"^(?:[*•x]{3,}|[*•]+|\{\{[^{}]*\}\}|\{%[^{}]*%\}|%\(\w+\)[sdr]|%[sdr]|\{\w*\}",
        r"|<[\w\-. ]{1,40}>|\[(?i:redacted|hidden|masked|filtered|secret)\]",
        r"|\((?i:redacted|hidden|masked|filtered|not shown|none)\))$",
    ))
    .expect("valid pattern")
});

/// `max_tokens=4096`, `"prompt_tokens": 12`, `tokens: 1234`: a count of a language model's
/// tokens, not a token: the name ends in `tokens` and the value is a number.
fn counts_tokens(name: &str, value: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    (lower.ends_with("tokens") || lower.ends_with("tokencount"))
        && !value.is_empty()
        && value.len() <= 12
        && value.bytes().all(|c| c.is_ascii_digit())
}

/// A type annotation and `=` at `at`, then a string literal: `str = "…"` in
/// `password: str = "…"`, `Optional[str] = '…'`, `String = "…"` (Kotlin, Swift, Go's
/// `password string = "…"`), `&str = "…"` (Rust). Where the literal starts.
fn typed_default(text: &str, at: usize) -> Option<usize> {
    let m = TYPED_DEFAULT.find(&text[at..ahead(text, at, 256)])?;
    let value = at + m.end();
    let b = text.as_bytes();
    let literal = matches!(b.get(value), Some(b'"' | b'\''));
    literal.then_some(value)
}

static TYPED_DEFAULT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"^&?(?:'[a-z]+\s+)?(?:mut\s+)?[A-Za-z_][\w.:]*(?:<[^>\n=]*>|\[[^\]\n=]*\])?",
        r"(?:\s*\|\s*[A-Za-z_][\w.]*(?:\[[^\]\n=]*\])?)*\??[\ \t]*=[\ \t]*",
    ))
    .expect("valid pattern")
});

/// Names of types that an annotation gives a secret (`password: str`, `token: SecretStr`),
/// not values.
const TYPE_NAMES: &[&str] = &[
    "str",
    "string",
    "String",
    "bytes",
    "SecretStr",
    "SecretBytes",
    "&str",
    "&'static",
];

/// Whether an unquoted value after `:` is a type: `str`, `Optional[str]`, `Option<String>`.
fn is_type(value: &str) -> bool {
    TYPE_NAMES.contains(&value.trim_end_matches(',').trim_end_matches(')'))
        || ["Optional[", "Option<", "Secret[", "Union["]
            .iter()
            .any(|generic| value.starts_with(generic))
}

/// Whether an unquoted value is code that looks the secret up, not the secret: a call or a
/// subscript such as `os.environ.get("API_KEY")`, `getpass()`, `os.environ["TOKEN"]`,
/// `$_ENV['DB_PASSWORD']`, or a shell reference, `${DB_PASSWORD:-…}` (whose default the
/// placeholder rule judges). A command substitution (`$(echo …)`) may print the secret
/// itself, and goes.
fn is_code(value: &str) -> bool {
    // Code ends with a closing bracket: no need to ask the pattern otherwise.
    value.ends_with([')', ']', '}']) && CODE.is_match(value)
}

static CODE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^(?:\$\{.*\}|\$?[A-Za-z_]\w*(?:(?:\.|::|->)[A-Za-z_]\w*)*(?:\(.*\)|\[.*\]|\{.*\}))$",
    )
    .expect("valid pattern")
});

/// Whether an unquoted value is an attribute that holds the secret, not the secret:
/// `settings.api_key`, `self.password`, `config.db.token` (identifiers joined by `.`, the
/// last named for a secret).
fn is_attribute_reference(value: &str) -> bool {
    let mut parts = value.split('.');
    let ident = |p: &str| {
        p.bytes()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_')
            && p.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_')
    };
    let Some(last) = value.rsplit('.').next() else {
        return false;
    };
    value.contains('.') && parts.all(ident) && names_a_secret(last)
}

#[cfg(test)]
mod tests {
    use super::super::redact;

    #[test]
    fn a_yaml_value_runs_to_the_end_of_its_line() {
        let cases = [
            (
                "password: correct horse battery staple",
                "password: [REDACTED]",
            ),
            (
                "db:\n  - password: correct horse  # four words\n  user: x",
                "db:\n  - password: [REDACTED]  # four words\n  user: x",
            ),
            ("DB_PASSWD: s3cret; next", "DB_PASSWD: [REDACTED]; next"),
            (
                "log: password: correct horse",
                "log: password: [REDACTED] horse",
            ),
            ("password=correct horse", "password=[REDACTED] horse"),
        ];
        for (text, want) in cases {
            assert_eq!(redact(text), want, "{text}");
        }
    }

    #[test]
    fn facts_files_and_labels_are_not_values() {
        for text in [
            "ERROR 1045 (28000): Access denied for user 'root'@'localhost' (using password: YES)",
            "ERROR 1045 (28000): Access denied for user 'root'@'localhost' (using password: NO)",
            "at com.x.TokenService.refresh(TokenService.java:142)",
            "  File \"/app/token.py\", line 7; token.py:7: error",
            "Setting --password (password) to [REDACTED]",
            "Setting --http-password (httppassword) to [REDACTED]",
            "+ openssl enc -pass env:ZIP_PW -in a && openssl enc -pass file:/run/pw -passin stdin",
            "--- PASS: TestLogin (0.01s)",
            "PASS: tests/token.sh",
        ] {
            assert_eq!(redact(text), text);
        }
    }

    #[test]
    fn typed_defaults_lose_the_default_not_the_type() {
        let cases = [
            (
                r#"def connect(password: str = "Zq8xwLm2pe"):"#,
                r#"def connect(password: str = "[REDACTED]"):"#,
            ),
            (
                r#"password: str = "Zq8xwLm2pe""#,
                r#"password: str = "[REDACTED]""#,
            ),
            (
                "    api_key: Optional[str] = 'Zq8xwLm2pe'",
                "    api_key: Optional[str] = '[REDACTED]'",
            ),
            (
                r#"val password: String = "Zq8xwLm2pe""#,
                r#"val password: String = "[REDACTED]""#,
            ),
            (
                r#"var password string = "Zq8xwLm2pe""#,
                r#"var password string = "[REDACTED]""#,
            ),
            (
                r#"let password: &str = "Zq8xwLm2pe";"#,
                r#"let password: &str = "[REDACTED]";"#,
            ),
            (
                "token: str | None = 'Zq8xwLm2pe'",
                "token: str | None = '[REDACTED]'",
            ),
        ];
        for (text, want) in cases {
            assert_eq!(redact(text), want, "{text}");
        }
    }

    #[test]
    fn annotations_and_lookups_are_not_values() {
        for text in [
            "def f(password: str, user: str):",
            "token: SecretStr",
            "    api_key: Optional[str]",
            r#"password = os.environ["DB_PASSWORD"]"#,
            r#"token = os.environ.get("API_KEY")"#,
            "password: str = os.environ['X']",
            "secret = getpass()",
            r#"$password = $_ENV['DB_PASSWORD'] ?? null;"#,
            "export DB_PASSWORD=${DB_PASSWORD} PGPASSWORD=${PGPASSWORD:?unset}",
            r#"if token == "" || password === undefined {"#,
            "mysql --password -h db",
            "login --token --verbose",
            "password: -",
            r#"{"token_count":512,"prompt_tokens":12,"completion_tokens":30,"max_tokens": 4096}"#,
            "tokens: 1234 of 8192 used; inputTokens=25",
            "password: ******** (hidden) password=*** password=<redacted> secret: [REDACTED]",
            r#"api_key: "{{ api_key }}" password: "%(password)s" token=%s secret={secret}"#,
            "password: <your-password-here>",
        ] {
            assert_eq!(redact(text), text);
        }
        assert_eq!(
            redact(r#"token := "Zq8xwLm2pe"; key := os.Getenv("API_KEY")"#),
            r#"token := "[REDACTED]"; key := os.Getenv("API_KEY")"#
        );
        // A number after a secret's name that does not count tokens is still a value.
        assert_eq!(redact("pin_token=123456"), "pin_token=[REDACTED]");
        assert_eq!(redact("auth_tokens=k9-x2"), "auth_tokens=[REDACTED]");
        assert_eq!(redact("password=1234"), "password=[REDACTED]");
        // Not an annotation: a value with ` = ` in it is still a value.
        assert_eq!(redact("password: hunter2 = x"), "password: [REDACTED]");
        assert_eq!(
            redact("x password: hunter2 = x"),
            "x password: [REDACTED] = x"
        );
    }
}
