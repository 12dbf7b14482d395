//! Forms that span lines, read across them: the value stands on another line than what
//! says it is a secret.
//!
//! - a YAML key named for a secret with nothing after its colon, whose value is the next,
//!   more indented line (`password:` then `  Xk29fjQmLr`), or a block scalar (`password: |`)
//!   whose lines are;
//! - Spring Boot's binding report: `Value: "…"` under `Property: …password`;
//! - SMTP and IMAP `AUTH LOGIN`: the client's answer after the server's `334 UGFzc3dvcmQ6`
//!   (base64 of `Password:`) is the base64 password, as smtplib (`send: '…\r\n'`) and swaks
//!   (` -> …`) print it; the answer to `334 VXNlcm5hbWU6` (the user name) stays. The
//!   decoded password is learned too, so it goes wherever it stands bare;
//! - a quoted value whose line ended before its closing quote: under a line that ends in
//!   `'[REDACTED]`, a line holding only the rest of the value and the quote.
//!
//! - a password said in plain English on its own line (`prose`): `The password is …`,
//!   `password was set to '…'`, `echo 'user:…' | chpasswd`.
//!
//! Each form looks at a line and at most the three after it, so the pass is linear.

mod prose;

use super::learned;
use super::marker::{self, Overlap, REDACTED};
use super::names::names_a_secret;

/// Lines after a `334` challenge in which the answer is looked for.
const ANSWER_REACH: usize = 3;
/// Most lines of a block scalar read under its key (keys nested in keys would otherwise
/// read the same lines again).
const BLOCK_REACH: usize = 64;

/// `text` with the values of the forms above replaced; `None` when there are none.
pub(crate) fn redact(text: &str) -> Option<String> {
    let lines = lines(text);
    let mut spans = Vec::new();
    for i in 0..lines.len() {
        let line = &text[lines[i].0..lines[i].1];
        yaml_next_line(text, &lines, i, line, &mut spans);
        spring_value(text, &lines, i, line, &mut spans);
        auth_login_answer(text, &lines, i, line, &mut spans);
        quoted_rest(text, &lines, i, line, &mut spans);
        prose::said(lines[i].0, line, &mut spans);
    }
    if spans.is_empty() {
        return None;
    }
    spans.sort_unstable();
    spans.dedup();
    match marker::splice(text, &spans, Overlap::FirstWins) {
        std::borrow::Cow::Owned(out) => Some(out),
        std::borrow::Cow::Borrowed(_) => None,
    }
}

/// Each line's byte range, without its `\n` or `\r\n`.
fn lines(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    for (at, _) in text.match_indices('\n') {
        out.push((start, trim_cr(text, start, at)));
        start = at + 1;
    }
    out.push((start, text.len()));
    out
}

fn trim_cr(text: &str, start: usize, end: usize) -> usize {
    match end > start && text.as_bytes()[end - 1] == b'\r' {
        true => end - 1,
        false => end,
    }
}

/// The width of `line`'s indentation.
fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// The range of `line` (at `start` in the text) without its blanks and one pair of quotes
/// around it; `None` when nothing is left or it is a marker already.
fn value_span(start: usize, line: &str) -> Option<(usize, usize)> {
    let trimmed = line.trim();
    let mut s = start + line.find(trimmed).unwrap_or(0);
    let mut e = s + trimmed.len();
    let b = trimmed.as_bytes();
    if b.len() >= 2 && (b[0] == b'"' || b[0] == b'\'') && b[b.len() - 1] == b[0] {
        s += 1;
        e -= 1;
    }
    (e > s
        && !trimmed
            .trim_start_matches(['\'', '"'])
            .starts_with(REDACTED))
    .then_some((s, e))
}

