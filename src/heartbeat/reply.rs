//! What the services answer, read into one type: every field `heartbeat` reads from any
//! answer of either API. One type, because each type serde reads is code of its own in the
//! static binary, which must stay within 4 MiB.

use serde::Deserialize;

/// An answer of Crontap's or Healthchecks' API. `Debug` is left out: it would show URLs.
#[derive(Deserialize, Default)]
#[serde(default)]
pub struct Reply {
    /// A refusal's message: Healthchecks' `error`, or another service's `message` or
    /// `detail`.
    pub error: Option<String>,
    pub message: Option<String>,
    pub detail: Option<String>,
    /// Crontap's ping URL: `pingUrl`, else `url`.
    #[serde(rename = "pingUrl")]
    pub ping_url_camel: Option<String>,
    pub url: Option<String>,
    /// A Healthchecks check: its ping URL, status, last ping and count of pings.
    pub ping_url: Option<String>,
    pub status: Option<String>,
    pub last_ping: Option<String>,
    pub n_pings: Option<u64>,
    /// A Healthchecks list of pings, newest first.
    pub pings: Option<Vec<Ping>>,
}

/// One ping as Healthchecks lists it.
#[derive(Deserialize)]
pub struct Ping {
    #[serde(rename = "type")]
    pub kind: Option<String>,
    pub date: Option<String>,
    pub n: Option<u64>,
    pub remote_addr: Option<String>,
    pub duration: Option<f64>,
    pub exitstatus: Option<i64>,
}
