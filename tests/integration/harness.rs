//! The test harness: a heartbeat receiver on 127.0.0.1 and a runner for the real binary.
//!
//! Every run made through [`Crontap::run`] asserts that the heartbeat URL's secret token
//! appears nowhere in what crontap-run printed, so no test can forget that check.

use std::collections::VecDeque;
use std::ffi::OsStr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tiny_http::{Header, Response, Server, StatusCode};

/// The secret part of every heartbeat URL the tests use.
pub const SECRET: &str = "hb-s3cret-7f3a9c2e1d";

/// How the receiver answers one request.
#[derive(Clone, Copy, Debug)]
pub enum Reply {
    Status(u16),
    /// A status with `Retry-After: <seconds>`.
    RetryAfter(u16, u64),
    /// A status with `Retry-After: <HTTP date>`, that many seconds from when it is sent.
    RetryAfterDate(u16, u64),
    /// Accept the request and never answer it.
    Hang,
}

/// One request as the receiver saw it.
#[derive(Clone, Debug)]
pub struct Received {
    /// The request target: path and query, or an absolute URL when sent to a proxy.
    pub target: String,
    pub user_agent: Option<String>,
    pub at: Instant,
}

impl Received {
    /// The decoded `msg` query parameter.
    pub fn msg(&self) -> Option<String> {
        let query = self.target.split_once('?')?.1;
        query
            .split('&')
            .find_map(|pair| pair.strip_prefix("msg="))
            .map(percent_decode)
    }
}

/// A heartbeat receiver that answers from a script, then with 200 for ever.
pub struct Receiver {
    server: Arc<Server>,
    received: Arc<Mutex<Vec<Received>>>,
    thread: Option<JoinHandle<()>>,
}

impl Receiver {
    pub fn start() -> Receiver {
        Receiver::scripted(&[])
    }

    pub fn scripted(script: &[Reply]) -> Receiver {
        let server = Arc::new(Server::http("127.0.0.1:0").expect("bind a loopback port"));
        let received = Arc::new(Mutex::new(Vec::new()));
        let mut script: VecDeque<Reply> = script.iter().copied().collect();
        let (srv, rec) = (Arc::clone(&server), Arc::clone(&received));
        let thread = std::thread::spawn(move || {
            let mut held = Vec::new();
            while let Ok(request) = srv.recv() {
                let user_agent = request
                    .headers()
                    .iter()
                    .find(|h| h.field.equiv("User-Agent"))
                    .map(|h| h.value.to_string());
                rec.lock().unwrap().push(Received {
                    target: request.url().to_owned(),
                    user_agent,
                    at: Instant::now(),
                });
                let _ = match script.pop_front().unwrap_or(Reply::Status(200)) {
                    Reply::Status(code) => request.respond(Response::empty(StatusCode(code))),
                    Reply::RetryAfter(code, secs) => {
                        request.respond(Response::empty(StatusCode(code)).with_header(
                            Header::from_bytes("Retry-After", secs.to_string()).unwrap(),
                        ))
                    }
                    Reply::RetryAfterDate(code, secs) => {
                        let when = std::time::SystemTime::now() + Duration::from_secs(secs);
                        let date = httpdate::fmt_http_date(when);
                        request.respond(
                            Response::empty(StatusCode(code))
                                .with_header(Header::from_bytes("Retry-After", date).unwrap()),
                        )
                    }
                    Reply::Hang => {
                        held.push(request);
                        Ok(())
                    }
                };
            }
        });
        Receiver {
            server,
            received,
            thread: Some(thread),
        }
    }

    pub fn port(&self) -> u16 {
        self.server
            .server_addr()
            .to_ip()
            .expect("an IP listener")
            .port()
    }

    /// `host:port`, as crontap-run names the receiver in its messages.
    pub fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port())
    }

    /// The heartbeat URL: `http://127.0.0.1:<port>/ping/<SECRET>`.
    pub fn url(&self) -> String {
        format!("http://{}/ping/{SECRET}", self.host())
    }

    pub fn received(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }

    /// The only request received; fails if there were none or several.
    pub fn only(&self) -> Received {
        let received = self.received();
        assert_eq!(
            received.len(),
            1,
            "expected exactly one request, got {received:#?}"
        );
        received.into_iter().next().unwrap()
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// A loopback address where nothing listens: the port of a listener just closed.
pub fn refused_url() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    format!("http://127.0.0.1:{port}/ping/{SECRET}")
}

/// A crontap-run invocation being built.
pub struct Crontap {
    command: Command,
    stdin: Option<Input>,
}

/// What the binary reads on stdin; nothing (`/dev/null`) unless set.
enum Input {
    Bytes(Vec<u8>),
    File(std::fs::File),
}

