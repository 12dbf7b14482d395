//! The private PostgreSQL server the store tests use.
//!
//! `initdb` and `postgres` come from the Debian package `postgresql` (found on PATH or under
//! /usr/lib/postgresql/*/bin). The server runs in a temporary directory, as the user `nobody`
//! when the tests run as root (the server refuses root), listening on 127.0.0.1 only, with
//! TLS on and password authentication. One server serves the whole test binary, each test in
//! a database of its own; a wrapper shell stops it and removes its directory when the test
//! binary ends, however it ends (its stdin closes).

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{ChildStdin, Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use crate::harness::eventually;

/// The password of the server's only role, `crontap`; in every URL the tests use.
pub(crate) const PASSWORD: &str = "pg-s3cret-5b8e1f";

/// The private server.
pub(crate) struct Server {
    pub(crate) port: u16,
    /// Data directory, socket, log and certificates.
    pub(crate) dir: PathBuf,
    /// Where `initdb`, `postgres` and `psql` are.
    pub(crate) bin: PathBuf,
    /// The CA that signed the server's certificate, which names `localhost` only.
    pub(crate) ca: PathBuf,
    /// The wrapper's stdin: closed when the test binary ends, which stops the server.
    _lifeline: ChildStdin,
}

static SERVER: OnceLock<Server> = OnceLock::new();

pub(crate) fn server() -> &'static Server {
    SERVER.get_or_init(Server::start)
}

/// The directory holding PostgreSQL's server programs.
fn server_bin() -> PathBuf {
    let has_server = |dir: &Path| dir.join("initdb").is_file() && dir.join("postgres").is_file();
    let on_path = std::env::var_os("PATH")
        .map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
        .unwrap_or_default();
    let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .map(|dirs| dirs.flatten().map(|d| d.path().join("bin")).collect())
        .unwrap_or_default();
    // The newest first: 16 before 15.
    versions.sort_by_key(|dir| {
        std::cmp::Reverse(
            dir.parent()
                .and_then(|v| v.file_name()?.to_str()?.parse::<u32>().ok())
                .unwrap_or(0),
        )
    });
    let found = on_path
        .into_iter()
        .chain(versions)
        .find(|dir| has_server(dir))
        .expect(
            "PostgreSQL's initdb and postgres were found neither on PATH nor under \
             /usr/lib/postgresql/*/bin: install the Debian package postgresql",
        );
    // PATH may hold links to them; psql is beside the real ones.
    std::fs::canonicalize(found.join("initdb"))
        .ok()
        .and_then(|initdb| Some(initdb.parent()?.to_owned()))
        .unwrap_or(found)
}

/// A port free a moment ago on 127.0.0.1.
pub(crate) fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// The user the server runs as: `nobody` when the tests run as root, else the tests' own.
pub(crate) fn server_user() -> Option<(u32, u32)> {
    if !nix::unistd::geteuid().is_root() {
        return None;
    }
    let user = nix::unistd::User::from_name("nobody")
        .unwrap()
        .expect("a user nobody to run the PostgreSQL server as");
    Some((user.uid.as_raw(), user.gid.as_raw()))
}

