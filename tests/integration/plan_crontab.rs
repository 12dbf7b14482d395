//! `crontap-run plan --crontab`: every job wrapped so that it means what it meant.
//!
//! Each job line, before and after, is run the way cron runs it (crontab(5): the command
//! up to the first `%` not escaped by a backslash, `\%` standing for `%`, goes to the shell
//! `SHELL -c`, `/bin/sh` by default; the rest is its standard input, each `%` a line feed)
//! in a directory of its own, with a stand-in `crontap-run` first on PATH that records its
//! arguments and standard input and then runs the command after `--`. Both must print the
//! same, exit the same and leave the same files; the stand-in must have been given the
//! job's name, its URL file and, for a command that needs the shell, the very text cron
//! would have handed the shell.

use std::collections::BTreeMap;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::harness::{Crontap, Output};

/// Cron's reading of a command field: what the shell runs, and the standard input.
pub(crate) fn cron_split(field: &str) -> (String, Vec<u8>) {
    let mut command = String::new();
    let mut chars = field.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('%') => command.push('%'),
                Some(other) => {
                    command.push('\\');
                    command.push(other);
                }
                None => command.push('\\'),
            },
            '%' => {
                let rest: String = chars.collect();
                return (command, cron_input(&rest));
            }
            c => command.push(c),
        }
    }
    (command, Vec::new())
}

/// The input after the first `%`: `%` is a line feed, `\%` a `%`.
fn cron_input(rest: &str) -> Vec<u8> {
    let mut input = String::new();
    let mut chars = rest.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'%') => {
                chars.next();
                input.push('%');
            }
            '%' => input.push('\n'),
            c => input.push(c),
        }
    }
    input.into_bytes()
}

/// The command field of a job line: after the schedule (five fields, or one `@` macro).
pub(crate) fn command_field(line: &str) -> &str {
    // cronie's `-` before the schedule (the job is not logged).
    let line = line.strip_prefix('-').unwrap_or(line);
    let fields = if line.starts_with('@') { 1 } else { 5 };
    let mut rest = line;
    for _ in 0..fields {
        rest = rest.trim_start_matches([' ', '\t']);
        let end = rest.find([' ', '\t']).unwrap();
        rest = &rest[end..];
    }
    rest.trim_start_matches([' ', '\t'])
}

/// What one run of a job line did.
#[derive(Debug, PartialEq)]
struct Ran {
    stdout: String,
    stderr: String,
    code: Option<i32>,
    /// Every file the job left in its directory, with its content.
    files: BTreeMap<String, String>,
}

/// The stand-in for crontap-run: records its arguments (NUL-terminated) and standard
/// input, then runs what follows `--` with that input.
const STAND_IN: &str = r#"#!/bin/sh
for arg in "$@"; do printf '%s\0' "$arg"; done > "$RECORD/args"
cat > "$RECORD/stdin"
while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do shift; done
shift
exec "$@" < "$RECORD/stdin"
"#;

/// Runs a job line's command field as cron would, with `shell`, in a fresh directory.
fn run_as_cron(field: &str, shell: &str, bin: &Path, record: &Path) -> Ran {
    let (command, input) = cron_split(field);
    let work = tempfile::tempdir().unwrap();
    std::fs::create_dir(work.path().join("sub")).unwrap();
    for name in ["a.txt", "b.txt", "sub/c.txt"] {
        std::fs::write(work.path().join(name), format!("{name}\n")).unwrap();
    }
    let mut child = Command::new(shell)
        .arg("-c")
        .arg(&command)
        .current_dir(work.path())
        .env_clear()
        .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .env("HOME", "/home/cron-user")
        .env("LC_ALL", "C")
        .env("RECORD", record)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&input).unwrap();
    let out = child.wait_with_output().unwrap();
    let mut files = BTreeMap::new();
    for entry in crate::state::entries_under(work.path()) {
        if entry.is_file() {
            let name = entry
                .strip_prefix(work.path())
                .unwrap()
                .display()
                .to_string();
            files.insert(name, std::fs::read_to_string(&entry).unwrap());
        }
    }
    Ran {
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        code: out.status.code(),
        files,
    }
}

