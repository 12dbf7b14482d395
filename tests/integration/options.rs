//! Option validation: clear one-line errors naming the option, exit 125, never a panic.

use crate::harness::Crontap;

fn refused(args: &[&str], expect: &str) {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let out = Crontap::new()
        .args(args)
        .arg("--")
        .arg("touch")
        .arg(&marker)
        .run();
    assert_eq!(out.code, 125, "{args:?}: {}", out.stderr);
    assert_eq!(out.stderr.lines().count(), 1, "{args:?}: {}", out.stderr);
    assert!(
        out.stderr.starts_with("crontap-run: error: "),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains(expect),
        "{args:?}: expected {expect:?} in {}",
        out.stderr
    );
    assert!(!marker.exists(), "{args:?}: the command ran");
}

#[test]
fn out_of_range_values() {
    refused(&["--msg-max", "31"], "--msg-max");
    refused(&["--msg-max", "2049"], "--msg-max");
    refused(&["--ping-retries", "11"], "--ping-retries");
    refused(&["--retries", "6"], "--retries");
    refused(&["--retry-on-exit", "1,256"], "--retry-on-exit");
    refused(&["--ping-timeout", "soon"], "--ping-timeout");
    refused(&["--ping-timeout", "0s"], "--ping-timeout");
    refused(&["--ping-budget", "1h"], "--ping-budget");
    refused(&["--log-format", "xml"], "--log-format");
    refused(&["--job", "../etc"], "--job");
    refused(&["--state-url", "mysql://user:pw@db/x"], "--state-url");
    refused(
        &["--once-per", "1d", "--idempotency-key", "k"],
        "--once-per",
    );
    refused(&["-q", "-v"], "--quiet");
    refused(&["--no-such-option"], "--no-such-option");
}

#[test]
fn accepted_bounds() {
    for max in ["32", "2048"] {
        let out = Crontap::new().args(["-q", "--msg-max", max]).sh("exit 0");
        assert_eq!(out.code, 0, "{max}: {}", out.stderr);
    }
}

#[test]
fn later_options_are_refused_until_they_work() {
    for args in [
        &["--retries", "2"][..],
        &["--retry-delay", "10s"],
        &["--retry-on-exit", "1,75"],
        &["--job", "nightly-import"],
        &["--no-overlap"],
        &["--once-per", "1d"],
        &["--idempotency-key", "run-42"],
        &["--state-dir", "/tmp/x"],
        &["--state-url", "redis://127.0.0.1:1"],
    ] {
        refused(args, "not yet supported");
        refused(args, args[0]);
    }
    let out = Crontap::new().env("CRONTAP_JOB", "nightly").sh("exit 0");
    assert_eq!(out.code, 125);
    let expected = "--job (CRONTAP_JOB) is not yet supported";
    assert!(out.stderr.contains(expected), "{}", out.stderr);
    let history = Crontap::new().arg("history").run();
    assert_eq!(history.code, 125);
    assert!(
        history.stderr.contains("not yet supported"),
        "{}",
        history.stderr
    );
}

#[test]
fn missing_command_and_help() {
    let out = Crontap::new().run();
    assert_eq!(out.code, 125);
    assert!(out.stderr.contains("<COMMAND>"), "{}", out.stderr);
    let help = Crontap::new().arg("--help").run();
    assert_eq!(help.code, 0);
    assert!(help.stdout.contains("--ping-budget"));
    let version = Crontap::new().arg("--version").run();
    assert_eq!(
        version.stdout.trim(),
        concat!("crontap-run ", env!("CARGO_PKG_VERSION"))
    );
}