/// `password:` (or `- password:`, or `password: |`) then the value on the lines below.
fn yaml_next_line(
    text: &str,
    lines: &[(usize, usize)],
    i: usize,
    line: &str,
    spans: &mut Vec<(usize, usize)>,
) {
    let Some((key, rest)) = line.trim_end().split_once(':') else {
        return;
    };
    let key = key.trim_start();
    let key = key.strip_prefix("- ").unwrap_or(key).trim();
    let name = key.trim_matches(|c| c == '"' || c == '\'');
    let block = matches!(rest.trim(), "|" | "|-" | "|+" | ">" | ">-" | ">+");
    let named = !name.is_empty()
        && name
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || b"_-.".contains(&c))
        && names_a_secret(name);
    if !named || !(rest.trim().is_empty() || block) {
        return;
    }
    let depth = indent(line);
    for &(start, end) in lines.iter().skip(i + 1).take(BLOCK_REACH) {
        let next = &text[start..end];
        if next.trim().is_empty() && block {
            continue;
        }
        if next.trim().is_empty() || indent(next) <= depth {
            return;
        }
        let body = next.trim_start();
        // A mapping or a list under the key: no scalar value.
        let mapping = body
            .split_once(':')
            .is_some_and(|(k, v)| !k.contains(' ') && (v.is_empty() || v.starts_with(' ')));
        if !block && (mapping || body.starts_with(['-', '#', '{', '['])) {
            return;
        }
        spans.extend(value_span(start, next));
        if !block {
            return;
        }
    }
}

/// Spring Boot's `Property: …password` then `Value: "…"`.
fn spring_value(
    text: &str,
    lines: &[(usize, usize)],
    i: usize,
    line: &str,
    spans: &mut Vec<(usize, usize)>,
) {
    let Some(name) = line.trim().strip_prefix("Property: ") else {
        return;
    };
    let last = name.rsplit('.').next().unwrap_or(name);
    let last = last.split('[').next().unwrap_or(last);
    if !names_a_secret(last) {
        return;
    }
    for &(start, end) in lines.iter().skip(i + 1).take(2) {
        let next = &text[start..end];
        if let Some(value) = next.trim_start().strip_prefix("Value: ") {
            let at = end - value.len();
            if !matches!(value.trim_matches('"'), "===hidden===" | "******") {
                spans.extend(value_span(at, value));
            }
            return;
        }
    }
}

/// The client's answer to `334 UGFzc3dvcmQ6` (`Password:`; `cGFzc3dvcmQ6`, `password:`).
fn auth_login_answer(
    text: &str,
    lines: &[(usize, usize)],
    i: usize,
    line: &str,
    spans: &mut Vec<(usize, usize)>,
) {
    if !(line.contains("334 UGFzc3dvcmQ6") || line.contains("334 cGFzc3dvcmQ6")) {
        return;
    }
    for &(start, end) in lines.iter().skip(i + 1).take(ANSWER_REACH) {
        let next = &text[start..end];
        let body = next.trim_start();
        let after = ["send: b'", "send: '", "send: b\"", "send: \"", "-> ", "C: "]
            .iter()
            .find_map(|cue| body.strip_prefix(cue))
            .or_else(|| body.bytes().all(is_base64).then_some(body));
        let Some(after) = after else {
            continue;
        };
        let answer = after.trim_start();
        let len = answer.bytes().take_while(|&c| is_base64(c)).count();
        if len >= 4 {
            let at = end - after.len() + (after.len() - answer.len());
            spans.push((at, at + len));
            if let Some(password) = learned::decode_base64(&answer[..len]) {
                marker::learn(&password);
            }
        }
        return;
    }
}

fn is_base64(c: u8) -> bool {
    c.is_ascii_alphanumeric() || b"+/=".contains(&c)
}

