//! Credentials written as the default of a lookup by name, or as the value of a (name,
//! value) pair, in code that a job echoes or a traceback quotes:
//!
//! - a string literal that names a secret, then `,` and a string literal: the default of
//!   `os.getenv("DB_PASSWORD", "…")`, `os.environ.get('API_KEY', '…')`,
//!   `ENV.fetch("SECRET_TOKEN", "…")`, `getProperty("db.password", "…")`, and the value of
//!   `("password", "…")` in a list of pairs: the name opens the call or the pair and the
//!   value closes it (`["API_KEY", "DB_PASSWORD"]` is a list of names); also Ruby's block default
//!   (`ENV.fetch("SECRET_TOKEN") { "…" }`) and `env::var("API_TOKEN").unwrap_or("…")`;
//! - a secret's name as the value of `name` or `key`, then `value` and the secret: a
//!   Kubernetes `env` entry (`- name: DB_PASSWORD` then `value: …`), ECS's
//!   `{"name": "API_TOKEN", "value": "…"}`, `<property name="password" value="…"/>`;
//! - a secret's name, then `||`, `??`, `or`, `//` or `?:` and a string literal:
//!   `process.env.API_TOKEN || "…"`, `os.environ.get("API_KEY") or "…"`,
//!   `$ENV{DB_PASSWORD} // "…"`;
//! - a placeholder's default: shell `${DB_PASSWORD:-…}`, `${DB_PASSWORD-…}`, `:=`, `=`,
//!   and Spring's `${db.password:…}`, up to the brace that closes the placeholder (a
//!   default that is itself a reference, `${A:-$B}`, stays). `${X:?message}` is an error
//!   message and `${X:+…}` an alternative, and both stay.
//!
//! Only the literal's inside goes; its quotes and the name stay. A literal that starts a
//! sentence (`("password", "is too short")`, by [`NOT_SECRETS`]) stays. Limits: the name
//! must be a literal or an identifier right before the default; a default built by an
//! expression (`"pw" + suffix`) loses only its first literal, and a default on another line
//! than its name is not seen. Any call whose first two arguments are a secret's name and a
//! literal is read as a name and its value, so `replace("password", "x")` loses `x`.

use std::sync::LazyLock;

use regex::Regex;

use super::super::names::{NOT_SECRETS, names_a_secret};
use super::values::{Framings, REACH, literal_at, value_span};

/// A string literal naming something, then what makes the next literal its value. Group 1
/// the name.
static NAME_THEN_VALUE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r#"["']([A-Za-z_][A-Za-z0-9_.\-]{2,63})["']\s*"#,
        r"(?:,\s*(?:default\s*[=:]\s*)?|\)\s*\{\s*",
        r"|\)\s*\.\s*(?:unwrap_or|unwrap_or_else|or_else|orElse|getOrElse)\s*\(\s*(?:\|[^|\n]*\|\s*)?)",
    ))
    .expect("valid pattern")
});

/// A name, then an operator whose right side is its fallback. Group 1 the name.
static NAME_OR: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?-u:\b)([A-Za-z_][A-Za-z0-9_\-]*)["']?[\])}]*\s*(?:\|\||\?\?|//|\?:|(?-u:\b)or(?-u:\b))\s*"#)
        .expect("valid pattern")
});

/// Byte ranges of the secrets in `text`: defaults and pair values.
pub(super) fn secrets(text: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    if text.contains(['"', '\'']) {
        pairs(text, &mut spans);
        fallbacks(text, &mut spans);
    }
    named_values(text, &mut spans);
    if text.contains("${") {
        placeholders(text, &mut spans);
    }
    spans
}

/// Whether the inside of a literal is a value to redact: not empty, not already a marker,
/// not the start of a sentence.
pub(super) fn is_value(value: &str) -> bool {
    let first_word = value.split(' ').next().unwrap_or("");
    let sentence = value.contains(' ') && NOT_SECRETS.contains(&first_word);
    !value.is_empty() && !value.starts_with(super::super::marker::REDACTED) && !sentence
}

fn pairs(text: &str, spans: &mut Vec<(usize, usize)>) {
    for caps in NAME_THEN_VALUE.captures_iter(text) {
        let (Some(whole), Some(name)) = (caps.get(0), caps.get(1)) else {
            continue;
        };
        // The name opens the pair or the call, and the value closes it (or has a method
        // called on it): in `["API_TOKEN", "API_KEY", "DB_PASSWORD"]` and
        // `{"name": "API_TOKEN", "value": …}` the literals are names.
        let lead = text[..whole.start()].trim_end_matches([' ', '\t']);
        if !lead.ends_with(['(', '[', '{']) || !names_a_secret(name.as_str()) {
            continue;
        }
        if let Some((inner, close, after)) = literal_at(text, whole.end())
            && is_value(&text[inner..close])
            && text[after..].trim_start().starts_with([')', ']', '}', '.'])
        {
            spans.push((inner, close));
        }
    }
}

