//! Redacts credentials recognisable by their shape alone, for text that has no `key=value`
//! context (that case, headers and URL userinfo belong to [`crate`]).
//!
//! Three stages, each becoming [`REDACTED`](crate::REDACTED):
//!
//! 1. **PEM private keys**: `-----BEGIN … PRIVATE KEY-----` (PKCS#8, `RSA`, `EC`, `DSA`,
//!    `OPENSSH`, `ENCRYPTED`, `PGP … KEY BLOCK`) with its armor headers, base64 body and
//!    `-----END …-----` line, as one marker. Without an END line the block stops where the
//!    base64 run does (a line shorter than the first body line is the last one). Bodies
//!    split by spaces or by literal `\n` escapes (JSON) count too. An END line whose BEGIN was
//!    cut off by the tail takes the base64 lines above it.
//! 2. **Provider token shapes**: the table in [`formats`] (about 150 formats: source
//!    hosts, CI, chat webhooks, payments, clouds, AI providers, package registries, mail,
//!    monitoring; JWTs). Text a family keeps (a webhook URL's path, `AccountKey=`) stays.
//! 3. **High-entropy tokens**: a token is a run of `[A-Za-z0-9+/_.-]` plus trailing `=`
//!    padding, bounded by anything else (whitespace, quotes, `=`, `:`, `,`, brackets,
//!    non-ASCII); a trailing `.` is dropped. It goes when all of these hold: at least
//!    [`MIN_TOKEN_LEN`] (32) bytes; upper case, lower case and digits all present (so pure hex
//!    of any length — git SHAs, sha256/sha512 and image digests — UUIDs, timestamps and
//!    lower-case ids stay); not hex-and-dashes only; at most one separator (`+/_.-`) per 8
//!    bytes (paths, dotted class names, version strings stay); Shannon entropy at least
//!    [`MIN_ENTROPY_BITS`] (4.0 bits/char); less than [`MAX_WORDY`] (70 %) of its
//!    alphanumerics in word-like runs (`Word`, `word`, `WORD` of 3+ letters, 3+ digits), which
//!    keeps CamelCase names such as `AccessDeniedExceptionWhileAssumingRole`; and not a base64
//!    digest named as one (`sha512-…`, `sha256:…`, go.sum `h1:…`). A token starting with `/`,
//!    `./`, `../` or `~/` with another `/` is a path: each segment is judged on its own.
//!    Random tokens that stay (calibrated): base62 0.8 % at 32 chars, 0.4 % at 40, 0.01 % at
//!    64; standard base64 up to 1.6 % (a leading `/` reads as a path).
//!
//!    Tokens of one case (random base36 or base32: legacy Azure DevOps PATs, TOTP seeds)
//!    go by their own rule ([`looks_random_single_case`]): letters and digits only, 32 or
//!    more, not hex, 10–60 % digits (5 % when they are base32's 2–7) switching with
//!    letters often, entropy at least
//!    [`MIN_SINGLE_CASE_ENTROPY_BITS`].
//!
//!    Some long tokens are kept because the rule can tell them apart (`benign`): base64
//!    that decodes to English prose (not to binary, `user:pass`, `key=value` or a secret's
//!    name), request and trace ids right after their label (`X-Request-Id:`,
//!    `x-amz-id-2:`, `traceparent:`) and `req_…` ids.
//!
//! 4. **Random-looking tokens of any vendor** ([`random`]): the randomness test judges
//!    each token from its own characters (how its letters follow each other against
//!    English words, character classes, distinct symbols, runs), from 20 characters, or 16
//!    after a vendor-style prefix (`hf_`, `sq0atp-`), which also makes a long hex body a
//!    credential. This stage, not the format table, is what recall rests on: the table
//!    adds precision for documented formats and names them in the README. Tokens here
//!    may also hold `~` (Azure client secrets).
//!
//! Not handled here: hex secrets (a Twilio auth token, a Datadog key) look like digests and
//! go only after a name that says what they are ([`super::structure`]); PuTTY key files.
//! Opaque base64 ids without a label go like any token, as do certificate bodies.
//!
//! Replacements never create a new match, so [`redact`] is idempotent. Patterns compile on
//! first use.
//!
//! The file is long because of its tests (about 450 lines of fixtures and cases); the
//! rules are the first 400.

mod benign;
mod bigrams;
pub mod punctuated;
mod random;

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;

use super::formats;

