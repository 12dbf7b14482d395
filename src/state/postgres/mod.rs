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
//! grant the job's role only `SELECT, INSERT, UPDATE, DELETE` on it and `USAGE` on the
//! sequence); it lives in the first
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
//!     fencing_token bigint    NOT NULL DEFAULT 0,  -- of the last claim
//!     PRIMARY KEY (kind, name)
//! );
//! CREATE SEQUENCE IF NOT EXISTS crontap_run_fencing;  -- fencing tokens
//! ```
//!
//! Every granted claim takes its fencing token from the sequence, so tokens only grow, for
//! every job. A table made by a release before fencing tokens gets the column added on
//! first use.
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

mod client;
mod config;
mod error;
mod tls;

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Result, bail};
use tokio::runtime::Runtime;
use tokio_postgres::error::SqlState;
use tokio_postgres::types::Type;
use tokio_postgres::{Client, Config};
use tokio_postgres_rustls::MakeRustlsConnect;

use super::store::{Claim, Found, Lease, Store, Target};

pub use error::PgError;

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

/// Claims that find the row let go of between the claim and the look that follows it are
/// tried again this many times in all.
const CLAIM_TRIES: usize = 3;

/// Most expired rows deleted by one run, so that a first clean-up in a long time stays
/// quick.
const PRUNE_MAX: i64 = 200;

const CREATE: [&str; 3] = [
    "CREATE TABLE IF NOT EXISTS crontap_run_holds (
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
    fencing_token bigint    NOT NULL DEFAULT 0,
    PRIMARY KEY (kind, name)
)",
    // Added in a later release: a table an older one made gets it here.
    "ALTER TABLE crontap_run_holds ADD COLUMN IF NOT EXISTS fencing_token bigint NOT NULL DEFAULT 0",
    "CREATE SEQUENCE IF NOT EXISTS crontap_run_fencing",
];

/// Whether the row `h` may be claimed by the claim whose values are in `excluded`: a
/// failed key, a hold whose lease has passed, a succeeded key past its retention, or (when
/// a claim is repeated after a lost answer) the claimant's own hold.
const CLAIM: &str = "INSERT INTO crontap_run_holds AS h
    (kind, name, job, status, owner, holder, lease_until, keep_until, claimed_at, updated_at,
        fencing_token)
VALUES ($1, $2, $3, 'running', $4, $5, now() + make_interval(secs => $6),
    coalesce($7, now() + make_interval(secs => $6)), now(), now(),
    nextval('crontap_run_fencing'))
ON CONFLICT (kind, name) DO UPDATE SET
    job = excluded.job, status = 'running', owner = excluded.owner, holder = excluded.holder,
    lease_until = excluded.lease_until, keep_until = excluded.keep_until,
    claimed_at = excluded.claimed_at, updated_at = excluded.updated_at,
    fencing_token = excluded.fencing_token
WHERE (h.status = 'running' AND h.owner = excluded.owner)
    OR CASE h.status
        WHEN 'running' THEN h.lease_until < now()
        WHEN 'succeeded' THEN h.keep_until < now()
        -- 'failed', or a status from a newer crontap-run: no record that blocks.
        ELSE true
    END
RETURNING fencing_token";

/// A row the claim did not get: why not, and whether it has become free since.
const LOOK: &str = "SELECT status, updated_at,
    CASE status
        WHEN 'running' THEN lease_until < now()
        WHEN 'succeeded' THEN keep_until < now()
        ELSE true
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
    /// One per host of the URL, tried in turn.
    configs: Vec<Config>,
    tls: MakeRustlsConnect,
    /// The whole connection, all hosts tried, must be made within this; each host gets
    /// its share of what is left.
    connect_within: Duration,
    /// Longest single attempt to connect to one host (`connect_timeout`).
    connect_timeout: Duration,
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
/// How long one statement may take with leases of `lease`: 10 s, or a third of the lease
/// when that is shorter.
fn statement_timeout(lease: Duration) -> Duration {
    STATEMENT_TIMEOUT.min(lease / 3)
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
            if let Some(row) = granted.first() {
                let fencing: i64 = row.try_get("fencing_token")?;
                self.next_id += 1;
                return Ok(Claim::Granted(Lease {
                    target: target.clone(),
                    owner: owner.to_owned(),
                    id: self.next_id,
                    fencing: fencing.try_into().unwrap_or(0),
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

    fn look(&mut self, target: &Target) -> Result<Found> {
        let (kind, name) = row_of(target);
        let rows = match self.query(LOOK, &[(&kind, Type::TEXT), (&name, Type::TEXT)]) {
            // No table yet: nothing was ever claimed (a look creates nothing).
            Err(err) if PgError::code_of(&err) == Some(&SqlState::UNDEFINED_TABLE) => {
                return Ok(Found::Free);
            }
            rows => rows?,
        };
        let Some(row) = rows.first() else {
            return Ok(Found::Free);
        };
        let status: String = row.try_get("status")?;
        let free: bool = row.try_get("free")?;
        Ok(match (status.as_str(), free) {
            (_, true) => Found::Free,
            ("succeeded", false) => Found::Done(row.try_get("updated_at")?),
            _ => Found::Held,
        })
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

    /// A run holds no connection while its command runs: a fleet of long jobs would
    /// otherwise take as many of the server's connections as there are jobs. Each renewal
    /// opens a short one.
    fn rest(&mut self) {
        self.disconnect();
    }

    fn renew_every(&self) -> Option<Duration> {
        Some(self.lease / 3)
    }
}
/// Whether a claim that failed so may simply be tried again: a serialization failure or a
/// deadlock, which roll back the statement and nothing else.
fn retryable(err: &anyhow::Error) -> bool {
    PgError::code_of(err).is_some_and(|code| {
        *code == SqlState::T_R_SERIALIZATION_FAILURE || *code == SqlState::T_R_DEADLOCK_DETECTED
    })
}
#[cfg(test)]
mod tests {
    use super::*;

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
        let store = PostgresStore::unconnected(
            "postgres://u@db/x",
            Duration::from_secs(6),
            Duration::from_secs(10),
        )
        .unwrap();
        assert_eq!(store.statement_timeout, Duration::from_secs(2));
    }
}
