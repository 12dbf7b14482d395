//! The API keys `heartbeat` sends: read by `config` (from a variable, or a file a `_FILE`
//! variable names) and held here as [`Secret`]s, which neither `Debug` nor `Display` show.

use std::fmt;

/// A credential: its value leaves only in the request header it is meant for.
pub struct Secret(String);

impl Secret {
    pub fn new(value: String) -> Secret {
        Secret(value)
    }

    /// The value, for the one header it goes in and for the scrubber.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(…)")
    }
}

/// The keys of the service, as far as the subcommand needs them.
#[derive(Debug)]
pub enum Keys {
    /// Crontap's REST API: the `ClientId` and `ApiKey` headers.
    Crontap { client_id: Secret, api_key: Secret },
    /// Healthchecks' Management API: the `X-Api-Key` header.
    Healthchecks { api_key: Secret },
    /// None needed (`verify` on Crontap pings only).
    None,
}

/// The variables that hold the keys; each may instead name a file in `<NAME>_FILE`.
pub const CRONTAP_CLIENT_ID: &str = "CRONTAP_CLIENT_ID";
pub const CRONTAP_API_KEY: &str = "CRONTAP_API_KEY";
pub const HEALTHCHECKS_API_KEY: &str = "HEALTHCHECKS_API_KEY";

/// Every variable that holds or names a key: never passed to a job.
pub const VARIABLES: [&str; 6] = [
    CRONTAP_CLIENT_ID,
    "CRONTAP_CLIENT_ID_FILE",
    CRONTAP_API_KEY,
    "CRONTAP_API_KEY_FILE",
    HEALTHCHECKS_API_KEY,
    "HEALTHCHECKS_API_KEY_FILE",
];

impl Keys {
    /// Every key's value, for the scrubber.
    pub fn secrets(&self) -> Vec<String> {
        let values: Vec<&Secret> = match self {
            Keys::Crontap { client_id, api_key } => vec![client_id, api_key],
            Keys::Healthchecks { api_key } => vec![api_key],
            Keys::None => Vec::new(),
        };
        values.into_iter().map(|s| s.0.clone()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_shows_no_key() {
        let keys = Keys::Crontap {
            client_id: Secret::new("client-1234567".into()),
            api_key: Secret::new("key-abcdefgh".into()),
        };
        let shown = format!("{keys:?}");
        assert!(!shown.contains("client-1234567") && !shown.contains("key-abcdefgh"));
        assert_eq!(keys.secrets().len(), 2);
    }
}
