//! The contract through the binary: several crontap-runs ("hosts") sharing one store.
//! Concurrent starts are held by gate files, never by sleeps; waits for a lease to run out
//! retry until the next run goes. The fleets on the hour are in the load tests.

use std::process::Stdio;
use std::time::{Duration, SystemTime};

use nix::sys::signal::Signal;

use super::{Backend, assert_no_secret, host, run};
use crate::harness::{Crontap, Receiver, SECRET, alive, eventually};
use crate::state::{Gate, line_count, together};

/// Starts `count` hosts at once, each built by `crontap(i)`, and returns what each printed
/// (see [`together`]).
fn hosts_together<B: Backend>(
    b: &B,
    count: usize,
    gate: &Gate,
    mut crontap: impl FnMut(usize) -> Crontap,
) -> Vec<(i32, String)> {
    let children = (0..count)
        .map(|i| crontap(i).spawn(Stdio::null(), Stdio::piped()))
        .collect();
    let results = together(children, gate);
    for (_, stderr) in &results {
        assert_no_secret(b, stderr);
    }
    results
}

/// The key `--once-per 1d` gives `job` now.
fn day_key(job: &str) -> String {
    let secs = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let start = SystemTime::UNIX_EPOCH + Duration::from_secs(secs - secs % 86_400);
    format!("{job}:{}", humantime::format_rfc3339_seconds(start))
}

pub(crate) fn ten_hosts_with_one_once_per_key_run_the_command_once<B: Backend>(b: &B) {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let count = dir.path().join("count");
    let gate = Gate::new(dir.path());
    let script = format!("echo run >> '{}'; {}", count.display(), gate.wait_script());
    let key = day_key("import");
    let results = hosts_together(b, 10, &gate, |i| {
        let mut crontap = host(b, &receiver, dir.path(), i);
        crontap
            .args(["--once-per", "1d", "--job", "import", "--timeout", "60s"])
            .args(["--", "sh", "-c", &script]);
        crontap
    });
    assert!(results.iter().all(|(code, _)| *code == 0), "{results:#?}");
    let notice = format!("crontap-run: notice: skipped: {key} is being run by another instance\n");
    let skipped = results.iter().filter(|(_, e)| *e == notice).count();
    let silent = results.iter().filter(|(_, e)| e.is_empty()).count();
    assert_eq!((skipped, silent), (9, 1), "{results:#?}");
    assert_eq!(line_count(&count), 1, "the command ran more than once");
    assert_eq!(receiver.only().target, format!("/ping/{SECRET}"));

    // Any host, later: already done, and nothing is sent.
    let later = run(
        b,
        host(b, &receiver, dir.path(), 10)
            .args(["--once-per", "1d", "--job", "import", "--", "sh", "-c"])
            .arg(format!("echo run >> '{}'", count.display())),
    );
    assert_eq!(later.code, 0);
    let done = format!("crontap-run: notice: skipped: {key} already succeeded at ");
    assert!(later.stderr.starts_with(&done), "{}", later.stderr);
    assert_eq!(line_count(&count), 1);
    receiver.only();
    assert!(
        b.key_row(&key).starts_with("succeeded|"),
        "{}",
        b.key_row(&key)
    );
    // Each host keeps its own history, skipped runs too.
    let mut dirs: Vec<_> = (0..11).map(|i| b.state_dir(dir.path(), i)).collect();
    dirs.dedup();
    let histories: usize = dirs
        .iter()
        .map(|d| line_count(&d.join("history/import.jsonl")))
        .sum();
    assert_eq!(histories, 11);
}

