//! `crontap-run plan` given what a careless operator or an attacker gives it: lines that are
//! already wrapped behind another program, a shell other than `/bin/sh`, a job turned off
//! with a date that never comes, a file that is no crontab, a thousand copies of one line,
//! URL files not written yet, a zone name in the wrong case, control characters.

use std::io::Write;
use std::process::{Command, Stdio};

use crate::harness::Crontap;
use crate::plan_crontab::{
    command_field, cron_split, own_bin, plan_crontab, stand_in, stand_in_bin,
};

/// Lines that run crontap-run already, however they reach it, are left as they are: wrapped
/// again, the outer run would take the heartbeat URL from the inner one.
#[test]
fn lines_that_run_crontap_run_already_are_kept_however_they_reach_it() {
    let crontab = "\
0 2 * * * env FOO=1 crontap-run --job c -- /opt/c.sh
0 1 * * * nice -n 10 crontap-run -- /opt/b.sh
0 3 * * * \"crontap-run\" -- /opt/d.sh
0 4 * * * sudo -u app /usr/local/bin/crontap-run --job=e -- /opt/e.sh
0 5 * * * /opt/f.sh
";
    let out = plan_crontab(crontab, &["--url-dir", "/nonexistent"]);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines[..4], crontab.lines().collect::<Vec<_>>()[..4]);
    assert!(
        lines[4].starts_with("# crontap-run plan: heartbeat "),
        "{}",
        lines[4]
    );
    assert!(
        lines[5].starts_with(&format!("0 5 * * * {} --job ", own_bin())),
        "{}",
        lines[5]
    );
    assert_eq!(lines.len(), 6, "{}", out.stdout);
    // A name such a line uses is not given again: the plain line gets the next one.
    let plain = plan_crontab("0 6 * * * /opt/c.sh\n", &["--url-dir", "/x"]);
    let name = plain
        .stdout
        .lines()
        .last()
        .unwrap()
        .split(' ')
        .nth(7)
        .unwrap()
        .to_owned();
    let crontab = format!(
        "0 2 * * * env FOO=1 crontap-run --job {name} -- /opt/c.sh\n{}",
        "0 6 * * * /opt/c.sh\n"
    );
    let out = plan_crontab(&crontab, &["--url-dir", "/x"]);
    let wrapped = out.stdout.lines().last().unwrap();
    assert!(wrapped.contains(&format!("--job {name}-2 ")), "{wrapped}");
}

/// Runs a command field as cron would with bash and the crontab's `BASH_ENV`, with the
/// stand-in crontap-run first on PATH; what it printed.
fn run_in_bash(field: &str, bash_env: &std::path::Path, bin: &std::path::Path) -> String {
    let (command, _) = cron_split(field);
    let record = tempfile::tempdir().unwrap();
    let mut child = Command::new("/bin/bash")
        .arg("-c")
        .arg(&command)
        .env_clear()
        .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .env("BASH_ENV", bash_env)
        .env("RECORD", record.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"").unwrap();
    let out = child.wait_with_output().unwrap();
    String::from_utf8(out.stdout).unwrap()
}

/// With a shell other than /bin/sh, even a simple command goes to that shell: bash reads
/// `BASH_ENV`, which may define a function of the command's name.
#[test]
fn with_another_shell_a_simple_command_still_goes_through_it() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    stand_in(&bin);
    // A program of the same name as the function, which the function must win over.
    let program = bin.join("show");
    std::fs::write(&program, "#!/bin/sh\necho program \"$@\"\n").unwrap();
    std::fs::set_permissions(
        &program,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let bash_env = dir.path().join("env.sh");
    std::fs::write(&bash_env, "show() { echo function \"$@\"; }\n").unwrap();
    let job = "* * * * * show a b";
    let crontab = format!("SHELL=/bin/bash\nBASH_ENV={}\n{job}\n", bash_env.display());
    let out = plan_crontab(&crontab, &["--url-dir", "/x", "--bin", &stand_in_bin(&bin)]);
    let wrapped = out.stdout.lines().last().unwrap();
    assert!(wrapped.contains("-- /bin/bash -c 'show a b'"), "{wrapped}");
    let before = run_in_bash(command_field(job), &bash_env, &bin);
    assert_eq!(before, "function a b\n");
    assert_eq!(run_in_bash(command_field(wrapped), &bash_env, &bin), before);
}

/// A date that never comes is a common way to turn a job off, and cron takes it: the line
/// stays as it is, under a comment saying why it was not wrapped; the rest is wrapped.
#[test]
fn a_job_turned_off_with_a_date_that_never_comes_is_kept() {
    let crontab = "0 0 31 2 * /opt/disabled.sh\n0 0 * * * /opt/daily.sh\n";
    let out = plan_crontab(crontab, &["--url-dir", "/x"]);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert!(
        lines[0].contains("not wrapped: this schedule never fires"),
        "{}",
        lines[0]
    );
    assert_eq!(lines[1], "0 0 31 2 * /opt/disabled.sh");
    assert!(
        lines[3].starts_with(&format!("0 0 * * * {} --job daily.sh", own_bin())),
        "{}",
        lines[3]
    );
    // Alone, as --schedule, it is still a usage error.
    let out = Crontap::new()
        .args(["plan", "--schedule", "0 0 31 2 *"])
        .run();
    assert_eq!(out.code, 125, "{out:?}");
}

