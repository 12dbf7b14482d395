//! Time to scrub a 64 KiB tail the way crontap-run's failure summary does (`last_line` in
//! `src/report/summary.rs`): [`Scrubber::scrub`], then [`collapse_traces`]. A tail is twice
//! crontap-run's own 32 KiB.
//!
//! Run with `cargo bench -p crontap-scrub` (the release profile); `cargo bench -p
//! crontap-scrub -- WORD` runs only the tails whose names contain WORD. For each tail it
//! prints the median and the spread of repeated runs, and the first call's time in a fresh
//! process of its own, which also compiles the patterns that tail reaches (patterns compile
//! on first use): first call minus median is about what compiling cost.
//!
//! The tails: ordinary log lines (also with one non-ASCII letter each), lines dense with
//! secrets and personal data, long PATH-like lines, a long Java stack trace, and the worst
//! cases found for the rules of 2026-12-02: prefixes of vendors' tokens without a token,
//! base64-ish words, quoted secret names, `a=` repeated (once quadratic), long lines of
//! numbers or of `key=`, which the rules of that day handle in time quadratic in the line,
//! and `mysql -p` repeated, where each pass over the text redacts one more value, so the
//! passes are as many as the values; and, for the credential forms of 2026-12-04 (each a
//! lexer of its own, `structure/forms`), a 64 KiB line of each form's cue repeated
//! (`IDENTIFIED BY `, `-p ` after a tool that takes it, `PASS `, Oracle logons after
//! `sqlplus`, argument lists, duplicate-key details, `SSHPASS=`, host names with `@`,
//! `AUTH LOGIN` lines), where a lexer that read each cue's line or value again would be
//! quadratic; and for those of 2026-12-05 (random tokens glued by `:`, `sshpass -p` with
//! several words, thin driver URLs, Go DSNs, URL passwords with blanks, `INSERT`s).
//!
//! A tail whose first run takes longer than [`BUDGET`] is run once only.
//!
//! Then 1 MiB of every unit of `tests/linear.rs` (`tests/units`: every delimiter and prefix a
//! rule keys on, `ab-` and `sk_` among them, once quadratic in `vendor_body`: 56 s for
//! 512 KiB), as one line and as many lines; the fastest of three runs, worst first.
//! `cargo bench -p crontap-scrub -- mib` runs only these, and `-- mib WORD` only the units
//! that contain WORD.

use std::hint::black_box;
use std::process::Command;
use std::time::{Duration, Instant};

use crontap_scrub::text::floor_char_boundary;
use crontap_scrub::{Scrubber, collapse_traces};

#[path = "../tests/units/mod.rs"]
mod units;

/// Bytes in a tail.
const TAIL: usize = 64 * 1024;
/// Runs per tail after a warm-up run, at most...
const RUNS: usize = 30;
/// ...and at least, unless the warm-up took longer than [`BUDGET`]: then it is the one run.
const MIN_RUNS: usize = 3;
/// Runs stop after this much time on one tail (once there are `MIN_RUNS`).
const BUDGET: Duration = Duration::from_secs(3);
/// A tail slower than this gets no fresh-process first call: compiling is lost in it.
const NO_FIRST_CALL: Duration = Duration::from_secs(1);
/// The bound the worst tail should stay within, release build.
const BOUND: Duration = Duration::from_millis(50);

/// Prefixes that vendors' tokens start with (the rows' triggers of 2026-12-02, the short
/// and the shared ones), each followed by text that is no token: every one is a place where
/// the rows' patterns are tried and fail.
const PREFIXES: &[&str] = &[
    "pat", "sk-", "sk_", "gl", "gh", "AC", "eyJ", "AAAA", "xox", "SK", "s.", "pk.", "key-", "api-",
    "md-", "AIza", "AKIA", "dp.", "cio", "00D", "1000.", "YC", "secret_", "access-",
];

/// A tail of `line(0)`, `line(1)`, … one a line, cut to [`TAIL`] bytes.
fn fill(line: impl Fn(usize) -> String) -> String {
    let mut out = String::with_capacity(TAIL + 4096);
    let mut i = 0;
    while out.len() < TAIL {
        out.push_str(&line(i));
        out.push('\n');
        i += 1;
    }
    out.truncate(floor_char_boundary(&out, TAIL));
    out
}

/// One line of `unit` repeated, [`TAIL`] bytes long.
fn one_line(unit: &str) -> String {
    let mut out = unit.repeat(TAIL / unit.len() + 1);
    out.truncate(TAIL);
    out
}

/// `prefix`, then `unit` repeated: one line [`TAIL`] bytes long.
fn one_line_after(prefix: &str, unit: &str) -> String {
    let mut out = prefix.to_owned();
    out.push_str(&unit.repeat(TAIL / unit.len() + 1));
    out.truncate(TAIL);
    out
}