/// Job lines with every kind of shell syntax and quoting, and whether each is a simple
/// command (run by crontap-run directly, with these words) rather than one for the shell.
const JOBS: &[(&str, Option<&[&str]>)] = &[
    (
        "0 9 * * 1-5 /bin/echo plain words",
        Some(&["/bin/echo", "plain", "words"]),
    ),
    (
        "0 9 * * 1-5 touch made-by-job",
        Some(&["touch", "made-by-job"]),
    ),
    (
        r"0 9 * * 1-5 /bin/echo 50\% done",
        Some(&["/bin/echo", "50%", "done"]),
    ),
    ("*/15 * * * * cd sub && ls > list.txt; cat c.txt", None),
    ("*/15 * * * * ls *.txt | sort -r >> list.log 2>&1", None),
    ("0 * * * * echo a; echo b || echo c; false && echo d", None),
    (
        r#"0 * * * * echo "double $HOME quoted" 'single $HOME' mix"ed"'ed' \"esc\""#,
        None,
    ),
    (r"0 * * * * echo it\'s a 'don'\''t' test", None),
    (
        "0 * * * * x=5; echo $((x * 2)) $(echo nested) `echo back`",
        None,
    ),
    (
        r"0 * * * * printf '\%s|\%s\n' one 'two  spaces' > out.txt",
        None,
    ),
    (r"0 * * * * date +\%Y >/dev/null && echo date-ok", None),
    (r"0 * * * * printf '\%s\n' 'a\\b' \\backslash", None),
    ("0 * * * * echo ~ ~/x # a comment", None),
    (
        "0 * * * * { echo grouped; echo err >&2; } 2>&1 | tr a-z A-Z",
        None,
    ),
    ("0 * * * * echo\ttab\tseparated\t", None),
    ("0 * * * * FOO=bar env | grep ^FOO=", None),
    ("0 * * * * test -f a.txt", None),
    ("0 * * * * exit 3", None),
    ("0 * * * * [ -d sub ] && echo [b]racket ?.txt", None),
    (
        "0 0 1,15 * * cat%first line%second \\% line%",
        Some(&["cat"]),
    ),
    (
        r"0 0 1,15 * * tr a-z A-Z%hello \%d % world",
        Some(&["tr", "a-z", "A-Z"]),
    ),
    ("@daily sort -r%b%a%c", Some(&["sort", "-r"])),
    (r"@daily /bin/cat%percent \% kept\%", Some(&["/bin/cat"])),
    (r"@hourly /bin/echo trailing backslash \\", None),
    (
        "-0 9 * * 1-5 /bin/echo quiet   ",
        Some(&["/bin/echo", "quiet"]),
    ),
    (
        "0 0 * * *\t/bin/echo\tafter a tab",
        Some(&["/bin/echo", "after", "a", "tab"]),
    ),
    ("0 0 * * * wc -l%a%%b%", Some(&["wc", "-l"])),
    (
        r#"0 0 * * * echo $0 $# "$HOME" "it's" 'say "hi"' a\ b"#,
        None,
    ),
    ("0 0 * * * /bin/echo héllo wörld", None),
    ("0 0 * * * case x in x) echo matched;; esac", None),
    (
        "0 0 * * * if [ -f a.txt ]; then echo yes; else echo no; fi",
        None,
    ),
    ("0 0 * * * cat < a.txt > copy.txt 2> /dev/null", None),
    (r"0 0 * * * echo '100\%' \\\% 50%", None),
];

