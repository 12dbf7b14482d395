//! The interface every state store implements, and the words it is written in: what a run
//! claims ([`Target`]), the answer ([`Claim`]), the hold it gets ([`Lease`]) and how long a
//! finished key is remembered ([`RETENTION`]).
//!
//! The stores (file, PostgreSQL, Redis) and the code that drives them both look down to
//! this module; neither imports the other.

use std::time::{Duration, SystemTime};

use anyhow::Result;

/// How long a finished key's record is kept after its period ends (or, for an explicit key,
/// after the run): long enough for cron, Kubernetes or a person to re-run the same period
/// days later and still be told it is done, and far longer than any `--retries` schedule
/// (at most 5 waits of at most an hour each, all while the key is held).
pub const RETENTION: Duration = Duration::from_secs(7 * 24 * 3600);

/// What a run asks the store for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// The job's `--no-overlap` lock: held while the run lasts, never recorded.
    Lock { job: String },
    /// An idempotency key: held while the run lasts, then recorded as succeeded or failed
    /// and kept until `keep_until`.
    Key {
        key: String,
        job: String,
        keep_until: SystemTime,
    },
}

/// A key's state as stores record it (`"running"`, `"succeeded"`, `"failed"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Status {
    Running,
    Succeeded,
    Failed,
    /// A status this version does not know, written by a newer crontap-run. It is treated
    /// as no record at all: a record never blocks a job for good, so what cannot be
    /// understood cannot block either.
    #[serde(other, skip_serializing)]
    Unknown,
}

/// The answer to a claim.
#[derive(Debug)]
pub enum Claim {
    /// This run holds the target until it completes or releases the lease.
    Granted(Lease),
    /// A live run holds it.
    Held,
    /// The key is recorded as succeeded, at this time.
    Done(SystemTime),
}

impl Target {
    /// The job the target belongs to: fencing tokens grow per job.
    pub fn job(&self) -> &str {
        match self {
            Target::Lock { job } | Target::Key { job, .. } => job,
        }
    }
}

/// What a look at a target finds, without claiming it (`--dry-run`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    /// A claim now would be granted.
    Free,
    /// A live run holds it.
    Held,
    /// The key is recorded as succeeded, at this time.
    Done(SystemTime),
}

/// A target held by this run. `owner` is the run's id: a store checks it on every renew,
/// complete and release, so a holder whose lease was lost cannot overwrite the next
/// holder's record.
#[derive(Debug, Clone)]
pub struct Lease {
    pub target: Target,
    pub owner: String,
    /// The store's own handle for the hold.
    pub id: u64,
    /// The fencing token of this claim: larger than that of every earlier claim of the
    /// same job in the same store, so a system downstream can refuse a write from an older
    /// holder (`CRONTAP_FENCING_TOKEN`).
    pub fencing: u64,
}

/// Where claims are kept. Implementations never block waiting for another holder.
pub trait Store: Send {
    /// Claims `target` for the run `owner`.
    fn claim(&mut self, target: &Target, owner: &str) -> Result<Claim>;
    /// What a claim of `target` would find, without taking or writing anything.
    fn look(&mut self, target: &Target) -> Result<Found>;
    /// Keeps a lease alive; called every [`Store::renew_every`] while the run lasts.
    fn renew(&mut self, lease: &Lease) -> Result<()>;
    /// Records the run's result under a key (a lock is just released) and lets go of it.
    fn complete(&mut self, lease: Lease, succeeded: bool) -> Result<()>;
    /// Lets go of a lease without recording a result: the target is as if never claimed.
    fn release(&mut self, lease: Lease) -> Result<()>;
    /// Lets go of what the store does not need between two operations (a connection), once
    /// the run's claims are made and after each renewal.
    fn rest(&mut self) {}
    /// How often leases must be renewed; `None` for holds that last as long as the process.
    fn renew_every(&self) -> Option<Duration> {
        None
    }
}
