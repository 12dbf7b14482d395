//! Telling the heartbeat service how a run went, by the run's protocol; printed instead of
//! sent in a dry run.
//!
//! [`heartbeat`] reads and validates the URL and builds the URLs sent; [`protocol`] says
//! which requests a protocol sends, one file each ([`crontap`], [`healthchecks`]); what
//! every protocol shares is here and beside it: [`summary`] writes the summary line,
//! [`body`] the request body, [`headers`] holds `--header`, [`start`] sends a start request
//! beside the command, and [`ping`] sends one request with retries inside a time budget,
//! on the run's one runtime and HTTP client ([`client`]), over the TLS set up by [`tls`].
//! [`Reporter`] ties them together for one run.
//!
//! The invariant this wing keeps: nothing in it can change crontap-run's exit status or hold
//! up the command. A start request goes out beside the command, never before it; the end
//! report is sent after the command ended (or could not start) and after the start, within
//! one ping budget; every failure here ends as a [`PingResult`] and at most one log line,
//! and neither the URL nor a header value appears in anything it prints.

pub mod body;
pub mod check;
pub(crate) mod client;
pub mod crontap;
pub mod headers;
pub mod healthchecks;
pub mod heartbeat;
pub mod kind;
pub(crate) mod ping;
pub mod protocol;
pub mod proxy;
pub mod secrets;
pub(crate) mod start;
pub mod summary;
pub(crate) mod tls;
#[cfg(test)]
mod whole_text_tests;

use std::io::{self, Write};
use std::sync::Arc;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::run::memory;
use crate::run::signals::{self, SignalLog};
use crate::sanitize;
use body::OutputTail;
use crontap_scrub::Scrubber;
use headers::Headers;
use heartbeat::HeartbeatUrl;
pub use kind::Kind;
use protocol::Request;
pub use protocol::{Report, Status};
use secrets::Secrets;
use start::Start;

/// What became of a run's ping, as history records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum PingResult {
    #[serde(rename = "sent")]
    Sent,
    #[serde(rename = "failed")]
    Failed,
    #[serde(rename = "not configured")]
    NotConfigured,
    #[serde(rename = "not sent")]
    NotSent,
}

impl PingResult {
    pub fn as_str(self) -> &'static str {
        match self {
            PingResult::Sent => "sent",
            PingResult::Failed => "failed",
            PingResult::NotConfigured => "not configured",
            PingResult::NotSent => "not sent",
        }
    }
}

/// How a run's report went: what became of the ping, and the summary sent on failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivered {
    pub ping: PingResult,
    pub message: Option<String>,
}

impl Delivered {
    /// No report delivered (yet): none is due, the end has not come to it, or the panic
    /// guard does not know how one handed over went.
    pub const NONE: Delivered = Delivered {
        ping: PingResult::NotSent,
        message: None,
    };
}

/// Reports the runs of one invocation: where to, by which protocol, within which limits,
/// and what to scrub. It owns what it needs, so that the panic guard can send a report too.
pub struct Reporter {
    /// `None` when no URL is configured: nothing is sent.
    pub url: Option<HeartbeatUrl>,
    pub protocol: Kind,
    /// `--header`: sent with every request.
    pub headers: Headers,
    /// Secrets crontap-run holds besides the URL's own parts (the state store's
    /// credentials, values of secret-looking variables in its environment, header values).
    pub secrets: Secrets,
    pub msg_max: usize,
    /// `--body-max`, for a protocol that sends a body.
    pub body_max: usize,
    pub policy: ping::Policy,
    pub dry_run: bool,
    /// Consulted when sending: once crontap-run was told to stop, the delivery gets only
    /// the shutdown budget.
    pub signals: SignalLog,
    /// The run's start request, for a protocol that has one.
    pub start: Arc<Start>,
}

/// Bytes of the output tail kept beyond `--body-max`: its first line is dropped as a
/// likely part of one, and scrubbing and escapes change the length.
const BODY_MARGIN: usize = 4096;

impl Reporter {
    /// How many of the output's last bytes (both streams together) the end report needs:
    /// none for a protocol that sends no body.
    pub fn output_tail_bytes(&self) -> usize {
        match self.protocol.get().body() && self.body_max > 0 {
            true => self.body_max * 2 + BODY_MARGIN,
            false => 0,
        }
    }

