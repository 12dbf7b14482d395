//! The real-program corpus (tests/corpus/programs/cases.txt): what real programs printed
//! when they failed with credentials in play, gathered on this machine by
//! tests/corpus/programs/gather.py. Every case goes through the binary's own summary and
//! Healthchecks body code, with a scrubber built as a run builds it when its only known
//! secret is the heartbeat URL and its environment is empty: the programs' credentials are
//! not known values, so the scrubber must recognise them from what surrounds them.
//!
//! A credential is one `secret` line of a case (a password printed as given and the same
//! password in a protocol's base64 are two). It got out when the text holds it whole, any
//! six of its characters in a row, or, for a passphrase (a credential with spaces), any one
//! of its words of five characters or more; a credential shorter than six characters must
//! not appear at all. Its bytes in hex count too (any six of them in a row, however the
//! hex digits are spaced: a hex dump's bytes).
//! The score counts over all credentials of the corpus, for the summary and for the body
//! alike, whether or not the line the summary's detail came from held the credential: the
//! summary's figure says how often a credential reaches the summary, the body's how often it
//! reaches the service at all (the body starts with the summary).
//!
//! The known misses (tests/corpus/programs/missed.txt) may only shrink: the test fails on a
//! miss the file does not list, on one that got worse (listed for the body, now in the
//! summary), and on a listed miss that is now caught, so the file is edited with every gain.
//! `CORPUS_WRITE_MISSED=1` rewrites the file from today's scrubber (keeping the reasons
//! already written, giving new lines a reason by class) and still fails, so a rewrite is
//! never a silent pass.

mod format;
mod leaks;

use std::collections::BTreeMap;
use std::ffi::OsString;

use crontap_run::report::{body, summary};
use crontap_scrub::Scrubber;

use format::{Case, Known, Leak};
use leaks::{Runs, leaks};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/corpus/programs");
fn scrubber() -> Scrubber {
    Scrubber::new(
        [
            "https://hb.example/ping/corpus-token".into(),
            "corpus-token".into(),
        ],
        Vec::<(OsString, OsString)>::new(),
    )
}

/// What one case sends: the summary and the Healthchecks body.
struct Sent {
    summary: String,
    body: String,
}

fn send(case: &Case, scrubber: &Scrubber) -> Sent {
    let summary = summary::failure_message_with(
        "exit 1 after 3s".into(),
        &case.stdout,
        &case.stderr,
        scrubber,
        256,
    );
    // Both streams, stderr first (the corpus holds them apart, not interleaved).
    let output = [case.stderr.as_slice(), case.stdout.as_slice()].concat();
    let tail = body::OutputTail {
        bytes: &output,
        cut: false,
    };
    let body = body::build(&summary, &tail, scrubber, 10_000);
    Sent { summary, body }
}

/// A miss as found today: where it leaked and the sent line that held it.
struct Miss {
    leak: Leak,
    line: String,
    program: String,
}

type Misses = BTreeMap<(String, String), Miss>;

fn score(cases: &[Case]) -> (Misses, usize) {
    let scrubber = scrubber();
    let mut misses = Misses::new();
    let mut total = 0;
    for case in cases {
        let sent = send(case, &scrubber);
        let values: Vec<&str> = case.secrets.iter().map(|(_, v)| v.as_str()).collect();
        let runs = Runs::of(&values);
        // Every credential is in what the program printed: else its score would mean nothing.
        let printed =
            String::from_utf8_lossy(&[case.stdout.as_slice(), &case.stderr].concat()).into_owned();
        let in_output = runs.found(&printed);
        if let Some(i) = in_output.iter().position(|found| !found) {
            panic!(
                "case {}: secret {} is not in its output",
                case.id, case.secrets[i].0
            );
        }
        let mut in_summary = runs.found(&sent.summary);
        let mut in_body = runs.found(&sent.body);
        for (i, value) in values.iter().enumerate() {
            in_summary[i] |= leaks::in_hex(&sent.summary, value);
            in_body[i] |= leaks::in_hex(&sent.body, value);
        }
        for (i, (name, value)) in case.secrets.iter().enumerate() {
            total += 1;
            let leak = match () {
                _ if in_summary[i] => Leak::Summary,
                _ if in_body[i] => Leak::Body,
                _ => continue,
            };
            let line = sent
                .body
                .lines()
                .find(|l| leaks(l, value))
                .unwrap_or_default()
                .to_owned();
            let miss = Miss {
                leak,
                line,
                program: case.program.clone(),
            };
            misses.insert((case.id.clone(), name.clone()), miss);
        }
    }
    (misses, total)
}

