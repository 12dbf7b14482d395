//! `--metrics-push URL`: the run's gauges put to a Pushgateway, against a loopback server
//! the test starts that records every request whole (method, path, headers, body) and
//! answers as told, or accepts, reads and never answers. With the feature
//! `external-tests`, against Debian's real `prometheus-pushgateway` and `prometheus`
//! (`metrics_push/gateway.rs`, `metrics_push/prometheus.rs`).

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::harness::{Crontap, Output, Receiver, assert_no_secret};

#[cfg(feature = "external-tests")]
mod gateway;
#[cfg(feature = "external-tests")]
mod prometheus;

/// The password of the push URLs here: it must never be printed, sent to the heartbeat
/// service or passed to the job.
pub const PUSH_PASSWORD: &str = "pgw-pa55-91c4e7";
const PUSH_USER: &str = "pusher";

/// One request as the fake gateway read it.
#[derive(Debug, Clone)]
pub struct Pushed {
    pub method: String,
    pub path: String,
    /// Header names lower-cased.
    pub headers: HashMap<String, String>,
    pub body: String,
}

/// A loopback server: answers every request with `status`, or never answers (`None`).
struct FakeGateway {
    port: u16,
    received: Arc<Mutex<Vec<Pushed>>>,
}

impl FakeGateway {
    fn start(status: Option<u16>) -> FakeGateway {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let received = Arc::new(Mutex::new(Vec::new()));
        let record = Arc::clone(&received);
        std::thread::spawn(move || {
            // Connections never answered are kept open until the test ends.
            let mut kept = Vec::new();
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let Some(request) = read_request(&mut stream) else {
                    continue;
                };
                record.lock().unwrap().push(request);
                match status {
                    Some(code) => {
                        let answer = format!(
                            "HTTP/1.1 {code} X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                        );
                        let _ = stream.write_all(answer.as_bytes());
                    }
                    None => kept.push(stream),
                }
            }
        });
        FakeGateway { port, received }
    }

    /// The push URL with the user and password.
    fn url(&self) -> String {
        format!("http://{PUSH_USER}:{PUSH_PASSWORD}@127.0.0.1:{}", self.port)
    }

    fn received(&self) -> Vec<Pushed> {
        self.received.lock().unwrap().clone()
    }
}

/// Reads one HTTP/1.1 request: its head, and a body of its Content-Length.
fn read_request(stream: &mut TcpStream) -> Option<Pushed> {
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .ok()?;
    let mut reader = BufReader::new(stream.try_clone().ok()?);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let mut parts = line.split_whitespace();
    let (method, path) = (parts.next()?.to_owned(), parts.next()?.to_owned());
    let mut headers = HashMap::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).ok()?;
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (name, value) = line.split_once(':')?;
        headers.insert(name.trim().to_ascii_lowercase(), value.trim().to_owned());
    }
    let length: usize = headers
        .get("content-length")
        .map_or(0, |l| l.parse().unwrap());
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(Pushed {
        method,
        path,
        headers,
        body: String::from_utf8(body).unwrap(),
    })
}

/// Neither the heartbeat URL's secret nor the push password in `out`.
pub fn assert_no_push_secret(out: &Output) {
    for (text, what) in [(&out.stdout, "stdout"), (&out.stderr, "stderr")] {
        assert_no_secret(text, what);
        assert!(
            !text.contains(PUSH_PASSWORD),
            "the push password in {what}:\n{text}"
        );
    }
}

/// The value of the sample `series` (name and labels exactly as written) in `text`.
pub fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
        .map(|v| v.parse().unwrap())
}

