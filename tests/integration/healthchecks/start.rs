//! The start ping runs beside the command: a slow or failing start endpoint neither delays
//! the command nor loses the end, and the end never overtakes its start. Retries of the end.

use std::time::{Duration, Instant};

use nix::sys::signal::Signal;

use super::server::{Class, Kind};
use super::{assert_end, assert_start, healthchecks, server};
use crate::harness::{alive, eventually, read_pid};
use crate::state::Gate;

/// The start endpoint holds its answer: the command runs at once anyway (its marker is seen
/// while the start is unanswered), and the end goes out only after the start was answered.
#[test]
fn a_slow_start_endpoint_neither_delays_the_command_nor_is_overtaken() {
    let (hc, url) = server();
    hc.hold_starts();
    let dir = tempfile::tempdir().unwrap();
    let gate = Gate::new(dir.path());
    let pid_file = dir.path().join("pid");
    let script = format!(
        "echo $$ > '{}'; echo started; {}; echo finishing",
        pid_file.display(),
        gate.wait_script()
    );
    let mut run = healthchecks(&url)
        .args(["--timeout", "60s", "--", "sh", "-c", &script])
        .start();
    run.wait_for("started");
    assert!(
        hc.pings().iter().all(|p| p.answered_at.is_none()),
        "the command started only after the start was answered: {:#?}",
        hc.pings()
    );
    // The start goes out while the command runs.
    assert!(
        eventually(Duration::from_secs(10), || !hc.starts().is_empty()),
        "no start ping while the command runs"
    );
    assert!(hc.starts()[0].answered_at.is_none());

    // Let the command end, and wait until crontap-run has reaped it: the end is due now.
    let pid = read_pid(&pid_file);
    gate.open();
    assert!(
        eventually(Duration::from_secs(10), || !alive(&pid)),
        "the command never ended"
    );
    // An end that overtook the start would arrive within this window.
    assert!(
        !eventually(Duration::from_millis(500), || !hc.ends().is_empty()),
        "the end went out before its start was answered: {:#?}",
        hc.pings()
    );
    hc.release_starts();
    let out = run.finish();
    assert_eq!(out.code, 0, "{}", out.stderr);

    let (start, end) = (hc.only_start(), hc.only_end());
    assert_start(&start);
    assert_end(&end, "0");
    assert_eq!(start.rid, end.rid);
    let answered = start.answered_at.expect("the start was answered");
    assert!(
        end.at >= answered,
        "the end arrived before the start's answer"
    );
    assert!(end.duration.is_some());
}

/// A start endpoint that answers 404 does not stop the end.
#[test]
fn a_start_answered_404_still_gets_its_end() {
    let (hc, url) = server();
    hc.script(Class::Start, &[404]);
    let out = healthchecks(&url).sh("echo work; exit 0");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let start = hc.only_start();
    assert_eq!(start.status, 404, "4xx is final: not retried");
    let end = hc.only_end();
    assert_end(&end, "0");
    assert_eq!(end.status, 200);
    assert_eq!(end.rid, start.rid);
}

/// A start endpoint that keeps failing with 500 does not stop the end either, and the
/// command's status is kept.
#[test]
fn a_start_answered_500_still_gets_its_end() {
    let (hc, url) = server();
    hc.script(Class::Start, &[500; 12]);
    let out = healthchecks(&url)
        .args(["--ping-retries", "1"])
        .sh("echo work; exit 5");
    assert_eq!(out.code, 5, "{}", out.stderr);
    let starts = hc.starts();
    assert!(
        (1..=2).contains(&starts.len()),
        "at most --ping-retries 1 retry: {starts:#?}"
    );
    assert!(starts.iter().all(|s| s.status == 500));
    let end = hc.only_end();
    assert_end(&end, "5");
    assert_eq!(end.status, 200);
    assert!(end.at >= starts.last().unwrap().answered_at.unwrap());
}

/// The end is retried on 5xx like a crontap ping; the exit status is unchanged and the
/// retried request is the same.
#[test]
fn an_end_answered_503_is_retried() {
    let (hc, url) = server();
    hc.script(Class::End, &[503]);
    let out = healthchecks(&url)
        .args(["--ping-retries", "2"])
        .sh("echo 'step failed' >&2; exit 3");
    assert_eq!(out.code, 3);
    assert_eq!(
        out.stderr, "step failed\n",
        "a delivered end prints nothing"
    );
    assert_start(&hc.only_start());
    let ends = hc.ends();
    assert_eq!(ends.len(), 2, "{ends:#?}");
    assert_eq!(ends[0].status, 503);
    assert_eq!(ends[1].status, 200);
    for end in &ends {
        assert_end(end, "3");
        assert_eq!(end.kind, Some(Kind::Exit(3)));
    }
    assert_eq!(ends[0].rid, ends[1].rid);
    assert_eq!(ends[0].body, ends[1].body);
}