/// Shortest token the high-entropy rule judges.
pub const MIN_TOKEN_LEN: usize = 32;
/// Least Shannon entropy (bits per character) of a redacted high-entropy token.
pub const MIN_ENTROPY_BITS: f64 = 4.0;
/// A token with at least this share of its alphanumerics in word-like runs is a name.
pub const MAX_WORDY: f64 = 0.7;
/// A base64 body line shorter than this right after BEGIN is not a body.
const MIN_PEM_LINE: usize = 16;

/// A BEGIN or END line of a private key (PKCS#8, RSA, EC, OPENSSH, ENCRYPTED, PGP, …).
static PEM_MARKER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"-----(BEGIN|END) (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")
        .expect("valid pattern")
});

/// An END line right at the start of the haystack.
static PEM_END_HERE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----").expect("valid pattern")
});

/// An armor header right at the start of the haystack (RFC 1421, RFC 4880); group 1 is the
/// line without its line break.
static PEM_HEADER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^((?:Proc-Type|DEK-Info|Version|Comment|Hash|Charset): [ -~]*?)(?:\\[nr]|\r|\n|$)")
        .expect("valid pattern")
});

/// Replaces credentials recognisable by their shape with [`REDACTED`](crate::REDACTED): provider tokens,
/// JWTs, PEM private-key blocks, and long high-entropy standalone tokens.
pub fn redact(text: &str) -> Cow<'_, str> {
    let mut out = Cow::Borrowed(text);
    for stage in [pem_blocks, families, high_entropy] {
        if let Some(changed) = stage(&out) {
            out = Cow::Owned(changed);
        }
    }
    out
}

fn families(text: &str) -> Option<String> {
    splice(text, &formats::find(text))
}

/// `text` with each byte range replaced by the marker, `None` when there are none; ranges
/// are sorted and disjoint.
fn splice(text: &str, ranges: &[(usize, usize)]) -> Option<String> {
    match super::marker::splice(text, ranges, super::marker::Overlap::FirstWins) {
        Cow::Owned(out) => Some(out),
        Cow::Borrowed(_) => None,
    }
}

fn pem_blocks(text: &str) -> Option<String> {
    if !text.contains("PRIVATE KEY") {
        return None;
    }
    let b = text.as_bytes();
    let mut ranges = Vec::new();
    let mut pos = 0;
    while let Some(caps) = PEM_MARKER.captures_at(text, pos) {
        let marker = caps.get(0).expect("group 0 always matches");
        let range = if &caps[1] == "BEGIN" {
            let body_end = body_after(text, marker.end());
            // Positions here follow ASCII bytes only, so they are char boundaries.
            let after = skip_separators(b, body_end);
            let end = PEM_END_HERE
                .find(&text[after..])
                .map_or(body_end, |m| after + m.end());
            (marker.start(), end)
        } else {
            (body_before(b, marker.start(), pos), marker.end())
        };
        pos = range.1;
        ranges.push(range);
    }
    splice(text, &ranges)
}

fn is_b64(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'=')
}

fn is_separator(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r' | b'\n' | b'\\')
}

/// Whether a literal `\n` / `\r` escape (a key inside JSON or a quoted string) ends at `j`.
fn escape_ends_at(b: &[u8], j: usize, floor: usize) -> bool {
    j >= floor + 2 && matches!(b[j - 1], b'n' | b'r') && b[j - 2] == b'\\'
}

/// Past whitespace and literal `\n` / `\r` escapes.
fn skip_separators(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && is_separator(b[i]) {
        i += 1 + usize::from(b[i] == b'\\' && matches!(b.get(i + 1), Some(b'n' | b'r')));
    }
    i
}

/// End of the unit (body line or piece) starting at `j`.
fn unit_end(b: &[u8], j: usize) -> usize {
    (j..b.len())
        .find(|&k| is_separator(b[k]))
        .unwrap_or(b.len())
}

