//! The PostgreSQL store (`--state-url postgres://…`, cargo feature `postgres`): locks and
//! idempotency records in one table on a server that every host running the job shares, so
//! the `--no-overlap` lock and the once-per-period key hold across machines.
//!
//! Every hold is a row with a lease: the claim sets `lease_until` from the server's clock
//! (`now()`), the run renews it every third of `--state-lease` while it lasts, and a row whose
//! lease has passed was left by a holder that stopped (killed, host gone, network cut) and is
//! taken over by the next claim. Every renew, completion and release names the run's owner
//! token (its run id) and changes nothing unless the row is still that run's, so a holder
//! whose lease was taken over can never overwrite the new holder's record. No host's clock
//! decides anything about a lease.
//!
//! # Schema
//!
//! One table, created on first use if missing (a DBA may create it beforehand instead and
//! grant the job's role only `SELECT, INSERT, UPDATE, DELETE` on it); it lives in the first
//! schema of the role's `search_path`:
//!
//! ```sql
//! CREATE TABLE IF NOT EXISTS crontap_run_holds (
//!     kind        text        NOT NULL,  -- 'lock' (--no-overlap) or 'key'
//!     name        text        NOT NULL,  -- the job (locks) or the idempotency key (keys)
//!     job         text        NOT NULL,
//!     status      text        NOT NULL,  -- 'running', 'succeeded' or 'failed'
//!     owner       text        NOT NULL,  -- run id of the run that claimed it last
//!     holder      text        NOT NULL DEFAULT '',  -- "<hostname> pid <pid>", for people
//!     lease_until timestamptz NOT NULL,  -- while running: the hold ends then unless renewed
//!     keep_until  timestamptz NOT NULL,  -- the row may be deleted after this
//!     claimed_at  timestamptz NOT NULL DEFAULT now(),
//!     updated_at  timestamptz NOT NULL DEFAULT now(),
//!     PRIMARY KEY (kind, name)
//! );
//! ```
//!
//! The table is created when a statement finds it missing (so the server logs that error
//! once), not before every run: a role allowed to use the table but not to create one in
//! its schema works too. Locks are deleted when released; a key's row stays, as succeeded
//! or failed, until `keep_until` (7 days after its period ends), and expired rows are
//! deleted by later runs (a running row only a day after its lease ended: a holder that
//! missed renewals renews it, or puts it back, when it can again). Migration-safe: every statement names its columns, so a later
//! release may only add columns (with defaults), never rename or drop one, and older
//! releases keep working.
//!
//! A claim is one `INSERT … ON CONFLICT (kind, name) DO UPDATE … WHERE <the row is free>`:
//! the server serialises concurrent claims on the row, so exactly one wins.
//!
//! # Connection
//!
//! The URL is libpq's (`postgres://user:password@host:port/dbname?param=value`), parsed by
//! `tokio-postgres`. `connect_timeout` defaults to 5 s and bounds the whole connection
//! (name lookup, TCP, TLS, authentication); every statement must answer within 10 s, or a
//! third of the lease when that is shorter. Every session is made READ COMMITTED. TLS is rustls with
//! the ring provider; `sslmode` is `disable`, `allow` or `prefer` (the default: TLS when the
//! server offers it), `require`, `verify-ca` or `verify-full`, as libpq has them, and
//! `sslrootcert` names a PEM file of trusted roots (or `system`). `prefer` and `require`
//! encrypt without checking the certificate, unless `sslrootcert` is a file (then `require`
//! checks it as `verify-ca` does, as libpq does); `verify-full` without `sslrootcert` trusts
//! the system's roots (`SSL_CERT_FILE`, `SSL_CERT_DIR`, else the bundled Mozilla set).
//! Client certificates are not supported.
//!
//! Nothing here puts the URL, the password or the server's DETAIL text in an error; the
//! user and database names are replaced by `[REDACTED]` in server messages when they are
//! at least 6 characters long.