/// Writes the stand-in into a fresh directory.
pub(crate) fn stand_in(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join("crontap-run");
    std::fs::write(&path, STAND_IN).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// The path a wrapped line names crontap-run by: the binary that ran `plan`, symlinks
/// resolved.
pub(crate) fn own_bin() -> String {
    std::fs::canonicalize(env!("CARGO_BIN_EXE_crontap-run"))
        .unwrap()
        .display()
        .to_string()
}

/// The stand-in's path in `dir`, as `--bin` takes it.
pub(crate) fn stand_in_bin(dir: &Path) -> String {
    dir.join("crontap-run").display().to_string()
}

/// `plan --crontab -` with `crontab` on standard input, which must succeed.
pub(crate) fn plan_crontab(crontab: &str, args: &[&str]) -> Output {
    let out = Crontap::new()
        .args(["plan", "--crontab", "-"])
        .args(args)
        .stdin(crontab.as_bytes())
        .run();
    assert_eq!(out.code, 0, "{}", out.stderr);
    out
}

#[test]
fn every_wrapped_job_does_what_it_did() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    stand_in(&bin);
    let record = dir.path().join("record");
    std::fs::create_dir(&record).unwrap();
    let crontab: String = JOBS.iter().map(|(line, _)| format!("{line}\n")).collect();
    // A quote, a `%` and a blank in the URL directory: quoted and escaped in the line.
    let url_dir = "/etc/cron'tap 100% keys";
    let out = plan_crontab(
        &crontab,
        &["--url-dir", url_dir, "--bin", &stand_in_bin(&bin)],
    );
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), 2 * JOBS.len(), "{}", out.stdout);
    let mut names = Vec::new();
    for (i, (line, simple)) in JOBS.iter().enumerate() {
        let (comment, wrapped) = (lines[2 * i], lines[2 * i + 1]);
        assert!(
            comment.starts_with("# crontap-run plan: heartbeat "),
            "{comment}"
        );
        assert!(
            comment.contains("period ") && comment.contains("grace 1 min"),
            "{comment}"
        );
        let schedule_len = line.len() - command_field(line).len();
        assert_eq!(
            wrapped[..schedule_len],
            line[..schedule_len],
            "schedule kept"
        );

        let before = run_as_cron(command_field(line), "/bin/sh", &bin, &record);
        let _ = std::fs::remove_file(record.join("args"));
        let after = run_as_cron(command_field(wrapped), "/bin/sh", &bin, &record);
        assert_eq!(after, before, "{line}\n=> {wrapped}");

        let args = std::fs::read(record.join("args")).expect("the stand-in ran");
        let args: Vec<String> = args
            .split(|&b| b == 0)
            .filter(|a| !a.is_empty())
            .map(|a| String::from_utf8(a.to_vec()).unwrap())
            .collect();
        let name = args[1].clone();
        assert_eq!(args[0], "--job", "{wrapped}");
        assert_eq!(
            args[2..5],
            ["--url-file", &format!("{url_dir}/{name}.url"), "--"]
        );
        let (command, input) = cron_split(command_field(line));
        let expected: Vec<String> = match simple {
            Some(words) => words.iter().map(|w| (*w).to_owned()).collect(),
            None => vec!["/bin/sh".into(), "-c".into(), command],
        };
        assert_eq!(args[5..], expected[..], "{line}\n=> {wrapped}");
        assert_eq!(
            std::fs::read(record.join("stdin")).unwrap(),
            input,
            "{line}"
        );
        names.push(name);
    }
    let mut unique = names.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), names.len(), "names are unique: {names:?}");
}

#[test]
fn other_lines_are_kept_and_names_are_unique() {
    let crontab = "\
# nightly jobs
MAILTO=ops@example.com
  # an indented comment

PATH = /usr/local/bin:/usr/bin:/bin
@reboot /opt/warm-cache.sh --all
5 4 * * sun crontap-run --job weekly --url-file /etc/crontap/weekly.url -- /opt/weekly.sh
5 4 * * sun /usr/local/bin/crontap-run -- /opt/weekly.sh
0 9 * * 1-5 /opt/import/run.sh --full
30 9 * * 1-5 /opt/import/run.sh --full
";
    let out = plan_crontab(crontab, &[]);
    let expected: Vec<&str> = crontab.lines().collect();
    let lines: Vec<&str> = out.stdout.lines().collect();
    // The unchanged lines, in order, then a comment and the wrapped line for each job.
    assert_eq!(lines[..8], expected[..8], "{}", out.stdout);
    let first = lines[9];
    let second = lines[11];
    let name = |line: &str| line.split(' ').nth(7).unwrap().to_owned();
    let bin = own_bin();
    assert!(
        first.starts_with(&format!("0 9 * * 1-5 {bin} --job run.sh-")),
        "{first}"
    );
    assert!(
        second.starts_with(&format!("30 9 * * 1-5 {bin} --job run.sh-")),
        "{second}"
    );
    let (a, b) = (name(first), name(second));
    assert_eq!(b, format!("{a}-2"), "the same command twice: a second name");
    assert!(first.ends_with(&format!(
        "--url-file /etc/crontap/{a}.url -- /opt/import/run.sh --full"
    )));
    assert!(
        lines[8].contains(&format!("heartbeat {a}: period 4320 min (3 days)")),
        "{}",
        lines[8]
    );
    assert_eq!(lines.len(), 12, "{}", out.stdout);
}

