//! Where the heartbeat URL comes from, how it is validated, and how `/fail` is built.

use std::path::Path;

use crate::harness::{Crontap, Output, Receiver, SECRET, assert_no_secret};

#[test]
fn url_file_is_read_and_trimmed_and_wins_over_the_variable() {
    let receiver = Receiver::start();
    let other = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("heartbeat-url");
    std::fs::write(&file, format!("\n  {}  \n", receiver.url())).unwrap();

    let out = Crontap::with_url(&other.url())
        .arg("--url-file")
        .arg(&file)
        .sh("exit 0");
    assert_eq!(out.code, 0);
    assert_eq!(receiver.only().target, format!("/ping/{SECRET}"));

    Crontap::with_url(&other.url())
        .env("CRONTAP_HEARTBEAT_URL_FILE", &file)
        .sh("exit 0");
    assert_eq!(
        receiver.received().len(),
        2,
        "CRONTAP_HEARTBEAT_URL_FILE is read too"
    );
    assert!(
        other.received().is_empty(),
        "the file wins over the variable"
    );
}

#[test]
fn missing_url_file_is_an_error_naming_the_option() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let out = Crontap::new()
        .args(["--url-file", "/nonexistent/url", "--", "touch"])
        .arg(&marker)
        .run();
    assert_eq!(out.code, 125);
    assert!(
        out.stderr.contains("--url-file /nonexistent/url"),
        "{}",
        out.stderr
    );
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    assert!(!marker.exists(), "the command ran without its URL");

    let from_env = Crontap::new()
        .env("CRONTAP_HEARTBEAT_URL_FILE", "/nonexistent/url")
        .sh("exit 0");
    assert_eq!(from_env.code, 125);
    assert!(
        from_env
            .stderr
            .contains("CRONTAP_HEARTBEAT_URL_FILE (/nonexistent/url)"),
        "{}",
        from_env.stderr
    );
}

#[test]
fn url_env_names_another_variable() {
    let receiver = Receiver::start();
    let out = Crontap::new()
        .args(["--url-env", "MY_HEARTBEAT"])
        .env("MY_HEARTBEAT", receiver.url())
        .sh("env");
    assert_eq!(out.code, 0);
    assert_eq!(receiver.only().target, format!("/ping/{SECRET}"));
    assert!(
        !out.stdout.contains("MY_HEARTBEAT="),
        "the variable reached the child"
    );
}

/// `--url-env` names where the URL is read from; the default variable is a secret all the
/// same and is still kept from the job.
#[test]
fn url_env_still_keeps_the_default_variable_from_the_job() {
    let receiver = Receiver::start();
    let out = Crontap::new()
        .args(["--url-env", "MY_HEARTBEAT"])
        .env("MY_HEARTBEAT", receiver.url())
        .env("CRONTAP_HEARTBEAT_URL", receiver.url())
        .sh("env");
    assert_eq!(out.code, 0);
    assert_eq!(receiver.only().target, format!("/ping/{SECRET}"));
    assert!(!out.stdout.contains("MY_HEARTBEAT="), "{}", out.stdout);
    assert!(
        !out.stdout.contains("CRONTAP_HEARTBEAT_URL="),
        "{}",
        out.stdout
    );
}

#[test]
fn existing_query_and_trailing_slash() {
    let receiver = Receiver::start();
    let url = format!("{}/?tag=nightly&env=prod", receiver.url());
    Crontap::with_url(&url).sh("exit 0");
    Crontap::with_url(&url).sh("exit 4");
    let received = receiver.received();
    assert_eq!(
        received[0].target,
        format!("/ping/{SECRET}/?tag=nightly&env=prod")
    );
    let fail = &received[1].target;
    assert!(
        fail.starts_with(&format!(
            "/ping/{SECRET}/fail?tag=nightly&env=prod&msg=exit%204%20after%20"
        )),
        "{fail}"
    );
}

#[test]
fn double_slash_empty_query_pieces_and_an_old_msg() {
    let receiver = Receiver::start();
    Crontap::with_url(&format!("{}//?msg=stale&&tag=x&", receiver.url())).sh("exit 1");
    let fail = receiver.only().target;
    assert!(
        fail.starts_with(&format!(
            "/ping/{SECRET}/fail?tag=x&msg=exit%201%20after%20"
        )),
        "{fail}"
    );
    assert!(!fail.contains("stale"), "{fail}");
}

/// The URL's query values are secrets, its query names are not: with `?source=cronjob`,
/// "source" stays in a summary, while "cronjob" goes.
#[test]
fn a_query_name_of_the_url_stays_in_the_summary() {
    let receiver = Receiver::start();
    let out = Crontap::with_url(&format!("{}?source=cronjob", receiver.url()))
        .sh("echo 'source file missing for cronjob' >&2; exit 1");
    assert_eq!(out.code, 1);
    let msg = receiver.only().msg().unwrap();
    assert!(msg.contains("source file missing for [REDACTED]"), "{msg}");
}

