//! `--output on-failure`: the command's output reaches crontap-run's stdout and stderr only
//! if the run does not succeed, byte for byte and each stream to its own; nothing is left
//! in `$TMPDIR`, even after SIGKILL; a spill that cannot be written passes everything
//! through. Every test asserts the bytes that reached each stream.

use std::path::Path;
use std::time::Duration;

use nix::sys::signal::Signal;

use crate::harness::{Crontap, Output, Receiver, SECRET, Tmpfs, alive, eventually, read_pid};
use crate::state::stateful;

/// A run with `--output on-failure` reporting to `receiver`, spilling into `tmp`.
fn held(receiver: &Receiver, tmp: &Path) -> Crontap {
    let mut crontap = Crontap::with_url(&receiver.url());
    crontap.args(["--output", "on-failure"]).env("TMPDIR", tmp);
    crontap
}

/// The names in `dir`.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// All 256 byte values, bytes that are not UTF-8, then `bulk` bytes of a pattern (past the
/// in-memory buffer, so the spill file is written and read back), then `last`.
fn binary(bulk: usize, last: &str) -> Vec<u8> {
    let mut bytes: Vec<u8> = (0..=255u8).collect();
    bytes.extend_from_slice(b"\n\xff\xfe not UTF-8: \xc3\x28 \xe2\x82\n");
    bytes.extend((0..bulk).map(|i| b'a' + (i % 23) as u8));
    bytes.extend_from_slice(last.as_bytes());
    bytes
}

/// Writes `stdout` and `stderr` into files under `dir`, and a job that prints them to its
/// own stdout and stderr and exits with `status`.
fn job_printing(dir: &Path, stdout: &[u8], stderr: &[u8], status: u8) -> String {
    let (out, err) = (dir.join("out.bin"), dir.join("err.bin"));
    std::fs::write(&out, stdout).unwrap();
    std::fs::write(&err, stderr).unwrap();
    format!(
        "cat '{}'; cat '{}' >&2; exit {status}",
        out.display(),
        err.display()
    )
}

/// The summary without its duration (`exit 3 after 12ms: x` is `exit 3: x`).
fn without_duration(msg: &str) -> String {
    let (head, detail) = msg.split_once(": ").unwrap_or((msg, ""));
    let head = head.split(" after ").next().unwrap();
    format!("{head}: {detail}")
}

fn fail_msg(receiver: &Receiver) -> String {
    let ping = receiver.only();
    assert!(
        ping.target.starts_with(&format!("/ping/{SECRET}/fail?")),
        "{ping:?}"
    );
    ping.msg().unwrap()
}

fn assert_streams(out: &Output, stdout: &[u8], stderr: &[u8]) {
    assert!(
        out.raw_stdout == stdout,
        "stdout: {} bytes, expected {}: {:?}",
        out.raw_stdout.len(),
        stdout.len(),
        String::from_utf8_lossy(&out.raw_stdout[..out.raw_stdout.len().min(300)])
    );
    assert!(
        out.raw_stderr == stderr,
        "stderr: {} bytes, expected {}: {:?}",
        out.raw_stderr.len(),
        stderr.len(),
        String::from_utf8_lossy(&out.raw_stderr[..out.raw_stderr.len().min(300)])
    );
}

#[test]
fn a_success_prints_nothing_of_the_command() {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let job = job_printing(
        dir.path(),
        &binary(300_000, "out\n"),
        &binary(200_000, "err\n"),
        0,
    );
    let out = held(&receiver, dir.path()).sh(&job);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_streams(&out, b"", b"");
    assert_eq!(receiver.only().target, format!("/ping/{SECRET}"));
    assert_eq!(
        names(dir.path()),
        ["err.bin", "out.bin"],
        "a spill was left behind"
    );
}

/// Each stream back to its own, exactly: binary, not UTF-8, and far past the buffer; the
/// summary is the one `--output pass` sends.
#[test]
fn a_failure_replays_each_stream_byte_for_byte() {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let stdout = binary(1_000_000, "the end of stdout");
    let stderr = binary(300_000, "\nERROR: the real error\n");
    let job = job_printing(dir.path(), &stdout, &stderr, 3);

    let out = held(&receiver, &tmp).sh(&job);
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert_streams(&out, &stdout, &stderr);
    let msg = fail_msg(&receiver);
    assert!(msg.ends_with(": ERROR: the real error"), "{msg}");
    assert!(names(&tmp).is_empty(), "left in TMPDIR: {:?}", names(&tmp));

    let passed = Receiver::start();
    let pass = Crontap::with_url(&passed.url())
        .args(["--output", "pass"])
        .sh(&job);
    assert_streams(&pass, &stdout, &stderr);
    assert_eq!(without_duration(&fail_msg(&passed)), without_duration(&msg));
}

