//! A private `redis-server` for a Redis store test: on a free loopback port, without
//! persistence, killed when dropped (and when the test binary dies).

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use nix::sys::signal::Signal;
use redis::Commands;

use crate::harness::eventually;

/// The password of servers started with one; it must never be printed.
pub(crate) const PASSWORD: &str = "rd-pw-5e9c1b7a";

/// A `redis-server` of this test's own, on 127.0.0.1, without persistence.
pub(crate) struct Server {
    pub(crate) child: Child,
    pub(crate) port: u16,
    password: Option<&'static str>,
    _dir: tempfile::TempDir,
}

impl Server {
    pub(crate) fn start() -> Server {
        Server::with(None, None)
    }

    pub(crate) fn with_password() -> Server {
        Server::with(Some(PASSWORD), None)
    }

    /// Starts a server, speaking TLS only when given a certificate and key file; retries on
    /// another port if the one picked was taken in the meantime.
    pub(crate) fn with(password: Option<&'static str>, tls: Option<(&Path, &Path)>) -> Server {
        for _ in 0..5 {
            let dir = tempfile::tempdir().unwrap();
            let port = free_port().to_string();
            let mut command = Command::new("redis-server");
            match tls {
                None => command.args(["--port", &port]),
                Some((cert, key)) => command
                    .args([
                        "--port",
                        "0",
                        "--tls-port",
                        &port,
                        "--tls-auth-clients",
                        "no",
                    ])
                    .arg("--tls-cert-file")
                    .arg(cert)
                    .arg("--tls-key-file")
                    .arg(key)
                    .arg("--tls-ca-cert-file")
                    .arg(cert),
            };
            command
                .args(["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
                .arg("--dir")
                .arg(dir.path());
            if let Some(password) = password {
                command.args(["--requirepass", password]);
            }
            // SAFETY: prctl is async-signal-safe. The server dies with the test's thread.
            unsafe {
                command.pre_exec(|| {
                    nix::sys::prctl::set_pdeathsig(Signal::SIGKILL).map_err(std::io::Error::from)
                });
            }
            let child = command
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("redis-server is installed (apt-get install redis-server)");
            let mut server = Server {
                child,
                port: port.parse().unwrap(),
                password,
                _dir: dir,
            };
            let up = eventually(Duration::from_secs(10), || match tls {
                None => server.ping(),
                Some(_) => std::net::TcpStream::connect(("127.0.0.1", server.port)).is_ok(),
            });
            if up && server.child.try_wait().unwrap().is_none() {
                return server;
            }
        }
        panic!("redis-server did not start");
    }

    /// `redis://[:password@]127.0.0.1:<port>/0`.
    pub(crate) fn url(&self) -> String {
        let auth = self.password.map(|p| format!(":{p}@")).unwrap_or_default();
        format!("redis://{auth}127.0.0.1:{}/0", self.port)
    }

    /// A connection of the test's own, to look at and change what crontap-run stored.
    pub(crate) fn connect(&self) -> redis::Connection {
        redis::Client::open(self.url())
            .unwrap()
            .get_connection_with_timeout(Duration::from_secs(5))
            .unwrap()
    }

    pub(crate) fn ping(&mut self) -> bool {
        let Ok(client) = redis::Client::open(self.url()) else {
            return false;
        };
        let Ok(mut con) = client.get_connection_with_timeout(Duration::from_millis(200)) else {
            return false;
        };
        redis::cmd("PING").query::<String>(&mut con).is_ok()
    }

    pub(crate) fn get(&self, name: &str) -> Option<serde_json::Value> {
        let value: Option<String> = self.connect().get(name).unwrap();
        value.map(|v| serde_json::from_str(&v).unwrap())
    }

    pub(crate) fn pttl(&self, name: &str) -> i64 {
        redis::cmd("PTTL")
            .arg(name)
            .query(&mut self.connect())
            .unwrap()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}
