//! The heartbeat protocols: which requests tell a service how a run went.
//!
//! A [`Protocol`] only builds requests: the start request, if it has one, the end request
//! from a run's [`Report`], and `check`'s. Everything else is shared by every protocol and
//! lives beside this file: the summary and its scrubbing, the body, the retries and the
//! budget (`ping`), TLS, the extra headers and the start sent beside the command (`start`).
//! So a new protocol is one file with one `impl Protocol`, and its line in
//! [`Kind`](super::kind::Kind).

use std::fmt;

use reqwest::Url;

use crate::report::heartbeat::HeartbeatUrl;

/// How an end report classes the run, which is all a protocol needs to know of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// The run succeeded (exit 0, or a `--success-exit` status).
    Success,
    /// The command's own status, or the one crontap-run gave it (124 for a timeout), and not
    /// one the service would count as a success.
    Failed(u8),
    /// A failure with no status to send: the command did not run, it was stopped and then
    /// exited 0, or crontap-run failed with a bug.
    Unknown,
}

/// What the end report says: the status, and the summary line (`exit 3 after 2s: …`), and
/// the body for a protocol that sends one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    pub status: Status,
    /// The failure summary (the `msg`), or for a success its own line: `exit 0 after 2s`.
    pub summary: String,
    /// The request body: built only for a protocol whose [`Protocol::body`] is true.
    pub body: Option<String>,
}

impl Report {
    /// The summary history records: a failure's only.
    pub fn message(&self) -> Option<String> {
        (self.status != Status::Success).then(|| self.summary.clone())
    }
}

/// One request to the heartbeat service.
#[derive(Clone)]
pub struct Request {
    pub method: Method,
    pub url: Url,
    pub body: Option<String>,
    /// What the request adds to the configured URL (`/fail?msg=…`, `/start?rid=…`), as a
    /// dry run and `check` show it after the URL's redacted form.
    pub shown: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Get,
    Post,
    /// A Pushgateway's group, replaced whole (`--metrics-push`).
    Put,
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Put => "PUT",
        })
    }
}

impl Request {
    pub fn get(url: Url, shown: String) -> Request {
        Request {
            method: Method::Get,
            url,
            body: None,
            shown,
        }
    }

    pub fn post(url: Url, shown: String, body: Option<String>) -> Request {
        Request {
            method: Method::Post,
            url,
            body,
            shown,
        }
    }

    /// `POST https://hc-ping.com/…/0?rid=…`: the request with the URL redacted.
    pub fn describe(&self, url: &HeartbeatUrl) -> String {
        format!("{} {}{}", self.method, url.redacted(), self.shown)
    }
}

/// A heartbeat protocol: the requests it sends.
pub trait Protocol: Sync {
    /// Its name, as `--protocol` spells it.
    fn name(&self) -> &'static str;

    /// Whether its end report carries a body (the summary, then the output tail).
    fn body(&self) -> bool;

    /// The request sent once the command has started, beside it: `None` if there is none.
    fn start(&self, url: &HeartbeatUrl, run_id: &str) -> Option<Request>;

    /// The request that ends a run.
    fn end(&self, url: &HeartbeatUrl, run_id: &str, report: &Report) -> Request;

    /// `check`'s request: a success, or with `fail` a failure, saying it came from `from`.
    fn check(&self, url: &HeartbeatUrl, fail: bool, from: &str) -> Request;

    /// What `check` says of a 404 answer.
    fn not_found(&self) -> &'static str;

    /// What a run's error line adds to a 404 answer to its end report, if anything.
    fn gone(&self) -> Option<&'static str>;
}
