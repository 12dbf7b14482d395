//! The heartbeat client: one request, retried on transient failures within a time budget.
//!
//! Every attempt has one deadline covering DNS, connect, TLS and the response headers.
//! Network errors, timeouts, 408, 429 and 5xx are retried with exponential backoff and
//! jitter (about 1 s, 2 s, 4 s …), or after the server's `Retry-After` (seconds or an
//! HTTP date) when that fits in what is left of the budget. Any other status is final; 2xx
//! is success. Errors here never carry the URL: reqwest's are stripped of it and the rest
//! only name the host. Every request of a run goes out on the run's one runtime and client,
//! with their redirect rules, in [`client`].

use crate::report::proxy::ProxyVars;
use std::time::{Duration, Instant, SystemTime};

use reqwest::header::HeaderMap;
use reqwest::{StatusCode, header};
use tokio::sync::watch;

use crate::report::client;
use crate::report::protocol::Request;
use crate::run::outcome::HumanDuration;
use crate::run::signals::{self, SignalLog};

const BASE_DELAY: Duration = Duration::from_secs(1);
const MAX_DELAY: Duration = Duration::from_secs(10);
/// The least time worth starting another attempt with.
const MIN_ATTEMPT: Duration = Duration::from_millis(200);
/// The longest `Retry-After` taken as given: anything past a day is as good as never
/// within a ping budget.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(86_400);

/// Limits of one delivery, from `--ping-timeout`, `--ping-retries` and `--ping-budget`,
/// and where its TLS roots come from.
#[derive(Debug, Clone, Copy)]
pub struct Policy {
    pub timeout: Duration,
    pub retries: u32,
    pub budget: Duration,
    /// `SSL_CERT_FILE` or `SSL_CERT_DIR` names the roots (see [`tls::with_roots`]).
    pub roots_named: bool,
    /// The proxies, as `config` read them (one set of them per process).
    pub proxies: &'static ProxyVars,
}

impl Policy {
    /// The same policy cut down to fit in `budget`.
    pub fn within(self, budget: Duration) -> Policy {
        Policy {
            timeout: self.timeout.min(budget),
            retries: self.retries,
            budget: self.budget.min(budget),
            roots_named: self.roots_named,
            proxies: self.proxies,
        }
    }
}

/// A delivery that did not succeed, with a reason fit for one line on stderr.
#[derive(Debug, thiserror::Error)]
#[error("{reason}{}", attempts_note(*attempts))]
pub struct PingError {
    pub reason: String,
    pub attempts: u32,
    /// The status of a final answer that was not a success (a 404), if that ended it.
    pub status: Option<u16>,
    /// Not sent at all: the open-files limit left no room for it.
    pub no_room: bool,
}

impl PingError {
    /// Nothing was sent, or nothing more will be: `reason` says why.
    fn before_sending(reason: String) -> PingError {
        PingError {
            reason,
            attempts: 0,
            status: None,
            no_room: false,
        }
    }
}

fn attempts_note(attempts: u32) -> String {
    match attempts {
        0 => String::new(),
        1 => " (after 1 attempt)".to_owned(),
        n => format!(" (after {n} attempts)"),
    }
}

/// How one attempt went wrong; the caller branches on whether to try again.
#[derive(Debug, thiserror::Error)]
enum AttemptError {
    #[error("{reason}")]
    Retryable {
        reason: String,
        retry_after: Option<Duration>,
    },
    /// No retry can help; `status`: the answer's, if it was one.
    #[error("{reason}")]
    Final { reason: String, status: Option<u16> },
}

/// Whether a request is still wanted: the start request is not, once the end report is
/// due (no more attempts), and then not at all (the attempt under way is dropped).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Wanted {
    Yes,
    NoRetries,
    No,
}

