//! The randomness test: whether a token is a credential judged from its own characters, for
//! vendors no format row knows (most are undocumented, and new ones come every month) and
//! for keys named only by a word nearby.
//!
//! A token (a run of letters, digits and the punctuation credentials use) reads as random
//! when its letters follow each other as random letters do and not as words do. Each pair
//! of adjacent letters is scored by how much likelier it is in English words than in random
//! text (`bigrams`, from a word list); identifiers, file names and host names are made of
//! words and abbreviations and score high (`TokenService`, `nginx-deployment`), random
//! keys score low (`Qm3vXr9TtLw2ZpK8sNb4Yc`). Beside that score, a random token:
//! - is long enough: [`MIN_RANDOM_LEN`] letters and digits, or [`MIN_PREFIXED_LEN`] after a
//!   vendor-style prefix (`hf_`, `sq0atp-`, `da2-`, `sk-or-v1-`), which marks a credential by
//!   itself; a prefix and `_` before a hex body of 32 or more is one too (`sk_<48 hex>`;
//!   not `deps-linux-<sha256>`, a cache key);
//! - is not hex (digests, commits, UUIDs and trace ids are hex, and stay unless a name or a
//!   prefix says otherwise), not mostly digits (numbers, timestamps, versions), not an
//!   alphabet or a run of one character, and uses many distinct symbols;
//! - is not an identifier: not pieces of one case joined by `_`, `-`, `.`
//!   (`TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384`, `x86_64-unknown-linux-musl`), and less than
//!   [`MAX_WORDY`] of it in runs that read as words (`MultiPathXMLRPCServer`);
//! - letters of one case with no digit need a stronger score and more length (a word in
//!   another language can look unusual; random base32 is long).
//!
//! Calibrated on random tokens (the tests) and on the 26,616 identifiers of 16 characters
//! or more in Python's standard library: at 20 characters about 98 % of random base62 and
//! base64url tokens go, 94 % of random lower-case base36; at 32, more than 99 %. Of the
//! identifiers 20 go: 14 are keys and random strings hard-coded in tests, 6 real names
//! (`fDAQmx_SelfCalibration`, `PBESv2SHA256AndAES256CBC`).

use super::bigrams::LOG_ODDS;

/// Fewest letters and digits of a token with no prefix that the test judges.
pub const MIN_RANDOM_LEN: usize = 20;
/// Fewest letters and digits after a vendor-style prefix.
pub const MIN_PREFIXED_LEN: usize = 16;
/// Fewest hex digits after a vendor-style prefix that make a credential whatever they are.
const MIN_PREFIXED_HEX: usize = 32;
/// Highest mean log-odds of letter pairs (tenths of a bit) that reads as random.
const MAX_MEAN_LOG_ODDS: i32 = -3;
/// The bound for letters of both cases and no digit (a CamelCase name of abbreviations).
const MAX_MEAN_LOG_ODDS_LETTERS: i32 = -7;
/// The bound for letters of one case and no digit.
const MAX_MEAN_LOG_ODDS_ONE_CASE: i32 = -10;
/// Fewest letters and digits of a token of letters of one case and no digit.
const MIN_ONE_CASE_LEN: usize = 24;
/// Fewest pairs of adjacent letters the score needs.
const MIN_LETTER_PAIRS: usize = 5;
/// A token too short of letter pairs is random when at least one pair in this many is a
/// letter and a digit.
const MIN_SWITCH_SHARE: usize = 3;
/// Share of a token in runs that read as words at which it is a name.
const MAX_WORDY: f64 = 0.6;
/// Mean log-odds (tenths of a bit) above which a run of letters reads as a word.
const MIN_WORD_LOG_ODDS: i32 = 5;

/// Prefixes of digests and ids: a labelled hash or id is not a vendor's key.
const NOT_VENDORS: &[&str] = &[
    "sha", "sha1", "sha224", "sha256", "sha384", "sha512", "md5", "h1", "git", "commit", "rev",
    "build", "run", "job", "trace", "span", "req", "request", "id", "uuid", "ver", "v", "pub",
    "pubkey", "public",
];