#[test]
fn a_name_an_already_wrapped_line_has_is_not_given_again() {
    let job = "0 9 * * 1-5 /opt/import/run.sh --full\n";
    let alone = plan_crontab(job, &[]);
    let name = alone
        .stdout
        .lines()
        .nth(1)
        .unwrap()
        .split(' ')
        .nth(7)
        .unwrap();
    let crontab = format!("0 1 * * * crontap-run --job {name} -- /opt/import/run.sh --full\n{job}");
    let out = plan_crontab(&crontab, &[]);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines[0], crontab.lines().next().unwrap());
    assert_eq!(
        lines[2].split(' ').nth(7),
        Some(&*format!("{name}-2")),
        "{}",
        out.stdout
    );
}

#[test]
fn variable_lines_as_cron_reads_them_and_names_taken_further_down() {
    let job = "0 9 * * 1-5 /opt/import/run.sh --full\n";
    let alone = plan_crontab(job, &[]);
    let name = alone
        .stdout
        .lines()
        .nth(1)
        .unwrap()
        .split(' ')
        .nth(7)
        .unwrap();
    // cron tries a variable line first: a name (quoted, or up to a blank or `=`), blanks,
    // `=`; even one that starts with a digit. A name a wrapped line further down has (as
    // `--job=NAME`, after an assignment) is not given to a job above it.
    let crontab = format!(
        "9LIVES = cat\n\"QUOTED\" = 'a value'\n{job}\
         0 1 * * * CRONTAP_STATE_DIR=/var/lib/x crontap-run --job={name} -- /opt/import/run.sh --full\n"
    );
    let out = plan_crontab(&crontab, &[]);
    let lines: Vec<&str> = out.stdout.lines().collect();
    let given: Vec<&str> = crontab.lines().collect();
    assert_eq!(lines.len(), 5, "{}", out.stdout);
    assert_eq!(lines[..2], given[..2]);
    assert!(
        lines[2].contains(&format!("heartbeat {name}-2:")),
        "{}",
        lines[2]
    );
    assert!(
        lines[3].contains(&format!("--job {name}-2 ")),
        "{}",
        lines[3]
    );
    assert_eq!(lines[4], given[3], "already wrapped: unchanged");
}

#[test]
fn cron_tz_sets_the_zone_of_the_lines_after_it() {
    let crontab = "\
0 0 * * * /bin/true first
CRON_TZ=Europe/Berlin
0 0 * * * /bin/true second
CRON_TZ='America/New_York'
0 0 * * * /bin/true third
";
    let out = Crontap::new()
        .args(["plan", "--json", "--crontab", "-"])
        .stdin(crontab.as_bytes())
        .run();
    assert_eq!(out.code, 0, "{}", out.stderr);
    let list: Vec<Value> = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(list.len(), 3);
    // The first in the system's zone; the second 25 hours in Berlin (the last Sunday of
    // October), the third in New York too (the first Sunday of November).
    assert_eq!(list[1]["tz"], "Europe/Berlin");
    assert_eq!(list[1]["periodMinutes"], 25 * 60);
    assert!(
        list[1]["longestGap"]["from"]
            .as_str()
            .unwrap()
            .ends_with("+02:00")
    );
    assert_eq!(list[2]["tz"], "America/New_York");
    assert_eq!(list[2]["periodMinutes"], 25 * 60);
    assert!(
        list[2]["longestGap"]["from"]
            .as_str()
            .unwrap()
            .ends_with("-04:00")
    );
    assert_eq!(
        list[0]["tz"],
        list[0]["tz"].as_str().filter(|z| !z.is_empty()).unwrap()
    );
    // --tz gives the zone of the lines before any CRON_TZ: the cron host's.
    let out = Crontap::new()
        .args([
            "plan",
            "--json",
            "--tz",
            "Australia/Lord_Howe",
            "--crontab",
            "-",
        ])
        .stdin(crontab.as_bytes())
        .run();
    let with_tz: Vec<Value> = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(with_tz[0]["tz"], "Australia/Lord_Howe");
    // Half an hour longer the night the clocks go back there.
    assert_eq!(with_tz[0]["periodMinutes"], 1470);
    assert_eq!(
        with_tz[1]["tz"], "Europe/Berlin",
        "CRON_TZ still wins after it"
    );
    for (item, word) in list.iter().zip(["first", "second", "third"]) {
        assert_eq!(item["command"], format!("/bin/true {word}"));
        let name = item["name"].as_str().unwrap();
        assert!(name.starts_with("true-"), "{name}");
        assert_eq!(item["urlFile"], format!("/etc/crontap/{name}.url"));
        assert_eq!(item["graceMinutes"], 1);
        assert_eq!(item["runsRecorded"], 0);
    }
}

