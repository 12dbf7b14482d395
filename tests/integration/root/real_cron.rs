//! A crontab `plan --crontab` wrapped, run by Debian's own cron daemon: every job runs
//! with cron's PATH (`/usr/bin:/bin`) and environment, and each job's ping reaches a
//! loopback receiver. Root only: cron runs root's crontab from its spool directory, and
//! the daemon is kept off the machine's own crontabs by mounts in a mount namespace of its
//! own (`unshare -m`), which an ordinary user cannot make with the real root's files. And
//! it needs the program: the group `external-tests` too (Debian package `cron`).

use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::harness::{Receiver, eventually, require};
use crate::plan_crontab::command_field;

/// Cron runs every minute, on the minute: the first run of a job comes within two minute
/// boundaries of the daemon's start (it may start just after one), on a loaded machine a
/// little later.
const DEADLINE: Duration = Duration::from_secs(180);

/// The cron daemon in its own mount namespace, killed when dropped (the test passing or
/// not): `unshare --kill-child` passes the SIGKILL on to cron.
struct Daemon {
    child: Child,
    log: std::path::PathBuf,
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Daemon {
    /// Panics with what it said if cron has exited.
    fn check_running(&mut self) {
        if let Ok(Some(status)) = self.child.try_wait() {
            let mut said = String::new();
            let _ = std::fs::File::open(&self.log).and_then(|mut f| f.read_to_string(&mut said));
            panic!("cron exited ({status}): {said}");
        }
    }
}

/// What the namespace's shell does before it becomes cron: an empty spool directory that
/// holds only the test's crontab for root, and an empty /etc/crontab, /etc/cron.d and /run
/// (cron's pid file), so the machine's own jobs neither run nor see this cron. The mounts
/// are private to the namespace and go with it.
const ISOLATE: &str = r#"set -eu
mount -t tmpfs -o mode=1730 tmpfs /var/spool/cron/crontabs
chgrp crontab /var/spool/cron/crontabs 2>/dev/null || true
install -m 600 -o root -g root "$CRONTAB" /var/spool/cron/crontabs/root
if [ -e /etc/crontab ]; then mount --bind "$EMPTY" /etc/crontab; fi
mount -t tmpfs -o mode=755 tmpfs /etc/cron.d
mount -t tmpfs -o mode=755 tmpfs /run
exec "$CRON" -f
"#;

fn start_cron(cron: &Path, dir: &Path, crontab: &Path) -> Daemon {
    let empty = dir.join("empty-crontab");
    std::fs::write(&empty, "").unwrap();
    let log = dir.join("cron.log");
    let out = std::fs::File::create(&log).unwrap();
    let child = Command::new("unshare")
        .args([
            "--mount",
            "--propagation",
            "private",
            "--fork",
            "--kill-child=SIGKILL",
        ])
        .args(["--", "/bin/sh", "-c", ISOLATE])
        .env_clear()
        .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
        .env("CRONTAB", crontab)
        .env("EMPTY", &empty)
        .env("CRON", cron)
        .stdin(Stdio::null())
        .stdout(out.try_clone().unwrap())
        .stderr(out)
        .spawn()
        .expect("unshare (util-linux) runs");
    Daemon { child, log }
}

/// Every wrapped line runs under Debian's cron and pings: a simple command, one whose
/// standard input is cron's `%` text (it succeeds only if it reads it), a `cd … &&` line
/// (it succeeds only in that directory), a builtin, and a job that exits 3 (a fail ping).
#[test]
fn debians_cron_runs_every_wrapped_line_and_each_pings() {
    assert!(
        nix::unistd::geteuid().is_root(),
        "this test runs root's crontab in a cron daemon of its own: run it as root (CI does), \
         or leave the feature root-tests out"
    );
    let cron = require(&["cron"], "cron");
    let dir = tempfile::tempdir().unwrap();
    // The binary where cron's root may run it, and `plan` run from there: the wrapped lines
    // name the path `plan` wrote.
    let bin_dir = dir.path().join("bin");
    std::fs::create_dir(&bin_dir).unwrap();
    let bin = bin_dir.join("crontap-run");
    std::fs::copy(env!("CARGO_BIN_EXE_crontap-run"), &bin).unwrap();
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    std::fs::write(work.join("marker"), "").unwrap();
    let url_dir = dir.path().join("urls");
    std::fs::create_dir(&url_dir).unwrap();

    let jobs = [
        ("simple", "* * * * * /bin/true plain".to_owned()),
        ("input", "* * * * * grep -q hello%hello world%".to_owned()),
        (
            "cd",
            format!("* * * * * cd {} && test -f marker", work.display()),
        ),
        ("builtin", "* * * * * umask 077 && : done".to_owned()),
        ("fails", "* * * * * exit 3".to_owned()),
    ];
    let given = dir.path().join("given");
    let lines: Vec<&str> = jobs.iter().map(|(_, line)| line.as_str()).collect();
    std::fs::write(&given, format!("MAILTO=\"\"\n{}\n", lines.join("\n"))).unwrap();
    let out = Command::new(&bin)
        .args(["plan", "--crontab"])
        .arg(&given)
        .arg("--url-dir")
        .arg(&url_dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let wrapped: Vec<&str> = stdout.lines().filter(|l| l.contains(" --job ")).collect();
    assert_eq!(wrapped.len(), jobs.len(), "{stdout}");

    let receiver = Receiver::start();
    let mut names = Vec::new();
    for ((what, _), line) in jobs.iter().zip(&wrapped) {
        assert!(
            command_field(line).starts_with(&format!("{} --job ", bin.display())),
            "{line}"
        );
        let name = line
            .split(' ')
            .skip_while(|w| *w != "--job")
            .nth(1)
            .unwrap();
        let url_file = url_dir.join(format!("{name}.url"));
        std::fs::write(
            &url_file,
            format!("http://{}/ping/{what}\n", receiver.host()),
        )
        .unwrap();
        std::fs::set_permissions(&url_file, std::fs::Permissions::from_mode(0o600)).unwrap();
        names.push(*what);
    }
    let crontab = dir.path().join("wrapped");
    std::fs::write(&crontab, &stdout).unwrap();

    let mut daemon = start_cron(&cron, dir.path(), &crontab);
    let pinged = |what: &str| {
        receiver
            .received()
            .into_iter()
            .find(|r| r.target.starts_with(&format!("/ping/{what}")))
    };
    let all = eventually(DEADLINE, || {
        daemon.check_running();
        names.iter().all(|what| pinged(what).is_some())
    });
    let received: Vec<String> = receiver.received().into_iter().map(|r| r.target).collect();
    assert!(
        all,
        "not every job pinged within {DEADLINE:?}: {received:?}\n{stdout}"
    );
    drop(daemon);
    for what in ["simple", "input", "cd", "builtin"] {
        assert_eq!(
            pinged(what).unwrap().target,
            format!("/ping/{what}"),
            "{what} succeeds under cron: {received:?}"
        );
    }
    let failed = pinged("fails").unwrap();
    assert!(failed.target.starts_with("/ping/fails/fail?"), "{failed:?}");
    assert!(
        failed.msg().is_some_and(|m| m.contains("exit 3")),
        "{failed:?}"
    );
}
