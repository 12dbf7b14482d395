//! How crontap-run finds and starts the command: as `execvp(3)` does, so prefixing a working
//! crontab line with `crontap-run --` never changes what it runs. Each case runs the same
//! command, `PATH` and working directory through coreutils `env` on this machine and through
//! crontap-run, and requires the same result.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use crate::harness::{Crontap, Receiver};

/// How one start of a command went.
#[derive(Debug, PartialEq)]
struct Started {
    code: i32,
    stdout: String,
    /// Why it could not be started (`No such file or directory`), if it could not.
    error: Option<String>,
}

/// Runs `command` from `cwd` with `PATH` set to `path`, through `env` and through
/// crontap-run; requires both to do the same and returns what they did. crontap-run's
/// failure summary must name the program as it was written.
fn same_as_env(cwd: &Path, path: &str, command: &[&str]) -> Started {
    let out = Command::new("/usr/bin/env")
        .args(command)
        .env("PATH", path)
        .current_dir(cwd)
        .output()
        .expect("run env");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let by_env = Started {
        code: out.status.code().expect("env exited"),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        // `/usr/bin/env: ‘job’: No such file or directory`
        error: stderr
            .lines()
            .find(|l| l.starts_with("/usr/bin/env: "))
            .and_then(|l| l.rsplit(": ").next())
            .map(str::to_owned),
    };

    let receiver = Receiver::start();
    let mut crontap = Crontap::with_url(&receiver.url());
    crontap.arg("--").args(command).env("PATH", path);
    crontap.command().current_dir(cwd);
    let out = crontap.run();
    let msg = receiver.received().first().and_then(|r| r.msg());
    let by_crontap = Started {
        code: out.code,
        stdout: out.stdout,
        error: msg.and_then(|m| {
            m.strip_prefix(&format!("could not start {}: ", command[0]))
                .map(str::to_owned)
        }),
    };
    assert_eq!(
        by_crontap,
        by_env,
        "crontap-run (left) and env (right) differ on {command:?} with PATH={path:?} in {}",
        cwd.display()
    );
    by_env
}

/// Writes a file with permissions `mode`, creating its directory.
fn file(path: &Path, text: &str, mode: u32) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// A script that says which copy of it ran.
fn job(path: &Path, label: &str) {
    file(path, &format!("#!/bin/sh\necho {label}\n"), 0o755);
}

fn s(path: &Path) -> String {
    path.to_str().expect("a UTF-8 temporary path").to_owned()
}

#[test]
fn a_script_without_a_shebang_runs_with_bin_sh() {
    let dir = tempfile::tempdir().unwrap();
    let rotate = "echo \"$0 [$1] [$2] $#\"\nexit 3\n";
    file(&dir.path().join("rotate.sh"), rotate, 0o755);
    let started = same_as_env(dir.path(), "/usr/bin:/bin", &["./rotate.sh", "a b", "c"]);
    assert_eq!(started.code, 3);
    assert_eq!(started.stdout, "./rotate.sh [a b] [c] 2\n");
}

#[test]
fn a_script_without_a_shebang_found_in_path_runs_with_bin_sh() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    file(&bin.join("rotate.sh"), "echo \"$0 [$1]\"\n", 0o755);
    let path = format!("{}:/usr/bin:/bin", s(&bin));
    let started = same_as_env(dir.path(), &path, &["rotate.sh", "x"]);
    assert_eq!(started.code, 0);
    assert_eq!(started.stdout, format!("{}/rotate.sh [x]\n", s(&bin)));
}

#[test]
fn a_script_without_a_shebang_keeps_the_group_environment_and_output() {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("rotate.sh");
    // Field 5 of /proc/PID/stat is the process group: the script leads its own.
    let body = "set -- $(cat /proc/$$/stat)\n\
                [ \"$5\" = $$ ] && echo leader\n\
                echo \"attempt $CRONTAP_ATTEMPT\"\n\
                echo 'rotation failed' >&2\n\
                exit 4\n";
    file(&script, body, 0o755);
    let out = Crontap::with_url(&receiver.url())
        .arg("--")
        .arg(&script)
        .run();
    assert_eq!(out.code, 4);
    assert_eq!(out.stdout, "leader\nattempt 1\n");
    assert_eq!(out.stderr, "rotation failed\n");
    let msg = receiver.only().msg().unwrap();
    assert!(msg.starts_with("exit 4 after "), "{msg}");
    assert!(msg.ends_with(": rotation failed"), "{msg}");
}