#[test]
fn bad_url_is_125_names_the_source_and_never_the_value() {
    for bad in [
        format!("ftp://127.0.0.1/{SECRET}"),
        format!("127.0.0.1/ping/{SECRET}"),
        format!("http://[::1/{SECRET}"),
        format!("https://:{SECRET}@/x"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("ran");
        let out = Crontap::with_url(&bad)
            .args(["--", "touch"])
            .arg(&marker)
            .run();
        assert_eq!(out.code, 125, "{bad}: {}", out.stderr);
        assert!(
            out.stderr.contains("CRONTAP_HEARTBEAT_URL"),
            "{}",
            out.stderr
        );
        assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
        assert!(!marker.exists(), "the command ran despite a bad URL");
    }
}

#[test]
fn bad_url_in_a_file_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("url");
    std::fs::write(&file, format!("mailto:{SECRET}@example.com")).unwrap();
    let out = Crontap::new().arg("--url-file").arg(&file).sh("exit 0");
    assert_eq!(out.code, 125);
    assert!(out.stderr.contains("--url-file"), "{}", out.stderr);
}

/// With every protocol: the healthchecks protocol's start, too, says nothing of its own.
#[test]
fn no_url_runs_the_job_warns_once_and_keeps_the_status() {
    for protocol in ["auto", "crontap", "healthchecks"] {
        // `--body-max` too: with nothing sent, it is not warned about.
        let out = Crontap::new()
            .args(["--protocol", protocol, "--body-max", "5000"])
            .sh("echo ran; exit 7");
        assert_eq!(out.code, 7, "{protocol}");
        assert_eq!(out.stdout, "ran\n", "{protocol}");
        assert_eq!(out.stderr.lines().count(), 1, "{protocol}: {}", out.stderr);
        assert!(
            out.stderr.contains("no heartbeat URL configured"),
            "{protocol}: {}",
            out.stderr
        );
        assert!(
            out.stderr.contains("CRONTAP_HEARTBEAT_URL"),
            "{protocol}: {}",
            out.stderr
        );
    }

    let quiet = Crontap::new().arg("-q").sh("exit 0");
    assert_eq!(quiet.stderr, "", "-q silences the warning");
    assert_no_secret(&quiet.stderr, "stderr");
}

/// Heartbeat URLs with no host written, which the URL parser would still read one into
/// (`https:///<token>` has the host `<token>` for it): each must be refused, or the token
/// would be printed as the host and sent to the DNS resolver.
fn hostless_urls() -> Vec<String> {
    vec![
        format!("https:///{SECRET}"),
        format!("HTTPS:///{SECRET}"),
        format!("http:{SECRET}"),
        format!("http:/{SECRET}"),
        format!("https:////{SECRET}"),
        format!("https://\\{SECRET}"),
        format!("https://\t/{SECRET}"),
        format!("https://user@/{SECRET}"),
        format!("https://{SECRET}@/x"),
        format!("https://:443/{SECRET}"),
        format!("https://user:pw@:443/{SECRET}"),
        format!("http://?{SECRET}"),
        format!("http://#{SECRET}"),
    ]
}

/// Where a test gives crontap-run its heartbeat URL.
#[derive(Clone, Copy, Debug)]
enum Source {
    /// `CRONTAP_HEARTBEAT_URL`.
    Variable,
    /// The variable `--url-env` names.
    UrlEnv,
    /// The file `--url-file` names.
    File,
    /// The file `CRONTAP_HEARTBEAT_URL_FILE` names.
    FileVariable,
}

impl Source {
    const ALL: [Source; 4] = [
        Source::Variable,
        Source::UrlEnv,
        Source::File,
        Source::FileVariable,
    ];

    /// What crontap-run's error must say the URL came from.
    fn name(self) -> &'static str {
        match self {
            Source::Variable => "CRONTAP_HEARTBEAT_URL",
            Source::UrlEnv => "MY_HEARTBEAT",
            Source::File => "--url-file",
            Source::FileVariable => "CRONTAP_HEARTBEAT_URL_FILE",
        }
    }

    /// Gives `crontap` the URL `text` (a file's whole contents for the file sources; the
    /// file goes in `dir`). `check` is put first when asked for, as subcommands go.
    fn give(self, crontap: &mut Crontap, text: &str, dir: &Path, check: bool) {
        if check {
            crontap.arg("check");
        }
        let file = dir.join("heartbeat-url");
        match self {
            Source::Variable => crontap.env("CRONTAP_HEARTBEAT_URL", text),
            Source::UrlEnv => crontap
                .args(["--url-env", "MY_HEARTBEAT"])
                .env("MY_HEARTBEAT", text),
            Source::File => {
                std::fs::write(&file, text).unwrap();
                crontap.arg("--url-file").arg(&file)
            }
            Source::FileVariable => {
                std::fs::write(&file, text).unwrap();
                crontap.env("CRONTAP_HEARTBEAT_URL_FILE", &file)
            }
        };
    }
}

/// The token, or any long piece of it, appears nowhere in what crontap-run printed.
fn assert_no_token(out: &Output, token: &str) {
    let printed = format!("{}\n{}", out.stdout, out.stderr).to_lowercase();
    let pieces = token.split('-').filter(|p| p.len() >= 6);
    for piece in pieces.chain([token]) {
        assert!(
            !printed.contains(&piece.to_lowercase()),
            "{piece:?} of the token was printed:\n{printed}"
        );
    }
}

