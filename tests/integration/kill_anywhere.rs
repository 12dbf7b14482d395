//! crontap-run SIGKILLed at random moments (claiming, running, recording, releasing), many
//! times over, for any store. Afterwards, and all along:
//! - never two commands of one job at once;
//! - never a key left blocking for longer than one lease;
//! - never a key that the store recorded as succeeded run again in its period.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::harness::{Crontap, Receiver};

/// Runs `rounds` rounds against the store that `store_args` name (`--state-dir …` or
/// `--state-url …`), leases being `lease` long (zero for the file store).
pub fn kill_anywhere(store_args: &[String], lease: Duration, rounds: usize) {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let running = dir.path().join("running");
    let log = dir.path().join("log");
    let mut rng = fastrand::Rng::with_seed(0x5eed);
    // How long one whole run takes here, so the kills can land anywhere in it.
    let started = Instant::now();
    let warm = Crontap::with_url(&receiver.url())
        .args(store_args)
        .args(["--job", "warm", "--no-overlap", "--idempotency-key", "warm"])
        .args(["--", "sleep", "0.1"])
        .run();
    assert_eq!(warm.code, 0, "{}", warm.stderr);
    let whole = started.elapsed().as_micros() as u64;
    for round in 0..rounds {
        let key = format!("k{}", round % 16);
        // The command notes an overlap if the pid in `running` is a live process, then
        // claims it, works a moment, and lets go.
        let script = format!(
            "p=$(cat '{running}' 2>/dev/null); \
             if [ -n \"$p\" ] && s=$(sed 's/.*) //' /proc/$p/stat 2>/dev/null | cut -c1) && \
                [ -n \"$s\" ] && [ \"$s\" != Z ]; then echo \"OVERLAP {key}\" >> '{log}'; fi; \
             echo $$ > '{running}'; sleep 0.$((RANDOM % 2)); \
             echo \"ran {key}\" >> '{log}'; rm -f '{running}'",
            running = running.display(),
            log = log.display(),
        );
        let before = ran_count(&log, &key);
        let done_before = recorded_done(&receiver, store_args, &key);
        let mut child = Crontap::with_url(&receiver.url())
            .args(store_args)
            .args(["--job", "j", "--no-overlap", "--idempotency-key", &key])
            .args(["--", "bash", "-c", &script])
            .spawn(Stdio::null(), Stdio::null());
        std::thread::sleep(Duration::from_micros(rng.u64(0..whole)));
        let _ = child.kill();
        let _ = child.wait();
        if done_before {
            assert_eq!(
                ran_count(&log, &key),
                before,
                "round {round}: {key} was recorded as succeeded and ran again"
            );
        }
    }
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(!text.contains("OVERLAP"), "{text}");
    // The kills landed at different moments: some commands ran to their end, some not.
    let ran = text.lines().filter(|l| l.starts_with("ran ")).count();
    eprintln!("kill anywhere: {ran} of {rounds} commands ran to their end");
    assert!(
        0 < ran && ran < rounds,
        "{ran} of {rounds} ran to their end"
    );

    // Nothing blocks for longer than one lease: after it, every key that is not done runs.
    std::thread::sleep(lease + Duration::from_millis(500));
    let started = Instant::now();
    for k in 0..16 {
        let key = format!("k{k}");
        let done = recorded_done(&receiver, store_args, &key);
        let out = Crontap::with_url(&receiver.url())
            .args(store_args)
            .args([
                "--job",
                "j",
                "--no-overlap",
                "--idempotency-key",
                &key,
                "--",
            ])
            .args([
                "sh",
                "-c",
                &format!("echo 'final {key}' >> '{}'", log.display()),
            ])
            .run();
        assert_eq!(out.code, 0, "{}", out.stderr);
        let ran = std::fs::read_to_string(&log)
            .unwrap_or_default()
            .contains(&format!("final {key}"));
        assert_eq!(ran, !done, "{key}: done {done}, ran {ran}: {}", out.stderr);
    }
    assert!(started.elapsed() < Duration::from_secs(60));
}

/// How often the command of `key` has run to its end.
fn ran_count(log: &Path, key: &str) -> usize {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter(|l| *l == format!("ran {key}"))
        .count()
}

/// Whether the store has `key` recorded as succeeded, asked with a dry run (which takes
/// nothing).
fn recorded_done(receiver: &Receiver, store_args: &[String], key: &str) -> bool {
    let out = Crontap::with_url(&receiver.url())
        .args(store_args)
        .args([
            "--dry-run",
            "--job",
            "j",
            "--idempotency-key",
            key,
            "--",
            "true",
        ])
        .run();
    assert_eq!(out.code, 0, "{}", out.stderr);
    out.stderr.contains("already succeeded")
}

#[test]
fn the_file_store_survives_kills_anywhere() {
    let dir = tempfile::tempdir().unwrap();
    let args = vec![
        "--state-dir".to_owned(),
        dir.path().join("state").display().to_string(),
    ];
    kill_anywhere(&args, Duration::ZERO, 200);
}