/// `n` characters of an alphabet, spread by `seed`: random-looking, the same every run.
fn scatter(alphabet: &[u8], n: usize, seed: usize) -> String {
    (0..n)
        .map(|j| char::from(alphabet[(j * 7 + seed * 13 + j / 3) % alphabet.len()]))
        .collect()
}

/// Every tail, in the order they are printed.
fn tails() -> Vec<(&'static str, String)> {
    let mut tails = ordinary_tails();
    tails.extend(worst_cases_of_2026_12_02());
    tails.extend(form_cues_of_2026_12_04());
    tails.extend(urls_and_random_tokens());
    tails.extend(forms_of_2026_12_05());
    tails
}

/// Ordinary log lines (also with one non-ASCII letter each), lines dense with secrets and
/// personal data, long PATH-like lines, a long Java stack trace.
fn ordinary_tails() -> Vec<(&'static str, String)> {
    let plain = |i: usize| {
        format!(
            "2026-11-29T14:05:{:02}.123Z INFO worker-{} processed batch {i} of 20000 in 12ms",
            i % 60,
            i % 8
        )
    };
    vec![
        ("ordinary log lines", fill(plain)),
        (
            "ordinary log lines, one `é` each",
            fill(|i| format!("{} (café)", plain(i))),
        ),
        (
            "lines dense with secrets and personal data",
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
                let dirs: Vec<String> = (0..400).map(|j| format!("/opt/tool{i}x{j}/bin")).collect();
                format!("PATH={}", dirs.join(":"))
            }),
        ),
        (
            "a Java stack trace",
            fill(|i| {
                if i == 0 {
                    "Exception in thread \"main\" java.lang.IllegalStateException: boom".to_owned()
                } else {
                    format!("\tat com.example.layer{i}.Service.call(Service.java:{i})")
                }
            }),
        ),
    ]
}

/// The worst cases found for the rules of 2026-12-02.
fn worst_cases_of_2026_12_02() -> Vec<(&'static str, String)> {
    vec![
        (
            "token prefixes without a token",
            fill(|i| PREFIXES.iter().map(|p| format!("{p}{i} ")).collect()),
        ),
        (
            "base64-ish words (40 of 40 characters a line)",
            fill(|i| {
                let b62 = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
                let words: Vec<String> = (0..40).map(|k| scatter(b62, 40, i * 40 + k)).collect();
                words.join(" ")
            }),
        ),
        (
            "quoted secret names: `\"password\": \"` repeated",
            one_line("\"password\": \""),
        ),
        ("`a=` repeated (one line)", one_line("a=")),
        (
            "4-digit numbers, 800 a line",
            fill(|i| {
                let pids: Vec<String> = (0..800)
                    .map(|j| (1000 + (i * 7 + j) % 9000).to_string())
                    .collect();
                format!("pids: {}", pids.join(" "))
            }),
        ),
        ("`1234 ` repeated (one line)", one_line("1234 ")),
        ("`key=` repeated (one line)", one_line("key=")),
        (
            "`mysql -p` repeated, 20 a line",
            fill(|_| "mysql -p".repeat(20)),
        ),
        ("`mysql -p` repeated (one line)", one_line("mysql -p")),
    ]
}

/// A 64 KiB line of each credential form's cue (2026-12-04), where a lexer that read each
/// cue's line or value again would be quadratic.
fn form_cues_of_2026_12_04() -> Vec<(&'static str, String)> {
    vec![
        (
            "`IDENTIFIED BY ` repeated (one line)",
            one_line("IDENTIFIED BY "),
        ),
        (
            "`IDENTIFIED BY '` repeated (one line)",
            one_line("IDENTIFIED BY '"),
        ),
        (
            "`-p ` repeated after sshpass (one line)",
            one_line_after("+ sshpass ", "-p "),
        ),
        (
            "`-p ` repeated after mysql (one line)",
            one_line_after("+ mysql ", "-p "),
        ),
        ("`PASS ` repeated (one line)", one_line("PASS ")),
        (
            "`a/b@c ` after sqlplus (one line)",
            one_line_after("sqlplus ", "a/b@c "),
        ),
        (
            "`['zip', '-P', ` repeated (one line)",
            one_line("['zip', '-P', "),
        ),
        (
            "`Key (api_token)=(` repeated (one line)",
            one_line("Key (api_token)=("),
        ),
        ("`SSHPASS=` repeated (one line)", one_line("SSHPASS=")),
        (
            "`host name \"a@` repeated (one line)",
            one_line("host name \"a@"),
        ),
        ("`AUTH LOGIN` lines", fill(|_| "AUTH LOGIN".to_owned())),
        (
            "`Pwd={` repeated (one line)",
            one_line_after("Server=db;", "Pwd={"),
        ),
    ]
}

