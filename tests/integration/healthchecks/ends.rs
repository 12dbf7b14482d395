//! How each kind of run ends: the start, then `/0`, `/<status>` or `/fail`, with the
//! summary as the body's first line.

use std::os::unix::fs::PermissionsExt;

use nix::sys::signal::Signal;

use super::server::{Healthchecks, Kind, is_uuid};
use super::{assert_end, assert_start, healthchecks, matches, output_lines, server};
use crate::harness::SECRET;

#[test]
fn success_sends_start_then_0_with_the_run_id_and_the_output() {
    let (hc, url) = server();
    let out = healthchecks(&url).sh("echo \"rid=$CRONTAP_RUN_ID\"; echo step one; echo done");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stderr, "", "a successful run prints nothing of its own");
    let rid = out
        .stdout
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("rid="))
        .expect("the command printed its run id")
        .to_owned();
    assert!(is_uuid(&rid), "CRONTAP_RUN_ID {rid:?}");

    let pings = hc.pings();
    assert_eq!(pings.len(), 2, "{pings:#?}");
    let (start, end) = (&pings[0], &pings[1]);
    assert_start(start);
    assert_eq!(start.rid.as_deref(), Some(rid.as_str()));
    assert_eq!(start.status, 200);
    assert_end(end, "0");
    assert_eq!(end.kind, Some(Kind::Exit(0)));
    assert_eq!(end.rid.as_deref(), Some(rid.as_str()));
    assert_eq!(end.status, 200);
    assert!(end.duration.is_some(), "the server paired the end by rid");
    assert!(
        end.param("msg").is_none(),
        "no msg: Healthchecks ignores it"
    );

    let summary = end.summary();
    assert!(matches(r"^exit 0 after [0-9.]+m?s$", &summary), "{summary}");
    assert_eq!(
        output_lines(end),
        [format!("rid={rid}"), "step one".into(), "done".into()],
        "{}",
        end.body_text()
    );
}

/// The output is stdout and stderr in the order they arrived (the command waits between
/// lines so that the order is the command's).
#[test]
fn the_body_interleaves_stdout_and_stderr_in_arrival_order() {
    let (hc, url) = server();
    let out = healthchecks(&url)
        .sh("echo out one; sleep 0.2; echo err one >&2; sleep 0.2; echo out two; exit 4");
    assert_eq!(out.code, 4, "{}", out.stderr);
    let end = hc.only_end();
    assert_end(&end, "4");
    assert_eq!(output_lines(&end), ["out one", "err one", "out two"]);
}

#[test]
fn a_failure_sends_its_status_with_the_summary_first() {
    let (hc, url) = server();
    let out = healthchecks(&url).sh("echo progress; echo 'boom: disk full' >&2; exit 3");
    assert_eq!(out.code, 3);
    assert_start(&hc.only_start());
    let end = hc.only_end();
    assert_end(&end, "3");
    assert_eq!(end.kind, Some(Kind::Exit(3)));
    let summary = end.summary();
    // Exactly crontap's failure summary (its msg).
    assert!(
        matches(r"^exit 3 after [0-9.]+m?s: boom: disk full$", &summary),
        "{summary}"
    );
    // Both lines; their order across the two pipes is the interleaving test's (the command
    // here does not wait between them, so either may be read first).
    let mut lines = output_lines(&end);
    lines.sort();
    assert_eq!(lines, ["boom: disk full", "progress"]);
}

#[test]
fn a_signal_death_is_128_plus_the_signal() {
    let (hc, url) = server();
    let out = healthchecks(&url).sh("echo dying >&2; kill -TERM $$");
    assert_eq!(out.code, 143);
    assert_start(&hc.only_start());
    let end = hc.only_end();
    assert_end(&end, "143");
    let summary = end.summary();
    assert!(summary.starts_with("killed by SIGTERM after "), "{summary}");
    assert!(summary.ends_with(": dying"), "{summary}");
}