/// A failing run with a heartbeat URL, a push URL with a password and an expected period:
/// one PUT of the job's group, with basic auth and the text format; gauges of this run
/// (no counters, no job label: the path carries it), and no last success, which this run
/// cannot know. The password is in no output, in no request to the heartbeat service
/// (the job printed it), and not in the job's environment.
#[test]
fn a_failed_run_puts_its_gauges_with_basic_auth() {
    let gateway = FakeGateway::start(Some(200));
    let receiver = Receiver::start();
    let out = Crontap::with_url(&receiver.url())
        .args(["--job", "nightly-import", "--expect-every", "1h"])
        .args(["--expect-grace", "5m"])
        .env("CRONTAP_METRICS_PUSH_URL", gateway.url())
        .sh(&format!(
            "env | grep -c {PUSH_PASSWORD}; echo 'failed with {PUSH_PASSWORD}' >&2; exit 3"
        ));
    // The job's own line says it; none of crontap-run's may.
    assert_no_secret(&out.stderr, "stderr");
    let own = out.stderr.lines().filter(|l| l.starts_with("crontap-run"));
    assert!(
        own.clone().all(|l| !l.contains(PUSH_PASSWORD)),
        "{}",
        out.stderr
    );
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert_eq!(out.stdout.trim(), "0", "the password reached the job");
    let msg = receiver.only().msg().unwrap();
    assert!(msg.starts_with("exit 3 after"), "{msg}");
    assert!(!msg.contains(PUSH_PASSWORD), "{msg}");

    let [push] = gateway.received().try_into().unwrap();
    assert_eq!(push.method, "PUT");
    assert_eq!(push.path, "/metrics/job/nightly-import");
    // Basic auth: base64 of "pusher:pgw-pa55-91c4e7".
    assert_eq!(
        push.headers.get("authorization").map(String::as_str),
        Some("Basic cHVzaGVyOnBndy1wYTU1LTkxYzRlNw==")
    );
    assert!(
        push.headers["content-type"].starts_with("text/plain; version=0.0.4"),
        "{:?}",
        push.headers
    );
    let body = &push.body;
    assert_eq!(
        sample(body, "crontap_run_last_exit_code"),
        Some(3.0),
        "{body}"
    );
    let failed = r#"crontap_run_last_result{result="failed"}"#;
    let succeeded = r#"crontap_run_last_result{result="succeeded"}"#;
    assert_eq!(sample(body, failed), Some(1.0), "{body}");
    assert_eq!(sample(body, succeeded), Some(0.0), "{body}");
    assert_eq!(
        sample(body, "crontap_run_expected_period_seconds"),
        Some(3600.0)
    );
    assert_eq!(
        sample(body, "crontap_run_expected_grace_seconds"),
        Some(300.0)
    );
    for gauge in ["start_timestamp", "end_timestamp", "duration"] {
        let series = format!("crontap_run_last_{gauge}_seconds");
        assert!(sample(body, &series).is_some(), "{series}: {body}");
    }
    assert!(
        !body.contains("last_success"),
        "unknown, so not sent: {body}"
    );
    assert!(!body.contains("_total") && !body.contains("job="), "{body}");
}

/// A skipped run pushes too, as a POST (which replaces only the metrics it carries), and
/// with `--metrics-dir` the push carries what the file knows: the last success and the
/// last run that was not skipped.
#[test]
fn a_skipped_run_pushes_what_the_textfile_knows() {
    let gateway = FakeGateway::start(Some(202));
    let dir = tempfile::tempdir().unwrap();
    let metrics = dir.path().join("metrics");
    std::fs::create_dir(&metrics).unwrap();
    let run = || {
        Crontap::new()
            .arg("-q")
            .args(["--job", "daily", "--once-per", "1d", "--state-dir"])
            .arg(dir.path().join("state"))
            .arg("--metrics-dir")
            .arg(&metrics)
            .args(["--metrics-push", &gateway.url()])
            .sh("exit 0")
    };
    for _ in 0..2 {
        let out = run();
        assert_no_push_secret(&out);
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert_eq!(out.stderr, "");
    }
    let [first, skipped] = gateway.received().try_into().unwrap();
    assert_eq!(
        (first.method.as_str(), skipped.method.as_str()),
        ("PUT", "POST")
    );
    assert_eq!(skipped.path, "/metrics/job/daily");
    let success = "crontap_run_last_success_timestamp_seconds";
    let at = sample(&first.body, success).unwrap();
    assert_eq!(sample(&skipped.body, success), Some(at), "{}", skipped.body);
    for series in [
        "crontap_run_last_end_timestamp_seconds",
        "crontap_run_last_exit_code",
    ] {
        assert_eq!(
            sample(&skipped.body, series),
            sample(&first.body, series),
            "{series}"
        );
    }
    assert_eq!(
        sample(
            &skipped.body,
            r#"crontap_run_last_result{result="succeeded"}"#
        ),
        Some(1.0)
    );
}

