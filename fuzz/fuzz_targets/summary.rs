//! Fuzzes the failure summary builder: arbitrary stdout and stderr tails through scrubbing,
//! trace collapsing and the bound. The summary must never panic, never exceed the bound,
//! contain no control characters or the known secret; scrubbing the input twice must give
//! what scrubbing it once gave.

#![no_main]

use std::time::Duration;

use crontap_run::run::outcome::Outcome;
use crontap_scrub::Scrubber;
use crontap_run::report::summary::failure_message;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&max, rest)) = data.split_first() else { return };
    let max = 32 + usize::from(max) * 8;
    let split = rest.len() / 3;
    let (stdout, stderr) = rest.split_at(split);
    let scrubber = Scrubber::new(vec!["fuzz-heartbeat-token".to_owned()], Vec::new());
    let msg = failure_message(&Outcome::Exited(1), Duration::from_millis(1500), stdout, stderr, &scrubber, max);
    assert!(msg.len() <= max, "{} > {max}", msg.len());
    assert!(!msg.chars().any(char::is_control), "{msg:?}");
    assert!(!msg.contains("fuzz-heartbeat-token"));
    let text = String::from_utf8_lossy(rest);
    let once = scrubber.scrub(&text);
    assert_eq!(scrubber.scrub(&once), once, "scrubbing is not idempotent");
});
