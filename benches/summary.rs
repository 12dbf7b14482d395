//! Time to scrub and summarise a 64 KiB stderr tail, the failure path's main cost.
//!
//! Run with `cargo bench --bench summary`. Prints the median and the spread of repeated
//! runs over tails of ordinary log lines, log lines dense with secrets and personal data,
//! pathological long lines (a PATH, `a=` repeated: once quadratic), and a long Java stack
//! trace. The patterns are compiled once, during the very first
//! run, which is shown separately.

use std::time::{Duration, Instant};

use crontap_run::report::summary::failure_message;
use crontap_run::run::outcome::Outcome;
use crontap_scrub::Scrubber;

const TAIL: usize = 64 * 1024;

fn fill(line: impl Fn(usize) -> String) -> Vec<u8> {
    let mut out = Vec::with_capacity(TAIL + 256);
    let mut i = 0;
    while out.len() < TAIL {
        out.extend_from_slice(line(i).as_bytes());
        out.push(b'\n');
        i += 1;
    }
    out.truncate(TAIL);
    out
}

fn main() {
    let scrubber = Scrubber::new(
        vec!["bench-heartbeat-token".to_owned()],
        std::env::vars_os(),
    );
    let tails = [
        (
            "plain log",
            fill(|i| {
                format!(
                    "2026-11-29T14:05:{:02}.123Z INFO worker-{} processed batch {i} of 20000 in 12ms",
                    i % 60,
                    i % 8
                )
            }),
        ),
        (
            "secrets and personal data",
            fill(|i| {
                format!(
                    "req {i}: postgres://app:pw{i}@db/x Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJlc2lnbmF0dXJl password=hunter{i} mail jane{i}@example.com from 8.8.{}.{}",
                    i % 200,
                    i % 250
                )
            }),
        ),
        (
            "long PATH-like lines",
            fill(|i| {
                format!(
                    "PATH={}",
                    (0..400)
                        .map(|j| format!("/opt/tool{i}x{j}/bin"))
                        .collect::<Vec<_>>()
                        .join(":")
                )
            }),
        ),
        ("`a=` repeated", "a=".repeat(TAIL / 2).into_bytes()),
        (
            "Java stack trace",
            fill(|i| {
                if i == 0 {
                    "Exception in thread \"main\" java.lang.IllegalStateException: boom".to_owned()
                } else {
                    format!("\tat com.example.layer{i}.Service.call(Service.java:{i})")
                }
            }),
        ),
    ];
    println!(
        "scrub and summarise a {} KiB stderr tail (msg-max 256)",
        TAIL / 1024
    );
    let summarise = |tail: &[u8]| {
        failure_message(
            &Outcome::Exited(1),
            Duration::from_secs(1),
            b"",
            tail,
            &scrubber,
            256,
        )
    };
    for (name, tail) in &tails {
        let first = Instant::now();
        let msg = summarise(tail);
        let first = first.elapsed();
        let mut runs: Vec<Duration> = (0..30)
            .map(|_| {
                let start = Instant::now();
                std::hint::black_box(summarise(tail));
                start.elapsed()
            })
            .collect();
        runs.sort();
        println!(
            "  {name:28} median {:7.2} ms  (min {:.2}, max {:.2}; first run {:.2} ms)",
            ms(runs[runs.len() / 2]),
            ms(runs[0]),
            ms(runs[runs.len() - 1]),
            ms(first)
        );
        println!("    -> {msg}");
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
