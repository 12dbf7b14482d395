//! What reaches the heartbeat receiver for successful and failed runs.

use crate::harness::{Crontap, Receiver, SECRET};

#[test]
fn success_sends_one_get_to_the_url_and_prints_nothing() {
    let receiver = Receiver::start();
    let out = Crontap::with_url(&receiver.url()).sh("echo job output");
    assert_eq!(out.code, 0);
    assert_eq!(out.stdout, "job output\n");
    assert_eq!(
        out.stderr, "",
        "a successful run prints nothing of crontap-run's own"
    );
    let request = receiver.only();
    assert_eq!(request.target, format!("/ping/{SECRET}"));
    assert_eq!(
        request.user_agent.as_deref(),
        Some(concat!("crontap-run/", env!("CARGO_PKG_VERSION")))
    );
}

#[test]
fn failure_sends_summary_with_last_stderr_line() {
    let receiver = Receiver::start();
    let out = Crontap::with_url(&receiver.url())
        .sh("echo progress; echo 'Traceback follows' >&2; echo 'ValueError: row 17 has no customer id' >&2; exit 3");
    assert_eq!(out.code, 3);
    let request = receiver.only();
    assert!(
        request
            .target
            .starts_with(&format!("/ping/{SECRET}/fail?msg=")),
        "{}",
        request.target
    );
    let msg = request.msg().unwrap();
    assert!(msg.starts_with("exit 3 after "), "{msg}");
    assert!(
        msg.ends_with("s: ValueError: row 17 has no customer id"),
        "{msg}"
    );
}

#[test]
fn failure_falls_back_to_stdout_when_stderr_is_empty() {
    let receiver = Receiver::start();
    Crontap::with_url(&receiver.url()).sh("echo 'imported 0 of 5 rows'; echo; exit 1");
    let msg = receiver.only().msg().unwrap();
    assert!(msg.ends_with(": imported 0 of 5 rows"), "{msg}");
}

#[test]
fn signal_death_is_named_in_the_summary() {
    let receiver = Receiver::start();
    let out = Crontap::with_url(&receiver.url()).sh("echo dying >&2; kill -TERM $$");
    assert_eq!(out.code, 128 + 15);
    let msg = receiver.only().msg().unwrap();
    assert!(msg.starts_with("killed by SIGTERM after "), "{msg}");
    assert!(msg.ends_with(": dying"), "{msg}");
}