/// URLs with nothing between them (each authority is read to the next URL only), and
/// random-looking tokens for the randomness test, one after another.
fn urls_and_random_tokens() -> Vec<(&'static str, String)> {
    vec![
        ("`a://` repeated (one line)", one_line("a://")),
        (
            "`http://u:p@h/,` repeated (one line)",
            one_line("http://u:p@h/,"),
        ),
        (
            "20-character tokens (one line)",
            one_line("Qm3vXr9TtLw2ZpK8sNb4 "),
        ),
    ]
}

/// The forms of 2026-12-05: random tokens glued by `:`, `sshpass -p` with words, thin
/// driver URLs, Go DSNs, URL passwords with blanks, INSERTs of a secret column.
fn forms_of_2026_12_05() -> Vec<(&'static str, String)> {
    vec![
        (
            "random tokens glued by `:` (one line)",
            one_line("Qm3vXr9TtLw2ZpK8sNb4:"),
        ),
        (
            "`sshpass -p a b ` repeated (one line)",
            one_line("sshpass -p a b "),
        ),
        (
            "`jdbc:oracle:thin:a/b ` repeated (one line)",
            one_line("jdbc:oracle:thin:a/b "),
        ),
        ("`u:p q@tcp(` repeated (one line)", one_line("u:p q@tcp(")),
        (
            "`http://u:p q ` repeated (one line)",
            one_line("http://u:p q "),
        ),
        (
            "`INSERT INTO t (password) VALUES ('a'), (` repeated (one line)",
            one_line("INSERT INTO t (password) VALUES ('a'), ("),
        ),
    ]
}

fn scrubber() -> Scrubber {
    let env = [
        ("DB_PASSWORD", "bench-db-password"),
        ("API_TOKEN", "bench-api-token-0123"),
    ]
    .map(|(name, value)| (name.into(), value.into()));
    Scrubber::new(vec!["bench-heartbeat-token".to_owned()], env)
}

/// What the failure summary does with a tail before it picks the last line.
fn summarise(scrubber: &Scrubber, tail: &str) -> usize {
    let scrubbed = scrubber.scrub(black_box(tail));
    black_box(collapse_traces(&scrubbed).len())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // In a child: the first call on one tail (or on one short line), in nanoseconds.
    if let [flag, which] = args.as_slice()
        && flag == "--first-call"
    {
        println!("{}", first_call_here(which).as_nanos());
        return;
    }
    // `cargo bench` passes `--bench`; any other word picks tails by name.
    let words: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();

    let scrubber = scrubber();
    println!(
        "scrub, then collapse traces, a {} KiB tail: median of up to {RUNS} runs (min .. max); \
         first call in a fresh process",
        TAIL / 1024
    );
    println!(
        "  first call on one short line (compiles the patterns every text needs): {:.2} ms",
        first_call("line").map_or(f64::NAN, ms)
    );
    let mut worst: Option<(&str, Duration)> = None;
    let mebibytes_only = words.iter().any(|w| w.as_str() == "mib");
    for (i, (name, tail)) in tails().into_iter().enumerate() {
        if mebibytes_only || (!words.is_empty() && !words.iter().any(|w| name.contains(w.as_str())))
        {
            continue;
        }
        let runs = timed_runs(&scrubber, &tail);
        let median = runs[runs.len() / 2];
        print_tail(name, i, &runs);
        if worst.is_none_or(|(_, d)| median > d) {
            worst = Some((name, median));
        }
    }
    if words.is_empty() || words.iter().any(|w| w.as_str() == "mib") {
        print_mebibytes(&scrubber, &words);
    }
    if let Some((name, median)) = worst {
        let verdict = if median <= BOUND { "within" } else { "OVER" };
        println!(
            "worst: {name}, {:.2} ms: {verdict} the bound of {} ms",
            ms(median),
            BOUND.as_millis()
        );
    }
}

/// Bytes of each text [`print_mebibytes`] times.
const MEBIBYTE: usize = 1 << 20;
/// A 1 MiB text whose first scrub takes longer than this is timed once only.
const SLOW_MEBIBYTE: Duration = Duration::from_secs(2);

/// The fastest of three summaries of `text`, or of fewer once one is over
/// [`SLOW_MEBIBYTE`].
fn fastest_of_three(scrubber: &Scrubber, text: &str) -> Duration {
    let mut fastest = Duration::MAX;
    for _ in 0..3 {
        let start = Instant::now();
        summarise(scrubber, text);
        fastest = fastest.min(start.elapsed());
        if fastest > SLOW_MEBIBYTE {
            break;
        }
    }
    fastest
}

