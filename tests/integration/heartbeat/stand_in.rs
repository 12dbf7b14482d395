//! Stand-ins for the two services' APIs on 127.0.0.1, each keeping what it received:
//! - [`Healthchecks`] follows the Management API v3 as its documentation gives it:
//!   `X-Api-Key` (401 `{"error": "wrong api key"}` otherwise), `POST /api/v3/checks/` with
//!   `unique: ["name"]` (201 and a new check, or 200 and the check of that name),
//!   `GET /api/v3/checks/`, `/api/v3/checks/<uuid>` and `/api/v3/checks/<uuid>/pings/`
//!   (newest first), and a ping endpoint `/ping/<uuid>[/<status>]` that updates the check's
//!   `n_pings`, `last_ping` and `status` as the service does.
//! - [`CrontapApi`] checks the request Crontap's heartbeat guide documents: `POST
//!   /v1/heartbeat`, headers `ClientId`, `ApiKey`, `Content-Type: application/json`, body
//!   `{"name", "periodMinutes", "graceMinutes"}` and nothing else; 401 on a wrong key, 400
//!   on a wrong body.
//!
//! Either can be told to answer every API request with a fixed status and body instead
//! ([`Override`]), for the error paths.

use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use serde_json::{Value, json};
use tiny_http::{Header, Request, Response, Server};

/// One request as a stand-in saw it.
#[derive(Clone, Debug)]
pub struct Seen {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Seen {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).expect("a JSON body")
    }
}

/// A fixed answer to every API request: status and body.
pub type Override = Option<(u16, String)>;

/// A random token of `len` hex digits, unique to this test run.
pub fn token(len: usize) -> String {
    (0..len)
        .map(|_| char::from_digit(fastrand::u32(0..16), 16).unwrap())
        .collect()
}

struct Shared<S> {
    state: Mutex<S>,
    seen: Mutex<Vec<Seen>>,
    answer: Mutex<Override>,
}

/// A server on a loopback port answering with `handle`.
pub struct StandIn<S> {
    server: Arc<Server>,
    shared: Arc<Shared<S>>,
    thread: Option<JoinHandle<()>>,
}

type Handler<S> = fn(&mut S, &Seen, u16) -> (u16, String);

impl<S: Send + 'static> StandIn<S> {
    fn start(state: S, handle: Handler<S>) -> StandIn<S> {
        let server = Arc::new(Server::http("127.0.0.1:0").expect("bind a loopback port"));
        let shared = Arc::new(Shared {
            state: Mutex::new(state),
            seen: Mutex::new(Vec::new()),
            answer: Mutex::new(None),
        });
        let (srv, sh) = (Arc::clone(&server), Arc::clone(&shared));
        let port = server.server_addr().to_ip().unwrap().port();
        let thread = std::thread::spawn(move || {
            while let Ok(request) = srv.recv() {
                serve(request, &sh, handle, port);
            }
        });
        StandIn {
            server,
            shared,
            thread: Some(thread),
        }
    }

    pub fn url(&self) -> String {
        let port = self.server.server_addr().to_ip().unwrap().port();
        format!("http://127.0.0.1:{port}")
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.shared.seen.lock().unwrap().clone()
    }

    /// Requests to the API (not pings).
    pub fn api_calls(&self) -> Vec<Seen> {
        let seen = self.seen();
        seen.into_iter()
            .filter(|s| !s.path.starts_with("/ping/"))
            .collect()
    }

    /// Answer every API request with `status` and `body` from now on.
    pub fn answer_with(&self, status: u16, body: &str) {
        *self.shared.answer.lock().unwrap() = Some((status, body.to_owned()));
    }

    pub fn with_state<T>(&self, f: impl FnOnce(&mut S) -> T) -> T {
        f(&mut self.shared.state.lock().unwrap())
    }
}

fn serve<S>(mut request: Request, shared: &Shared<S>, handle: Handler<S>, port: u16) {
    let mut body = String::new();
    let _ = request.as_reader().read_to_string(&mut body);
    let seen = Seen {
        method: request.method().to_string(),
        path: request.url().to_owned(),
        headers: request
            .headers()
            .iter()
            .map(|h| (h.field.to_string(), h.value.to_string()))
            .collect(),
        body,
    };
    shared.seen.lock().unwrap().push(seen.clone());
    let fixed = shared.answer.lock().unwrap().clone();
    let (status, text) = match fixed {
        Some(answer) if !seen.path.starts_with("/ping/") => answer,
        _ => handle(&mut shared.state.lock().unwrap(), &seen, port),
    };
    let _ = request.respond(
        Response::from_string(text)
            .with_status_code(status)
            .with_header(Header::from_bytes("Content-Type", "application/json").unwrap()),
    );
}

