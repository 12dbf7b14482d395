//! A TCP proxy on 127.0.0.1 between one crontap-run and its state server, which a test can
//! cut: the way to take one host off the network while others reach the server directly.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

pub struct CutProxy {
    port: u16,
    cut: Arc<AtomicBool>,
    streams: Arc<Mutex<Vec<TcpStream>>>,
}

impl CutProxy {
    /// Forwards connections on a free loopback port to `127.0.0.1:<target>`.
    pub fn start(target: u16) -> CutProxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let cut = Arc::new(AtomicBool::new(false));
        let streams = Arc::new(Mutex::new(Vec::new()));
        let (cut2, streams2) = (Arc::clone(&cut), Arc::clone(&streams));
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { continue };
                if cut2.load(Ordering::SeqCst) {
                    let _ = client.shutdown(Shutdown::Both);
                    continue;
                }
                let Ok(server) = TcpStream::connect(("127.0.0.1", target)) else {
                    continue;
                };
                let mut kept = streams2.lock().unwrap();
                kept.push(client.try_clone().unwrap());
                kept.push(server.try_clone().unwrap());
                pipe(client.try_clone().unwrap(), server.try_clone().unwrap());
                pipe(server, client);
            }
        });
        CutProxy { port, cut, streams }
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// Cuts every connection through the proxy and refuses new ones, for good.
    pub fn cut(&self) {
        self.cut.store(true, Ordering::SeqCst);
        for stream in self.streams.lock().unwrap().drain(..) {
            let _ = stream.shutdown(Shutdown::Both);
        }
    }
}

impl Drop for CutProxy {
    fn drop(&mut self) {
        self.cut();
    }
}

/// Copies `from` to `to` on a thread until either side closes.
fn pipe(mut from: TcpStream, mut to: TcpStream) {
    std::thread::spawn(move || {
        let mut buf = [0u8; 16 * 1024];
        while let Ok(n @ 1..) = from.read(&mut buf) {
            if to.write_all(&buf[..n]).is_err() {
                break;
            }
        }
        let _ = to.shutdown(Shutdown::Both);
    });
}

/// `--on-lease-lost stop`, for any store: host A holds the job through `proxy` with a 3 s
/// lease; the proxy is cut, so A can no longer renew. Host B, which reaches the store at
/// `direct`, tries the job until it runs. A must have stopped its command (SIGTERM), and
/// the command must be gone, before B's starts; A exits 125 and reports the lost lease.
pub fn a_cut_off_holder_stops_before_another_host_starts(
    via_proxy: &str,
    direct: &str,
    proxy: &CutProxy,
    secret: &str,
) {
    use crate::harness::{Crontap, Receiver};
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let pid_a = dir.path().join("pid-a");
    // A loaded test machine may be slow to admit; that is not what this test is about.
    let options = [
        "--state-lease",
        "3s",
        "--state-timeout",
        "60s",
        "--no-overlap",
        "--job",
        "cut",
    ];
    let script_a = format!(
        "echo $$ > '{pid}'; trap 'echo A stopped >> \"{log}\"; exit 0' TERM; echo ready; \
         while :; do sleep 0.05; done",
        pid = pid_a.display(),
        log = log.display()
    );
    let mut a = Crontap::with_url(&receiver.url())
        .arg("--state-dir")
        .arg(dir.path().join("a"))
        .args(["--state-url", via_proxy])
        .args(options)
        .args(["--", "sh", "-c", &script_a])
        .start();
    a.wait_for("ready");
    proxy.cut();

    // B's command notes whether A's is still there (running, not a zombie) when it starts.
    let script_b = format!(
        "s=$(sed 's/.*) //' /proc/$(cat '{pid}')/stat 2>/dev/null | cut -c1); \
         if [ -n \"$s\" ] && [ \"$s\" != Z ]; then echo 'B started beside A' >> \"{log}\"; \
         else echo 'B started' >> \"{log}\"; fi",
        pid = pid_a.display(),
        log = log.display()
    );
    let started = std::time::Instant::now();
    loop {
        let b = Crontap::with_url(&receiver.url())
            .arg("--state-dir")
            .arg(dir.path().join("b"))
            .args(["--state-url", direct])
            .args(options)
            .args(["--", "sh", "-c", &script_b])
            .run();
        assert_eq!(b.code, 0, "{}", b.stderr);
        assert!(!b.stderr.contains(secret));
        if std::fs::read_to_string(&log).is_ok_and(|l| l.contains("B started")) {
            break;
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(30),
            "B never got the job"
        );
    }
    let out = a.finish();
    assert_eq!(out.code, 125, "{}", out.stderr);
    assert!(!out.stderr.contains(secret));
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        "A stopped\nB started\n",
        "A's command must be gone before B's starts"
    );
    let lost = receiver
        .received()
        .into_iter()
        .filter_map(|r| r.msg())
        .find(|m| m.starts_with("lease lost after "));
    assert!(lost.is_some(), "{:?}", receiver.received());
}
