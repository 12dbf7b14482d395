//! crontap-run as root in directories other accounts can write: a state directory it must
//! accept, files moved aside in the same second, and the pruning of jobs not seen for 30
//! days. The tests where another account plants links and owns directories are in
//! `root/planted.rs` (the group `root-tests`).

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::time::{Duration, SystemTime};

use crontap_run::files::layout;

use crate::harness::{Crontap, Output, Receiver};

pub(crate) const JOB: &str = "planted";
pub(crate) const KEY: &str = "planted-key";

pub(crate) fn chmod(path: &Path, mode: u32) {
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
}

/// A run of crontap-run with `dir` given to `option` (`--state-dir`, `--metrics-dir`), then
/// `args`.
pub(crate) fn run_in(receiver: &Receiver, option: &str, dir: &Path, args: &[&str]) -> Output {
    Crontap::with_url(&receiver.url())
        .arg(option)
        .arg(dir)
        .args(args)
        .run()
}

#[test]
fn an_fsgroup_volume_and_a_new_directory_are_accepted() {
    let tmp = tempfile::tempdir().unwrap();
    // A Kubernetes volume with an fsGroup: root's, group-writable, setgid.
    let volume = tmp.path().join("volume");
    fs::create_dir(&volume).unwrap();
    chmod(&volume, 0o2775);
    let made = tmp.path().join("new/state");
    for dir in [&volume, &made] {
        let receiver = Receiver::start();
        let out = run_in(
            &receiver,
            "--state-dir",
            dir,
            &["--job", JOB, "--no-overlap", "--", "true"],
        );
        assert_eq!(out.code, 0, "{}: {out:?}", dir.display());
        assert!(!receiver.only().target.contains("/fail"));
    }
    assert_eq!(fs::metadata(&made).unwrap().mode() & 0o7777, 0o700);
    for sub in ["locks", "keys", "fencing", "history"] {
        let mode = fs::metadata(made.join(sub)).unwrap().mode() & 0o7777;
        assert_eq!(mode, 0o700, "{sub}");
    }
}

#[test]
fn two_records_moved_aside_are_both_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    let receiver = Receiver::start();
    let run = || {
        run_in(
            &receiver,
            "--state-dir",
            &state,
            &["--job", JOB, "--idempotency-key", KEY, "--", "false"],
        )
    };
    assert_eq!(run().code, 1);
    let record = state.join("keys").join(layout::key_record(KEY));
    let mut written = Vec::new();
    for n in 0..3 {
        let text = format!("damaged {n}");
        fs::write(&record, &text).unwrap();
        written.push(text);
        let out = run();
        assert_eq!(out.code, 1, "{out:?}");
        assert!(out.stderr.contains("could not be read"), "{out:?}");
    }
    let mut kept: Vec<String> = fs::read_dir(state.join("keys"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains(".corrupt-"))
        .map(|e| fs::read_to_string(e.path()).unwrap())
        .collect();
    kept.sort();
    assert_eq!(kept, written);
}

/// Sets a file's times to `days` days ago.
fn age(path: &Path, days: u64) {
    let then = SystemTime::now() - Duration::from_secs(days * 86_400);
    let file = fs::File::options().write(true).open(path).unwrap();
    file.set_times(fs::FileTimes::new().set_accessed(then).set_modified(then))
        .unwrap();
}

#[test]
fn files_of_jobs_not_seen_for_30_days_go_and_fencing_counters_stay() {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    let receiver = Receiver::start();
    let run = |job: &str| {
        run_in(
            &receiver,
            "--state-dir",
            &state,
            &["--job", job, "--no-overlap", "--", "true"],
        )
    };
    for job in ["gone", "recent"] {
        assert_eq!(run(job).code, 0);
    }
    let gone = [
        state.join("locks").join(layout::job_lock("gone")),
        state.join("history").join(layout::history("gone")),
    ];
    let fencing = state.join("fencing").join(layout::fencing_count("gone"));
    let fencing_lock = state.join("fencing").join(layout::fencing_lock("gone"));
    age(&fencing_lock, 31);
    let aside = state
        .join("keys")
        .join("0123.json.corrupt-20260101T000000Z");
    fs::write(&aside, "damaged long ago").unwrap();
    for path in gone.iter().chain([&fencing, &aside]) {
        age(path, 31);
    }
    let recent = [
        state.join("locks").join(layout::job_lock("recent")),
        state.join("history").join(layout::history("recent")),
    ];
    for path in &recent {
        age(path, 29);
    }
    assert_eq!(run("another").code, 0);
    for path in &gone {
        assert!(!path.exists(), "{} was kept", path.display());
    }
    assert!(!aside.exists(), "a record moved aside 31 days ago was kept");
    assert!(fencing.exists(), "a fencing counter was removed");
    assert!(
        !fencing_lock.exists(),
        "the fencing lock file of a job gone for 31 days was kept"
    );
    for path in &recent {
        assert!(path.exists(), "{} was removed", path.display());
    }
    // The job comes back: its tokens go on from where they were.
    let before: u64 = fs::read_to_string(&fencing)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_eq!(run("gone").code, 0);
    let after: u64 = fs::read_to_string(&fencing)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_eq!(after, before + 1);
}

#[test]
fn a_history_holds_at_most_a_thousand_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    let receiver = Receiver::start();
    let run = || {
        run_in(
            &receiver,
            "--state-dir",
            &state,
            &["--job", JOB, "--no-overlap", "--", "true"],
        )
    };
    assert_eq!(run().code, 0);
    let file = state.join("history").join(layout::history(JOB));
    let line = fs::read_to_string(&file).unwrap();
    // 1,200 runs of small lines: under any byte bound, over the count.
    fs::write(&file, line.repeat(1200)).unwrap();
    assert_eq!(run().code, 0);
    let text = fs::read_to_string(&file).unwrap();
    let lines = text.lines().count();
    assert!((2..=1000).contains(&lines), "{lines} lines");
    assert_ne!(
        text.lines().last().unwrap(),
        line.trim_end(),
        "the newest run is kept"
    );
}
