//! The file store when the world misbehaves: records that cannot be read, and state
//! directories that are full, read-only or not directories at all.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::harness::{Receiver, SECRET, Tmpfs};
use crate::state::{entries_under, stateful};

/// The one key record under `state`.
fn key_record(state: &Path) -> PathBuf {
    let records: Vec<PathBuf> = entries_under(&state.join("keys"))
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    assert_eq!(records.len(), 1, "{records:?}");
    records.into_iter().next().unwrap()
}

/// Item 3: a key record that cannot be read (empty, `{}`, cut short, not JSON) never
/// blocks the job: the next run moves it aside, warns once, and runs as if there were none.
#[test]
fn an_unreadable_record_is_moved_aside_and_the_job_runs() {
    for junk in ["", "{}", "{\"key\":\"j9:", "not json at all", "\u{0}\u{0}"] {
        let receiver = Receiver::start();
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state");
        let once = ["--once-per", "1h", "--job", "j9"];
        assert_eq!(stateful(&receiver, &state).args(once).sh("true").code, 0);
        let record = key_record(&state);
        std::fs::write(&record, junk).unwrap();

        let marker = dir.path().join("ran");
        let next = stateful(&receiver, &state)
            .args(once)
            .args(["--", "touch"])
            .arg(&marker)
            .run();
        assert_eq!(next.code, 0, "{junk:?}: {}", next.stderr);
        assert!(marker.exists(), "{junk:?}: the job did not run");
        assert_eq!(
            next.stderr.matches("could not be read").count(),
            1,
            "{}",
            next.stderr
        );
        let aside: Vec<PathBuf> = entries_under(&state.join("keys"))
            .into_iter()
            .filter(|p| p.to_string_lossy().contains(".json.corrupt-"))
            .collect();
        assert_eq!(aside.len(), 1, "{junk:?}");
        assert_eq!(std::fs::read(&aside[0]).unwrap(), junk.as_bytes());
        // The run recorded its success as usual: the period is done now.
        let again = stateful(&receiver, &state)
            .args(once)
            .args(["--", "false"])
            .run();
        assert_eq!(again.code, 0, "{}", again.stderr);
    }
}

/// Item 3: fields a newer crontap-run adds are ignored; a status it knows and this version
/// does not is treated as no record (docs/state.md, "State: locks, keys and history").
#[test]
fn a_record_from_a_newer_version_is_read_or_treated_as_none() {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let once = ["--once-per", "1h", "--job", "j9"];
    assert_eq!(stateful(&receiver, &state).args(once).sh("true").code, 0);
    let record = key_record(&state);
    let mut value: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&record).unwrap()).unwrap();
    value["added_later"] = serde_json::json!({"x": 1});
    std::fs::write(&record, value.to_string()).unwrap();
    let marker = dir.path().join("ran");
    let skipped = stateful(&receiver, &state)
        .args(once)
        .args(["--", "touch"])
        .arg(&marker)
        .run();
    assert_eq!(skipped.code, 0);
    assert!(
        !marker.exists(),
        "an extra field made the record unreadable"
    );

    value["status"] = serde_json::json!("archived");
    std::fs::write(&record, value.to_string()).unwrap();
    let ran = stateful(&receiver, &state)
        .args(once)
        .args(["--", "touch"])
        .arg(&marker)
        .run();
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    assert!(marker.exists(), "an unknown status blocked the job");
}

/// Item 4: a full state directory before the command is crontap-run's own error: exit 125,
/// one line, a fail ping naming the directory (never the URL), the command not run, and no
/// partial record left behind.
#[test]
fn a_full_state_directory_before_the_command_is_125_and_a_fail_ping() {
    if !crate::namespace::rerun_as_root(
        module_path!(),
        "a_full_state_directory_before_the_command_is_125_and_a_fail_ping",
    ) {
        return;
    }
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let disk = Tmpfs::mount(&state, "64k");
    disk.fill();
    let marker = dir.path().join("ran");
    let out = stateful(&receiver, &state)
        .args(["--once-per", "1h", "--job", "full", "--", "touch"])
        .arg(&marker)
        .run();
    assert_eq!(out.code, 125, "{}", out.stderr);
    assert!(!marker.exists());
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    let msg = receiver.only().msg().unwrap();
    assert!(msg.starts_with("not run: the state directory"), "{msg}");
    assert!(msg.contains(&state.display().to_string()), "{msg}");
    assert!(!msg.contains(SECRET));
    let left: Vec<PathBuf> = entries_under(&state)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "json" || e == "tmp"))
        .collect();
    assert!(left.is_empty(), "partial records left: {left:?}");
}