/// Sends `request` with `headers`, retrying per `policy`, cut down to the shutdown budget if
/// `stop` records a stop request meanwhile, and given up as `wanted` says, if given.
/// Returns the number of attempts made.
pub fn send(
    request: &Request,
    headers: &HeaderMap,
    policy: Policy,
    stop: &SignalLog,
    wanted: Option<watch::Receiver<Wanted>>,
) -> Result<u32, PingError> {
    // tokio panics where it cannot make its signal pipe: no room, no ping.
    if !client::have_room() {
        return Err(PingError {
            reason: "too few file descriptors left to send it (the open-files limit, ulimit -n)"
                .to_owned(),
            attempts: 0,
            status: None,
            no_room: true,
        });
    }
    let settings = client::Settings {
        roots_named: policy.roots_named,
        proxies: policy.proxies,
        connect_timeout: policy.timeout,
    };
    let sent = client::with_net(request, settings, |runtime, client| {
        runtime.block_on(async {
            let result = within_limits(client, request, headers, policy, stop, wanted).await;
            // Lets the tasks of the connections just used see that they are done and close
            // their sockets: the runtime runs nothing until the next request.
            tokio::task::yield_now().await;
            result
        })
    });
    sent.unwrap_or_else(|reason| Err(PingError::before_sending(reason)))
}

/// The delivery, cut down to the shutdown budget if `stop` records a stop request, and
/// given up as `wanted` says.
async fn within_limits(
    client: &reqwest::Client,
    request: &Request,
    headers: &HeaderMap,
    policy: Policy,
    stop: &SignalLog,
    wanted: Option<watch::Receiver<Wanted>>,
) -> Result<u32, PingError> {
    let delivery = deliver(client, request, headers, policy, wanted.clone());
    let given_up = || PingError::before_sending("given up: the end report is due".to_owned());
    tokio::pin!(delivery);
    let unwanted = unwanted(wanted);
    tokio::pin!(unwanted);
    tokio::select! {
        result = &mut delivery => result,
        () = &mut unwanted => Err(given_up()),
        // Told to stop while reporting: finish within the shutdown budget. A start
        // request is still dropped when the end is due, or it would take the end's
        // share of that budget.
        signal = stop.requested() => {
            tracing::debug!(signal = signal.as_str(), "stop requested while reporting");
            let limit = signals::SHUTDOWN_BUDGET;
            tokio::select! {
                result = tokio::time::timeout(limit, delivery) => result.unwrap_or_else(|_| {
                    let reason = format!("{} arrived and the shutdown budget ran out", signal.as_str());
                    Err(PingError::before_sending(reason))
                }),
                () = unwanted => Err(given_up()),
            }
        }
    }
}

/// Resolves once `wanted` says the request is not wanted at all; never without one.
async fn unwanted(wanted: Option<watch::Receiver<Wanted>>) {
    let Some(mut wanted) = wanted else {
        return std::future::pending().await;
    };
    if wanted.wait_for(|w| *w == Wanted::No).await.is_err() {
        std::future::pending::<()>().await;
    }
}

async fn deliver(
    client: &reqwest::Client,
    request: &Request,
    headers: &HeaderMap,
    policy: Policy,
    wanted: Option<watch::Receiver<Wanted>>,
) -> Result<u32, PingError> {
    let deadline = Instant::now() + policy.budget;
    let mut attempt = 0;
    loop {
        attempt += 1;
        let remaining = deadline.saturating_duration_since(Instant::now());
        // A start (the request `wanted` watches) that has been written, even in part,
        // may reach the server at any moment: given up, or sent again, it could arrive
        // after the end. So only its connection is bounded by the ping timeout (the
        // client's connect timeout); once connected, it has the rest of its budget, and
        // the end waits for it (see `Start::finish_before`).
        let limit = match wanted {
            Some(_) => remaining,
            None => policy.timeout.min(remaining),
        };
        let started = Instant::now();
        let result = try_once(client, request, headers, limit).await;
        let took = HumanDuration(started.elapsed());
        let (reason, retry_after) = match result {
            Ok(()) => {
                tracing::debug!(attempt, %took, "ping delivered");
                return Ok(attempt);
            }
            Err(AttemptError::Final { reason, status }) => {
                return Err(PingError {
                    reason,
                    attempts: attempt,
                    status,
                    no_room: false,
                });
            }
            Err(AttemptError::Retryable {
                reason,
                retry_after,
            }) => (reason, retry_after),
        };
        let superseded = wanted.as_ref().is_some_and(|w| *w.borrow() != Wanted::Yes);
        if attempt > policy.retries || superseded {
            return Err(PingError {
                reason,
                attempts: attempt,
                status: None,
                no_room: false,
            });
        }
        let wait = retry_after.unwrap_or_else(|| backoff(attempt));
        let remaining = deadline.saturating_duration_since(Instant::now());
        if wait + MIN_ATTEMPT > remaining {
            let reason = match retry_after {
                Some(after) => format!(
                    "{reason}; asked to retry after {}, beyond the ping budget",
                    HumanDuration(after)
                ),
                None => format!("{reason}; ping budget used up"),
            };
            return Err(PingError {
                reason,
                attempts: attempt,
                status: None,
                no_room: false,
            });
        }
        tracing::debug!(attempt, %took, %reason, wait = %HumanDuration(wait), "ping attempt failed, retrying");
        if !pause(wait, wanted.clone()).await {
            return Err(PingError {
                reason: format!("{reason}; no retry: the end report is due"),
                attempts: attempt,
                status: None,
                no_room: false,
            });
        }
    }
}

