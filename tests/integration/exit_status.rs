//! crontap-run exits with the command's status, coreutils-style for the special cases.

use std::os::unix::fs::PermissionsExt;

use crate::harness::{Crontap, Receiver, SECRET};

#[test]
fn every_exit_status_is_passed_through_and_reported() {
    let receiver = Receiver::start();
    for code in 0..=255 {
        let out = Crontap::with_url(&receiver.url()).sh(&format!("exit {code}"));
        assert_eq!(out.code, code, "exit {code}");
    }
    let received = receiver.received();
    assert_eq!(received.len(), 256);
    assert_eq!(received[0].target, format!("/ping/{SECRET}"));
    for (code, request) in received.iter().enumerate().skip(1) {
        let msg = request
            .msg()
            .unwrap_or_else(|| panic!("no msg for exit {code}: {}", request.target));
        assert!(msg.starts_with(&format!("exit {code} after ")), "{msg}");
    }
}

#[test]
fn command_not_found_is_127_and_reported() {
    let receiver = Receiver::start();
    let out = Crontap::with_url(&receiver.url())
        .args(["--", "/nonexistent/import.sh", "--full"])
        .run();
    assert_eq!(out.code, 127);
    assert_eq!(
        receiver.only().msg().unwrap(),
        "could not start /nonexistent/import.sh: No such file or directory"
    );
}

#[test]
fn command_not_executable_is_126_and_reported() {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("import.sh");
    std::fs::write(&script, "#!/bin/sh\necho never\n").unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = Crontap::with_url(&receiver.url())
        .arg("--")
        .arg(&script)
        .run();
    assert_eq!(out.code, 126);
    assert_eq!(out.stdout, "");
    let msg = receiver.only().msg().unwrap();
    assert_eq!(
        msg,
        format!("could not start {}: Permission denied", script.display())
    );
}

#[test]
fn the_command_runs_directly_without_a_shell() {
    let receiver = Receiver::start();
    let out = Crontap::with_url(&receiver.url())
        .args(["--", "echo", "$HOME", "a;b", "*"])
        .run();
    assert_eq!(out.stdout, "$HOME a;b *\n");
    assert_eq!(out.code, 0);
}
