//! A fleet starting on the hour: 200 crontap-runs at once against one state server, 100
//! `--once-per` keys each started twice and 50 `--no-overlap` jobs. Every key runs exactly
//! once, every job runs, and no run exits 125 for want of a connection.

#![cfg(any(feature = "postgres", feature = "redis"))]

use std::process::Stdio;

use crate::harness::{Crontap, Receiver};
use crate::state::ended;

pub fn fleet_at_the_hour(state_url: &str, secret: &str) {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let mut children = Vec::new();
    let mut spawn = |job: &str, args: &[&str]| {
        let script = format!("echo '{job}' >> '{}'; sleep 0.5", log.display());
        let child = Crontap::with_url(&receiver.url())
            .arg("--state-dir")
            .arg(dir.path().join(format!("host-{}", children.len())))
            // A lease longer than the whole test: 200 hosts queue for 30 connections for
            // up to a minute, and a host whose renewals and completion wait that long for a
            // connection would rightly lose a 60 s lease and let the key run again.
            .args([
                "--state-url",
                state_url,
                "--state-timeout",
                "120s",
                "--state-lease",
                "10m",
                "--job",
                job,
            ])
            .args(args)
            .args(["--timeout", "120s", "--", "sh", "-c", &script])
            .spawn(Stdio::null(), Stdio::piped());
        children.push(child);
    };
    for j in 0..50 {
        spawn(&format!("lock-{j}"), &["--no-overlap"]);
    }
    for k in 0..100 {
        for _ in 0..2 {
            spawn(&format!("key-{k}"), &["--once-per", "1d"]);
        }
    }
    let results: Vec<(i32, String)> = children.iter_mut().map(ended).collect();
    for (code, stderr) in &results {
        assert!(!stderr.contains(secret), "the password leaked: {stderr}");
        assert_eq!(*code, 0, "{stderr}");
    }
    let text = std::fs::read_to_string(&log).unwrap();
    for k in 0..100 {
        let runs = text.lines().filter(|l| *l == format!("key-{k}")).count();
        assert_eq!(runs, 1, "key-{k} ran {runs} times");
    }
    for j in 0..50 {
        assert!(
            text.lines().any(|l| l == format!("lock-{j}")),
            "lock-{j} never ran"
        );
    }
}