/// Item 4: once the command has run, a state directory that filled up meanwhile changes
/// nothing about its status; one error line says what could not be recorded.
#[test]
fn a_state_directory_that_fills_while_the_command_runs_keeps_its_status() {
    if !crate::namespace::rerun_as_root(
        module_path!(),
        "a_state_directory_that_fills_while_the_command_runs_keeps_its_status",
    ) {
        return;
    }
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let _disk = Tmpfs::mount(&state, "256k");
    let filler = state.join("filler");
    let script = format!(
        "dd if=/dev/zero of='{}' bs=4k 2>/dev/null; exit 3",
        filler.display()
    );
    let out = stateful(&receiver, &state)
        .args([
            "--once-per",
            "1h",
            "--job",
            "fills",
            "--",
            "sh",
            "-c",
            &script,
        ])
        .run();
    assert_eq!(out.code, 3, "{}", out.stderr);
    let errors: Vec<&str> = out.stderr.lines().collect();
    assert!(
        !errors.is_empty(),
        "nothing said what could not be recorded"
    );
    assert!(
        errors.iter().all(|l| l.contains("cannot record")),
        "{}",
        out.stderr
    );
    let msg = receiver.only().msg().unwrap();
    assert!(msg.starts_with("exit 3 after "), "{msg}");
    let left: Vec<PathBuf> = entries_under(&state)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "tmp"))
        .collect();
    assert!(left.is_empty(), "temporary files left: {left:?}");
}

