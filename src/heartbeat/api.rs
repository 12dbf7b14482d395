//! One call to a service's API: sent on the run's network runtime and client
//! (`report::client`: its proxies, TLS roots, no redirect), bounded in time and size, and
//! its failures turned into one line each. A refusal (any status but 2xx) says the status
//! and the service's own message, scrubbed of the keys and the ping URL; an API that could
//! not be reached is diagnosed step by step as `check` does, and the line names the step
//! that failed (DNS, connect, TLS).

use std::time::Duration;

use anyhow::{Result, anyhow};
use reqwest::header::{self, HeaderMap, HeaderValue};
use reqwest::{StatusCode, Url};

use crate::cli::Service;
use crate::heartbeat::keys::Keys;
use crate::heartbeat::reply::Reply;
use crate::report::check::{self, CheckConfig};
use crate::report::client;
use crate::report::heartbeat::HeartbeatUrl;
use crate::report::protocol::Request;
use crate::run::outcome::HumanDuration;
use crate::sanitize;
use crontap_scrub::Scrubber;

/// The most of an answer that is read: a list of a thousand pings is a few hundred KiB.
const ANSWER_MAX: usize = 4 << 20;

/// The longest service message quoted in an error.
const MESSAGE_MAX: usize = 200;

/// A service's API, and how to reach it.
pub struct Api {
    pub service: Service,
    /// The base URL (`--api-url`): not a secret, but read and shown as a URL is.
    pub url: HeartbeatUrl,
    pub keys: Keys,
    /// The network settings of every call (timeout, proxies, TLS roots), as `check` takes
    /// them, its URL the API's.
    pub net: CheckConfig,
}

/// A 2xx answer.
pub struct Answer {
    pub status: StatusCode,
    pub body: Vec<u8>,
}

/// A request's method and body.
pub enum Call {
    Get,
    /// A JSON body.
    Post(Vec<u8>),
}