#[test]
fn a_program_that_does_not_exist_is_127_without_a_start() {
    let (hc, url) = server();
    let out = healthchecks(&url)
        .args(["--", "/nonexistent/crontap-test-program"])
        .run();
    assert_eq!(out.code, 127, "{}", out.stderr);
    assert!(
        hc.starts().is_empty(),
        "a start for a command that never ran"
    );
    assert_end(&hc.only_end(), "127");
}

#[test]
fn a_program_that_is_not_executable_is_126_without_a_start() {
    let (hc, url) = server();
    let dir = tempfile::tempdir().unwrap();
    let program = dir.path().join("job.sh");
    std::fs::write(&program, "echo hello\n").unwrap();
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = healthchecks(&url).arg("--").arg(&program).run();
    assert_eq!(out.code, 126, "{}", out.stderr);
    assert!(
        hc.starts().is_empty(),
        "a start for a command that never ran"
    );
    assert_end(&hc.only_end(), "126");
}

/// A job that traps SIGTERM and exits 0 was stopped, not successful: `/fail`.
#[test]
fn a_stopped_run_sends_fail() {
    let (hc, url) = server();
    let mut run = healthchecks(&url)
        .args(["--", "sh", "-c"])
        .arg("trap 'echo cleaning up >&2; exit 0' TERM; echo ready; while :; do sleep 0.05; done")
        .start();
    run.wait_for("ready");
    run.signal(Signal::SIGTERM);
    let out = run.finish();
    assert_eq!(out.code, 0, "the job's own status: {}", out.stderr);
    assert_start(&hc.only_start());
    let end = hc.only_end();
    assert_end(&end, "fail");
    assert_eq!(end.kind, Some(Kind::Fail));
    let summary = end.summary();
    assert!(
        summary.starts_with("stopped by SIGTERM after "),
        "{summary}"
    );
    assert!(output_lines(&end).contains(&"cleaning up".to_owned()));
}

#[test]
fn a_timeout_is_124() {
    let (hc, url) = server();
    let out = healthchecks(&url)
        .args(["--timeout", "1s"])
        .sh("echo working; while :; do sleep 0.05; done");
    assert_eq!(out.code, 124, "{}", out.stderr);
    assert_start(&hc.only_start());
    let end = hc.only_end();
    assert_end(&end, "124");
    let summary = end.summary();
    assert!(summary.starts_with("timed out after 1s"), "{summary}");
    assert_eq!(output_lines(&end), ["working"]);
}

#[test]
fn a_success_exit_status_is_reported_as_0() {
    let (hc, url) = server();
    let out = healthchecks(&url)
        .args(["--success-exit", "3"])
        .sh("echo some files vanished; exit 3");
    assert_eq!(out.code, 3, "the command's own status");
    assert_eq!(out.stderr, "");
    assert_start(&hc.only_start());
    let end = hc.only_end();
    assert_end(&end, "0");
    assert_eq!(end.kind, Some(Kind::Exit(0)));
}

/// `--retries` runs the command again; the run is still one start and one end.
#[test]
fn retries_make_one_start_and_one_end() {
    let (hc, url) = server();
    let out = healthchecks(&url)
        .args(["--retries", "1", "--retry-delay", "10ms"])
        .sh("echo \"attempt $CRONTAP_ATTEMPT\"; exit 3");
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert_eq!(out.stdout, "attempt 1\nattempt 2\n");
    let (start, end) = (hc.only_start(), hc.only_end());
    assert_end(&end, "3");
    assert_eq!(start.rid, end.rid);
    assert!(end.duration.is_some());
}

