//! What the scrubber learns from a text, and how a learned value may be written out.
//!
//! The layers replace values through `marker::splice`, which keeps what each range held
//! while the scrubber learns (`whole`). Not every piece is worth looking for again: a value
//! shorter than [`MIN_LEN`] characters would hit ordinary words, and numbers, booleans and
//! paths are what ordinary text is made of. A piece that is `user:password` (URL user info)
//! also teaches its password, and a piece of several words (`Bearer <token>`, a header's
//! value) each word that cannot be an ordinary one.
//!
//! A learned value is looked for written as it was and as programs re-encode it
//! ([`spellings`], matched in any case): percent-encoded (only what must be, or every
//! byte), JSON-escaped, shell-escaped (a backslash before each special character, or
//! `'\''` for a single quote), and as hex. Its base64 forms ([`base64_cores`], matched as
//! they are) are the part of the encoding that the value alone decides, at each of the
//! three alignments it can have after a prefix (`user:value`, `\0user\0value`), so that
//! any base64 text carrying it is found.

use std::collections::HashSet;

/// Fewest characters of a learned value.
pub(crate) const MIN_LEN: usize = 6;
/// Most bytes of a learned value: longer pieces are blocks (a private key's body) that
/// their own rule finds whole, and would make the pattern large.
const MAX_LEN: usize = 512;
/// Fewest characters of a base64 core: shorter runs are too common in base64 text.
const MIN_CORE: usize = 8;
/// Fewest characters of a word learned from a piece of several words.
const MIN_WORD: usize = 8;

/// The values worth learning among the `pieces` the layers replaced, without repeats, in
/// the order first learned. (Repeats are told by a hash set: a text may teach tens of
/// thousands of values, and a search of the list for each would be their square.)
pub(crate) fn values(pieces: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut out = Learned::default();
    for piece in pieces {
        let piece = trim(&piece);
        if !worth_learning(piece) {
            // A path or a number: none of its parts is a secret either.
            continue;
        }
        learn(piece, &mut out);
        if piece.contains(char::is_whitespace) {
            for word in piece.split_whitespace().map(trim) {
                if distinctive(word) {
                    learn(word, &mut out);
                }
            }
        }
    }
    out.list
}

/// The values learned so far, in order, and the same as a set.
#[derive(Default)]
struct Learned {
    list: Vec<String>,
    seen: HashSet<String>,
}

/// Adds `value` to `out` if it is worth learning and new, then what it holds: the password
/// after a user and `:` (URL user info), and what it decodes to when it is base64 of text
/// (`user:password`, `\0user\0password` of SASL PLAIN, a password that AUTH LOGIN sent).
fn learn(value: &str, out: &mut Learned) {
    let mut push = |v: &str| {
        if worth_learning(v) && !out.seen.contains(v) {
            out.seen.insert(v.to_owned());
            out.list.push(v.to_owned());
        }
    };
    push(value);
    if value.contains(char::is_whitespace) {
        return;
    }
    if let Some((_, password)) = value.split_once(':') {
        push(trim(password));
    }
    if let Some(decoded) = decode_base64(value) {
        push(&decoded);
        let last = decoded.rsplit('\0').next().unwrap_or_default();
        push(last);
        if let Some((_, password)) = last.split_once(':') {
            push(password);
        }
    }
}

/// The text `encoded` (base64, either alphabet, padded or not) decodes to, when it is
/// printable UTF-8 (NULs, which separate SASL PLAIN's parts, allowed).
pub(crate) fn decode_base64(encoded: &str) -> Option<String> {
    let mut bits = 0u32;
    let mut count = 0;
    let mut out = Vec::with_capacity(encoded.len() * 3 / 4);
    for c in encoded.trim_end_matches('=').bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        };
        bits = bits << 6 | u32::from(v);
        count += 6;
        if count >= 8 {
            count -= 8;
            out.push((bits >> count) as u8);
        }
    }
    let text = String::from_utf8(out).ok()?;
    let printable = !text.chars().any(|c| c.is_control() && c != '\0');
    printable.then_some(text)
}

