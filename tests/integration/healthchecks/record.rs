//! What the Healthchecks-like receiver ([`super::server`]) records of each request.

use std::time::{Duration, Instant};

/// What a ping says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Start,
    Success,
    Fail,
    Log,
    Exit(u8),
}

impl Kind {
    /// Whether the ping ends a run (success, fail or an exit status).
    pub fn is_end(self) -> bool {
        matches!(self, Kind::Success | Kind::Fail | Kind::Exit(_))
    }
}

/// Which pings a scripted answer applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Class {
    Start,
    End,
}

impl Class {
    pub(super) fn of(kind: Kind) -> Option<Class> {
        match kind {
            Kind::Start => Some(Class::Start),
            k if k.is_end() => Some(Class::End),
            _ => None,
        }
    }
}

/// One request as the server saw it.
#[derive(Clone, Debug)]
pub struct Ping {
    pub method: String,
    /// The request target as sent: path and query, or an absolute URL through a proxy.
    pub target: String,
    pub path: String,
    /// The raw query (without `?`), empty if none.
    pub query: String,
    /// Every header, in the order received.
    pub headers: Vec<(String, String)>,
    /// The body as kept (at most [`super::server::BODY_LIMIT`] bytes).
    pub body: Vec<u8>,
    /// How many body bytes arrived.
    pub body_len: usize,
    pub at: Instant,
    /// When the answer went out (later than `at` for a held start).
    pub answered_at: Option<Instant>,
    /// The answer's status.
    pub status: u16,
    /// What the ping means; `None` for a URL that is no ping.
    pub kind: Option<Kind>,
    pub rid: Option<String>,
    /// The check's name (`<uuid>` or `<ping-key>/<slug>`), if the URL named one.
    pub check: Option<String>,
    /// For an end ping paired by rid with an earlier start: the time between them.
    pub duration: Option<Duration>,
}

impl Ping {
    /// The value of header `name` (case-insensitive), if sent.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// How many times header `name` was sent.
    pub fn header_count(&self, name: &str) -> usize {
        self.headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case(name))
            .count()
    }

    pub fn body_text(&self) -> String {
        String::from_utf8(self.body.clone()).expect("the body is UTF-8")
    }

    /// The body's first line: the summary.
    pub fn summary(&self) -> String {
        self.body_text().lines().next().unwrap_or("").to_owned()
    }

    /// The query parameter `name`, percent-decoded.
    pub fn param(&self, name: &str) -> Option<String> {
        self.query.split('&').find_map(|pair| {
            let (n, v) = pair.split_once('=').unwrap_or((pair, ""));
            (n == name).then(|| {
                percent_encoding::percent_decode_str(v)
                    .decode_utf8_lossy()
                    .into_owned()
            })
        })
    }
}
