//! Properties of the whole scrubber, on generated text, with no exact values known (the
//! first layer off), so that what is found is found by shape and by where it stands.
//!
//! - Every row's token, generated from its sample template, goes wherever it is written:
//!   in prose, quoted, in JSON, as `key=value` and YAML, in a URL's user info and query, in
//!   a header, after a `set -x` flag. Everything else on the line stays as it was.
//! - Scrubbing is idempotent: `scrub(scrub(x)) == scrub(x)` for generated text mixing
//!   tokens, secret names, separators, quotes, markers and noise.

use super::formats::sample::{self, Rng};
use super::formats::{self, Format};
use super::{REDACTED, Scrubber};

/// Tokens generated per row and framing.
const TRIES: u64 = 8;

/// How a line holds a token. `{T}` is the token (with any text its row keeps in front);
/// `{K}` in `expect` is what must be left: the kept text and the marker.
struct Framing {
    name: &'static str,
    line: &'static str,
    expect: &'static str,
    /// Whether the framing only makes sense for a bare token (not a webhook URL whose path
    /// a row keeps, and not a token with characters a URL's user info cannot hold).
    bare_only: bool,
}

const fn framing(name: &'static str, line: &'static str, expect: &'static str) -> Framing {
    Framing {
        name,
        line,
        expect,
        bare_only: false,
    }
}

#[rustfmt::skip]
const FRAMINGS: &[Framing] = &[
    framing("prose", "sync failed: upstream rejected {T} at step 3", "sync failed: upstream rejected {K} at step 3"),
    framing("double-quoted", "using \"{T}\" for the upload", "using \"{K}\" for the upload"),
    framing("single-quoted", "+ echo '{T}' > /run/app/cred", "+ echo '{K}' > /run/app/cred"),
    framing("json-neutral", r#"{"event":"deploy","value":"{T}","retry":false}"#, r#"{"event":"deploy","value":"{K}","retry":false}"#),
    framing("parenthesised", "client(config={T}) returned 401", "client(config={K}) returned 401"),
    framing("line-end", "last value seen: {T}", "last value seen: {K}"),
    Framing { name: "json-named", line: r#"{"user":"ci","api_key":"{T}","retry":false}"#, expect: r#"{"user":"ci","api_key":"[REDACTED]","retry":false}"#, bare_only: true },
    Framing { name: "env-assignment", line: "API_TOKEN={T} ./sync.sh --full", expect: "API_TOKEN=[REDACTED] ./sync.sh --full", bare_only: true },
    Framing { name: "yaml", line: "  client_secret: {T}", expect: "  client_secret: [REDACTED]", bare_only: true },
    Framing { name: "query", line: "GET https://api.example.com/v2/items?page=2&access_token={T}&limit=50 -> 401", expect: "GET https://api.example.com/v2/items?page=2&access_token=[REDACTED]&limit=50 -> 401", bare_only: true },
    Framing { name: "userinfo", line: "fatal: https://ci:{T}@git.example.com/app.git not found", expect: "fatal: https://[REDACTED]@git.example.com/app.git not found", bare_only: true },
    Framing { name: "header", line: "> X-Api-Key: {T}", expect: "> X-Api-Key: [REDACTED]", bare_only: true },
    Framing { name: "bearer", line: "> Authorization: Bearer {T}", expect: "> Authorization: [REDACTED]", bare_only: true },
    Framing { name: "set-x-flag", line: "+ deploy --token {T} --region eu-west-1", expect: "+ deploy --token [REDACTED] --region eu-west-1", bare_only: true },
];

/// Whether `secret` can stand bare in every framing: no kept text, and nothing a URL's
/// user info, a query value or a shell word would split it at.
fn bare(row: &Format, secret: &str) -> bool {
    row.kept.is_empty() && !secret.contains(['@', '/', ':', '&', '?', '#', '%', '$', '!', '|'])
}

/// The pieces of `secret` (runs of 6 letters or digits or more) that are in `out` but not
/// in the framing around it.
fn surviving<'a>(secret: &'a str, line: &str, out: &str) -> Vec<&'a str> {
    let around = line.replacen(secret, " ", 1);
    secret
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|piece| piece.len() >= 6)
        .filter(|piece| out.matches(piece).count() > around.matches(piece).count())
        .collect()
}

