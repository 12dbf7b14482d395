//! Fuzzes the scrubber: arbitrary bytes, read as UTF-8 with invalid sequences replaced (as
//! crontap-run reads a job's output), through `Scrubber::scrub`. It must never panic, and
//! scrubbing what it gave must give the same text again.
//!
//! Run from `crates/scrub` with the dictionary `cargo xtask formats` writes from the token
//! format rows: `cargo fuzz run scrub -- -dict=fuzz/formats.dict`.

#![no_main]

use std::sync::LazyLock;

use crontap_scrub::Scrubber;
use libfuzzer_sys::fuzz_target;

/// One scrubber for every input, with a known value, as a run has.
static SCRUBBER: LazyLock<Scrubber> =
    LazyLock::new(|| Scrubber::new(vec!["fuzz-heartbeat-token".to_owned()], Vec::new()));

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let once = SCRUBBER.scrub(&text);
    assert!(!once.contains("fuzz-heartbeat-token"), "{once:?}");
    assert_eq!(SCRUBBER.scrub(&once), once, "scrubbing is not idempotent");
});
