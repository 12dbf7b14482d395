//! State features: the `--no-overlap` lock and the idempotency key of `--once-per` and
//! `--idempotency-key`, held in a [`Store`] for the whole run.
//!
//! A run takes the job's lock first, then claims its key, both before the command starts and
//! without waiting: a lock or key held by a live run, or a key already recorded as
//! succeeded, means this run is not due and is skipped. A holder that died without
//! finishing never blocks anyone: the store notices it is gone (a kernel lock released, a
//! lease expired) and lets the next run take over. Nothing here keeps protection in memory
//! only; restarts and other instances see the same store.
//!
//! Stores implement four operations (claim, renew, complete, release); everything else is
//! written once here, so a new store changes nothing outside its own module.
//!
//! Beside the stores: [`job`] names the logical job and its keys and periods, [`history`]
//! keeps one line per stateful run on this host, [`location`] parses `--state-url`, and
//! [`disk`] says where the state directory is by default; [`crate::files`] opens what is in it.

pub(crate) mod disk;
#[cfg(test)]
mod extremes;
pub(crate) mod file;
pub(crate) mod history;
pub(crate) mod job;
pub(crate) mod location;
#[cfg(feature = "postgres")]
pub mod postgres;
#[cfg(feature = "redis")]
pub mod redis;
pub(crate) mod stats;
pub(crate) mod store;

use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context, Result};
use tokio::sync::watch;

use crate::files::{Check, Dir};
use crate::run::supervise::LeaseDeadline;
use crate::sanitize;
use location::Remote;
pub use store::{Claim, Found, Lease, RETENTION, Store, Target};

/// This machine's host name, as `hostname` prints it, for the records a state server keeps
/// of who holds a lock; empty if it cannot be had.
#[cfg(any(feature = "postgres", feature = "redis"))]
pub(crate) fn host_name() -> String {
    crate::host::name().unwrap_or_default()
}

/// The key a run uses, as the options ask for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeySpec {
    /// `--once-per`: `<job>:<period start>`.
    OncePer(job::Period),
    /// `--idempotency-key`.
    Explicit(String),
}

/// What the state options ask for, validated.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The state directory (the file store, and history); `None` when none was given and
    /// there is no default ([`disk::NO_DEFAULT_DIR`]).
    pub dir: Option<PathBuf>,
    /// The state server, when the store is not the directory.
    pub remote: Option<Remote>,
    /// How long a server keeps a hold its holder stopped renewing (`--state-lease`).
    pub lease: Duration,
    /// Bound on all store work before the command starts (`--state-timeout`).
    pub timeout: Duration,
    pub job: String,
    pub no_overlap: bool,
    pub key: Option<KeySpec>,
}

impl Plan {
    /// The key for a run starting at `now`, and how long its record is kept.
    pub fn key_at(&self, now: SystemTime) -> Option<(String, SystemTime)> {
        match self.key.as_ref()? {
            KeySpec::OncePer(period) => {
                let (start, end) = period.containing(now);
                Some((
                    job::once_per_key(&self.job, start),
                    end.max(now) + RETENTION,
                ))
            }
            KeySpec::Explicit(key) => Some((key.clone(), now + RETENTION)),
        }
    }
}

/// Whether the run goes ahead.
pub enum Admission {
    Run(Held),
    /// Not due; the reason, for the notice line and history.
    Skip(String),
}

/// The lock and key a running job holds; renewed in the background when the store needs it.
pub struct Held {
    /// For stores with leases: by when the command must be gone, as this host can be sure of
    /// the lease (see [`gone_by`]); moved forward by every renewal.
    deadline: Option<watch::Receiver<LeaseDeadline>>,
    store: Arc<Mutex<Box<dyn Store>>>,
    leases: Vec<Lease>,
    key: Option<String>,
    keeper: Option<Keeper>,
}

/// Opens the store and takes what `plan` asks for, lock first. Any error means the store
/// is unusable.
pub fn admit(plan: &Plan, owner: &str, now: SystemTime) -> Result<Admission> {
    let (store, unusable) = open(plan)?;
    admit_with(store, plan, owner, now).with_context(|| unusable)
}

