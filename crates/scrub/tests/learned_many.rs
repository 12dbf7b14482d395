//! Texts that teach many values: a log of `password=<random>` lines teaches one value a
//! line, and each learned value must still go wherever else it stands, in time that grows
//! with the text alone, however many values it teaches (DESIGN.md, "The text, not the
//! line": one automaton finds every learned value in one pass).

use crontap_scrub::Scrubber;

mod support;

const SMALL: usize = 16 * 1024;
const LARGE: usize = 128 * 1024;
/// The most the larger text may take, in times the smaller: linear is 8, the values times
/// the text 64.
const MAX_RATIO: f64 = 32.0;
/// Timed runs of the smaller and of the larger text; the fastest of each counts.
const RUNS: (usize, usize) = (3, 2);

/// `count` lines that each teach a fresh random value (16 hex digits).
fn teaching_lines(count: usize, seed: u64) -> Vec<String> {
    let mut rng = fastrand::Rng::with_seed(seed);
    (0..count)
        .map(|i| {
            let hex: String = (0..16)
                .map(|_| char::from(b"0123456789abcdef"[rng.usize(..16)]))
                .collect();
            format!("password={hex} then {i}")
        })
        .collect()
}

/// Teaching lines up to `size` bytes, with a learned word taught in the middle and seen
/// bare at the end.
fn text(size: usize) -> String {
    let lines = teaching_lines(size / 30, 43);
    let (head, tail) = lines.split_at(lines.len() / 2);
    let mut out = head.join("\n");
    out.push_str("\nlogin: password=Copper51harbor$\n");
    out.push_str(&tail.join("\n"));
    out.push_str("\nerror: retrying as Copper51harbor$ failed\n");
    out
}

#[test]
fn work_grows_with_the_text_when_the_values_grow_with_it() {
    let scrubber = Scrubber::new(Vec::new(), Vec::new());
    let (small, large) = (text(SMALL), text(LARGE));
    let t_small = support::fastest(&scrubber, &small, RUNS.0);
    let t_large = support::fastest(&scrubber, &large, RUNS.1);
    let ratio = t_large.as_secs_f64() / t_small.as_secs_f64().max(1e-6);
    eprintln!(
        "{} and {} learned values: {t_small:?}, {t_large:?}, ratio {ratio:.1}",
        small.lines().count(),
        large.lines().count()
    );
    assert!(ratio < MAX_RATIO, "ratio {ratio:.1}");
}

#[test]
fn a_learned_value_goes_among_fifteen_thousand() {
    let lines = teaching_lines(15_000, 5);
    let (head, tail) = lines.split_at(7_500);
    let mut text = head.join("\n");
    text.push_str("\nlogin: password=Copper51harbor$\n");
    text.push_str(&tail.join("\n"));
    text.push_str("\nerror: retrying as Copper51harbor$ failed\n");

    let mut want: Vec<String> = (0..7_500)
        .map(|i| format!("password=[REDACTED] then {i}"))
        .collect();
    want.push("login: password=[REDACTED]".to_owned());
    want.extend((7_500..15_000).map(|i| format!("password=[REDACTED] then {i}")));
    want.push("error: retrying as [REDACTED] failed".to_owned());
    let want = want.join("\n") + "\n";

    let out = Scrubber::new(Vec::new(), Vec::new()).scrub(&text);
    assert!(!out.contains("Copper51harbor"), "the learned word stayed");
    assert!(out == want, "the text differs from what was wanted");
}
