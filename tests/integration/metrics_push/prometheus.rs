//! The shipped alert rules and dashboard on the real tools: `promtool check rules` and
//! `promtool test rules` on `packaging/prometheus/`, then Debian's `prometheus`, started on
//! a free loopback port with its own storage and a configuration scraping a real
//! Pushgateway that crontap-run pushed to for three jobs: every query of
//! `packaging/grafana/crontap-run.json` is valid and returns each job that succeeded, and
//! every alert rule evaluates, the failing job's and the late job's alerts firing.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use super::gateway::{Pushgateway, free_port, http_get, push_run};
use crate::harness::{eventually, require};

fn packaging(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("packaging")
        .join(path)
}

/// promtool's verdict on the rules and on their tests.
#[test]
fn promtool_checks_and_tests_the_rules() {
    let promtool = require(&["promtool"], "prometheus");
    let dir = packaging("prometheus");
    for args in [
        ["check", "rules", "crontap-run.rules.yml"],
        ["test", "rules", "crontap-run.rules.test.yml"],
    ] {
        let out = Command::new(&promtool)
            .args(args)
            .current_dir(&dir)
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "promtool {args:?}: {said}");
        assert!(said.contains("SUCCESS"), "promtool {args:?}: {said}");
    }
}

/// A Prometheus scraping the gateway every second, with the shipped rules; killed on drop.
struct Prometheus {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Prometheus {
    fn start(gateway_port: u16) -> Prometheus {
        let program = require(&["prometheus"], "prometheus");
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("prometheus.yml");
        let rules = packaging("prometheus/crontap-run.rules.yml");
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n\
                 rule_files:\n  - {}\n\
                 scrape_configs:\n  - job_name: pushgateway\n    honor_labels: true\n    \
                 static_configs:\n      - targets: ['127.0.0.1:{gateway_port}']\n",
                rules.display()
            ),
        )
        .unwrap();
        let port = free_port();
        let child = Command::new(program)
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path().join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let prometheus = Prometheus {
            child,
            port,
            _dir: dir,
        };
        assert!(
            eventually(Duration::from_secs(120), || {
                http_get(port, "/-/ready").is_some_and(|(status, _)| status == 200)
            }),
            "Prometheus did not come up on port {port}"
        );
        prometheus
    }

    /// GET `path` of the HTTP API: its JSON, whatever the status.
    fn api(&self, path: &str) -> Value {
        let (_, body) = http_get(self.port, path).expect("Prometheus answers");
        serde_json::from_str(&body).unwrap_or_else(|e| panic!("{path}: {e}: {body}"))
    }

    /// An instant query: the API's whole answer.
    fn query(&self, expr: &str) -> Value {
        let encoded =
            percent_encoding::utf8_percent_encode(expr, percent_encoding::NON_ALPHANUMERIC);
        self.api(&format!("/api/v1/query?query={encoded}"))
    }

    /// The `job` labels of a query's result.
    fn jobs(&self, expr: &str) -> Vec<String> {
        let answer = self.query(expr);
        assert_eq!(answer["status"], "success", "{expr}: {answer}");
        let mut jobs: Vec<String> = answer["data"]["result"]
            .as_array()
            .unwrap_or_else(|| panic!("{expr}: {answer}"))
            .iter()
            .map(|r| r["metric"]["job"].as_str().unwrap_or_default().to_owned())
            .collect();
        jobs.sort();
        jobs
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Every `expr` of the dashboard's panels.
fn dashboard_queries() -> Vec<String> {
    let text = std::fs::read_to_string(packaging("grafana/crontap-run.json")).unwrap();
    let dashboard: Value = serde_json::from_str(&text).unwrap();
    let queries: Vec<String> = dashboard["panels"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|panel| panel["targets"].as_array().unwrap().iter())
        .map(|target| target["expr"].as_str().unwrap().to_owned())
        .collect();
    assert!(queries.len() >= 3, "{queries:?}");
    queries
}

#[test]
fn the_dashboard_and_the_rules_work_on_a_real_prometheus() {
    let gateway = Pushgateway::start();
    // `import` failed, then succeeded; `backup` succeeded, and is late against a period of
    // one second; `broken` failed.
    let every = ["--expect-every", "1h", "--expect-grace", "10m"];
    assert_eq!(push_run(&gateway, "import", &every, "exit 2"), 2);
    assert_eq!(push_run(&gateway, "import", &every, "exit 0"), 0);
    assert_eq!(
        push_run(&gateway, "backup", &["--expect-every", "1s"], "exit 0"),
        0
    );
    assert_eq!(push_run(&gateway, "broken", &every, "exit 1"), 1);
    let prometheus = Prometheus::start(gateway.port);
    assert!(
        eventually(Duration::from_secs(120), || {
            prometheus.jobs("crontap_run_last_exit_code").len() == 3
        }),
        "the gateway's metrics never arrived: {}, the gateway has:\n{}",
        prometheus.query("crontap_run_last_exit_code"),
        gateway.metrics()
    );

    for expr in dashboard_queries() {
        let jobs = prometheus.jobs(&expr);
        for succeeded in ["backup", "import"] {
            assert!(jobs.iter().any(|j| j == succeeded), "{expr}: {jobs:?}");
        }
    }

    // Every rule loaded and evaluated without error, and each expression is valid alone.
    let healthy = || {
        let rules = prometheus.api("/api/v1/rules");
        let rules: Vec<Value> = rules["data"]["groups"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|g| g["rules"].as_array().cloned().unwrap_or_default())
            .collect();
        (rules.len() == 3 && rules.iter().all(|r| r["health"] == "ok")).then_some(rules)
    };
    assert!(eventually(Duration::from_secs(60), || healthy().is_some()));
    for rule in healthy().unwrap() {
        let answer = prometheus.query(rule["query"].as_str().unwrap());
        assert_eq!(answer["status"], "success", "{rule}: {answer}");
    }
    let firing = |alert: &str| {
        let alerts = prometheus.api("/api/v1/alerts");
        let mut jobs: Vec<String> = alerts["data"]["alerts"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|a| a["labels"]["alertname"] == alert)
            .map(|a| a["labels"]["job"].as_str().unwrap_or_default().to_owned())
            .collect();
        jobs.sort();
        jobs
    };
    assert!(
        eventually(Duration::from_secs(60), || {
            firing("CrontapRunJobFailed") == ["broken"] && firing("CrontapRunJobLate") == ["backup"]
        }),
        "failed: {:?}, late: {:?}",
        firing("CrontapRunJobFailed"),
        firing("CrontapRunJobLate")
    );
}
