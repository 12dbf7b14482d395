//! A crontab command as cron runs it, and the same command run by crontap-run.
//!
//! Cron (crontab(5)) splits the command at its first `%` not escaped by a backslash: what
//! comes before is the command, in which `\%` stands for `%`; what comes after is its
//! standard input, each further `%` a line feed. The command then runs as `$SHELL -c
//! COMMAND` (`/bin/sh` unless the crontab sets `SHELL`). crontap-run runs a program with no
//! shell in between, so only a *simple* command (words of plain characters, the first not
//! a shell builtin or keyword) can follow `--` as it is; any other is handed to the shell
//! as one argument, single-quoted, so that it means exactly what it meant.

/// A command split by cron's `%` rule: the command as written (`\%` still escaped), and
/// the rest of the line from the first unescaped `%` on, which cron makes its input.
pub fn split_input(text: &str) -> (&str, &str) {
    let mut escaped = false;
    for (i, c) in text.char_indices() {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == '%' {
            return text.split_at(i);
        }
    }
    (text, "")
}

/// What cron runs for the command part `written` (before any unescaped `%`): `\%` becomes
/// `%`; a backslash before anything else stays, with the character after it.
pub fn unescape(written: &str) -> String {
    let mut out = String::with_capacity(written.len());
    let mut chars = written.chars();
    while let Some(c) = chars.next() {
        match (c, c == '\\') {
            (_, true) => match chars.next() {
                Some('%') => out.push('%'),
                Some(next) => {
                    out.push('\\');
                    out.push(next);
                }
                None => out.push('\\'),
            },
            (c, false) => out.push(c),
        }
    }
    out
}

/// `text` written so that cron's `%` rule gives it back: every `%` escaped. Exact for any
/// text in which a run of backslashes before a `%` is of even length, as in what
/// [`unescape`] returns and in [`quote`] of it.
pub fn escape(text: &str) -> String {
    text.replace('%', "\\%")
}

/// Characters that mean nothing to the shell anywhere in a word.
fn plain(c: char) -> bool {
    c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c)
}

/// The builtins and reserved words of dash (dash(1): "Builtins", "Reserved Words") and of
/// bash (bash(1): "SHELL BUILTIN COMMANDS", "Reserved Words"; `compgen -b` and `compgen
/// -k`). A command starting with one needs the shell: some exist as programs too (`echo`,
/// `test`, `kill`) but behave differently there, most (`cd`, `chdir`, `.`, `export`,
/// `ulimit`) do not exist as programs at all, and a program cron's PATH finds for one
/// (`/usr/bin/cd`) would run in a process of its own and change nothing.
const SHELL_WORDS: &[&str] = &[
    // Reserved words (both shells).
    "!",
    "{",
    "}",
    "case",
    "do",
    "done",
    "elif",
    "else",
    "esac",
    "fi",
    "for",
    "if",
    "in",
    "then",
    "until",
    "while",
    // bash's reserved words too.
    "[[",
    "]]",
    "coproc",
    "function",
    "select",
    "time",
    // dash's builtins.
    ".",
    ":",
    "[",
    "alias",
    "bg",
    "break",
    "cd",
    "chdir",
    "command",
    "continue",
    "echo",
    "eval",
    "exec",
    "exit",
    "export",
    "false",
    "fc",
    "fg",
    "getopts",
    "hash",
    "jobs",
    "kill",
    "local",
    "printf",
    "pwd",
    "read",
    "readonly",
    "return",
    "set",
    "shift",
    "test",
    "times",
    "trap",
    "true",
    "type",
    "ulimit",
    "umask",
    "unalias",
    "unset",
    "wait",
    // bash's builtins not in dash.
    "bind",
    "builtin",
    "caller",
    "compgen",
    "complete",
    "compopt",
    "declare",
    "dirs",
    "disown",
    "enable",
    "help",
    "history",
    "let",
    "logout",
    "mapfile",
    "popd",
    "pushd",
    "readarray",
    "shopt",
    "source",
    "suspend",
    "typeset",
];

/// Whether `word` is a builtin or reserved word of dash or bash.
pub fn is_shell_word(word: &str) -> bool {
    SHELL_WORDS.contains(&word)
}

/// The words of `command` if it is a simple command, which crontap-run can run without a
/// shell and get the same arguments: words of plain characters only (no quotes, `$`,
/// globs, redirections, operators, `~`, `#`), the first neither an assignment nor a
/// builtin or keyword.
pub fn simple_words(command: &str) -> Option<Vec<&str>> {
    let words: Vec<&str> = command
        .split([' ', '\t'])
        .filter(|w| !w.is_empty())
        .collect();
    let first = words.first()?;
    let plain_words = words.iter().all(|w| w.chars().all(plain));
    let simple = plain_words && !first.contains('=') && !is_shell_word(first);
    simple.then_some(words)
}

/// `text` as one shell word: as it is if it is plain, else single-quoted (a `'` inside
/// written `'\''`).
pub fn quote(text: &str) -> String {
    match !text.is_empty() && text.chars().all(plain) {
        true => text.to_owned(),
        false => format!("'{}'", text.replace('\'', "'\\''")),
    }
}

