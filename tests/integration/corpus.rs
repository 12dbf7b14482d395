//! The stack traces of the corpus (tests/corpus/traces), scored through the binary's
//! summary builder: every trace must collapse to its error line. The test prints the score
//! and fails below 100 %. The secret and benign lines are scored by the scrubber crate on
//! its own (crates/scrub/tests/corpus.rs).

use std::time::Duration;

use crontap_run::report::heartbeat::HeartbeatUrl;
use crontap_run::report::summary;
use crontap_run::run::outcome::Outcome;
use crontap_scrub::Scrubber;

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/corpus");

fn scrubber() -> Scrubber {
    let url = HeartbeatUrl::parse("https://hb.example/ping/corpus-token-123", "corpus").unwrap();
    Scrubber::new(
        url.secrets(),
        [("DB_PASSWORD".into(), "correct-horse-battery".into())],
    )
}

#[test]
fn corpus_traces_collapse_to_their_error_line() {
    let scrubber = scrubber();
    let mut failures = Vec::new();
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
    let failed = failures.len();
    println!(
        "corpus: traces {}/{} ({:.0} %)",
        traces.len() - failed,
        traces.len(),
        100.0 * (traces.len() - failed) as f64 / traces.len().max(1) as f64
    );
    assert!(
        failures.is_empty(),
        "{} trace failures:\n{}",
        failed,
        failures.join("\n")
    );
}
