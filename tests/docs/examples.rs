//! The documents' examples run: every ```` ```console ```` block is a session, each `$ `
//! line a command run by `/bin/sh` and the lines after it the output it must print
//! (stdout and stderr together, as a terminal shows them). A command that exits other
//! than 0 must be followed by `$ echo $?` showing its status, so an example cannot hide a
//! failure. A command may end in a here-document (`<<'EOF'`), whose lines follow it.
//!
//! Each block runs in a fresh temporary directory, which is also `HOME` and holds the state
//! directory, with `PATH` the test binary's directory first, then `/usr/bin:/bin`, and no
//! other variable but `LANG=C.UTF-8`: no heartbeat URL, so nothing is sent anywhere.
//! Before comparing, durations (`6ms`, `1m12s`), dates (`2027-10-29`) and times of day
//! (`18:14:10`) become `[DURATION]`, `[DATE]` and `[TIME]` on both sides, since they change
//! from run to run, and runs of blanks become one, since a table's columns widen with them.
//! The test binary's path in what a command prints reads `/usr/local/bin/crontap-run`,
//! where the reader has it.
//!
//! A block that cannot run here (it needs a heartbeat service, root, recorded runs) says
//! why on the line before it: `<!-- not run: needs a heartbeat service -->`. A `$ crontap-run`
//! line in any other kind of block is an error: it would be an example that never runs.

use std::path::Path;
use std::process::Command;

use regex::Regex;

use crate::markdown::{self, Fence};

/// One command of a session and the output shown for it.
struct Step {
    line: usize,
    command: String,
    expected: Vec<String>,
}

/// The steps of a console block.
fn steps(fence: &Fence) -> Vec<Step> {
    let mut steps: Vec<Step> = Vec::new();
    let mut heredoc: Option<String> = None;
    for (line, text) in &fence.body {
        if let Some(end) = &heredoc {
            let step = steps
                .last_mut()
                .expect("a here-document follows its command");
            step.command.push('\n');
            step.command.push_str(text);
            if text == end {
                heredoc = None;
            }
        } else if let Some(command) = text.strip_prefix("$ ") {
            heredoc = here_document_end(command);
            steps.push(Step {
                line: *line,
                command: command.to_string(),
                expected: Vec::new(),
            });
        } else if let Some(step) = steps.last_mut() {
            step.expected.push(text.clone());
        } else {
            panic!("line {line}: output before the first `$ ` command");
        }
    }
    steps
}

/// The word that ends a here-document started on `command` (`<<'EOF'`, `<<EOF`).
fn here_document_end(command: &str) -> Option<String> {
    let (_, word) = command.rsplit_once("<<")?;
    Some(word.trim().trim_matches(['\'', '"']).to_string())
}

/// Durations, dates and times of day made placeholders, runs of blanks made one (a table's
/// columns widen with what is in them), and trailing blanks dropped.
fn normalise(lines: &[String]) -> Vec<String> {
    let patterns = [
        (r"[0-9]{4}-[0-9]{2}-[0-9]{2}", "[DATE]"),
        (r"[0-9]{2}:[0-9]{2}:[0-9]{2}", "[TIME]"),
        (
            r"(?-u:\b)(?:[0-9]+(?:\.[0-9]+)?(?:ns|µs|us|ms|s|m|h|d))+(?-u:\b)",
            "[DURATION]",
        ),
        (r" {2,}", " "),
    ]
    .map(|(pattern, with)| (Regex::new(pattern).expect("pattern"), with));
    lines
        .iter()
        .map(|line| {
            let mut line = line.trim_end().to_string();
            for (pattern, with) in &patterns {
                line = pattern.replace_all(&line, *with).into_owned();
            }
            line
        })
        .collect()
}

/// Where the documents' reader has crontap-run (install.sh puts it there as root): the test
/// binary's own path in what a command prints is shown as this.
const INSTALLED: &str = "/usr/local/bin/crontap-run";

/// Runs `command` in `dir` as the documents' reader would, after a command that exited
/// with `previous` (so that `echo $?` shows it); its output and exit status.
fn run(dir: &Path, command: &str, previous: i32) -> (Vec<String>, i32) {
    let bin = Path::new(env!("CARGO_BIN_EXE_crontap-run"));
    let path = format!("{}:/usr/bin:/bin", bin.parent().expect("bin dir").display());
    let out = Command::new("/bin/sh")
        .arg("-c")
        .arg(format!("exec 2>&1; (exit {previous}); {command}"))
        .current_dir(dir)
        .env_clear()
        .env("PATH", path)
        .env("HOME", dir)
        .env("LANG", "C.UTF-8")
        .env("CRONTAP_STATE_DIR", dir.join(".state"))
        .output()
        .expect("/bin/sh runs");
    let text = String::from_utf8_lossy(&out.stdout);
    let canonical = bin.canonicalize().unwrap_or_else(|_| bin.to_path_buf());
    let lines = text
        .lines()
        .map(|line| {
            let line = line.replace(canonical.to_str().expect("UTF-8 path"), INSTALLED);
            line.replace(bin.to_str().expect("UTF-8 path"), INSTALLED)
        })
        .collect();
    (lines, out.status.code().unwrap_or(-1))
}

