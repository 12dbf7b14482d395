//! The heartbeat client's retries, deadlines and failure reporting.

use std::time::Duration;

use crate::harness::{Crontap, Receiver, Reply, refused_url};
use crate::state::Gate;

#[test]
fn server_error_then_success_is_retried() {
    let receiver = Receiver::scripted(&[Reply::Status(500), Reply::Status(503)]);
    let out = Crontap::with_url(&receiver.url()).sh("exit 0");
    assert_eq!(out.code, 0);
    assert_eq!(receiver.received().len(), 3);
    assert_eq!(out.stderr, "", "a delivered ping prints nothing");
}

/// 408 Request Timeout is the server giving up on a slow request: worth another attempt.
#[test]
fn request_timeout_is_retried() {
    let receiver = Receiver::scripted(&[Reply::Status(408)]);
    let out = Crontap::with_url(&receiver.url()).sh("exit 0");
    assert_eq!(out.code, 0);
    assert_eq!(receiver.received().len(), 2);
    assert_eq!(out.stderr, "", "a delivered ping prints nothing");
}

#[test]
fn too_many_requests_honours_retry_after() {
    let receiver = Receiver::scripted(&[Reply::RetryAfter(429, 2)]);
    let out = Crontap::with_url(&receiver.url()).sh("exit 5");
    assert_eq!(out.code, 5);
    let received = receiver.received();
    assert_eq!(received.len(), 2);
    // The backoff alone would wait about one second; the server asked for two.
    let gap = received[1].at - received[0].at;
    assert!(gap >= Duration::from_millis(1950), "retried after {gap:?}");
    assert_eq!(received[0].target, received[1].target);
}

#[test]
fn unavailable_honours_retry_after_as_an_http_date() {
    let receiver = Receiver::scripted(&[Reply::RetryAfterDate(503, 3)]);
    let out = Crontap::with_url(&receiver.url()).sh("exit 0");
    assert_eq!(out.code, 0);
    assert_eq!(out.stderr, "", "a delivered ping prints nothing");
    let received = receiver.received();
    assert_eq!(received.len(), 2);
    // The date has whole seconds, so three seconds out is two to three seconds away; the
    // backoff alone would wait about one.
    let gap = received[1].at - received[0].at;
    assert!(gap >= Duration::from_millis(1900), "retried after {gap:?}");
    assert!(gap <= Duration::from_secs(4), "retried after {gap:?}");
}

#[test]
fn retry_after_date_beyond_the_budget_gives_up() {
    let receiver = Receiver::scripted(&[Reply::RetryAfterDate(503, 600)]);
    let out = Crontap::with_url(&receiver.url())
        .args(["--ping-budget", "5s"])
        .sh("exit 0");
    assert_eq!(out.code, 0);
    assert_eq!(receiver.received().len(), 1, "not retried before the date");
    assert!(
        out.stderr.contains("beyond the ping budget"),
        "{}",
        out.stderr
    );
}

#[test]
fn retry_after_beyond_the_budget_gives_up() {
    let receiver = Receiver::scripted(&[Reply::RetryAfter(503, 120)]);
    let out = Crontap::with_url(&receiver.url())
        .args(["--ping-budget", "5s"])
        .sh("exit 0");
    assert_eq!(out.code, 0);
    assert_eq!(receiver.received().len(), 1);
    assert!(out.stderr.contains("HTTP 503"), "{}", out.stderr);
}

#[test]
fn client_errors_are_final_and_reported_with_the_host() {
    let receiver = Receiver::scripted(&[Reply::Status(404)]);
    let out = Crontap::with_url(&receiver.url()).sh("exit 0");
    assert_eq!(out.code, 0, "a failed ping never changes the exit status");
    assert_eq!(receiver.received().len(), 1, "404 is not retried");
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    assert!(
        out.stderr
            .contains(&format!("ping to {} failed", receiver.host())),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("HTTP 404 Not Found"), "{}", out.stderr);
}