fn percent(kept: usize, total: usize) -> f64 {
    100.0 * kept as f64 / total.max(1) as f64
}

#[test]
fn real_programs_credentials_stay_out_of_summary_and_body() {
    let text = std::fs::read_to_string(format!("{DIR}/cases.txt")).unwrap();
    let cases = format::parse_cases(&text);
    let programs: std::collections::BTreeSet<&str> =
        cases.iter().map(|c| c.program.as_str()).collect();
    let (misses, total) = score(&cases);
    let in_summary = misses.values().filter(|m| m.leak == Leak::Summary).count();
    println!(
        "program corpus: {} programs, {} cases, {total} credentials; kept out of the summary \
         {}/{total} ({:.1} %), out of the body {}/{total} ({:.1} %)",
        programs.len(),
        cases.len(),
        total - in_summary,
        percent(total - in_summary, total),
        total - misses.len(),
        percent(total - misses.len(), total),
    );

    let missed_path = format!("{DIR}/missed.txt");
    let known = format::parse_missed(&std::fs::read_to_string(&missed_path).unwrap_or_default());
    if std::env::var_os("CORPUS_WRITE_MISSED").is_some() {
        std::fs::write(&missed_path, write_missed(&misses, &known)).unwrap();
        panic!(
            "CORPUS_WRITE_MISSED: {missed_path} rewritten with {} misses; check the reasons, commit, and run again without it",
            misses.len()
        );
    }
    let problems = compare(&misses, &known);
    assert!(
        problems.is_empty(),
        "{} differences from {missed_path} (a new miss, or one that is now caught: edit the file; \
         it may only shrink):\n{}",
        problems.len(),
        problems.join("\n")
    );
}

/// The differences between today's misses and the known ones, one line each. Lines never
/// quote a credential beyond what the corpus itself holds.
fn compare(misses: &Misses, known: &BTreeMap<(String, String), Known>) -> Vec<String> {
    let mut problems = Vec::new();
    for ((id, name), miss) in misses {
        match known.get(&(id.clone(), name.clone())) {
            None => problems.push(format!(
                "new miss: {id} | {name} | {} ({}): {}",
                miss.leak.name(),
                miss.program,
                miss.line
            )),
            Some(k) if k.leak == Leak::Body && miss.leak == Leak::Summary => {
                problems.push(format!(
                    "worse: {id} | {name} now reaches the summary: {}",
                    miss.line
                ))
            }
            Some(k) if k.leak == Leak::Summary && miss.leak == Leak::Body => problems.push(
                format!("better: {id} | {name} is out of the summary now: list it as `body`"),
            ),
            Some(_) => {}
        }
    }
    for (id, name) in known.keys() {
        if !misses.contains_key(&(id.clone(), name.clone())) {
            problems.push(format!(
                "caught now: {id} | {name}: remove it from missed.txt"
            ));
        }
    }
    problems
}

const MISSED_HEADER: &str = "\
# Known misses of the real-program corpus (cases.txt): credentials that today's scrubber lets
# reach the Healthchecks body, and the summary where it says `summary`. One a line:
#   <case id> | <secret name> | summary|body | <reason: the class of text it sits in>
# tests/integration/program_corpus fails on a miss not listed here and on a listed one that is
# now caught: this file may only shrink. Written by CORPUS_WRITE_MISSED=1 (reasons by class).
";

fn write_missed(misses: &Misses, known: &BTreeMap<(String, String), Known>) -> String {
    let mut out = String::from(MISSED_HEADER);
    for ((id, name), miss) in misses {
        let reason = match known.get(&(id.clone(), name.clone())) {
            Some(k) => k.reason.clone(),
            None => classify(&miss.line).to_owned(),
        };
        out.push_str(&format!(
            "{id} | {name} | {} | {reason}\n",
            miss.leak.name()
        ));
    }
    out
}