/// The fastest of three scrubs (then collapsing traces, as the summary does) of 1 MiB of
/// each unit of `tests/linear.rs`, as one line and as lines of about 100 bytes (as
/// `tests/linear.rs` makes them), printed worst first; `words` other than `mib` pick the
/// units that contain one of them.
fn print_mebibytes(scrubber: &Scrubber, words: &[&String]) {
    let picked: Vec<&str> = words
        .iter()
        .filter(|w| w.as_str() != "mib")
        .map(|w| w.as_str())
        .collect();
    let mut rows = Vec::new();
    for unit in units::UNITS {
        if !picked.is_empty() && !picked.iter().any(|w| unit.contains(w)) {
            continue;
        }
        for many_lines in [false, true] {
            let text = units::text(unit, MEBIBYTE, many_lines);
            rows.push((fastest_of_three(scrubber, &text), *unit, many_lines));
        }
    }
    if picked.is_empty() || picked.iter().any(|w| LEARNED.contains(w)) {
        // A text that teaches a value a line: the learned values grow with the text.
        let text = learned_text(MEBIBYTE);
        rows.push((fastest_of_three(scrubber, &text), LEARNED, true));
    }
    rows.sort_by_key(|row| std::cmp::Reverse(row.0));
    println!("scrub, then collapse traces, 1 MiB of one unit repeated: fastest of 3, worst first");
    for (time, unit, many_lines) in rows {
        let kind = if many_lines { "many lines" } else { "one line" };
        println!("  {:9.2} ms  {kind:10}  {unit:?}", ms(time));
    }
}

/// The name of [`learned_text`] in the 1 MiB table (and the word that picks it).
const LEARNED: &str = "password=<16 random hex> then <i> (learned)";

/// `size` bytes of `password=<16 random hex> then <i>` lines, each teaching a fresh value,
/// with a learned word taught in the middle and seen bare on the last line.
fn learned_text(size: usize) -> String {
    let mut rng = fastrand::Rng::with_seed(43);
    let mut line = |i: usize| {
        let hex: String = (0..16)
            .map(|_| char::from(b"0123456789abcdef"[rng.usize(..16)]))
            .collect();
        format!("password={hex} then {i}\n")
    };
    let mut out = String::with_capacity(size + 64);
    let mut i = 0;
    while out.len() < size / 2 {
        out.push_str(&line(i));
        i += 1;
    }
    out.push_str("login: password=Copper51harbor$\n");
    while out.len() < size {
        out.push_str(&line(i));
        i += 1;
    }
    out.push_str("error: retrying as Copper51harbor$ failed\n");
    out
}

/// In the child [`first_call`] starts: the time of the first call on tail number `which`
/// (or, for another word, on one short line).
fn first_call_here(which: &str) -> Duration {
    let text = match which.parse::<usize>() {
        Ok(i) => tails().swap_remove(i).1,
        Err(_) => "exit 1 after 3s: boom".to_owned(),
    };
    let scrubber = scrubber();
    let start = Instant::now();
    summarise(&scrubber, &text);
    start.elapsed()
}

/// The times of a warm-up run then of up to [`RUNS`] runs on `tail`, sorted (the warm-up
/// alone when it took longer than [`BUDGET`]).
fn timed_runs(scrubber: &Scrubber, tail: &str) -> Vec<Duration> {
    let start = Instant::now();
    summarise(scrubber, tail);
    let warm_up = start.elapsed();
    let mut runs = Vec::new();
    let started = Instant::now();
    if warm_up > BUDGET {
        runs.push(warm_up);
    } else {
        while runs.len() < RUNS && (runs.len() < MIN_RUNS || started.elapsed() < BUDGET) {
            let start = Instant::now();
            summarise(scrubber, tail);
            runs.push(start.elapsed());
        }
    }
    runs.sort();
    runs
}

/// One line of the table: tail number `i`'s median and spread of `runs` (sorted), and its
/// first call in a fresh process.
fn print_tail(name: &str, i: usize, runs: &[Duration]) {
    let median = runs[runs.len() / 2];
    let first = if median < NO_FIRST_CALL {
        first_call(&i.to_string()).map_or("failed".to_owned(), |d| format!("{:.2} ms", ms(d)))
    } else {
        "not run".to_owned()
    };
    println!(
        "  {name:47} {:9.2} ms  ({:.2} .. {:.2}, {} run{})  first call {first}",
        ms(median),
        ms(runs[0]),
        ms(runs[runs.len() - 1]),
        runs.len(),
        if runs.len() == 1 { "" } else { "s" },
    );
}

/// The first call on tail `which` (an index, or anything else for one short line), timed in
/// a fresh process of this bench.
fn first_call(which: &str) -> Option<Duration> {
    let exe = std::env::current_exe().ok()?;
    let out = Command::new(exe)
        .args(["--first-call", which])
        .output()
        .ok()?;
    let nanos = String::from_utf8(out.stdout).ok()?.trim().parse().ok()?;
    out.status.success().then(|| Duration::from_nanos(nanos))
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
