//! Healthchecks' Management API v3 (healthchecks.io, or a self-hosted server at
//! `--api-url`), as its documentation gives it, with the project's key in `X-Api-Key`:
//! - `POST /api/v3/checks/` with `{"name", "schedule", "tz", "grace", "unique": ["name"]}`
//!   (or `"timeout"` instead of the schedule): 201 and the new check, or 200 and the check
//!   of that name that exists already;
//! - `GET /api/v3/checks/<uuid>` (one check:
//!   `status`, `last_ping`, `n_pings`) and `GET /api/v3/checks/<uuid>/pings/` (its pings,
//!   newest first: `type`, `date`, `n`, `remote_addr`, `duration`, `exitstatus` …).
//!
//! A check's UUID is the last part of its ping URL (`https://hc-ping.com/<uuid>`, as the API
//! writes every `ping_url`). The UUID is as secret as the ping URL: it goes only in request
//! paths.

use crate::heartbeat::api::{self, Api, Call};
pub use crate::heartbeat::reply::Ping;
use crate::heartbeat::reply::Reply;
use crate::heartbeat::{Wanted, json_string};
use crate::report::heartbeat::HeartbeatUrl;
use anyhow::{Result, anyhow};

/// A check as the API describes it (`status`, `last_ping`, `n_pings`, `ping_url`).
pub type Check = Reply;

/// A check created, or found by its name.
pub struct Made {
    pub url: HeartbeatUrl,
    /// 201: made now; 200: it existed.
    pub created: bool,
}

/// Creates the check, or finds the one of that name (`unique`).
pub fn create(api: &Api, wanted: &Wanted) -> Result<Made> {
    let timing = match &wanted.schedule {
        Some((schedule, tz)) => format!(
            "\"schedule\":{},\"tz\":{}",
            json_string(schedule),
            json_string(tz)
        ),
        None => format!("\"timeout\":{}", wanted.period_minutes * 60),
    };
    let body = format!(
        "{{\"name\":{},{timing},\"grace\":{},\"unique\":[\"name\"]}}",
        json_string(&wanted.name),
        wanted.grace_minutes * 60
    );
    let answer = api.send(
        api.endpoint("api/v3/checks/"),
        Call::Post(body.into_bytes()),
        &[],
    )?;
    let what = "the Healthchecks API's answer to creating the check";
    let check = api::parse(&answer, what)?;
    let text = check.ping_url.ok_or_else(|| {
        anyhow!(
            "{what} has no ping_url field (it had: {}); a read-only API key sees no ping URLs",
            api::field_names(&answer)
        )
    })?;
    Ok(Made {
        url: HeartbeatUrl::parse(&text, "the ping URL the Healthchecks API returned")?,
        created: answer.status == reqwest::StatusCode::CREATED,
    })
}

/// The UUID of the check the ping URL `url` belongs to: the last part of its path, as the
/// API writes every check's `ping_url` (`<ping endpoint><uuid>`).
pub fn uuid_of(url: &HeartbeatUrl) -> Result<String> {
    let ping = url.success();
    let last = ping
        .path_segments()
        .and_then(|mut parts| parts.rfind(|p| !p.is_empty()));
    match last.filter(|s| is_uuid(s)) {
        Some(uuid) => Ok(uuid.to_owned()),
        None => Err(anyhow!(
            "the URL in --url-file names no check by its UUID (a <ping-key>/<slug> URL?): \
             write the check's ping_url, as `heartbeat create` does"
        )),
    }
}

/// The check `uuid`.
pub fn get(api: &Api, uuid: &str, url: &HeartbeatUrl) -> Result<Check> {
    let answer = api.send(
        api.endpoint(&format!("api/v3/checks/{uuid}")),
        Call::Get,
        &url.secrets(),
    )?;
    api::parse(&answer, "the Healthchecks API's answer about the check")
}

/// The pings of the check `uuid`, as listed: newest first.
pub fn pings(api: &Api, uuid: &str, url: &HeartbeatUrl) -> Result<Vec<Ping>> {
    let answer = api.send(
        api.endpoint(&format!("api/v3/checks/{uuid}/pings/")),
        Call::Get,
        &url.secrets(),
    )?;
    let reply = api::parse(&answer, "the Healthchecks API's list of pings")?;
    reply
        .pings
        .ok_or_else(|| anyhow!("the Healthchecks API's list of pings has no pings field"))
}

/// A UUID as Healthchecks writes them: 8-4-4-4-12 hexadecimal digits.
fn is_uuid(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => *c == b'-',
            _ => c.is_ascii_hexdigit(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuids() {
        assert!(is_uuid("5bf2e2fd-b1a8-4b5e-a4bb-62d2b1e6e5d0"));
        assert!(!is_uuid("5bf2e2fd-b1a8-4b5e-a4bb-62d2b1e6e5d"));
        assert!(!is_uuid("5bf2e2fdxb1a8-4b5e-a4bb-62d2b1e6e5d0"));
        assert!(!is_uuid("my-slug"));
    }
}
