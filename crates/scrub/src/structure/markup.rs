//! Secrets as the text of an XML element named for them: `<password>…</password>`,
//! `<ns:ClientSecret>…</ns:ClientSecret>` (Maven's `settings.xml`, SOAP faults, .NET
//! configuration), and the Java properties form `<entry key="db.password">…</entry>`.
//!
//! The element's text goes whole, up to its closing tag; the tags stay. The element must
//! open and close on one line, with no markup inside. Elements named for a location or a
//! fact (`<passwordFile>`, `<tokenExpiry>`) keep their text, by [`names_a_secret`].

use std::sync::LazyLock;

use regex::Regex;

use super::super::names::names_a_secret;
use super::defaults::is_value;

/// An element on one line: group 1 the opening tag's name, 2 its attributes, 3 the text,
/// 4 the closing tag's name.
static ELEMENT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"<([A-Za-z_][\w.\-:]*)(\s[^<>\n]*)?>([^<\n]+)</([A-Za-z_][\w.\-:]*)\s*>")
        .expect("valid pattern")
});

/// `key="…"` or `name="…"` among an element's attributes: group 1 the name it gives.
static NAMING_ATTRIBUTE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?i)(?-u:\b)(?:key|name)\s*=\s*["']([^"'\n]{1,64})["']"#).expect("valid pattern")
});

/// Byte ranges of the secrets that are elements' text.
pub(super) fn secrets(text: &str) -> Vec<(usize, usize)> {
    if !text.contains("</") {
        return Vec::new();
    }
    ELEMENT
        .captures_iter(text)
        .filter_map(|caps| {
            let (open, close, value) = (caps.get(1)?, caps.get(4)?, caps.get(3)?);
            if open.as_str() != close.as_str() || !is_value(value.as_str().trim()) {
                return None;
            }
            let named = caps
                .get(2)
                .and_then(|attrs| NAMING_ATTRIBUTE.captures(attrs.as_str()))
                .is_some_and(|a| names_a_secret(&a[1]));
            (names_a_secret(open.as_str()) || named).then(|| (value.start(), value.end()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::redact;

    #[test]
    fn elements_named_for_a_secret_lose_their_text() {
        let cases = [
            (
                "<password>Zq8xwLm2pe</password>",
                "<password>[REDACTED]</password>",
            ),
            (
                "<server><id>repo</id><password>P@ss!w0rd#2024$%^&*()</password></server>",
                "<server><id>repo</id><password>[REDACTED]</password></server>",
            ),
            (
                "<ns2:ClientSecret>x9 y8 z7</ns2:ClientSecret >",
                "<ns2:ClientSecret>[REDACTED]</ns2:ClientSecret >",
            ),
            (
                r#"<entry key="db.password">Zq8xwLm2pe</entry>"#,
                r#"<entry key="db.password">[REDACTED]</entry>"#,
            ),
        ];
        for (text, want) in cases {
            assert_eq!(redact(text), want, "{text}");
        }
    }

    #[test]
    fn other_elements_keep_their_text() {
        for text in [
            "<passwordFile>/run/secrets/db</passwordFile>",
            "<username>deploy</username><id>repo</id>",
            r#"<entry key="db.user">app</entry>"#,
            "<password></password> <token>\n</token>",
            "<password>x</token>",
        ] {
            assert_eq!(redact(text), text);
        }
    }
}
