//! The store's connection to the server: making it within `connect_timeout`, running one
//! statement within the statement timeout, connecting again when the connection broke,
//! creating the table when a statement finds it missing, and closing it on drop without
//! waiting for a stuck name lookup.

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use tokio::runtime::Runtime;
use tokio_postgres::error::{Severity, SqlState};
use tokio_postgres::types::{ToSql, Type};
use tokio_postgres::{Client, Config, Row};
use tokio_postgres_rustls::MakeRustlsConnect;

use super::config::{per_host, settings};
use super::error::{PgError, names_to_redact};
use super::{
    CONNECT_TIMEOUT, CREATE, PRUNE, PRUNE_MAX, PostgresStore, SESSION, TABLE, statement_timeout,
};

/// A client and the connection that drives it.
type Connected = (
    Client,
    tokio_postgres::Connection<
        tokio_postgres::Socket,
        <MakeRustlsConnect as tokio_postgres::tls::MakeTlsConnect<tokio_postgres::Socket>>::Stream,
    >,
);

/// The connection bound of [`PostgresStore::open`]: `--state-timeout`'s default.
const DEFAULT_WITHIN: Duration = Duration::from_secs(10);

impl PostgresStore {
    /// Connects to the server named by `url`, for leases that last `lease`.
    pub fn open(url: &str, lease: Duration) -> Result<PostgresStore> {
        PostgresStore::open_within(url, lease, DEFAULT_WITHIN)
    }

    /// [`PostgresStore::open`], connecting within `within` in all (`--state-timeout`),
    /// whatever the URL's hosts and `connect_timeout` say.
    pub fn open_within(url: &str, lease: Duration, within: Duration) -> Result<PostgresStore> {
        // A failed connection drops the store, and with it the runtime, without waiting.
        let mut store = PostgresStore::unconnected(url, lease, within)?;
        store.connect()?;
        Ok(store)
    }

    /// The store for `url`, not connected yet. The hosts of a multi-host URL are tried in
    /// turn, each for its share of `within` at most (name lookup, TCP, TLS and the
    /// server's answer all count).
    pub(super) fn unconnected(
        url: &str,
        lease: Duration,
        within: Duration,
    ) -> Result<PostgresStore> {
        let mut configs = Vec::new();
        let mut tls = None;
        for url in per_host(url) {
            let (config, client_tls) = settings(&url)?;
            configs.push(config);
            tls.get_or_insert(client_tls);
        }
        let tls = tls.context("a state URL names no host")?;
        let given = *configs[0].get_connect_timeout().unwrap_or(&CONNECT_TIMEOUT);
        // Each attempt on one host takes `connect_timeout` at most; all of them, every host
        // and the retries while a server is busy, the state timeout.
        let connect_within = within;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("cannot start the PostgreSQL client")?;
        let redact = Arc::new(names_to_redact(&configs[0]));
        Ok(PostgresStore {
            runtime: Some(runtime),
            configs,
            tls: MakeRustlsConnect::new(tls),
            connect_within,
            connect_timeout: given,
            client: None,
            connection: None,
            lease,
            statement_timeout: statement_timeout(lease),
            redact,
            holder: format!("{} pid {}", crate::state::host_name(), std::process::id()),
            next_id: 0,
        })
    }

    fn runtime(&self) -> &Runtime {
        self.runtime
            .as_ref()
            .expect("the runtime lasts as long as the store")
    }

    /// A client or server error, in one line, without the user and database names.
    fn error(&self, err: &tokio_postgres::Error) -> PgError {
        PgError::new(err).redacted(&self.redact)
    }

