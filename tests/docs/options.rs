//! Every `--option` the documents show on a crontap-run command line exists in that
//! (sub)command's `--help`, which the binary prints from its clap definitions: the list of
//! options is never copied here.
//!
//! A command line is the text after a word `crontap-run` (or `…/crontap-run`), in a code
//! block or an inline code span, up to the end of the line, the `--` that starts the job's
//! command, or a shell separator. Subcommands are followed as `--help` lists them.

use std::collections::BTreeMap;
use std::process::Command;

use crate::markdown;

/// The `--help` text of a subcommand chain (`[]` for the run itself, `["plan"]` …).
struct Helps {
    cache: BTreeMap<Vec<String>, String>,
}

impl Helps {
    fn new() -> Helps {
        Helps {
            cache: BTreeMap::new(),
        }
    }

    fn of(&mut self, chain: &[String]) -> &str {
        self.cache.entry(chain.to_vec()).or_insert_with(|| {
            let out = Command::new(env!("CARGO_BIN_EXE_crontap-run"))
                .args(chain)
                .arg("--help")
                .output()
                .expect("crontap-run --help runs");
            assert!(out.status.success(), "crontap-run {chain:?} --help failed");
            String::from_utf8(out.stdout).expect("help is UTF-8")
        })
    }

    /// The subcommands `--help` lists for `chain`.
    fn subcommands(&mut self, chain: &[String]) -> Vec<String> {
        let help = self.of(chain);
        let mut out = Vec::new();
        let mut inside = false;
        for line in help.lines() {
            if line == "Subcommands:" || line == "Commands:" {
                inside = true;
            } else if inside && line.starts_with("  ") {
                if let Some(name) = line.split_whitespace().next() {
                    out.push(name.to_string());
                }
            } else if inside && !line.starts_with(' ') {
                inside = false;
            }
        }
        out
    }

    /// Whether `--help` of `chain` lists `option` (`--name`).
    fn has_option(&mut self, chain: &[String], option: &str) -> bool {
        let help = self.of(chain);
        help.match_indices(option).any(|(at, _)| {
            let next = help[at + option.len()..].chars().next();
            let before = help[..at].chars().next_back();
            !next.is_some_and(|c| c.is_ascii_alphanumeric() || c == '-')
                && !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '-')
        })
    }
}

/// The words after each `crontap-run` on `line`, up to where its command line ends.
fn command_lines(line: &str) -> Vec<Vec<String>> {
    let words: Vec<String> = line
        .split(|c: char| {
            c.is_whitespace() || matches!(c, '[' | ']' | '(' | ')' | ',' | '"' | '\'' | '`')
        })
        .filter(|word| !word.is_empty())
        .map(str::to_string)
        .collect();
    let mut out = Vec::new();
    for (i, word) in words.iter().enumerate() {
        if word != "crontap-run" && !word.ends_with("/crontap-run") {
            continue;
        }
        // `cargo test -p crontap-run`: the package, not a command.
        if i > 0 && matches!(words[i - 1].as_str(), "-p" | "--package" | "--bin") {
            continue;
        }
        let args = words[i + 1..]
            .iter()
            .take_while(|w| !matches!(w.as_str(), "--" | "|" | "||" | "&&" | ";" | "#"))
            .cloned()
            .collect();
        out.push(args);
    }
    out
}

/// What is wrong with one command line's options, one line each.
fn check(helps: &mut Helps, args: &[String]) -> Vec<String> {
    let mut chain: Vec<String> = Vec::new();
    let mut out = Vec::new();
    for arg in args {
        if arg == "help" && chain.is_empty() {
            break; // `crontap-run help plan`: names, not options
        }
        if let Some(name) = arg.strip_prefix("--") {
            let option = format!("--{}", name.split('=').next().unwrap_or(name));
            if name.chars().next().is_some_and(|c| c.is_ascii_lowercase())
                && !helps.has_option(&chain, &option)
            {
                let cmd = std::iter::once("crontap-run".to_string())
                    .chain(chain.iter().cloned())
                    .collect::<Vec<_>>()
                    .join(" ");
                out.push(format!("{option} is not in `{cmd} --help`"));
            }
        } else if helps.subcommands(&chain).contains(arg) {
            chain.push(arg.clone());
        }
    }
    out
}

/// The lines of the documents where crontap-run may be given options: code blocks, and
/// inline code spans in prose.
fn candidate_lines(text: &str) -> Vec<(usize, String)> {
    let mut out: Vec<(usize, String)> = markdown::fences(text)
        .into_iter()
        .flat_map(|fence| fence.body)
        .collect();
    for (n, line) in markdown::prose_lines(text) {
        out.extend(
            markdown::code_spans(line)
                .iter()
                .map(|s| (n, s.to_string())),
        );
    }
    out
}

#[test]
fn every_option_shown_on_a_command_line_is_in_its_help() {
    let mut helps = Helps::new();
    let mut problems = Vec::new();
    let mut checked = 0;
    for doc in markdown::documents() {
        for (n, line) in candidate_lines(&doc.text) {
            for args in command_lines(&line) {
                checked += args
                    .iter()
                    .filter(|a| a.starts_with("--") && a.len() > 2)
                    .count();
                for why in check(&mut helps, &args) {
                    problems.push(format!("{}:{n}: {why}", doc.path.display()));
                }
            }
        }
    }
    assert!(
        checked > 50,
        "only {checked} options found: is the parser broken?"
    );
    assert!(
        problems.is_empty(),
        "options not in --help:\n{}",
        problems.join("\n")
    );
}

#[test]
fn an_option_that_does_not_exist_is_found() {
    let mut helps = Helps::new();
    let line = "*/5 * * * * crontap-run --no-overlap --once-pr 1d -- job --not-ours";
    let found: Vec<String> = command_lines(line)
        .iter()
        .flat_map(|args| check(&mut helps, args))
        .collect();
    assert_eq!(found, ["--once-pr is not in `crontap-run --help`"]);
    let line = r#"command: ["crontap-run", "plan", "--crontab", "-", "--timeout", "1m"]"#;
    let found: Vec<String> = command_lines(line)
        .iter()
        .flat_map(|args| check(&mut helps, args))
        .collect();
    assert_eq!(found, ["--timeout is not in `crontap-run plan --help`"]);
}