use std::error::Error as StdError;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore};
use tokio::runtime::Runtime;
use tokio_postgres::config::SslMode;
use tokio_postgres::error::{Severity, SqlState};
use tokio_postgres::types::{ToSql, Type};
use tokio_postgres::{Client, Config, Row};
use tokio_postgres_rustls::MakeRustlsConnect;

use super::{Claim, Lease, Store, Target};

/// The table, in the first schema of the role's `search_path`.
pub const TABLE: &str = "crontap_run_holds";

/// `connect_timeout` when the URL gives none.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// How long one statement may take, round trip included: a stuck server or network never
/// hangs crontap-run. A third of the lease when that is shorter (see [`statement_timeout`]),
/// so a renewal that gets no answer gives up while the lease still lasts.
const STATEMENT_TIMEOUT: Duration = Duration::from_secs(10);

/// Claims that fail on a serialization failure or a deadlock (SQLSTATE 40001, 40P01) are
/// tried again this many times in all. The session is made READ COMMITTED, where a claim
/// gets neither; a server or pooler that ignores that still works.
const SERIALIZATION_TRIES: usize = 5;

/// Server messages name the URL's user and database; those that are at least this long
/// are replaced by `[REDACTED]` (shorter ones would garble the message's other words).
const REDACT_MIN: usize = 6;

/// Claims that find the row let go of between the claim and the look that follows it are
/// tried again this many times in all.
const CLAIM_TRIES: usize = 3;

/// Most expired rows deleted by one run, so that a first clean-up in a long time stays
/// quick.
const PRUNE_MAX: i64 = 200;

const CREATE: &str = "CREATE TABLE IF NOT EXISTS crontap_run_holds (
    kind        text        NOT NULL,
    name        text        NOT NULL,
    job         text        NOT NULL,
    status      text        NOT NULL,
    owner       text        NOT NULL,
    holder      text        NOT NULL DEFAULT '',
    lease_until timestamptz NOT NULL,
    keep_until  timestamptz NOT NULL,
    claimed_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (kind, name)
)";

/// Whether the row `h` may be claimed by the claim whose values are in `excluded`: a
/// failed key, a hold whose lease has passed, a succeeded key past its retention, or (when
/// a claim is repeated after a lost answer) the claimant's own hold.
const CLAIM: &str = "INSERT INTO crontap_run_holds AS h
    (kind, name, job, status, owner, holder, lease_until, keep_until, claimed_at, updated_at)
VALUES ($1, $2, $3, 'running', $4, $5, now() + make_interval(secs => $6),
    coalesce($7, now() + make_interval(secs => $6)), now(), now())
ON CONFLICT (kind, name) DO UPDATE SET
    job = excluded.job, status = 'running', owner = excluded.owner, holder = excluded.holder,
    lease_until = excluded.lease_until, keep_until = excluded.keep_until,
    claimed_at = excluded.claimed_at, updated_at = excluded.updated_at
WHERE (h.status = 'running' AND h.owner = excluded.owner)
    OR CASE h.status
        WHEN 'running' THEN h.lease_until < now()
        WHEN 'failed' THEN true
        ELSE h.keep_until < now()
    END
RETURNING 1";

/// A row the claim did not get: why not, and whether it has become free since.
const LOOK: &str = "SELECT status, updated_at,
    CASE status
        WHEN 'running' THEN lease_until < now()
        WHEN 'failed' THEN true
        ELSE keep_until < now()
    END AS free
FROM crontap_run_holds WHERE kind = $1 AND name = $2";

/// Extends a hold's lease; puts the row back if it is missing (deleted while its lease had
/// lapsed), so a holder that missed renewals still holds its lock. A row held by another
/// owner, or already completed, is left alone and nothing is returned.
const RENEW: &str = "INSERT INTO crontap_run_holds AS h
    (kind, name, job, status, owner, holder, lease_until, keep_until, claimed_at, updated_at)
VALUES ($1, $2, $3, 'running', $4, $5, now() + make_interval(secs => $6),
    coalesce($7, now() + make_interval(secs => $6)), now(), now())
