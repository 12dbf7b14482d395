//! A stop request is never lost: whenever SIGTERM, SIGINT or SIGQUIT reaches crontap-run
//! while its command runs, the run is reported as stopped, even when the job exits 0 at once
//! and the machine is busy. Hundreds of runs, on a loaded machine, give the race between the
//! signal and the job's exit every chance to show.

use std::process::{Child, Command, Stdio};
use std::time::Instant;

use nix::sys::signal::Signal;

use crate::harness::{Crontap, Receiver, SECRET, default_signals};
use crate::workers::on_workers;

/// Runs of each signal.
const RUNS: usize = 200;

/// Runs in flight at once. A debug crontap-run spends tens of milliseconds of CPU on a run
/// and its ping, and shares the two cores with the busy loops: with 6 at once the 600 runs
/// took 46 to 53 s on the 2-core test machine, with 4 about 60 s.
const WORKERS: usize = 6;

/// Two busy loops that keep both cores of the test machine busy, killed when dropped, also
/// when the test fails.
struct CpuHog(Vec<Child>);

impl CpuHog {
    fn start() -> CpuHog {
        CpuHog(
            (0..2)
                .map(|_| {
                    Command::new("sh")
                        .args(["-c", "while :; do :; done"])
                        .stdin(Stdio::null())
                        .stdout(Stdio::null())
                        .stderr(Stdio::null())
                        .spawn()
                        .expect("start a busy loop")
                })
                .collect(),
        )
    }
}

impl Drop for CpuHog {
    fn drop(&mut self) {
        for hog in &mut self.0 {
            let _ = hog.kill();
            let _ = hog.wait();
        }
    }
}

/// A job that says `ready`, and on `signal` writes `cleaning up` to stderr and exits 0. It
/// gives up by itself (exit 3) after at least 30 s, so a signal that never reaches it fails
/// the test instead of hanging it.
fn graceful(signal: &str) -> String {
    format!(
        "trap 'echo cleaning up >&2; exit 0' {signal}; echo ready; i=0; \
         while [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done; echo gave up >&2; exit 3"
    )
}

/// For each stop signal, [`RUNS`] runs of a job that cleans up and exits 0 on it; the signal
/// goes to crontap-run the moment the job is ready. Every run exits 0 and is reported, once,
/// as stopped by that signal with the job's exit and last line.
#[test]
fn a_stop_request_is_never_lost() {
    default_signals().unwrap();
    let started = Instant::now();
    let _hog = CpuHog::start();
    let signals = [
        (Signal::SIGTERM, "TERM"),
        (Signal::SIGINT, "INT"),
        (Signal::SIGQUIT, "QUIT"),
    ];
    let runs: Vec<(Signal, &str, usize)> = signals
        .iter()
        .flat_map(|&(sig, name)| (0..RUNS).map(move |run| (sig, name, run)))
        .collect();
    let failures = on_workers(WORKERS, &runs, |_, &(sig, name, run)| {
        let receiver = Receiver::start();
        let mut running = Crontap::with_url(&receiver.url())
            .args(["--", "sh", "-c", &graceful(name)])
            .start();
        running.wait_for("ready");
        running.signal(sig);
        let out = running.finish();
        // What the receiver got, for the messages: each request's msg, or its target.
        let received = receiver
            .received()
            .iter()
            .map(|r| match r.msg() {
                Some(msg) => format!("msg {msg:?}"),
                None => format!("no msg, target {}", r.target.replace(SECRET, "<SECRET>")),
            })
            .collect::<Vec<_>>()
            .join("; ");
        assert_eq!(
            out.code, 0,
            "{sig} run {run}: exit status; received [{received}]; stderr {:?}",
            out.stderr
        );
        let [ping] = &receiver.received()[..] else {
            panic!("{sig} run {run}: expected one request, received [{received}]");
        };
        let msg = ping.msg().unwrap_or_default();
        assert!(
            ping.target.starts_with(&format!("/ping/{SECRET}/fail?"))
                && msg.starts_with(&format!("stopped by {} after ", sig.as_str()))
                && msg.ends_with("(exit 0): cleaning up"),
            "{sig} run {run}: not reported as stopped; received [{received}]"
        );
    });
    let took = started.elapsed();
    assert!(
        failures.is_empty(),
        "{} of {} runs lost their stop request (in {took:?}):\n{}",
        failures.len(),
        runs.len(),
        failures.join("\n")
    );
}