#[test]
fn summary_is_bounded_on_a_utf8_boundary_without_control_characters() {
    let receiver = Receiver::start();
    Crontap::with_url(&receiver.url())
        .args(["--msg-max", "40"])
        .sh(r#"printf '\033[31mfehler: \tüberlauf überall überall überall überall\033[0m\n' >&2; exit 2"#);
    let msg = receiver.only().msg().unwrap();
    assert!(msg.len() <= 40, "{} bytes: {msg}", msg.len());
    assert!(msg.ends_with('…'), "{msg}");
    assert!(!msg.chars().any(char::is_control), "{msg:?}");
    assert!(msg.starts_with("exit 2 after "), "{msg}");
}

/// Without `--msg-max`, the summary is cut at 256 bytes (DESIGN: Message format).
#[test]
fn summary_is_bounded_to_256_bytes_by_default() {
    let receiver = Receiver::start();
    Crontap::with_url(&receiver.url())
        .sh("yes 'disk full on /var/lib' | head -n 50 | tr '\\n' ' ' >&2; exit 1");
    let msg = receiver.only().msg().unwrap();
    assert!(
        (200..=256).contains(&msg.len()),
        "{} bytes: {msg}",
        msg.len()
    );
    assert!(msg.ends_with('…'), "{msg}");
    assert!(msg.starts_with("exit 1 after "), "{msg}");
}

#[test]
fn secrets_are_redacted_from_the_summary() {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let url_file = dir.path().join("url");
    std::fs::write(&url_file, receiver.url()).unwrap();
    // The job reads the URL file (the variable is not passed to it) and prints the URL, a
    // secret variable's value and a database URL with a password.
    let script = format!(
        "echo \"posting to $(cat {}) with $DB_PASSWORD via postgres://app:pg-pass-9@db/x password=hunter2\" >&2; exit 1",
        url_file.display()
    );
    // The job's own output passes through unchanged, secret and all; only the summary is
    // scrubbed, so this run is checked by hand rather than by the harness.
    let out = Crontap::new()
        .arg("--url-file")
        .arg(&url_file)
        .env("DB_PASSWORD", "correct-horse-battery")
        .args(["--", "sh", "-c", &script])
        .run_raw();
    assert_eq!(out.code, 1);
    assert_eq!(
        out.stderr.lines().count(),
        1,
        "only the job's own line: {}",
        out.stderr
    );
    let msg = receiver.only().msg().unwrap();
    for secret in [SECRET, "correct-horse-battery", "pg-pass-9", "hunter2"] {
        assert!(!msg.contains(secret), "{secret} in {msg}");
    }
    assert!(msg.contains("postgres://[REDACTED]@db/x"), "{msg}");
    assert!(msg.contains("password=[REDACTED]"), "{msg}");
}

#[test]
fn url_user_name_and_decoded_token_are_redacted() {
    let receiver = Receiver::start();
    // A token in the user-name part, and a path token with an escaped character.
    let url = format!("http://tokuser12345@{}/ping/{SECRET}%2Fxy", receiver.host());
    let out = Crontap::with_url(&url)
        .args([
            "--",
            "sh",
            "-c",
            &format!("echo 'seen tokuser12345 and {SECRET}/xy' >&2; exit 1"),
        ])
        .run_raw();
    assert_eq!(out.code, 1);
    let request = receiver.only();
    let fail = format!("/ping/{SECRET}%2Fxy/fail?msg=");
    assert!(
        request.target.starts_with(&fail),
        "escapes in the path are kept: {}",
        request.target
    );
    let msg = request.msg().unwrap();
    assert!(msg.ends_with(": seen [REDACTED] and [REDACTED]"), "{msg}");
}

#[test]
fn a_mounted_secret_with_a_trailing_newline_is_redacted() {
    let receiver = Receiver::start();
    Crontap::with_url(&receiver.url())
        .env("API_TOKEN", "tok-from-a-file\n")
        .sh("echo \"using $(printf %s \"$API_TOKEN\") now\" >&2; exit 1");
    let msg = receiver.only().msg().unwrap();
    assert!(msg.ends_with(": using [REDACTED] now"), "{msg}");
}

/// The run's own secret in the forms a job or a library may print it: upper-cased,
/// percent-encoded, or with a zero-width space inside.
#[test]
fn the_heartbeat_token_is_found_however_it_is_written() {
    let receiver = Receiver::start();
    let upper = SECRET.to_uppercase();
    let encoded: String = SECRET.bytes().map(|b| format!("%{b:02x}")).collect();
    let (head, tail) = SECRET.split_at(6);
    let script = format!(
        "printf 'a {upper} b %s c {head}\\342\\200\\213{tail} d\\n' '{encoded}' >&2; exit 1"
    );
    Crontap::with_url(&receiver.url()).sh(&script);
    let msg = receiver.only().msg().unwrap();
    assert!(
        msg.ends_with(": a [REDACTED] b [REDACTED] c [REDACTED] d"),
        "{msg}"
    );
}

/// A vertical tab, form feed, NEL or Unicode line separator inside `key: value` becomes a
/// space before the line is scrubbed, so the value goes with its key.
#[test]
fn a_line_like_character_does_not_split_a_key_from_its_value() {
    for (name, bytes) in [
        ("VT", "\\013"),
        ("FF", "\\014"),
        ("NEL", "\\302\\205"),
        ("LS", "\\342\\200\\250"),
        ("PS", "\\342\\200\\251"),
    ] {
        let receiver = Receiver::start();
        Crontap::with_url(&receiver.url()).sh(&format!(
            "printf 'login password:{bytes}Hunter2Secret\\n' >&2; exit 1"
        ));
        let msg = receiver.only().msg().unwrap();
        assert!(!msg.contains("Hunter2Secret"), "{name}: {msg}");
        assert!(
            msg.ends_with(": login password: [REDACTED]"),
            "{name}: {msg}"
        );
    }
}

/// A line whose start fell out of the output tail kept for the summary has lost its key's
/// name, and so what made its value a secret: it is never the summary's detail.
#[test]
fn a_line_whose_start_fell_out_of_the_tail_is_never_the_summary() {
    let receiver = Receiver::start();
    // 40 KiB on one line, more than the 32 KiB kept of a stream.
    let script = "printf 'password: ' >&2; \
        i=0; while [ $i -lt 1400 ]; do printf 'correct horse battery staple ' >&2; i=$((i+1)); done; \
        echo >&2; exit 1";
    Crontap::with_url(&receiver.url()).sh(script);
    let msg = receiver.only().msg().unwrap();
    assert!(!msg.contains("horse"), "{msg}");
    assert!(
        msg.starts_with("exit 1 after ") && !msg.contains(": "),
        "{msg}"
    );
}
