//! The Crontap protocol: one GET at the end of a run, to the URL for a success and to
//! `<url>/fail?msg=<summary>` for anything else. Nothing is sent when the command starts,
//! and no body.

use crate::report::heartbeat::HeartbeatUrl;
use crate::report::protocol::{Protocol, Report, Request, Status};

pub struct Crontap;

impl Protocol for Crontap {
    fn name(&self) -> &'static str {
        "crontap"
    }

    fn body(&self) -> bool {
        false
    }

    fn start(&self, _url: &HeartbeatUrl, _run_id: &str) -> Option<Request> {
        None
    }

    fn end(&self, url: &HeartbeatUrl, _run_id: &str, report: &Report) -> Request {
        match report.status {
            Status::Success => Request::get(url.success(), String::new()),
            Status::Failed(_) | Status::Unknown => failure(url, &report.summary),
        }
    }

    fn check(&self, url: &HeartbeatUrl, fail: bool, from: &str) -> Request {
        match fail {
            true => failure(url, &format!("crontap-run check from {from}")),
            false => Request::get(url.success(), String::new()),
        }
    }

    fn gone(&self) -> Option<&'static str> {
        None
    }

    fn not_found(&self) -> &'static str {
        "the service does not know this URL: the heartbeat may have been deleted or its \
         token rotated (rotation invalidates the URL and its /fail URL at once); deploy the \
         current URL from the heartbeat's page"
    }
}

fn failure(url: &HeartbeatUrl, msg: &str) -> Request {
    Request::get(url.failure(msg), format!("/fail?msg={msg}"))
}