    /// The failure summary: `head` (`exit 3 after 2s (attempt 2 of 3)`, `not run: …`) and
    /// the last meaningful line of the command's output, scrubbed, on one line, bounded by
    /// `--msg-max`.
    pub fn summary(&self, head: &str, stdout_tail: &[u8], stderr_tail: &[u8]) -> String {
        summary::failure_message_with(
            head.to_owned(),
            stdout_tail,
            stderr_tail,
            &self.scrubber(),
            self.msg_max,
        )
    }

    /// The end report: `summary` with the body made from `output`, for a protocol that
    /// sends one.
    pub fn report(
        &self,
        status: Status,
        summary: String,
        output: Option<&OutputTail<'_>>,
    ) -> Report {
        // `--body-max 0`: no body at all, not even an empty one with its type.
        let body = (self.protocol.get().body() && self.body_max > 0).then(|| {
            let none = OutputTail {
                bytes: &[],
                cut: false,
            };
            let output = output.unwrap_or(&none);
            body::build(&summary, output, &self.scrubber(), self.body_max)
        });
        Report {
            status,
            summary,
            body,
        }
    }

    /// The command of run `run_id` has started: sends the protocol's start request beside
    /// it, once per run (a dry run prints it). Returns at once.
    pub fn command_started(&self, run_id: &str) {
        // No URL: nothing to build or send (the end says so, once, without waiting for a
        // start). A dry run shows the start all the same.
        if self.url.is_none() && !self.dry_run {
            return;
        }
        let url = self.target();
        let Some(request) = self.protocol.get().start(&url, run_id) else {
            return;
        };
        if !self.start.claim() {
            return;
        }
        if self.dry_run {
            self.print_dry_run(&request, "when the command starts");
            self.start.settle(PingResult::NotSent);
            return;
        }
        let Some(url) = self.url.clone() else {
            self.start.settle(PingResult::NotConfigured);
            return;
        };
        if let Err(limit) = memory::have_room(memory::PING + memory::THREAD) {
            tracing::warn!(
                "start ping to {} not sent: too little memory left beside the command (the \
                 address-space limit (ulimit -v) is {limit} KiB); the end report follows",
                url.host()
            );
            self.start.settle(PingResult::Failed);
            return;
        }
        let headers = self.headers.map.clone();
        let (policy, signals) = (self.policy_now(), self.signals.clone());
        let wanted = self.start.wanted();
        self.start.send_beside(move || {
            match ping::send(&request, &headers, policy, &signals, Some(wanted)) {
                Ok(_) => PingResult::Sent,
                // Not sent at all, which the end report cannot tell: one warning, once a
                // run (the start is claimed once).
                Err(err) if err.no_room => {
                    tracing::warn!(
                        "start ping to {} not sent: too few file descriptors left beside the \
                         command (the open-files limit (ulimit -n) is too low); the end \
                         report follows",
                        url.host()
                    );
                    PingResult::Failed
                }
                Err(err) => {
                    // Only a debug line: the end report, which follows, says whether the
                    // service can be reached, in one line.
                    let reason = Scrubber::new(url.secrets(), []).scrub(&err.to_string());
                    tracing::debug!("start ping to {} failed: {reason}", url.host());
                    PingResult::Failed
                }
            }
        });
    }