    /// Connects to the host of `config` by `deadline`, asking again while the server is busy.
    fn connect_to(&self, config: &Config, deadline: std::time::Instant) -> Result<Connected> {
        let mut wait = Duration::from_millis(50);
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let attempt = left.min(self.connect_timeout).max(Duration::from_millis(1));
            let mut config = config.clone();
            config.connect_timeout(attempt);
            let connecting = config.connect(self.tls.clone());
            let answer = self
                .runtime()
                .block_on(async { tokio::time::timeout(attempt, connecting).await });
            // A server too busy to answer in time (a fleet authenticating at once) is
            // tried again like one that says it is busy.
            let (err, busy) = match answer {
                Ok(Ok(connected)) => return Ok(connected),
                Ok(Err(err)) => {
                    // The client's own connect_timeout (the same length) may fire first.
                    let err = self.error(&err);
                    let busy = err.is_busy();
                    (anyhow::Error::from(err), busy)
                }
                Err(_) => (
                    anyhow!(
                        "no connection within {}s (connect_timeout)",
                        (attempt.as_millis() as f64 / 1000.0)
                    ),
                    true,
                ),
            };
            // Again only if a whole attempt still fits in the time left.
            let pause = wait.mul_f64(0.5 + crate::random::fraction());
            let next_ends = std::time::Instant::now() + pause + self.connect_timeout;
            if !busy || next_ends > deadline {
                return Err(err);
            }
            tracing::debug!("the state store is busy ({err:#}); connecting again");
            std::thread::sleep(pause);
            wait = (wait * 2).min(Duration::from_secs(1));
        }
    }

    /// Connects within `connect_within` in all, trying the hosts in turn, each for its share
    /// of the time left. A server that turns the connection away for now (too many
    /// clients: a fleet starting on the hour; starting up) is asked again after a short
    /// random wait, as long as its share allows.
    fn connect(&mut self) -> Result<()> {
        let within = self.connect_within;
        let overall = std::time::Instant::now() + within;
        let mut failed = None;
        let mut connected = None;
        for (i, config) in self.configs.iter().enumerate() {
            let left = overall.saturating_duration_since(std::time::Instant::now());
            let share = left / (self.configs.len() - i) as u32;
            match self.connect_to(config, std::time::Instant::now() + share) {
                Ok(pair) => {
                    connected = Some(pair);
                    break;
                }
                Err(err) => failed = Some(err),
            }
        }
        let Some((client, connection)) = connected else {
            return Err(failed.unwrap_or_else(|| {
                anyhow!(
                    "no connection within {}s (connect_timeout)",
                    within.as_secs_f64()
                )
            }));
        };
        // Runs whenever a statement is waited for (a current-thread runtime), which is all a
        // connection that only answers our statements needs.
        let redact = Arc::clone(&self.redact);
        let task = self.runtime().spawn(async move {
            if let Err(err) = connection.await {
                let err = PgError::new(&err).redacted(&redact);
                tracing::debug!("the state store's connection ended: {err}");
            }
        });
        self.connection = Some(task);
        let timeout = self.statement_timeout;
        let set = self
            .runtime()
            .block_on(async { tokio::time::timeout(timeout, client.batch_execute(SESSION)).await });
        match set {
            Ok(Ok(())) => {}
            Ok(Err(err)) => return Err(self.error(&err).into()),
            Err(_) => bail!(
                "the server did not answer within {}s",
                timeout.as_secs_f64()
            ),
        }
        self.client = Some(client);
        Ok(())
    }

    /// Runs one statement and returns its rows. A broken connection is replaced once and
    /// the statement sent again (every statement here may be repeated safely); an error
    /// from the server is returned as it is.
    pub(super) fn query(
        &mut self,
        sql: &str,
        params: &[(&(dyn ToSql + Sync), Type)],
    ) -> Result<Vec<Row>> {
        let mut fresh = false;
        loop {
            if self.client.as_ref().is_none_or(Client::is_closed) {
                self.client = None;
                self.connect()?;
                fresh = true;
            }
            let client = self.client.as_ref().expect("connected just now");
            let timeout = self.statement_timeout;
            let answer = self.runtime().block_on(async {
                tokio::time::timeout(timeout, client.query_typed(sql, params)).await
            });
            match answer {
                Ok(Ok(rows)) => return Ok(rows),
                Ok(Err(err)) if !broken(&err) && !client.is_closed() => {
                    return Err(self.error(&err).into());
                }
                Ok(Err(err)) => {
                    self.client = None;
                    if fresh {
                        return Err(self.error(&err).into());
                    }
                    tracing::debug!(
                        "the state store's connection failed ({}); connecting again",
                        self.error(&err)
                    );
                }
                Err(_) => {
                    // The statement may still be running there; this connection is done.
                    self.client = None;
                    bail!(
                        "the server did not answer within {}s",
                        timeout.as_secs_f64()
                    );
                }
            }
        }
    }

    /// [`PostgresStore::query`], creating the table first if it does not exist yet.
    pub(super) fn query_table(
        &mut self,
        sql: &str,
        params: &[(&(dyn ToSql + Sync), Type)],
    ) -> Result<Vec<Row>> {
        match self.query(sql, params) {
            // A missing table or sequence, or a table an older release made.
            Err(err)
                if PgError::code_of(&err).is_some_and(|code| {
                    [SqlState::UNDEFINED_TABLE, SqlState::UNDEFINED_COLUMN].contains(code)
                }) =>
            {
                self.create_table()?;
                self.query(sql, params)
            }
            answer => answer,
        }
    }

    /// Creates the table and the fencing-token sequence, and adds the columns a table made
    /// by an older release lacks. Hosts that start at once race to do it: the server may
    /// refuse all but one with a duplicate in its catalog even with `IF NOT EXISTS`, and any
    /// of those means the object is there.
    fn create_table(&mut self) -> Result<()> {
        tracing::debug!("creating the table {TABLE}");
        for statement in CREATE {
            match self.query(statement, &[]) {
                Err(err)
                    if PgError::code_of(&err).is_some_and(|code| {
                        [
                            SqlState::UNIQUE_VIOLATION,
                            SqlState::DUPLICATE_TABLE,
                            SqlState::DUPLICATE_OBJECT,
                            SqlState::DUPLICATE_COLUMN,
                        ]
                        .contains(code)
                    }) => {}
                answer => {
                    answer.with_context(|| format!("cannot create the table {TABLE}"))?;
                }
            }
        }
        Ok(())
    }

    pub(super) fn prune(&mut self) {
        match self.query(PRUNE, &[(&PRUNE_MAX, Type::INT8)]) {
            Ok(_) => {}
            Err(err) => tracing::debug!("cannot delete expired records: {err:#}"),
        }
    }
}