/// A job that prints, says it is ready by creating `ready`, and on SIGTERM prints more and
/// exits 0. What it waits on ignores SIGTERM, so that no shell adds `Terminated` for it.
fn trapping_job(ready: &Path) -> String {
    format!(
        "trap 'echo cleaning up >&2; echo last words; exit 0' TERM; \
         echo before; echo 'err before' >&2; touch '{}'; \
         while :; do (trap '' TERM; exec sleep 1) & wait $!; done",
        ready.display()
    )
}

#[test]
fn a_stop_replays_the_output() {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let ready = dir.path().join("ready");
    let run = held(&receiver, dir.path())
        .args(["--timeout", "60s", "--", "sh", "-c", &trapping_job(&ready)])
        .start();
    assert!(
        eventually(Duration::from_secs(30), || ready.exists()),
        "never ready"
    );
    run.signal(Signal::SIGTERM);
    let out = run.finish();
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_streams(&out, b"before\nlast words\n", b"err before\ncleaning up\n");
    let msg = fail_msg(&receiver);
    assert!(msg.starts_with("stopped by SIGTERM after "), "{msg}");
}

#[test]
fn a_timeout_replays_the_output() {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let out = held(&receiver, dir.path())
        .args(["--timeout", "1s"])
        .sh("echo partial; echo 'still working' >&2; exec sleep 30");
    assert_eq!(out.code, 124, "{}", out.stderr);
    assert_streams(&out, b"partial\n", b"still working\n");
    assert!(fail_msg(&receiver).starts_with("timed out after 1s"));
}

/// A lost lease (the debug build's fault point: never renewed) stops the command; its
/// output is replayed before crontap-run's own lines.
#[test]
fn a_lost_lease_replays_the_output() {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let out = stateful(&receiver, &dir.path().join("state"))
        .args(["--output", "on-failure", "--no-overlap", "--job", "leased"])
        .env("TMPDIR", dir.path())
        .env("CRONTAP_FAULT", "lease-renewal")
        .sh("echo working; echo 'err working' >&2; exec sleep 30");
    assert_eq!(out.code, 125, "{}", out.stderr);
    assert_eq!(out.stdout, "working\n");
    // crontap-run's own line about the lease comes as it happens; the job's, at the end.
    let (own, job): (Vec<&str>, Vec<&str>) = out
        .stderr
        .lines()
        .partition(|l| l.starts_with("crontap-run: "));
    assert_eq!(job, ["err working"], "{}", out.stderr);
    assert!(out.stderr.ends_with("err working\n"), "{}", out.stderr);
    assert!(own.iter().all(|l| l.contains("lease")), "{own:?}");
    assert!(fail_msg(&receiver).starts_with("lease lost after "));
}

#[test]
fn retries_replay_every_attempt_after_its_line() {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let out = held(&receiver, dir.path())
        .args(["--retries", "2", "--retry-delay", "10ms"])
        .sh("echo \"out $CRONTAP_ATTEMPT\"; echo \"err $CRONTAP_ATTEMPT\" >&2; exit 4");
    assert_eq!(out.code, 4, "{}", out.stderr);
    let stderr = "crontap-run: attempt 1 of 3\nerr 1\n\
                  crontap-run: attempt 2 of 3\nerr 2\n\
                  crontap-run: attempt 3 of 3\nerr 3\n";
    assert_streams(&out, b"out 1\nout 2\nout 3\n", stderr.as_bytes());
    assert!(fail_msg(&receiver).contains("(attempt 3 of 3): err 3"));
}

