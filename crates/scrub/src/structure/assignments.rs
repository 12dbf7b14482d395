//! `name=value`, `name: value`, `"name": "value"` and `--name value`, found by a scan of
//! names: a value goes when its name is a secret's.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;

use super::super::marker::REDACTED;
use super::super::names::{
    GENERATED_MIN, NOT_SECRETS, generated_char, looks_generated, looks_generated_strictly,
    names_a_credential_context, names_a_secret,
};
use super::query::is_query_name;
use super::values::{ahead, value_span};

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
    let mut out = String::new();
    let mut copied = 0;
    let mut at = 0;
    while let Some((name_start, name_end, sep_end)) = next_assignment(text, at) {
        at = name_end;
        let Some((value_start, value_end)) = secret_value(text, name_start, name_end, sep_end)
        else {
            continue;
        };
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

/// The range of the secret value of the assignment whose name is `name_start..name_end`
/// and whose separator ends at `sep_end`, if its name is a secret's and the value is one.
fn secret_value(
    text: &str,
    name_start: usize,
    name_end: usize,
    sep_end: usize,
) -> Option<(usize, usize)> {
    let name = &text[name_start..name_end];
    // Query parameters and placeholders (`${DB_PASSWORD:?unset}`) have rules of their own.
    if is_query_name(text, name_start, name_end) || text[..name_start].ends_with("${") {
        return None;
    }
    let strong = names_a_secret(name);
    if !strong && !names_a_credential_context(name) {
        return None;
    }
    // `word value` is prose; `--flag value` pairs count, and so does a credential word
    // right before a value that can only be a generated credential (`api key 9f…`).
    let separator = &text[name_end..sep_end];
    let spaced = separator.trim_matches([' ', '\t']).is_empty();
    let annotated = separator.contains(':') || spaced;
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
    let scope = if strong {
        text
    } else {
        let reach = ahead(text, from, 520);
        let b = &text.as_bytes()[from..reach];
        let inner_equals = (0..b.len())
            .find(|&i| b[i] == b'=' && b.get(i + 1).is_some_and(|c| c.is_ascii_alphanumeric()));
        &text[..inner_equals.map_or(reach, |i| from + i)]
    };
    // A bare value starts at `from` and, to look generated, is all of generated_char: when
    // that run is too short, no reading of the value can make it secret. (Checked before
    // the value's framing is read, which costs far more.)
    if !strong
        && text
            .as_bytes()
            .get(from)
            .is_some_and(|&c| generated_char(c))
    {
        let run = scope.as_bytes()[from..]
            .iter()
            .take_while(|&&c| generated_char(c))
            .count();
        if run < GENERATED_MIN {
            return None;
        }
    }
    let (value_start, value_end) = value_span(scope, name_start, from);
    let value = &text[value_start..value_end];
    let prose_pair = spaced && !name.starts_with('-') && typed.is_none();
    if prose_pair && !looks_generated_strictly(value) || !strong && !looks_generated(value) {
        return None;
    }
    let quoted = value_start > 0 && text[..value_start].ends_with(['"', '\'']);
    let prose = !quoted
        && (NOT_SECRETS.iter().any(|w| value.eq_ignore_ascii_case(w))
            || http_status_at(text, value_start)
            || annotated && is_type(value)
            || is_code(value));
    let done = text[value_start..].starts_with(REDACTED)
        // `PWD={[REDACTED]}`: a marker in the value's own brackets is done.
        || value.trim_matches(['{', '}', '(', ')']) == REDACTED
        || is_stand_in(value)
        || counts_tokens(name, value);
    (!value.is_empty() && !prose && !done).then_some((value_start, value_end))
}

/// A value that stands in for the secret, not the secret: a mask (`********`, `***`,
/// `<redacted>`, `(hidden)`) or a template's placeholder (`{{ api_key }}`, `%(password)s`,
/// `%s`, `{password}`, `<your-token>`).
fn is_stand_in(value: &str) -> bool {
    STAND_IN.is_match(value)
}

static STAND_IN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"^(?:[*•x]{3,}|[*•]+|\{\{[^{}]*\}\}|\{%[^{}]*%\}|%\(\w+\)[sdr]|%[sdr]|\{\w*\}",
        r"|<[\w\-. ]{1,40}>|\[(?i:redacted|hidden|masked|filtered|secret)\]",
        r"|\((?i:redacted|hidden|masked|filtered)\))$",
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
    CODE.is_match(value)
}

static CODE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:\$\{.*\}|\$?[A-Za-z_]\w*(?:(?:\.|::|->)[A-Za-z_]\w*)*(?:\(.*\)|\[.*\]))$")
        .expect("valid pattern")
});

#[cfg(test)]
mod tests {
    use super::super::redact;

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
        assert_eq!(redact("password: hunter2 = x"), "password: [REDACTED] = x");
    }
}