/// Whether `command` runs a program called crontap-run (after any `NAME=value` words): the
/// line is wrapped already. With the `--job` it gives (`--job NAME` or `--job=NAME`, before
/// `--`), if any.
pub fn wrapped_job(command: &str) -> Option<Option<String>> {
    // Wherever it stands: after assignments, behind a program that runs another (`env`,
    // `nice -n 10`, `sudo -u app`), quoted. A command that merely names crontap-run is left
    // alone too: wrapping a line twice would take the heartbeat URL from the inner run.
    let mut words = command
        .split([' ', '\t'])
        .filter(|w| !w.is_empty())
        .skip_while(|w| !is_crontap_run(w));
    words.next()?;
    let mut words = words.take_while(|w| *w != "--");
    while let Some(word) = words.next() {
        if let Some(name) = word.strip_prefix("--job=") {
            return Some(Some(name.to_owned()));
        }
        if word == "--job" {
            return Some(words.next().map(str::to_owned));
        }
    }
    Some(None)
}

/// Whether a word, quotes taken off, is crontap-run, by name or by path.
fn is_crontap_run(word: &str) -> bool {
    let bare = word.trim_matches(['"', '\'']);
    bare.rsplit('/').next() == Some("crontap-run")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_rule() {
        assert_eq!(split_input("cmd a"), ("cmd a", ""));
        assert_eq!(split_input("cmd %in%put"), ("cmd ", "%in%put"));
        assert_eq!(split_input(r"date +\%F%x"), (r"date +\%F", "%x"));
        // `\\` is a pair: the `%` after it is unescaped.
        assert_eq!(split_input(r"a\\%b"), (r"a\\", "%b"));
        assert_eq!(split_input(r"a\\\%b"), (r"a\\\%b", ""));
        assert_eq!(unescape(r"date +\%F \n \\"), r"date +%F \n \\");
        assert_eq!(unescape(r"a\\\%b"), r"a\\%b");
        assert_eq!(unescape("end\\"), "end\\");
    }

    #[test]
    fn escape_undoes_unescape() {
        for written in [r"date +\%F", r"a\\\%b", r"x \%\% y", r"'\%'", r"\\\\\%"] {
            let command = unescape(written);
            assert_eq!(unescape(&escape(&command)), command, "{written}");
            let quoted = quote(&command);
            assert_eq!(unescape(&escape(&quoted)), quoted, "{written}");
            assert_eq!(split_input(&escape(&quoted)).1, "", "{written}");
        }
    }

    #[test]
    fn simple_or_not() {
        assert_eq!(
            simple_words("/opt/import/run.sh --full  x=1"),
            Some(vec!["/opt/import/run.sh", "--full", "x=1"])
        );
        assert_eq!(
            simple_words("backup.sh 50%"),
            Some(vec!["backup.sh", "50%"])
        );
        for shell in [
            "cd /app && ./sync.sh",
            "a | b",
            "a > log",
            "a 2>&1",
            "a; b",
            "a 'b c'",
            "a \"b\"",
            "a $HOME",
            "a *.log",
            "a file?",
            "a [ab]",
            "a ~/x",
            "a # comment",
            "a `date`",
            "a \\n",
            "A=1 a",
            "cd /tmp",
            "echo hi",
            "exec a",
            "if true",
            "(a)",
            "a &",
            "a {b,c}",
            "a !",
            "",
        ] {
            assert_eq!(simple_words(shell), None, "{shell:?}");
        }
    }

    #[test]
    fn quoting() {
        assert_eq!(quote("plain/path.sh"), "plain/path.sh");
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert_eq!(quote(""), "''");
        assert_eq!(quote("a b"), "'a b'");
    }

    #[test]
    fn already_wrapped() {
        assert_eq!(wrapped_job("crontap-run -- a"), Some(None));
        assert_eq!(
            wrapped_job("  /usr/local/bin/crontap-run -q --job x -- a --job y"),
            Some(Some("x".to_owned()))
        );
        assert_eq!(
            wrapped_job("crontap-run --job=nightly -- a"),
            Some(Some("nightly".to_owned()))
        );
        assert_eq!(
            wrapped_job("CRONTAP_STATE_DIR=/x _A1=2 crontap-run\t--job\tz -- a"),
            Some(Some("z".to_owned()))
        );
        assert_eq!(wrapped_job("crontap-run -- b --job c"), Some(None));
        assert_eq!(wrapped_job("crontap-runner a"), None);
        assert_eq!(wrapped_job("/opt/crontap-run-report.sh"), None);
        assert_eq!(wrapped_job(""), None);
        // Behind a program that runs another, quoted, or only named: left alone all the same
        // (wrapped twice, the inner run would lose its heartbeat URL to the outer one).
        assert_eq!(
            wrapped_job("nice -n 10 crontap-run --job n -- a"),
            Some(Some("n".to_owned()))
        );
        assert_eq!(wrapped_job("env FOO=1 'crontap-run' -- a"), Some(None));
        assert_eq!(wrapped_job("a crontap-run"), Some(None));
        assert_eq!(wrapped_job("1X=2 crontap-run -- a"), Some(None));
    }
}