/// End of the armor headers and base64 body that start at `from` (`from` if there is none).
fn body_after(text: &str, from: usize) -> usize {
    let b = text.as_bytes();
    let (mut end, mut i, mut width) = (from, from, None);
    loop {
        let j = skip_separators(b, i);
        if j >= b.len() {
            return end;
        }
        if width.is_none()
            && let Some(header) = PEM_HEADER.captures(&text[j..])
        {
            end = j + header[1].len();
            i = j + header[0].len();
            continue;
        }
        let k = unit_end(b, j);
        let unit = &b[j..k];
        if !unit.iter().all(|&c| is_b64(c)) {
            return end;
        }
        let w = match width {
            None if unit.len() < MIN_PEM_LINE => return end,
            None => *width.insert(unit.len()),
            // A short lower-case word after the body is text, not its last line.
            Some(w) if unit.len() > w || unit.iter().all(u8::is_ascii_lowercase) => return end,
            Some(w) => w,
        };
        end = k;
        i = k;
        if unit.len() < w || unit.ends_with(b"=") {
            // The last body line; an OpenPGP checksum (`=` + 4) may follow.
            let j = skip_separators(b, i);
            let k = unit_end(b, j);
            if k - j == 5 && b[j] == b'=' && b[j..k].iter().all(|&c| is_b64(c)) {
                end = k;
            }
            return end;
        }
    }
}

/// Start of the base64 body that ends at `to` (an END line whose BEGIN is gone), not before
/// `floor`. Lines nearest the END may be short; above the first full line, a short one stops.
fn body_before(b: &[u8], to: usize, floor: usize) -> usize {
    let (mut start, mut seen_full) = (to, false);
    loop {
        let mut j = start;
        while j > floor && (is_separator(b[j - 1]) || escape_ends_at(b, j, floor)) {
            j -= if is_separator(b[j - 1]) { 1 } else { 2 };
        }
        let mut k = j;
        while k > floor && !is_separator(b[k - 1]) && !escape_ends_at(b, k, floor) {
            k -= 1;
        }
        let unit = &b[k..j];
        if unit.is_empty()
            || !unit.iter().all(|&c| is_b64(c))
            || (seen_full && unit.len() < MIN_PEM_LINE)
        {
            return start;
        }
        seen_full |= unit.len() >= MIN_PEM_LINE;
        start = k;
    }
}

fn is_token_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'_' | b'-' | b'.' | b'~')
}