/// A gateway that is down: the run ends with the command's status and one line naming the
/// host, at once.
#[test]
fn a_gateway_that_is_down_is_one_line() {
    let port = {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let out = Crontap::new()
        .args(["--ping-budget", "5s", "--ping-retries", "1"])
        .env(
            "CRONTAP_METRICS_PUSH_URL",
            format!("http://{PUSH_USER}:{PUSH_PASSWORD}@127.0.0.1:{port}/"),
        )
        .arg("-q")
        .sh("exit 4");
    assert_no_push_secret(&out);
    assert_eq!(out.code, 4, "{}", out.stderr);
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{}", out.stderr);
    assert!(
        lines[0].contains(&format!("metrics push to 127.0.0.1:{port} failed")),
        "{}",
        out.stderr
    );
    assert!(!lines[0].contains(PUSH_USER), "{}", out.stderr);
}

/// A gateway that accepts and reads the push and never answers: the run ends within the
/// ping budget (and a moment) with the command's status and one line.
#[test]
fn a_gateway_that_never_answers_costs_at_most_the_budget() {
    let gateway = FakeGateway::start(None);
    let budget = Duration::from_secs(3);
    let out = Crontap::new()
        .args(["--ping-budget", "3s", "--ping-timeout", "1s", "-q"])
        .args(["--metrics-push", &gateway.url()])
        .sh("exit 5");
    assert_no_push_secret(&out);
    assert_eq!(out.code, 5, "{}", out.stderr);
    assert!(!gateway.received().is_empty(), "the push was not written");
    // The budget, the process's start and end, and a loaded machine's slack.
    assert!(
        out.elapsed < budget + Duration::from_secs(2),
        "took {:?}",
        out.elapsed
    );
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{}", out.stderr);
    assert!(
        lines[0].contains(&format!(
            "metrics push to 127.0.0.1:{} failed",
            gateway.port
        )),
        "{}",
        out.stderr
    );
}

/// A gateway that refuses the push (a 400, as for a body it cannot read) is one line too.
#[test]
fn a_gateway_that_refuses_is_one_line() {
    let gateway = FakeGateway::start(Some(400));
    let out = Crontap::new()
        .arg("-q")
        .args(["--metrics-push", &gateway.url()])
        .sh("exit 0");
    assert_no_push_secret(&out);
    assert_eq!(out.code, 0);
    assert_eq!(gateway.received().len(), 1, "a 400 is not retried");
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("metrics push to 127.0.0.1"),
        "{}",
        out.stderr
    );
}

/// A dry run pushes nothing.
#[test]
fn a_dry_run_pushes_nothing() {
    let gateway = FakeGateway::start(Some(200));
    let out = Crontap::new()
        .args(["--dry-run", "--metrics-push", &gateway.url()])
        .sh("exit 0");
    assert_no_push_secret(&out);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(gateway.received().is_empty());
}

/// Bad values: exit 125 and one line naming the option, never the value.
#[test]
fn bad_push_urls_and_expectations_are_usage_errors() {
    let secret_url = |rest: &str| format!("{rest}{PUSH_USER}:{PUSH_PASSWORD}@gw.invalid");
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec!["--metrics-push".into(), secret_url("")],
            "--metrics-push",
        ),
        (
            vec!["--metrics-push".into(), secret_url("ftp://")],
            "--metrics-push",
        ),
        (
            vec!["--metrics-push".into(), secret_url("https://") + "/?x=1"],
            "--metrics-push",
        ),
        (
            vec!["--metrics-push".into(), "http://".into()],
            "--metrics-push",
        ),
        (vec!["--expect-every".into(), "0s".into()], "--expect-every"),
        (
            vec!["--expect-every".into(), "soon".into()],
            "--expect-every",
        ),
        // --expect-grace needs the period it is the grace of.
        (vec!["--expect-grace".into(), "5m".into()], "--expect-every"),
    ];
    for (args, option) in cases {
        let out = Crontap::new().args(&args).sh("exit 0");
        assert_no_push_secret(&out);
        assert_eq!(out.code, 125, "{args:?}: {}", out.stderr);
        assert_eq!(out.stderr.lines().count(), 1, "{args:?}: {}", out.stderr);
        assert!(out.stderr.contains(option), "{args:?}: {}", out.stderr);
        assert!(!out.stderr.contains("gw.invalid"), "{}", out.stderr);
    }
    // From the environment too, named with its variable.
    let out = Crontap::new()
        .env("CRONTAP_METRICS_PUSH_URL", secret_url("gopher://"))
        .sh("exit 0");
    assert_no_push_secret(&out);
    assert_eq!(out.code, 125);
    assert!(
        out.stderr.contains("CRONTAP_METRICS_PUSH_URL"),
        "{}",
        out.stderr
    );
}