impl Api {
    /// The service's name in messages.
    pub fn name(&self) -> &'static str {
        match self.service {
            Service::Crontap => "Crontap",
            Service::Healthchecks => "Healthchecks",
        }
    }

    /// `<api-url>/<path>`.
    pub fn endpoint(&self, path: &str) -> Url {
        self.url.endpoint(path, &[])
    }

    /// Sends `call` to `url` with the keys' headers; a 2xx answer, or an error of one line
    /// that holds no key and none of `secrets` (the ping URL's parts).
    pub fn send(&self, url: Url, call: Call, secrets: &[String]) -> Result<Answer> {
        let headers = self.headers()?;
        let timeout = self.net.timeout;
        let settings = client::Settings {
            roots_named: self.net.ssl_cert_file.is_some() || self.net.ssl_cert_dir.is_some(),
            proxies: &self.net.proxy,
            connect_timeout: timeout,
        };
        let request = Request::get(url.clone(), String::new());
        let sent = client::with_net(&request, settings, |runtime, client| {
            let builder = match call {
                Call::Get => client.get(url),
                Call::Post(body) => client
                    .post(url)
                    .header(header::CONTENT_TYPE, "application/json")
                    .body(body),
            };
            // The timeout bounds the whole exchange, the answer's body included.
            let builder = builder
                .headers(headers)
                .header(header::ACCEPT, "application/json")
                .timeout(timeout);
            runtime.block_on(read(builder, timeout))
        });
        let scrubber = self.scrubber(secrets);
        match sent.and_then(|answer| answer) {
            Ok((status, body)) if status.is_success() => Ok(Answer { status, body }),
            Ok((status, body)) => Err(self.refusal(status, &body, &scrubber)),
            Err(reason) => Err(self.unreachable(&scrubber.scrub(&reason))),
        }
    }

    /// The headers that carry the keys, as the service documents them.
    fn headers(&self) -> Result<HeaderMap> {
        let mut map = HeaderMap::new();
        let mut add = |name: &'static str, value: &str| -> Result<()> {
            let mut value = HeaderValue::from_str(value)
                .map_err(|_| anyhow!("the {} API key cannot be sent in a header", self.name()))?;
            value.set_sensitive(true);
            map.insert(name, value);
            Ok(())
        };
        match &self.keys {
            Keys::Crontap { client_id, api_key } => {
                add("ClientId", client_id.expose())?;
                add("ApiKey", api_key.expose())?;
            }
            Keys::Healthchecks { api_key } => add("X-Api-Key", api_key.expose())?,
            Keys::None => {}
        }
        Ok(map)
    }

    /// Takes the keys and `secrets` out of a text from the service or a library.
    pub fn scrubber(&self, secrets: &[String]) -> Scrubber {
        let known = self
            .keys
            .secrets()
            .into_iter()
            .chain(secrets.iter().cloned());
        Scrubber::new(known.collect::<Vec<_>>(), [])
    }

    /// An answer other than 2xx: its status and the service's message.
    fn refusal(&self, status: StatusCode, body: &[u8], scrubber: &Scrubber) -> anyhow::Error {
        let message = service_message(body);
        let hint = match status.as_u16() {
            401 | 403 => ": check the API key",
            _ => "",
        };
        let said = match message {
            Some(text) => format!(": {}", sanitize::one_line(&scrubber.scrub(&text))),
            None => String::new(),
        };
        anyhow!(
            "the {} API at {} answered HTTP {status}{said}{hint}",
            self.name(),
            self.url.host()
        )
    }

    /// A call that got no answer: `check`'s steps say where it stopped.
    fn unreachable(&self, reason: &str) -> anyhow::Error {
        let mut steps = Vec::new();
        let reached = check::reach(&self.net, &self.url, &mut steps);
        let steps = String::from_utf8_lossy(&steps);
        let failed = steps.lines().find(|line| line.contains("FAILED"));
        match (reached, failed) {
            (false, Some(line)) => anyhow!(
                "cannot reach the {} API at {}: {}",
                self.name(),
                self.url.host(),
                collapse(line)
            ),
            _ => anyhow!(
                "the {} API at {} did not answer: {}",
                self.name(),
                self.url.host(),
                sanitize::one_line(reason)
            ),
        }
    }
}

/// `connect:  FAILED: …` as `connect: FAILED: …`.
fn collapse(line: &str) -> String {
    let words: Vec<&str> = line.split_whitespace().collect();
    sanitize::one_line(&words.join(" "))
}

/// Sends the request and reads the answer, at most [`ANSWER_MAX`] bytes of it.
async fn read(
    builder: reqwest::RequestBuilder,
    timeout: Duration,
) -> Result<(StatusCode, Vec<u8>), String> {
    let described = |err: reqwest::Error| {
        if err.is_timeout() {
            return format!("no answer within {}", HumanDuration(timeout));
        }
        let err = err.without_url();
        let mut text = err.to_string();
        let mut source = std::error::Error::source(&err);
        while let Some(cause) = source {
            text = format!("{text}: {cause}");
            source = cause.source();
        }
        text
    };
    let mut response = builder.send().await.map_err(described)?;
    let status = response.status();
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(described)? {
        if body.len() + chunk.len() > ANSWER_MAX {
            return Err(format!(
                "the answer is larger than {} MiB",
                ANSWER_MAX >> 20
            ));
        }
        body.extend_from_slice(&chunk);
    }
    Ok((status, body))
}

/// The message a refusal carries: the `error`, `message` or `detail` field of a JSON object
/// (Healthchecks answers `{"error": "…"}`), else the text's first line; bounded.
fn service_message(body: &[u8]) -> Option<String> {
    let text = match serde_json::from_slice::<Reply>(body) {
        Ok(json) => json.error.or(json.message).or(json.detail)?,
        Err(_) => String::from_utf8_lossy(body)
            .lines()
            .next()?
            .trim()
            .to_owned(),
    };
    let mut end = text.len().min(MESSAGE_MAX);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    (!text.is_empty()).then(|| text[..end].to_owned())
}