ON CONFLICT (kind, name) DO UPDATE SET
    lease_until = excluded.lease_until,
    keep_until = greatest(h.keep_until, excluded.keep_until),
    updated_at = excluded.updated_at
WHERE h.owner = excluded.owner AND h.status = 'running'
RETURNING 1";

/// Records a key's result; repeating it after a lost answer finds the row already so.
const COMPLETE: &str = "UPDATE crontap_run_holds
SET status = $3, lease_until = now(), keep_until = $4, updated_at = now()
WHERE kind = 'key' AND name = $1 AND owner = $2 AND status IN ('running', $3)
RETURNING 1";

/// Lets go of a lock, or of a key claimed but never completed.
const RELEASE: &str = "DELETE FROM crontap_run_holds
WHERE kind = $1 AND name = $2 AND owner = $3 AND status = 'running'
RETURNING 1";

/// Deletes rows past their retention whose holder, if any, is long gone: a running row only
/// when its lease ended a day ago, so a holder that missed a renewal (stopped, or cut off
/// for a moment) finds its row still there and renews it, while a claim may still take a
/// lapsed lease over. The condition is on the outer statement too, so a row claimed or
/// renewed while this runs is re-checked and kept.
const PRUNE: &str = "DELETE FROM crontap_run_holds
WHERE keep_until < now()
    AND (status <> 'running' OR lease_until < now() - interval '1 day')
    AND (kind, name) IN (
        SELECT kind, name FROM crontap_run_holds
        WHERE keep_until < now()
            AND (status <> 'running' OR lease_until < now() - interval '1 day')
        LIMIT $1)";

/// Run after every connection: a claim under REPEATABLE READ or SERIALIZABLE (a database's
/// or role's `default_transaction_isolation`) fails with a serialization error when it
/// races another, where READ COMMITTED re-checks the row and answers.
const SESSION: &str = "SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL READ COMMITTED";

/// A connection to the server, and what it takes to connect again.
pub struct PostgresStore {
    /// Always `Some` until dropped; dropped with `shutdown_background`, so a name lookup
    /// still running on a blocking thread (a resolver that does not answer) cannot hold
    /// crontap-run past its timeouts.
    runtime: Option<Runtime>,
    config: Config,
    tls: MakeRustlsConnect,
    /// The whole connection, all hosts tried, must be made within this.
    connect_within: Duration,
    /// `None` after the connection failed: the next statement connects again.
    client: Option<Client>,
    /// The task that drives the connection; it ends when the client is dropped.
    connection: Option<tokio::task::JoinHandle<()>>,
    lease: Duration,
    /// How long one statement may take.
    statement_timeout: Duration,
    /// The user and database names to take out of server messages, longest first.
    redact: Arc<Vec<String>>,
    /// `<hostname> pid <pid>`, written to the rows this run claims.
    holder: String,
    next_id: u64,
}

/// An error from the server or the connection, in one line and without the URL; keeps the
/// SQLSTATE for the code that acts on it.
#[derive(Debug)]
pub struct PgError {
    code: Option<SqlState>,
    text: String,
}

impl std::fmt::Display for PgError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

impl StdError for PgError {}

impl PgError {
    fn new(err: &tokio_postgres::Error) -> PgError {
        if let Some(db) = err.as_db_error() {
            // The message only: DETAIL may quote row values, and HINT adds lines.
            return PgError {
                code: Some(db.code().clone()),
                text: one_line(&format!(
                    "{}: {} (SQLSTATE {})",
                    db.severity(),
                    db.message(),
                    db.code().code()
                )),
            };
        }
        // tokio-postgres's own text leaves out the cause; add the chain.
        let mut text = err.to_string();
        let mut source = err.source();
        while let Some(cause) = source {
            text.push_str(": ");
            text.push_str(&cause.to_string());
            source = cause.source();
        }
        PgError {
            code: None,
            text: one_line(&text),
        }
    }

    /// The error with every string in `redact` replaced by `[REDACTED]`.
    fn redacted(mut self, redact: &[String]) -> PgError {
        for secret in redact {
            self.text = self.text.replace(secret.as_str(), "[REDACTED]");
        }
        self
    }

