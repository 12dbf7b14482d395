//! The store's errors: one line each, with the SQLSTATE kept for the code that acts on it,
//! and without the URL, the server's DETAIL text, or the user and database names.

use std::error::Error as StdError;

use tokio_postgres::Config;
use tokio_postgres::error::SqlState;

/// Server messages name the URL's user and database; those that are at least this long
/// are replaced by `[REDACTED]` (shorter ones would garble the message's other words).
const REDACT_MIN: usize = 6;
/// An error from the server or the connection, in one line and without the URL; keeps the
/// SQLSTATE for the code that acts on it.
#[derive(Debug)]
pub struct PgError {
    pub(super) code: Option<SqlState>,
    /// The client gave up on a connection that took longer than its `connect_timeout`.
    timed_out: bool,
    text: String,
}

impl std::fmt::Display for PgError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

impl StdError for PgError {}

impl PgError {
    pub(super) fn new(err: &tokio_postgres::Error) -> PgError {
        if let Some(db) = err.as_db_error() {
            // The message only: DETAIL may quote row values, and HINT adds lines.
            return PgError {
                code: Some(db.code().clone()),
                timed_out: false,
                text: one_line(&format!(
                    "{}: {} (SQLSTATE {})",
                    db.severity(),
                    db.message(),
                    db.code().code()
                )),
            };
        }
        // tokio-postgres's own text leaves out the cause; add the chain. Its connect_timeout
        // is an I/O error of kind `TimedOut` in that chain.
        let mut text = err.to_string();
        let mut timed_out = false;
        let mut source = err.source();
        while let Some(cause) = source {
            text.push_str(": ");
            text.push_str(&cause.to_string());
            timed_out |= cause
                .downcast_ref::<std::io::Error>()
                .is_some_and(|io| io.kind() == std::io::ErrorKind::TimedOut);
            source = cause.source();
        }
        PgError {
            code: None,
            timed_out,
            text: one_line(&text),
        }
    }

    /// Whether the server is only busy for now, so that connecting again may work: it says
    /// it has too many clients or is starting up, or it did not answer a connection within
    /// `connect_timeout` (a fleet authenticating at once overflows its listen queue).
    pub(super) fn is_busy(&self) -> bool {
        self.timed_out
            || self.code.as_ref().is_some_and(|code| {
                [SqlState::TOO_MANY_CONNECTIONS, SqlState::CANNOT_CONNECT_NOW].contains(code)
            })
    }

    /// The error with every string in `redact` replaced by `[REDACTED]`.
    pub(super) fn redacted(mut self, redact: &[String]) -> PgError {
        for secret in redact {
            self.text = self.text.replace(secret.as_str(), "[REDACTED]");
        }
        self
    }

    /// The SQLSTATE of an error from [`PostgresStore`](super::PostgresStore), if the server
    /// sent one.
    pub fn code_of(err: &anyhow::Error) -> Option<&SqlState> {
        err.downcast_ref::<PgError>()?.code.as_ref()
    }
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
/// The names in `config` that server messages may quote and that are long enough to take
/// out of them without garbling the rest: the user and the database, longest first.
pub(super) fn names_to_redact(config: &Config) -> Vec<String> {
    let mut names: Vec<String> = [config.get_user(), config.get_dbname()]
        .into_iter()
        .flatten()
        .filter(|name| name.chars().count() >= REDACT_MIN)
        .map(str::to_owned)
        .collect();
    names.sort_by_key(|name| std::cmp::Reverse(name.len()));
    names.dedup();
    names
}

#[cfg(test)]
mod tests {
    use super::super::config::settings;
    use super::*;

    #[test]
    fn user_and_database_names_are_taken_out_of_server_messages() {
        let redact = |url: &str, text: &str| {
            let (config, _) = settings(url).unwrap();
            let err = PgError {
                code: None,
                timed_out: false,
                text: text.to_owned(),
            };
            err.redacted(&names_to_redact(&config)).text
        };
        assert_eq!(
            redact(
                "postgres://secretuser:pw@db/payroll",
                "FATAL: password authentication failed for user \"secretuser\""
            ),
            "FATAL: password authentication failed for user \"[REDACTED]\""
        );
        assert_eq!(
            redact(
                "postgres://secretuser:pw@db/payroll",
                "FATAL: database \"payroll\" does not exist"
            ),
            "FATAL: database \"[REDACTED]\" does not exist"
        );
        // Without a database the server takes the user's name: taken out as well.
        assert_eq!(
            redact(
                "postgres://secretuser@db",
                "FATAL: database \"secretuser\" does not exist"
            ),
            "FATAL: database \"[REDACTED]\" does not exist"
        );
        // Short names are left: "for user" would lose its words.
        assert_eq!(
            redact(
                "postgres://u:pw@db/jobs",
                "FATAL: role \"u\" does not exist for user jobs"
            ),
            "FATAL: role \"u\" does not exist for user jobs"
        );
    }

    #[test]
    fn server_errors_are_one_line() {
        assert_eq!(one_line("a\nDETAIL:  b\n"), "a DETAIL: b");
    }
}