/// What a finished invocation left behind.
#[derive(Debug)]
pub struct Output {
    pub code: i32,
    pub raw_stdout: Vec<u8>,
    pub stdout: String,
    pub raw_stderr: Vec<u8>,
    pub stderr: String,
    pub elapsed: Duration,
}

/// The binary under test.
pub const BINARY: &str = env!("CARGO_BIN_EXE_crontap-run");

/// Variables that would change crontap-run's behaviour if the test runner happened to have
/// them set, besides those its options read ([`crontap_run::cli::env_names`]).
const ISOLATE: &[&str] = &[
    "CRONTAP_HEARTBEAT_URL",
    "CRONTAP_HEARTBEAT_URL_FILE",
    "CRONTAP_LOG",
    "CRONTAP_FAULT",
    "CRONTAP_TIMEOUT",
    "CRONTAP_JOB",
    "CRONTAP_STATE_DIR",
    "CRONTAP_STATE_URL",
    "CRONTAP_STATE_URL_FILE",
    "CRONTAP_PERIOD_TZ",
    "CRONTAP_METRICS_DIR",
    "HTTP_PROXY",
    "http_proxy",
    "HTTPS_PROXY",
    "https_proxy",
    "ALL_PROXY",
    "all_proxy",
    "NO_PROXY",
    "no_proxy",
];

impl Crontap {
    pub fn new() -> Crontap {
        Crontap::at(BINARY)
    }

    /// A run of the binary at `program` (a copy of [`BINARY`] somewhere else).
    pub fn at(program: impl AsRef<OsStr>) -> Crontap {
        let mut command = Command::new(program);
        for name in ISOLATE {
            command.env_remove(name);
        }
        for name in crontap_run::cli::env_names() {
            command.env_remove(name);
        }
        if crate::namespace::inside() {
            crate::namespace::as_nobody(&mut command);
        }
        Crontap {
            command,
            stdin: None,
        }
    }

    /// A run whose heartbeat URL is `url` (in `CRONTAP_HEARTBEAT_URL`).
    pub fn with_url(url: &str) -> Crontap {
        let mut c = Crontap::new();
        c.env("CRONTAP_HEARTBEAT_URL", url);
        c
    }

    pub fn arg(&mut self, arg: impl AsRef<OsStr>) -> &mut Crontap {
        self.command.arg(arg);
        self
    }

    pub fn args<S: AsRef<OsStr>>(&mut self, args: impl IntoIterator<Item = S>) -> &mut Crontap {
        self.command.args(args);
        self
    }

    pub fn env(&mut self, name: &str, value: impl AsRef<OsStr>) -> &mut Crontap {
        self.command.env(name, value);
        self
    }

    pub fn env_remove(&mut self, name: &str) -> &mut Crontap {
        self.command.env_remove(name);
        self
    }

    pub fn stdin(&mut self, data: &[u8]) -> &mut Crontap {
        self.stdin = Some(Input::Bytes(data.to_vec()));
        self
    }

    /// Gives the binary an open file as stdin, as `< file` in a shell.
    pub fn stdin_file(&mut self, file: std::fs::File) -> &mut Crontap {
        self.stdin = Some(Input::File(file));
        self
    }

    /// `crontap-run <options> -- sh -c <script>`.
    pub fn sh(&mut self, script: &str) -> Output {
        self.args(["--", "sh", "-c", script]).run()
    }

    /// The underlying command, for settings the harness has no method for.
    pub fn command(&mut self) -> &mut Command {
        &mut self.command
    }

    /// Starts the binary with the given stdout and stderr, for tests that read them in their
    /// own way; they check for the secret themselves.
    pub fn spawn(&mut self, stdout: impl Into<Stdio>, stderr: impl Into<Stdio>) -> Child {
        self.command
            .stdin(Stdio::null())
            .stdout(stdout)
            .stderr(stderr);
        self.command.spawn().expect("start crontap-run")
    }