/// Item 4: a read-only state directory, or a file where the directory should be, is
/// crontap-run's own error before the command.
#[test]
fn a_read_only_or_wrong_state_directory_is_125_and_a_fail_ping() {
    if !crate::namespace::rerun_as_root(
        module_path!(),
        "a_read_only_or_wrong_state_directory_is_125_and_a_fail_ping",
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let read_only = dir.path().join("ro");
    let _disk = Tmpfs::mount(&read_only, "64k");
    let status = Command::new("mount")
        // The mount made read-only, as `remount,ro` makes the file system: both give EROFS.
        // Only the first works for any account (the second is refused in a user namespace
        // that does not map the account the file system's options name).
        .args(["-o", "remount,bind,ro"])
        .arg(&read_only)
        .status()
        .unwrap();
    assert!(status.success());
    let a_file = dir.path().join("file");
    std::fs::write(&a_file, "").unwrap();
    for state in [read_only.clone(), a_file] {
        let receiver = Receiver::start();
        let marker = dir.path().join("ran");
        let out = stateful(&receiver, &state)
            .args(["--no-overlap", "--job", "ro", "--", "touch"])
            .arg(&marker)
            .run();
        assert_eq!(out.code, 125, "{}: {}", state.display(), out.stderr);
        assert!(!marker.exists());
        let msg = receiver.only().msg().unwrap();
        assert!(msg.starts_with("not run: the state directory"), "{msg}");
    }
}

/// Item 2: every run that holds a lock or key gets `CRONTAP_FENCING_TOKEN`, larger than any
/// earlier run's of the job in that store; a counter that cannot be read does not make it
/// go back.
#[test]
fn fencing_tokens_only_grow() {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let token = |args: &[&str]| -> u64 {
        let out = stateful(&receiver, &state)
            .args(args)
            .args(["--", "sh", "-c", "echo \"$CRONTAP_FENCING_TOKEN\""])
            .run();
        assert_eq!(out.code, 0, "{}", out.stderr);
        out.stdout
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{:?}", out.stdout))
    };
    let mut tokens = vec![
        token(&["--no-overlap", "--job", "fenced"]),
        token(&["--no-overlap", "--job", "fenced"]),
        token(&["--idempotency-key", "k1", "--job", "fenced"]),
        token(&["--no-overlap", "--idempotency-key", "k2", "--job", "fenced"]),
    ];
    std::fs::write(state.join("fencing/fenced.count"), "garbage").unwrap();
    tokens.push(token(&["--no-overlap", "--job", "fenced"]));
    tokens.push(token(&["--no-overlap", "--job", "fenced"]));
    assert!(tokens.windows(2).all(|w| w[0] < w[1]), "{tokens:?}");
    assert_eq!(tokens[0], 1, "{tokens:?}");

    // A run without state has none.
    let plain =
        crate::harness::Crontap::with_url(&receiver.url()).sh("echo \"[$CRONTAP_FENCING_TOKEN]\"");
    assert_eq!(plain.stdout, "[]\n");
}

/// A fencing counter at the largest value it can hold, or past it, leaves no larger token;
/// counting one a claim from 0 or from the time never gets there, so it is as damaged as a
/// counter that is no number, and never stops the job (DESIGN: a record that cannot be
/// read never blocks a job for good): the next run moves it aside with one warning naming
/// it, runs the command with a token counted on from the time in milliseconds and pings
/// success, and the run after it gets the next token.
#[test]
fn a_fencing_counter_at_its_limit_is_moved_aside_and_the_job_runs() {
    let max = u64::MAX.to_string();
    for planted in [max.as_str(), "18446744073709551616"] {
        let receiver = Receiver::start();
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state");
        let run = || {
            stateful(&receiver, &state)
                .args(["--no-overlap", "--job", "fenced"])
                .args(["--", "sh", "-c", "echo \"$CRONTAP_FENCING_TOKEN\""])
                .run()
        };
        assert_eq!(run().stdout, "1\n", "{planted}");
        let counter = state.join("fencing/fenced.count");
        std::fs::write(&counter, format!("{planted}\n")).unwrap();

        let before = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as u64;
        let out = run();
        assert_eq!(out.code, 0, "{planted}: {}", out.stderr);
        let token: u64 = out.stdout.trim().parse().unwrap();
        assert!(before <= token && token < u64::MAX, "{planted}: {token}");
        let warnings: Vec<&str> = out
            .stderr
            .lines()
            .filter(|l| l.contains("warning"))
            .collect();
        assert_eq!(warnings.len(), 1, "{planted}: {}", out.stderr);
        assert!(
            warnings[0].contains(&format!("{}", counter.display())),
            "{planted}: {}",
            out.stderr
        );
        let aside: Vec<String> = std::fs::read_dir(state.join("fencing"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| name.starts_with("fenced.count.corrupt-"))
            .collect();
        assert_eq!(aside.len(), 1, "{planted}: {aside:?}");
        let moved = std::fs::read_to_string(state.join("fencing").join(&aside[0])).unwrap();
        assert_eq!(moved, format!("{planted}\n"));

        let next = run();
        assert_eq!(next.code, 0, "{planted}: {}", next.stderr);
        assert_eq!(next.stdout, format!("{}\n", token + 1), "{planted}");
        let msgs: Vec<Option<String>> = receiver.received().iter().map(|r| r.msg()).collect();
        assert_eq!(
            msgs,
            [None, None, None],
            "{planted}: every run pinged success"
        );
    }
}

/// A key record whose times no crontap-run can have written (past the year 9999, up to the
/// largest number JSON holds) is as unreadable as a damaged one: a dry run says what a run
/// would do with it and runs the command, a run moves it aside; neither panics.
#[test]
fn a_record_with_impossible_times_is_moved_aside_and_a_dry_run_says_so() {
    for (field, number) in [
        ("updated", u64::MAX),
        ("updated", 253_402_300_800),
        ("claimed", u64::MAX),
    ] {
        let receiver = Receiver::start();
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state");
        let once = ["--once-per", "1d", "--job", "j9"];
        assert_eq!(stateful(&receiver, &state).args(once).sh("true").code, 0);
        let record = key_record(&state);
        let mut value: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&record).unwrap()).unwrap();
        value[field] = serde_json::json!(number);
        let planted = value.to_string();
        std::fs::write(&record, &planted).unwrap();

        let marker = dir.path().join("ran");
        let dry = stateful(&receiver, &state)
            .arg("--dry-run")
            .args(once)
            .args(["--", "touch"])
            .arg(&marker)
            .run();
        let case = format!("{field}={number}");
        assert_eq!(dry.code, 0, "{case}: {}", dry.stderr);
        assert!(
            !dry.stderr.contains("internal error"),
            "{case}: {}",
            dry.stderr
        );
        assert_eq!(
            dry.stderr.matches("a run would move it aside").count(),
            1,
            "{case}: {}",
            dry.stderr
        );
        assert!(
            marker.exists(),
            "{case}: the dry run did not run the command"
        );
        assert_eq!(std::fs::read_to_string(&record).unwrap(), planted, "{case}");

        std::fs::remove_file(&marker).unwrap();
        let run = stateful(&receiver, &state)
            .args(once)
            .args(["--", "touch"])
            .arg(&marker)
            .run();
        assert_eq!(run.code, 0, "{case}: {}", run.stderr);
        assert!(marker.exists(), "{case}: the job did not run");
        assert_eq!(run.stderr.matches("could not be read").count(), 1, "{case}");
    }
}