/// The spill of attempt 1 is open while attempt 2 starts; attempt 2 does not inherit it.
#[test]
fn a_later_attempt_does_not_inherit_the_spill() {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let out = held(&receiver, &tmp)
        .args(["--retries", "1", "--retry-delay", "10ms"])
        .sh("head -c 300000 /dev/zero; for f in /proc/$$/fd/*; do readlink \"$f\"; done >&2; exit 1");
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert_eq!(out.raw_stdout.len(), 600_000);
    let (_, second) = out
        .stderr
        .split_once("crontap-run: attempt 2 of 2\n")
        .unwrap();
    assert!(second.lines().count() >= 3, "{second}");
    let tmp = tmp.display().to_string();
    assert!(
        !second.contains(&tmp),
        "attempt 2 holds the spill: {second}"
    );
}

#[test]
fn a_last_attempt_that_succeeds_prints_nothing() {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let out = held(&receiver, dir.path())
        .args(["--retries", "2", "--retry-delay", "10ms"])
        .sh("echo \"out $CRONTAP_ATTEMPT\"; echo failing >&2; [ \"$CRONTAP_ATTEMPT\" -ge 3 ]");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_streams(&out, b"", b"");
    assert_eq!(receiver.only().target, format!("/ping/{SECRET}"));
}

/// `--success-exit` decides for the output as for the ping; a status it does not list is
/// a failure as before.
#[test]
fn success_exit_statuses_print_nothing() {
    for (status, printed) in [(24, false), (23, true)] {
        let receiver = Receiver::start();
        let dir = tempfile::tempdir().unwrap();
        let out = held(&receiver, dir.path())
            .args(["--success-exit", "24"])
            .sh(&format!(
                "echo 'some files vanished'; echo warning >&2; exit {status}"
            ));
        assert_eq!(out.code, status, "{}", out.stderr);
        match printed {
            false => assert_streams(&out, b"", b""),
            true => assert_streams(&out, b"some files vanished\n", b"warning\n"),
        }
        let success = receiver.only().target == format!("/ping/{SECRET}");
        assert_eq!(success, !printed, "{status}");
    }
}

/// Without `--output`, with `pass`, and with `CRONTAP_OUTPUT` set to `pass` or empty, the
/// output passes through as it comes: the test reads the job's first line while the job
/// still runs. `CRONTAP_OUTPUT=on-failure` holds it.
#[test]
fn pass_is_unchanged_and_the_variable_chooses_too() {
    let settings: [(&[&str], Option<&str>); 4] = [
        (&[], None),
        (&["--output", "pass"], None),
        (&[], Some("pass")),
        (&[], Some("")),
    ];
    for (args, variable) in settings {
        let receiver = Receiver::start();
        let dir = tempfile::tempdir().unwrap();
        let go = dir.path().join("go");
        let job = format!(
            "echo ready; while [ ! -e '{}' ]; do sleep 0.05; done; echo done >&2",
            go.display()
        );
        let mut crontap = Crontap::with_url(&receiver.url());
        crontap.args(args).args(["--timeout", "60s"]);
        if let Some(value) = variable {
            crontap.env("CRONTAP_OUTPUT", value);
        }
        let mut run = crontap.args(["--", "sh", "-c", &job]).start();
        run.wait_for("ready");
        std::fs::write(&go, "").unwrap();
        let out = run.finish();
        assert_eq!(out.code, 0, "{args:?} {variable:?}: {}", out.stderr);
        assert_streams(&out, b"ready\n", b"done\n");
    }
    let receiver = Receiver::start();
    let out = Crontap::with_url(&receiver.url())
        .env("CRONTAP_OUTPUT", "on-failure")
        .sh("echo held; echo held >&2");
    assert_streams(&out, b"", b"");
}

/// A bug while the held output is settled (the debug build's fault point) keeps what a bug
/// keeps everywhere else in the end: the command's status, and one report.
#[test]
fn a_panic_while_settling_the_output_keeps_the_status_and_the_report() {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let out = held(&receiver, dir.path())
        .env("CRONTAP_FAULT", "output")
        .sh("echo out; echo 'the error' >&2; exit 3");
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(
        out.stderr.starts_with("crontap-run: internal error at ")
            && out.stderr.contains("the command's exit status stands"),
        "{}",
        out.stderr
    );
    assert!(fail_msg(&receiver).starts_with("exit 3 after "));
}

