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
    refused(&["--retries", "1", "--retry-delay", "2h"], "--retry-delay");
    refused(&["--retry-on-exit", "1,256"], "--retry-on-exit");
    refused(
        &["--retries", "1", "--retry-on-exit", "1,127"],
        "--retry-on-exit",
    );
    // Options that mean nothing without --retries are refused rather than ignored.
    refused(&["--retry-delay", "10s"], "--retries");
    refused(&["--retry-on-exit", "75"], "--retries");
    refused(&["--ping-timeout", "soon"], "--ping-timeout");
    refused(&["--ping-timeout", "0s"], "--ping-timeout");
    refused(&["--ping-budget", "1h"], "--ping-budget");
    refused(&["--log-format", "xml"], "--log-format");
    refused(&["--output", "always"], "--output");
    refused(&["--job", "../etc"], "--job");
    refused(&["--idempotency-key", "run 42"], "--idempotency-key");
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
fn state_servers_need_the_full_build() {
    // Shared stores are built in by cargo features; a build without one refuses its URLs
    // when a state feature would use them, and never prints the password.
    let unsupported = [
        (
            "postgres://crontap:pg-pass-9@db.example/state",
            cfg!(feature = "postgres"),
        ),
        ("postgresql://db.example/state", cfg!(feature = "postgres")),
        ("redis://:pg-pass-9@127.0.0.1:1", cfg!(feature = "redis")),
        ("rediss://cache.example:6380/0", cfg!(feature = "redis")),
    ];
    for (url, _) in unsupported.iter().filter(|(_, built_in)| !built_in) {
        refused(&["--state-url", url, "--no-overlap"], "crontap-run-full");
        refused(&["--state-url", url, "--once-per", "1d"], "--state-url");
        let out = Crontap::new()
            .env("CRONTAP_STATE_URL", url)
            .args(["--no-overlap", "--", "true"])
            .run();
        assert_eq!(out.code, 125);
        assert!(out.stderr.contains("CRONTAP_STATE_URL"), "{}", out.stderr);
        assert!(!out.stderr.contains("pg-pass-9"), "{}", out.stderr);
        // A line that uses no state runs, whatever CRONTAP_STATE_URL says.
        let plain = Crontap::new()
            .env("CRONTAP_STATE_URL", url)
            .args(["-q", "--", "true"])
            .run();
        assert_eq!(plain.code, 0, "{}", plain.stderr);
    }

    // What works now is accepted and runs the command.
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let marker = dir.path().join("ran");
    for args in [
        &["--retries", "2"][..],
        &["--retries", "1", "--retry-delay", "10s"],
        &["--retries", "1", "--retry-on-exit", "1,75"],
        &["--job", "nightly-import"],
        &["--no-overlap"],
        &["--once-per", "1d"],
        &["--idempotency-key", "run-42"],
    ] {
        let out = Crontap::new()
            .arg("-q")
            .arg("--state-dir")
            .arg(&state)
            .args(args)
            .arg("--")
            .arg("touch")
            .arg(&marker)
            .run();
        assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
        assert!(marker.exists(), "{args:?}: the command did not run");
        std::fs::remove_file(&marker).unwrap();
    }
    let by_url = Crontap::new()
        .arg("-q")
        .arg("--state-url")
        .arg(format!("file://{}", dir.path().join("by-url").display()))
        .args(["--no-overlap", "--", "touch"])
        .arg(&marker)
        .run();
    assert_eq!(by_url.code, 0, "{}", by_url.stderr);
    assert!(
        marker.exists(),
        "--state-url file://: the command did not run"
    );
    let from_env = Crontap::new()
        .args(["-q", "--state-dir"])
        .arg(&state)
        .env("CRONTAP_JOB", "nightly")
        .sh("exit 0");
    assert_eq!(from_env.code, 0, "{}", from_env.stderr);

    let empty = tempfile::tempdir().unwrap();
    let history = Crontap::new()
        .args(["history", "--state-dir"])
        .arg(empty.path())
        .run();
    assert_eq!(history.code, 0, "{}", history.stderr);
    assert_eq!(history.stdout, "");
    let history = Crontap::new()
        .args(["history", "--state-dir"])
        .arg(&state)
        .run();
    assert_eq!(history.code, 0, "{}", history.stderr);
    // The stateful runs above, under the job name derived from `touch <marker>`.
    assert!(history.stdout.contains(" touch-"), "{}", history.stdout);
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

/// `CRONTAP_STATE_TIMEOUT` is `--state-timeout` from the environment, checked the same way.
#[test]
fn state_timeout_from_the_environment() {
    let dir = tempfile::tempdir().unwrap();
    let refused = Crontap::new()
        .env("CRONTAP_STATE_TIMEOUT", "0s")
        .args(["--no-overlap", "--", "true"])
        .run();
    assert_eq!(refused.code, 125);
    assert_eq!(refused.stderr.lines().count(), 1, "{}", refused.stderr);
    assert!(
        refused.stderr.contains("--state-timeout"),
        "{}",
        refused.stderr
    );
    let accepted = Crontap::new()
        .env("CRONTAP_STATE_TIMEOUT", "5s")
        .args(["-q", "--no-overlap", "--state-dir"])
        .arg(dir.path())
        .args(["--", "true"])
        .run();
    assert_eq!(accepted.code, 0, "{}", accepted.stderr);
}