/// At every verbosity, in text and in JSON, crontap-run's log lines hold neither the push
/// password nor the basic-auth header made from it, for a push that went through and for
/// one that failed.
#[test]
fn the_push_credentials_are_in_no_log_line_at_any_verbosity() {
    let authorization = "cHVzaGVyOnBndy1wYTU1LTkxYzRlNw==";
    for status in [200, 503] {
        let gateway = FakeGateway::start(Some(status));
        for args in [&["-vv"][..], &["-vv", "--log-format", "json"]] {
            let out = Crontap::new()
                .args(args)
                .args(["--ping-retries", "0", "--metrics-push", &gateway.url()])
                .sh("exit 0");
            assert_no_push_secret(&out);
            assert_eq!(out.code, 0, "{}", out.stderr);
            assert!(!out.stderr.contains(authorization), "{}", out.stderr);
            let said = out.stderr.contains("metrics pushed")
                || out.stderr.contains("metrics push to 127.0.0.1");
            assert!(said, "{}", out.stderr);
        }
    }
}

/// A push URL with a password typed on the command line is in `/proc/<pid>/cmdline` for
/// every user of the host (the job included): one warning says so and names the variable
/// to use instead, as for `--state-url`, without the password. The same URL from the
/// variable, or a command-line URL without a password, warns of nothing.
#[test]
fn a_push_password_on_the_command_line_is_warned_of() {
    let gateway = FakeGateway::start(Some(200));
    let out = Crontap::new()
        .args(["--metrics-push", &gateway.url()])
        .sh("exit 0");
    assert_no_push_secret(&out);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains("--metrics-push holds a password")
            && out.stderr.contains("ps")
            && out.stderr.contains("CRONTAP_METRICS_PUSH_URL"),
        "{}",
        out.stderr
    );
    let plain = format!("http://127.0.0.1:{}", gateway.port);
    for from_env in [true, false] {
        let mut crontap = Crontap::new();
        match from_env {
            true => crontap.env("CRONTAP_METRICS_PUSH_URL", gateway.url()),
            false => crontap.args(["--metrics-push", &plain]),
        };
        let out = crontap.sh("exit 0");
        assert_no_push_secret(&out);
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert!(!out.stderr.contains("holds a password"), "{}", out.stderr);
    }
    assert_eq!(gateway.received().len(), 3);
}

/// A gateway that redirects the push to another origin (another port: another server)
/// must not get the basic-auth header there, nor the password in any form.
#[test]
fn a_redirect_to_another_origin_carries_no_credentials() {
    let other = FakeGateway::start(Some(200));
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let location = format!("http://127.0.0.1:{}/metrics/job/stolen", other.port);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let _ = read_request(&mut stream);
            let answer = format!(
                "HTTP/1.1 307 X\r\nLocation: {location}\r\nContent-Length: 0\r\n\
                 Connection: close\r\n\r\n"
            );
            let _ = stream.write_all(answer.as_bytes());
        }
    });
    let out = Crontap::new()
        .args(["-q", "--ping-retries", "0"])
        .env(
            "CRONTAP_METRICS_PUSH_URL",
            format!("http://{PUSH_USER}:{PUSH_PASSWORD}@127.0.0.1:{port}"),
        )
        .sh("exit 3");
    assert_no_push_secret(&out);
    assert_eq!(out.code, 3, "{}", out.stderr);
    for pushed in other.received() {
        assert!(
            !pushed.headers.contains_key("authorization"),
            "credentials sent to another origin: {pushed:?}"
        );
        let all = format!("{pushed:?}");
        assert!(!all.contains(PUSH_PASSWORD), "{all}");
    }
}
