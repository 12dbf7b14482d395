//! Job names in `plan --crontab`: what a new wrapped line is called, and which names the
//! crontab's lines already use.
//!
//! A simple command gets the name a run of it derives (`job::derived_name`). A line for the
//! shell is named after the program it runs (`sync.sh` for `cd /app && ./sync.sh`, never
//! `sh`), its digits still from every argument crontap-run is given. A line that runs
//! crontap-run already uses the name its run will use: its `--job`, else `CRONTAP_JOB=` on
//! the line, else a `CRONTAP_JOB` line of the crontab in force there, else the name the run
//! derives from the command after `--` (read as the shell splits it). No new line is given
//! a name in use.

use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::path::Path;

use crate::plan::shell;
use crate::plan::words::{self, Word};
use crate::state::job;

/// The names taken, and for each name asked for the last suffix tried.
#[derive(Default)]
pub struct Names {
    taken: HashSet<String>,
    suffixes: HashMap<String, u32>,
}

impl Names {
    /// Marks `name` as used by a line already wrapped.
    pub fn take(&mut self, name: String) {
        self.taken.insert(name);
    }

    /// Gives `name` back: no line uses it.
    pub fn release(&mut self, name: &str) {
        self.taken.remove(name);
    }

    /// `name`, or `name-2`, `name-3` … if a line has it. The search for a name goes on from
    /// where the last one for the same name stopped, so that many lines with one command
    /// cost no more than as many names.
    pub fn unique(&mut self, name: String) -> String {
        let mut candidate = name.clone();
        let n = self.suffixes.entry(name.clone()).or_insert(1);
        while self.taken.contains(&candidate) {
            *n += 1;
            candidate = format!("{name}-{n}");
        }
        self.taken.insert(candidate.clone());
        candidate
    }
}

/// The name for a new line that runs `argv` under crontap-run; `shell_command` is the
/// command when `argv` is the shell's `-c` (the name then comes from the program it runs).
pub fn for_line(argv: &[OsString], shell_command: Option<&str>) -> String {
    match shell_command {
        // A shell line whose program cannot be told (`$CMD --all`) is a `job`, not `sh`.
        Some(command) => {
            let program = program(command).unwrap_or_else(|| "job".to_owned());
            job::name_after(program.as_bytes(), argv)
        }
        None => job::derived_name(argv),
    }
}

/// The program a shell command runs, by its first word as written: the first command that
/// is not a builtin (`cd`, `.`, `export`, `[` …), past reserved words, assignments and
/// `exec`, `command` and `time`; else the first builtin it runs (`echo`, `test` for `[`).
fn program(command: &str) -> Option<String> {
    let mut builtin = None;
    for words in words::commands(command) {
        let mut words = words.iter().skip_while(|w| is_assignment(w)).peekable();
        while let Some(word) = words.next() {
            match word.text.as_str() {
                "for" | "case" | "select" | "function" => break,
                "exec" | "command" | "time" => {
                    while words.next_if(|w| w.text.starts_with('-')).is_some() {}
                }
                "!" | "{" | "}" | "if" | "then" | "else" | "elif" | "do" | "while" | "until"
                | "fi" | "done" | "esac" => {}
                text if shell::is_shell_word(text) => {
                    let shown = match text {
                        "[" | "[[" => "test",
                        "." => "source",
                        text => text,
                    };
                    builtin.get_or_insert_with(|| shown.to_owned());
                    break;
                }
                _ => match stem(word) {
                    Some(stem) => return Some(stem),
                    None => break,
                },
            }
        }
    }
    builtin
}

/// A word's file name when the shell would not change it (`$HOME/bin/x.sh` gives `x.sh`).
fn stem(word: &Word) -> Option<String> {
    let name = Path::new(&word.text).file_name()?.to_str()?;
    let expands = name.contains(['$', '`', '*', '?', '[']);
    (!name.is_empty() && !expands && (word.plain || !word.text.starts_with('~')))
        .then(|| name.to_owned())
}

fn is_assignment(word: &Word) -> bool {
    match word.text.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && !name.starts_with(|c: char| c.is_ascii_digit())
                && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        }
        None => false,
    }
}

