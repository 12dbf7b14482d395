//! A loopback receiver that behaves as Healthchecks documents its ping API
//! (<https://healthchecks.io/docs/http_api/>):
//!
//! - a check is addressed by `/<uuid>` or by `/<ping-key>/<slug>`, then an endpoint: none
//!   (success), `/start`, `/fail`, `/log` or `/<exit status 0-255>` (0 is a success);
//! - an unknown check is `404 not found`, unless a slug URL asks `?create=1`: then the check
//!   is created and the answer is `201 Created`;
//! - GET, HEAD and POST are all pings; the request body is kept up to 10,000 bytes and cut
//!   beyond; the query's `msg` means nothing;
//! - `rid` must be a UUID (else `400 invalid uuid format`); an end ping whose rid matches an
//!   earlier start of the same check records the run's duration.
//!
//! Every request is recorded with what the server made of it. Tests can script the answer
//! per kind of ping, and hold start pings unanswered until they release them.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Instant;

use tiny_http::{Method, Request, Response, Server, StatusCode};

pub use super::record::{Class, Kind, Ping};

/// How much of a body Healthchecks keeps (its `PING_BODY_LIMIT`).
pub const BODY_LIMIT: usize = 10_000;

#[derive(Default)]
struct State {
    /// Known checks by name (`<uuid>` or `<ping-key>/<slug>`).
    checks: HashSet<String>,
    pings: Vec<Ping>,
    /// Open runs: (check, rid) of a start, with its arrival.
    starts: HashMap<(String, String), Instant>,
    script: HashMap<Class, VecDeque<u16>>,
    hold_starts: bool,
    /// Held start pings: the index of their record, the request and its status.
    held: Vec<(usize, Request, u16)>,
    /// The `Retry-After` seconds sent with every 429 and 503, if any.
    retry_after: Option<u64>,
}

/// The Healthchecks-like server.
pub struct Healthchecks {
    server: Arc<Server>,
    state: Arc<Mutex<State>>,
    thread: Option<JoinHandle<()>>,
}

impl Healthchecks {
    /// A server with no checks yet.
    pub fn start() -> Healthchecks {
        let server = Arc::new(Server::http("127.0.0.1:0").expect("bind a loopback port"));
        let state = Arc::new(Mutex::new(State::default()));
        let (srv, st) = (Arc::clone(&server), Arc::clone(&state));
        let thread = std::thread::spawn(move || {
            while let Ok(request) = srv.recv() {
                handle(request, &st);
            }
        });
        Healthchecks {
            server,
            state,
            thread: Some(thread),
        }
    }

    pub fn port(&self) -> u16 {
        self.server.server_addr().to_ip().unwrap().port()
    }

    /// `host:port`, as crontap-run names the receiver.
    pub fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port())
    }

    /// Makes a check known: `uuid` or `ping-key/slug`.
    pub fn add_check(&self, name: &str) {
        self.lock().checks.insert(name.to_owned());
    }

    /// A known check `<ping-key>/<slug>` and its ping URL `http://host/<key>/<slug>`.
    pub fn slug_url(&self, key: &str, slug: &str) -> String {
        self.add_check(&format!("{key}/{slug}"));
        format!("http://{}/{key}/{slug}", self.host())
    }

    /// A known check by uuid and its ping URL `http://host/<uuid>`.
    pub fn uuid_url(&self, uuid: &str) -> String {
        self.add_check(uuid);
        format!("http://{}/{uuid}", self.host())
    }

    /// Answers the next pings of `class` with these statuses, in order, then as usual.
    pub fn script(&self, class: Class, statuses: &[u16]) {
        self.lock()
            .script
            .entry(class)
            .or_default()
            .extend(statuses.iter().copied());
    }

    /// Sends `Retry-After: <secs>` with every 429 and 503 from now on.
    pub fn retry_after(&self, secs: u64) {
        self.lock().retry_after = Some(secs);
    }

    /// Holds every start ping unanswered (recorded at once) until [`Self::release_starts`].
    pub fn hold_starts(&self) {
        self.lock().hold_starts = true;
    }

    /// Answers the held start pings, and every later one at once.
    pub fn release_starts(&self) {
        let held = {
            let mut state = self.lock();
            state.hold_starts = false;
            std::mem::take(&mut state.held)
        };
        for (index, request, status) in held {
            let answered = Instant::now();
            self.lock().pings[index].answered_at = Some(answered);
            let _ = request.respond(text(status));
        }
    }

    pub fn pings(&self) -> Vec<Ping> {
        self.lock().pings.clone()
    }

    pub fn starts(&self) -> Vec<Ping> {
        self.of(|k| k == Kind::Start)
    }

    pub fn ends(&self) -> Vec<Ping> {
        self.of(Kind::is_end)
    }

    fn of(&self, keep: impl Fn(Kind) -> bool) -> Vec<Ping> {
        self.pings()
            .into_iter()
            .filter(|p| p.kind.is_some_and(&keep))
            .collect()
    }

    /// The only end ping; fails if there was none or several.
    pub fn only_end(&self) -> Ping {
        let ends = self.ends();
        assert_eq!(
            ends.len(),
            1,
            "expected one end ping, got {:#?}",
            self.pings()
        );
        ends.into_iter().next().unwrap()
    }

    /// The only start ping; fails if there was none or several.
    pub fn only_start(&self) -> Ping {
        let starts = self.starts();
        assert_eq!(
            starts.len(),
            1,
            "expected one start ping, got {:#?}",
            self.pings()
        );
        starts.into_iter().next().unwrap()
    }

    /// Whether check `name` exists (known or created).
    pub fn has_check(&self, name: &str) -> bool {
        self.lock().checks.contains(name)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap()
    }
}

