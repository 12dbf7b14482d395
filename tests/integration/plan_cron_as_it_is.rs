//! `plan --crontab` against cron as it is: cron's PATH (`/usr/bin:/bin`) has no
//! crontap-run, Debian's cron refuses a command of 999 bytes, a run derives its job name
//! from its command, dash and bash have builtins no program stands for, and cronie reads
//! forms Debian's cron does not (`~`, `fri-sun`). The real cron daemon runs the wrapped
//! lines in `root/real_cron.rs`.

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::harness::{Crontap, Receiver};
use crate::plan_crontab::{command_field, cron_split, own_bin, plan_crontab};

/// The job name on a wrapped line (after `--job`).
fn name_on(line: &str) -> String {
    let mut words = line.split(' ').skip_while(|w| *w != "--job");
    words.nth(1).expect("a --job").to_owned()
}

/// The wrapped lines of `plan`'s output (comments left out).
fn wrapped(out: &str) -> Vec<&str> {
    out.lines().filter(|l| l.contains(" --job ")).collect()
}

/// Runs a wrapped line's command field as cron does: `/bin/sh -c` with cron's own
/// environment (Debian's: PATH=/usr/bin:/bin, HOME, SHELL, LOGNAME), its `%` input fed in.
fn run_with_crons_path(field: &str, home: &std::path::Path) -> std::process::Output {
    let (command, input) = cron_split(field);
    let mut child = Command::new("/bin/sh")
        .arg("-c")
        .arg(&command)
        .current_dir(home)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", home)
        .env("SHELL", "/bin/sh")
        .env("LOGNAME", "cron-user")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&input).unwrap();
    child.wait_with_output().unwrap()
}

/// The wrapped line names crontap-run by the absolute path of the binary that ran `plan`:
/// run with cron's PATH, which holds no crontap-run, it runs the job and pings.
#[test]
fn a_wrapped_line_runs_with_crons_own_path() {
    let dir = tempfile::tempdir().unwrap();
    let receiver = Receiver::start();
    let url_dir = dir.path().join("urls");
    std::fs::create_dir(&url_dir).unwrap();
    let crontab = "0 3 * * * cd / && ls >/dev/null\n0 4 * * * /bin/true\n";
    let out = plan_crontab(crontab, &["--url-dir", url_dir.to_str().unwrap()]);
    let lines = wrapped(&out.stdout);
    assert_eq!(lines.len(), 2, "{}", out.stdout);
    for line in &lines {
        assert!(
            command_field(line).starts_with(&format!("{} --job ", own_bin())),
            "{line}"
        );
        std::fs::write(
            url_dir.join(format!("{}.url", name_on(line))),
            receiver.url(),
        )
        .unwrap();
    }
    for line in &lines {
        let ran = run_with_crons_path(command_field(line), dir.path());
        assert!(
            ran.status.success(),
            "{line}: {}",
            String::from_utf8_lossy(&ran.stderr)
        );
    }
    assert_eq!(receiver.received().len(), 2);
    // The same with the bare name, as before: cron's shell does not find it.
    let bare = lines[1].replace(&own_bin(), "crontap-run");
    let ran = run_with_crons_path(command_field(&bare), dir.path());
    assert_eq!(ran.status.code(), Some(127), "{bare}");
}