/// The answer read; an error names `what` and whether the answer was JSON at all, never a
/// value (serde_json's messages may quote one, which may be a credential).
pub fn parse(answer: &Answer, what: &str) -> Result<Reply> {
    serde_json::from_slice(&answer.body).map_err(|err| match err.classify() {
        serde_json::error::Category::Data => anyhow!(
            "{what} does not have the documented fields ({} at line {}, column {})",
            // serde_json's words, which name our field, never the answer's value.
            match err.to_string().starts_with("duplicate field") {
                true => "a field given twice",
                false => "a value of another type",
            },
            err.line(),
            err.column()
        ),
        _ => anyhow!("{what}: the answer is not JSON (HTTP {})", answer.status),
    })
}

/// The names of the fields of an answer that is a JSON object, for an error that says what
/// was there without a value.
pub fn field_names(answer: &Answer) -> String {
    let fields: std::collections::BTreeMap<String, serde::de::IgnoredAny> =
        serde_json::from_slice(&answer.body).unwrap_or_default();
    let names: Vec<&str> = fields.keys().map(String::as_str).collect();
    match names.is_empty() {
        true => "none".to_owned(),
        false => sanitize::one_line(&names.join(", ")),
    }
}

/// `--api-url`: the API's base URL, http or https, with neither user info nor a query
/// nor a fragment. The option is on the command line, which every user of the host can
/// read (`ps`), and the service's messages are scrubbed of the keys, not of this URL: a
/// password or token there would be shown to all. The keys go in their variables or
/// files. The error names the option and what it holds, never its value.
pub fn base_url(text: &str) -> Result<HeartbeatUrl> {
    let url = HeartbeatUrl::parse(text, "--api-url")?;
    let parsed = url.success();
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(anyhow!(
            "--api-url must not hold a user name or password (every user of the host can \
             read the command line): the API's keys go in their variables"
        ));
    }
    if parsed.query().is_some() || parsed.fragment().is_some() || text.contains(['?', '#']) {
        return Err(anyhow!(
            "--api-url must be the API's base URL, without a query or fragment"
        ));
    }
    Ok(url)
}

/// The time a request to the API may take at most, when none is given.
pub const TIMEOUT: Duration = Duration::from_secs(10);

/// The ping URL a service answered with, as the URL file will hold it. A control character
/// or a space is refused rather than passed to the URL parser, which drops tabs and line
/// feeds without a word: the file would then hold another URL than the one answered. The
/// error names `source`, never the text.
pub fn answered_url(text: &str, source: &str) -> Result<HeartbeatUrl> {
    if text.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err(anyhow!("{source} holds a control character or a space"));
    }
    HeartbeatUrl::parse(text, source)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_come_from_the_documented_fields() {
        assert_eq!(
            service_message(br#"{"error": "wrong api key"}"#).as_deref(),
            Some("wrong api key")
        );
        assert_eq!(service_message(br#"{"other": 1}"#), None);
        assert_eq!(
            service_message(br#"{"message": "invalid credentials"}"#).as_deref(),
            Some("invalid credentials")
        );
        assert_eq!(
            service_message(b"Bad gateway\nmore").as_deref(),
            Some("Bad gateway")
        );
        let long = "é".repeat(300);
        let answer = |body: &[u8]| Answer {
            status: StatusCode::CREATED,
            body: body.to_vec(),
        };
        // Two URLs in one answer: neither is taken, and the error says why.
        let twice =
            answer(br#"{"ping_url": "https://a.example/x", "ping_url": "https://b.example/y"}"#);
        let err = parse(&twice, "the answer").err().unwrap().to_string();
        assert!(err.contains("a field given twice"), "{err}");
        assert!(!err.contains("example"), "{err}");
        let err = parse(&answer(br#"{"ping_url": 7}"#), "the answer")
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("a value of another type"), "{err}");
        assert!(service_message(long.as_bytes()).unwrap().len() <= MESSAGE_MAX);
    }
}
