//! Texts glued from the fragments the framing, call, default, query and base64 rules look
//! for, with non-ASCII characters and line breaks between them: scrubbing never panics,
//! scrubbing again changes nothing, and the work on a long line of one of them grows with
//! its length, not with its square.

use std::time::{Duration, Instant};

use crontap_scrub::Scrubber;

const FRAGMENTS: &[&str] = &[
    "password=",
    "password: ",
    "\"password\": \"",
    "password: str = \"",
    "token := ",
    "${DB_PASSWORD:-",
    "${db.password:",
    "}",
    "setPassword(\"",
    "login(\"u\", \"",
    "getConnection(\"jdbc:x\", \"u\", \"",
    "os.getenv(\"API_KEY\", \"",
    "process.env.API_TOKEN || '",
    "(\"password\", \"",
    "- name: DB_PASSWORD\n  value: ",
    "<password>",
    "</password>",
    "?token=",
    "&key=",
    "?key=a",
    "password:-",
    "password: is ",
    "MAILGUN_KEY:",
    "&amp;sig=",
    "#",
    "Server=db;Password=\"",
    "PWD={",
    "}}",
    "password: |\n  ",
    "password: !!str ",
    "“",
    "”",
    "X-Request-Id: ",
    "req_",
    "SGVsbG8gd29ybGQsIHRoaXMgaXMgYSBsb2cgbGluZQ==",
    "YWRtaW46aHVudGVyMnBhc3N3b3JkMTIz",
    "P@ss!w0rd#2024$%^&*()",
    "(",
    ")",
    "[",
    "]",
    "{",
    ",",
    ";",
    "&",
    "'",
    "\"",
    "\\\"",
    " ",
    "\n",
    "é",
    "«",
    "☃",
    "𑏌",
    "[REDACTED]",
    "sshpass -p a b ",
    " ssh ",
    "jdbc:oracle:thin:a/",
    "@//db:1521/X",
    "u:p q@tcp(",
    "http://u:p q ",
    "@db.example:5432",
    "INSERT INTO t (a, password) VALUES (",
    "'x', ",
    "Qm3vXr9TtLw2ZpK8sNb4:",
    "Pa55#9hbmU!*UJh7rePtAVJG",
    "host name \"Kx9qZ4mWp\"",
    "ab-",
    "sk_",
    ":",
    "password:\n    ",
    "334 UGFzc3dvcmQ6\n -> ",
    "Property: x.password\n    Value: \"",
    "'[REDACTED]\n",
];

fn text(rng: &mut fastrand::Rng, pieces: usize) -> String {
    (0..pieces)
        .map(|_| FRAGMENTS[rng.usize(..FRAGMENTS.len())])
        .collect()
}

#[test]
fn glued_fragments_never_panic_and_scrub_once() {
    let scrubber = Scrubber::new(Vec::new(), Vec::new());
    let mut rng = fastrand::Rng::with_seed(20261129);
    for _ in 0..3000 {
        let pieces = rng.usize(1..24);
        let input = text(&mut rng, pieces);
        let once = scrubber.scrub(&input);
        assert_eq!(scrubber.scrub(&once), once, "input: {input:?}");
    }
}

/// The shortest of three times to scrub `fragment` repeated to `size` bytes (a pause of a
/// loaded machine lengthens one run, not all three), and the scrubbed text.
fn time(scrubber: &Scrubber, fragment: &str, size: usize) -> (Duration, String) {
    let line = fragment.repeat(size / fragment.len().max(1));
    let mut fastest = Duration::MAX;
    let mut out = String::new();
    for _ in 0..3 {
        let started = Instant::now();
        out = scrubber.scrub(&line);
        fastest = fastest.min(started.elapsed());
    }
    (fastest, out)
}

#[test]
fn a_long_line_of_fragments_stays_linear_and_scrubs_once() {
    let scrubber = Scrubber::new(Vec::new(), Vec::new());
    let mut quadratic = Vec::new();
    for fragment in FRAGMENTS {
        // Four times the text: four times the work if linear, sixteen if quadratic. Only
        // a line slow enough to tell is judged, each size by its fastest of three runs, and
        // twice, for a loaded machine.
        let slow = |f: &str| {
            let ((small, _), (large, out)) =
                (time(&scrubber, f, 8 * 1024), time(&scrubber, f, 32 * 1024));
            // The rules read a bounded neighbourhood; one pass must still finish the job.
            assert_eq!(scrubber.scrub(&out), out, "not stable: {f:?}");
            large > Duration::from_millis(40) && large > small * 10
        };
        if slow(fragment) && slow(fragment) {
            quadratic.push(*fragment);
        }
    }
    assert!(
        quadratic.is_empty(),
        "work grows faster than the text: {quadratic:?}"
    );
}
