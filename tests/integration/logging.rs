//! crontap-run's own log lines: quiet by default, `-v`, `CRONTAP_LOG`, JSON, never the URL.

use crate::harness::{Crontap, Receiver, Reply};

#[test]
fn verbose_shows_debug_lines_without_the_url() {
    let receiver = Receiver::start();
    let out = Crontap::with_url(&receiver.url()).arg("-v").sh("exit 1");
    assert!(out.stderr.lines().count() >= 3, "{}", out.stderr);
    assert!(
        out.stderr
            .lines()
            .all(|l| l.starts_with("crontap-run: debug: ")),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains(&receiver.host()), "{}", out.stderr);
}

#[test]
fn crontap_log_takes_a_directive_and_trace_level_never_holds_the_url() {
    // Everything, including the HTTP libraries' own events, at the most detailed level.
    let receiver = Receiver::scripted(&[Reply::Status(500)]);
    let out = Crontap::with_url(&receiver.url())
        .env("CRONTAP_LOG", "trace")
        .sh("exit 1");
    assert!(
        out.stderr.contains("crontap-run: trace: ") || out.stderr.contains("crontap-run: debug: "),
        "{}",
        out.stderr
    );
    let invalid = Crontap::new()
        .env("CRONTAP_LOG", "crontap_run=loud")
        .sh("exit 0");
    assert_eq!(invalid.code, 125);
    assert!(invalid.stderr.contains("CRONTAP_LOG"), "{}", invalid.stderr);
}

#[test]
fn json_log_lines_are_objects() {
    let receiver = Receiver::scripted(&[Reply::Status(404)]);
    let out = Crontap::with_url(&receiver.url())
        .args(["--log-format", "json", "-v"])
        .sh("exit 1");
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert!(lines.len() >= 2, "{}", out.stderr);
    for line in lines {
        let value: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        assert!(
            value["level"].is_string() && value["message"].is_string(),
            "{line}"
        );
    }
    assert!(out.stderr.contains("HTTP 404"), "{}", out.stderr);
}

#[test]
fn quiet_keeps_ping_errors() {
    let receiver = Receiver::scripted(&[Reply::Status(410)]);
    let out = Crontap::with_url(&receiver.url()).arg("-q").sh("exit 0");
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    assert!(
        out.stderr.starts_with("crontap-run: error: ping to"),
        "{}",
        out.stderr
    );
}

#[test]
fn own_errors_follow_the_log_format() {
    let out = Crontap::with_url("ftp://example.com/x")
        .args(["--log-format", "json"])
        .sh("exit 0");
    assert_eq!(out.code, 125);
    let value: serde_json::Value = serde_json::from_str(out.stderr.trim()).expect("one JSON line");
    assert_eq!(value["level"], "ERROR");
    assert!(
        value["message"]
            .as_str()
            .unwrap()
            .contains("CRONTAP_HEARTBEAT_URL"),
        "{value}"
    );
}

#[test]
fn own_errors_print_even_when_logging_is_off() {
    let out = Crontap::with_url("ftp://example.com/x")
        .env("CRONTAP_LOG", "off")
        .sh("exit 0");
    assert_eq!(out.code, 125);
    assert!(
        out.stderr.starts_with("crontap-run: error: "),
        "{}",
        out.stderr
    );
}
