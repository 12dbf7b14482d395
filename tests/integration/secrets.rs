//! What the job can reach of crontap-run's secrets: neither crontap-run's environment nor its
//! memory (it is non-dumpable), nor the variables that hold them. And the state store URL
//! from a file (`--state-url-file`), with a warning for a password typed on the command line.

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use crate::harness::{BINARY, Crontap, Output, Receiver, SECRET};
use crate::state::line_count;

/// The state store password these tests give crontap-run; it must reach nothing the job sees.
const PASSWORD: &str = "st0re-pw-5e1b9a";

/// A server URL with [`PASSWORD`]. A run that uses no state feature never connects to it, so
/// it works whatever stores the build has.
fn server_url() -> String {
    format!("redis://:{PASSWORD}@127.0.0.1:1/0")
}

/// Who runs crontap-run in the test of what the job can read: the kernel lets root read every
/// process's environment, so a test run as root (as CI's is) runs it as `nobody`.
struct User {
    uid: u32,
    gid: u32,
    switch: bool,
}

impl User {
    fn unprivileged() -> User {
        if !nix::unistd::geteuid().is_root() {
            let (uid, gid) = (nix::unistd::getuid(), nix::unistd::getgid());
            return User {
                uid: uid.as_raw(),
                gid: gid.as_raw(),
                switch: false,
            };
        }
        let nobody = nix::unistd::User::from_name("nobody")
            .unwrap()
            .expect("a user named nobody");
        User {
            uid: nobody.uid.as_raw(),
            gid: nobody.gid.as_raw(),
            switch: true,
        }
    }

    /// Makes `command` run as this user (std drops root's supplementary groups as well).
    fn apply(&self, command: &mut Command) {
        if self.switch {
            command.uid(self.uid).gid(self.gid);
        }
    }
}

/// A directory under /tmp that `user` can use: the binary is copied there, since the one
/// cargo built may sit where `nobody` cannot reach it. The copy is readable: the kernel
/// makes a process whose program its user cannot read non-dumpable by itself, which would
/// let the test pass without crontap-run doing anything.
struct Place {
    dir: tempfile::TempDir,
    binary: PathBuf,
}

impl Place {
    fn new(user: &User) -> Place {
        let dir = tempfile::Builder::new()
            .prefix("crontap-secrets-")
            .tempdir_in("/tmp")
            .unwrap();
        set_mode(dir.path(), 0o755);
        let binary = dir.path().join("crontap-run");
        std::fs::copy(BINARY, &binary).unwrap();
        set_mode(&binary, 0o755);
        wait_until_runnable(&binary);
        // The state directory for --no-overlap, writable by the user alone.
        let state = dir.path().join("state");
        std::fs::create_dir(&state).unwrap();
        std::os::unix::fs::chown(&state, Some(user.uid), Some(user.gid)).unwrap();
        Place { dir, binary }
    }

    fn state(&self) -> PathBuf {
        self.dir.path().join("state")
    }
}