/// The other URL form: `/<uuid>`. The uuid is as secret as the ping key.
#[test]
fn a_uuid_url_works() {
    let hc = Healthchecks::start();
    let uuid = "5b3f8e4a-1c2d-4e6f-9a8b-7c6d5e4f3a2b";
    let url = hc.uuid_url(uuid);
    let out = healthchecks(&url).sh("echo fine; exit 2");
    assert_eq!(out.code, 2);
    for text in [&out.stdout, &out.stderr] {
        assert!(!text.contains(uuid), "the uuid leaked: {text}");
    }
    let pings = hc.pings();
    assert_eq!(pings.len(), 2, "{pings:#?}");
    assert_eq!(pings[0].path, format!("/{uuid}/start"));
    assert_eq!(pings[0].kind, Some(Kind::Start));
    assert_eq!(pings[1].path, format!("/{uuid}/2"));
    assert_eq!(pings[1].method, "POST");
    assert_eq!(pings[1].check.as_deref(), Some(uuid));
    assert!(pings[1].duration.is_some());
}

/// `?create=1` on a slug URL: the unknown check is created by the first ping, and the query
/// is kept with `rid` last.
#[test]
fn create_1_on_a_slug_url_is_kept_and_accepted() {
    let hc = Healthchecks::start();
    let url = format!("http://{}/{SECRET}/brand-new?create=1", hc.host());
    let out = healthchecks(&url).sh("echo fine");
    assert_eq!(out.code, 0);
    assert_eq!(out.stderr, "", "201 Created is a delivered ping");
    assert!(hc.has_check(&format!("{SECRET}/brand-new")));
    let pings = hc.pings();
    assert_eq!(pings.len(), 2, "{pings:#?}");
    let (start, end) = (&pings[0], &pings[1]);
    let rid = start.rid.clone().unwrap();
    assert_eq!(start.path, format!("/{SECRET}/brand-new/start"));
    assert_eq!(start.query, format!("create=1&rid={rid}"));
    assert_eq!(start.status, 201);
    assert_eq!(end.path, format!("/{SECRET}/brand-new/0"));
    assert_eq!(end.query, format!("create=1&rid={rid}"));
    assert!(matches!(end.status, 200 | 201));
    assert!(end.duration.is_some());
}

/// An unknown check answers 404: the job's status stands, and the failure is reported on
/// stderr naming the host only.
#[test]
fn an_unknown_check_changes_nothing_but_a_line_on_stderr() {
    let hc = Healthchecks::start();
    let url = format!("http://{}/{SECRET}/no-such-check", hc.host());
    let out = healthchecks(&url).sh("exit 0");
    assert_eq!(out.code, 0);
    assert!(hc.pings().iter().all(|p| p.status == 404));
    assert_eq!(hc.ends().len(), 1, "404 is not retried: {:#?}", hc.pings());
    assert!(out.stderr.contains(&hc.host()), "{}", out.stderr);
    assert!(out.stderr.contains("404"), "{}", out.stderr);
}

/// `--dry-run` sends nothing and shows both requests, the URL redacted.
#[test]
fn dry_run_shows_the_start_and_the_end() {
    let (hc, url) = server();
    let out = healthchecks(&url).arg("--dry-run").sh("exit 3");
    assert_eq!(out.code, 3);
    assert!(hc.pings().is_empty(), "{:#?}", hc.pings());
    let host = hc.host();
    assert!(
        out.stderr.contains(&format!("GET http://{host}/…/start")),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains(&format!("POST http://{host}/…/3")),
        "{}",
        out.stderr
    );
}

/// A run that is not due (`--once-per`, already done this period) sends nothing at all:
/// no start, no end.
#[test]
fn a_skipped_run_sends_nothing() {
    let (hc, url) = server();
    let dir = tempfile::tempdir().unwrap();
    let once = |script: &str| {
        healthchecks(&url)
            .args(["--once-per", "1d", "--job", "hc-once", "--state-dir"])
            .arg(dir.path().join("state"))
            .sh(script)
    };
    assert_eq!(once("exit 0").code, 0);
    assert_eq!(hc.pings().len(), 2, "{:#?}", hc.pings());
    let again = once("echo ran again");
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(again.stdout, "", "the skipped run ran");
    assert_eq!(
        hc.pings().len(),
        2,
        "the skipped run sent {:#?}",
        hc.pings()
    );
}