/// A usage error: exit 125 before the command starts, one line naming `source`.
fn assert_refused(out: &Output, source: Source, marker: &Path, what: &str) {
    assert_eq!(out.code, 125, "{what}: {}{}", out.stdout, out.stderr);
    assert_eq!(out.stderr.lines().count(), 1, "{what}: {}", out.stderr);
    assert!(
        out.stderr.contains(source.name()),
        "{what}: the error does not name {}: {}",
        source.name(),
        out.stderr
    );
    assert!(!marker.exists(), "{what}: the command ran");
}

#[test]
fn a_url_without_a_host_is_refused_without_printing_it() {
    for url in hostless_urls() {
        for source in Source::ALL {
            let what = format!("{url:?} from {source:?}");
            let dir = tempfile::tempdir().unwrap();
            let marker = dir.path().join("ran");
            let mut run = Crontap::new();
            source.give(&mut run, &url, dir.path(), false);
            let out = run.args(["--", "touch"]).arg(&marker).run();
            assert_refused(&out, source, &marker, &what);
            assert_no_token(&out, SECRET);

            let mut check = Crontap::new();
            source.give(&mut check, &url, dir.path(), true);
            let out = check.run();
            assert_refused(&out, source, &marker, &format!("check, {what}"));
            assert_no_token(&out, SECRET);
        }
    }
}

#[test]
fn a_url_file_may_start_with_a_byte_order_mark() {
    for source in [Source::File, Source::FileVariable] {
        let receiver = Receiver::start();
        let dir = tempfile::tempdir().unwrap();
        let text = format!("\u{feff}{}\n", receiver.url());
        let mut run = Crontap::new();
        source.give(&mut run, &text, dir.path(), false);
        let out = run.sh("exit 0");
        assert_eq!(out.code, 0, "{source:?}: {}", out.stderr);
        assert_eq!(receiver.only().target, format!("/ping/{SECRET}"));

        let mut check = Crontap::new();
        source.give(&mut check, &text, dir.path(), true);
        let out = check.run();
        assert_eq!(
            out.code, 0,
            "check, {source:?}: {}{}",
            out.stdout, out.stderr
        );
        assert_eq!(receiver.received().len(), 2, "check sent no ping");
    }
}

#[test]
fn blank_lines_and_spaces_around_the_url_in_a_file_are_ignored() {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let text = format!("\n \t\n  {}  \r\n\r\n   \n", receiver.url());
    let mut run = Crontap::new();
    Source::File.give(&mut run, &text, dir.path(), false);
    let out = run.sh("exit 3");
    assert_eq!(out.code, 3, "{}", out.stderr);
    let ping = receiver.only().target;
    assert!(ping.starts_with(&format!("/ping/{SECRET}/fail?")), "{ping}");
}

#[test]
fn a_url_file_with_two_lines_is_refused_naming_the_file_only() {
    const OTHER: &str = "second-t0ken-4e8b1c9d";
    let receiver = Receiver::start();
    let other = format!("http://{}/ping/{OTHER}", receiver.host());
    // Every line break there is, alone between the two.
    let breaks = [
        "\n\n", "\r", "\r\n", "\u{b}", "\u{c}", "\u{85}", "\u{2028}", "\u{2029}",
    ];
    let cases = breaks.into_iter().flat_map(|line_break| {
        [
            (Source::File, line_break),
            (Source::FileVariable, line_break),
        ]
    });
    for (source, line_break) in cases {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("ran");
        let text = format!("{}{line_break}{other}\n", receiver.url());
        let mut run = Crontap::new();
        source.give(&mut run, &text, dir.path(), false);
        let out = run.args(["--", "touch"]).arg(&marker).run();
        assert_refused(&out, source, &marker, &format!("{source:?}"));
        let file = dir.path().join("heartbeat-url");
        assert!(
            out.stderr.contains(&file.display().to_string()),
            "{source:?}: the error does not name the file: {}",
            out.stderr
        );
        assert_no_token(&out, SECRET);
        assert_no_token(&out, OTHER);

        let mut check = Crontap::new();
        source.give(&mut check, &text, dir.path(), true);
        let out = check.run();
        assert_refused(&out, source, &marker, &format!("check, {source:?}"));
        assert_no_token(&out, SECRET);
        assert_no_token(&out, OTHER);
    }
    assert!(receiver.received().is_empty(), "a ping went out");
}

/// A FIFO given as the URL file is refused at once (a reader would wait for a writer for
/// ever, and the job with it), as is a directory.
#[test]
fn a_url_file_that_is_no_regular_file_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    for path in [fifo.as_path(), dir.path()] {
        let marker = dir.path().join("ran");
        let out = Crontap::new()
            .arg("--url-file")
            .arg(path)
            .args(["--", "touch"])
            .arg(&marker)
            .run();
        assert_eq!(out.code, 125, "{out:?}");
        assert!(out.stderr.contains("not a regular file"), "{out:?}");
        assert!(!marker.exists());
    }
}