#[test]
fn every_format_goes_in_every_framing_and_the_line_stays() {
    let scrubber = Scrubber::new(Vec::new(), Vec::new());
    let mut problems = Vec::new();
    for (n, row) in formats::all().enumerate() {
        let mut rng = Rng::new(1000 + n as u64);
        for framing in FRAMINGS {
            for _ in 0..TRIES {
                let kept = sample::render(row.kept, &mut rng);
                let secret = sample::render(row.sample, &mut rng);
                if framing.bare_only && !bare(row, &secret) {
                    continue;
                }
                let line = framing.line.replace("{T}", &format!("{kept}{secret}"));
                let expect = framing.expect.replace("{K}", &format!("{kept}{REDACTED}"));
                let out = scrubber.scrub(&line);
                let left = surviving(&secret, &line, &out);
                if out != expect || !left.is_empty() {
                    problems.push(format!(
                        "{} in {}: {line:?}\n    gave {out:?}\n    want {expect:?}",
                        row.title(),
                        framing.name
                    ));
                    break;
                }
            }
        }
    }
    assert!(
        problems.is_empty(),
        "{} problems:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

/// Pieces of text that meet in real logs and interact in the layers.
const PIECES: &[&str] = &[
    "password",
    // The vendor-style prefixes and the separator that the randomness test and the glue
    // around a token read (`vendor_body`, `glued`).
    "ab-",
    "sk_",
    "token",
    "api_key",
    "secret",
    "Authorization",
    "Bearer",
    "user",
    "key",
    "=",
    ": ",
    ":",
    "=>",
    "\"",
    "'",
    "\\\"",
    "\\",
    "{",
    "}",
    "[",
    "]",
    "(",
    ")",
    ",",
    ";",
    "&",
    "?",
    "@",
    "/",
    "%",
    "%3D",
    "+",
    "-",
    "--password",
    "-p",
    "-u",
    " ",
    "  ",
    "\n",
    "\t",
    "https://",
    "postgres://",
    "app:pw@db",
    "ops@example.com",
    "+44 20 7946 0958",
    "4111 1111 1111 1111",
    "[REDACTED]",
    "[REDACT",
    "ED]",
    "REDACTED",
    "é",
    "€",
    "\u{2028}",
];

/// A generated line: pieces, rendered samples of random rows, and random characters.
fn generated(rng: &mut Rng, rows: &[&Format]) -> String {
    let mut text = String::new();
    for _ in 0..1 + rng.below(24) {
        match rng.below(4) {
            0 => {
                let row = rows[rng.below(rows.len())];
                text.push_str(&sample::render(row.kept, rng));
                text.push_str(&sample::render(row.sample, rng));
            }
            1 => text.push_str(&sample::render("{b64:12}", rng)),
            _ => text.push_str(PIECES[rng.below(PIECES.len())]),
        }
    }
    text
}

#[test]
fn scrubbing_twice_gives_what_scrubbing_once_gave() {
    let rows: Vec<&Format> = formats::all().collect();
    let scrubber = Scrubber::new(Vec::new(), Vec::new());
    let mut rng = Rng::new(7);
    for _ in 0..3000 {
        let text = generated(&mut rng, &rows);
        let once = scrubber.scrub(&text);
        let twice = scrubber.scrub(&once);
        assert_eq!(twice, once, "from {text:?}");
    }
}

/// A shape of token no row describes: an alphabet, a length range, and whether a random
/// vendor-style prefix (`xq_`, `vbnm-`) stands before it.
struct Shape {
    name: &'static str,
    alphabet: &'static [u8],
    lengths: std::ops::Range<usize>,
    prefixed: bool,
    /// Least share caught in framings that do not name the token (the randomness test
    /// alone); where a name or position says it is a secret, every one must go.
    least: f64,
}

#[rustfmt::skip]
const SHAPES: &[Shape] = &[
    Shape { name: "base62", alphabet: b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", lengths: 24..49, prefixed: false, least: 0.97 },
    Shape { name: "base64url", alphabet: b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", lengths: 24..49, prefixed: false, least: 0.95 },
    Shape { name: "letters", alphabet: b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz", lengths: 24..41, prefixed: false, least: 0.95 },
    Shape { name: "base36", alphabet: b"abcdefghijklmnopqrstuvwxyz0123456789", lengths: 28..49, prefixed: false, least: 0.9 },
    Shape { name: "base32", alphabet: b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", lengths: 32..57, prefixed: false, least: 0.9 },
    Shape { name: "prefixed base62", alphabet: b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", lengths: 16..41, prefixed: true, least: 0.95 },
    // A random prefix may come out as an id's label (`uuid-`, `run_`), and then stays.
    Shape { name: "prefixed hex", alphabet: b"0123456789abcdef", lengths: 32..65, prefixed: true, least: 0.95 },
];

/// A token of `shape`, from `rng`.
fn shaped(shape: &Shape, rng: &mut fastrand::Rng) -> String {
    let mut token = String::new();
    if shape.prefixed {
        for _ in 0..rng.usize(2..7) {
            token.push(rng.lowercase());
        }
        // A hex body is a credential after `_` only (`-` joins content hashes to names).
        let hex = shape.alphabet.iter().all(u8::is_ascii_hexdigit);
        token.push(if hex || rng.bool() { '_' } else { '-' });
    }
    for _ in 0..rng.usize(shape.lengths.clone()) {
        token.push(char::from(
            shape.alphabet[rng.usize(..shape.alphabet.len())],
        ));
    }
    token
}

/// Random tokens of shapes no row describes, in every framing: where a name or position
/// marks the token (a credential's name, user info, a header, a flag) every one goes; in
/// neutral text, the randomness test catches at least each shape's share. Whenever a
/// token goes, the rest of the line stays as it was.
#[test]
fn random_tokens_of_every_shape_go_in_every_framing_and_the_line_stays() {
    let scrubber = Scrubber::new(Vec::new(), Vec::new());
    let mut problems = Vec::new();
    for (n, shape) in SHAPES.iter().enumerate() {
        let mut rng = fastrand::Rng::with_seed(4242 + n as u64);
        for framing in FRAMINGS {
            let (mut tried, mut kept) = (0, 0);
            for _ in 0..40 {
                let secret = shaped(shape, &mut rng);
                let line = framing.line.replace("{T}", &secret);
                let expect = framing.expect.replace("{K}", REDACTED);
                let out = scrubber.scrub(&line);
                tried += 1;
                if out == line {
                    kept += 1;
                    if framing.bare_only {
                        problems.push(format!("{} kept in {}: {line:?}", shape.name, framing.name));
                    }
                } else if out != expect || !surviving(&secret, &line, &out).is_empty() {
                    problems.push(format!(
                        "{} in {}: {line:?}\n    gave {out:?}\n    want {expect:?}",
                        shape.name, framing.name
                    ));
                }
            }
            let caught = f64::from(tried - kept) / f64::from(tried);
            if caught < shape.least {
                problems.push(format!(
                    "{} in {}: {caught:.2} caught, at least {} wanted",
                    shape.name, framing.name, shape.least
                ));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "{} problems:\n{}",
        problems.len(),
        problems.join("\n")
    );
}
