//! The end's body: the scrubbed output tail, stack traces kept, bounded by `--body-max`
//! on a UTF-8 boundary, and memory bounded whatever the output size.

use std::io::Read;
use std::process::Stdio;

use super::{assert_end, healthchecks, output_lines, server};
use crate::harness::{BINARY, Crontap, SECRET, assert_no_secret};

#[test]
fn secrets_in_the_output_are_redacted_from_the_body() {
    let (hc, url) = server();
    let out = healthchecks(&url).sh("echo 'connecting with password=hunter2xyz'; \
         echo 'aws key AKIAZ7QW3RTY5UIOPLKJ in use'; \
         echo 'mail sent to jane.doe@corp-mail.net'; \
         echo 'all good'");
    assert_eq!(out.code, 0);
    // The command's own output passes through unchanged.
    assert!(out.stdout.contains("password=hunter2xyz"));
    let end = hc.only_end();
    assert_end(&end, "0");
    let body = end.body_text();
    for secret in [
        "hunter2xyz",
        "AKIAZ7QW3RTY5UIOPLKJ",
        "jane.doe@corp-mail.net",
    ] {
        assert!(!body.contains(secret), "{secret} in the body:\n{body}");
    }
    assert!(body.contains("[REDACTED]"), "{body}");
    assert!(body.contains("connecting with password="), "{body}");
    assert_eq!(
        output_lines(&end).last().map(String::as_str),
        Some("all good"),
        "{body}"
    );
}

/// A secret printed in two writes, with the other stream writing in between (paced so that
/// crontap-run reads each write on its own): the line goes into the body whole, so it is
/// still scrubbed, and the other stream's line stays a line of its own.
#[test]
fn a_secret_written_in_pieces_is_scrubbed_though_the_other_stream_writes_between() {
    let (hc, url) = server();
    // A header value is a secret crontap-run knows; the job prints it in two pieces.
    let token = "hdr-s3cret-4b9d2e7a";
    let out = healthchecks(&url)
        .args(["--header", &format!("X-Token: {token}")])
        .sh(&format!(
            "printf 'db password='; sleep 0.2; echo 'warn: slow' >&2; sleep 0.2; \
             echo hunter2xyz; sleep 0.2; printf 'token {}'; sleep 0.2; echo x >&2; \
             sleep 0.2; echo '{}'; exit 1",
            &token[..7],
            &token[7..]
        ));
    assert_eq!(out.code, 1, "{}", out.stderr);
    let end = hc.only_end();
    assert_end(&end, "1");
    let body = end.body_text();
    assert!(!body.contains("hunter2xyz"), "{body}");
    assert!(!body.contains(&token[7..]), "{body}");
    let lines = output_lines(&end);
    assert!(lines.contains(&"warn: slow".to_owned()), "{body}");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("db password=[REDACTED]")),
        "{body}"
    );
}