/// Runs one console block; what went wrong, one message each.
fn check_block(doc: &Path, fence: &Fence) -> Vec<String> {
    let dir = tempfile::tempdir().expect("temporary directory");
    let mut problems = Vec::new();
    let mut status = 0;
    let steps = steps(fence);
    for (i, step) in steps.iter().enumerate() {
        let where_ = format!("{}:{}", doc.display(), step.line);
        if status != 0 && step.command != "echo $?" {
            problems.push(format!("{where_}: the command before exited {status}, which the example does not show (add `$ echo $?`)"));
        }
        let (output, code) = run(dir.path(), &step.command, status);
        let (want, got) = (normalise(&step.expected), normalise(&output));
        if want != got {
            problems.push(format!(
                "{where_}: `{}` printed\n{}\n  where the document shows\n{}",
                step.command,
                indent(&got),
                indent(&want)
            ));
        }
        status = code;
        if i + 1 == steps.len() && status != 0 {
            problems.push(format!(
                "{where_}: exited {status}, which the example does not show (add `$ echo $?`)"
            ));
        }
    }
    problems
}

fn indent(lines: &[String]) -> String {
    lines
        .iter()
        .map(|l| format!("    |{l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Whether a block is an example that must run, is marked as not run, or is no example.
enum Kind {
    Run,
    NotRun,
    Misplaced,
    Other,
}

fn kind(fence: &Fence) -> Kind {
    let shows_command = fence
        .body
        .iter()
        .any(|(_, l)| l.starts_with("$ crontap-run"));
    let not_run = fence
        .comment
        .as_deref()
        .and_then(|c| c.strip_prefix("not run:"))
        .is_some_and(|why| !why.trim().is_empty());
    match (fence.info.as_str(), not_run) {
        ("console", true) => Kind::NotRun,
        ("console", false) => Kind::Run,
        (_, _) if shows_command => Kind::Misplaced,
        _ => Kind::Other,
    }
}

/// Runs every example of `docs`; the number run and the problems found.
fn run_all(docs: &[markdown::Doc]) -> (usize, Vec<String>) {
    let mut ran = 0;
    let mut problems = Vec::new();
    for doc in docs {
        for fence in markdown::fences(&doc.text) {
            match kind(&fence) {
                Kind::Run => {
                    ran += steps(&fence).len();
                    problems.extend(check_block(&doc.path, &fence));
                }
                Kind::Misplaced => problems.push(format!(
                    "{}:{}: a `$ crontap-run` example outside a ```console block never runs",
                    doc.path.display(),
                    fence.line
                )),
                Kind::NotRun | Kind::Other => {}
            }
        }
    }
    (ran, problems)
}

#[test]
fn every_console_example_prints_what_the_documents_show() {
    let (ran, problems) = run_all(&markdown::documents());
    eprintln!("documentation examples: {ran} commands run");
    assert!(
        ran >= 10,
        "only {ran} example commands ran: is the runner broken?"
    );
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

#[test]
fn an_example_whose_output_or_status_changed_fails() {
    let doc = |text: &str| markdown::Doc {
        path: "docs/example.md".into(),
        text: text.into(),
    };
    let good = "```console\n$ crontap-run --dry-run -- sh -c 'echo out; exit 4'\nout\ncrontap-run: dry run (no heartbeat URL configured), nothing sent; would send: GET <heartbeat URL>/fail?msg=exit 4 after 3ms: out\n$ echo $?\n4\n```\n";
    let (ran, problems) = run_all(&[doc(good)]);
    assert_eq!((ran, problems), (2, vec![]));
    let changed = good.replace("echo out;", "echo changed;");
    let (_, problems) = run_all(&[doc(&changed)]);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0].contains("|changed"), "{problems:?}");
    let hidden = "```console\n$ crontap-run -- false\n```\n";
    let (_, problems) = run_all(&[doc(hidden)]);
    assert!(
        problems.iter().any(|p| p.contains("exited 1")),
        "{problems:?}"
    );
    let misplaced = "```sh\n$ crontap-run --version\n```\n";
    let (_, problems) = run_all(&[doc(misplaced)]);
    assert!(
        problems[0].contains("outside a ```console block"),
        "{problems:?}"
    );
    let skipped = "<!-- not run: needs a heartbeat service -->\n```console\n$ crontap-run check\nnonsense\n```\n";
    assert_eq!(run_all(&[doc(skipped)]), (0, vec![]));
}
