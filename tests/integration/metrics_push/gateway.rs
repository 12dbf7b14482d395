//! `--metrics-push` against Debian's real `prometheus-pushgateway`, started on a free
//! loopback port: what the gateway holds after a failing run, then after a succeeding one.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::{PUSH_PASSWORD, assert_no_push_secret, sample};
use crate::harness::{Crontap, eventually, require};

/// A Pushgateway on a free loopback port, keeping its groups in memory only; killed on
/// drop.
pub struct Pushgateway {
    child: Child,
    pub port: u16,
}

impl Pushgateway {
    pub fn start() -> Pushgateway {
        let program = require(
            &["prometheus-pushgateway", "pushgateway"],
            "prometheus-pushgateway",
        );
        let port = free_port();
        let child = Command::new(program)
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            // In memory only: Debian's default file would carry groups from run to run.
            .arg("--persistence.file=")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let gateway = Pushgateway { child, port };
        assert!(
            eventually(Duration::from_secs(60), || {
                http_get(port, "/-/ready").is_some_and(|(status, _)| status == 200)
            }),
            "the Pushgateway did not come up on port {port}"
        );
        gateway
    }

    /// The push URL, with a user and password (the gateway, set up without users, ignores
    /// them; they must still never be printed).
    pub fn url(&self) -> String {
        format!("http://pusher:{PUSH_PASSWORD}@127.0.0.1:{}", self.port)
    }

    /// What the gateway serves to Prometheus: GET /metrics.
    pub fn metrics(&self) -> String {
        let (status, body) = http_get(self.port, "/metrics").expect("the gateway answers");
        assert_eq!(status, 200, "{body}");
        body
    }
}

impl Drop for Pushgateway {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A port nothing listens on just now.
pub fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// GET `path` from 127.0.0.1:`port` over HTTP/1.0: the status and the body.
pub fn http_get(port: u16, path: &str) -> Option<(u16, String)> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .ok()?;
    let request = format!("GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n");
    stream.write_all(request.as_bytes()).ok()?;
    let mut response = Vec::new();
    stream.read_to_end(&mut response).ok()?;
    let response = String::from_utf8_lossy(&response).into_owned();
    let (head, body) = response.split_once("\r\n\r\n")?;
    let status = head.split_whitespace().nth(1)?.parse().ok()?;
    Some((status, body.to_owned()))
}

fn now_secs() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

/// One run of job `job` pushing to `gateway`, running `script`; its exit status.
pub fn push_run(gateway: &Pushgateway, job: &str, extra: &[&str], script: &str) -> i32 {
    let out = Crontap::new()
        .args(["-q", "--job", job])
        .args(extra)
        .env("CRONTAP_METRICS_PUSH_URL", gateway.url())
        .sh(script);
    assert_no_push_secret(&out);
    assert_eq!(out.stderr, "", "no line for a push that went through");
    out.code
}

/// A failing run, then a succeeding one: after each, the gateway holds the job's one
/// group with that run's gauges only (the second replaced the first whole), the expected
/// period and grace, and the gateway's own push time; no push failed. Then a skipped run
/// (`--once-per`, no metrics file): the group still holds the successful run, pushed
/// again.
#[test]
fn the_gateway_holds_the_last_run_of_each_job() {
    let gateway = Pushgateway::start();
    let expect = ["--expect-every", "1d", "--expect-grace", "30m"];
    let series = |name: &str| format!(r#"crontap_run_{name}{{instance="",job="nightly"}}"#);
    let result =
        |r: &str| format!(r#"crontap_run_last_result{{instance="",job="nightly",result="{r}"}}"#);

    let before = now_secs();
    assert_eq!(push_run(&gateway, "nightly", &expect, "exit 3"), 3);
    let held = gateway.metrics();
    assert_eq!(
        sample(&held, &series("last_exit_code")),
        Some(3.0),
        "{held}"
    );
    assert_eq!(sample(&held, &result("failed")), Some(1.0), "{held}");
    assert_eq!(sample(&held, &result("succeeded")), Some(0.0), "{held}");
    assert_eq!(
        sample(&held, &series("expected_period_seconds")),
        Some(86400.0)
    );
    assert_eq!(
        sample(&held, &series("expected_grace_seconds")),
        Some(1800.0)
    );
    let start = sample(&held, &series("last_start_timestamp_seconds")).unwrap();
    let end = sample(&held, &series("last_end_timestamp_seconds")).unwrap();
    assert!(before - 1.0 <= start && start <= end && end <= now_secs() + 1.0);
    assert!(
        sample(&held, &series("last_duration_seconds")).is_some(),
        "{held}"
    );
    assert_eq!(
        sample(&held, &series("last_success_timestamp_seconds")),
        None
    );
    let pushed = r#"push_time_seconds{instance="",job="nightly"}"#;
    let first_push = sample(&held, pushed).unwrap();
    let refused = r#"push_failure_time_seconds{instance="",job="nightly"}"#;
    assert_eq!(sample(&held, refused), Some(0.0), "{held}");

    let state = tempfile::tempdir().unwrap();
    let state_dir = state.path().to_str().unwrap();
    let once = ["--once-per", "1d", "--state-dir", state_dir];
    assert_eq!(push_run(&gateway, "nightly", &once, "exit 0"), 0);
    let held = gateway.metrics();
    assert_eq!(
        sample(&held, &series("last_exit_code")),
        Some(0.0),
        "{held}"
    );
    assert_eq!(sample(&held, &result("failed")), Some(0.0), "{held}");
    assert_eq!(sample(&held, &result("succeeded")), Some(1.0), "{held}");
    let success = sample(&held, &series("last_success_timestamp_seconds")).unwrap();
    assert_eq!(
        Some(success),
        sample(&held, &series("last_end_timestamp_seconds"))
    );
    // This run gave no period: the group was replaced, not added to.
    assert_eq!(
        sample(&held, &series("expected_period_seconds")),
        None,
        "{held}"
    );
    assert!(sample(&held, pushed).unwrap() > first_push);
    assert_eq!(sample(&held, refused), Some(0.0), "{held}");
    // Only this job's group, and nothing of crontap-run's without it.
    let ours = held.lines().filter(|l| l.starts_with("crontap_run_"));
    assert!(
        ours.clone().all(|l| l.contains(r#"job="nightly""#)),
        "{held}"
    );
    assert_eq!(ours.count(), 7, "{held}");

    let second_push = sample(&held, pushed).unwrap();
    assert_eq!(push_run(&gateway, "nightly", &once, "exit 9"), 0, "skipped");
    let after_skip = gateway.metrics();
    let ours = |text: &str| -> Vec<String> {
        let lines = text.lines().filter(|l| l.starts_with("crontap_run_"));
        lines.map(str::to_owned).collect()
    };
    assert_eq!(ours(&after_skip), ours(&held), "{after_skip}");
    assert!(
        sample(&after_skip, pushed).unwrap() > second_push,
        "pushed again"
    );
    assert_eq!(sample(&after_skip, refused), Some(0.0), "{after_skip}");
}
