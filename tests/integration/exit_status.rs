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
    // Besides the ping, one line for cron to mail.
    assert_eq!(
        out.stderr,
        "crontap-run: error: failed to run command '/nonexistent/import.sh': No such file or directory\n"
    );
}

/// With no URL (or a ping that fails), the line on stderr is all the operator gets: it is
/// there whatever the log level, names the command on one line without its escapes, and
/// holds nothing else of crontap-run's.
#[test]
fn a_command_that_cannot_start_is_one_line_on_stderr_even_without_a_url() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("import.sh");
    std::fs::write(&script, "#!/bin/sh\necho never\n").unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o644)).unwrap();
    let denied = format!(
        "crontap-run: error: failed to run command '{}': Permission denied\n",
        script.display()
    );
    let cases = [
        ("/nonexistent/import.sh".to_owned(), 127, "crontap-run: error: failed to run command '/nonexistent/import.sh': No such file or directory\n".to_owned()),
        ("no-such-command-here".to_owned(), 127, "crontap-run: error: failed to run command 'no-such-command-here': No such file or directory\n".to_owned()),
        ("/nonexistent/\u{1b}[31mred\nline".to_owned(), 127, "crontap-run: error: failed to run command '/nonexistent/red line': No such file or directory\n".to_owned()),
        (script.display().to_string(), 126, denied),
    ];
    for (command, code, line) in cases {
        for quiet in [false, true] {
            let mut crontap = Crontap::new();
            if quiet {
                crontap.arg("-q");
            }
            let out = crontap.args(["--", &command]).run();
            assert_eq!(out.code, code, "{command:?}: {}", out.stderr);
            // The warning that no URL is configured comes first, unless quiet.
            let last = out.stderr.lines().last().unwrap_or_default();
            assert_eq!(format!("{last}\n"), line, "{command:?} quiet: {quiet}");
            assert_eq!(out.stderr.matches("failed to run").count(), 1);
            if quiet {
                assert_eq!(out.stderr, line);
            }
        }
    }
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