/// `--bin` names another path; a `PATH` line in force at the job that holds its directory
/// (as written, or through a symlink) lets the line use the bare name, unless a directory
/// before it has a crontap-run of its own.
#[test]
fn bin_and_the_crontabs_path() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("real");
    let earlier = dir.path().join("earlier");
    std::fs::create_dir(&real).unwrap();
    std::fs::create_dir(&earlier).unwrap();
    std::fs::write(earlier.join("crontap-run"), "").unwrap();
    std::os::unix::fs::symlink(&real, dir.path().join("link")).unwrap();
    let (real, earlier) = (real.display(), earlier.display());
    let link = dir.path().join("link");
    let link = link.display();
    let bin = format!("{real}/crontap-run");
    let crontab = format!(
        "0 1 * * * /opt/before-path.sh\n\
         PATH=/usr/bin:{real}:/bin\n\
         0 2 * * * /opt/in-path.sh\n\
         PATH=\"/usr/bin:{link}/\"\n\
         0 3 * * * /opt/through-a-link.sh\n\
         PATH={earlier}:{real}\n\
         0 4 * * * /opt/another-first.sh\n\
         PATH=/usr/bin:/bin\n\
         0 5 * * * /opt/not-in-path.sh\n"
    );
    let out = plan_crontab(&crontab, &["--bin", &bin, "--url-dir", "/x"]);
    let lines = wrapped(&out.stdout);
    let runs: Vec<&str> = lines
        .iter()
        .map(|l| command_field(l).split(' ').next().unwrap())
        .collect();
    assert_eq!(
        runs,
        [&*bin, "crontap-run", "crontap-run", &*bin, &*bin],
        "{}",
        out.stdout
    );
    // Without --bin: this binary, symlinks resolved, written as one shell word.
    let out = plan_crontab("0 1 * * * /opt/a.sh\n", &["--url-dir", "/x"]);
    assert!(
        command_field(wrapped(&out.stdout)[0]).starts_with(&format!("{} --job", own_bin())),
        "{}",
        out.stdout
    );
    let out = plan_crontab(
        "0 1 * * * /opt/a.sh\n",
        &["--url-dir", "/x", "--bin", "/opt/it's here/crontap-run"],
    );
    assert!(
        command_field(wrapped(&out.stdout)[0])
            .starts_with(r"'/opt/it'\''s here/crontap-run' --job "),
        "{}",
        out.stdout
    );
    let given = dir.path().join("given");
    std::fs::write(&given, "0 1 * * * /opt/a.sh\n").unwrap();
    let given = given.display().to_string();
    for bad in [
        "crontap-run",
        "bin/crontap-run",
        "/opt/",
        "",
        "/opt/x\n* * * * * evil",
    ] {
        // From a file: refused before it reads a byte, it would close a pipe early.
        let out = Crontap::new()
            .args(["plan", "--crontab", &given, "--bin", bad])
            .run();
        assert_eq!(out.code, 125, "{bad:?}: {out:?}");
        let line = out.stderr.trim_end();
        assert!(!line.contains('\n') && line.contains("--bin"), "{line}");
        assert_eq!(out.stdout, "");
    }
    let out = Crontap::new()
        .args(["plan", "--schedule", "@daily", "--bin", "/opt/crontap-run"])
        .run();
    assert_eq!(out.code, 125, "--bin goes with --crontab only: {out:?}");
}

/// A command is the rest of its line after the schedule's blanks, its input and trailing
/// blanks included (measured with Debian's `crontab -n`: 998 bytes pass, 999 are "command
/// too long"). A wrapped line over that is a usage error naming its line; one at it passes.
#[test]
fn a_wrapped_command_longer_than_debians_cron_takes_is_refused_naming_its_line() {
    let (fits, one_more) = around_the_limit();
    assert_eq!(command_field(&fits).len(), 998, "{fits}");
    let crontab = format!("# a comment\n@daily /bin/true\n{one_more}\n");
    let out = Crontap::new()
        .args(["plan", "--crontab", "-", "--url-dir", "/x"])
        .stdin(crontab.as_bytes())
        .run();
    assert_eq!(out.code, 125, "{out:?}");
    assert_eq!(out.stdout, "", "no crontab cron would refuse");
    let line = out.stderr.trim_end();
    assert!(!line.contains('\n'), "{line}");
    assert!(
        line.contains("--crontab line 3") && line.contains("999 bytes"),
        "{line}"
    );
    assert!(line.contains("command too long"), "{line}");
}

