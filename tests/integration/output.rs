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
    // More than the reader's pipe holds on stdout, so crontap-run is still writing when the
    // job has ended (its stderr fits in the pipe), then the real error last.
    let script = "head -c 100000 /dev/zero; echo noise >&2; echo 'the real error' >&2; exit 1";
    let mut child = Crontap::with_url(&receiver.url())
        .args(["--", "sh", "-c", script])
        .spawn(out_w, err_w);
    // The reader starts well after the job has exited and the one-second output grace has
    // passed: this is the slow reader under test, not a wait for readiness.
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
    assert_eq!(stdout.len(), 100_000);
    assert_eq!(stderr, b"noise\nthe real error\n");
    assert!(receiver.only().msg().unwrap().ends_with(": the real error"));
}

#[test]
fn one_destination_keeps_the_order_of_lines_and_the_summary_reads_stderr() {
    let receiver = Receiver::start();
    let (mut reader, writer) = std::io::pipe().unwrap();
    // Lines written one at a time, as a job logs; the job pauses between them so each is
    // read before the next (bursts faster than that may be regrouped per stream).
    let script = "for i in 1 2 3 4 5 6 7 8; do echo out$i; sleep 0.05; echo err$i >&2; sleep 0.05; done; \
                  echo 'ERROR: disk full' >&2; sleep 0.05; echo 'cleanup done'; exit 2";
    let mut child = Crontap::with_url(&receiver.url())
        .args(["--", "sh", "-c", script])
        .spawn(writer.try_clone().unwrap(), writer);
    let mut text = String::new();
    reader.read_to_string(&mut text).unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(2));
    assert_no_secret(&text, "combined output");
    let mut expected: String = (1..=8).map(|i| format!("out{i}\nerr{i}\n")).collect();
    expected.push_str("ERROR: disk full\ncleanup done\n");
    assert_eq!(text, expected);
    // stdout and stderr stay separate streams: the summary still prefers stderr.
    assert!(
        receiver
            .only()
            .msg()
            .unwrap()
            .ends_with(": ERROR: disk full")
    );
}

#[test]
fn a_closed_stderr_keeps_the_exit_status() {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let (mut out_r, out_w) = std::io::pipe().unwrap();
    let mut child = Crontap::new()
        .arg("--dry-run")
        .args([
            "--timeout",
            "20s",
            "--",
            "sh",
            "-c",
            "echo lost >&2; head -c 1000000 /dev/zero >&2; echo kept; exit 3",
        ])
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

#[test]
fn a_closed_stdout_keeps_the_exit_status() {
    let receiver = Receiver::start();
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let (mut err_r, err_w) = std::io::pipe().unwrap();
    // Far more than a pipe holds after the reader is gone; --timeout ends a hang as 124.
    let script = "head -c 1000000 /dev/zero; echo 'done anyway' >&2; exit 3";
    let mut child = Crontap::with_url(&receiver.url())
        .args(["--timeout", "20s", "--", "sh", "-c", script])
        .spawn(writer, err_w);
    let mut stderr = String::new();
    err_r.read_to_string(&mut stderr).unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(3));
    assert_eq!(stderr, "done anyway\n");
    assert!(receiver.only().msg().unwrap().starts_with("exit 3 after "));
}