/// Whether `token` is a credential by its shape: a vendor-style prefix before a random or
/// long hex body, or random as a whole. A digest's or an id's label (`sha256-`, `run-`)
/// says what the token is, and it stays.
pub(super) fn is_credential(token: &str) -> bool {
    if let Some((label, _)) = token.split_once(['_', '-'])
        && NOT_VENDORS.contains(&label.to_ascii_lowercase().as_str())
    {
        return false;
    }
    let prefixed = vendor_body(token).is_some_and(|body| {
        // A hex body counts after `_` only: vendors join with it (`sk_`, `rubygems_`),
        // while names of content-addressed things use `-` (`deps-linux-<sha256>`).
        let underscore = token[..token.len() - body.len()].ends_with('_');
        let hex = underscore && body.bytes().all(|b| b.is_ascii_hexdigit());
        (hex && body.len() >= MIN_PREFIXED_HEX) || looks_random(body, MIN_PREFIXED_LEN)
    });
    prefixed || looks_random(token, MIN_RANDOM_LEN)
}

/// The body after a vendor-style prefix: a short name starting with a letter (`hf`,
/// `sq0atp`, `glpat`), then `_` or `-`, with further short parts (`sk-or-v1-`, `pk_live_`)
/// taken as prefix too while a long enough body is left. `None` when there is no prefix.
fn vendor_body(token: &str) -> Option<&str> {
    let (prefix, mut body) = token.split_once(['_', '-'])?;
    let short_name = |p: &str| {
        (1..=10).contains(&p.len())
            && p.bytes().all(|b| b.is_ascii_alphanumeric())
            && p.starts_with(|c: char| c.is_ascii_alphabetic())
    };
    if prefix.len() < 2 || !short_name(prefix) {
        return None;
    }
    // The letters and digits left after each part, counted once and then taken down part
    // by part: counting the rest again for every part would be quadratic in the token
    // (`ab-ab-ab-…`).
    let mut left = alnum_count(body.as_bytes());
    while let Some((part, rest)) = body.split_once(['_', '-']) {
        // A short name is all letters and digits: what is left after it is the rest.
        if part.len() > 6 || !short_name(part) || left - part.len() < MIN_PREFIXED_LEN {
            break;
        }
        left -= part.len();
        body = rest;
    }
    Some(body)
}

fn alnum_count(b: &[u8]) -> usize {
    b.iter().filter(|c| c.is_ascii_alphanumeric()).count()
}

/// The test itself, for a token of at least `min_len` letters and digits.
pub(super) fn looks_random(token: &str, min_len: usize) -> bool {
    let b = token.as_bytes();
    let alnum: Vec<u8> = b
        .iter()
        .copied()
        .filter(u8::is_ascii_alphanumeric)
        .collect();
    let n = alnum.len();
    if n < min_len || is_hex_id(b) || is_ulid(b) || is_identifier(token) {
        return false;
    }
    let letters = alnum.iter().filter(|c| c.is_ascii_alphabetic()).count();
    if letters * 4 < n || distinct(&alnum) * 2 < n || ascending(&alnum) * 3 >= n {
        return false;
    }
    let Some(mean) = mean_log_odds(b) else {
        // Too few letters side by side to score: random if letters and digits take turns
        // as often as random text has them do (`k7w3q9x2m5v8`), not as a word and a number.
        return switches(&alnum) * MIN_SWITCH_SHARE >= n;
    };
    if wordy(b) >= MAX_WORDY {
        return false;
    }
    let upper = alnum.iter().any(u8::is_ascii_uppercase);
    let lower = alnum.iter().any(u8::is_ascii_lowercase);
    let digit = alnum.iter().any(u8::is_ascii_digit);
    match (digit, upper && lower) {
        (false, false) => n >= MIN_ONE_CASE_LEN && mean <= MAX_MEAN_LOG_ODDS_ONE_CASE,
        (false, true) => mean <= MAX_MEAN_LOG_ODDS_LETTERS,
        (true, _) => mean <= MAX_MEAN_LOG_ODDS,
    }
}

/// Hex and dashes, after at most a few letters that name it (`SK` + 32 hex, a Twilio key's
/// id): digests, commits, UUIDs, trace ids and ids of that kind.
fn is_hex_id(b: &[u8]) -> bool {
    let label = b
        .iter()
        .take(4)
        .take_while(|c| c.is_ascii_alphabetic())
        .count();
    b[label..]
        .iter()
        .all(|&c| c.is_ascii_hexdigit() || c == b'-')
}

