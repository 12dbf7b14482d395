//! The randomness test over runs that hold the punctuation passwords use (`!#$%*^&@`),
//! which the token characters of the main pass stop at: `Pa55#9hbmU!*UJh7rePtAVJG` is cut
//! there into pieces too short to judge, and as a whole it reads as random.
//!
//! A run is letters, digits, `+ _ - . ~` and that punctuation; it is judged only when it
//! holds some of it, and not when it is an e-mail address (an `@` before a dotted name) or
//! percent-encoded text (two `%XX` or more), which their own rules read. The pass runs
//! after the rules that read a value by where it stands (`structure`), so a value they
//! know whole (`PASSWORD 'a@b/c:d'`) goes whole, and this pass judges what is left. The test is `random::looks_random`, at the length the main pass asks for.

use super::random::{MIN_RANDOM_LEN, looks_random};

/// Punctuation that passwords use and the main pass's tokens stop at.
const PUNCTUATION: &[u8] = b"!#$%*^&@";

/// `text` with every random run that holds password punctuation replaced by the marker.
pub fn redact(text: &str) -> Option<String> {
    let b = text.as_bytes();
    if !b.iter().any(|c| PUNCTUATION.contains(c)) {
        return None;
    }
    let mut ranges = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if !is_run_byte(b[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && is_run_byte(b[i]) {
            i += 1;
        }
        let mut end = i;
        while end > start && matches!(b[end - 1], b'.' | b'!' | b'&') {
            end -= 1;
        }
        if is_secret(&text[start..end]) {
            ranges.push((start, end));
        }
    }
    super::splice(text, &ranges)
}

fn is_run_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || b"+_-.~".contains(&c) || PUNCTUATION.contains(&c)
}

fn is_secret(run: &str) -> bool {
    let b = run.as_bytes();
    let punctuated = b.iter().any(|c| PUNCTUATION.contains(c));
    let email = run
        .split_once('@')
        .is_some_and(|(local, domain)| !local.is_empty() && domain.contains('.'));
    let encoded = run
        .match_indices('%')
        .filter(|(i, _)| {
            b.get(i + 1..i + 3)
                .is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit))
        })
        .count()
        >= 2;
    punctuated && !email && !encoded && looks_random(run, MIN_RANDOM_LEN)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(text: &str) -> String {
        redact(text).unwrap_or_else(|| text.to_owned())
    }

    #[test]
    fn random_runs_with_punctuation_go() {
        assert_eq!(
            r("jq: error (while parsing 'Pa55#9hbmU!*UJh7rePtAVJGx')"),
            "jq: error (while parsing '[REDACTED]')"
        );
        assert_eq!(
            r("key Xk9#qW2!mZ7$vB4*nL8^tR3&Yp6 here"),
            "key [REDACTED] here"
        );
    }

    #[test]
    fn words_mail_and_encoded_text_stay() {
        for text in [
            "Gravel-biscuit28!& is a passphrase of words",
            "mail jane.doe@example.com or ops@corp.example.org!",
            "q=caf%C3%A9%20au%20lait%20with%20Xk9qW2mZ7vB4nL8tR3",
            "wow!!! this is #1 & the best $$$ deal *ever*",
            "#!/usr/bin/env bash && echo $HOME",
            "TokenService.refresh!important",
        ] {
            assert_eq!(r(text), text);
        }
    }
}