    /// The SQLSTATE of an error from [`PostgresStore`], if the server sent one.
    pub fn code_of(err: &anyhow::Error) -> Option<&SqlState> {
        err.downcast_ref::<PgError>()?.code.as_ref()
    }
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// How long one statement may take with leases of `lease`: 10 s, or a third of the lease
/// when that is shorter.
fn statement_timeout(lease: Duration) -> Duration {
    STATEMENT_TIMEOUT.min(lease / 3)
}

/// The names in `config` that server messages may quote and that are long enough to take
/// out of them without garbling the rest: the user and the database, longest first.
fn names_to_redact(config: &Config) -> Vec<String> {
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

impl PostgresStore {
    /// Connects to the server named by `url`, for leases that last `lease`.
    pub fn open(url: &str, lease: Duration) -> Result<PostgresStore> {
        // A failed connection drops the store, and with it the runtime, without waiting.
        let mut store = PostgresStore::unconnected(url, lease)?;
        store.connect()?;
        Ok(store)
    }

    /// The store for `url`, not connected yet.
    fn unconnected(url: &str, lease: Duration) -> Result<PostgresStore> {
        let (mut config, tls) = settings(url)?;
        let connect_timeout = *config.get_connect_timeout().unwrap_or(&CONNECT_TIMEOUT);
        config.connect_timeout(connect_timeout);
        let hosts = config.get_hosts().len().max(1) as u32;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("cannot start the PostgreSQL client")?;
        let hostname = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
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
            holder: format!("{} pid {}", hostname.trim(), std::process::id()),
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
    fn query(&mut self, sql: &str, params: &[(&(dyn ToSql + Sync), Type)]) -> Result<Vec<Row>> {
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
    fn query_table(
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

    fn prune(&mut self) {
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

/// A target's row: its kind and name.
fn row_of(target: &Target) -> (&'static str, &str) {
    match target {
        Target::Lock { job } => ("lock", job),
        Target::Key { key, .. } => ("key", key),
    }
}

/// How a target is named in messages.
fn describe(target: &Target) -> String {
    match target {
        Target::Lock { job } => format!("the --no-overlap lock of job {job}"),
        Target::Key { key, .. } => format!("the key {key}"),
    }
}

impl Store for PostgresStore {
    fn claim(&mut self, target: &Target, owner: &str) -> Result<Claim> {
        let (kind, name) = row_of(target);
        let (job, keep_until) = match target {
            Target::Lock { job } => (job, None),
            Target::Key {
                job, keep_until, ..
            } => (job, Some(*keep_until)),
        };
        let holder = self.holder.clone();
        let lease = self.lease.as_secs_f64();
        let mut conflicts = 0;
        let mut tries = 0;
        while tries < CLAIM_TRIES {
            tries += 1;
            let granted = self.query_table(
                CLAIM,
                &[
                    (&kind, Type::TEXT),
                    (&name, Type::TEXT),
                    (job, Type::TEXT),
                    (&owner, Type::TEXT),
                    (&holder, Type::TEXT),
                    (&lease, Type::FLOAT8),
                    (&keep_until, Type::TIMESTAMPTZ),
                ],
            );
            let granted = match granted {
                Err(err) if retryable(&err) && conflicts + 1 < SERIALIZATION_TRIES => {
                    // Another claim changed the row first: look again.
                    conflicts += 1;
                    tries -= 1;
                    tracing::debug!("a claim conflicted with another ({err:#}); claiming again");
                    std::thread::sleep(Duration::from_millis(20 * conflicts as u64));
                    continue;
                }
                answer => answer?,
            };
            if !granted.is_empty() {
                self.next_id += 1;
                return Ok(Claim::Granted(Lease {
                    target: target.clone(),
                    owner: owner.to_owned(),
                    id: self.next_id,
                }));
            }
            let rows = self.query(LOOK, &[(&kind, Type::TEXT), (&name, Type::TEXT)])?;
            let Some(row) = rows.first() else {
                continue; // released or pruned since: claim again
            };
            let status: String = row.try_get("status")?;
            let free: bool = row.try_get("free")?;
            match (status.as_str(), free) {
                (_, true) => continue, // failed or expired since: claim again
                ("succeeded", false) => return Ok(Claim::Done(row.try_get("updated_at")?)),
                _ => return Ok(Claim::Held),
            }
        }
        Ok(Claim::Held)
    }

    fn renew(&mut self, lease: &Lease) -> Result<()> {
        let (kind, name) = row_of(&lease.target);
        let (job, keep_until) = match &lease.target {
            Target::Lock { job } => (job, None),
            Target::Key {
                job, keep_until, ..
            } => (job, Some(*keep_until)),
        };
        let secs = self.lease.as_secs_f64();
        let holder = self.holder.clone();
        let renewed = self.query(
            RENEW,
            &[
                (&kind, Type::TEXT),
                (&name, Type::TEXT),
                (job, Type::TEXT),
                (&lease.owner, Type::TEXT),
                (&holder, Type::TEXT),
                (&secs, Type::FLOAT8),
                (&keep_until, Type::TIMESTAMPTZ),
            ],
        )?;
        if renewed.is_empty() {
            bail!(
                "{} was lost: its lease expired and another run took it over",
                describe(&lease.target)
            );
        }
        Ok(())
    }

    fn complete(&mut self, lease: Lease, succeeded: bool) -> Result<()> {
        let Target::Key {
            key, keep_until, ..
        } = &lease.target
        else {
            return self.release(lease);
        };
        let status = if succeeded { "succeeded" } else { "failed" };
        let recorded = self.query(
            COMPLETE,
            &[
                (key, Type::TEXT),
                (&lease.owner, Type::TEXT),
                (&status, Type::TEXT),
                (keep_until, Type::TIMESTAMPTZ),
            ],
        )?;
        if recorded.is_empty() {
            bail!("the key {key} was taken over by another run after this run's lease expired");
        }
        self.prune();
        Ok(())
    }

    fn release(&mut self, lease: Lease) -> Result<()> {
        let (kind, name) = row_of(&lease.target);
        let released = self.query(
            RELEASE,
            &[
                (&kind, Type::TEXT),
                (&name, Type::TEXT),
                (&lease.owner, Type::TEXT),
            ],
        )?;
        if released.is_empty() {
            bail!(
                "{} was taken over by another run after this run's lease expired",
                describe(&lease.target)
            );
        }
        Ok(())
    }

    fn renew_every(&self) -> Option<Duration> {
        Some(self.lease / 3)
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

/// Whether a claim that failed so may simply be tried again: a serialization failure or a
/// deadlock, which roll back the statement and nothing else.
fn retryable(err: &anyhow::Error) -> bool {
    PgError::code_of(err).is_some_and(|code| {
        *code == SqlState::T_R_SERIALIZATION_FAILURE || *code == SqlState::T_R_DEADLOCK_DETECTED
    })
}

/// What `sslmode` asks of the server's certificate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verify {
    /// Encrypt, check nothing.
    Nothing,
    /// The certificate chains to a trusted root; its names are not checked.
    Chain,
    /// The chain and that the certificate names the host.
    Full,
}

/// Where trusted roots come from.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Roots {
    None,
    System,
    File(PathBuf),
}

/// The connection settings in `url`: the client's configuration, and the TLS configuration
/// its `sslmode` and `sslrootcert` ask for. Those two are read here, as libpq reads them; the
/// rest of the URL goes to tokio-postgres. No error holds the URL.
fn settings(url: &str) -> Result<(Config, ClientConfig)> {
    let (base, query) = url.split_once('?').unwrap_or((url, ""));
    let mut sslmode = None;
    let mut rootcert = None;
    let mut rest = Vec::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let decode = |s: &str| {
            percent_encoding::percent_decode_str(s)
                .decode_utf8()
                .map(|s| s.into_owned())
        };
        match decode(key).as_deref() {
            Ok("sslmode") => sslmode = Some(decode(value).context("sslmode is not UTF-8")?),
            Ok("sslrootcert") => {
                rootcert = Some(decode(value).context("sslrootcert is not UTF-8")?)
            }
            _ => rest.push(pair),
        }
    }
    let rest = match rest.is_empty() {
        true => base.to_owned(),
        false => format!("{base}?{}", rest.join("&")),
    };
    let mut config: Config = rest
        .parse()
        .map_err(|err: tokio_postgres::Error| PgError::new(&err))
        .context("the state URL is not a valid PostgreSQL URL")?;
    let (mode, verify) = match sslmode.as_deref().unwrap_or("prefer") {
        "disable" => (SslMode::Disable, Verify::Nothing),
        // libpq's allow tries without TLS first; TLS whenever offered is no weaker.
        "allow" | "prefer" => (SslMode::Prefer, Verify::Nothing),
        "require" => (SslMode::Require, Verify::Nothing),
        "verify-ca" => (SslMode::Require, Verify::Chain),
        "verify-full" => (SslMode::Require, Verify::Full),
        _ => bail!(
            "sslmode in the state URL must be disable, allow, prefer, require, verify-ca or \
             verify-full"
        ),
    };
    config.ssl_mode(mode);
    let roots = match rootcert.as_deref() {
        None | Some("") => Roots::None,
        Some("system") => Roots::System,
        Some(path) => Roots::File(PathBuf::from(path)),
    };
    let verify = match (verify, &roots) {
        (Verify::Nothing, Roots::File(_)) if mode == SslMode::Require => Verify::Chain,
        (Verify::Chain | Verify::Nothing, Roots::System) => {
            bail!("sslrootcert=system in the state URL needs sslmode=verify-full, as with libpq")
        }
        (Verify::Chain, Roots::None) => {
            bail!("sslmode=verify-ca in the state URL needs sslrootcert=<file of PEM roots>")
        }
        (verify, _) => verify,
    };
    if config.get_user().is_none() {
        // libpq's default: the user crontap-run runs as.
        if let Ok(Some(user)) = nix::unistd::User::from_uid(nix::unistd::getuid()) {
            config.user(user.name);
        }
    }
    if config.get_application_name().is_none() {
        config.application_name("crontap-run");
    }
    Ok((config, tls_config(verify, &roots)?))
}

/// The rustls configuration for a check of the server's certificate.
fn tls_config(verify: Verify, roots: &Roots) -> Result<ClientConfig> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = match (verify, roots) {
        (Verify::Full, Roots::None | Roots::System) => crate::tls::with_roots()?,
        (Verify::Full, Roots::File(path)) => builder(&provider)?
            .with_root_certificates(read_roots(path)?)
            .with_no_client_auth(),
        (Verify::Chain, Roots::File(path)) => {
            let roots = Arc::new(read_roots(path)?);
            let chain = WebPkiServerVerifier::builder_with_provider(roots, Arc::clone(&provider))
                .build()
                .context("TLS setup failed")?;
            builder(&provider)?
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(ChainOnly(chain)))
                .with_no_client_auth()
        }
        _ => builder(&provider)?
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(Unchecked(
                provider.signature_verification_algorithms,
            )))
            .with_no_client_auth(),
    };
    // PostgreSQL 17 refuses any other protocol name a client offers.
    config.alpn_protocols = vec![b"postgresql".to_vec()];
    Ok(config)
}

fn builder(
    provider: &Arc<CryptoProvider>,
) -> Result<rustls::ConfigBuilder<ClientConfig, rustls::WantsVerifier>> {
    ClientConfig::builder_with_provider(Arc::clone(provider))
        .with_safe_default_protocol_versions()
        .context("TLS setup failed")
}

fn read_roots(path: &std::path::Path) -> Result<RootCertStore> {
    let unreadable = || format!("cannot read sslrootcert {}", path.display());
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(path).with_context(unreadable)? {
        roots
            .add(cert.with_context(unreadable)?)
            .with_context(unreadable)?;
    }
    if roots.is_empty() {
        bail!("sslrootcert {} holds no certificate", path.display());
    }
    Ok(roots)
}

/// `verify-ca`: the chain is checked, the names in the certificate are not.
#[derive(Debug)]
struct ChainOnly(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            verified => verified,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

/// `prefer` and `require`, as libpq has them: the connection is encrypted, and the server's
/// certificate is not checked (the handshake's signatures still are).
#[derive(Debug)]
struct Unchecked(WebPkiSupportedAlgorithms);

impl ServerCertVerifier for Unchecked {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.0)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.0)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PW: &str = "pw-77x";

    #[test]
    fn sslmodes_and_roots() {
        let ok = |url: &str| settings(url).unwrap_or_else(|e| panic!("{url}: {e:#}")).0;
        let config = ok("postgres://app:pw-77x@db.example:6432/jobs");
        assert_eq!(config.get_ssl_mode(), SslMode::Prefer);
        assert_eq!(config.get_user(), Some("app"));
        assert_eq!(config.get_password(), Some(PW.as_bytes()));
        assert_eq!(config.get_dbname(), Some("jobs"));
        assert_eq!(config.get_application_name(), Some("crontap-run"));
        assert_eq!(
            ok("postgresql://db/x?sslmode=disable").get_ssl_mode(),
            SslMode::Disable
        );
        assert_eq!(
            ok("postgres://db/x?sslmode=allow").get_ssl_mode(),
            SslMode::Prefer
        );
        // sslmode and sslrootcert are taken out; other parameters still reach the client.
        let config = ok(
            "postgres://db/x?connect_timeout=2&sslmode=verify-full&sslrootcert=system\
             &application_name=nightly",
        );
        assert_eq!(config.get_ssl_mode(), SslMode::Require);
        assert_eq!(config.get_connect_timeout(), Some(&Duration::from_secs(2)));
        assert_eq!(config.get_application_name(), Some("nightly"));
        assert_eq!(
            ok("postgres://db/x?sslmode=verify-full").get_ssl_mode(),
            SslMode::Require
        );
    }

    #[test]
    fn bad_urls_are_refused_without_the_password() {
        for (url, says) in [
            ("postgres://u:pw-77x@db/x?sslmode=sometimes", "sslmode"),
            ("postgres://u:pw-77x@db/x?sslmode=verify-ca", "sslrootcert"),
            (
                "postgres://u:pw-77x@db/x?sslmode=require&sslrootcert=system",
                "verify-full",
            ),
            (
                "postgres://u:pw-77x@db/x?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem",
                "sslrootcert",
            ),
            ("postgres://u:pw-77x@db/x?frobnicate=1", "frobnicate"),
            ("postgres://u:pw-77x@db:port/x", "port"),
        ] {
            let err = format!("{:#}", settings(url).map(drop).unwrap_err());
            assert!(err.contains(says), "{url}: {err}");
            assert!(!err.contains(PW), "{url}: {err}");
            assert!(!err.contains('\n'), "{url}: {err}");
        }
    }

    #[test]
    fn statements_end_within_a_third_of_a_short_lease() {
        assert_eq!(
            statement_timeout(Duration::from_secs(60)),
            STATEMENT_TIMEOUT
        );
        assert_eq!(
            statement_timeout(Duration::from_secs(30)),
            STATEMENT_TIMEOUT
        );
        assert_eq!(
            statement_timeout(Duration::from_secs(3)),
            Duration::from_secs(1)
        );
        let store =
            PostgresStore::unconnected("postgres://u@db/x", Duration::from_secs(6)).unwrap();
        assert_eq!(store.statement_timeout, Duration::from_secs(2));
    }

    #[test]
    fn user_and_database_names_are_taken_out_of_server_messages() {
        let redact = |url: &str, text: &str| {
            let (config, _) = settings(url).unwrap();
            let err = PgError {
                code: None,
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

    #[test]
    fn server_errors_are_one_line() {
        assert_eq!(one_line("a\nDETAIL:  b\n"), "a DETAIL: b");
    }
}