#[test]
fn retries_stop_after_ping_retries() {
    let receiver = Receiver::scripted(&[Reply::Status(502); 5]);
    let out = Crontap::with_url(&receiver.url())
        .args(["--ping-retries", "1"])
        .sh("exit 9");
    assert_eq!(out.code, 9);
    assert_eq!(receiver.received().len(), 2);
    assert!(
        out.stderr
            .contains("HTTP 502 Bad Gateway (after 2 attempts)"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_server_that_never_answers_is_bounded_by_the_budget() {
    let receiver = Receiver::scripted(&[Reply::Hang; 10]);
    // The budget is shorter than one attempt's deadline: it must cut the attempt short.
    let out = Crontap::with_url(&receiver.url())
        .args(["--ping-timeout", "10s", "--ping-budget", "2s"])
        .sh("exit 6");
    assert_eq!(out.code, 6);
    assert!(
        out.elapsed < Duration::from_secs(6),
        "took {:?}",
        out.elapsed
    );
    assert_eq!(receiver.received().len(), 1);
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    let expected = format!("ping to {} failed: no response within 2s", receiver.host());
    assert!(out.stderr.contains(&expected), "{}", out.stderr);
}

/// `--ping-timeout` bounds each attempt: an attempt the server never answers is given up
/// after it, and the next attempt is made within the budget.
#[test]
fn a_hung_attempt_is_cut_at_the_ping_timeout_and_retried() {
    let receiver = Receiver::scripted(&[Reply::Hang, Reply::Hang]);
    let out = Crontap::with_url(&receiver.url())
        .args(["--ping-timeout", "1s", "--ping-budget", "60s"])
        .sh("exit 0");
    assert_eq!(out.code, 0);
    assert_eq!(receiver.received().len(), 3);
    assert_eq!(out.stderr, "", "a delivered ping prints nothing");
}

/// The job never waits for the network: with a heartbeat endpoint that never answers, the
/// command starts at once and nothing is sent until it has ended (no start ping).
#[test]
fn the_job_starts_while_the_heartbeat_endpoint_hangs() {
    let receiver = Receiver::scripted(&[Reply::Hang; 10]);
    let dir = tempfile::tempdir().unwrap();
    let gate = Gate::new(dir.path());
    let script = format!("echo ready; {}", gate.wait_script());
    let mut run = Crontap::with_url(&receiver.url())
        .args(["--ping-budget", "2s", "--", "sh", "-c", &script])
        .start();
    run.wait_for("ready");
    assert!(
        receiver.received().is_empty(),
        "a request went out before the job ended"
    );
    gate.open();
    assert_eq!(run.finish().code, 0);
    assert_eq!(receiver.received().len(), 1);
}

#[test]
fn connection_refused_is_reported_and_the_status_kept() {
    let out = Crontap::with_url(&refused_url())
        .args(["--ping-budget", "4s"])
        .sh("exit 0");
    assert_eq!(out.code, 0);
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    assert!(out.stderr.contains("ping to 127.0.0.1:"), "{}", out.stderr);
    assert!(
        out.stderr.to_lowercase().contains("connection refused"),
        "{}",
        out.stderr
    );
}

#[test]
fn http_proxy_is_honoured_and_no_proxy_bypasses_it() {
    let proxy = Receiver::start();
    let url = format!("http://heartbeat.invalid/ping/{}", crate::harness::SECRET);
    let out = Crontap::with_url(&url)
        .env("HTTP_PROXY", format!("http://{}", proxy.host()))
        .sh("exit 0");
    assert_eq!(out.code, 0);
    assert_eq!(proxy.only().target, url, "the proxy gets the absolute URL");

    let bypass = Crontap::with_url(&url)
        .env("HTTP_PROXY", format!("http://{}", proxy.host()))
        .env("NO_PROXY", "heartbeat.invalid")
        .args(["--ping-retries", "0"])
        .sh("exit 0");
    assert_eq!(proxy.received().len(), 1, "NO_PROXY hosts go direct");
    assert!(
        bypass.stderr.contains("ping to heartbeat.invalid failed"),
        "{}",
        bypass.stderr
    );
}

/// A proxy variable that cannot be parsed, under each of its names: one warning line naming
/// the variable, never any part of its value (it may hold the proxy's password), and the
/// ping goes direct.
#[test]
fn an_unparsable_proxy_variable_is_one_warning_and_the_ping_goes_direct() {
    let value = "http://proxyuser:pr0xyPass@[bad";
    for name in [
        "HTTP_PROXY",
        "http_proxy",
        "HTTPS_PROXY",
        "https_proxy",
        "ALL_PROXY",
        "all_proxy",
    ] {
        let receiver = Receiver::start();
        let out = Crontap::with_url(&receiver.url())
            .env(name, value)
            .sh("exit 0");
        assert_eq!(out.code, 0, "{name}: {}", out.stderr);
        assert_eq!(receiver.received().len(), 1, "{name}: the ping went direct");
        let lines: Vec<&str> = out.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{name}: {}", out.stderr);
        assert!(
            lines[0].starts_with("crontap-run: warning: "),
            "{}",
            lines[0]
        );
        assert!(lines[0].contains(name), "{name}: {}", lines[0]);
        for part in ["proxyuser", "pr0xyPass", "[bad"] {
            assert!(!out.stderr.contains(part), "{name}: {}", out.stderr);
        }
    }
}

/// crontap-run does not speak SOCKS: a SOCKS proxy under any proxy variable's name is one
/// warning line naming the variable, never any part of its value, and the ping goes direct
/// (not failing with "unsupported scheme").
#[test]
fn a_socks_proxy_variable_is_one_warning_and_the_ping_goes_direct() {
    for name in [
        "ALL_PROXY",
        "all_proxy",
        "HTTP_PROXY",
        "http_proxy",
        "HTTPS_PROXY",
        "https_proxy",
    ] {
        for scheme in ["socks5", "socks5h", "socks4", "socks4a", "SOCKS5"] {
            let value = format!("{scheme}://proxyuser:pr0xyPass@socks.invalid:1080");
            let receiver = Receiver::start();
            let out = Crontap::with_url(&receiver.url())
                .env(name, &value)
                .sh("exit 0");
            let case = format!("{name}={scheme}");
            assert_eq!(out.code, 0, "{case}: {}", out.stderr);
            assert_eq!(receiver.received().len(), 1, "{case}: not direct");
            let lines: Vec<&str> = out.stderr.lines().collect();
            assert_eq!(lines.len(), 1, "{case}: {}", out.stderr);
            assert!(
                lines[0].starts_with("crontap-run: warning: "),
                "{case}: {}",
                lines[0]
            );
            assert!(lines[0].contains(name), "{case}: {}", lines[0]);
            assert!(lines[0].contains("SOCKS"), "{case}: {}", lines[0]);
            for part in ["proxyuser", "pr0xyPass", "socks.invalid"] {
                assert!(!out.stderr.contains(part), "{case}: {}", out.stderr);
            }
        }
    }
}

/// The scheme's own variable decides: a bad `HTTP_PROXY` sends http pings direct, not
/// through the proxy `ALL_PROXY` names.
#[test]
fn a_bad_scheme_variable_is_not_replaced_by_all_proxy() {
    let proxy = Receiver::start();
    let receiver = Receiver::start();
    let out = Crontap::with_url(&receiver.url())
        .env("HTTP_PROXY", "http://[bad")
        .env("ALL_PROXY", format!("http://{}", proxy.host()))
        .sh("exit 0");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(receiver.received().len(), 1, "{}", out.stderr);
    assert!(proxy.received().is_empty());
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
}
