//! The scrubbing corpus under tests/corpus, scored: every secret line must lose its marked
//! parts, every benign line must survive byte for byte, and every stack trace must collapse
//! to its error line. The test prints the scores and fails below 100 %.

use std::time::Duration;

use crontap_run::report::heartbeat::HeartbeatUrl;
use crontap_run::report::summary;
use crontap_run::run::outcome::Outcome;
use crontap_run::scrub::{REDACTED, Scrubber};

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/corpus");

fn scrubber() -> Scrubber {
    let url = HeartbeatUrl::parse("https://hb.example/ping/corpus-token-123", "corpus").unwrap();
    Scrubber::new(
        url.secrets(),
        [("DB_PASSWORD".into(), "correct-horse-battery".into())],
    )
}

/// Deterministic characters from `alphabet`, so fixtures are stable but look random.
fn chars(seed: u64, len: usize, alphabet: &str) -> String {
    let alphabet: Vec<char> = alphabet.chars().collect();
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..len)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            alphabet[((state >> 33) % alphabet.len() as u64) as usize]
        })
        .collect()
}

const BASE62: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const URLSAFE: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// A token of the given family, shaped as its provider documents it.
fn fixture(family: &str) -> Option<String> {
    let seed = family
        .bytes()
        .fold(7u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b)));
    let c = |len, alphabet| chars(seed, len, alphabet);
    let token = match family {
        "ghp" => format!("ghp_{}", c(36, BASE62)),
        "github_pat" => format!(
            "github_pat_{}_{}",
            c(22, BASE62),
            chars(seed + 1, 59, BASE62)
        ),
        "glpat" => format!("glpat-{}", c(20, URLSAFE)),
        "xoxb" => format!(
            "xoxb-{}-{}-{}",
            c(12, "0123456789"),
            chars(seed + 1, 13, "0123456789"),
            chars(seed + 2, 24, BASE62)
        ),
        "stripe_sk" => format!("sk_{}_{}", "live", c(99, BASE62)),
        "aws_akid" => format!("AKIA{}", c(16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")),
        "aws_secret" => c(
            40,
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/+",
        ),
        "google_aiza" => format!("AIza{}", c(35, URLSAFE)),
        "google_ya29" => format!("ya29.{}", c(120, URLSAFE)),
        "openai" => format!(
            "sk-proj-{}T3BlbkFJ{}",
            c(64, URLSAFE),
            chars(seed + 1, 64, URLSAFE)
        ),
        "anthropic" => format!("sk-ant-api03-{}AA", c(93, URLSAFE)),
        "npm" => format!("npm_{}", c(36, BASE62)),
        "hf" => format!(
            "hf_{}",
            c(34, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
        ),
        "sendgrid" => format!("SG.{}.{}", c(22, URLSAFE), chars(seed + 1, 43, URLSAFE)),
        "vault" => format!("hvs.{}", c(92, URLSAFE)),
        "pypi" => format!("pypi-AgEIcHlwaS5vcmc{}", c(120, URLSAFE)),
        "dockerhub" => format!("dckr_pat_{}", c(27, URLSAFE)),
        "jwt" => format!(
            "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJjb3JwdXMifQ.{}",
            c(43, URLSAFE)
        ),
        _ => return None,
    };
    Some(token)
}

/// Expands `\n` and `@name` fixtures; returns the input text and the marked parts.
fn expand(line: &str) -> (String, Vec<String>) {
    let line = line.replace("\\n", "\n");
    let mut text = String::new();
    let mut marked = Vec::new();
    let mut rest = line.as_str();
    while let Some(start) = rest.find('«') {
        text.push_str(&rest[..start]);
        let after = &rest[start + '«'.len_utf8()..];
        let end = after.find('»').expect("every « has a »");
        let secret = expand_fixtures(&after[..end]);
        text.push_str(&secret);
        marked.push(secret);
        rest = &after[end + '»'.len_utf8()..];
    }
    text.push_str(rest);
    (expand_fixtures(&text), marked)
}

fn expand_fixtures(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find('@') {
        let name_len = rest[at + 1..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len() - at - 1);
        let name = &rest[at + 1..at + 1 + name_len];
        // `@name` after a word character is an e-mail address or a version, not a fixture.
        let after_word = at > 0 && rest.as_bytes()[at - 1].is_ascii_alphanumeric();
        out.push_str(&rest[..at]);
        match fixture(name).filter(|_| !after_word) {
            Some(token) => out.push_str(&token),
            None => out.push_str(&rest[at..at + 1 + name_len]),
        }
        rest = &rest[at + 1 + name_len..];
    }
    out.push_str(rest);
    out
}

fn cases(file: &str) -> Vec<String> {
    std::fs::read_to_string(format!("{CORPUS}/{file}"))
        .unwrap()
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_owned)
        .collect()
}

#[test]
fn corpus_scores_100_percent() {
    let scrubber = scrubber();
    let mut failures = Vec::new();

    let secrets = cases("secrets.txt");
    for line in &secrets {
        let (input, marked) = expand(line);
        let out = scrubber.scrub(&input);
        let leaked: Vec<&String> = marked.iter().filter(|m| out.contains(m.trim())).collect();
        if !leaked.is_empty() || !out.contains(REDACTED) {
            failures.push(format!("secret kept: {line:?}\n    -> {out:?}"));
        }
    }
    let secrets_failed = failures.len();

    let benign = cases("benign.txt");
    for line in &benign {
        let out = scrubber.scrub(line);
        if out != *line {
            failures.push(format!("benign changed: {line:?}\n    -> {out:?}"));
        }
    }
    let benign_failed = failures.len() - secrets_failed;

    let mut traces: Vec<_> = std::fs::read_dir(format!("{CORPUS}/traces"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    traces.sort();
    for path in &traces {
        let text = std::fs::read_to_string(path).unwrap();
        let (first, body) = text.split_once('\n').unwrap();
        let expect = first
            .strip_prefix("# expect: ")
            .expect("a trace starts with # expect:");
        let msg = summary::failure_message(
            &Outcome::Exited(1),
            Duration::from_secs(1),
            b"",
            body.as_bytes(),
            &scrubber,
            2048,
        );
        let want = format!("exit 1 after 1s: {expect}");
        if msg != want {
            failures.push(format!(
                "trace {}: got {msg:?}, want {want:?}",
                path.display()
            ));
        }
    }
    let traces_failed = failures.len() - secrets_failed - benign_failed;

    let score = |total: usize, failed: usize| {
        format!(
            "{}/{total} ({:.0} %)",
            total - failed,
            100.0 * (total - failed) as f64 / total as f64
        )
    };
    println!(
        "corpus: secrets {}, benign {}, traces {}",
        score(secrets.len(), secrets_failed),
        score(benign.len(), benign_failed),
        score(traces.len(), traces_failed)
    );
    assert!(
        failures.is_empty(),
        "{} corpus failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