impl Server {
    pub(crate) fn start() -> Server {
        let bin = server_bin();
        let dir = tempfile::Builder::new()
            .prefix("crontap-pg-")
            .tempdir()
            .unwrap()
            .keep();
        let user = server_user();
        let as_user = |command: &mut Command| {
            if let Some((uid, gid)) = user {
                command.uid(uid).gid(gid);
            }
            command.env("HOME", &dir).env("LC_ALL", "C");
        };
        let write_private = |name: &str, contents: &str| {
            let path = dir.join(name);
            std::fs::write(&path, contents).unwrap();
            std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o600))
                .unwrap();
            if let Some((uid, gid)) = user {
                std::os::unix::fs::chown(&path, Some(uid), Some(gid)).unwrap();
            }
            path
        };
        if let Some((uid, gid)) = user {
            std::os::unix::fs::chown(&dir, Some(uid), Some(gid)).unwrap();
        }

        // A CA, and a certificate it signed for localhost (not for 127.0.0.1).
        let ca_key = rcgen::KeyPair::generate().unwrap();
        let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "crontap-run test CA");
        let ca = rcgen::CertifiedIssuer::self_signed(ca_params, ca_key).unwrap();
        let server_key = rcgen::KeyPair::generate().unwrap();
        let server_cert = rcgen::CertificateParams::new(vec!["localhost".to_owned()])
            .unwrap()
            .signed_by(&server_key, &ca)
            .unwrap();
        let ca_file = write_private("ca.pem", &ca.pem());
        let cert_file = write_private("server.crt", &server_cert.pem());
        let key_file = write_private("server.key", &server_key.serialize_pem());
        let password_file = write_private("password", PASSWORD);

        let data = dir.join("data");
        let mut initdb = Command::new(bin.join("initdb"));
        initdb
            .arg("-D")
            .arg(&data)
            .args(["-U", "crontap", "-E", "UTF8", "--locale=C", "--no-sync"])
            .args(["--auth-local=trust", "--auth-host=scram-sha-256"])
            .arg(format!("--pwfile={}", password_file.display()))
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        as_user(&mut initdb);
        let out = initdb.output().expect("run initdb");
        assert!(
            out.status.success(),
            "initdb failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );

        // A port taken between choosing it and binding it: try another.
        for _ in 0..5 {
            let port = free_port();
            let log = dir.join(format!("server-{port}.log"));
            // The wrapper stops the server and removes the directory once its stdin
            // closes, which happens when the test binary ends, however it ends.
            let script = r#"bin=$1 dir=$2 log=$3; shift 3
"$bin/postgres" "$@" >"$log" 2>&1 &
pid=$!
read -r _
kill -INT "$pid" 2>/dev/null && wait "$pid" && rm -rf "$dir""#;
            let mut wrapper = Command::new("sh");
            wrapper
                .args(["-c", script, "sh"])
                .arg(&bin)
                .arg(&dir)
                .arg(&log)
                .arg("-D")
                .arg(&data)
                .args(["-p", &port.to_string()])
                .arg("-k")
                .arg(&dir)
                .args(["-c", "listen_addresses=127.0.0.1", "-c", "fsync=off"])
                .args(["-c", "ssl=on"])
                .arg("-c")
                .arg(format!("ssl_cert_file={}", cert_file.display()))
                .arg("-c")
                .arg(format!("ssl_key_file={}", key_file.display()))
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .stderr(Stdio::null());
            as_user(&mut wrapper);
            let mut child = wrapper.spawn().expect("start the PostgreSQL server");
            let lifeline = child.stdin.take().unwrap();
            let read_log = || std::fs::read_to_string(&log).unwrap_or_default();
            let settled = eventually(Duration::from_secs(60), || {
                let log = read_log();
                log.contains("ready to accept connections") || log.contains("FATAL")
            });
            let text = read_log();
            if settled && text.contains("ready to accept connections") {
                // Reaped by no one: the wrapper outlives this handle by design.
                std::mem::forget(child);
                return Server {
                    port,
                    dir,
                    bin,
                    ca: ca_file,
                    _lifeline: lifeline,
                };
            }
            assert!(
                text.contains("could not bind"),
                "the PostgreSQL server did not start:\n{text}"
            );
            drop(lifeline);
            let _ = child.wait();
        }
        panic!("no free port for the PostgreSQL server");
    }

    /// Creates the database `name` and returns its URL, password included.
    pub(crate) fn database(&self, name: &str) -> String {
        self.psql("postgres", &format!("CREATE DATABASE \"{name}\""));
        self.url(name, "")
    }

    /// `postgres://crontap:<password>@127.0.0.1:<port>/<db><query>`.
    pub(crate) fn url(&self, db: &str, query: &str) -> String {
        format!(
            "postgres://crontap:{PASSWORD}@127.0.0.1:{}/{db}{query}",
            self.port
        )
    }

    /// Runs `sql` in `db` through the server's socket; returns psql's unaligned output.
    pub(crate) fn psql(&self, db: &str, sql: &str) -> String {
        let out = Command::new(self.bin.join("psql"))
            .args(["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1"])
            .arg("-h")
            .arg(&self.dir)
            .args(["-p", &self.port.to_string(), "-U", "crontap", "-d", db])
            .args(["-c", sql])
            .env_remove("PGPASSWORD")
            .output()
            .expect("run psql");
        assert!(
            out.status.success(),
            "psql {sql}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    }

    /// `status|owner` of a key's row, or "" when there is none.
    pub(crate) fn key_row(&self, db: &str, key: &str) -> String {
        self.psql(
            db,
            &format!(
                "SELECT status || '|' || owner FROM crontap_run_holds \
                 WHERE kind = 'key' AND name = '{key}'"
            ),
        )
    }
}