/// For `--dry-run`: whether a run starting at `now` would be skipped, and why, found
/// without taking or writing anything (a state directory that does not exist yet is not
/// created: nothing was ever claimed there).
pub fn look(plan: &Plan, now: SystemTime) -> Result<Option<String>> {
    let (mut store, unusable) = open_with(plan, Access::Look)?;
    let look = |store: &mut Box<dyn Store>| -> Result<Option<String>> {
        if plan.no_overlap && store.look(&lock_of(plan))? != Found::Free {
            return Ok(Some(already_running(plan)));
        }
        if let Some((key, keep_until)) = plan.key_at(now) {
            let found = store.look(&key_target(plan, &key, keep_until))?;
            return Ok(not_due(&key, found));
        }
        Ok(None)
    };
    look(&mut store).with_context(|| unusable)
}

/// Whether a store is opened to claim (it may create what it needs) or only to look.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Access {
    Claim,
    Look,
}

/// Opens the store `plan` names; also returns the words for "it is unusable".
fn open(plan: &Plan) -> Result<(Box<dyn Store>, String)> {
    open_with(plan, Access::Claim)
}

fn open_with(plan: &Plan, access: Access) -> Result<(Box<dyn Store>, String)> {
    if let Some(remote) = &plan.remote {
        // The history stays in the state directory: one that is there but that another
        // account could change is refused before the command, as with the file store. One
        // that is not there yet is made when the history is written, after the command.
        if let (Some(dir), Access::Claim) = (&plan.dir, &access) {
            Dir::open(dir, Check::Private, false).with_context(|| dir_unusable(dir))?;
        }
        let unusable = format!(
            "the state store {} is unreachable or failing",
            remote.redacted()
        );
        let store =
            open_remote(remote, plan.lease, plan.timeout).with_context(|| unusable.clone())?;
        return Ok((store, unusable));
    }
    let dir = plan.dir.as_deref().context(disk::NO_DEFAULT_DIR)?;
    let unusable = dir_unusable(dir);
    let store = match access {
        Access::Claim => file::FileStore::open(dir).with_context(|| unusable.clone())?,
        Access::Look => file::FileStore::at(dir).with_context(|| unusable.clone())?,
    };
    Ok((Box::new(store), unusable))
}

/// The words for "the state directory `dir` cannot be used", on one line whatever the path
/// holds (a newline in a path would split the message).
fn dir_unusable(dir: &Path) -> String {
    format!(
        "the state directory {} is unusable (set it with --state-dir or CRONTAP_STATE_DIR)",
        sanitize::path(dir)
    )
}

/// Connects to a state server whose leases last `lease`. Each engine's store is built in
/// by its cargo feature; config refuses an engine this build lacks, so the last arm is only
/// a safeguard.
fn open_remote(remote: &Remote, lease: Duration, within: Duration) -> Result<Box<dyn Store>> {
    let _ = (lease, within);
    #[allow(clippy::match_single_binding, unreachable_patterns)]
    match remote.engine {
        #[cfg(feature = "postgres")]
        location::Engine::Postgres => {
            let store = postgres::PostgresStore::open_within(&remote.url, lease, within)?;
            Ok(Box::new(store))
        }
        #[cfg(feature = "redis")]
        location::Engine::Redis => {
            let store = self::redis::RedisStore::open_within(&remote.url, lease, within)?;
            Ok(Box::new(store))
        }
        engine => anyhow::bail!(
            "this build of crontap-run has no {engine:?} support (cargo feature {})",
            engine.feature()
        ),
    }
}

/// The job's `--no-overlap` lock.
fn lock_of(plan: &Plan) -> Target {
    Target::Lock {
        job: plan.job.clone(),
    }
}

fn key_target(plan: &Plan, key: &str, keep_until: SystemTime) -> Target {
    Target::Key {
        key: key.to_owned(),
        job: plan.job.clone(),
        keep_until,
    }
}

fn already_running(plan: &Plan) -> String {
    format!("job {} is already running (--no-overlap)", plan.job)
}

/// Why a run whose key was `found` so is not due; `None` if it is.
fn not_due(key: &str, found: Found) -> Option<String> {
    match found {
        Found::Free => None,
        Found::Held => Some(format!("{key} is being run by another instance")),
        Found::Done(at) => Some(format!("{key} already succeeded at {}", shown_time(at))),
    }
}