impl<S> Drop for StandIn<S> {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// A check the Healthchecks stand-in keeps.
pub struct HcCheck {
    pub uuid: String,
    pub fields: Value,
    /// Pings, oldest first: (type, exit status).
    pub pings: Vec<(String, Option<i64>)>,
}

pub struct HcState {
    pub key: String,
    pub checks: Vec<HcCheck>,
    /// Pings answered 200 but not recorded (a ping gone to another check).
    pub drop_pings: bool,
}

pub type Healthchecks = StandIn<HcState>;

/// A Healthchecks stand-in that accepts the API key `key`.
pub fn healthchecks(key: &str) -> Healthchecks {
    StandIn::start(
        HcState {
            key: key.to_owned(),
            checks: Vec::new(),
            drop_pings: false,
        },
        hc_handle,
    )
}

fn error(status: u16, text: &str) -> (u16, String) {
    (status, json!({ "error": text }).to_string())
}

fn hc_handle(state: &mut HcState, seen: &Seen, _port: u16) -> (u16, String) {
    if let Some(rest) = seen.path.strip_prefix("/ping/") {
        return hc_ping(state, rest);
    }
    match seen.header("X-Api-Key") {
        None => return error(401, "missing api key"),
        Some(key) if key != state.key => return error(401, "wrong api key"),
        _ => {}
    }
    let path = seen.path.as_str();
    match (seen.method.as_str(), path) {
        ("POST", "/api/v3/checks/") => hc_create(state, seen),
        ("GET", "/api/v3/checks/") => {
            let list: Vec<&Value> = state.checks.iter().map(|c| &c.fields).collect();
            (200, json!({ "checks": list }).to_string())
        }
        ("GET", _) => {
            let Some(rest) = path.strip_prefix("/api/v3/checks/") else {
                return error(404, "not found");
            };
            let (uuid, pings) = match rest.strip_suffix("/pings/") {
                Some(uuid) => (uuid, true),
                None => (rest, false),
            };
            let Some(check) = state.checks.iter().find(|c| c.uuid == uuid) else {
                return error(404, "not found");
            };
            match pings {
                false => (200, check.fields.to_string()),
                true => {
                    let list: Vec<Value> = check
                        .pings
                        .iter()
                        .enumerate()
                        .rev()
                        .map(|(i, (kind, exit))| {
                            let mut ping = json!({
                                "type": kind,
                                "date": format!("2026-12-07T10:{:02}:00+00:00", i),
                                "n": i + 1,
                                "scheme": "http",
                                "remote_addr": "127.0.0.1",
                                "method": "GET",
                                "ua": "crontap-run",
                                "duration": 1.5,
                            });
                            if let Some(exit) = exit {
                                ping["exitstatus"] = (*exit).into();
                            }
                            ping
                        })
                        .collect();
                    (200, json!({ "pings": list }).to_string())
                }
            }
        }
        _ => error(405, "method not allowed"),
    }
}

fn hc_create(state: &mut HcState, seen: &Seen) -> (u16, String) {
    let Ok(body) = serde_json::from_str::<Value>(&seen.body) else {
        return error(400, "could not parse request body");
    };
    let Some(name) = body["name"].as_str() else {
        return error(400, "json validation error: name is not a string");
    };
    if body["grace"].as_u64().is_none_or(|g| g < 60) {
        return error(400, "json validation error: grace is too small");
    }
    if body.get("schedule").is_some() == body.get("timeout").is_some() {
        return error(400, "json validation error: schedule or timeout");
    }
    // Healthchecks' cron parser (cronsim) follows Debian's cron, which has no cronie `~`.
    if body["schedule"].as_str().is_some_and(|s| s.contains('~')) {
        return error(
            400,
            "json validation error: schedule is not a valid cron expression",
        );
    }
    if body["unique"] == json!(["name"])
        && let Some(check) = state.checks.iter().find(|c| c.fields["name"] == name)
    {
        return (200, check.fields.to_string());
    }
    let uuid = format!(
        "{}-{}-4{}-a{}-{}",
        token(8),
        token(4),
        token(3),
        token(3),
        token(12)
    );
    let host = seen.header("Host").unwrap_or("127.0.0.1");
    let mut fields = json!({
        "name": name, "slug": "", "tags": "", "desc": "", "grace": body["grace"],
        "n_pings": 0, "status": "new", "started": false, "last_ping": null,
        "next_ping": null, "manual_resume": false, "methods": "", "uuid": uuid,
        "ping_url": format!("http://{host}/ping/{uuid}"),
        "update_url": format!("http://{host}/api/v3/checks/{uuid}"),
        "channels": "",
    });
    for field in ["schedule", "tz", "timeout"] {
        if let Some(value) = body.get(field) {
            fields[field] = value.clone();
        }
    }
    state.checks.push(HcCheck {
        uuid,
        fields: fields.clone(),
        pings: Vec::new(),
    });
    (201, fields.to_string())
}

fn hc_ping(state: &mut HcState, rest: &str) -> (u16, String) {
    let (uuid, segment) = rest.split_once('/').unwrap_or((rest, ""));
    let drop = state.drop_pings;
    let Some(check) = state.checks.iter_mut().find(|c| c.uuid == uuid) else {
        return (404, "not found".into());
    };
    if drop {
        return (200, "OK".into());
    }
    let segment = segment.split('?').next().unwrap_or("");
    let (kind, exit) = match segment {
        "" => ("success", None),
        "start" => ("start", None),
        "fail" => ("fail", None),
        "0" => ("success", Some(0)),
        n => ("fail", n.parse().ok()),
    };
    check.pings.push((kind.to_owned(), exit));
    let n = check.pings.len();
    check.fields["n_pings"] = n.into();
    check.fields["last_ping"] = format!("2026-12-07T10:{:02}:00+00:00", n - 1).into();
    check.fields["status"] = if kind == "fail" { "down" } else { "up" }.into();
    (200, "OK".into())
}

/// What the Crontap stand-in answers a good request with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CrontapAnswer {
    /// `{"id", "name", "pingUrl"}`.
    PingUrl,
    /// `{"id", "name", "url"}`.
    Url,
    /// `{"id", "name"}`: no URL.
    NoUrl,
}