    /// Starts the binary with stdout and stderr piped, for tests that act while it runs.
    pub fn start(&mut self) -> Running {
        use std::io::Read;
        let mut child = self.spawn(Stdio::piped(), Stdio::piped());
        let mut pipe = child.stderr.take().unwrap();
        let stderr_seen = Arc::new(Mutex::new(String::new()));
        let seen = Arc::clone(&stderr_seen);
        let stderr = std::thread::spawn(move || {
            let mut chunk = [0; 4096];
            while let Ok(n @ 1..) = pipe.read(&mut chunk) {
                seen.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&chunk[..n]));
            }
        });
        let mut lines = std::io::BufReader::new(child.stdout.take().unwrap());
        let (tx, stdout) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            use std::io::BufRead;
            loop {
                let mut line = String::new();
                match lines.read_line(&mut line) {
                    Ok(1..) if tx.send(line).is_ok() => {}
                    _ => return,
                }
            }
        });
        Running {
            child,
            stdout,
            seen: String::new(),
            stderr,
            stderr_seen,
            started: Instant::now(),
        }
    }

    /// Runs the binary to completion and checks that the secret was not printed.
    pub fn run(&mut self) -> Output {
        let output = self.run_raw();
        assert_no_secret(&output.stdout, "stdout");
        assert_no_secret(&output.stderr, "stderr");
        output
    }

    /// Runs the binary; for tests that check the secret themselves.
    pub fn run_raw(&mut self) -> Output {
        use std::io::Write;
        let (stdin, bytes) = match self.stdin.take() {
            None => (Stdio::null(), None),
            Some(Input::Bytes(data)) => (Stdio::piped(), Some(data)),
            Some(Input::File(file)) => (Stdio::from(file), None),
        };
        self.command
            .stdin(stdin)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let started = Instant::now();
        let mut child = self.command.spawn().expect("start crontap-run");
        if let Some(data) = bytes {
            // A run that ends without reading its input (refused with 125, say) closes the
            // pipe: what it did with the input is for the test to assert, not the write.
            match child.stdin.take().unwrap().write_all(&data) {
                Err(err) if err.kind() == std::io::ErrorKind::BrokenPipe => {}
                written => written.unwrap(),
            }
        }
        let out = child.wait_with_output().expect("wait for crontap-run");
        Output {
            code: out.status.code().expect("crontap-run exited normally"),
            raw_stdout: out.stdout.clone(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            raw_stderr: out.stderr,
            elapsed: started.elapsed(),
        }
    }
}

/// Gives SIGINT, SIGQUIT and SIGHUP their default disposition: a test runner started in
/// the background by a shell (or under `nohup`) has them ignored, and crontap-run rightly does not forward signals
/// it was started with ignored.
pub fn default_signals() -> std::io::Result<()> {
    use nix::sys::signal::{SigHandler, Signal, signal};
    for sig in [Signal::SIGINT, Signal::SIGQUIT, Signal::SIGHUP] {
        // SAFETY: SIG_DFL installs no handler code.
        unsafe { signal(sig, SigHandler::SigDfl) }?;
    }
    Ok(())
}

pub fn assert_no_secret(text: &str, what: &str) {
    assert!(
        !text.contains(SECRET),
        "the heartbeat URL's secret leaked into {what}:\n{text}"
    );
}

fn percent_decode(s: &str) -> String {
    assert!(
        !s.contains('+'),
        "msg must be percent-encoded, not form-encoded: {s}"
    );
    percent_encoding::percent_decode_str(s)
        .decode_utf8()
        .expect("msg is UTF-8")
        .into_owned()
}

/// A crontap-run that is still running (see [`Crontap::start`]).
pub struct Running {
    child: Child,
    /// Lines of stdout, read by a thread so that waiting for one can time out.
    stdout: std::sync::mpsc::Receiver<String>,
    seen: String,
    stderr: JoinHandle<()>,
    stderr_seen: Arc<Mutex<String>>,
    started: Instant,
}

impl Running {
    pub fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// Reads the command's output until a line equal to `marker`: the command's signal that
    /// it is ready for what the test does next. Panics if the output ends first, or if the
    /// marker has not come within [`MARKER_WAIT`] (so a regression fails instead of hanging).
    pub fn wait_for(&mut self, marker: &str) {
        let deadline = Instant::now() + MARKER_WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = match self.stdout.recv_timeout(left) {
                Ok(line) => line,
                Err(err) => {
                    let _ = self.child.kill();
                    panic!(
                        "no {marker:?} line ({err}); saw {:?}; stderr {:?}",
                        self.seen,
                        self.stderr_so_far()
                    );
                }
            };
            self.seen.push_str(&line);
            if line.trim_end() == marker {
                return;
            }
        }
    }

    /// What crontap-run has printed on stderr so far.
    pub fn stderr_so_far(&self) -> String {
        self.stderr_seen.lock().unwrap().clone()
    }

    /// Waits until crontap-run's stderr shows `line` (its debug log says where it is);
    /// panics if it has not within [`MARKER_WAIT`].
    pub fn wait_for_log(&self, line: &str) {
        assert!(
            eventually(MARKER_WAIT, || self.stderr_so_far().contains(line)),
            "never logged {line:?}: {}",
            self.stderr_so_far()
        );
    }

    /// Sends a signal to crontap-run itself.
    pub fn signal(&self, signal: nix::sys::signal::Signal) {
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(self.pid()), signal).unwrap();
    }

    /// Waits for crontap-run to end and checks that the secret was not printed.
    pub fn finish(mut self) -> Output {
        for line in self.stdout.iter() {
            self.seen.push_str(&line);
        }
        let status = self.child.wait().unwrap();
        self.stderr.join().unwrap();
        let stderr = std::mem::take(&mut *self.stderr_seen.lock().unwrap());
        assert_no_secret(&self.seen, "stdout");
        assert_no_secret(&stderr, "stderr");
        Output {
            code: status.code().expect("crontap-run exited normally"),
            raw_stdout: self.seen.clone().into_bytes(),
            stdout: self.seen,
            raw_stderr: stderr.clone().into_bytes(),
            stderr,
            elapsed: self.started.elapsed(),
        }
    }
}

