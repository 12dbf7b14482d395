//! The Healthchecks protocol (`--protocol healthchecks`, issue 28): the real binary against
//! a loopback receiver that behaves as Healthchecks documents ([`server`]), asserting on
//! what it received.
//!
//! The heartbeat URLs are `<ping-key>/<slug>` URLs whose ping key is [`SECRET`], so the
//! harness's check that the secret is never printed covers them; the one uuid URL is
//! checked by hand.

mod body;
mod check;
mod endings;
mod ends;
pub(crate) mod header_files;
mod network;
mod options;
mod receiver;
mod record;
pub mod server;
mod start;

use crate::harness::{Crontap, SECRET};
use server::{Healthchecks, Ping};

/// The slug of the check most tests report to.
pub const SLUG: &str = "nightly-backup";

/// A server with the check `<SECRET>/<SLUG>`, and that check's URL.
pub fn server() -> (Healthchecks, String) {
    let hc = Healthchecks::start();
    let url = hc.slug_url(SECRET, SLUG);
    (hc, url)
}

/// `crontap-run --protocol healthchecks` with the URL in `CRONTAP_HEARTBEAT_URL`.
pub fn healthchecks(url: &str) -> Crontap {
    let mut c = Crontap::with_url(url);
    c.args(["--protocol", "healthchecks"]);
    c
}

/// The path of endpoint `endpoint` (`start`, `0`, `fail` …) of the check `<SECRET>/<SLUG>`.
pub fn path(endpoint: &str) -> String {
    format!("/{SECRET}/{SLUG}/{endpoint}")
}

/// Asserts that `ping` is an end report: `POST <check>/<endpoint>?rid=<uuid>` with a
/// plain-text body (or none), the user agent, and nothing else in the query.
pub fn assert_end(ping: &Ping, endpoint: &str) {
    assert_eq!(ping.method, "POST", "{ping:#?}");
    assert_eq!(ping.path, path(endpoint), "{ping:#?}");
    let rid = ping.rid.as_deref().expect("the end carries rid");
    assert!(server::is_uuid(rid), "rid {rid:?}");
    assert_eq!(ping.query, format!("rid={rid}"), "only rid in the query");
    // `--body-max 0` sends no body, and so no body type.
    let body_type = (ping.body_len > 0).then_some("text/plain; charset=utf-8");
    assert_eq!(ping.header("Content-Type"), body_type, "{ping:#?}");
    assert_user_agent(ping);
}

/// Asserts that `ping` is a start: `GET <check>/start?rid=<uuid>`.
pub fn assert_start(ping: &Ping) {
    assert_eq!(ping.method, "GET", "{ping:#?}");
    assert_eq!(ping.path, path("start"), "{ping:#?}");
    let rid = ping.rid.as_deref().expect("the start carries rid");
    assert!(server::is_uuid(rid), "rid {rid:?}");
    assert_eq!(ping.query, format!("rid={rid}"), "only rid in the query");
    assert_user_agent(ping);
}

fn assert_user_agent(ping: &Ping) {
    assert_eq!(
        ping.header("User-Agent"),
        Some(concat!("crontap-run/", env!("CARGO_PKG_VERSION"))),
        "{ping:#?}"
    );
}

/// The body's lines after the summary.
pub fn output_lines(ping: &Ping) -> Vec<String> {
    ping.body_text()
        .lines()
        .skip(1)
        .map(str::to_owned)
        .collect()
}

/// Whether `text` matches the regular expression `pattern`.
pub fn matches(pattern: &str, text: &str) -> bool {
    regex::Regex::new(pattern).unwrap().is_match(text)
}
