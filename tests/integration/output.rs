//! stdin, stdout and stderr reach the command and crontap-run's own streams unchanged.

use std::io::Read;
use std::time::Duration;

use crate::harness::{Crontap, Receiver, assert_no_secret};

#[test]
fn stdin_reaches_the_command() {
    let out = Crontap::new()
        .arg("-q")
        .stdin(b"line one\nline two\n")
        .args(["--", "cat"])
        .run();
    assert_eq!(out.stdout, "line one\nline two\n");
}

#[test]
fn stdout_and_stderr_stay_separate() {
    let out = Crontap::new()
        .arg("-q")
        .sh("echo to-out; echo to-err >&2; echo more-out");
    assert_eq!(out.stdout, "to-out\nmore-out\n");
    assert_eq!(out.stderr, "to-err\n");
}

#[test]
fn output_is_passed_through_byte_exact() {
    // All 256 byte values, then a large chunk, with no trailing newline.
    let script = r#"i=0; while [ $i -lt 256 ]; do printf "\\$(printf %o $i)"; i=$((i+1)); done; head -c 300000 /dev/zero | tr '\0' 'x'"#;
    let out = Crontap::new().arg("-q").sh(script);
    let mut expected: Vec<u8> = (0..=255u8).collect();
    expected.extend(std::iter::repeat_n(b'x', 300_000));
    assert_eq!(out.raw_stdout.len(), expected.len());
    assert!(out.raw_stdout == expected, "bytes differ");
}

#[test]
fn a_slow_reader_gets_everything_and_the_summary_the_last_line() {
    let receiver = Receiver::start();
    let (mut out_r, out_w) = std::io::pipe().unwrap();
    let (mut err_r, err_w) = std::io::pipe().unwrap();
    // Far more than a pipe holds, on both streams, then the real error last.
    let script = "head -c 300000 /dev/zero; head -c 300000 /dev/zero | tr '\\0' x >&2; echo >&2; echo 'the real error' >&2; exit 1";
    let mut child = Crontap::with_url(&receiver.url())
        .args(["--", "sh", "-c", script])
        .spawn(out_w, err_w);
    // The reader starts well after the command has exited and the one-second output grace
    // has passed: this is the slow reader under test, not a wait for readiness.
    std::thread::sleep(Duration::from_millis(1500));
    let stderr = std::thread::spawn(move || {
        let mut buf = Vec::new();
        err_r.read_to_end(&mut buf).unwrap();
        buf
    });
    let mut stdout = Vec::new();
    out_r.read_to_end(&mut stdout).unwrap();
    let stderr = stderr.join().unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(1));
    assert_eq!(stdout.len(), 300_000);
    assert_eq!(stderr.len(), 300_000 + "\nthe real error\n".len());
    assert!(stderr.ends_with(b"\nthe real error\n"));
    assert_no_secret(&String::from_utf8_lossy(&stderr), "stderr");
    assert!(receiver.only().msg().unwrap().ends_with(": the real error"));
}

#[test]
fn one_destination_keeps_the_order_of_lines() {
    let receiver = Receiver::start();
    let (mut reader, writer) = std::io::pipe().unwrap();
    let script = "for i in 1 2 3 4 5 6 7 8 9 10; do echo out$i; echo err$i >&2; done; exit 2";
    let mut child = Crontap::with_url(&receiver.url())
        .args(["--", "sh", "-c", script])
        .spawn(writer.try_clone().unwrap(), writer);
    let mut text = String::new();
    reader.read_to_string(&mut text).unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(2));
    assert_no_secret(&text, "combined output");
    let expected: String = (1..=10).map(|i| format!("out{i}\nerr{i}\n")).collect();
    assert_eq!(text, expected);
    assert!(receiver.only().msg().unwrap().ends_with(": err10"));
}

#[test]
fn a_closed_stderr_keeps_the_exit_status() {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let (mut out_r, out_w) = std::io::pipe().unwrap();
    let mut child = Crontap::new()
        .arg("--dry-run")
        .args(["--", "sh", "-c", "echo lost >&2; echo kept; exit 3"])
        .spawn(out_w, writer);
    let mut stdout = String::new();
    out_r.read_to_string(&mut stdout).unwrap();
    assert_eq!(stdout, "kept\n");
    assert_eq!(child.wait().unwrap().code(), Some(3));
}

#[test]
fn a_background_process_holding_the_pipe_does_not_hold_crontap_run() {
    let receiver = Receiver::start();
    let out = Crontap::with_url(&receiver.url()).sh("sleep 60 & echo started");
    assert_eq!(out.code, 0);
    assert_eq!(out.stdout, "started\n");
    assert!(
        out.elapsed < Duration::from_secs(30),
        "took {:?}",
        out.elapsed
    );
    assert_eq!(receiver.received().len(), 1);
}