/// The rest of a quoted value on the line under one that ends in `'[REDACTED]` with the
/// quote still open: a line holding only that rest, the closing quote and closing
/// punctuation.
fn quoted_rest(
    text: &str,
    lines: &[(usize, usize)],
    i: usize,
    line: &str,
    spans: &mut Vec<(usize, usize)>,
) {
    let line = line.trim_end();
    let Some(before) = line.strip_suffix(REDACTED) else {
        return;
    };
    let Some(quote) = before.chars().last().filter(|&q| q == '\'' || q == '"') else {
        return;
    };
    // The quote before the marker opens a value when the quotes before it are paired.
    if before.matches(quote).count() % 2 == 0 {
        return;
    }
    let Some(&(start, end)) = lines.get(i + 1) else {
        return;
    };
    let next = &text[start..end];
    let body = next.trim_start();
    let Some(close) = body.find(quote) else {
        return;
    };
    let (rest, after) = (&body[..close], &body[close + 1..]);
    let lone = after.trim().bytes().all(|c| b",;)]}".contains(&c));
    if !rest.is_empty()
        && !rest.contains(char::is_whitespace)
        && !rest.starts_with(REDACTED)
        && lone
    {
        let at = end - body.len();
        spans.push((at, at + rest.len()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn across(text: &str) -> String {
        redact(text).unwrap_or_else(|| text.to_owned())
    }

    #[test]
    fn yaml_values_on_the_next_lines() {
        for (text, want) in [
            (
                "db:\n  password:\n    Xk29fjQmLr\n  user: app",
                "db:\n  password:\n    [REDACTED]\n  user: app",
            ),
            (
                "- api_token:\n    'Zq8vN2xLw4'\n",
                "- api_token:\n    '[REDACTED]'\n",
            ),
            (
                "secret_key: |\n  line-one-Xk29\n  line-two-Zq8v\nnext: 1",
                "secret_key: |\n  [REDACTED]\n  [REDACTED]\nnext: 1",
            ),
            // A mapping under the key, a value on the key's own line, a shallower line.
            (
                "password:\n  file: /run/pw\n",
                "password:\n  file: /run/pw\n",
            ),
            ("password: x\n  Xk29fjQmLr\n", "password: x\n  Xk29fjQmLr\n"),
            ("  password:\nXk29fjQmLr\n", "  password:\nXk29fjQmLr\n"),
            ("hostname:\n  db.internal\n", "hostname:\n  db.internal\n"),
        ] {
            assert_eq!(across(text), want, "{text:?}");
        }
    }

    #[test]
    fn spring_binding_report() {
        let text = "Failed to bind properties under 'spring.datasource.password' to java.lang.String:\n\n    Property: spring.datasource.password\n    Value: \"Xk29fjQmLr\"\n    Origin: class path resource [application.yml] - 5:15\n";
        assert_eq!(
            across(text),
            text.replace("\"Xk29fjQmLr\"", "\"[REDACTED]\"")
        );
        let url = "    Property: spring.datasource.url\n    Value: \"jdbc:h2:mem\"\n";
        assert_eq!(across(url), url);
    }

    #[test]
    fn auth_login_answers() {
        let smtplib = "send: 'AUTH LOGIN YXBw\\r\\n'\nreply: b'334 UGFzc3dvcmQ6\\r\\n'\nreply: retcode (334); Msg: b'UGFzc3dvcmQ6'\nsend: 'V2ludGVyNDJoYXJib3Ik\\r\\n'\nreply: b'535 5.7.8 Error\\r\\n'";
        assert_eq!(
            across(smtplib),
            smtplib.replace("V2ludGVyNDJoYXJib3Ik", "[REDACTED]")
        );
        let swaks = " -> AUTH LOGIN\n<-  334 VXNlcm5hbWU6\n -> YXBw\n<-  334 UGFzc3dvcmQ6\n -> V2ludGVyNDJoYXJib3Ik\n<** 535 Error";
        assert_eq!(
            across(swaks),
            swaks.replace("V2ludGVyNDJoYXJib3Ik", "[REDACTED]")
        );
        let (_, learned) = marker::learning(|| across(swaks));
        assert!(
            learned.contains(&"Winter42harbor$".to_owned()),
            "{learned:?}"
        );
        assert_eq!(learned::decode_base64("YXBw").as_deref(), Some("app"));
    }

    #[test]
    fn the_rest_of_a_quoted_value_cut_by_the_line_end() {
        assert_eq!(
            across("    pw = '[REDACTED]\n    Q9wE2rT7yU'\nnext"),
            "    pw = '[REDACTED]\n    [REDACTED]'\nnext"
        );
        assert_eq!(
            across("said 'a' and '[REDACTED]\nQ9wE2rT7yU'),"),
            "said 'a' and '[REDACTED]\n[REDACTED]'),"
        );
        // The quote closed before the marker, or the next line is prose.
        for text in ["'a' [REDACTED]\nrest'", "x '[REDACTED]\nsome words'"] {
            assert_eq!(across(text), text);
        }
    }
}