/// The same with the secret's line longer than the whole output tail crontap-run keeps
/// (twice the body limit and 4 KiB): only its end is kept, but still as one line, so the
/// other stream's line does not split it and leave the value on a line of its own.
#[test]
fn a_secret_at_the_end_of_an_overlong_line_is_not_split_off_by_the_other_stream() {
    let (hc, url) = server();
    // The long line and the key in one write(2), as a program's buffered output comes.
    let out = healthchecks(&url).sh(
        "python3 -c 'import os; os.write(1, b\"A\" * 30000 + b\" db password=\")'; \
         sleep 0.2; echo 'warn: slow' >&2; sleep 0.2; echo hunter2xyz; echo done; exit 1",
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    let end = hc.only_end();
    let body = end.body_text();
    assert!(!body.contains("hunter2xyz"), "{body}");
    assert!(output_lines(&end).contains(&"done".to_owned()), "{body}");
}

/// The job prints the heartbeat URL (read from the URL file) and a secret variable's value:
/// neither reaches the body.
#[test]
fn the_url_and_secret_variables_are_redacted_from_the_body() {
    let (hc, url) = server();
    let dir = tempfile::tempdir().unwrap();
    let url_file = dir.path().join("url");
    std::fs::write(&url_file, &url).unwrap();
    let script = format!(
        "echo \"posting to $(cat '{}') with $DB_PASSWORD\"; exit 1",
        url_file.display()
    );
    // The output passes through unchanged, secret and all: checked by hand, not by the
    // harness.
    let out = Crontap::new()
        .args(["--protocol", "healthchecks", "--url-file"])
        .arg(&url_file)
        .env("DB_PASSWORD", "correct-horse-battery")
        .args(["--", "sh", "-c", &script])
        .run_raw();
    assert_eq!(out.code, 1);
    assert_no_secret(&out.stderr, "stderr");
    let body = hc.only_end().body_text();
    for secret in [SECRET, "correct-horse-battery"] {
        assert!(!body.contains(secret), "{secret} in the body:\n{body}");
    }
    assert!(body.contains("[REDACTED]"), "{body}");
}

/// Unlike the summary, the body keeps stack-trace frames: that is where they help.
#[test]
fn stack_traces_are_kept_in_the_body() {
    let (hc, url) = server();
    let out = healthchecks(&url).sh("echo 'Traceback (most recent call last):' >&2; \
         echo '  File \"x.py\", line 3, in f' >&2; \
         echo '    raise ValueError(\"bad row\")' >&2; \
         echo 'ValueError: bad row' >&2; exit 1");
    assert_eq!(out.code, 1);
    let end = hc.only_end();
    assert_end(&end, "1");
    let lines = output_lines(&end);
    assert!(
        lines.contains(&"  File \"x.py\", line 3, in f".to_owned()),
        "{lines:#?}"
    );
    assert_eq!(
        lines.last().map(String::as_str),
        Some("ValueError: bad row")
    );
    assert!(
        end.summary().ends_with(": ValueError: bad row"),
        "{}",
        end.summary()
    );
}

#[test]
fn control_characters_and_ansi_escapes_are_removed() {
    let (hc, url) = server();
    healthchecks(&url).sh(r"printf '\033[31mred alert\033[0m\a and a bell\n'; exit 1");
    let body = hc.only_end().body_text();
    assert!(
        !body.chars().any(|c| c.is_control() && c != '\n'),
        "{body:?}"
    );
    assert!(body.contains("red alert"), "{body:?}");
}

/// `--body-max` bounds the whole body; the oldest lines go, the last line stays, and no
/// partial line is left at the top.
#[test]
fn body_max_keeps_the_newest_whole_lines() {
    let (hc, url) = server();
    healthchecks(&url)
        .args(["--body-max", "200"])
        .sh("seq 1 500 | sed 's/^/output line /'; exit 2");
    let end = hc.only_end();
    assert!(end.body_len <= 200, "{} bytes", end.body_len);
    let body = end.body_text();
    assert!(body.starts_with("exit 2 after "), "{body}");
    let lines = output_lines(&end);
    assert_eq!(lines.last().map(String::as_str), Some("output line 500"));
    assert!(lines.len() >= 3, "{lines:#?}");
    // Consecutive whole lines up to the last.
    for (i, line) in lines.iter().rev().enumerate() {
        assert_eq!(*line, format!("output line {}", 500 - i), "{lines:#?}");
    }
}

/// The cut falls on a UTF-8 boundary (the server checks the body is UTF-8).
#[test]
fn body_max_cuts_on_a_utf8_boundary() {
    let (hc, url) = server();
    healthchecks(&url).args(["--body-max", "101"]).sh(
        "for i in 1 2 3 4 5 6 7 8; do echo 'üüüüüüüüüüüüüüüüüüüü'; done; echo 'ende €'; exit 1",
    );
    let end = hc.only_end();
    assert!(end.body_len <= 101, "{} bytes", end.body_len);
    let lines = output_lines(&end);
    assert_eq!(lines.last().map(String::as_str), Some("ende €"));
    for line in &lines[..lines.len() - 1] {
        assert_eq!(line, "üüüüüüüüüüüüüüüüüüüü", "a partial line: {lines:#?}");
    }
}

#[test]
fn body_max_0_sends_no_body() {
    let (hc, url) = server();
    healthchecks(&url)
        .args(["--body-max", "0"])
        .sh("echo lots of output; exit 1");
    let end = hc.only_end();
    assert_eq!(end.method, "POST");
    assert_eq!(end.path, super::path("1"));
    assert_eq!(end.body_len, 0, "{:?}", end.body_text());
    assert_eq!(end.header("content-type"), None, "no body, no body type");
}

/// 50 MB of output: the body stays within the default 10,000 bytes and ends with the last
/// line, and crontap-run's peak RSS stays far below the output's size (it would be about
/// 50 MiB if the output were held whole).
#[test]
fn fifty_megabytes_of_output_keep_the_body_and_memory_bounded() {
    const TIME: &str = "/usr/bin/time";
    assert!(
        std::path::Path::new(TIME).exists(),
        "this test measures peak RSS with GNU time (Debian package time)"
    );
    let (hc, url) = server();
    let dir = tempfile::tempdir().unwrap();
    let rss_file = dir.path().join("maxrss");
    let mut crontap = Crontap::at(TIME);
    crontap
        .args(["-f", "%M", "-o"])
        .arg(&rss_file)
        .arg(BINARY)
        .env("CRONTAP_HEARTBEAT_URL", &url)
        .args(["--protocol", "healthchecks", "--", "sh", "-c"])
        .arg(
            "head -c 50000000 /dev/zero | tr '\\0' x; echo; \
             yes 'a line of output' | head -n 100000; echo 'the last line'",
        );
    let mut child = crontap.spawn(Stdio::null(), Stdio::piped());
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let status = child.wait().unwrap();
    assert_no_secret(&stderr, "stderr");
    assert_eq!(status.code(), Some(0), "{stderr}");

    let end = hc.only_end();
    assert_end(&end, "0");
    assert!(end.body_len <= 10_000, "{} bytes", end.body_len);
    let lines = output_lines(&end);
    assert_eq!(lines.last().map(String::as_str), Some("the last line"));
    assert!(
        lines[..lines.len() - 1]
            .iter()
            .all(|l| l == "a line of output"),
        "only whole lines of the tail"
    );

    let kib: u64 = std::fs::read_to_string(&rss_file)
        .unwrap()
        .trim()
        .parse()
        .expect("GNU time's %M");
    assert!(kib < 32 * 1024, "peak RSS {kib} KiB");
}

/// A last line without a newline is still the body's last line.
#[test]
fn a_last_line_without_a_newline_is_kept() {
    let (hc, url) = server();
    healthchecks(&url).sh("echo first; printf 'no newline at the end'; exit 1");
    let end = hc.only_end();
    assert_eq!(output_lines(&end), ["first", "no newline at the end"]);
}

/// A limit below the summary's length cuts the summary itself, on a character boundary.
#[test]
fn a_tiny_body_max_cuts_the_summary() {
    let (hc, url) = server();
    healthchecks(&url)
        .args(["--body-max", "10"])
        .sh("echo 'überall kaputt' >&2; exit 1");
    let end = hc.only_end();
    assert!(end.body_len <= 10, "{} bytes", end.body_len);
    assert!(
        end.body_text().starts_with("exit 1"),
        "{:?}",
        end.body_text()
    );
}

/// `--output on-failure` holds the output back from the terminal, not from the body.
#[test]
fn held_output_still_reaches_the_body() {
    let (hc, url) = server();
    let out = healthchecks(&url)
        .args(["--output", "on-failure"])
        .sh("echo held line; echo 'held error' >&2; exit 1");
    assert_eq!(out.code, 1);
    assert!(out.stdout.contains("held line"), "printed on failure");
    let mut lines = output_lines(&hc.only_end());
    lines.sort();
    assert_eq!(lines, ["held error", "held line"]);
}

/// Text normalised before it is scrubbed, in the body as in the summary: a line-like
/// character inside `key: value`, and the heartbeat token upper-cased, percent-encoded or
/// with a zero-width space inside.
#[test]
fn the_body_is_scrubbed_after_line_like_and_invisible_characters_are_dealt_with() {
    let (hc, url) = server();
    let token = SECRET;
    let upper = token.to_uppercase();
    let encoded: String = token.bytes().map(|b| format!("%{b:02X}")).collect();
    let (head, tail) = token.split_at(4);
    let out = healthchecks(&url).sh(&format!(
        "printf 'login password:\\013Hunter2Secret\\n'; \
         printf 'a {upper} b %s c {head}\\342\\200\\213{tail} d\\n' '{encoded}'; exit 1"
    ));
    assert_eq!(out.code, 1);
    let end = hc.only_end();
    let body = end.body_text();
    assert!(!body.contains("Hunter2Secret"), "{body}");
    assert!(body.contains("login password: [REDACTED]\n"), "{body}");
    assert!(
        body.contains("a [REDACTED] b [REDACTED] c [REDACTED] d"),
        "{body}"
    );
    assert_no_secret(&body, "the body");
}