/// What is no crontab (a device that never ends, a log given by mistake) is refused after
/// 1 MiB, in one line, without reading it all.
#[test]
fn what_is_larger_than_any_crontab_is_refused_after_a_bound() {
    let out = Crontap::new()
        .args(["plan", "--crontab", "/dev/zero"])
        .run();
    assert_eq!(out.code, 125, "{out:?}");
    let line = out.stderr.trim_end();
    assert!(!line.contains('\n'), "{line}");
    assert!(
        line.contains("--crontab") && line.contains("larger than 1 MiB"),
        "{line}"
    );
}

/// Thousands of copies of one line each get a name of their own, in order.
#[test]
fn many_copies_of_one_line_each_get_their_own_name() {
    let copies = 3000;
    let crontab = "0 0 * * * /opt/same.sh\n".repeat(copies);
    let out = plan_crontab(&crontab, &["--url-dir", "/x"]);
    let names: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split(' ').nth(7).unwrap())
        .collect();
    assert_eq!(names.len(), copies);
    assert_eq!(names[1], format!("{}-2", names[0]));
    assert_eq!(names[copies - 1], format!("{}-{copies}", names[0]));
    let unique: std::collections::BTreeSet<&str> = names.iter().copied().collect();
    assert_eq!(unique.len(), copies);
}

/// URL files that are not there yet are named in one warning (a run without its URL file
/// stops with exit 125); none is written.
#[test]
fn url_files_not_written_yet_are_named_in_one_warning() {
    let dir = tempfile::tempdir().unwrap();
    let url_dir = dir.path().display().to_string();
    let crontab = "0 0 * * * /opt/a.sh\n0 1 * * * /opt/b.sh\n";
    let out = plan_crontab(crontab, &["--url-dir", &url_dir]);
    assert!(
        out.stderr.contains("2 of the 2 URL files"),
        "{}",
        out.stderr
    );
    let url_files: Vec<String> = out
        .stdout
        .lines()
        .filter_map(|l| l.split(" --url-file ").nth(1))
        .map(|rest| rest.split(' ').next().unwrap().to_owned())
        .collect();
    assert_eq!(url_files.len(), 2, "{}", out.stdout);
    std::fs::write(&url_files[0], "http://127.0.0.1:9/x\n").unwrap();
    let out = plan_crontab(crontab, &["--url-dir", &url_dir]);
    let warning = out.stderr.trim_end();
    assert!(!warning.contains('\n'), "{warning}");
    assert!(warning.contains("1 of the 2 URL files"), "{warning}");
    assert!(warning.contains(&url_files[1]), "{warning}");
    let files: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(files.len(), 1, "plan wrote a file");
    // All there: no warning.
    std::fs::write(&url_files[1], "http://127.0.0.1:9/y\n").unwrap();
    assert_eq!(plan_crontab(crontab, &["--url-dir", &url_dir]).stderr, "");
}

/// Input cron would read otherwise is refused in one line naming the option: a zone name in
/// the wrong case (the C library, and cron, read it as UTC), a line feed or carriage return
/// in a schedule (no field separator to cron), a URL directory that cannot be written on a
/// crontab line and read back the same.
#[test]
fn what_cron_would_read_otherwise_is_refused() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["--schedule", "0 9 * * *", "--tz", "europe/berlin"],
            "Europe/Berlin",
        ),
        (&["--schedule", "0\n0 * * *"], "--schedule"),
        (&["--schedule", "0 0 * * *\r"], "--schedule"),
        (&["--crontab", "-", "--url-dir", "/x\\%d"], "--url-dir"),
    ];
    for (args, named) in cases {
        let mut plan = Crontap::new();
        plan.arg("plan").args(*args);
        // The crontab for `--crontab -`; a schedule reads nothing.
        if args.contains(&"-") {
            plan.stdin(b"0 0 * * * /opt/a.sh\n");
        }
        let out = plan.run();
        assert_eq!(out.code, 125, "{args:?}: {out:?}");
        let line = out.stderr.trim_end();
        assert!(
            !line.contains('\n') && line.contains(named),
            "{args:?}: {line}"
        );
    }
    let out = Crontap::new()
        .args(["plan", "--crontab", "-"])
        .stdin(b"CRON_TZ=europe/berlin\n0 0 * * * /opt/a.sh\n")
        .run();
    assert_eq!(out.code, 125, "{out:?}");
    assert!(out.stderr.contains("CRON_TZ"), "{}", out.stderr);
}