/// A secret's name given as the value of `name` or `key`, then `value` and the secret: a
/// Kubernetes `env` entry (`- name: DB_PASSWORD` and `value: …` on the next line), ECS and
/// GitHub `{"name": "API_TOKEN", "value": "…"}`, Terraform, `<property name="password"
/// value="…"/>`. Group 1 the secret's name, group 2 the word `value`.
static NAMED_VALUE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r#"(?i)(?-u:\b)(?:name|key|parameter_?(?:key|name)|variable)["']?[\ \t]*[:=][\ \t]*["']?"#,
        r#"([A-Za-z_][A-Za-z0-9_.\-]*)["']?[\ \t]*[,;]?\s*"#,
        r#"["']?(value|parameter_?value)["']?[\ \t]*[:=][\ \t]*"#,
    ))
    .expect("valid pattern")
});

fn named_values(text: &str, spans: &mut Vec<(usize, usize)>) {
    let mut framings = Framings::default();
    for caps in NAMED_VALUE.captures_iter(text) {
        let (Some(whole), Some(name), Some(word)) = (caps.get(0), caps.get(1), caps.get(2)) else {
            continue;
        };
        if !names_a_secret(name.as_str()) {
            continue;
        }
        let (start, end) = value_span(&mut framings, text, word.start(), whole.end());
        if is_value(&text[start..end]) {
            spans.push((start, end));
        }
    }
}

fn fallbacks(text: &str, spans: &mut Vec<(usize, usize)>) {
    for caps in NAME_OR.captures_iter(text) {
        let (Some(whole), Some(name)) = (caps.get(0), caps.get(1)) else {
            continue;
        };
        if !names_a_secret(name.as_str()) {
            continue;
        }
        if let Some((inner, close, _)) = literal_at(text, whole.end())
            && is_value(&text[inner..close])
        {
            spans.push((inner, close));
        }
    }
}

/// `${NAME:-default}` and `${name:default}`: the default's range, up to the `}` that closes
/// the placeholder.
fn placeholders(text: &str, spans: &mut Vec<(usize, usize)>) {
    let b = text.as_bytes();
    let mut from = 0;
    while let Some(found) = text[from..].find("${") {
        let start = from + found + 2;
        from = start;
        let word = |dash: bool| {
            b[start..]
                .iter()
                .take_while(|&&c| {
                    c.is_ascii_alphanumeric() || c == b'_' || c == b'.' || dash && c == b'-'
                })
                .count()
        };
        // Shell names hold no `-`, so `${DB_PASSWORD-…}` is a default; Spring's may
        // (`${db-password:…}`).
        let default = [word(false), word(true)].into_iter().find_map(|len| {
            let name = &text[start..start + len];
            let sep = match &b[start + len..] {
                [b':', b'-' | b'=', ..] => 2,
                [b':', b'?' | b'+', ..] => return None,
                [b':' | b'-' | b'=', ..] => 1,
                _ => return None,
            };
            (len > 0 && names_a_secret(name)).then_some(start + len + sep)
        });
        let Some(value_start) = default else {
            continue;
        };
        let Some(close) = placeholder_end(b, value_start) else {
            continue;
        };
        let (mut inner, mut end) = (value_start, close);
        if let Some((i, c, after)) = literal_at(text, value_start)
            && after == close
        {
            (inner, end) = (i, c);
        }
        if text[inner..end].starts_with('$') || !is_value(&text[inner..end]) {
            continue;
        }
        spans.push((inner, end));
        from = close;
    }
}