/// `piece` without the blanks, quotes and trailing separators around it.
fn trim(piece: &str) -> &str {
    piece
        .trim()
        .trim_matches(|c: char| matches!(c, '\'' | '"' | '`'))
        .trim_end_matches([',', ';'])
}

/// Whether `value` may be learned: long enough, on one line, not a number, a boolean or a
/// path.
pub(crate) fn worth_learning(value: &str) -> bool {
    let number = value
        .chars()
        .all(|c| c.is_ascii_digit() || " +-.,:()/_".contains(c));
    let boolean = matches!(
        value.to_ascii_lowercase().as_str(),
        "true" | "false" | "yes" | "no" | "on" | "off" | "enabled" | "disabled" | "null" | "none"
    );
    let path = ["/", "./", "../", "~/", "\\"]
        .iter()
        .any(|p| value.starts_with(p))
        || value.as_bytes().get(1..3) == Some(b":\\");
    value.chars().count() >= MIN_LEN
        && value.len() <= MAX_LEN
        && !value.contains(['\n', '\r'])
        && !value.contains(super::marker::REDACTED)
        && !number
        && !boolean
        && !path
}

/// A word that cannot be an ordinary one: long, with a digit, punctuation or both cases.
fn distinctive(word: &str) -> bool {
    let b = word.as_bytes();
    let mixed = b.iter().any(u8::is_ascii_uppercase) && b.iter().any(u8::is_ascii_lowercase);
    let other = b.iter().any(|c| !c.is_ascii_alphabetic());
    word.chars().count() >= MIN_WORD && (mixed || other)
}

/// The ways `value` is written out that are looked for in any case: as it is,
/// percent-encoded, JSON-escaped, shell-escaped and as hex; without repeats.
pub(crate) fn spellings(value: &str) -> Vec<String> {
    let mut out = vec![value.to_owned()];
    let mut push = |s: String| {
        if !out.contains(&s) {
            out.push(s);
        }
    };
    push(percent(value, false, false));
    push(percent(value, false, true));
    push(percent(value, true, false));
    push(json(value, false));
    push(json(value, true));
    push(shell_backslashed(value));
    push(value.replace('\'', r"'\''"));
    push(value.bytes().map(|b| format!("{b:02x}")).collect());
    out
}

