//! `--metrics-push URL`: the run's gauges, put to a Prometheus Pushgateway.
//!
//! A pod or short-lived container has no textfile collector, so after every run (skipped
//! ones included) the gauges of the last run go to `PUT URL/metrics/job/<job>`: the job's
//! one group, replaced whole, so it holds no counters (the gateway's own
//! `push_time_seconds` says when). A skipped run's push is a POST, which replaces only the
//! metrics it carries (the expected period, and what a textfile beside it knows): the
//! command did not run, so the group keeps describing the last run that did, as the
//! textfile does, and only its push time moves. A job name the path cannot carry as it is goes in the
//! gateway's `job@base64/<name in URL-safe base64>` form. The push goes out on its own
//! thread beside the end report, on the run's HTTP client and ping policy ([`ping`]), and
//! the end waits for it no longer than the ping budget: a gateway that is down, refuses
//! or never answers is one line naming its host, and never changes the exit status.
//!
//! The URL may carry a user and password (basic auth, as reqwest sends a URL's user
//! information): a secret like the heartbeat URL. Only the host is ever printed, and the
//! credentials are among the run's secrets, scrubbed from anything sent.

use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use reqwest::Url;
use reqwest::header::HeaderMap;

use super::{Counted, Expect, Run, Shape, Target, Values, previous, render, updated};
use crate::report::ping;
use crate::report::protocol::{Method, Request};
use crate::run::signals::SignalLog;
use crontap_scrub::Scrubber;

/// The option as errors name it.
const OPTION: &str = "--metrics-push (CRONTAP_METRICS_PUSH_URL)";

/// Where a job's gauges are pushed, and what they say beyond the run.
#[derive(Clone)]
pub struct Push {
    /// The gateway's URL, user information included (never printed).
    pub url: Url,
    pub job: String,
    pub expect: Option<Expect>,
    /// `--metrics-dir`, whose file knows the last success and the last run that was not
    /// skipped when this run does not.
    pub textfile: Option<Target>,
    /// The URL's user and password, scrubbed from the push's error line.
    pub secrets: Vec<String>,
}

/// Checks a gateway URL: absolute, http or https, with a host, and nothing after its path
/// (the group's path is appended to it). Errors name the option, never the value.
pub fn parse_url(raw: &str) -> Result<Url> {
    let Ok(url) = Url::parse(raw) else {
        bail!("{OPTION} must be an absolute http:// or https:// URL");
    };
    if !matches!(url.scheme(), "http" | "https") {
        bail!("{OPTION} must be an http:// or https:// URL");
    }
    if url.host_str().is_none_or(str::is_empty) {
        bail!("{OPTION} must name a host");
    }
    if url.query().is_some() || url.fragment().is_some() {
        bail!("{OPTION} must have no query or fragment: the group's path is added to it");
    }
    Ok(url)
}

impl Push {
    /// The gateway's host (and port), the only part of the URL ever printed.
    pub fn host(&self) -> String {
        let host = self.url.host_str().unwrap_or_default();
        match self.url.port() {
            Some(port) => format!("{host}:{port}"),
            None => host.to_owned(),
        }
    }

    /// `URL/metrics/job/<job>`: the job's group.
    pub fn group_url(&self) -> Url {
        let mut url = self.url.clone();
        let base = url.path().trim_end_matches('/').to_owned();
        url.set_path(&format!("{base}/metrics/{}", job_segment(&self.job)));
        url
    }

    /// The body: the gauges of this run, with what the textfile beside it knows of the last
    /// success and the last run that was not skipped.
    pub fn body(&self, run: &Run) -> String {
        let before = match &self.textfile {
            Some(target) => previous(target),
            None => Values::default(),
        };
        render(&self.job, &updated(before, run), self.expect, Shape::Push)
    }

    /// Starts the push of `run` on a thread of its own, within `policy`; [`Pushing::wait`]
    /// ends it. `side_task` marks the thread as work the run can do without (the panic
    /// guard's), so that a bug on it abandons the push only.
    pub fn beside(
        &self,
        run: &Run,
        policy: ping::Policy,
        signals: &SignalLog,
        side_task: fn(&'static str, Box<dyn FnOnce()>),
    ) -> Pushing {
        let request = Request {
            method: match run.result {
                Counted::Skipped => Method::Post,
                _ => Method::Put,
            },
            url: self.group_url(),
            body: Some(self.body(run)),
            shown: String::new(),
        };
        let outcome = Arc::new(Outcome::default());
        let (settle, abandon) = (Arc::clone(&outcome), Arc::clone(&outcome));
        let signals = signals.clone();
        let started = Instant::now();
        let spawned = std::thread::Builder::new()
            .name("metrics-push".into())
            .spawn(move || {
                let abandoned = move || abandon.settle(Err("abandoned after a bug".to_owned()));
                side_task("the metrics push", Box::new(abandoned));
                let sent = ping::send(&request, &HeaderMap::new(), policy, &signals, None);
                settle.settle(sent.map_err(|err| err.to_string()));
            });
        if let Err(err) = &spawned {
            tracing::error!("metrics push to {} not sent: {err}", self.host());
        }
        Pushing {
            outcome: spawned.ok().map(|_| outcome),
            deadline: started + policy.budget,
            host: self.host(),
            secrets: self.secrets.clone(),
        }
    }
}

/// How the push went, once its thread knows: the attempts it took, or why it failed.
#[derive(Default)]
struct Outcome {
    result: Mutex<Option<Result<u32, String>>>,
    settled: Condvar,
}

impl Outcome {
    fn settle(&self, result: Result<u32, String>) {
        let mut slot = self.result.lock().unwrap_or_else(PoisonError::into_inner);
        slot.get_or_insert(result);
        self.settled.notify_all();
    }