impl Drop for Healthchecks {
    fn drop(&mut self) {
        self.release_starts();
        self.server.unblock();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn text(status: u16) -> Response<std::io::Cursor<Vec<u8>>> {
    let body = match status {
        200 => "OK",
        201 => "Created",
        400 => "invalid url format",
        404 => "not found",
        _ => "error",
    };
    Response::from_string(body).with_status_code(StatusCode(status))
}

/// What a URL asks: the check's name, whether the URL is a slug URL, and the kind.
fn route(path: &str, checks: &HashSet<String>) -> Option<(String, bool, Kind)> {
    let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let endpoint = |rest: &[&str]| -> Option<Kind> {
        match rest {
            [] => Some(Kind::Success),
            ["start"] => Some(Kind::Start),
            ["fail"] => Some(Kind::Fail),
            ["log"] => Some(Kind::Log),
            [n] if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
                n.parse::<u8>().ok().map(Kind::Exit)
            }
            _ => None,
        }
    };
    let first = *segments.first()?;
    if is_uuid(first) || checks.contains(first) {
        return Some((first.to_owned(), false, endpoint(&segments[1..])?));
    }
    if segments.len() >= 2 && is_slug(first) && is_slug(segments[1]) {
        let name = format!("{first}/{}", segments[1]);
        return Some((name, true, endpoint(&segments[2..])?));
    }
    None
}

fn is_slug(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

pub fn is_uuid(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, &c)| match i {
            8 | 13 | 18 | 23 => c == b'-',
            _ => c.is_ascii_hexdigit(),
        })
}

fn handle(mut request: Request, state: &Mutex<State>) {
    let at = Instant::now();
    let method = request.method().as_str().to_owned();
    let target = request.url().to_owned();
    // Through a proxy the target is an absolute URL: the server is the proxy and the
    // service at once.
    let url = match target.strip_prefix("http://") {
        Some(rest) => rest.find('/').map_or("/", |at| &rest[at..]).to_owned(),
        None => target.clone(),
    };
    let (path, query) = match url.split_once('?') {
        Some((p, q)) => (p.to_owned(), q.to_owned()),
        None => (url.clone(), String::new()),
    };
    let headers = request
        .headers()
        .iter()
        .map(|h| (h.field.as_str().to_string(), h.value.to_string()))
        .collect();
    let mut body = Vec::new();
    let _ = request.as_reader().read_to_end(&mut body);
    let body_len = body.len();
    body.truncate(BODY_LIMIT);

    let mut guard = state.lock().unwrap();
    let st = &mut *guard;
    let mut ping = Ping {
        method: method.clone(),
        target,
        path: path.clone(),
        query,
        headers,
        body,
        body_len,
        at,
        answered_at: None,
        status: 404,
        kind: None,
        rid: None,
        check: None,
        duration: None,
    };
    ping.rid = ping.param("rid");
    let allowed = matches!(request.method(), Method::Get | Method::Head | Method::Post);
    let routed = route(&path, &st.checks);
    let mut status = match (&routed, allowed) {
        (_, false) => 405,
        (None, _) => 400,
        (Some((name, slug, _)), _) => {
            if st.checks.contains(name) {
                200
            } else if *slug && ping.param("create").as_deref() == Some("1") {
                st.checks.insert(name.clone());
                201
            } else {
                404
            }
        }
    };
    if let Some((name, _, kind)) = routed {
        ping.check = Some(name.clone());
        if ping.rid.as_deref().is_some_and(|r| !is_uuid(r)) {
            status = 400;
        } else {
            ping.kind = Some(kind);
        }
        if let Some(class) = ping.kind.and_then(Class::of)
            && let Some(scripted) = st.script.get_mut(&class).and_then(VecDeque::pop_front)
        {
            status = scripted;
        }
        if matches!(status, 200 | 201)
            && let (Some(kind), Some(rid)) = (ping.kind, ping.rid.clone())
        {
            if kind == Kind::Start {
                st.starts.insert((name, rid), at);
            } else if kind.is_end()
                && let Some(started) = st.starts.remove(&(name, rid))
            {
                ping.duration = Some(at - started);
            }
        }
    }
    ping.status = status;
    let hold = ping.kind == Some(Kind::Start) && st.hold_starts;
    if !hold {
        ping.answered_at = Some(Instant::now());
    }
    st.pings.push(ping);
    if hold {
        let index = st.pings.len() - 1;
        st.held.push((index, request, status));
        return;
    }
    let retry_after = st.retry_after.filter(|_| matches!(status, 429 | 503));
    drop(guard);
    let mut response = text(status);
    if let Some(secs) = retry_after {
        let header = tiny_http::Header::from_bytes("Retry-After", secs.to_string()).unwrap();
        response.add_header(header);
    }
    let _ = request.respond(response);
}