/// The `}` that closes a placeholder whose default starts at `from`, past nested braces,
/// within [`REACH`] bytes.
fn placeholder_end(b: &[u8], from: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, &c) in b.iter().enumerate().skip(from).take(REACH) {
        match c {
            b'{' => depth += 1,
            b'}' if depth == 0 => return Some(i),
            b'}' => depth -= 1,
            b'\n' => return None,
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::super::redact;

    #[test]
    fn lookup_defaults_lose_their_value() {
        let cases = [
            (
                r#"os.getenv("DB_PASSWORD", "Zq8xwLm2pe")"#,
                r#"os.getenv("DB_PASSWORD", "[REDACTED]")"#,
            ),
            (
                "os.environ.get('API_KEY', 'Zq8 xw')",
                "os.environ.get('API_KEY', '[REDACTED]')",
            ),
            (
                r#"ENV.fetch("SECRET_TOKEN", "Zq8xwLm2pe")"#,
                r#"ENV.fetch("SECRET_TOKEN", "[REDACTED]")"#,
            ),
            (
                r#"ENV.fetch("SECRET_TOKEN") { "Zq8xwLm2pe" }"#,
                r#"ENV.fetch("SECRET_TOKEN") { "[REDACTED]" }"#,
            ),
            (
                r#"props.getProperty("db.password", "P@ss!w0rd#2024")"#,
                r#"props.getProperty("db.password", "[REDACTED]")"#,
            ),
            (
                r#"os.getenv("API_TOKEN", default="Zq8xwLm2pe")"#,
                r#"os.getenv("API_TOKEN", default="[REDACTED]")"#,
            ),
            (
                r#"env::var("API_TOKEN").unwrap_or("Zq8xwLm2pe".into())"#,
                r#"env::var("API_TOKEN").unwrap_or("[REDACTED]".into())"#,
            ),
            (
                r#"pairs = [("user", "bob"), ("password", "Zq8xwLm2pe")]"#,
                r#"pairs = [("user", "bob"), ("password", "[REDACTED]")]"#,
            ),
        ];
        for (text, want) in cases {
            assert_eq!(redact(text), want, "{text}");
        }
    }

    #[test]
    fn values_named_by_a_name_or_key_lose_their_value() {
        let cases = [
            (
                "- name: DB_PASSWORD\n  value: \"Zq8xwLm2pe\"\n- name: LOG_LEVEL\n  value: info",
                "- name: DB_PASSWORD\n  value: \"[REDACTED]\"\n- name: LOG_LEVEL\n  value: info",
            ),
            (
                r#"{"name": "API_TOKEN", "value": "Zq8xwLm2pe"}, {"name": "REGION", "value": "eu"}"#,
                r#"{"name": "API_TOKEN", "value": "[REDACTED]"}, {"name": "REGION", "value": "eu"}"#,
            ),
            (
                r#"<property name="password" value="P@ss!w0rd#2024$%^&*()"/>"#,
                r#"<property name="password" value="[REDACTED]"/>"#,
            ),
            (
                "ParameterKey=DbPassword,ParameterValue=Zq8xwLm2pe",
                "ParameterKey=DbPassword,ParameterValue=[REDACTED]",
            ),
        ];
        for (text, want) in cases {
            assert_eq!(redact(text), want, "{text}");
        }
    }

    #[test]
    fn fallbacks_lose_their_value() {
        let cases = [
            (
                r#"const t = process.env.API_TOKEN || "Zq8xwLm2pe";"#,
                r#"const t = process.env.API_TOKEN || "[REDACTED]";"#,
            ),
            (
                "const t = process.env['API_TOKEN'] ?? 'Zq8xwLm2pe';",
                "const t = process.env['API_TOKEN'] ?? '[REDACTED]';",
            ),
            (
                r#"key = os.environ.get("API_KEY") or "Zq8xwLm2pe""#,
                r#"key = os.environ.get("API_KEY") or "[REDACTED]""#,
            ),
            (
                r#"my $pw = $ENV{DB_PASSWORD} // "Zq8xwLm2pe";"#,
                r#"my $pw = $ENV{DB_PASSWORD} // "[REDACTED]";"#,
            ),
        ];
        for (text, want) in cases {
            assert_eq!(redact(text), want, "{text}");
        }
    }

    #[test]
    fn placeholder_defaults_lose_their_value() {
        let cases = [
            (
                r#"psql "${DB_PASSWORD:-Zq8xwLm2pe}""#,
                r#"psql "${DB_PASSWORD:-[REDACTED]}""#,
            ),
            (
                "echo ${DB_PASSWORD-P@ss!w0rd#2024} done",
                "echo ${DB_PASSWORD-[REDACTED]} done",
            ),
            ("${API_TOKEN:=a{b}c}", "${API_TOKEN:=[REDACTED]}"),
            (
                r#"${API_TOKEN:-"two words"}"#,
                r#"${API_TOKEN:-"[REDACTED]"}"#,
            ),
            (
                r#"@Value("${db.password:Zq8xwLm2pe}")"#,
                r#"@Value("${db.password:[REDACTED]}")"#,
            ),
            (
                "${spring.db-password:P@ss}",
                "${spring.db-password:[REDACTED]}",
            ),
        ];
        for (text, want) in cases {
            assert_eq!(redact(text), want, "{text}");
        }
    }

    #[test]
    fn other_defaults_and_pairs_stay() {
        for text in [
            r#"getenv("HOME", "/root")"#,
            r#"os.getenv("LOG_LEVEL", "info")"#,
            r#"os.getenv("DB_PASSWORD", "")"#,
            r#"errors.add("password", "is too short")"#,
            r#"os.getenv("TOKEN_FILE", "/run/secrets/token")"#,
            r#"const url = process.env.API_URL || "https://api.example.com";"#,
            "${DB_PASSWORD:?must be set} ${API_TOKEN:-$FALLBACK} ${API_TOKEN:+--token}",
            "${HOME:-/root} ${LOG_LEVEL-info}",
            r#"{"keys": ["API_TOKEN", "value", "other"]}"#,
            r#"required: ["API_TOKEN", "API_KEY", "DB_PASSWORD"]"#,
            r#"{"env": {"API_TOKEN", "value": 1}}"#,
            "- name: DB_PASSWORD\n  valueFrom:\n    secretKeyRef: {name: db, key: password}",
        ] {
            assert_eq!(redact(text), text);
        }
    }
}