#[test]
fn a_bad_value_is_refused_naming_the_option() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    for (args, variable) in [
        (&["--output", "always"][..], None),
        (&[][..], Some("never")),
    ] {
        let mut crontap = Crontap::new();
        if let Some(value) = variable {
            crontap.env("CRONTAP_OUTPUT", value);
        }
        let out = crontap.args(args).arg("--").arg("touch").arg(&marker).run();
        assert_eq!(out.code, 125, "{}", out.stderr);
        assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
        assert!(out.stderr.contains("--output"), "{}", out.stderr);
        assert!(!marker.exists());
    }
}

/// The spill has no name, so SIGKILL of crontap-run while output is spilled leaves nothing:
/// not a name in `$TMPDIR` (none ever appears), nor the space it took.
#[test]
fn nothing_is_left_in_tmpdir_after_sigkill() {
    if !crate::namespace::rerun_as_root(module_path!(), "nothing_is_left_in_tmpdir_after_sigkill") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path().join("tmp");
    let disk = Tmpfs::mount(&tmp, "64m");
    let pid_file = dir.path().join("job.pid");
    let job = format!(
        "head -c 5000000 /dev/zero; echo $$ > '{}'; exec sleep 600",
        pid_file.display()
    );
    let mut child = Crontap::new()
        .args(["-q", "--output", "on-failure", "--", "sh", "-c", &job])
        .env("TMPDIR", &tmp)
        .spawn(std::process::Stdio::null(), std::process::Stdio::null());
    let job_pid = read_pid(&pid_file);
    // Ready: what the job printed is in the spill.
    let spilled = eventually(Duration::from_secs(30), || disk.used() >= 4_500_000);
    assert!(spilled, "only {} bytes spilled", disk.used());
    assert!(names(&tmp).is_empty(), "{:?}", names(&tmp));

    child.kill().unwrap();
    child.wait().unwrap();
    let freed = eventually(Duration::from_secs(10), || disk.used() == 0);
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(job_pid.parse().unwrap()),
        Signal::SIGKILL,
    );
    assert!(freed, "{} bytes still in use", disk.used());
    assert!(names(&tmp).is_empty(), "{:?}", names(&tmp));
    assert!(eventually(Duration::from_secs(10), || !alive(&job_pid)));
}

/// A `$TMPDIR` that fills up (a 256 KiB tmpfs) or does not exist: one warning, every byte
/// of both streams out, each in its order, and the command's status.
#[test]
fn a_spill_that_cannot_be_written_passes_everything_through() {
    if !crate::namespace::rerun_as_root(
        module_path!(),
        "a_spill_that_cannot_be_written_passes_everything_through",
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let small = dir.path().join("small");
    let disk = Tmpfs::mount(&small, "256k");
    let missing = dir.path().join("missing");
    let stdout = binary(1_000_000, "the end");
    let (out_file, err_file) = (dir.path().join("out.bin"), dir.path().join("err.bin"));
    std::fs::write(&out_file, &stdout).unwrap();
    std::fs::write(&err_file, binary(100_000, "\nmiddle\n")).unwrap();
    // stderr: some before stdout spills, some (past the buffer too) while, some after.
    let job = format!(
        "echo 'err first' >&2; cat '{}'; cat '{}' >&2; echo 'err last' >&2; exit 3",
        out_file.display(),
        err_file.display()
    );
    let mut stderr = b"err first\n".to_vec();
    stderr.extend(binary(100_000, "\nmiddle\n"));
    stderr.extend_from_slice(b"err last\n");
    for tmp in [&small, &missing] {
        let receiver = Receiver::start();
        let out = held(&receiver, tmp).sh(&job);
        assert_eq!(out.code, 3, "{}", out.stderr);
        let (warning, rest) = split_first_line(&out.raw_stderr);
        let warning = String::from_utf8_lossy(warning);
        assert!(
            warning.starts_with("crontap-run: warning: cannot hold the command's output in ")
                && warning.contains(&tmp.display().to_string()),
            "{warning}"
        );
        assert_streams(
            &Output {
                raw_stderr: rest.to_vec(),
                ..out
            },
            &stdout,
            &stderr,
        );
        assert!(fail_msg(&receiver).ends_with(": err last"));
    }
    assert_eq!(names(&small), Vec::<String>::new());
    assert_eq!(disk.used(), 0);
}

fn split_first_line(bytes: &[u8]) -> (&[u8], &[u8]) {
    let end = bytes
        .iter()
        .position(|&b| b == b'\n')
        .map_or(bytes.len(), |i| i + 1);
    bytes.split_at(end)
}