fn high_entropy(text: &str) -> Option<String> {
    let b = text.as_bytes();
    let mut ranges = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if !is_token_byte(b[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && is_token_byte(b[i]) {
            i += 1;
        }
        let mut end = i;
        let padded = (i..b.len()).find(|&j| b[j] != b'=').unwrap_or(b.len());
        if padded > i && (padded == b.len() || !is_token_byte(b[padded])) {
            end = padded;
            i = padded;
        }
        while end > start && b[end - 1] == b'.' {
            end -= 1;
        }
        let token = &text[start..end];
        if token.len() < random::MIN_PREFIXED_LEN || is_labelled_digest(&text[..start], token) {
            continue;
        }
        let is_path = ["/", "./", "../", "~/"]
            .iter()
            .any(|p| token.starts_with(p))
            && token.bytes().filter(|&c| c == b'/').count() >= 2;
        if is_path {
            let mut offset = start;
            for segment in token.split('/') {
                if is_secret_token(segment) {
                    ranges.push((offset, offset + segment.len()));
                }
                offset += segment.len() + 1;
            }
        } else if is_secret_token(token) && !benign::is_benign(&text[..start], token) {
            let (s, e) = glued(text, start, end);
            // Kept disjoint: a piece glued on the left may be what an earlier range took.
            let s = s.max(ranges.last().map_or(0, |r: &(usize, usize)| r.1));
            ranges.push((s, e));
            i = i.max(e);
        }
    }
    splice(text, &ranges)
}

/// How far around a random token pieces glued to it are looked for.
const GLUE_REACH: usize = 256;

/// The range of a random token at `start..end` with the pieces glued to it by `@` or `:`
/// that are no words (a digit in them, or letters in no word's case: `2eNV26JqY@<token>:nIG`,
/// a password with `@` and `:` in it, which the token's characters stop at; no `/` or `.`,
/// so `scott/` of an Oracle logon and a host stay). A word stays (`token:<token>` keeps its name), and so
/// does the rest when the run is a URL (`://`), an e-mail address, a host after `@`
/// (a piece with a `.`) or a Go address (`@tcp(`): their own rules know their parts.
fn glued(text: &str, start: usize, end: usize) -> (usize, usize) {
    let b = text.as_bytes();
    let joined = |c: u8| is_token_byte(c) || c == b'@' || c == b':';
    // Read at most GLUE_REACH bytes either way, so a long run of tokens costs one pass.
    // (The run's ends are ASCII or follow a non-ASCII byte's last: char boundaries.)
    let floor = start.saturating_sub(GLUE_REACH);
    let ceiling = (end + GLUE_REACH).min(b.len());
    let run_start = (floor..start)
        .rev()
        .find(|&i| !joined(b[i]))
        .map_or(floor, |i| i + 1);
    let run_end = (end..ceiling).find(|&i| !joined(b[i])).unwrap_or(ceiling);
    if !text.is_char_boundary(run_start) || !text.is_char_boundary(run_end) {
        return (start, end);
    }
    let run = &text[run_start..run_end];
    if run.contains("://") || b.get(run_end) == Some(&b'(') || !run.contains(['@', ':']) {
        return (start, end);
    }
    let glue = |piece: &str| {
        !piece.is_empty()
            && !piece.contains(['.', '/'])
            && piece.bytes().all(is_token_byte)
            && (piece.bytes().any(|c| c.is_ascii_digit()) || !word_shaped(piece))
    };
    let (mut s, mut e) = (start, end);
    while s > run_start && matches!(b[s - 1], b'@' | b':') {
        let from = (run_start..s - 1)
            .rev()
            .find(|&i| !is_token_byte(b[i]))
            .map_or(run_start, |i| i + 1);
        if !glue(&text[from..s - 1]) {
            break;
        }
        s = from;
    }
    while e < run_end && matches!(b[e], b'@' | b':') {
        let to = (e + 1..run_end)
            .find(|&i| !is_token_byte(b[i]))
            .unwrap_or(run_end);
        if !glue(&text[e + 1..to]) {
            break;
        }
        e = to;
    }
    (s, e)
}

/// Whether a token is a credential by its characters: the long-token rule, or the
/// randomness test, which also judges shorter tokens and vendor-style prefixes.
fn is_secret_token(token: &str) -> bool {
    looks_secret(token) || random::is_credential(token)
}

/// A base64 digest named as such: SRI `sha512-…`, `sha256:…`, go.sum `h1:…`, an SSH key
/// fingerprint `SHA256:…`.
fn is_labelled_digest(before: &str, token: &str) -> bool {
    let ends_with_label = |b: &str, label: &str| {
        b.len() >= label.len()
            && b.is_char_boundary(b.len() - label.len())
            && b[b.len() - label.len()..].eq_ignore_ascii_case(label)
    };
    ["sha1", "sha256", "sha384", "sha512", "h1"]
        .iter()
        .any(|label| {
            token
                .strip_prefix(label)
                .is_some_and(|t| t.starts_with('-'))
                || before
                    .strip_suffix(':')
                    .is_some_and(|b| ends_with_label(b, label))
        })
}

/// Whether `piece` is written as a word is: letters of one case, or a capital then small
/// letters (`token`, `QGG`, `Cih`), or holds something other than letters.
fn word_shaped(piece: &str) -> bool {
    let b = piece.as_bytes();
    let rest = &b[1.min(b.len())..];
    !b.iter().all(u8::is_ascii_alphabetic)
        || b.iter().all(u8::is_ascii_lowercase)
        || b.iter().all(u8::is_ascii_uppercase)
        || rest.iter().all(u8::is_ascii_lowercase)
}

/// The high-entropy rule for one token (see the module documentation).
fn looks_secret(token: &str) -> bool {
    let b = token.as_bytes();
    if b.len() < MIN_TOKEN_LEN || b.iter().all(|&c| c.is_ascii_hexdigit() || c == b'-') {
        return false;
    }
    let upper = b.iter().any(u8::is_ascii_uppercase);
    let lower = b.iter().any(u8::is_ascii_lowercase);
    if upper != lower {
        return looks_random_single_case(b) || prefixed_single_case(b);
    }
    if !upper || !b.iter().any(u8::is_ascii_digit) {
        return false;
    }
    let body = token.trim_end_matches('=');
    let separators = body.bytes().filter(|c| b"+/_-.".contains(c)).count();
    separators * 8 <= body.len() && entropy(b) >= MIN_ENTROPY_BITS && wordy(b) < MAX_WORDY
}

/// The rule for tokens of one case (base36, base32, lower-case ids): only letters and
/// digits, at least [`MIN_TOKEN_LEN`] of them, not hex, 10 % to 60 % digits (5 % for base32),
/// letters and digits alternating often (random text switches at about every third
/// character, words with a number at the end do not), and high entropy.
fn looks_random_single_case(b: &[u8]) -> bool {
    if b.len() < MIN_TOKEN_LEN || !b.iter().all(u8::is_ascii_alphanumeric) {
        return false;
    }
    let digits = b.iter().filter(|c| c.is_ascii_digit()).count();
    let switches = b
        .windows(2)
        .filter(|w| w[0].is_ascii_digit() != w[1].is_ascii_digit())
        .count();
    // Base32 uses only the digits 2–7, and fewer of them: a looser bound for it.
    let base32 = b
        .iter()
        .all(|c| !c.is_ascii_digit() || (b'2'..=b'7').contains(c));
    let (least_digits, least_switches) = if base32 { (20, 8) } else { (10, 5) };
    digits * least_digits >= b.len()
        && digits * 10 <= b.len() * 6
        && switches * least_switches >= b.len()
        && entropy(b) >= MIN_SINGLE_CASE_ENTROPY_BITS
}

/// A short vendor prefix, one `_` or `-`, then a random single-case body (`napi_…`,
/// `rdme_…`, as many vendors shape their keys): the body is judged by
/// [`looks_random_single_case`], and a hex body (a digest with a label) stays.
fn prefixed_single_case(b: &[u8]) -> bool {
    let Some(sep) = b.iter().position(|&c| c == b'_' || c == b'-') else {
        return false;
    };
    let (prefix, body) = (&b[..sep], &b[sep + 1..]);
    (2..=8).contains(&prefix.len())
        && prefix.iter().all(u8::is_ascii_alphabetic)
        && !body.iter().all(u8::is_ascii_hexdigit)
        && looks_random_single_case(body)
}

/// Least Shannon entropy of a redacted single-case token (random base36 has about 4.4 at
/// 32 characters, base32 about 4.3; hex, with at most 4, never gets here).
pub const MIN_SINGLE_CASE_ENTROPY_BITS: f64 = 4.0;

/// Shannon entropy in bits per byte.
fn entropy(b: &[u8]) -> f64 {
    let mut counts = [0usize; 256];
    for &c in b {
        counts[usize::from(c)] += 1;
    }
    let n = b.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = c as f64 / n;
            -p * libm::log2(p)
        })
        .sum()
}

