//! What several of the scrubber's test files share: reporting a table's failed rows, and
//! timing a scrub. Each test file is a binary of its own and uses part of it.
#![allow(dead_code)]

use std::time::{Duration, Instant};

use crontap_scrub::Scrubber;

/// Fails with every failed row of a table at once (each a description that starts with a
/// line break), or passes if there are none.
pub fn assert_no_row_failed(failed: &[String]) {
    assert!(
        failed.is_empty(),
        "{} rows failed:{}",
        failed.len(),
        failed.concat()
    );
}

/// The fastest of `runs` scrubs of `text`.
pub fn fastest(scrubber: &Scrubber, text: &str, runs: usize) -> Duration {
    (0..runs)
        .map(|_| {
            let start = Instant::now();
            std::hint::black_box(scrubber.scrub(std::hint::black_box(text)));
            start.elapsed()
        })
        .min()
        .unwrap_or_default()
}