/// The longest [`Running::wait_for`] waits for a readiness marker.
pub const MARKER_WAIT: Duration = Duration::from_secs(60);

/// The first of `programs` found on PATH, for a test that needs a program from outside the
/// Rust toolchain (the feature `external-tests`). Without any of them the test fails, naming
/// the Debian package that has it: such a test never passes by skipping.
#[cfg(feature = "external-tests")]
pub fn require(programs: &[&str], package: &str) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH").unwrap_or_default();
    programs
        .iter()
        .flat_map(|p| std::env::split_paths(&path).map(move |dir| dir.join(p)))
        .find(|candidate| {
            std::fs::metadata(candidate)
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
        .unwrap_or_else(|| {
            panic!(
                "this test needs {} on PATH, from the Debian package {package} \
                 (apt-get install {package}; .ci/run installs it)",
                programs.join(" or ")
            )
        })
}

/// Polls `check` until it holds or `limit` passes; for conditions with no event to wait on
/// (a process disappearing from /proc). Returns whether it held.
pub fn eventually(limit: Duration, mut check: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if check() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    check()
}

/// Whether a process exists and is not a zombie.
/// The process id a job wrote to `path`, once the file is there.
/// The process id a job wrote to `path` (`echo $$ > path`): the shell creates the file before
/// it writes, so the file is read until it holds a whole line, not merely once it exists.
pub fn read_pid(path: &Path) -> String {
    let whole = || {
        std::fs::read_to_string(path)
            .ok()
            .filter(|text| text.ends_with('\n') && text.trim().parse::<u32>().is_ok())
    };
    assert!(
        eventually(Duration::from_secs(10), || whole().is_some()),
        "no pid written to {}",
        path.display()
    );
    whole().unwrap().trim().to_owned()
}

pub fn alive(pid: &str) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z'),
        Err(_) => false,
    }
}

/// A tmpfs of a given size mounted at a directory for the life of the value, for a disk
/// that fills up; only in a test's re-run in a namespace of its own
/// ([`crate::namespace::rerun_as_root`]), where the test is root and the mount is its own.
pub struct Tmpfs(std::path::PathBuf);

impl Tmpfs {
    pub fn mount(dir: &Path, size: &str) -> Tmpfs {
        assert!(
            crate::namespace::inside(),
            "a test that mounts starts with namespace::rerun_as_root"
        );
        std::fs::create_dir_all(dir).unwrap();
        let status = Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={size},mode=0700"),
                "tmpfs",
            ])
            .arg(dir)
            .status()
            .expect("mount (util-linux) runs");
        assert!(
            status.success(),
            "cannot mount a tmpfs at {}",
            dir.display()
        );
        Tmpfs(dir.to_owned())
    }

    /// Fills the file system to the last byte.
    pub fn fill(&self) {
        let _ = Command::new("dd")
            .args(["if=/dev/zero", "bs=4k"])
            .arg(format!("of={}", self.0.join("filler").display()))
            .stderr(Stdio::null())
            .status();
    }

    /// Bytes in use on the file system, named files or not.
    pub fn used(&self) -> u64 {
        let stat = nix::sys::statvfs::statvfs(&self.0).unwrap();
        (stat.blocks() - stat.blocks_free()) * stat.fragment_size()
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

/// `nobody`'s uid and gid, for the group `root-tests`: its tests give files to another
/// account, which only root can. Asked for without root, they fail, saying so.
#[cfg(feature = "root-tests")]
pub fn nobody() -> (u32, u32) {
    assert!(
        nix::unistd::geteuid().is_root(),
        "the tests of the feature root-tests give files to another account: run them as \
         root (CI does), or leave the feature out"
    );
    let user = nix::unistd::User::from_name("nobody")
        .unwrap()
        .expect("a user named nobody");
    (user.uid.as_raw(), user.gid.as_raw())
}

#[cfg(feature = "root-tests")]
pub fn chown(path: &Path, (uid, gid): (u32, u32)) {
    std::os::unix::fs::chown(path, Some(uid), Some(gid)).unwrap();
}
