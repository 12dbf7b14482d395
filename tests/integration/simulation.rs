//! A simulation of whole runs, seeded and reproducible from its seed (issue 35): each case
//! draws a job (exit status, death by any signal 1 … SIGRTMAX, output size and stream,
//! output holding the URL's token, ignoring SIGTERM, orphans), options (`--timeout`,
//! `--retries`, `--no-overlap`, `--once-per`, `--output on-failure`, `--protocol`,
//! `--success-exit`), an outside SIGTERM at a random moment and the endpoint's behaviour
//! (slow, errors then 200, resets), runs the real binary, and checks every promise together
//! ([`check`]).
//!
//! The suite runs [`CI_CASES`] cases from a fixed seed, covering every combination of
//! protocol, output mode and kind of stop. `SIM_SEED` (a number) and `SIM_CASES` change the
//! seed and the count, `SIM_JOBS` runs that many cases at once, and `SIM_CASE` runs the one
//! case a printed seed names; `bench/simulation.sh` runs thousands and prints how many held.
//! A case that once broke a promise stays in [`FOUND`].

mod case;
mod check;
mod front;
mod run;

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use case::COMBINATIONS;

/// Cases the suite runs (about two seconds each): one of every combination.
const CI_CASES: u64 = COMBINATIONS;
/// The suite's seed.
const CI_SEED: u64 = 0x5eed_0035;

#[test]
fn whole_runs_keep_their_promises() {
    crate::harness::default_signals().unwrap();
    let seeds: Vec<u64> = match number("SIM_CASE") {
        Some(seed) => vec![seed],
        None => {
            let base = number("SIM_SEED").unwrap_or(CI_SEED);
            let cases = number("SIM_CASES").unwrap_or(CI_CASES);
            println!("simulation: seed {base}, {cases} cases");
            (0..cases).map(|i| case_seed(base, i)).collect()
        }
    };
    let jobs = number("SIM_JOBS").unwrap_or(1).max(1) as usize;
    simulate(&seeds, jobs);
}

/// Cases that broke a promise once, kept whatever the suite's seed: each with what it
/// found.
const FOUND: &[(u64, &str)] = &[
    (
        16_648_918_177_313_050_153,
        "issue 35's own: a Healthchecks start held on the wire past the ping timeout; with \
         the old start timing (dropped after one ping timeout) the end overtook it",
    ),
    (
        8_097_875_853_865_443_358,
        "a job that kills itself with signal 33 (glibc's own) between attempts, crontap-run \
         started by a program through glibc's posix_spawn, which leaves 32 and 33 ignored",
    ),
    (
        16_389_244_554_149_271_496,
        "a job that dies of the SIGTERM passed on in attempt 1 of 2: 'killed by SIGTERM'",
    ),
    (
        2_712_401_090_539_214_409,
        "a Healthchecks start held past the ping timeout, a stop between attempts: the start \
         given up after half the shutdown budget, with one line",
    ),
];

#[test]
fn cases_that_once_broke_a_promise() {
    crate::harness::default_signals().unwrap();
    let seeds: Vec<u64> = FOUND.iter().map(|(seed, _)| *seed).collect();
    simulate(&seeds, 1);
}

/// Runs the cases of `seeds`, `jobs` at a time; prints how many held, and fails naming
/// every case that did not, with its seed.
fn simulate(seeds: &[u64], jobs: usize) {
    let next = AtomicUsize::new(0);
    let broken = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| {
                while let Some(&seed) = seeds.get(next.fetch_add(1, Ordering::SeqCst)) {
                    let case = case::draw(seed);
                    let violations = run::run(&case);
                    if !violations.is_empty() {
                        eprintln!("simulation: case {seed} broke: {violations:#?}\n{case:#?}");
                        broken.lock().unwrap().push((seed, violations));
                    }
                }
            });
        }
    });
    let broken = broken.into_inner().unwrap();
    println!(
        "simulation: {} cases run, {} held, {} broke a promise",
        seeds.len(),
        seeds.len() - broken.len(),
        broken.len()
    );
    assert!(
        broken.is_empty(),
        "cases that broke a promise (rerun one with SIM_CASE=<seed>): {broken:#?}"
    );
}

/// The seed of case `i` from `base`: well mixed (splitmix64), with its remainder set so
/// that consecutive cases go through every combination.
fn case_seed(base: u64, i: u64) -> u64 {
    let mut z = base.wrapping_add(i.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    z - z % COMBINATIONS + i % COMBINATIONS
}

fn number(name: &str) -> Option<u64> {
    let value = std::env::var(name).ok()?;
    Some(
        value
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name} must be a number, not {value:?}")),
    )
}
