//! The Healthchecks protocol (healthchecks.io and self-hosted Healthchecks), as its ping API
//! documents it: `GET <url>/start?rid=<run id>` once the command has started, so that the
//! service measures the run and notices one that never ends, then
//! `POST <url>/<exit status>?rid=<run id>` at the end (`/0` for a success) with the summary
//! and the scrubbed output tail as the body, or `POST <url>/fail?rid=…` when there is no
//! status to send. The run id pairs the two; any query the URL has (`?create=1` for a
//! `<ping-key>/<slug>` URL) is kept.
//!
//! Healthchecks counts every status but 0 as a failure, so a run that failed with status 0
//! (stopped, and then exited 0) is sent as `/fail`, never as `/0`.

use crate::report::heartbeat::HeartbeatUrl;
use crate::report::protocol::{Protocol, Report, Request, Status};

/// The hosted service's ping host.
const HOSTED: &str = "hc-ping.com";

pub struct Healthchecks;

/// Whether `url` is on the hosted service (`hc-ping.com`, or a name under it), which
/// `--protocol auto` reports to with this protocol.
pub fn is_hosted(url: &HeartbeatUrl) -> bool {
    let host = url.success();
    let host = host.host_str().unwrap_or_default().trim_end_matches('.');
    host == HOSTED || host.ends_with(".hc-ping.com")
}

impl Protocol for Healthchecks {
    fn name(&self) -> &'static str {
        "healthchecks"
    }

    fn body(&self) -> bool {
        true
    }

    fn start(&self, url: &HeartbeatUrl, run_id: &str) -> Option<Request> {
        Some(Request::get(
            url.endpoint("start", &[("rid", run_id)]),
            format!("/start?rid={run_id}"),
        ))
    }

    fn end(&self, url: &HeartbeatUrl, run_id: &str, report: &Report) -> Request {
        let segment = match report.status {
            Status::Success => "0".to_owned(),
            Status::Failed(0) | Status::Unknown => "fail".to_owned(),
            Status::Failed(code) => code.to_string(),
        };
        Request::post(
            url.endpoint(&segment, &[("rid", run_id)]),
            format!("/{segment}?rid={run_id}"),
            report.body.clone(),
        )
    }

    fn check(&self, url: &HeartbeatUrl, fail: bool, from: &str) -> Request {
        let segment = match fail {
            true => "fail",
            false => "0",
        };
        let body = format!("crontap-run check from {from}");
        Request::post(
            url.endpoint(segment, &[]),
            format!("/{segment}"),
            Some(body),
        )
    }

    fn gone(&self) -> Option<&'static str> {
        Some("the check does not exist (a <ping-key>/<slug> URL with ?create=1 creates it)")
    }

    fn not_found(&self) -> &'static str {
        "the check does not exist: its UUID or slug is wrong, or it was deleted. For a \
         <ping-key>/<slug> URL, add ?create=1 to have Healthchecks create the check on its \
         first ping"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> HeartbeatUrl {
        HeartbeatUrl::parse(s, "test").unwrap()
    }

    fn report(status: Status) -> Report {
        Report {
            status,
            summary: "exit 3 after 1s".into(),
            body: Some("exit 3 after 1s\nboom\n".into()),
        }
    }

    #[test]
    fn end_paths() {
        let u = url("https://hc-ping.com/KEY123456/backup-db?create=1");
        let rid = "0b5c7a1e-2f0a-4c1e-9d4e-5b2f1a0c3d4e";
        let cases = [
            (Status::Success, "0"),
            (Status::Failed(3), "3"),
            (Status::Failed(143), "143"),
            (Status::Failed(0), "fail"),
            (Status::Unknown, "fail"),
        ];
        for (status, segment) in cases {
            let r = Healthchecks.end(&u, rid, &report(status));
            assert_eq!(
                r.url.as_str(),
                format!("https://hc-ping.com/KEY123456/backup-db/{segment}?create=1&rid={rid}")
            );
            assert_eq!(r.body.as_deref(), Some("exit 3 after 1s\nboom\n"));
        }
        let start = Healthchecks
            .start(&url("https://h/p/uuid/?rid=old"), rid)
            .unwrap();
        assert_eq!(
            start.url.as_str(),
            format!("https://h/p/uuid/start?rid={rid}")
        );
    }

    #[test]
    fn hosted_hosts() {
        for (u, hosted) in [
            ("https://hc-ping.com/uuid", true),
            ("https://HC-PING.COM./uuid", true),
            ("https://eu.hc-ping.com/uuid", true),
            ("https://nothc-ping.com/uuid", false),
            ("https://hc-ping.com.evil.example/uuid", false),
            ("https://healthchecks.example/ping/uuid", false),
        ] {
            assert_eq!(is_hosted(&url(u)), hosted, "{u}");
        }
    }
}
