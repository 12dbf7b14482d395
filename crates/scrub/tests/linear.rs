//! The scrubber's work grows with the text, whatever the text: for every delimiter and
//! prefix a rule keys on, a text of it repeated at [`SMALL`] and at [`LARGE`] bytes (eight
//! times as much), as one line and as many, takes at most [`MAX_RATIO`] times as long at
//! the larger size (8 if linear, 64 if quadratic; the ratio allows for a larger text
//! needing more of the scrubber's capped passes than the smaller, and for caches the
//! smaller fits in). Both sizes are timed in the same run, several times each, and the
//! fastest of each compared, so a fast or a loaded machine moves both alike; no time is
//! compared with a fixed bound. (Sizes of 16 and 128 KiB keep the whole test to seconds:
//! a rule that rescans the rest of its line per match is already 64 times slower at the
//! larger. At 64 KiB and 1 MiB, one scrub of each unit's 1 MiB texts alone took about a
//! minute on the loaded 2-core machine of 2026-12-08, so those sizes are the bench's:
//! `cargo bench -p crontap-scrub -- mib` times 1 MiB of every unit, both ways.)
//!
//! The units (`units`, shared with the bench) are written there, not taken from the rules.

use std::time::Duration;

use crontap_scrub::Scrubber;

mod units;

use units::{UNITS, text};

mod support;

const SMALL: usize = 16 * 1024;
const LARGE: usize = 128 * 1024;
/// The most the larger text may take, in times the smaller: linear is 8, quadratic 64.
const MAX_RATIO: u32 = 32;
/// A larger text scrubbed faster than this is linear enough: its time is mostly noise.
const TOO_FAST: Duration = Duration::from_millis(2);
/// Timed runs of the smaller and of the larger text; the fastest of each counts. (The
/// larger is the one that costs, and twice is enough against a pause: a ratio of 32
/// leaves four times linear's 8.)
const RUNS: (usize, usize) = (3, 2);

#[test]
fn work_grows_linearly_for_every_delimiter_and_prefix() {
    // A known secret too, so the removal pass's automaton is built and runs.
    let scrubber = Scrubber::new(vec!["Winter42harbor$".to_owned()], Vec::new());
    let mut superlinear = Vec::new();
    for unit in UNITS {
        for many_lines in [false, true] {
            let small = support::fastest(&scrubber, &text(unit, SMALL, many_lines), RUNS.0);
            let large = support::fastest(&scrubber, &text(unit, LARGE, many_lines), RUNS.1);
            let ratio = large.as_secs_f64() / small.as_secs_f64().max(1e-6);
            eprintln!(
                "{unit:?} many lines {many_lines}: {:.1} ms, {:.1} ms, ratio {ratio:.1}",
                small.as_secs_f64() * 1e3,
                large.as_secs_f64() * 1e3
            );
            // Texts too fast to time are linear enough: a millisecond's noise is no ratio.
            if large > TOO_FAST && ratio > f64::from(MAX_RATIO) {
                superlinear.push(format!("{unit:?} (many lines: {many_lines}): {ratio:.0}"));
            }
        }
    }
    assert!(
        superlinear.is_empty(),
        "work grows faster than the text: {superlinear:?}"
    );
}

#[test]
fn many_learned_values_are_found_in_one_pass() {
    // Two hundred secrets taught by the text itself, then a long text that holds them
    // bare: the automaton's work must not grow with their number times the text.
    let values: Vec<String> = (0..200).map(|i| format!("Vq{i:03}xZ8rT2wLm")).collect();
    let teach: String = values.iter().map(|v| format!("password={v}\n")).collect();
    let bare = |size: usize| {
        let mut out = teach.clone();
        let mut i = 0;
        while out.len() < size {
            out.push_str(&format!("seen {} again\n", values[i % values.len()]));
            i += 1;
        }
        out
    };
    let scrubber = Scrubber::new(Vec::new(), Vec::new());
    let (small, large) = (bare(SMALL), bare(LARGE));
    let out = scrubber.scrub(&large);
    assert!(
        !values.iter().any(|v| out.contains(v.as_str())),
        "a value stayed"
    );
    let (t_small, t_large) = (
        support::fastest(&scrubber, &small, RUNS.0),
        support::fastest(&scrubber, &large, RUNS.1),
    );
    let ratio = t_large.as_secs_f64() / t_small.as_secs_f64().max(1e-6);
    eprintln!("200 learned values: {t_small:?}, {t_large:?}, ratio {ratio:.1}");
    assert!(ratio < f64::from(MAX_RATIO), "ratio {ratio:.1}");
}