#[test]
fn not_executable_stays_126_and_missing_stays_127() {
    let dir = tempfile::tempdir().unwrap();
    file(&dir.path().join("rotate.sh"), "echo never\n", 0o644);
    let denied = same_as_env(dir.path(), "/usr/bin:/bin", &["./rotate.sh"]);
    assert_eq!(denied.code, 126);
    assert_eq!(denied.error.as_deref(), Some("Permission denied"));
    let missing = same_as_env(dir.path(), "/usr/bin:/bin", &["./gone.sh"]);
    assert_eq!(missing.code, 127);
    assert_eq!(missing.error.as_deref(), Some("No such file or directory"));
}

#[test]
fn an_empty_path_element_is_the_current_directory() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    let missing = dir.path().join("missing");
    job(&dir.path().join("job"), "cwd");
    job(&bin.join("job"), "bin");
    for path in [
        String::new(),
        format!(":{}", s(&bin)),
        format!("{}::{}", s(&missing), s(&bin)),
        format!("{}:", s(&missing)),
    ] {
        let started = same_as_env(dir.path(), &path, &["job"]);
        assert_eq!(started.stdout, "cwd\n", "PATH={path:?}");
    }
    let started = same_as_env(dir.path(), &format!("{}:", s(&bin)), &["job"]);
    assert_eq!(started.stdout, "bin\n");
}

#[test]
fn a_path_element_that_is_not_a_directory_is_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let not_a_dir = dir.path().join("not-a-dir");
    let bin = dir.path().join("bin");
    file(&not_a_dir, "", 0o755);
    job(&bin.join("job"), "bin");
    let path = format!("{}:{}", s(&not_a_dir), s(&bin));
    let started = same_as_env(dir.path(), &path, &["job"]);
    assert_eq!((started.code, started.stdout.as_str()), (0, "bin\n"));
    // Nowhere else to look: coreutils report ENOTDIR as 126, not as "not found".
    let alone = same_as_env(dir.path(), &s(&not_a_dir), &["job"]);
    assert_eq!(alone.code, 126);
    assert_eq!(alone.error.as_deref(), Some("Not a directory"));
}

#[test]
fn permission_denied_in_one_path_element_and_found_in_a_later_one() {
    let dir = tempfile::tempdir().unwrap();
    let denied = dir.path().join("denied");
    let bin = dir.path().join("bin");
    let missing = dir.path().join("missing");
    // Not executable by anyone, root included.
    file(&denied.join("job"), "#!/bin/sh\necho denied\n", 0o644);
    job(&bin.join("job"), "bin");
    let path = format!("{}:{}", s(&denied), s(&bin));
    let started = same_as_env(dir.path(), &path, &["job"]);
    assert_eq!((started.code, started.stdout.as_str()), (0, "bin\n"));
    // Found nowhere else: the denial is what is reported, not the later "not found".
    let path = format!("{}:{}", s(&denied), s(&missing));
    let started = same_as_env(dir.path(), &path, &["job"]);
    assert_eq!(started.code, 126);
    assert_eq!(started.error.as_deref(), Some("Permission denied"));
}

#[test]
fn a_name_with_a_slash_is_not_searched() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    job(&bin.join("sub/job"), "bin");
    job(&dir.path().join("sub/job"), "cwd");
    let started = same_as_env(dir.path(), &s(&bin), &["sub/job"]);
    assert_eq!((started.code, started.stdout.as_str()), (0, "cwd\n"));
    let started = same_as_env(&elsewhere, &s(&bin), &["sub/job"]);
    assert_eq!(started.code, 127);
    assert_eq!(started.error.as_deref(), Some("No such file or directory"));
}