/// Whether an error ended the connection rather than the statement: no answer from the
/// server, or a FATAL one (an administrator's or a restart's termination).
fn broken(err: &tokio_postgres::Error) -> bool {
    match err.as_db_error() {
        None => true,
        Some(db) => matches!(
            db.parsed_severity(),
            Some(Severity::Fatal | Severity::Panic)
        ),
    }
}

/// Closes the connection politely, so the server logs no broken connection, and then the
/// runtime without waiting for its blocking threads: a name lookup that the resolver never
/// answers runs on one, and would otherwise hold crontap-run well past `connect_timeout`.
impl PostgresStore {
    /// Closes the connection; the next statement opens a new one.
    pub(super) fn disconnect(&mut self) {
        drop(self.client.take());
        if let Some(task) = self.connection.take() {
            // Without its client the connection says goodbye to the server and ends.
            let _ = self
                .runtime()
                .block_on(async { tokio::time::timeout(Duration::from_secs(1), task).await });
        }
    }
}

impl Drop for PostgresStore {
    fn drop(&mut self) {
        self.disconnect();
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A name lookup that never ends runs on one of the runtime's blocking threads;
    /// dropping the store must not wait for it (tokio's `Runtime::drop` would).
    #[test]
    fn dropping_the_store_does_not_wait_for_a_stuck_name_lookup() {
        let store = PostgresStore::unconnected(
            "postgres://u@db/x",
            Duration::from_secs(60),
            DEFAULT_WITHIN,
        )
        .unwrap();
        let (started, running) = std::sync::mpsc::channel();
        let _stuck = store.runtime().spawn_blocking(move || {
            started.send(()).unwrap();
            std::thread::sleep(Duration::from_secs(5));
        });
        running.recv().unwrap();
        let dropping = std::time::Instant::now();
        drop(store);
        assert!(
            dropping.elapsed() < Duration::from_secs(2),
            "{:?}",
            dropping.elapsed()
        );
    }
}
