//! A stop ends the command's whole process group, not only its leader: a program that
//! ignores SIGTERM under a shell that does not (a JVM's shutdown hook, `trap '' TERM`) is
//! killed at `--kill-after` too, before crontap-run exits and lets the next run start.

use std::path::Path;
use std::time::Duration;

use nix::sys::signal::Signal;

use crate::harness::{Crontap, Receiver, alive, read_pid};
use crate::state::stateful;

/// A shell whose foreground child ignores SIGTERM: the shell dies of SIGTERM at once, the
/// child writes its pid to `pid_file`, says it is ready, and sleeps on.
fn stubborn_member(pid_file: &Path) -> String {
    format!(
        "sh -c 'trap \"\" TERM; echo $$ > {}; echo ready; exec sleep 60'; echo after",
        pid_file.display()
    )
}

#[test]
fn a_stop_request_kills_group_members_outliving_the_leader() {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    let state = dir.path().join("state");
    let mut run = stateful(&receiver, &state)
        .args(["--no-overlap", "--job", "nightly", "--kill-after", "1s"])
        .args(["--", "sh", "-c", &stubborn_member(&pid_file)])
        .start();
    run.wait_for("ready");
    run.signal(Signal::SIGTERM);
    let out = run.finish();
    // The leader's own status: the shell died of the SIGTERM it was sent.
    assert_eq!(out.code, 128 + 15, "{}", out.stderr);
    let pid = read_pid(&pid_file);
    assert!(
        !alive(&pid),
        "a member of the job's group still runs after crontap-run exited and released its lock"
    );
    assert!(!out.stdout.contains("after"), "{}", out.stdout);
    let msg = receiver.only().msg().unwrap();
    assert!(msg.starts_with("killed by SIGTERM after "), "{msg}");
}

#[test]
fn a_timeout_kills_group_members_outliving_the_leader_and_exits_137() {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    let out = Crontap::with_url(&receiver.url())
        .args(["--timeout", "2s", "--kill-after", "1s"])
        .args(["--", "sh", "-c", &stubborn_member(&pid_file)])
        .run();
    assert_eq!(out.code, 137, "{}", out.stderr);
    assert!(!alive(&read_pid(&pid_file)));
    let msg = receiver.only().msg().unwrap();
    assert!(
        msg.starts_with("timed out after 2s (sent SIGTERM, then SIGKILL after 1s)"),
        "{msg}"
    );
}

/// A member that ends on SIGTERM by itself, a moment after its leader, is waited for, not
/// killed: the run ends when the group is empty, long before `--kill-after`.
#[test]
fn group_members_ending_on_sigterm_are_waited_for_not_killed() {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    let script = format!(
        "sh -c 'trap \"sleep 0.3; exit 0\" TERM; echo $$ > {}; echo ready; \
         while :; do sleep 0.1; done'; echo after",
        pid_file.display()
    );
    let mut run = Crontap::with_url(&receiver.url())
        .args(["--kill-after", "60s", "--", "sh", "-c", &script])
        .start();
    run.wait_for("ready");
    run.signal(Signal::SIGTERM);
    let out = run.finish();
    assert_eq!(out.code, 128 + 15, "{}", out.stderr);
    assert!(!alive(&read_pid(&pid_file)));
    assert!(
        out.elapsed < Duration::from_secs(30),
        "waited {:?} for a group that had emptied",
        out.elapsed
    );
}

/// SIGINT and SIGQUIT are stop requests with no SIGKILL of crontap-run's: a member that
/// ignores the signal while its shell dies of it is waited for until it ends by itself, so
/// the next `--no-overlap` run never starts beside it.
#[test]
fn a_stop_request_without_a_kill_waits_for_group_members_outliving_the_leader() {
    crate::harness::default_signals().unwrap();
    for (sig, name) in [(Signal::SIGINT, "INT"), (Signal::SIGQUIT, "QUIT")] {
        let receiver = Receiver::start();
        let dir = tempfile::tempdir().unwrap();
        let (pid_file, done) = (dir.path().join("pid"), dir.path().join("done"));
        let state = dir.path().join("state");
        // The leader is a `sleep` that dies of the signal at once; the member, started
        // before it, ignores the signal, lets go of the output pipes (so that waiting for
        // the output does not wait for it) and ends two seconds later.
        let script = format!(
            "sh -c 'trap \"\" {name}; echo $$ > {}; echo ready; exec >/dev/null 2>&1; \
             sleep 2; touch {}' & exec sleep 30",
            pid_file.display(),
            done.display()
        );
        let mut run = stateful(&receiver, &state)
            .args([
                "--no-overlap",
                "--job",
                "nightly",
                "--",
                "sh",
                "-c",
                &script,
            ])
            .start();
        run.wait_for("ready");
        run.signal(sig);
        let out = run.finish();
        assert_eq!(out.code, 128 + sig as i32, "{sig}: {}", out.stderr);
        assert!(
            done.exists() && !alive(&read_pid(&pid_file)),
            "{sig}: crontap-run exited while a member of the job's group still ran"
        );
        let msg = receiver.only().msg().unwrap();
        assert!(msg.starts_with(&format!("killed by {sig} after ")), "{msg}");
    }
}
