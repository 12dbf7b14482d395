//! What a run's requests go out on: one network runtime and one HTTP client for the whole
//! run, set up only when a request is due; and a start ping that the open-files limit keeps
//! from going out is said on stderr, once.

use std::os::unix::process::CommandExt;

use super::server::Class;
use super::{assert_end, assert_start, healthchecks, server};
use crate::harness::{Crontap, Receiver};

/// The debug line crontap-run writes each time it sets up the runtime and client its
/// requests go out on.
const SET_UP: &str = "network runtime and HTTP client set up";

fn set_ups(stderr: &str) -> Vec<&str> {
    stderr.lines().filter(|l| l.contains(SET_UP)).collect()
}

/// A Healthchecks run sends a start beside the command and an end after it: both go out on
/// the one runtime and client, set up once, reading no certificates for an http URL.
#[test]
fn the_start_and_the_end_share_one_runtime_and_client() {
    for script in ["exit 0", "echo out; exit 3"] {
        let (hc, url) = server();
        let out = healthchecks(&url).arg("-v").sh(script);
        assert_start(&hc.only_start());
        let end = hc.only_end();
        assert_end(&end, if script == "exit 0" { "0" } else { "3" });
        let set_ups = set_ups(&out.stderr);
        assert_eq!(set_ups.len(), 1, "{script}: {}", out.stderr);
        assert!(
            set_ups[0].contains("for an http URL (no certificates read)"),
            "{}",
            set_ups[0]
        );
    }
}

/// Retries of the end go out on the same runtime and client as its first attempt and the
/// start.
#[test]
fn retries_go_out_on_the_same_runtime_and_client() {
    let (hc, url) = server();
    hc.script(Class::End, &[503, 503]);
    let out = healthchecks(&url)
        .args(["-v", "--ping-retries", "3"])
        .sh("exit 0");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(hc.ends().len(), 3, "{:#?}", hc.pings());
    assert_eq!(set_ups(&out.stderr).len(), 1, "{}", out.stderr);
}

/// Nothing is set up where nothing is sent: no URL, a dry run, a skipped run. A crontap run
/// sets it up once, for its end.
#[test]
fn the_runtime_and_client_are_set_up_only_for_a_request() {
    let none = Crontap::new().args(["-v", "--", "true"]).run();
    assert_eq!(none.code, 0, "{}", none.stderr);
    assert!(set_ups(&none.stderr).is_empty(), "{}", none.stderr);

    let (hc, url) = server();
    let dry = healthchecks(&url).args(["-v", "--dry-run"]).sh("exit 0");
    assert!(set_ups(&dry.stderr).is_empty(), "{}", dry.stderr);
    assert!(hc.pings().is_empty());

    let receiver = Receiver::start();
    let plain = Crontap::with_url(&receiver.url())
        .args(["-v", "--", "true"])
        .run();
    assert_eq!(receiver.received().len(), 1);
    assert_eq!(set_ups(&plain.stderr).len(), 1, "{}", plain.stderr);
}

use crate::descriptors::only_stdio_and_limit;

/// Under every open-files limit at which a Healthchecks run that holds state runs its
/// command, the start ping either goes out or its absence is one warning on stderr naming
/// the limit; never a start left out with nothing said. The end goes out either way.
#[test]
fn a_start_the_open_files_limit_leaves_no_room_for_is_a_warning() {
    let mut skipped = 0;
    for limit in 12..=32u64 {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state").display().to_string();
        let (hc, url) = server();
        let mut crontap = healthchecks(&url);
        crontap.args(["--no-overlap", "--job", "fds", "--state-dir", &state]);
        // The command lasts a moment, so that the start ping is weighed while the run
        // holds what it holds beside a running command (one that has ended already has
        // given its pipes back, which can leave the start room even at the floor).
        crontap.args(["--", "sh", "-c", "sleep 0.5"]);
        // SAFETY: only system calls between fork and exec.
        unsafe {
            crontap
                .command()
                .pre_exec(move || only_stdio_and_limit(limit));
        }
        let out = crontap.run();
        if out.code == 125 {
            // The command itself could not run at this limit: covered in `descriptors`.
            assert!(hc.starts().is_empty(), "limit {limit}");
            continue;
        }
        assert_eq!(out.code, 0, "limit {limit}: {}", out.stderr);
        let warnings: Vec<&str> = out
            .stderr
            .lines()
            .filter(|l| l.contains("start ping"))
            .collect();
        match hc.starts().len() {
            1 => assert!(warnings.is_empty(), "limit {limit}: {}", out.stderr),
            0 => {
                skipped += 1;
                assert_eq!(warnings.len(), 1, "limit {limit}: {}", out.stderr);
                assert!(
                    warnings[0].starts_with("crontap-run: warning: "),
                    "limit {limit}: {}",
                    warnings[0]
                );
                assert!(
                    warnings[0].contains("open-files limit (ulimit -n)"),
                    "limit {limit}: {}",
                    warnings[0]
                );
            }
            n => panic!("limit {limit}: {n} starts"),
        }
        assert_end(&hc.only_end(), "0");
    }
    // Not an assertion on the product: that the limits tried include one that is short.
    assert!(skipped > 0, "no limit left the start too little room");
}

