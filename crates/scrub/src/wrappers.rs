//! Text that log pipelines wrap around a stack trace, removed before [`super::traces`]
//! looks for one.
//!
//! - Line prefixes: `docker compose` (`app-1  | `), `kubectl logs --timestamps`
//!   (`2026-11-29T14:05:33.123456789Z `) and `kubectl logs --prefix` (`[pod/x/c] `). They
//!   are removed from every line that has one when at least two lines do, so that a frame
//!   reads as a frame again.
//! - SQLAlchemy's tail after an error message: `DETAIL:`/`HINT:` lines, `[SQL: …]` (over
//!   several lines), `[parameters: …]` (the row's values, often personal data) and
//!   `(Background on this error at: https://sqlalche.me/…)`. The error line above them is
//!   then the last line.
//!
//! [`unwrap`] returns `None` when the text has neither, so ordinary text is not copied.

use std::sync::LazyLock;

use regex::Regex;

static PREFIX: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"^(?:[A-Za-z0-9][A-Za-z0-9_.\-]*[ \t]+\| ?",
        r"|[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?(?:Z|[+\-][0-9]{2}:?[0-9]{2})(?: |$)",
        r"|\[pod/[^\]\s]+\] )+",
    ))
    .expect("valid pattern")
});

static SQLA_BACKGROUND: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*\(Background on this error at: https?://sqlalche\.me/\S*\)\s*$")
        .expect("valid pattern")
});

static SQLA_DETAIL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:(?:DETAIL|HINT|CONTEXT|WHERE|QUERY|LINE [0-9]+):|\s*\^\s*$|\s*$)")
        .expect("valid pattern")
});

/// What [`unwrap`] found.
pub struct Unwrapped {
    pub text: String,
    /// A SQLAlchemy tail was cut (the text is better without it, trace or not).
    pub cut_tail: bool,
}

/// `text` without log prefixes and SQLAlchemy tails, or `None` when it has neither.
pub fn unwrap(text: &str) -> Option<Unwrapped> {
    let stripped = strip_prefixes(text);
    let base = stripped.as_deref().unwrap_or(text);
    match cut_sqlalchemy_tails(base) {
        Some(text) => Some(Unwrapped {
            text,
            cut_tail: true,
        }),
        None => stripped.map(|text| Unwrapped {
            text,
            cut_tail: false,
        }),
    }
}

fn strip_prefixes(text: &str) -> Option<String> {
    // Cheap test first: most texts have no line that starts like a prefix.
    let prefixed = text
        .split('\n')
        .filter(|l| PREFIX.find(l).is_some_and(|m| m.end() < l.trim_end().len()))
        .take(2)
        .count();
    if prefixed < 2 {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let body = line.trim_end_matches(['\n', '\r']);
        let end = PREFIX.find(body).map_or(0, |m| m.end());
        out.push_str(&line[end..]);
    }
    Some(out)
}

fn cut_sqlalchemy_tails(text: &str) -> Option<String> {
    if !text.contains("sqlalche.me/") {
        return None;
    }
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let content = |k: usize| lines[k].trim_end_matches(['\n', '\r']);
    let mut drop = vec![false; lines.len()];
    for (b, _) in lines
        .iter()
        .enumerate()
        .filter(|(k, _)| SQLA_BACKGROUND.is_match(content(*k)))
    {
        drop[b] = true;
        let mut k = b;
        // Upwards: `[parameters: …]` and `[SQL: …]`, each possibly over several lines,
        // then blank and DETAIL-style lines.
        for head in ["[parameters: ", "[SQL: "] {
            let top = k.saturating_sub(200);
            let start = (top..k).rev().find(|&j| content(j).starts_with(head));
            let Some(start) = start else { continue };
            if (start..k).all(|j| !drop[j]) && content(k - 1).ends_with(']') {
                drop[start..k].iter_mut().for_each(|d| *d = true);
                k = start;
            }
        }
        while k > 0 && SQLA_DETAIL.is_match(content(k - 1)) {
            k -= 1;
            drop[k] = true;
        }
    }
    let out: String = lines
        .iter()
        .zip(&drop)
        .filter(|(_, d)| !**d)
        .map(|(l, _)| *l)
        .collect();
    (out != text).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compose_and_kubectl_prefixes_go() {
        let text = "app-1  | Traceback (most recent call last):\napp-1  |   File \"/app/x.py\", line 1, in <module>\napp-1  | ValueError: bad\n";
        assert_eq!(
            unwrap(text).unwrap().text,
            "Traceback (most recent call last):\n  File \"/app/x.py\", line 1, in <module>\nValueError: bad\n"
        );
        let text = "2026-11-29T14:05:33.123456789Z panic: boom\n2026-11-29T14:05:33.123456789Z \n2026-11-29T14:05:33.123456789Z goroutine 1 [running]:\n";
        assert_eq!(
            unwrap(text).unwrap().text,
            "panic: boom\n\ngoroutine 1 [running]:\n"
        );
        assert!(unwrap("one | line\nplain text\n").is_none());
        assert!(unwrap("ls -l | grep x\n").is_none());
    }

    #[test]
    fn sqlalchemy_tail_goes() {
        let text = concat!(
            "sqlalchemy.exc.IntegrityError: (psycopg2.errors.UniqueViolation) duplicate key\n",
            "DETAIL:  Key (email)=(jane@example.com) already exists.\n",
            "\n",
            "[SQL: INSERT INTO users (email)\n",
            "VALUES (%(email)s)]\n",
            "[parameters: {'email': 'jane@example.com'}]\n",
            "(Background on this error at: https://sqlalche.me/e/20/gkpj)\n",
        );
        assert_eq!(
            unwrap(text).unwrap().text,
            "sqlalchemy.exc.IntegrityError: (psycopg2.errors.UniqueViolation) duplicate key\n"
        );
        assert!(unwrap("see https://sqlalche.me/e/20 for help\n").is_none());
    }
}