/// The class of a line a credential leaked in, for a new miss's reason. Only a first guess,
/// from the line as it was sent: the reasons in missed.txt are reviewed by hand.
fn classify(line: &str) -> &'static str {
    const CLASSES: &[(&[&str], &str)] = &[
        (
            &["+ "],
            "set -x trace: a password flag or variable on a command line",
        ),
        (
            &["IDENTIFIED BY", "PASSWORD '", "PASSWORD('"],
            "SQL echo: IDENTIFIED BY / PASSWORD '…'",
        ),
        (
            &[
                "Key (",
                "Duplicate entry",
                "Failing row",
                "VALUES",
                "parameters:",
                "sql",
            ],
            "SQL detail or echo quoting a token column's value",
        ),
        (
            &[
                "host name",
                "ENOTFOUND",
                "lookup ",
                "\"port\"",
                "port",
                "such host",
            ],
            "password with `@`, `/` or `:` read as a host or port",
        ),
        (
            &["Setting --"],
            "wget --debug: `Setting --password (…) to …`",
        ),
        (
            &["PASS ", "AUTH", "LOGIN"],
            "protocol trace: PASS / AUTH / LOGIN",
        ),
        (
            &["Authorization", "X-Api-Key", "Bearer", "headers"],
            "header value in a trace or error",
        ),
        (&["['", "[ '"], "argument list (Python list, Node array)"),
        (&["│", "─"], "traceback locals drawn as a tree or table"),
        (&["://"], "URL user info"),
        (
            &["requirepass", ">>>", "password"],
            "config or source line quoted back",
        ),
        (
            &["assert", "expected", "=="],
            "assertion showing the values compared",
        ),
        (&["="], "NAME=value pair"),
    ];
    CLASSES
        .iter()
        .find(|(needles, _)| needles.iter().any(|n| line.contains(n)))
        .map_or("other", |(_, class)| class)
}

#[test]
fn corpus_format_reads_back_escapes_and_line_ends() {
    let text = "# a comment\n\n=== one\nprogram: demo\nexit: 1\nsecret password: a\\tb\\\\c\n\
                command:\n|echo\nstdout:\n|a\\x1b[0m\\r\n|\nstderr:\n|no end\n\n\
                === two\nprogram: demo\nsecret token: Xyz123456\nstdout:\nstderr:\n|\n|\n";
    let cases = format::parse_cases(text);
    assert_eq!(cases.len(), 2);
    assert_eq!(cases[0].id, "one");
    assert_eq!(cases[0].program, "demo");
    assert_eq!(
        cases[0].secrets,
        [("password".to_owned(), "a\tb\\c".to_owned())]
    );
    assert_eq!(cases[0].stdout, b"a\x1b[0m\r\n");
    assert_eq!(cases[0].stderr, b"no end");
    assert_eq!(cases[1].stdout, b"");
    assert_eq!(cases[1].stderr, b"\n");
}

#[test]
fn a_run_of_six_characters_is_a_leak() {
    let secret = "Qm3vXr9TtLw2";
    assert!(leaks("key Qm3vXr9TtLw2 sent", secret));
    assert!(leaks("cut: [REDACTED]Xr9TtL", secret));
    assert!(!leaks("cut: [REDACTED]Xr9Tt", secret));
    assert!(leaks("words: saffron", "quokka saffron lantern"));
    assert!(leaks("a word: mango.", "quokka mango lantern"));
    assert!(!leaks("a word: mang.", "quokka mango lantern"));
    assert!(!leaks("short ab", "abcde"));
    assert!(leaks("short abcde", "abcde"));
}

#[test]
fn six_bytes_of_a_credential_in_hex_are_a_leak() {
    use leaks::in_hex;
    let secret = "Qm3vXr9TtLw2";
    // `Xr9TtL` is 58 72 39 54 74 4c.
    assert!(in_hex("x 5872 3954 744c y", secret));
    assert!(in_hex("  0020:  58 72 39 54  74 4C 00", secret));
    assert!(in_hex("58:72:39:54:74:4c", secret));
    assert!(!in_hex("58 72 39 54 74", secret));
    assert!(!in_hex("[hex dump]", secret));
    assert!(!in_hex("51 6d", "Qm"));
}
