//! Crontap's REST API, as its heartbeat guide documents it: `POST <api-url>/v1/heartbeat`
//! with the headers `ClientId` and `ApiKey` and the JSON body `{"name", "periodMinutes",
//! "graceMinutes"}`. The guide documents the request, not the answer's fields: the ping URL
//! is taken from `pingUrl`, else `url`.

use anyhow::{Result, anyhow};

use crate::heartbeat::api::{self, Api, Call};
use crate::heartbeat::{Wanted, json_string};
use crate::report::heartbeat::HeartbeatUrl;

/// Creates the heartbeat; its ping URL.
pub fn create(api: &Api, wanted: &Wanted) -> Result<HeartbeatUrl> {
    let body = format!(
        "{{\"name\":{},\"periodMinutes\":{},\"graceMinutes\":{}}}",
        json_string(&wanted.name),
        wanted.period_minutes,
        wanted.grace_minutes
    )
    .into_bytes();
    let answer = api.send(api.endpoint("v1/heartbeat"), Call::Post(body), &[])?;
    let what = "the Crontap API's answer to creating the heartbeat";
    let created = api::parse(&answer, what)?;
    let text = created.ping_url_camel.or(created.url).ok_or_else(|| {
        // The field names only: a value may be a credential.
        anyhow!(
            "{what} has no pingUrl or url field (it had: {})",
            api::field_names(&answer)
        )
    })?;
    HeartbeatUrl::parse(&text, "the ping URL the Crontap API returned")
}
