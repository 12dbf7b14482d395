//! Crontap's REST API, as its heartbeat guide documents it: `POST <api-url>/v1/heartbeat`
//! with the headers `ClientId` and `ApiKey` and the JSON body `{"name", "periodMinutes",
//! "graceMinutes"}`. The guide documents the request, not the answer's fields: the ping URL
//! is taken from `pingUrl`, else `url`.

use anyhow::{Result, anyhow};

use crate::heartbeat::Wanted;
use crate::heartbeat::api::{self, Api, Call};
use crate::report::heartbeat::HeartbeatUrl;

/// The fields that may hold the ping URL, in the order they are looked for.
const URL_FIELDS: [&str; 2] = ["pingUrl", "url"];

/// Creates the heartbeat; its ping URL.
pub fn create(api: &Api, wanted: &Wanted) -> Result<HeartbeatUrl> {
    let body = serde_json::json!({
        "name": wanted.name,
        "periodMinutes": wanted.period_minutes,
        "graceMinutes": wanted.grace_minutes,
    });
    let body = serde_json::to_vec(&body)?;
    let answer = api.send(api.endpoint("v1/heartbeat"), Call::Post(body), &[])?;
    let what = "the Crontap API's answer to creating the heartbeat";
    let object = api::object(&answer, what)?;
    let text = URL_FIELDS
        .iter()
        .find_map(|name| object.get(*name)?.as_str())
        .ok_or_else(|| {
            // The field names only: a value may be a credential.
            let names: Vec<&str> = object.keys().map(String::as_str).collect();
            anyhow!(
                "{what} has no pingUrl or url field (it had: {})",
                match names.is_empty() {
                    true => "none".to_owned(),
                    false => crate::sanitize::one_line(&names.join(", ")),
                }
            )
        })?;
    HeartbeatUrl::parse(text, "the ping URL the Crontap API returned")
}