/// Waits until a fresh copy of a program can be run. A process that another test forks while
/// the copy is open for writing holds it open until that process executes its own program,
/// and until then running the copy fails with ETXTBSY.
fn wait_until_runnable(program: &Path) {
    for _ in 0..250 {
        match Command::new(program)
            .arg("--version")
            .stdout(Stdio::null())
            .status()
        {
            Err(err) if err.kind() == std::io::ErrorKind::ExecutableFileBusy => {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            status => {
                assert!(status.unwrap().success());
                return;
            }
        }
    }
    panic!("{} stayed busy", program.display());
}

fn set_mode(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// A process of the same user with the same secrets in its environment, left dumpable: what
/// crontap-run would be without its protection. Killed when dropped.
struct Sibling(Child);

impl Sibling {
    fn start(user: &User, url: &str) -> Sibling {
        let mut command = Command::new("sleep");
        command
            .arg("120")
            .env("CRONTAP_HEARTBEAT_URL", url)
            .env("CRONTAP_STATE_URL", server_url())
            .stdin(Stdio::null());
        user.apply(&mut command);
        Sibling(command.spawn().expect("start sleep"))
    }
}

impl Drop for Sibling {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The job: for crontap-run (its parent), the lifeline (crontap-run's other child), the
/// sibling and itself, whether the environment can be opened and holds a secret, whether the
/// memory can be opened, and who owns the environment file (root for a non-dumpable
/// process). Then the attack itself, whose output the test checks for secrets.
fn probe_script(sibling: u32) -> String {
    format!(
        r#"
probe() {{
    if ! (exec 3<"/proc/$1/environ") 2>/dev/null; then echo "$2 environ: denied"
    elif tr '\0' '\n' <"/proc/$1/environ" | grep -q -e '{SECRET}' -e '{PASSWORD}'; then
        echo "$2 environ: secret"
    else echo "$2 environ: clean"
    fi
    if (exec 3<"/proc/$1/mem") 2>/dev/null; then echo "$2 mem: open"; else echo "$2 mem: denied"; fi
    echo "$2 owner: $(stat -c %u "/proc/$1/environ")"
}}
lifeline=none
for stat in /proc/[0-9]*/stat; do
    read -r pid comm state ppid rest <"$stat" 2>/dev/null || continue
    if [ "$ppid" = "$PPID" ] && [ "$pid" != "$$" ]; then lifeline=$pid; fi
done
probe "$PPID" crontap-run
if [ "$lifeline" = none ]; then echo "lifeline: none"; else probe "$lifeline" lifeline; fi
probe {sibling} sibling
probe "$$" job
cat "/proc/$PPID/environ"
echo "cat exited $?"
"#
    )
}

#[test]
fn the_job_cannot_read_crontap_runs_environment_or_memory() {
    let user = User::unprivileged();
    let place = Place::new(&user);
    let receiver = Receiver::start();
    let sibling = Sibling::start(&user, &receiver.url());
    let uid = user.uid.to_string();

    // Twice: with the state store's password in the environment (a run that uses no state
    // feature never connects), and with --no-overlap, whose lifeline is a fork of
    // crontap-run that lives as long as the job.
    for lifeline in [false, true] {
        let mut crontap = Crontap::at(&place.binary);
        crontap.env("CRONTAP_HEARTBEAT_URL", receiver.url());
        match lifeline {
            false => crontap.env("CRONTAP_STATE_URL", server_url()),
            true => crontap
                .arg("--no-overlap")
                .arg("--state-dir")
                .arg(place.state()),
        };
        // Anywhere the user can reach: the test's own directory may be private.
        crontap.command().current_dir("/");
        user.apply(crontap.command());
        let out = crontap.sh(&probe_script(sibling.0.id()));

        assert_eq!(out.code, 0, "{}", out.stderr);
        assert!(!out.stdout.contains(PASSWORD), "{}", out.stdout);
        assert!(!out.stderr.contains(PASSWORD), "{}", out.stderr);
        let lines: Vec<&str> = out.stdout.lines().collect();
        let expect =
            |line: String| assert!(lines.contains(&line.as_str()), "{line:?} in {lines:#?}");
        // The control: the job can read a dumpable process of its user, secrets and all.
        expect("sibling environ: secret".into());
        expect("sibling mem: open".into());
        expect(format!("sibling owner: {uid}"));
        // crontap-run, and the lifeline forked from it, are out of its reach.
        let mut unreachable = vec!["crontap-run"];
        match lifeline {
            true => unreachable.push("lifeline"),
            false => expect("lifeline: none".into()),
        }
        for who in unreachable {
            expect(format!("{who} environ: denied"));
            expect(format!("{who} mem: denied"));
            expect(format!("{who} owner: 0"));
        }
        // The job itself is dumpable again after exec, and its environment holds no secret.
        expect("job environ: clean".into());
        expect("job mem: open".into());
        expect(format!("job owner: {uid}"));
        expect("cat exited 1".into());
        assert!(out.stderr.contains("Permission denied"), "{}", out.stderr);
    }
    // crontap-run had the URL all along: it reported both runs.
    let pings: Vec<String> = receiver.received().into_iter().map(|r| r.target).collect();
    assert_eq!(
        pings,
        [format!("/ping/{SECRET}"), format!("/ping/{SECRET}")]
    );
}

/// A file that holds `text`, in `dir`.
fn secret_file(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// The history file a run of job `nightly` writes in state directory `state`.
fn history(state: &Path) -> PathBuf {
    state.join("history/nightly.jsonl")
}

/// `crontap-run --no-overlap --job nightly` with the heartbeat at `receiver`, printing what
/// the job sees of the state URL variables.
fn stateful_run(receiver: &Receiver, configure: impl FnOnce(&mut Crontap)) -> Output {
    let mut crontap = Crontap::with_url(&receiver.url());
    crontap.args(["--no-overlap", "--job", "nightly"]);
    configure(&mut crontap);
    crontap.sh("echo \"file=${CRONTAP_STATE_URL_FILE-unset} url=${CRONTAP_STATE_URL-unset}\"")
}

#[test]
fn the_state_url_is_read_from_a_file_trimmed_and_kept_from_the_job() {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let file = secret_file(
        dir.path(),
        "state-url",
        &format!("\n  file://{}  \n", state.display()),
    );

    let by_option = stateful_run(&receiver, |c| {
        c.arg("--state-url-file").arg(&file);
    });
    assert_eq!(by_option.code, 0, "{}", by_option.stderr);
    assert_eq!(by_option.stderr, "");
    assert_eq!(by_option.stdout, "file=unset url=unset\n");
    assert_eq!(line_count(&history(&state)), 1);

    let by_env = stateful_run(&receiver, |c| {
        c.env("CRONTAP_STATE_URL_FILE", &file);
    });
    assert_eq!(by_env.code, 0, "{}", by_env.stderr);
    assert_eq!(by_env.stdout, "file=unset url=unset\n");
    assert_eq!(line_count(&history(&state)), 2);

    // `history` finds the same directory through the same file.
    let shown = Crontap::new()
        .arg("history")
        .arg("--state-url-file")
        .arg(&file)
        .arg("--json")
        .run();
    assert_eq!(shown.code, 0, "{}", shown.stderr);
    assert_eq!(shown.stdout.lines().count(), 2, "{}", shown.stdout);
}

#[test]
fn the_command_line_wins_over_the_environment_and_the_file_over_the_variable() {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let url_of = |name: &str| format!("file://{}", dir.path().join(name).display());
    let file_a = secret_file(dir.path(), "a.url", &url_of("a"));
    let file_b = secret_file(dir.path(), "b.url", &url_of("b"));
    let (file_a, file_b) = (file_a.to_str().unwrap(), file_b.to_str().unwrap());

    // The variables and the options given, and the directory that must be used.
    type Given<'a> = &'a [(&'a str, &'a str)];
    let cases: [(Given, Given, &str); 4] = [
        (
            &[("CRONTAP_STATE_URL", &url_of("b"))],
            &[("--state-url-file", file_a)],
            "a",
        ),
        (
            &[("CRONTAP_STATE_URL_FILE", file_b)],
            &[("--state-url", &url_of("a"))],
            "a",
        ),
        (
            &[
                ("CRONTAP_STATE_URL_FILE", file_a),
                ("CRONTAP_STATE_URL", &url_of("b")),
            ],
            &[],
            "a",
        ),
        (
            &[("CRONTAP_STATE_URL_FILE", file_a)],
            &[("--state-url-file", file_b)],
            "b",
        ),
    ];
    for (vars, options, expected) in cases {
        let out = stateful_run(&receiver, |c| {
            for (name, value) in vars {
                c.env(name, value);
            }
            for (option, value) in options {
                c.args([option, value]);
            }
        });
        let what = format!("{vars:?} {options:?}");
        assert_eq!(out.code, 0, "{what}: {}", out.stderr);
        let used = dir.path().join(expected);
        assert!(history(&used).exists(), "{what}: not {expected}");
        std::fs::remove_dir_all(&used).unwrap();
    }

    // Both options at once are one too many.
    let marker = dir.path().join("ran");
    let both = Crontap::new()
        .arg("--state-url")
        .arg(url_of("a"))
        .arg("--state-url-file")
        .arg(file_b)
        .args(["--", "touch"])
        .arg(&marker)
        .run();
    assert_eq!(both.code, 125);
    assert_eq!(both.stderr.lines().count(), 1, "{}", both.stderr);
    assert!(
        both.stderr.contains("--state-url and --state-url-file"),
        "{}",
        both.stderr
    );
    assert!(!marker.exists());
}

#[test]
fn an_unreadable_or_bad_state_url_file_is_refused_naming_it_never_its_contents() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let bad = secret_file(
        dir.path(),
        "bad.url",
        &format!("mysql://app:{PASSWORD}@db/x\n"),
    );
    let missing = dir.path().join("missing.url");
    let empty = secret_file(dir.path(), "empty.url", " \n");
    let cases = [
        (
            Some(&missing),
            None,
            format!("--state-url-file {}: cannot read", missing.display()),
        ),
        (
            None,
            Some(&missing),
            format!(
                "CRONTAP_STATE_URL_FILE ({}): cannot read",
                missing.display()
            ),
        ),
        (
            Some(&bad),
            None,
            format!("--state-url-file {} must be a file://", bad.display()),
        ),
        (
            Some(&empty),
            None,
            format!("--state-url-file {} is empty", empty.display()),
        ),
        // A directory is not a file, even for a run that uses no state.
        (
            Some(&dir.path().to_path_buf()),
            None,
            format!("--state-url-file {}: cannot read", dir.path().display()),
        ),
    ];
    for (option, var, expected) in cases {
        let mut crontap = Crontap::new();
        if let Some(path) = option {
            crontap.arg("--state-url-file").arg(path);
        }
        if let Some(path) = var {
            crontap.env("CRONTAP_STATE_URL_FILE", path);
        }
        let out = crontap.args(["--", "touch"]).arg(&marker).run();
        assert_eq!(out.code, 125, "{expected}: {}", out.stderr);
        assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
        assert!(
            out.stderr.starts_with("crontap-run: error: ") && out.stderr.contains(&expected),
            "{expected}: {}",
            out.stderr
        );
        assert!(!out.stderr.contains(PASSWORD), "{}", out.stderr);
        assert!(!marker.exists(), "{expected}: the command ran");
    }
}

#[test]
fn the_password_from_a_state_url_file_is_never_sent() {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let file = secret_file(dir.path(), "state-url", &server_url());
    let out = Crontap::with_url(&receiver.url())
        .arg("--state-url-file")
        .arg(&file)
        .sh(&format!(
            "echo 'AUTH failed with {PASSWORD} for the queue' >&2; exit 1"
        ));
    assert_eq!(out.code, 1, "{}", out.stderr);
    let sent = receiver.only().msg().unwrap();
    assert!(sent.contains("[REDACTED]"), "{sent}");
    assert!(!sent.contains(PASSWORD), "{sent}");
}

#[test]
fn a_password_typed_as_state_url_is_warned_about_once() {
    let receiver = Receiver::start();
    let warned = Crontap::with_url(&receiver.url())
        .arg("--state-url")
        .arg(server_url())
        .sh("exit 0");
    assert_eq!(warned.code, 0, "{}", warned.stderr);
    assert_eq!(warned.stderr.lines().count(), 1, "{}", warned.stderr);
    assert!(
        warned
            .stderr
            .starts_with("crontap-run: warning: --state-url holds a password")
            && warned.stderr.contains("`ps`")
            && warned.stderr.contains("--state-url-file")
            && warned.stderr.contains("CRONTAP_STATE_URL_FILE"),
        "{}",
        warned.stderr
    );
    assert!(!warned.stderr.contains(PASSWORD), "{}", warned.stderr);

    // `history` takes the option too, and says the same.
    let dir = tempfile::tempdir().unwrap();
    let history = Crontap::new()
        .args(["history", "--state-dir"])
        .arg(dir.path())
        .arg("--state-url")
        .arg(server_url())
        .run();
    assert_eq!(history.stderr, warned.stderr);

    // No warning for a URL from the environment or a file, or one without a password.
    let file = secret_file(dir.path(), "state-url", &server_url());
    let quiet: [&dyn Fn(&mut Crontap); 5] = [
        &|c| {
            c.env("CRONTAP_STATE_URL", server_url());
        },
        &|c| {
            c.arg("--state-url-file").arg(&file);
        },
        &|c| {
            c.env("CRONTAP_STATE_URL_FILE", &file);
        },
        &|c| {
            c.args(["--state-url", "redis://app@127.0.0.1:1/0"]);
        },
        &|c| {
            c.args(["--state-url", "postgres://127.0.0.1:1/jobs?sslmode=require"]);
        },
    ];
    for (i, configure) in quiet.iter().enumerate() {
        let mut crontap = Crontap::with_url(&receiver.url());
        configure(&mut crontap);
        let out = crontap.sh("exit 0");
        assert_eq!(out.code, 0, "case {i}: {}", out.stderr);
        assert_eq!(out.stderr, "", "case {i}");
    }
}