/// An end that is never accepted is given up after `--ping-retries`, naming the host on
/// one stderr line; the job's status stands.
#[test]
fn an_end_that_keeps_failing_is_given_up() {
    let (hc, url) = server();
    hc.script(Class::End, &[502; 5]);
    let out = healthchecks(&url)
        .args(["--ping-retries", "1"])
        .sh("exit 0");
    assert_eq!(out.code, 0);
    assert_eq!(hc.ends().len(), 2);
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    assert!(out.stderr.contains(&hc.host()), "{}", out.stderr);
    assert!(out.stderr.contains("502"), "{}", out.stderr);
}

/// A start endpoint that never answers costs the end half its budget, never the end
/// itself: once the end is due the start makes no new attempt, and the end goes out with
/// the command's status, within one ping budget. Defaults but for a short ping timeout, so
/// that a start retried until its own budget ran out would lose the end.
#[test]
fn a_start_that_never_answers_does_not_lose_the_end() {
    let (hc, url) = server();
    hc.hold_starts();
    let out = healthchecks(&url)
        .args(["--ping-timeout", "2s"])
        .sh("echo work; exit 6");
    assert_eq!(out.code, 6, "{}", out.stderr);
    assert!(
        out.elapsed < Duration::from_secs(30),
        "took {:?}",
        out.elapsed
    );
    assert_eq!(
        hc.starts().len(),
        1,
        "the start was retried: {:#?}",
        hc.pings()
    );
    assert_end(&hc.only_end(), "6");
    // Written and never answered, it was waited for, then dropped with one line.
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    assert!(
        out.stderr
            .starts_with("crontap-run: warning: the start ping is still under way"),
        "{}",
        out.stderr
    );
    hc.release_starts();
}

/// The same with a tight budget: the start still runs out within it, and so does the run.
#[test]
fn a_start_that_never_answers_is_bounded_by_the_budget() {
    let (hc, url) = server();
    hc.hold_starts();
    let out = healthchecks(&url)
        .args(["--ping-timeout", "1s", "--ping-budget", "3s"])
        .sh("echo work; exit 6");
    assert_eq!(out.code, 6, "{}", out.stderr);
    assert!(
        out.elapsed < Duration::from_secs(10),
        "took {:?}",
        out.elapsed
    );
    assert_end(&hc.only_end(), "6");
    hc.release_starts();
}

/// A start endpoint that never answers, and a SIGTERM while the job runs: the stop cuts
/// the report to the shutdown budget (5 s), and the held start must still be dropped after
/// half of it rather than take all of it, which left the end too little to be delivered.
/// Default ping timeout (longer than that budget), as the start's attempt would otherwise
/// end by its own timeout.
#[test]
fn a_held_start_does_not_lose_the_end_of_a_stopped_run() {
    let (hc, url) = server();
    hc.hold_starts();
    let mut run = healthchecks(&url)
        .args(["--", "sh", "-c", "echo ready; while :; do sleep 0.05; done"])
        .start();
    run.wait_for("ready");
    assert!(
        eventually(Duration::from_secs(10), || !hc.starts().is_empty()),
        "no start ping while the command runs"
    );
    let signalled = Instant::now();
    run.signal(Signal::SIGTERM);
    let out = run.finish();
    assert_eq!(out.code, 143, "{}", out.stderr);
    assert_eq!(hc.starts().len(), 1, "{:#?}", hc.pings());
    let end = hc.only_end();
    assert_end(&end, "143");
    // Dropped after half the budget, the start leaves the end the other 2.5 s; a start
    // that kept all of it let the end out only after 5 s, if at all.
    let waited = end.at.duration_since(signalled);
    assert!(
        waited < Duration::from_millis(4500),
        "the end came {waited:?} after SIGTERM: the start held it"
    );
    assert!(
        end.summary().starts_with("killed by SIGTERM after "),
        "{}",
        end.summary()
    );
    hc.release_starts();
}