/// One attempt, answered within `limit`.
async fn try_once(
    client: &reqwest::Client,
    request: &Request,
    headers: &HeaderMap,
    limit: Duration,
) -> Result<(), AttemptError> {
    let sent = client::send(client, request, headers);
    match tokio::time::timeout(limit, sent).await {
        Err(_) => Err(AttemptError::Retryable {
            reason: format!("no response within {}", HumanDuration(limit)),
            retry_after: None,
        }),
        Ok(Err(err)) => Err(classify_error(err)),
        Ok(Ok(response)) => classify_response(&response),
    }
}

/// Waits `wait` before a retry: `false` if meanwhile `wanted` says no new attempt is.
async fn pause(wait: Duration, wanted: Option<watch::Receiver<Wanted>>) -> bool {
    let Some(mut wanted) = wanted else {
        tokio::time::sleep(wait).await;
        return true;
    };
    tokio::select! {
        () = tokio::time::sleep(wait) => true,
        // A closed channel (no sender any more) leaves the wait to run out.
        changed = wanted.wait_for(|w| *w != Wanted::Yes) => {
            if changed.is_ok() {
                return false;
            }
            tokio::time::sleep(wait).await;
            true
        }
    }
}

/// One request with no retry, for `crontap-run check`: the status, or why there was none
/// (never quoting the URL).
pub fn probe(
    request: &Request,
    headers: &HeaderMap,
    timeout: Duration,
    roots_named: bool,
    proxies: &ProxyVars,
) -> Result<StatusCode, String> {
    let settings = client::Settings {
        roots_named,
        proxies,
        connect_timeout: timeout,
    };
    client::with_net(request, settings, |runtime, client| {
        runtime.block_on(async {
            let sent = client::send(client, request, headers);
            match tokio::time::timeout(timeout, sent).await {
                Err(_) => Err(format!("no response within {}", HumanDuration(timeout))),
                Ok(Err(err)) => Err(classify_error(err).to_string()),
                Ok(Ok(response)) => Ok(response.status()),
            }
        })
    })?
}

fn classify_response(response: &reqwest::Response) -> Result<(), AttemptError> {
    let status = response.status();
    if status.is_success() {
        return Ok(());
    }
    let reason = format!("HTTP {status}");
    let retryable = status == StatusCode::REQUEST_TIMEOUT
        || status == StatusCode::TOO_MANY_REQUESTS
        || status.is_server_error();
    if !retryable {
        return Err(AttemptError::Final {
            reason,
            status: Some(status.as_u16()),
        });
    }
    let retry_after = response
        .headers()
        .get(header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| retry_after(v, SystemTime::now()));
    Err(AttemptError::Retryable {
        reason,
        retry_after,
    })
}

fn classify_error(err: reqwest::Error) -> AttemptError {
    let err = err.without_url();
    let reason = describe(&err);
    // A certificate the client does not trust, or a failed TLS negotiation, will not be
    // different a second later.
    if err.is_builder() || err.is_redirect() || is_tls_error(&err) {
        AttemptError::Final {
            reason,
            status: None,
        }
    } else {
        AttemptError::Retryable {
            reason,
            retry_after: None,
        }
    }
}