/// `value` percent-encoded: every byte when `all`, else those a URL component may not
/// hold bare; a space as `+` when `plus` (a form body).
fn percent(value: &str, all: bool, plus: bool) -> String {
    let mut out = String::with_capacity(value.len() * 3);
    for b in value.bytes() {
        let bare = b.is_ascii_alphanumeric() || b"-._~".contains(&b);
        match b {
            b' ' if plus => out.push('+'),
            _ if bare && !all => out.push(char::from(b)),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// `value` as a JSON string's inside: `"` and `\` escaped, control characters as `\uXXXX`;
/// when `everything`, also `/` as `\/` and `<`, `>`, `&`, `'` and every non-ASCII
/// character as `\uXXXX` (as HTML-safe encoders write them).
fn json(value: &str, everything: bool) -> String {
    let mut out = String::with_capacity(value.len() * 2);
    for c in value.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '/' if everything => out.push_str("\\/"),
            c if c.is_control() || (everything && (!c.is_ascii() || "<>&'".contains(c))) => {
                let mut units = [0; 2];
                for unit in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
            c => out.push(c),
        }
    }
    out
}

/// `value` with a backslash before every character a shell would read (as bash's
/// `printf %q` and `set -x` traces write a word).
fn shell_backslashed(value: &str) -> String {
    let mut out = String::with_capacity(value.len() * 2);
    for c in value.chars() {
        if " !\"#$&'()*;<>?[\\]^`{|}~".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

const STANDARD: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const URL_SAFE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// The base64 characters that `value` alone decides, in each alphabet, at each of the three
/// places it can start in a group of three bytes; cores shorter than [`MIN_CORE`] are left
/// out.
pub(crate) fn base64_cores(value: &str) -> Vec<String> {
    let mut out = Vec::new();
    for shift in 0..3 {
        let mut bytes = vec![0; shift];
        bytes.extend_from_slice(value.as_bytes());
        // Characters wholly inside the value's bits: from the first after the filler's
        // bits to the last before the end's zero padding.
        let first = (8 * shift).div_ceil(6);
        let last = 8 * bytes.len() / 6;
        if last < first + MIN_CORE {
            continue;
        }
        for alphabet in [STANDARD, URL_SAFE] {
            let core: String = encode(&bytes, alphabet)[first..last].to_owned();
            if !out.contains(&core) {
                out.push(core);
            }
        }
    }
    out
}

/// `bytes` in base64 without padding.
fn encode(bytes: &[u8], alphabet: &[u8; 64]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(char::from(alphabet[(n >> (18 - 6 * i)) as usize & 63]));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_learned() {
        let pieces = [
            "Winter42harbor$",
            "'Quoted9value'",
            "app:Xk29fjQmLr",
            "Bearer Zq8vN2xLw4Rt",
            "short",
            "12345678",
            "+44 20 7946 0958",
            "/etc/secret/path",
            "C:\\secrets\\x",
            "enabled",
            "two\nlines here",
            "correct horse battery staple",
            "YXBwOldpbnRlcjQyaGFyYm9yJA==",
            "AGFwcABTdW1tZXIxOWZqb3JkIQ==",
        ]
        .map(String::from);
        assert_eq!(
            values(pieces),
            [
                "Winter42harbor$",
                "Quoted9value",
                "app:Xk29fjQmLr",
                "Xk29fjQmLr",
                "Bearer Zq8vN2xLw4Rt",
                "Zq8vN2xLw4Rt",
                "correct horse battery staple",
                "YXBwOldpbnRlcjQyaGFyYm9yJA==",
                "app:Winter42harbor$",
                "AGFwcABTdW1tZXIxOWZqb3JkIQ==",
                "\0app\0Summer19fjord!",
                "Summer19fjord!",
            ]
        );
    }

    #[test]
    fn spellings_of_a_value() {
        let all = spellings("p@ss w/\"q'");
        for want in [
            "p@ss w/\"q'",
            "p%40ss%20w%2F%22q%27",
            "p%40ss+w%2F%22q%27",
            "%70%40%73%73%20%77%2F%22%71%27",
            "p@ss w/\\\"q'",
            "p@ss w\\/\\\"q\\u0027",
            "p@ss\\ w/\\\"q\\'",
            "p@ss w/\"q'\\''",
            "704073732077 2f22 7127".replace(' ', "").as_str(),
        ] {
            assert!(all.iter().any(|s| s == want), "{want} not in {all:?}");
        }
    }

    #[test]
    fn base64_cores_are_inside_every_encoding_that_carries_the_value() {
        // Encodings written out by hand: base64 of the value, of `user:value`, of
        // `\0user\0value` (SASL PLAIN), and base64url of `ab:value`.
        let value = "Winter42harbor$";
        let cores = base64_cores(value);
        for encoded in [
            "V2ludGVyNDJoYXJib3Ik",
            "YXBwOldpbnRlcjQyaGFyYm9yJA==",
            "AGFwcABXaW50ZXI0MmhhcmJvciQ=",
            "YWI6V2ludGVyNDJoYXJib3Ik",
        ] {
            assert!(
                cores.iter().any(|c| encoded.contains(c.as_str())),
                "{encoded}: {cores:?}"
            );
        }
        assert!(base64_cores("abcdef").len() <= 2);
    }
}