    /// The result, if it comes within `limit`.
    fn wait(&self, limit: Duration) -> Option<Result<u32, String>> {
        let slot = self.result.lock().unwrap_or_else(PoisonError::into_inner);
        let (mut slot, _) = self
            .settled
            .wait_timeout_while(slot, limit, |result| result.is_none())
            .unwrap_or_else(PoisonError::into_inner);
        slot.take()
    }
}

/// A push under way.
pub struct Pushing {
    outcome: Option<Arc<Outcome>>,
    deadline: Instant,
    host: String,
    /// The URL's credentials, scrubbed from a failure's reason.
    secrets: Vec<String>,
}

impl Pushing {
    /// Waits for the push until its budget runs out, and says how it went in at most one
    /// line. A push still under way then is left behind: the process is about to exit.
    pub fn wait(self) {
        let Some(outcome) = self.outcome else {
            return;
        };
        let left = self.deadline.saturating_duration_since(Instant::now());
        // A moment past the budget for the thread to say how its last attempt ended: the
        // request's own limits are the budget's.
        match outcome.wait(left + Duration::from_millis(100)) {
            Some(Ok(attempts)) => {
                tracing::debug!(host = %self.host, attempts, "metrics pushed");
            }
            Some(Err(reason)) => {
                let reason = Scrubber::new(self.secrets, []).scrub(&reason);
                tracing::error!("metrics push to {} failed: {reason}", self.host);
            }
            None => tracing::error!(
                "metrics push to {} failed: no answer within the ping budget",
                self.host
            ),
        }
    }
}

/// `job/<name>`, or `job@base64/<name>` for a name that is not plain in a path.
fn job_segment(job: &str) -> String {
    let plain = !job.is_empty()
        && !job.starts_with('.')
        && job
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
    match plain {
        true => format!("job/{job}"),
        false => format!("job@base64/{}", base64_url(job.as_bytes())),
    }
}

/// RFC 4648's URL and filename safe base64, with padding (an empty name is `=`, as the
/// gateway wants it).
fn base64_url(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    if bytes.is_empty() {
        return "=".to_owned();
    }
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..4 {
            match i <= chunk.len() {
                true => out.push(char::from(ALPHABET[(n >> (18 - 6 * i) & 63) as usize])),
                false => out.push('='),
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_is_rfc_4648_url_safe() {
        // RFC 4648's test vectors, and bytes whose standard encoding has '+' and '/'.
        for (plain, encoded) in [
            ("", "="),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
            ("\u{fb}\u{ff}", "w7vDvw=="),
            ("a/b?", "YS9iPw=="),
        ] {
            assert_eq!(base64_url(plain.as_bytes()), encoded, "{plain:?}");
        }
        assert_eq!(base64_url(&[0xfb, 0xff, 0xbf]), "-_-_");
    }

    #[test]
    fn the_group_path() {
        let push = |url: &str, job: &str| Push {
            url: parse_url(url).unwrap(),
            job: job.to_owned(),
            expect: None,
            textfile: None,
            secrets: Vec::new(),
        };
        let url = push("https://u:p@gw.example:9091/", "nightly-import.v2_x").group_url();
        assert_eq!(
            url.as_str(),
            "https://u:p@gw.example:9091/metrics/job/nightly-import.v2_x"
        );
        let url = push("http://gw/prefix", "a b/c").group_url();
        assert_eq!(url.as_str(), "http://gw/prefix/metrics/job@base64/YSBiL2M=");
        let url = push("http://gw", ".hidden").group_url();
        assert_eq!(url.path(), "/metrics/job@base64/LmhpZGRlbg==");
        assert_eq!(push("http://gw:8080/x", "j").host(), "gw:8080");
    }

    #[test]
    fn urls_refused_name_the_option_not_the_value() {
        for bad in [
            "gw:9091",
            "/metrics",
            "ftp://gw",
            "https://u:secretpw@gw/?a=b",
            "https://u:secretpw@gw/#f",
            "file:///tmp/x",
            "http://",
            "",
        ] {
            let err = parse_url(bad).unwrap_err().to_string();
            assert!(err.starts_with(OPTION), "{bad}: {err}");
            assert!(!err.contains("secretpw") && !err.contains("gw"), "{err}");
        }
        parse_url("http://127.0.0.1:9091").unwrap();
    }
}
