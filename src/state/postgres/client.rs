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
use tokio_postgres::{Client, Row};
use tokio_postgres_rustls::MakeRustlsConnect;

use super::config::settings;
use super::error::{PgError, names_to_redact};
use super::{
    CONNECT_TIMEOUT, CREATE, PRUNE, PRUNE_MAX, PostgresStore, SESSION, TABLE, statement_timeout,
};

impl PostgresStore {
    /// Connects to the server named by `url`, for leases that last `lease`.
    pub fn open(url: &str, lease: Duration) -> Result<PostgresStore> {
        // A failed connection drops the store, and with it the runtime, without waiting.
        let mut store = PostgresStore::unconnected(url, lease)?;
        store.connect()?;
        Ok(store)
    }

    /// The store for `url`, not connected yet.
    pub(super) fn unconnected(url: &str, lease: Duration) -> Result<PostgresStore> {
        let (mut config, tls) = settings(url)?;
        let connect_timeout = *config.get_connect_timeout().unwrap_or(&CONNECT_TIMEOUT);
        config.connect_timeout(connect_timeout);
        let hosts = config.get_hosts().len().max(1) as u32;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("cannot start the PostgreSQL client")?;
        let redact = Arc::new(names_to_redact(&config));
        Ok(PostgresStore {
            runtime: Some(runtime),
            config,
            tls: MakeRustlsConnect::new(tls),
            connect_within: connect_timeout * hosts,
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

    fn connect(&mut self) -> Result<()> {
        let within = self.connect_within;
        let connecting = self.config.connect(self.tls.clone());
        let (client, connection) = self
            .runtime()
            .block_on(async { tokio::time::timeout(within, connecting).await })
            .map_err(|_| {
                anyhow!(
                    "no connection within {}s (connect_timeout)",
                    within.as_secs()
                )
            })?
            .map_err(|err| self.error(&err))?;
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
            Err(err) if PgError::code_of(&err) == Some(&SqlState::UNDEFINED_TABLE) => {
                self.create_table()?;
                self.query(sql, params)
            }
            answer => answer,
        }
    }

    /// Creates the table. Hosts that start at once race to create it: the server may
    /// refuse all but one with a duplicate in its catalog even with `IF NOT EXISTS`, and any
    /// of those means the table is there.
    fn create_table(&mut self) -> Result<()> {
        tracing::debug!("creating the table {TABLE}");
        match self.query(CREATE, &[]) {
            Err(err)
                if PgError::code_of(&err).is_some_and(|code| {
                    [
                        SqlState::UNIQUE_VIOLATION,
                        SqlState::DUPLICATE_TABLE,
                        SqlState::DUPLICATE_OBJECT,
                    ]
                    .contains(code)
                }) =>
            {
                Ok(())
            }
            answer => answer
                .map(drop)
                .with_context(|| format!("cannot create the table {TABLE}")),
        }
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
impl Drop for PostgresStore {
    fn drop(&mut self) {
        drop(self.client.take());
        if let Some(task) = self.connection.take() {
            // Without its client the connection says goodbye to the server and ends.
            let _ = self
                .runtime()
                .block_on(async { tokio::time::timeout(Duration::from_secs(1), task).await });
        }
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
        let store =
            PostgresStore::unconnected("postgres://u@db/x", Duration::from_secs(60)).unwrap();
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