pub(crate) fn ten_hosts_with_no_overlap_run_one_at_a_time<B: Backend>(b: &B) {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let count = dir.path().join("count");
    let gate = Gate::new(dir.path());
    let script = format!("echo run >> '{}'; {}", count.display(), gate.wait_script());
    let results = hosts_together(b, 10, &gate, |i| {
        let mut crontap = host(b, &receiver, dir.path(), i);
        crontap
            .args(["--no-overlap", "--job", "sync", "--timeout", "60s"])
            .args(["--", "sh", "-c", &script]);
        crontap
    });
    assert!(results.iter().all(|(code, _)| *code == 0), "{results:#?}");
    let notice = "crontap-run: notice: skipped: job sync is already running (--no-overlap)\n";
    let skipped = results.iter().filter(|(_, e)| e == notice).count();
    let silent = results.iter().filter(|(_, e)| e.is_empty()).count();
    assert_eq!((skipped, silent), (9, 1), "{results:#?}");
    assert_eq!(line_count(&count), 1, "the command overlapped itself");
    receiver.only();

    // The lock went with its run: the next run runs.
    b.assert_lock_free("sync");
    let next = run(
        b,
        host(b, &receiver, dir.path(), 0)
            .args(["--no-overlap", "--job", "sync", "--", "sh", "-c"])
            .arg(format!("echo run >> '{}'", count.display())),
    );
    assert_eq!((next.code, next.stderr.as_str()), (0, ""));
    assert_eq!(line_count(&count), 2);
}

/// `CRONTAP_FENCING_TOKEN` grows with every run of a job, whichever host ran it and
/// whether it held the job's lock, its key or both.
pub(crate) fn fencing_tokens_grow_with_every_run_of_a_job<B: Backend>(b: &B) {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let runs: [&[&str]; 5] = [
        &["--no-overlap"],
        &["--idempotency-key", "f-1"],
        &["--no-overlap", "--idempotency-key", "f-2"],
        &["--no-overlap"],
        &["--once-per", "1d"],
    ];
    let mut tokens = Vec::new();
    for (i, options) in runs.iter().enumerate() {
        let out = run(
            b,
            host(b, &receiver, dir.path(), i % 2)
                .args(["--job", "fenced"])
                .args(*options)
                .args(["--", "sh", "-c", "echo \"$CRONTAP_FENCING_TOKEN\""]),
        );
        assert_eq!((out.code, out.stderr.as_str()), (0, ""), "{options:?}");
        let token: u64 = out.stdout.trim().parse().expect(&out.stdout);
        tokens.push(token);
    }
    assert!(tokens.windows(2).all(|w| w[0] < w[1]), "{tokens:?}");
    assert!(tokens[0] > 0, "{tokens:?}");
}

/// A crontap-run killed outright takes its job with it, and its hold never blocks the next
/// run: the kernel lets go of a file lock, a server lets the lease run out.
pub(crate) fn a_sigkilled_holder_takes_its_job_with_it_and_never_blocks<B: Backend>(b: &B) {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    let script = format!(
        "echo $$ > '{}'; echo ready; exec sleep 600",
        pid_file.display()
    );
    let mut holder = host(b, &receiver, dir.path(), 0)
        .args(b.lease_args())
        .args([
            "--no-overlap",
            "--idempotency-key",
            "k-9",
            "--job",
            "nightly",
        ])
        .args(["--", "sh", "-c", &script])
        .spawn(Stdio::piped(), Stdio::null());
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(holder.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    assert_eq!(line, "ready\n");
    holder.kill().unwrap();
    holder.wait().unwrap();
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    let gone = eventually(Duration::from_secs(20), || !alive(pid.trim()));
    if !gone && let Ok(pid) = pid.trim().parse() {
        let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), Signal::SIGKILL);
    }
    assert!(gone, "the job of the SIGKILLed crontap-run survived");

    // The next run goes as soon as the store lets go (a lease at most), lock and key.
    let marker = dir.path().join("ran");
    let ran = eventually(Duration::from_secs(20), || {
        let next = run(
            b,
            host(b, &receiver, dir.path(), 1)
                .args(b.lease_args())
                .args([
                    "--no-overlap",
                    "--idempotency-key",
                    "k-9",
                    "--job",
                    "nightly",
                ])
                .args(["--", "touch"])
                .arg(&marker),
        );
        assert_eq!(next.code, 0, "{}", next.stderr);
        marker.exists()
    });
    assert!(ran, "the SIGKILLed holder blocked the next run");
    assert!(
        b.key_row("k-9").starts_with("succeeded|"),
        "{}",
        b.key_row("k-9")
    );
}