/// Share of alphanumerics in word-like runs: `Word`/`word` (3+ lower case after an optional
/// capital), `WORD` (3+ capitals not starting a `Word`), or 3+ digits.
fn wordy(b: &[u8]) -> f64 {
    let run = |from: usize, f: fn(&u8) -> bool| b[from..].iter().take_while(|c| f(c)).count();
    let counted = |k: usize| if k >= 3 { k } else { 0 };
    let (mut i, mut in_words) = (0, 0);
    while i < b.len() {
        if b[i].is_ascii_digit() || b[i].is_ascii_lowercase() {
            let k = if b[i].is_ascii_digit() {
                run(i, u8::is_ascii_digit)
            } else {
                run(i, u8::is_ascii_lowercase)
            };
            in_words += counted(k);
            i += k;
        } else if b[i].is_ascii_uppercase() {
            // `HTTPServer` is `HTTP` and `Server`.
            let caps = run(i, u8::is_ascii_uppercase);
            let lower = run(i + caps, u8::is_ascii_lowercase);
            in_words +=
                counted(caps - usize::from(lower > 0)) + counted(lower) + usize::from(lower >= 3);
            i += caps + lower;
        } else {
            i += 1;
        }
    }
    let alnum = b.iter().filter(|c| c.is_ascii_alphanumeric()).count();
    in_words as f64 / alnum.max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::marker::REDACTED;

    const UPPER: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
    const DIGITS: &str = "0123456789";
    const HEX: &str = "0123456789abcdef";

    fn b62() -> String {
        format!("{UPPER}{}{DIGITS}", UPPER.to_ascii_lowercase())
    }
    fn b64() -> String {
        b62() + "+/"
    }
    fn b64url() -> String {
        b62() + "-_"
    }

    /// Deterministic pseudo-random text (xorshift64*), so that no fixture is a literal.
    fn rnd(alphabet: &str, n: usize, seed: u64) -> String {
        let a = alphabet.as_bytes();
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        (0..n)
            .map(|_| {
                x ^= x >> 12;
                x ^= x << 25;
                x ^= x >> 27;
                let r = x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 33;
                char::from(a[(r % a.len() as u64) as usize])
            })
            .collect()
    }

    /// A token of each row, made from its sample, and random tokens with no known prefix
    /// for the high-entropy rule, each inside ordinary words: (input, expected output).
    fn positives() -> Vec<(String, String)> {
        let wrap = |s: &str| format!("error: got {s} from env");
        let mut rng = crate::formats::sample::Rng::new(11);
        let mut cases: Vec<(String, String)> = crate::formats::all()
            .map(|row| {
                let kept = crate::formats::sample::render(row.kept, &mut rng);
                let secret = crate::formats::sample::render(row.sample, &mut rng);
                (kept, secret)
            })
            .collect();
        cases.push((String::new(), rnd(&b62(), 40, 65)));
        cases.push((String::new(), format!("{}==", rnd(&b64(), 62, 66))));
        cases
            .into_iter()
            .map(|(kept, secret)| {
                (
                    wrap(&format!("{kept}{secret}")),
                    wrap(&format!("{kept}{REDACTED}")),
                )
            })
            .collect()
    }

    #[test]
    fn every_row_and_random_tokens_are_redacted() {
        for (input, expected) in positives() {
            assert_eq!(redact(&input), expected, "input: {input}");
        }
    }

    #[test]
    fn a_vendor_prefix_before_a_random_single_case_body_goes() {
        let lower = "abcdefghijklmnopqrstuvwxyz0123456789";
        for (n, prefix) in ["napi_", "rdme_", "xkey-", "tk_"].iter().enumerate() {
            let token = format!("{prefix}{}", rnd(lower, 48, 70 + n as u64));
            assert_eq!(
                redact(&format!("token {token} refused")),
                "token [REDACTED] refused"
            );
        }
        for text in [
            "build-3f2a9c1e0b7d4a6f8e2c1b0a9d8e7f6c5b4a3928",
            "release_candidate_for_the_nightly_build_of_2026",
            "snake_case_words_with_numbers_2024_and_more_of_them",
            "averyverylongprefix_4lc89p7opjtqztqs9lp7b9o304a0dvnxb08q3",
        ] {
            assert_eq!(redact(text), text);
        }
    }

    #[test]
    fn generic_rule_catches_random_tokens() {
        for (len, least) in [(32, 195), (40, 197), (64, 200)] {
            let caught = (0..200u64)
                .filter(|&seed| redact(&rnd(&b62(), len, seed + 1000)) == REDACTED)
                .count();
            assert!(caught >= least, "{len} chars: {caught} of 200");
        }
        let tok = rnd(&b64url(), 43, 5);
        assert_eq!(
            redact(&format!("{{\"session\":\"{tok}\"}}")),
            format!("{{\"session\":\"{REDACTED}\"}}")
        );
        assert_eq!(
            redact(&format!("token '{tok}'.")),
            format!("token '{REDACTED}'.")
        );
    }

    #[test]
    fn single_case_random_tokens() {
        let lower36 = format!("{}{DIGITS}", UPPER.to_ascii_lowercase());
        let base32 = format!("{UPPER}234567");
        for seed in 0..50 {
            for token in [rnd(&lower36, 40, seed), rnd(&base32, 52, seed)] {
                assert_eq!(
                    redact(&format!("got {token} ok")),
                    format!("got {REDACTED} ok")
                );
            }
        }
        for text in [
            "kubernetesdeployment1replicaset2pod3container4".to_owned(),
            "ERRCONNECTIONTIMEDOUTWHILEWAITINGFORRESPONSE42".to_owned(),
            format!("sha1 {}", rnd(HEX, 40, 3)),
            "/nix/store/0c0b9i3k7x2m5q8r1t4w6y9z3a5c7e9g-glibc-2.37/lib".to_owned(),
            "Host key fingerprint is SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8".to_owned(),
        ] {
            assert!(
                matches!(redact(&text), Cow::Borrowed(_)),
                "changed: {text:?} -> {:?}",
                redact(&text)
            );
        }
    }

    #[test]
    fn ordinary_text_is_untouched() {
        let hex = |n, s| rnd(HEX, n, s);
        let uuid = format!(
            "{}-{}-4{}-a{}-{}",
            hex(8, 1),
            hex(4, 2),
            hex(3, 3),
            hex(3, 4),
            hex(12, 5)
        );
        let texts = [
            "FATAL: password authentication failed for user \"app\"".to_owned(),
            "botocore.exceptions.NoCredentialsError: Unable to locate credentials".to_owned(),
            "An error occurred (AccessDeniedException) when calling the AssumeRole operation"
                .to_owned(),
            "pip install sk-learn; ghp; ghp_ alone; ghp_short; sk_live_ sk-; AKIA; xoxb; eyJ"
                .to_owned(),
            "SG.foo.bar key-value store id=42 job 7 user_1234 [REDACTED] bot12345:abc".to_owned(),
            format!("commit {} (short {})", hex(40, 6), hex(7, 7)),
            format!("sha256:{} sha512 {}", hex(64, 8), hex(128, 9)),
            format!("ghcr.io/acme/app@sha256:{} pulled", hex(64, 10)),
            format!("request {uuid} at 2024-05-06T07:08:09.123456Z"),
            "/usr/lib/python3.11/site-packages/botocore/credentials.py line 2135".to_owned(),
            "src/main/java/com/example/service/UserAccountServiceImplementation.java:42".to_owned(),
            "target/x86_64-unknown-linux-gnu/release/deps/crontap_run-3f2a1b4c5d6e7f80".to_owned(),
            "v1.2.3-rc.4+build.20240102 and 1.75.0-nightly and v0.0.0-20220722155237-a158d28d115b"
                .to_owned(),
            "org.springframework.beans.factory.BeanCreationException: boom".to_owned(),
            "AmazonDynamoDBv2ProvisionedThroughputExceededException".to_owned(),
            "AccessDeniedExceptionWhileCallingAssumeRoleWithWebIdentity".to_owned(),
            "Http2ConnectionPrefaceMismatchException X509CertificateVerificationFailedForHost2"
                .to_owned(),
            "ERR_CONNECTION_TIMED_OUT_WHILE_WAITING_FOR_RESPONSE".to_owned(),
            "pod my-service-deployment-7d9f8b6c5d-x2k9p crashed".to_owned(),
            format!("Twilio account AC{} suspended", hex(32, 11)),
            format!("digest {} of {}", hex(96, 12), hex(200, 13).to_uppercase()),
            "https://github.com/rust-lang/rust/issues/12345#issuecomment-1234567890".to_owned(),
            "-----BEGIN CERTIFICATE----- and -----BEGIN PUBLIC KEY----- markers".to_owned(),
            "ошибка: ключ не найден — ключ «PRIVATE KEY» отсутствует".to_owned(),
            format!(
                "npm ERR! sha512-{}== integrity checksum failed",
                rnd(&b64(), 86, 14)
            ),
            format!(
                "checksum mismatch\n\tdownloaded: h1:{}=",
                rnd(&b64(), 43, 15)
            ),
            format!("layer sha256:{} missing", rnd(&b64(), 43, 16)),
            "1715000000:com_example_service_worker_thread_pool_1 exited".to_owned(),
            concat!(
                "Traceback (most recent call last):\n",
                "  File \"/app/venv/lib/python3.12/site-packages/botocore/client.py\", line 1021\n",
                "    raise error_class(parsed_response, operation_name)\n",
                "botocore.errorfactory.ResourceNotFoundException: An error occurred ",
                "(ResourceNotFoundException) when calling the GetSecretValue operation\n",
            )
            .to_owned(),
            String::new(),
        ];
        for text in texts {
            assert!(
                matches!(redact(&text), Cow::Borrowed(_)),
                "changed: {text:?} -> {:?}",
                redact(&text)
            );
        }
    }

    fn pem_body(lines: usize, width: usize, seed: u64) -> Vec<String> {
        let mut body: Vec<String> = (0..lines)
            .map(|i| rnd(&b64(), width, seed + i as u64))
            .collect();
        body.push(format!("{}==", rnd(&b64(), 10, seed + 99)));
        body
    }

    /// A BEGIN or END line, built so that no full marker is a literal.
    fn edge(which: &str, kind: &str) -> String {
        format!("{d}{which} {kind}{d}", d = "-".repeat(5))
    }

    fn pem(kind: &str, headers: &str, body: &[String]) -> String {
        let (begin, end) = (edge("BEGIN", kind), edge("END", kind));
        format!("{begin}\n{headers}{}\n{end}", body.join("\n"))
    }

    #[test]
    fn pem_blocks_with_end() {
        let body = pem_body(5, 64, 1);
        let kinds = [
            ("PRIVATE KEY", ""),
            (
                "RSA PRIVATE KEY",
                "Proc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,00FF\n\n",
            ),
            ("EC PRIVATE KEY", ""),
            ("ENCRYPTED PRIVATE KEY", ""),
            ("OPENSSH PRIVATE KEY", ""),
            ("PGP PRIVATE KEY BLOCK", "Version: GnuPG v2\n\n"),
        ];
        for (kind, headers) in kinds {
            let text = format!(
                "loading key\n{}\nfailed: bad key\n",
                pem(kind, headers, &body)
            );
            assert_eq!(
                redact(&text),
                format!("loading key\n{REDACTED}\nfailed: bad key\n"),
                "{kind}"
            );
        }
        let mut pgp = pem_body(3, 64, 2);
        pgp.push(format!("={}", rnd(&b62(), 4, 3)));
        let text = format!("x {} y", pem("PGP PRIVATE KEY BLOCK", "\n", &pgp));
        assert_eq!(redact(&text), format!("x {REDACTED} y"));
        // Escaped inside JSON, and flattened onto one line.
        let escaped = pem("PRIVATE KEY", "", &body).replace('\n', "\\n");
        let json = format!("{{\"key\": \"{escaped}\\n\", \"n\": 1}}");
        assert_eq!(
            redact(&json),
            format!("{{\"key\": \"{REDACTED}\\n\", \"n\": 1}}")
        );
        let flat = pem("RSA PRIVATE KEY", "", &body).replace('\n', " ");
        assert_eq!(redact(&format!("{flat} done")), format!("{REDACTED} done"));
    }

    #[test]
    fn pem_blocks_without_end() {
        let body = pem_body(4, 64, 4);
        let begin = edge("BEGIN", "RSA PRIVATE KEY");
        let text = format!("{begin}\n{}\nError: cannot parse key", body.join("\n"));
        assert_eq!(
            redact(&text),
            format!("{REDACTED}\nError: cannot parse key")
        );
        // Cut off mid-body by the end of the text; words after a full-width run stay.
        let text = format!(
            "key:\n{begin}\n{}\n{}",
            body[..3].join("\n"),
            &body[3][..20]
        );
        assert_eq!(redact(&text), format!("key:\n{REDACTED}"));
        let text = format!("{begin}\n{}\nerror\n", body[..3].join("\n"));
        assert_eq!(redact(&text), format!("{REDACTED}\nerror\n"));
        // The BEGIN line lost to the tail: the END line takes the base64 above it.
        let text = format!(
            "{}\n{}\n{}\ndone",
            &body[0][30..],
            body[1..].join("\n"),
            edge("END", "RSA PRIVATE KEY")
        );
        assert_eq!(redact(&text), format!("{REDACTED}\ndone"));
        let text = format!(
            "ssh: error\nerror\n{}\n{}",
            body.join("\n"),
            edge("END", "OPENSSH PRIVATE KEY")
        );
        assert_eq!(redact(&text), format!("ssh: error\nerror\n{REDACTED}"));
    }

    #[test]
    fn idempotent() {
        let pems = [
            pem("PRIVATE KEY", "", &pem_body(3, 64, 5)),
            format!(
                "{}\n{}",
                edge("BEGIN", "EC PRIVATE KEY"),
                pem_body(2, 64, 6).join("\n")
            ),
        ];
        let inputs = positives().into_iter().map(|(i, _)| i).chain(pems);
        for input in inputs {
            let once = redact(&input).into_owned();
            assert_ne!(once, input);
            assert!(
                matches!(redact(&once), Cow::Borrowed(_)),
                "not idempotent: {once:?}"
            );
        }
    }

    #[test]
    fn never_panics_on_odd_input() {
        let key = format!(
            "é{}\\n{}\\",
            pem("PRIVATE KEY", "Version: é\n", &pem_body(2, 64, 7)),
            edge("END", "PRIVATE KEY")
        );
        for end in (0..=key.len()).filter(|&i| key.is_char_boundary(i)) {
            for start in [0, 1, 3, 40, 100]
                .into_iter()
                .filter(|&s| s <= end && key.is_char_boundary(s))
            {
                let once = redact(&key[start..end]).into_owned();
                assert_eq!(redact(&once), once);
            }
        }
        let noise = rnd("aZ09+/=_-.:\\n \n\"'é€-----BEGINENDPRIVATEKEY", 5000, 8);
        let once = redact(&noise).into_owned();
        assert_eq!(redact(&once), once);
    }
}