/// A start answered 503 waits to be retried (30 s, as the answer asks); the end becoming
/// due during that wait ends it: no second start, though retries and budget are left, and
/// the end goes out at once rather than after the start's share of the end's time. The command ends only once the
/// first start was answered, so the end is due while the start waits.
#[test]
fn a_start_waiting_to_retry_gives_up_when_the_end_is_due() {
    let (hc, url) = server();
    hc.script(Class::Start, &[503; 12]);
    hc.retry_after(30);
    let dir = tempfile::tempdir().unwrap();
    let gate = Gate::new(dir.path());
    let script = format!("echo started; {}; exit 4", gate.wait_script());
    let mut run = healthchecks(&url)
        .args([
            "--ping-retries",
            "10",
            "--ping-budget",
            "2m",
            "--ping-timeout",
            "8s",
        ])
        .args(["--", "sh", "-c", &script])
        .start();
    run.wait_for("started");
    assert!(
        eventually(Duration::from_secs(10), || hc
            .starts()
            .first()
            .is_some_and(|s| s.answered_at.is_some())),
        "the start was never answered"
    );
    gate.open();
    let out = run.finish();
    assert_eq!(out.code, 4, "{}", out.stderr);
    assert_eq!(
        hc.starts().len(),
        1,
        "the start was retried: {:#?}",
        hc.pings()
    );
    // A start that kept waiting would hold the end for one ping timeout (8 s), then be
    // dropped.
    assert!(
        out.elapsed < Duration::from_secs(6),
        "the end waited for the start's retry: {:?}",
        out.elapsed
    );
    assert_end(&hc.only_end(), "4");
    assert_eq!(out.stderr, "", "a lost start is no error of the end's");
}

/// A bug (panic) on the start ping's thread abandons the start only: the command runs to
/// its end, crontap-run exits with the command's status, and the end report still goes out,
/// once. One line says what was abandoned.
#[test]
fn a_panic_on_the_start_thread_abandons_only_the_start() {
    let (hc, url) = server();
    let out = healthchecks(&url)
        .env("CRONTAP_FAULT", "start-ping")
        .sh("echo started; exit 3");
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert_eq!(out.stdout, "started\n");
    assert!(hc.starts().is_empty(), "{:#?}", hc.pings());
    let end = hc.only_end();
    assert_end(&end, "3");
    assert!(
        end.summary().starts_with("exit 3 after "),
        "{}",
        end.summary()
    );
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{}", out.stderr);
    assert!(
        lines[0].contains("internal error") && lines[0].contains("the start ping is abandoned"),
        "{}",
        out.stderr
    );
}

/// A TCP forwarder on loopback that holds the bytes of the first connection it accepts for
/// `hold` before passing them on (as a slow proxy or a congested link would); later
/// connections pass at once.
struct HoldingForwarder {
    port: u16,
}

impl HoldingForwarder {
    fn start(target: u16, hold: Duration) -> HoldingForwarder {
        use std::net::{TcpListener, TcpStream};
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            for (n, client) in listener.incoming().enumerate() {
                let Ok(client) = client else { continue };
                std::thread::spawn(move || {
                    if n == 0 {
                        // The request is written and sits here, unread by the server.
                        std::thread::sleep(hold);
                    }
                    let Ok(server) = TcpStream::connect(("127.0.0.1", target)) else {
                        return;
                    };
                    let (mut c_in, mut s_out) =
                        (client.try_clone().unwrap(), server.try_clone().unwrap());
                    let up = std::thread::spawn(move || {
                        let _ = std::io::copy(&mut c_in, &mut s_out);
                        let _ = s_out.shutdown(std::net::Shutdown::Write);
                    });
                    let (mut s_in, mut c_out) = (server, client);
                    let _ = std::io::copy(&mut s_in, &mut c_out);
                    let _ = c_out.shutdown(std::net::Shutdown::Write);
                    let _ = up.join();
                });
            }
        });
        HoldingForwarder { port }
    }
}

/// The start's request is written but held on the way for longer than a ping timeout: the
/// end waits for it (within its budget) rather than give it up and overtake it, so the
/// server gets the start first, and one of each.
#[test]
fn a_start_held_on_the_wire_is_not_overtaken_by_the_end() {
    let (hc, _) = server();
    let forwarder = HoldingForwarder::start(hc.port(), Duration::from_secs(5));
    let url = format!(
        "http://127.0.0.1:{}/{}/{}",
        forwarder.port,
        crate::harness::SECRET,
        super::SLUG
    );
    let out = healthchecks(&url)
        .args(["--ping-timeout", "2s"])
        .sh("echo work");
    assert_eq!(out.code, 0, "{}", out.stderr);
    // The held start reaches the server some time after crontap-run sent it.
    assert!(
        eventually(Duration::from_secs(10), || hc.pings().len() >= 2),
        "{:#?}",
        hc.pings()
    );
    // Nothing more can come: every other connection passed at once and was answered
    // before crontap-run exited.
    let pings = hc.pings();
    let kinds: Vec<&str> = pings
        .iter()
        .map(|p| p.path.rsplit('/').next().unwrap())
        .collect();
    assert_eq!(kinds, ["start", "0"], "{pings:#?}");
    assert_eq!(pings[0].rid, pings[1].rid);
}