/// The runtime kept between the start and the end never takes the descriptors a later
/// attempt of the command needs: under every open-files limit at which the first attempt
/// runs, the later ones run too, with or without state held.
#[test]
fn under_every_open_files_limit_the_later_attempts_run_as_the_first() {
    for state in [false, true] {
        let mut first_run = None;
        for limit in 12..=40u64 {
            let dir = tempfile::tempdir().unwrap();
            let state_dir = dir.path().join("state").display().to_string();
            let (hc, url) = server();
            let mut crontap = healthchecks(&url);
            if state {
                crontap.args(["--no-overlap", "--job", "fds", "--state-dir", &state_dir]);
            }
            crontap.args(["--retries", "2", "--retry-delay", "10ms"]);
            crontap.args(["--", "sh", "-c", "echo ran; exit 3"]);
            // SAFETY: only system calls between fork and exec.
            unsafe {
                crontap
                    .command()
                    .pre_exec(move || only_stdio_and_limit(limit));
            }
            let out = crontap.run();
            let case = format!("limit {limit}, state {state}");
            if out.code == 125 && first_run.is_none() {
                assert_eq!(out.stdout, "", "{case}: {}", out.stderr);
                continue;
            }
            first_run.get_or_insert(limit);
            assert_eq!(out.code, 3, "{case}: {}", out.stderr);
            assert_eq!(out.stdout, "ran\nran\nran\n", "{case}: {}", out.stderr);
            assert_end(&hc.only_end(), "3");
        }
        assert!(first_run.is_some(), "state {state}: the job never ran");
    }
}

/// The start's connection is closed once its answer is in, while the command still runs:
/// the runtime kept for the end holds no socket meanwhile. The server answers the start
/// without closing the connection itself and marks when crontap-run closes it; the job
/// waits for that marker (a bound only against a hang) and says whether it came.
#[test]
fn the_start_leaves_no_connection_open_beside_the_command() {
    use std::io::{Read, Write};
    let dir = tempfile::tempdir().unwrap();
    let closed = dir.path().join("closed");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let marker = closed.clone();
    std::thread::spawn(move || {
        for (n, stream) in listener.incoming().enumerate() {
            let Ok(mut stream) = stream else { continue };
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap_or(0) == 1 {
                head.push(byte[0]);
            }
            // The end's body, if any, is not read: its answer is all the test needs.
            let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nOK");
            if n == 0 {
                // The start: wait for crontap-run to close it.
                while stream.read(&mut byte).is_ok_and(|read| read > 0) {}
                std::fs::write(&marker, "").unwrap();
            }
        }
    });
    let url = format!("http://127.0.0.1:{port}/{}/slug", crate::harness::SECRET);
    let script = format!(
        "i=0; while [ ! -e '{}' ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; \
         [ -e '{}' ] && echo closed || echo open",
        closed.display(),
        closed.display()
    );
    let out = healthchecks(&url).sh(&script);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout, "closed\n", "{}", out.stderr);
}

/// A start given up while it waits for its answer has its connection closed before the end
/// goes out, as when each ping had a runtime of its own: nothing of it is left to the end.
/// The server never answers the start, and looks at its connection when the end arrives.
#[test]
fn a_start_given_up_is_closed_before_the_end_goes_out() {
    use std::io::{ErrorKind, Read, Write};
    use std::net::TcpStream;
    use std::sync::{Arc, Mutex};
    let start: Arc<Mutex<Option<TcpStream>>> = Arc::default();
    let seen: Arc<Mutex<Vec<&str>>> = Arc::default();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (held, said) = (Arc::clone(&start), Arc::clone(&seen));
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap_or(0) == 1 {
                head.push(byte[0]);
            }
            if head.starts_with(b"GET ") {
                said.lock().unwrap().push("start");
                *held.lock().unwrap() = Some(stream);
                continue;
            }
            // The end: is the start's connection closed (end of file) by now?
            let state = match held.lock().unwrap().take() {
                None => "end, no start",
                Some(start) => {
                    start.set_nonblocking(true).unwrap();
                    match start.peek(&mut byte) {
                        Ok(0) => "end, the start closed",
                        Err(err) if err.kind() == ErrorKind::WouldBlock => "end, the start open",
                        _ => "end, the start in another state",
                    }
                }
            };
            said.lock().unwrap().push(state);
            let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nOK");
        }
    });
    let url = format!("http://127.0.0.1:{port}/{}/slug", crate::harness::SECRET);
    let out = healthchecks(&url)
        .args(["--ping-budget", "2s", "--", "true"])
        .run();
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        *seen.lock().unwrap(),
        ["start", "end, the start closed"],
        "{}",
        out.stderr
    );
}
