//! A fleet starting on the hour: 200 crontap-runs at once against one state server, 100
//! `--once-per` keys each started twice and 50 `--no-overlap` jobs. Every key runs exactly
//! once, every job runs, and no run exits 125 for want of a connection. Run against
//! PostgreSQL (alone and through PgBouncer) and Redis, each server of the test's own.
//!
//! 200 runs at once on a two-core machine starve anything else on it, the other store tests
//! and their servers included: these run here, in the load target, after the integration
//! tests and never beside them.

use std::io::Read;
use std::process::{Child, Stdio};
use std::sync::Mutex;

use crate::harness::{Crontap, Receiver, assert_no_secret};

/// One fleet at a time: three at once would be 600 runs on two cores.
static ONE_FLEET: Mutex<()> = Mutex::new(());

fn fleet_at_the_hour(state_url: &str, secret: &str) {
    let _alone = ONE_FLEET
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let mut children = Vec::new();
    let mut spawn = |job: &str, args: &[&str]| {
        let script = format!("echo '{job}' >> '{}'; sleep 0.5", log.display());
        let child = Crontap::with_url(&receiver.url())
            .arg("--state-dir")
            .arg(dir.path().join(format!("host-{}", children.len())))
            // A lease longer than the whole test: 200 hosts queue for 30 connections for
            // up to a minute, and a host whose renewals and completion wait that long for a
            // connection would rightly lose a 60 s lease and let the key run again.
            .args([
                "--state-url",
                state_url,
                "--state-timeout",
                "120s",
                "--state-lease",
                "10m",
                "--job",
                job,
            ])
            .args(args)
            .args(["--timeout", "120s", "--", "sh", "-c", &script])
            .spawn(Stdio::null(), Stdio::piped());
        children.push(child);
    };
    for j in 0..50 {
        spawn(&format!("lock-{j}"), &["--no-overlap"]);
    }
    for k in 0..100 {
        for _ in 0..2 {
            spawn(&format!("key-{k}"), &["--once-per", "1d"]);
        }
    }
    let results: Vec<(i32, String)> = children.iter_mut().map(ended).collect();
    for (code, stderr) in &results {
        assert!(!stderr.contains(secret), "the password leaked: {stderr}");
        assert_eq!(*code, 0, "{stderr}");
    }
    let text = std::fs::read_to_string(&log).unwrap();
    for k in 0..100 {
        let runs = text.lines().filter(|l| *l == format!("key-{k}")).count();
        assert_eq!(runs, 1, "key-{k} ran {runs} times");
    }
    for j in 0..50 {
        assert!(
            text.lines().any(|l| l == format!("lock-{j}")),
            "lock-{j} never ran"
        );
    }
}

/// How a run of the fleet ended: its exit status and what it printed on stderr, which must
/// not hold the heartbeat URL's secret.
fn ended(child: &mut Child) -> (i32, String) {
    let status = child.wait().unwrap();
    let mut stderr = String::new();
    if let Some(mut pipe) = child.stderr.take() {
        pipe.read_to_string(&mut stderr).unwrap();
    }
    assert_no_secret(&stderr, "stderr");
    (status.code().expect("crontap-run exited normally"), stderr)
}

#[cfg(feature = "postgres")]
mod postgres {
    use std::os::unix::process::CommandExt;
    use std::path::Path;
    use std::process::{Child, Command, Stdio};
    use std::time::Duration;

    use super::fleet_at_the_hour;
    use crate::harness::eventually;
    use crate::pg_server::{PASSWORD, free_port, server, server_user};

    /// A fleet on the hour against a database that takes 30 connections at most.
    #[test]
    fn a_fleet_on_the_hour_fits_in_thirty_connections() {
        let db = "store_fleet";
        let url = server().database(db);
        server().psql(
            "postgres",
            &format!("ALTER DATABASE {db} CONNECTION LIMIT 30"),
        );
        // Without TLS: 200 handshakes at once in a debug build would only slow the other tests.
        fleet_at_the_hour(&format!("{url}?sslmode=disable"), PASSWORD);
    }

    /// The same fleet through PgBouncer in transaction pooling.
    #[test]
    fn a_fleet_on_the_hour_through_pgbouncer() {
        let db = "store_bouncer";
        server().database(db);
        let bouncer = Bouncer::start();
        let url = format!(
            "postgres://crontap:{PASSWORD}@127.0.0.1:{}/{db}?sslmode=disable",
            bouncer.port
        );
        fleet_at_the_hour(&url, PASSWORD);
    }

    /// A PgBouncer of the test's own in front of the test server, in transaction pooling: a
    /// server connection is a client's for one transaction only, so nothing may rely on a
    /// session (named prepared statements, session settings). Killed when dropped.
    struct Bouncer {
        child: Child,
        port: u16,
        _dir: tempfile::TempDir,
    }

    impl Bouncer {
        fn start() -> Bouncer {
            let dir = tempfile::tempdir().unwrap();
            let port = free_port();
            let users = dir.path().join("users.txt");
            std::fs::write(&users, format!("\"crontap\" \"{PASSWORD}\"\n")).unwrap();
            let ini = dir.path().join("pgbouncer.ini");
            std::fs::write(
                &ini,
                format!(
                    "[databases]\n* = host=127.0.0.1 port={server}\n\
                     [pgbouncer]\nlisten_addr = 127.0.0.1\nlisten_port = {port}\n\
                     unix_socket_dir =\nauth_type = trust\nauth_file = {users}\n\
                     pool_mode = transaction\nmax_client_conn = 1000\ndefault_pool_size = 20\n\
                     ignore_startup_parameters = extra_float_digits,options\n",
                    server = server().port,
                    users = users.display(),
                ),
            )
            .unwrap();
            let mut command = Command::new(
                ["/usr/sbin/pgbouncer", "/usr/bin/pgbouncer"]
                    .into_iter()
                    .find(|p| Path::new(p).exists())
                    .expect("pgbouncer is installed (apt-get install pgbouncer)"),
            );
            // PgBouncer refuses to run as root.
            if let Some((uid, gid)) = server_user() {
                for path in [dir.path(), &users, &ini] {
                    std::os::unix::fs::chown(path, Some(uid), Some(gid)).unwrap();
                }
                command.uid(uid).gid(gid);
            }
            let child = command
                .arg(&ini)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("start pgbouncer");
            assert!(
                eventually(Duration::from_secs(10), || {
                    std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
                }),
                "pgbouncer did not start"
            );
            Bouncer {
                child,
                port,
                _dir: dir,
            }
        }
    }

    impl Drop for Bouncer {
        fn drop(&mut self) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

#[cfg(feature = "redis")]
mod redis {
    use super::fleet_at_the_hour;
    use crate::redis_server::{PASSWORD, Server};

    /// A fleet on the hour against one Redis server.
    #[test]
    fn a_fleet_on_the_hour_runs_every_key_once() {
        let server = Server::with_password();
        fleet_at_the_hour(&server.url(), PASSWORD);
    }
}