pub struct CrontapState {
    pub client_id: String,
    pub key: String,
    pub answer: CrontapAnswer,
    /// The ping URLs handed out, and the pings each received.
    pub made: Vec<(String, usize)>,
}

pub type CrontapApi = StandIn<CrontapState>;

pub fn crontap(client_id: &str, key: &str, answer: CrontapAnswer) -> CrontapApi {
    StandIn::start(
        CrontapState {
            client_id: client_id.to_owned(),
            key: key.to_owned(),
            answer,
            made: Vec::new(),
        },
        crontap_handle,
    )
}

fn crontap_handle(state: &mut CrontapState, seen: &Seen, port: u16) -> (u16, String) {
    if let Some(token) = seen.path.strip_prefix("/ping/") {
        return match state.made.iter_mut().find(|(t, _)| t == token) {
            Some((_, n)) => {
                *n += 1;
                (200, "OK".into())
            }
            None => (404, "not found".into()),
        };
    }
    if (seen.method.as_str(), seen.path.as_str()) != ("POST", "/v1/heartbeat") {
        return (404, json!({ "message": "no such route" }).to_string());
    }
    if seen.header("ClientId") != Some(&state.client_id)
        || seen.header("ApiKey") != Some(&state.key)
    {
        return (401, json!({ "message": "invalid credentials" }).to_string());
    }
    if seen.header("Content-Type") != Some("application/json") {
        return (415, json!({ "message": "JSON only" }).to_string());
    }
    let body: Value = match serde_json::from_str(&seen.body) {
        Ok(Value::Object(map)) => Value::Object(map),
        _ => {
            return (
                400,
                json!({ "message": "body is not a JSON object" }).to_string(),
            );
        }
    };
    let mut keys: Vec<&String> = body.as_object().unwrap().keys().collect();
    keys.sort();
    let documented = body["name"].is_string()
        && body["periodMinutes"].as_u64().is_some_and(|m| m >= 1)
        && body["graceMinutes"].as_u64().is_some_and(|m| m >= 1)
        && keys == ["graceMinutes", "name", "periodMinutes"];
    if !documented {
        return (
            400,
            json!({ "message": "name, periodMinutes, graceMinutes" }).to_string(),
        );
    }
    let token = token(32);
    let url = format!("http://127.0.0.1:{port}/ping/{token}");
    state.made.push((token, 0));
    let answer = match state.answer {
        CrontapAnswer::PingUrl => json!({ "id": "hb_1", "name": body["name"], "pingUrl": url }),
        CrontapAnswer::Url => json!({ "id": "hb_1", "name": body["name"], "url": url }),
        CrontapAnswer::NoUrl => json!({ "id": "hb_1", "name": body["name"] }),
    };
    (200, answer.to_string())
}
