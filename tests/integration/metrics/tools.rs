//! The metrics files read by the real tools (feature `external-tests`): `promtool check
//! metrics` from the Debian package `prometheus`, and a `prometheus-node-exporter` serving
//! them through its textfile collector on a loopback port.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use super::{assert_two_jobs_values, two_jobs, value};
use crate::harness::{eventually, require};

/// `promtool check metrics` on `file`: its exit status and what it said.
fn promtool(promtool: &Path, file: &Path) -> (bool, String) {
    let out = Command::new(promtool)
        .args(["check", "metrics"])
        .stdin(std::fs::File::open(file).unwrap())
        .output()
        .unwrap();
    let said =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.success(), said)
}

/// A node_exporter serving only the textfile collector for `dir`, killed on drop.
struct NodeExporter {
    child: Child,
    port: u16,
}

impl NodeExporter {
    fn start(program: &Path, dir: &Path) -> NodeExporter {
        let port = {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            listener.local_addr().unwrap().port()
        };
        let child = Command::new(program)
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .arg("--collector.disable-defaults")
            .arg("--collector.textfile")
            .arg(format!("--collector.textfile.directory={}", dir.display()))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let exporter = NodeExporter { child, port };
        assert!(
            eventually(Duration::from_secs(30), || exporter.scrape().is_some()),
            "node_exporter did not come up on port {port}"
        );
        exporter
    }

    /// GET /metrics, the body.
    fn scrape(&self) -> Option<String> {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).ok()?;
        stream
            .write_all(b"GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
            .ok()?;
        let mut response = String::new();
        stream.read_to_string(&mut response).ok()?;
        let (head, body) = response.split_once("\r\n\r\n")?;
        head.starts_with("HTTP/1.0 200")
            .then(|| body.to_owned())
            .or_else(|| head.starts_with("HTTP/1.1 200").then(|| body.to_owned()))
    }
}

impl Drop for NodeExporter {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The two jobs' files pass promtool, and node_exporter serves them, without a scrape
/// error, with the values the runs produced.
#[test]
fn promtool_passes_the_files_and_node_exporter_serves_them() {
    let promtool_program = require(&["promtool"], "prometheus");
    let exporter_program = require(
        &["prometheus-node-exporter", "node_exporter"],
        "prometheus-node-exporter",
    );
    let jobs = two_jobs();
    for file in &jobs.files {
        let (ok, said) = promtool(&promtool_program, &jobs.metrics.join(file));
        assert!(ok, "promtool check metrics {file}: {said}");
    }
    let exporter = NodeExporter::start(&exporter_program, &jobs.metrics);
    let scraped = exporter.scrape().unwrap();
    assert_two_jobs_values(&scraped, &jobs);
    assert_eq!(
        value(&scraped, "node_textfile_scrape_error"),
        Some(0.0),
        "{scraped}"
    );
}
