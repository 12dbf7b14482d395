//! stdin, stdout and stderr reach the command and the terminal unchanged.

use crate::harness::Crontap;

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
    let mut bin = std::process::Command::new(env!("CARGO_BIN_EXE_crontap-run"));
    bin.env_remove("CRONTAP_HEARTBEAT_URL");
    // All 256 byte values, then a large chunk, with no trailing newline.
    let script = r#"i=0; while [ $i -lt 256 ]; do printf "\\$(printf %o $i)"; i=$((i+1)); done; head -c 300000 /dev/zero | tr '\0' 'x'"#;
    let out = bin.args(["-q", "--", "sh", "-c", script]).output().unwrap();
    let mut expected: Vec<u8> = (0..=255u8).collect();
    expected.extend(std::iter::repeat_n(b'x', 300_000));
    assert_eq!(out.stdout.len(), expected.len());
    assert!(out.stdout == expected, "bytes differ");
}