    /// Sends `report` of run `run_id`, after the start request if one is under way, all
    /// within one ping budget; or prints it in a dry run. `handing_over` is asked the
    /// moment before the request goes out (or is printed), after which it may have been
    /// sent: `false` means it must not be, and nothing is.
    pub fn deliver(
        &self,
        run_id: &str,
        report: &Report,
        handing_over: impl FnOnce() -> bool,
    ) -> PingResult {
        // No URL: nothing to build or send.
        if self.url.is_none() && !self.dry_run {
            return PingResult::NotConfigured;
        }
        let request = self.protocol.get().end(&self.target(), run_id, report);
        let url = match &self.url {
            _ if self.dry_run => {
                if handing_over() {
                    self.print_dry_run(&request, "");
                }
                return PingResult::NotSent;
            }
            None => return PingResult::NotConfigured,
            Some(url) => url,
        };
        let policy = self.policy_now();
        let deadline = Instant::now() + policy.budget;
        let host = url.host();
        // A start under way may have been written: it is waited for, for half the budget at
        // most, so that the end keeps the other half.
        let patience = Instant::now() + policy.budget / 2;
        if !self.start.finish_before(patience, deadline) {
            tracing::error!(
                "ping to {host} not sent: the start ping was still under way when the ping \
                 budget ran out"
            );
            return PingResult::Failed;
        }
        if !handing_over() {
            return PingResult::NotSent;
        }
        // Only a run that could not start for want of descriptors gets here without room,
        // and its one line already names the open-files limit.
        if !client::have_room() {
            tracing::debug!("ping to {host} not sent: too few file descriptors left");
            return PingResult::Failed;
        }
        // A run refused for want of memory has said so in its one line already.
        if let Err(limit) = memory::have_room(memory::PING) {
            match memory::command_started() {
                true => tracing::error!(
                    "ping to {host} not sent: too little memory left (the address-space \
                     limit (ulimit -v) is {limit} KiB)"
                ),
                false => tracing::debug!("ping to {host} not sent: too little memory left"),
            }
            return PingResult::Failed;
        }
        let left = deadline.saturating_duration_since(Instant::now());
        match ping::send(
            &request,
            &self.headers.map,
            policy.within(left),
            &self.signals,
            None,
        ) {
            Ok(attempts) => {
                tracing::debug!(%host, attempts, "heartbeat sent");
                PingResult::Sent
            }
            Err(err) => {
                // The reason comes from the HTTP stack; scrub it in case it ever quotes the URL.
                let reason = Scrubber::new(url.secrets(), []).scrub(&err.to_string());
                let gone = self
                    .protocol
                    .get()
                    .gone()
                    .filter(|_| err.status == Some(404));
                match gone {
                    Some(gone) => tracing::error!("ping to {host} failed: {reason}: {gone}"),
                    None => tracing::error!("ping to {host} failed: {reason}"),
                }
                PingResult::Failed
            }
        }
    }

    /// The URL requests are built for, and how a dry run names it: a placeholder when none
    /// is configured (a dry run still shows what would be sent).
    fn target(&self) -> HeartbeatUrl {
        match &self.url {
            Some(url) => url.clone(),
            None => HeartbeatUrl::parse("https://heartbeat.invalid", "placeholder")
                .expect("a valid URL"),
        }
    }

    /// The ping policy, cut down to the shutdown budget once crontap-run was told to stop.
    pub(crate) fn policy_now(&self) -> ping::Policy {
        match self.signals.stop_requested() {
            Some(signal) => {
                tracing::debug!(
                    signal = signal.as_str(),
                    "stop requested; using the shutdown ping budget"
                );
                self.policy.within(signals::SHUTDOWN_BUDGET)
            }
            None => self.policy,
        }
    }

    /// Scrubs the heartbeat URL's own parts and the other secrets crontap-run knows.
    fn scrubber(&self) -> Scrubber {
        let mut exact = self
            .url
            .as_ref()
            .map(HeartbeatUrl::secrets)
            .unwrap_or_default();
        exact.extend(self.secrets.all().cloned());
        Scrubber::new(exact, [])
    }

    /// Prints the request that would have been sent, `when` it would have been, the URL
    /// shown as `scheme://host/…`, the summary in clear, and the body below it.
    fn print_dry_run(&self, request: &Request, when: &str) {
        let (base, note) = match &self.url {
            Some(url) => (url.redacted(), ""),
            None => (
                "<heartbeat URL>".to_owned(),
                " (no heartbeat URL configured)",
            ),
        };
        let when = match when {
            "" => String::new(),
            when => format!(" {when}"),
        };
        let line = format!("{} {base}{}", request.method, request.shown);
        let mut text =
            format!("crontap-run: dry run{note}, nothing sent; would send{when}: {line}\n");
        if let Some(body) = request.body.as_deref().filter(|b| !b.is_empty()) {
            text.push_str("crontap-run: with the body:\n");
            for body_line in body.lines() {
                text.push_str(&format!("  {}\n", sanitize::one_line(body_line)));
            }
        }
        // A closed stderr is no reason to fail the run.
        let _ = io::stderr().write_all(text.as_bytes());
    }
}