/// `at` in RFC 3339, or words for a time that cannot be written so (before 1970 or after
/// 9999, which a server store may hold): a store's content never makes a run panic.
fn shown_time(at: SystemTime) -> String {
    let last = std::time::UNIX_EPOCH + Duration::from_secs(253_402_300_799);
    match at >= std::time::UNIX_EPOCH && at <= last {
        true => humantime::format_rfc3339_seconds(at).to_string(),
        false => "a time outside 1970 to 9999".to_owned(),
    }
}

fn admit_with(
    store: Box<dyn Store>,
    plan: &Plan,
    owner: &str,
    now: SystemTime,
) -> Result<Admission> {
    let key = plan.key_at(now);
    // Before the first claim is sent: no lease granted here can end before this plus the
    // lease.
    let claimed_at = Instant::now();
    // Built first, so that a lease taken before a skip or an error is released on drop.
    let mut held = Held {
        deadline: None,
        store: Arc::new(Mutex::new(store)),
        leases: Vec::new(),
        key: key.as_ref().map(|(k, _)| k.clone()),
        keeper: None,
    };
    if plan.no_overlap
        && let Claim::Held | Claim::Done(_) = held.claim(&lock_of(plan), owner)?
    {
        return Ok(Admission::Skip(already_running(plan)));
    }
    if let Some((key, keep_until)) = key {
        let found = match held.claim(&key_target(plan, &key, keep_until), owner)? {
            Claim::Granted(_) => Found::Free,
            Claim::Held => Found::Held,
            Claim::Done(at) => Found::Done(at),
        };
        if let Some(reason) = not_due(&key, found) {
            return Ok(Admission::Skip(reason));
        }
    }
    held.store().rest();
    let every = held.store().renew_every();
    if let Some(every) = every {
        let (tx, watch) = watch::channel(gone_by(claimed_at, plan.lease));
        held.deadline = Some(watch);
        let deadline = Deadline {
            tx,
            lease: plan.lease,
        };
        let leases = held.leases.clone();
        held.keeper = Some(Keeper::start(
            Arc::clone(&held.store),
            leases,
            every,
            deadline,
        ));
    }
    Ok(Admission::Run(held))
}

impl Held {
    /// The idempotency key in force, if any.
    pub fn key(&self) -> Option<&str> {
        self.key.as_deref()
    }

    /// By when the command must be gone for its lease to be sure not to run out while it
    /// runs (`--on-lease-lost stop`); `None` for holds that last as long as the process.
    pub fn lease_deadline(&self) -> Option<watch::Receiver<LeaseDeadline>> {
        self.deadline.clone()
    }

    /// The fencing token of this run: that of its last claim, which is larger than any
    /// earlier claim's of the job in this store.
    pub fn fencing_token(&self) -> Option<u64> {
        self.leases.iter().map(|lease| lease.fencing).max()
    }

    fn store(&self) -> std::sync::MutexGuard<'_, Box<dyn Store>> {
        self.store.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Claims `target`, keeping the lease if granted; the claim itself is returned with a
    /// copy of the lease.
    fn claim(&mut self, target: &Target, owner: &str) -> Result<Claim> {
        let claim = self.store().claim(target, owner)?;
        if let Claim::Granted(lease) = &claim {
            self.leases.push(lease.clone());
        }
        Ok(claim)
    }

    /// Records the run's result under its key and releases everything, key first (so the
    /// lock is still held while the result is written).
    pub fn finish(mut self, succeeded: bool) -> Result<()> {
        drop(self.keeper.take());
        let leases = std::mem::take(&mut self.leases);
        let mut store = self.store();
        let mut first_error = None;
        for lease in leases.into_iter().rev() {
            if let Err(err) = store.complete(lease, succeeded) {
                first_error.get_or_insert(err);
            }
        }
        first_error.map_or(Ok(()), Err)
    }
}

/// A run that ends without [`Held::finish`] (skipped, or crontap-run's own error) lets go
/// of what it took, so that a store with leases is not blocked until they expire.
impl Drop for Held {
    fn drop(&mut self) {
        drop(self.keeper.take());
        let leases = std::mem::take(&mut self.leases);
        let mut store = self.store();
        for lease in leases.into_iter().rev() {
            if let Err(err) = store.release(lease) {
                tracing::debug!("cannot release a hold on the state store: {err:#}");
            }
        }
    }
}