/// A ULID: 26 characters of Crockford's base32 (no I, L, O, U), one case, the first of
/// them 0 to 7 (the time it was made).
fn is_ulid(b: &[u8]) -> bool {
    let crockford =
        |c: &u8| c.is_ascii_digit() || (c.is_ascii_alphabetic() && !b"IiLlOoUu".contains(c));
    b.len() == 26
        && (b'0'..=b'7').contains(&b[0])
        && b.iter().all(crockford)
        && !(b.iter().any(u8::is_ascii_uppercase) && b.iter().any(u8::is_ascii_lowercase))
}

/// Two or more pieces, each of one case (`AES_256`, `linux-musl`) or a capitalised word
/// (`Cryptography_HAS`), joined by `_`, `-`, `.`, `+` or `/`.
fn is_identifier(token: &str) -> bool {
    let pieces: Vec<&str> = token
        .split(['_', '-', '.', '+', '/'])
        .filter(|p| !p.is_empty())
        .collect();
    let one_case = |p: &&str| {
        let rest = p
            .strip_prefix(|c: char| c.is_ascii_uppercase())
            .unwrap_or(p);
        !p.bytes().any(|b| b.is_ascii_lowercase()) || !rest.bytes().any(|b| b.is_ascii_uppercase())
    };
    pieces.len() >= 2 && pieces.iter().all(one_case)
}

/// How many adjacent pairs are a letter and a digit.
fn switches(alnum: &[u8]) -> usize {
    alnum
        .windows(2)
        .filter(|w| w[0].is_ascii_digit() != w[1].is_ascii_digit())
        .count()
}

/// How many different symbols `alnum` uses.
fn distinct(alnum: &[u8]) -> usize {
    let mut seen = [false; 128];
    alnum
        .iter()
        .for_each(|&c| seen[usize::from(c & 0x7f)] = true);
    seen.iter().filter(|&&s| s).count()
}

/// How many adjacent pairs step up by one (`ab`, `34`): alphabets and counting.
fn ascending(alnum: &[u8]) -> usize {
    alnum.windows(2).filter(|w| w[1] == w[0] + 1).count()
}

/// The log-odds of a pair of letters (either case).
fn log_odds(a: u8, b: u8) -> i32 {
    let (a, b) = (a.to_ascii_lowercase() - b'a', b.to_ascii_lowercase() - b'a');
    i32::from(LOG_ODDS[usize::from(a)][usize::from(b)])
}

/// The mean log-odds of the token's adjacent letter pairs; `None` with too few pairs.
fn mean_log_odds(b: &[u8]) -> Option<i32> {
    let (sum, pairs) = b
        .windows(2)
        .filter(|w| w[0].is_ascii_alphabetic() && w[1].is_ascii_alphabetic())
        .fold((0, 0), |(sum, pairs), w| {
            (sum + log_odds(w[0], w[1]), pairs + 1)
        });
    (pairs >= MIN_LETTER_PAIRS).then(|| sum / pairs as i32)
}

/// Share of the token's letters and digits in runs that read as words: `Word`, `word` or
/// `WORD` of three letters or more whose pairs score as a word's.
fn wordy(b: &[u8]) -> f64 {
    let mut in_words = 0;
    let mut i = 0;
    while i < b.len() {
        let start = i;
        if b[i].is_ascii_uppercase() {
            let caps = b[i..].iter().take_while(|c| c.is_ascii_uppercase()).count();
            let lower = b[i + caps..]
                .iter()
                .take_while(|c| c.is_ascii_lowercase())
                .count();
            // `HTTPServer` is `HTTP` and `Server`.
            i += match lower {
                0 => caps,
                _ if caps > 1 => caps - 1,
                _ => 1 + lower,
            };
        } else if b[i].is_ascii_lowercase() {
            i += b[i..].iter().take_while(|c| c.is_ascii_lowercase()).count();
        } else {
            i += 1;
            continue;
        }
        let run = &b[start..i];
        if run.len() >= 3 && run_log_odds(run) > MIN_WORD_LOG_ODDS {
            in_words += run.len();
        }
    }
    in_words as f64 / alnum_count(b).max(1) as f64
}

fn run_log_odds(run: &[u8]) -> i32 {
    let sum: i32 = run.windows(2).map(|w| log_odds(w[0], w[1])).sum();
    sum / (run.len() as i32 - 1)
}

#[cfg(test)]
mod tests;
