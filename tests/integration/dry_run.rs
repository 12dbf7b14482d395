//! `--dry-run` runs the command and shows what would be sent, sending nothing.

use crate::harness::{Crontap, Receiver};

#[test]
fn dry_run_sends_nothing_and_shows_the_request() {
    let receiver = Receiver::start();
    let out = Crontap::with_url(&receiver.url())
        .arg("--dry-run")
        .sh("echo 'password=hunter2 failed' >&2; exit 3");
    assert_eq!(out.code, 3);
    assert!(receiver.received().is_empty());
    let line = out.stderr.lines().last().unwrap();
    let expected = format!("GET http://{}/…/fail?msg=exit 3 after ", receiver.host());
    assert!(line.contains(&expected), "{line}");
    assert!(line.ends_with("s: password=[REDACTED] failed"), "{line}");
    assert!(!line.contains("hunter2"), "{line}");
}

#[test]
fn dry_run_success_and_without_a_url() {
    let receiver = Receiver::start();
    let out = Crontap::with_url(&receiver.url())
        .arg("--dry-run")
        .sh("exit 0");
    assert_eq!(out.code, 0);
    assert!(
        out.stderr
            .ends_with(&format!("GET http://{}/…\n", receiver.host())),
        "{}",
        out.stderr
    );
    assert!(receiver.received().is_empty());

    let none = Crontap::new().arg("--dry-run").sh("exit 2");
    assert_eq!(none.code, 2);
    assert_eq!(none.stderr.lines().count(), 1, "{}", none.stderr);
    assert!(
        none.stderr.contains("no heartbeat URL configured"),
        "{}",
        none.stderr
    );
    assert!(
        none.stderr.contains("/fail?msg=exit 2 after "),
        "{}",
        none.stderr
    );
}
