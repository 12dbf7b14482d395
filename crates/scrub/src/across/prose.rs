//! A password said in plain English, where no `name=value` framing marks it:
//! `The password is Xk29fjQmLr`, `password was set to 'Xk29fjQmLr'`, and a `user:password`
//! piped to `chpasswd` (`echo 'svc:Xk29fjQmLr' | chpasswd`).
//!
//! After `password` (`passphrase`, `passwd`) and one of a few verbs (`is`, `is set to`, `was
//! set to`, `set to`, `has been set to`, `changed to`, `reset to`), the next word goes when it
//! cannot be an ordinary one: six characters or more, with a digit, a capital after its
//! first letter, or punctuation inside (quoted or not). So `the password is wrong` and
//! `password was set to expire` stay. Each line is read once per cue.

/// The credential words that start a sentence's password.
const CUES: &[&str] = &["password", "passphrase", "passwd"];
/// What may stand between the word and the value.
const VERBS: &[&str] = &[
    " is set to ",
    " was set to ",
    " has been set to ",
    " set to ",
    " changed to ",
    " reset to ",
    " is: ",
    " is ",
];
/// Fewest characters of a value said in prose.
const MIN_LEN: usize = 6;

/// Adds to `spans` the values said on `line` (at `start` in the text).
pub(super) fn said(start: usize, line: &str, spans: &mut Vec<(usize, usize)>) {
    let lower = line.to_ascii_lowercase();
    for cue in CUES {
        for (at, _) in lower.match_indices(cue) {
            let after = at + cue.len();
            let Some(verb) = VERBS.iter().find(|v| lower[after..].starts_with(*v)) else {
                continue;
            };
            if let Some((s, e)) = value(line, after + verb.len()) {
                spans.push((start + s, start + e));
            }
        }
    }
    if lower.contains("chpasswd") {
        spans.extend(piped_to_chpasswd(line).map(|(s, e)| (start + s, start + e)));
    }
}

/// The word at `at` in `line` (inside its quotes, without the sentence's closing
/// punctuation) when it cannot be an ordinary one.
fn value(line: &str, at: usize) -> Option<(usize, usize)> {
    let rest = &line[at..];
    let (s, len) = match rest.chars().next()? {
        q @ ('\'' | '"' | '`') => (at + 1, rest[1..].find(q)?),
        _ => {
            let word = rest.split_whitespace().next()?;
            let word = word.trim_end_matches(['.', ',', ';', ':', '!', '?', ')']);
            (at, word.len())
        }
    };
    distinctive(&line[s..s + len]).then_some((s, s + len))
}

/// Whether `word` cannot be an ordinary word: long enough, one word, with a digit, a
/// capital after its first letter, or punctuation.
fn distinctive(word: &str) -> bool {
    let chars: Vec<char> = word.chars().collect();
    let digit = chars.iter().any(char::is_ascii_digit);
    let capital = chars.iter().skip(1).any(char::is_ascii_uppercase);
    let other = chars.iter().any(|c| !c.is_alphanumeric());
    chars.len() >= MIN_LEN
        && !word.contains(char::is_whitespace)
        && !word.contains(super::REDACTED)
        && (digit || capital || other)
}

/// The password of `echo 'user:password' | chpasswd` (or `printf`), as its byte range.
fn piped_to_chpasswd(line: &str) -> Option<(usize, usize)> {
    let pipe = line.find('|')?;
    if !line[pipe..].to_ascii_lowercase().contains("chpasswd") {
        return None;
    }
    let head = &line[..pipe];
    let echo = head.rfind("echo ").or_else(|| head.rfind("printf "))?;
    let arg_at = echo + head[echo..].find(' ')? + 1;
    let arg = head[arg_at..].trim_end();
    let (arg, arg_at) = match arg.chars().next()? {
        q @ ('\'' | '"') => (arg[1..].split(q).next()?, arg_at + 1),
        _ => (arg.split_whitespace().next()?, arg_at),
    };
    let colon = arg.find(':')?;
    let password = &arg[colon + 1..];
    (!password.is_empty() && !password.starts_with(super::REDACTED))
        .then_some((arg_at + colon + 1, arg_at + arg.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn taken(line: &str) -> Vec<&str> {
        let mut spans = Vec::new();
        said(0, line, &mut spans);
        spans.iter().map(|&(s, e)| &line[s..e]).collect()
    }

    #[test]
    fn passwords_said_in_prose_go() {
        for (line, want) in [
            ("The password is Sup3rS3cretValue9", "Sup3rS3cretValue9"),
            (
                "password was set to 'Sup3rS3cretValue9'",
                "Sup3rS3cretValue9",
            ),
            ("Your new password is: Xk29fjQmLr.", "Xk29fjQmLr"),
            ("root passwd changed to \"Tq3m-W8\" ok", "Tq3m-W8"),
            (
                "echo 'svc:Sup3rS3cretValue9' | chpasswd",
                "Sup3rS3cretValue9",
            ),
            ("echo svc:Sup3rS3cret | sudo chpasswd", "Sup3rS3cret"),
        ] {
            assert_eq!(taken(line), [want], "{line}");
        }
    }

    #[test]
    fn english_about_passwords_stays() {
        for line in [
            "the password is wrong",
            "password was set to expire",
            "The password is incorrect.",
            "password is too short",
            "password is required",
            "password has been set to expire in 30 days",
            "echo done | chpasswd",
        ] {
            assert!(taken(line).is_empty(), "{line}");
        }
    }
}