/// When a holder whose lease of length `lease` was last renewed (or claimed) by a request
/// sent at `sent` must have stopped its command: the store ends the lease no earlier than
/// `sent + lease` (it counts from when the request arrived), less a margin for reaping the
/// command and for clocks that run at slightly different rates. SIGTERM may come at most a
/// third of the lease (less the margin) before that, so that the next renewal, due a third
/// of the lease after the last, has the time to answer and move the deadline first.
pub fn gone_by(sent: Instant, lease: Duration) -> LeaseDeadline {
    let margin = (lease / 10).max(Duration::from_millis(250));
    LeaseDeadline {
        gone_by: sent + lease.saturating_sub(margin),
        max_grace: (lease / 3).saturating_sub(margin),
    }
}

/// Renews leases on a thread of its own until dropped, so a job that outlives its lease is
/// never run twice.
struct Keeper {
    stop: mpsc::Sender<()>,
    thread: Option<JoinHandle<()>>,
}

/// Where a keeper reports each successful round of renewals: the new [`gone_by`].
struct Deadline {
    tx: watch::Sender<LeaseDeadline>,
    lease: Duration,
}

impl Keeper {
    /// Renews `leases` every `every`, reporting each round that renewed them all.
    fn start(
        store: Arc<Mutex<Box<dyn Store>>>,
        leases: Vec<Lease>,
        every: Duration,
        deadline: Deadline,
    ) -> Keeper {
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = std::thread::spawn(move || {
            // Whether the last renewal of each lease failed: a failure is logged when it
            // starts and a recovery when it ends, not on every tick in between.
            let mut failing = vec![false; leases.len()];
            while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(every) {
                let sent = Instant::now();
                let mut store = store.lock().unwrap_or_else(|p| p.into_inner());
                for (lease, failing) in leases.iter().zip(&mut failing) {
                    match store.renew(lease) {
                        Err(err) if !*failing => {
                            *failing = true;
                            tracing::error!("cannot renew the hold on the state store: {err:#}");
                        }
                        Ok(()) if *failing => {
                            *failing = false;
                            tracing::warn!("the hold on the state store is renewed again");
                        }
                        _ => {}
                    }
                }
                store.rest();
                if !failing.contains(&true) {
                    let _ = deadline.tx.send(gone_by(sent, deadline.lease));
                }
            }
        });
        Keeper {
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Keeper {
    fn drop(&mut self) {
        let _ = self.stop.send(());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[cfg(any(feature = "postgres", feature = "redis"))]
    #[test]
    fn host_name_is_the_kernels() {
        let proc = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
        assert_eq!(host_name(), proc.trim());
        assert!(!host_name().is_empty());
    }

    /// An in-memory store that counts renewals, to test the logic around stores.
    #[derive(Default)]
    struct Memory {
        holders: HashMap<String, String>,
        done: HashMap<String, SystemTime>,
        renewals: Arc<Mutex<u32>>,
        every: Option<Duration>,
        next: u64,
    }

    fn name(target: &Target) -> String {
        match target {
            Target::Lock { job } => format!("lock:{job}"),
            Target::Key { key, .. } => key.clone(),
        }
    }

    impl Store for Memory {
        fn look(&mut self, target: &Target) -> Result<Found> {
            let name = name(target);
            Ok(
                match (self.done.get(&name), self.holders.contains_key(&name)) {
                    (Some(at), _) => Found::Done(*at),
                    (None, true) => Found::Held,
                    (None, false) => Found::Free,
                },
            )
        }
        fn claim(&mut self, target: &Target, owner: &str) -> Result<Claim> {
            let name = name(target);
            if let Some(at) = self.done.get(&name) {
                return Ok(Claim::Done(*at));
            }
            if self.holders.contains_key(&name) {
                return Ok(Claim::Held);
            }
            self.holders.insert(name, owner.to_owned());
            self.next += 1;
            Ok(Claim::Granted(Lease {
                target: target.clone(),
                owner: owner.to_owned(),
                id: self.next,
                fencing: self.next,
            }))
        }
        fn renew(&mut self, _lease: &Lease) -> Result<()> {
            *self.renewals.lock().unwrap() += 1;
            Ok(())
        }
        fn complete(&mut self, lease: Lease, succeeded: bool) -> Result<()> {
            let name = name(&lease.target);
            self.holders.remove(&name);
            if succeeded && matches!(lease.target, Target::Key { .. }) {
                self.done.insert(name, SystemTime::UNIX_EPOCH);
            }
            Ok(())
        }
        fn release(&mut self, lease: Lease) -> Result<()> {
            self.holders.remove(&name(&lease.target));
            Ok(())
        }
        fn renew_every(&self) -> Option<Duration> {
            self.every
        }
    }

    fn plan(no_overlap: bool, key: Option<KeySpec>) -> Plan {
        Plan {
            dir: Some(PathBuf::from("/nonexistent")),
            remote: None,
            lease: Duration::from_secs(60),
            timeout: Duration::from_secs(10),
            job: "nightly".into(),
            no_overlap,
            key,
        }
    }

    #[test]
    fn keys_of_periods_and_explicit_keys() {
        let now = humantime::parse_rfc3339("2026-11-29T18:46:08Z").unwrap();
        let day = job::Period::utc(Duration::from_secs(86400));
        let (key, keep) = plan(false, Some(KeySpec::OncePer(day)))
            .key_at(now)
            .unwrap();
        assert_eq!(key, "nightly:2026-11-29T00:00:00Z");
        let period_end = humantime::parse_rfc3339("2026-11-30T00:00:00Z").unwrap();
        assert_eq!(keep, period_end + RETENTION);
        let (key, keep) = plan(false, Some(KeySpec::Explicit("run-42".into())))
            .key_at(now)
            .unwrap();
        assert_eq!((key.as_str(), keep), ("run-42", now + RETENTION));
        assert!(plan(true, None).key_at(now).is_none());
    }

    #[test]
    fn a_skipped_key_releases_the_lock() {
        let store = Arc::new(Mutex::new(Box::new(Memory::default()) as Box<dyn Store>));
        let plan = plan(true, Some(KeySpec::Explicit("k".into())));
        let now = SystemTime::now();
        // Hand the same store to both admissions through a shim that forwards to it.
        struct Shared(Arc<Mutex<Box<dyn Store>>>);
        impl Store for Shared {
            fn claim(&mut self, t: &Target, o: &str) -> Result<Claim> {
                self.0.lock().unwrap().claim(t, o)
            }
            fn look(&mut self, t: &Target) -> Result<Found> {
                self.0.lock().unwrap().look(t)
            }
            fn renew(&mut self, l: &Lease) -> Result<()> {
                self.0.lock().unwrap().renew(l)
            }
            fn complete(&mut self, l: Lease, s: bool) -> Result<()> {
                self.0.lock().unwrap().complete(l, s)
            }
            fn release(&mut self, l: Lease) -> Result<()> {
                self.0.lock().unwrap().release(l)
            }
        }
        let admit = || admit_with(Box::new(Shared(Arc::clone(&store))), &plan, "a", now).unwrap();
        let Admission::Run(first) = admit() else {
            panic!("the first run is due")
        };
        assert_eq!(first.key(), Some("k"));
        assert!(matches!(admit(), Admission::Skip(r) if r.contains("already running")));
        first.finish(true).unwrap();
        let Admission::Skip(reason) = admit() else {
            panic!("a succeeded key skips")
        };
        assert!(reason.starts_with("k already succeeded at "), "{reason}");
        // The skip let go of the lock it took on the way.
        let lock = Target::Lock {
            job: "nightly".into(),
        };
        assert!(matches!(
            store.lock().unwrap().claim(&lock, "b").unwrap(),
            Claim::Granted(_)
        ));
    }

    #[test]
    fn leases_are_renewed_while_held() {
        let renewals = Arc::new(Mutex::new(0));
        let store = Memory {
            renewals: Arc::clone(&renewals),
            every: Some(Duration::from_millis(5)),
            ..Memory::default()
        };
        let plan = plan(true, None);
        let Admission::Run(held) =
            admit_with(Box::new(store), &plan, "a", SystemTime::now()).unwrap()
        else {
            panic!("due")
        };
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while *renewals.lock().unwrap() < 3 && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(*renewals.lock().unwrap() >= 3);
        held.finish(true).unwrap();
        let after = *renewals.lock().unwrap();
        std::thread::sleep(Duration::from_millis(30));
        assert_eq!(
            *renewals.lock().unwrap(),
            after,
            "renewals stop with the run"
        );
    }
}