/// The wrapped line of a job whose wrapped command is exactly 998 bytes, and the job line
/// (as given) whose wrapped command would be 999; both end in `%` input, which counts.
fn around_the_limit() -> (String, String) {
    let line = |n: usize| format!("0 0 * * * /bin/echo {}%input\\%", "x".repeat(n));
    let plan = |job: &str| plan_crontab(job, &["--url-dir", "/x"]);
    let base = plan(&line(10));
    let length = command_field(wrapped(&base.stdout)[0]).len();
    let n = 10 + 998 - length;
    let fits = plan(&line(n));
    let fits = wrapped(&fits.stdout)[0].to_owned();
    (fits, line(n + 1))
}

/// Debian's `crontab` itself takes the 998-byte line `plan` printed and refuses one byte
/// more: the limit is cron's, not a guess.
#[cfg(feature = "external-tests")]
#[test]
fn debians_crontab_agrees_on_the_limit() {
    let crontab = crate::harness::require(&["crontab"], "cron");
    let (fits, _) = around_the_limit();
    let dir = tempfile::tempdir().unwrap();
    let check = |text: &str| {
        let file = dir.path().join("crontab");
        std::fs::write(&file, format!("{text}\n")).unwrap();
        // -n: a dry run, which checks the syntax and installs nothing.
        let out = Command::new(&crontab)
            .arg("-n")
            .arg(&file)
            .output()
            .unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (ok, said) = check(&fits);
    assert!(ok, "{fits}: {said}");
    let (ok, said) = check(&format!("{fits}x"));
    assert!(!ok && said.contains("command too long"), "{said}");
}

/// A new line never gets the name a line already wrapped uses when it runs: its `--job`,
/// its `CRONTAP_JOB=`, the crontab's `CRONTAP_JOB`, or the name it derives from its
/// command, which a real run is asked for here.
#[test]
fn names_that_wrapped_lines_use_at_run_time_are_not_given_again() {
    let dir = tempfile::tempdir().unwrap();
    let receiver = Receiver::start();
    // What a run of the wrapped line calls its job: its metrics file is
    // `crontap-run-<job>.prom`.
    let metrics = dir.path().join("metrics");
    std::fs::create_dir(&metrics).unwrap();
    let ran = Crontap::with_url(&receiver.url())
        .arg("--metrics-dir")
        .arg(&metrics)
        .args(["--", "/bin/true", "--full"])
        .run();
    assert_eq!(ran.code, 0, "{ran:?}");
    let derived: Vec<String> = std::fs::read_dir(&metrics)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter_map(|n| {
            let job = n.strip_prefix("crontap-run-")?.strip_suffix(".prom")?;
            Some(job.to_owned())
        })
        .collect();
    let [derived] = &derived[..] else {
        panic!("{derived:?}")
    };
    let crontab = "\
0 1 * * * crontap-run --no-overlap -- /bin/true --full
0 2 * * * /bin/true --full
";
    let out = plan_crontab(crontab, &["--url-dir", "/x"]);
    assert_eq!(
        name_on(wrapped(&out.stdout)[0]),
        format!("{derived}-2"),
        "{}",
        out.stdout
    );
    // Without the wrapped line, the new one would have had it.
    let out = plan_crontab("0 2 * * * /bin/true --full\n", &["--url-dir", "/x"]);
    assert_eq!(name_on(wrapped(&out.stdout)[0]), *derived);
    // The issue's example, by its name.
    let out = plan_crontab(
        "0 1 * * * /usr/local/bin/crontap-run --no-overlap -- /usr/bin/backup --full\n\
         0 2 * * * /usr/bin/backup --full\n",
        &["--url-dir", "/x"],
    );
    assert_eq!(name_on(wrapped(&out.stdout)[0]), "backup-37ffba78-2");
    // Named by CRONTAP_JOB on the line, or by a CRONTAP_JOB line of the crontab in force
    // there (an empty one counts as unset), or by --job.
    for taking in [
        format!("0 1 * * * CRONTAP_JOB={derived} crontap-run -- /opt/z\n"),
        format!("0 1 * * * env CRONTAP_JOB={derived} /opt/crontap-run -- /opt/z\n"),
        format!("CRONTAP_JOB={derived}\n0 1 * * * crontap-run -- /opt/z\nCRONTAP_JOB=\n"),
        format!("0 1 * * * crontap-run --job={derived} -- /opt/z\n"),
    ] {
        let crontab = format!("{taking}0 2 * * * /bin/true --full\n");
        let out = plan_crontab(&crontab, &["--url-dir", "/x"]);
        assert_eq!(
            name_on(wrapped(&out.stdout)[0]),
            format!("{derived}-2"),
            "{crontab}"
        );
    }
    let crontab = format!(
        "CRONTAP_JOB={derived}\nCRONTAP_JOB=\n0 1 * * * crontap-run -- /opt/z\n0 2 * * * /bin/true --full\n"
    );
    let out = plan_crontab(&crontab, &["--url-dir", "/x"]);
    assert_eq!(name_on(wrapped(&out.stdout)[0]), *derived, "{crontab}");
}

/// A line for the shell is named after the program it runs, never after the shell.
#[test]
fn a_shell_line_is_named_after_its_program() {
    let crontab = "\
0 1 * * * cd /app && ./sync.sh
0 2 * * * chdir /srv; umask 077; exec /usr/local/bin/report --daily > /var/log/r 2>&1
0 3 * * * . /etc/profile; LANG=C backup.sh \"$HOME\"
0 4 * * * if [ -d /x ]; then /opt/clean; fi
0 5 * * * exit 3
";
    let out = plan_crontab(crontab, &["--url-dir", "/x"]);
    let names: Vec<String> = wrapped(&out.stdout).into_iter().map(name_on).collect();
    let stems: Vec<&str> = names
        .iter()
        .map(|n| n.rsplit_once('-').unwrap().0)
        .collect();
    assert_eq!(
        stems,
        ["sync.sh", "report", "backup.sh", "clean", "exit"],
        "{}",
        out.stdout
    );
}

/// Every builtin and reserved word of dash (dash(1): "Builtins", "Reserved Words") and of
/// bash (bash(1): "SHELL BUILTIN COMMANDS", `compgen -b`, `compgen -k`) sends its line to
/// the shell: none is run as a program.
#[test]
fn every_dash_and_bash_builtin_goes_to_the_shell() {
    const DASH: &[&str] = &[
        ".", ":", "[", "alias", "bg", "break", "cd", "chdir", "command", "continue", "echo",
        "eval", "exec", "exit", "export", "false", "fc", "fg", "getopts", "hash", "jobs", "kill",
        "local", "printf", "pwd", "read", "readonly", "return", "set", "shift", "test", "times",
        "trap", "true", "type", "ulimit", "umask", "unalias", "unset", "wait",
        // Reserved words.
        "!", "{", "}", "case", "do", "done", "elif", "else", "esac", "fi", "for", "if", "in",
        "then", "until", "while",
    ];
    const BASH: &[&str] = &[
        ".",
        ":",
        "[",
        "alias",
        "bg",
        "bind",
        "break",
        "builtin",
        "caller",
        "cd",
        "command",
        "compgen",
        "complete",
        "compopt",
        "continue",
        "declare",
        "dirs",
        "disown",
        "echo",
        "enable",
        "eval",
        "exec",
        "exit",
        "export",
        "false",
        "fc",
        "fg",
        "getopts",
        "hash",
        "help",
        "history",
        "jobs",
        "kill",
        "let",
        "local",
        "logout",
        "mapfile",
        "popd",
        "printf",
        "pushd",
        "pwd",
        "read",
        "readarray",
        "readonly",
        "return",
        "set",
        "shift",
        "shopt",
        "source",
        "suspend",
        "test",
        "times",
        "trap",
        "true",
        "type",
        "typeset",
        "ulimit",
        "umask",
        "unalias",
        "unset",
        "wait",
        // Reserved words (`compgen -k`).
        "if",
        "then",
        "else",
        "elif",
        "fi",
        "case",
        "esac",
        "for",
        "select",
        "while",
        "until",
        "do",
        "done",
        "in",
        "function",
        "time",
        "{",
        "}",
        "!",
        "[[",
        "]]",
        "coproc",
    ];
    let words: std::collections::BTreeSet<&str> = DASH.iter().chain(BASH).copied().collect();
    let crontab: String = words.iter().map(|w| format!("0 0 * * * {w} x\n")).collect();
    let out = plan_crontab(&crontab, &["--url-dir", "/x"]);
    let lines = wrapped(&out.stdout);
    assert_eq!(lines.len(), words.len(), "{}", out.stdout);
    for (word, line) in words.iter().zip(lines) {
        assert!(
            line.ends_with(&format!(" -- /bin/sh -c '{word} x'")),
            "{word}: {line}"
        );
    }
}

/// cronie's `~` (one value picked when the crontab is loaded: the period is the worst over
/// every value it could pick) and `fri-sun`; a reversed range Debian's cron accepts and
/// never fires on is a warning on its line, the rest of the crontab wrapped.
#[test]
fn cronies_forms_as_cronie_reads_them() {
    let crontab = "\
5,50~52 * * * * /opt/random.sh
0 0 * * fri-sun /opt/weekend.sh
10-5 * * * * /opt/never.sh
10-5,30 * * * * /opt/half-past.sh
~ 3 * * * /opt/any-minute.sh
";
    let out = Crontap::new()
        .args(["plan", "--json", "--tz", "UTC", "--crontab", "-"])
        .stdin(crontab.as_bytes())
        .run();
    assert_eq!(out.code, 0, "{out:?}");
    let list: Vec<Value> = serde_json::from_str(&out.stdout).unwrap();
    let by_command = |c: &str| {
        list.iter()
            .find(|p| p["command"] == c)
            .unwrap_or_else(|| panic!("{c}: {list:?}"))
    };
    // 5 and one of 50, 51, 52: at worst 47 minutes from :05 to :52, 13 from :52 to :05.
    let random = by_command("/opt/random.sh");
    assert_eq!(random["periodMinutes"], 47);
    assert_eq!(random["shortestGapMinutes"], 13);
    // Friday, Saturday, Sunday: Sunday to Friday.
    assert_eq!(by_command("/opt/weekend.sh")["periodMinutes"], 5 * 24 * 60);
    assert_eq!(by_command("/opt/half-past.sh")["periodMinutes"], 60);
    assert_eq!(by_command("/opt/any-minute.sh")["periodMinutes"], 24 * 60);
    assert_eq!(list.len(), 4, "the line that never fires is not wrapped");
    let warnings: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.contains("warning:"))
        .collect();
    assert_eq!(warnings.len(), 2, "{}", out.stderr);
    for (warning, line) in warnings.iter().zip(["line 3", "line 4"]) {
        assert!(
            warning.contains(line) && warning.contains("minute range 10-5 ends before it starts"),
            "{warning}"
        );
    }
    let text = plan_crontab(crontab, &["--url-dir", "/x"]).stdout;
    assert!(
        text.contains("ends before it starts, which Debian's cron accepts and never matches)\n10-5 * * * * /opt/never.sh\n"),
        "{text}"
    );
}

/// `CRON_TZ` sets the zone of the lines after it, with a warning naming its line that
/// Debian's and Ubuntu's cron ignore it.
#[test]
fn cron_tz_is_followed_with_a_warning() {
    let crontab = "0 0 * * * /bin/true a\nCRON_TZ=Europe/Berlin\n0 0 * * * /bin/true b\n";
    let out = plan_crontab(crontab, &["--url-dir", "/x"]);
    let warning = out.stderr.lines().find(|l| l.contains("CRON_TZ")).unwrap();
    assert!(
        warning.contains("--crontab line 2") && warning.contains("Debian's and Ubuntu's cron"),
        "{warning}"
    );
    assert!(out.stdout.contains("CRON_TZ=Europe/Berlin\n"), "kept");
    let out = plan_crontab("0 0 * * * /bin/true a\n", &["--url-dir", "/x"]);
    assert!(!out.stderr.contains("CRON_TZ"), "{}", out.stderr);
}