/// Whether a rustls error is anywhere in the chain. `io::Error` hides the error it wraps
/// from `source()`, so wrapped errors are looked into as well.
fn is_tls_error(err: &(dyn std::error::Error + 'static)) -> bool {
    if err.is::<rustls::Error>() {
        return true;
    }
    let wrapped = err
        .downcast_ref::<std::io::Error>()
        .and_then(|io| io.get_ref());
    if wrapped.is_some_and(|inner| is_tls_error(inner)) {
        return true;
    }
    err.source().is_some_and(is_tls_error)
}

/// The most specific message in the error chain (`Connection refused`, `failed to lookup
/// address information: …`), prefixed with what was being done.
fn describe(err: &reqwest::Error) -> String {
    let mut innermost: &dyn std::error::Error = err;
    while let Some(source) = innermost.source() {
        innermost = source;
    }
    let text = innermost.to_string();
    let text = match text.rfind(" (os error ") {
        Some(at) if text.ends_with(')') => text[..at].to_owned(),
        _ => text,
    };
    if err.is_connect() {
        format!("cannot connect: {text}")
    } else {
        text
    }
}

/// The wait a `Retry-After` value asks for at `now`: whole seconds (`120`) or an HTTP date
/// (`Wed, 21 Oct 2026 07:28:00 GMT`, or the two obsolete forms HTTP still accepts), a date
/// already past meaning at once. `None` for anything else, so the usual backoff applies.
fn retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    let wait = match value.parse::<u64>() {
        Ok(secs) => Duration::from_secs(secs),
        Err(_) => httpdate::parse_http_date(value)
            .ok()?
            .duration_since(now)
            .unwrap_or(Duration::ZERO),
    };
    Some(wait.min(MAX_RETRY_AFTER))
}

/// The wait before retry number `retry` (1-based): 1 s doubling, capped, ±20 % jitter.
fn backoff(retry: u32) -> Duration {
    let exp = BASE_DELAY
        .saturating_mul(1 << (retry - 1).min(8))
        .min(MAX_DELAY);
    exp.mul_f64(0.8 + 0.4 * crate::random::fraction())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_starts_near_one_second_and_is_capped() {
        for _ in 0..100 {
            let first = backoff(1);
            assert!(first >= Duration::from_millis(800) && first <= Duration::from_millis(1200));
            let second = backoff(2);
            assert!(second >= Duration::from_millis(1600) && second <= Duration::from_millis(2400));
            assert!(backoff(30) <= MAX_DELAY.mul_f64(1.2));
        }
    }

    #[test]
    fn retry_after_takes_seconds_and_http_dates() {
        // Wed, 21 Oct 2026 07:28:00 GMT
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_792_567_680);
        let secs = Duration::from_secs;
        assert_eq!(retry_after("120", now), Some(secs(120)));
        assert_eq!(retry_after(" 7 ", now), Some(secs(7)));
        assert_eq!(
            retry_after("Wed, 21 Oct 2026 07:28:30 GMT", now),
            Some(secs(30))
        );
        // The obsolete RFC 850 and asctime forms, which recipients must still accept.
        assert_eq!(
            retry_after("Wednesday, 21-Oct-26 07:29:00 GMT", now),
            Some(secs(60))
        );
        assert_eq!(retry_after("Wed Oct 21 07:28:05 2026", now), Some(secs(5)));
        assert_eq!(
            retry_after("Wed, 21 Oct 2026 07:00:00 GMT", now),
            Some(Duration::ZERO)
        );
        assert_eq!(retry_after("99999999", now), Some(MAX_RETRY_AFTER));
        assert_eq!(
            retry_after("Thu, 21 Oct 2027 07:28:00 GMT", now),
            Some(MAX_RETRY_AFTER)
        );
        for bad in ["", "soon", "-5", "1.5", "Wed, 21 Oct 2026"] {
            assert_eq!(retry_after(bad, now), None, "{bad:?}");
        }
    }
}