#[test]
fn the_system_crontab_format_and_its_shell() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("crontab");
    std::fs::write(
        &path,
        "SHELL=/bin/bash\n17 * * * * root cd / && run-parts --report /etc/cron.hourly\n\
         25 6 * * * backup [[ -d /var ]] && echo bash\n",
    )
    .unwrap();
    let out = Crontap::new()
        .args(["plan", "--system", "--crontab"])
        .arg(&path)
        .run();
    assert_eq!(out.code, 0, "{}", out.stderr);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines[0], "SHELL=/bin/bash");
    assert!(
        lines[2].starts_with(&format!("17 * * * * root {} --job run-parts-", own_bin())),
        "the user field kept, the crontab's shell used: {}",
        lines[2]
    );
    assert!(
        lines[2].ends_with(" -- /bin/bash -c 'cd / && run-parts --report /etc/cron.hourly'"),
        "{}",
        lines[2]
    );
    assert!(
        lines[4].starts_with(&format!("25 6 * * * backup {} --job test-", own_bin())),
        "{}",
        lines[4]
    );
    assert!(
        lines[4].ends_with("-- /bin/bash -c '[[ -d /var ]] && echo bash'"),
        "{}",
        lines[4]
    );
}

#[test]
fn with_shell_bash_the_wrapped_job_runs_in_bash_as_before() {
    let dir = tempfile::tempdir().unwrap();
    let (bin, record) = (dir.path().join("bin"), dir.path().join("record"));
    stand_in(&bin);
    std::fs::create_dir(&record).unwrap();
    // bash syntax that /bin/sh (dash) would not read: cron runs these with bash, before
    // and after, and so must the `-c` crontap-run is given.
    let jobs = [
        "0 * * * * [[ -d sub ]] && echo {a,b}.txt $'tab\\there'",
        "0 * * * * shopt -s nullglob; echo none* end",
        "0 * * * * declare -A m=([k]=v); echo ${m[k]} ${#m[@]}",
    ];
    let crontab = format!("SHELL=/bin/bash\n{}\n", jobs.join("\n"));
    let out = plan_crontab(&crontab, &["--bin", &stand_in_bin(&bin)]);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), 1 + 2 * jobs.len(), "{}", out.stdout);
    for (i, line) in jobs.iter().enumerate() {
        let wrapped = lines[2 + 2 * i];
        let before = run_as_cron(command_field(line), "/bin/bash", &bin, &record);
        let after = run_as_cron(command_field(wrapped), "/bin/bash", &bin, &record);
        assert_eq!(before.code, Some(0), "{line}: {before:?}");
        assert_eq!(after, before, "{line}\n=> {wrapped}");
        let args = std::fs::read(record.join("args")).unwrap();
        let args: Vec<&[u8]> = args.split(|&b| b == 0).collect();
        let command = cron_split(command_field(line)).0;
        assert_eq!(args[5..8], [&b"/bin/bash"[..], b"-c", command.as_bytes()]);
    }
}

#[test]
fn a_bad_line_is_a_usage_error_naming_it() {
    let cases: &[(&str, &str)] = &[
        ("@daily /bin/true\n61 * * * * /bin/true\n", "line 2"),
        ("CRON_TZ=Nowhere/Else\n0 0 * * * /bin/true\n", "CRON_TZ"),
        ("0 0 * * *\n", "line 1"),
        ("just some words\n", "line 1"),
        ("@daily /bin/true\n0 0 * * * /bin/echo a\0b\n", "line 2"),
        ("0 0 * * * /bin/true\nMAILTO\n", "line 2"),
    ];
    for (crontab, named) in cases {
        let out = Crontap::new()
            .args(["plan", "--crontab", "-"])
            .stdin(crontab.as_bytes())
            .run();
        assert_eq!(out.code, 125, "{crontab:?}: {out:?}");
        assert_eq!(out.stdout, "");
        let line = out.stderr.trim_end();
        assert!(!line.contains('\n') && line.contains("--crontab"), "{line}");
        assert!(line.contains(named), "{crontab:?}: {line}");
    }
    let out = Crontap::new()
        .args(["plan", "--crontab", "/nonexistent/crontab"])
        .run();
    assert_eq!(out.code, 125);
    assert!(out.stderr.contains("--crontab"), "{}", out.stderr);
}