/// The job name a line that runs crontap-run already uses when it runs, if it can be
/// known; `crontab_job` is the crontab's `CRONTAP_JOB` in force at the line.
pub fn of_wrapped(command: &str, crontab_job: Option<&str>) -> Option<String> {
    let commands = words::commands(command);
    let words = commands.iter().find(|c| c.iter().any(is_crontap_run))?;
    let at = words.iter().position(is_crontap_run)?;
    // `CRONTAP_JOB=x crontap-run`, `env CRONTAP_JOB=x crontap-run`.
    let on_line = words[..at]
        .iter()
        .rev()
        .find_map(|w| w.text.strip_prefix("CRONTAP_JOB="));
    let mut options = words[at + 1..].iter();
    let mut given = None;
    for word in options.by_ref() {
        match word.text.as_str() {
            "--" => break,
            "--job" => given = Some(None),
            text => match (text.strip_prefix("--job="), &given) {
                (Some(name), _) => given = Some(Some(name.to_owned())),
                (None, Some(None)) => given = Some(Some(text.to_owned())),
                _ => {}
            },
        }
    }
    let argv: Vec<&Word> = options.collect();
    // An empty CRONTAP_JOB counts as unset, as for a run.
    let named = given
        .flatten()
        .or(on_line.map(str::to_owned))
        .filter(|n| !n.is_empty())
        .or(crontab_job.filter(|n| !n.is_empty()).map(str::to_owned));
    if named.is_some() {
        return named;
    }
    if argv.is_empty() || argv.iter().any(|w| !w.plain) {
        return None;
    }
    let argv: Vec<OsString> = argv.iter().map(|w| OsString::from(&w.text)).collect();
    Some(job::derived_name(&argv))
}

fn is_crontap_run(word: &Word) -> bool {
    word.plain && word.text.rsplit('/').next() == Some("crontap-run")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shell_line_is_named_after_the_program_it_runs() {
        for (command, stem) in [
            ("cd /app && ./sync.sh", "sync.sh"),
            ("chdir /tmp; . ./env; exec /opt/run --x", "run"),
            (
                "umask 077 && LANG=C /usr/bin/backup > /var/log/b 2>&1",
                "backup",
            ),
            ("if ./check; then ./deploy; fi", "check"),
            ("time -p nice -n 5 ./slow", "nice"),
            ("[ -f /x ] && echo yes", "test"),
            ("echo $HOME", "echo"),
            ("\"/opt/my app/run-it.sh\" a", "run-it.sh"),
            ("$HOME/bin/report.sh | mail x", "report.sh"),
            ("$CMD --all", "job"),
        ] {
            let argv: Vec<OsString> = ["/bin/sh", "-c", command].map(OsString::from).into();
            let name = for_line(&argv, Some(command));
            assert_eq!(name, job::name_after(stem.as_bytes(), &argv), "{command}");
            assert!(!name.starts_with("sh-"), "{command}: {name}");
        }
    }

    #[test]
    fn the_name_a_wrapped_line_uses() {
        let derived = |argv: &[&str]| {
            let argv: Vec<OsString> = argv.iter().map(OsString::from).collect();
            job::derived_name(&argv)
        };
        assert_eq!(
            of_wrapped("crontap-run --no-overlap -- /usr/bin/backup --full", None),
            Some(derived(&["/usr/bin/backup", "--full"]))
        );
        assert_eq!(
            derived(&["/usr/bin/backup", "--full"]),
            "backup-37ffba78",
            "the issue's example"
        );
        assert_eq!(
            of_wrapped("/x/crontap-run -- sh -c 'a && b' >/dev/null 2>&1", None),
            Some(derived(&["sh", "-c", "a && b"]))
        );
        assert_eq!(
            of_wrapped("crontap-run --job a -- x", Some("c")),
            Some("a".into())
        );
        assert_eq!(
            of_wrapped("crontap-run --job=a -- x", None),
            Some("a".into())
        );
        assert_eq!(
            of_wrapped("CRONTAP_JOB=b crontap-run -- x", Some("c")),
            Some("b".into())
        );
        assert_eq!(
            of_wrapped("env CRONTAP_JOB=b crontap-run -- x", None),
            Some("b".into())
        );
        assert_eq!(of_wrapped("crontap-run -- x", Some("c")), Some("c".into()));
        assert_eq!(
            of_wrapped("CRONTAP_JOB= crontap-run -- x", Some("")),
            Some(derived(&["x"]))
        );
        // What the shell expands cannot be known here.
        assert_eq!(of_wrapped("crontap-run -- $HOME/x", None), None);
        assert_eq!(of_wrapped("crontap-run --job", None), None);
    }
}
