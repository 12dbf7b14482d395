//! The file store: locks and idempotency records in the state directory of one host.
//!
//! Layout:
//!
//! ```text
//! <state dir>/locks/<job>.lock      --no-overlap: flock held while the job runs
//! <state dir>/keys/<sha256>.lock    a key's lock: flock held by the run that claimed it
//! <state dir>/keys/<sha256>.json    a key's record: running, succeeded or failed
//! <state dir>/fencing/<job>.count   the job's last fencing token
//! <state dir>/fencing/<job>.lock    flock held while the token is taken
//! ```
//!
//! A key's lock says whether its holder is alive: the kernel releases it when the holder
//! ends, however it ends. So a record that says "running" while its lock is free was left
//! by a holder that died, and the next claim takes it over; no timeout is guessed. Keys are
//! named by their SHA-256 because a key may hold any character; the record keeps the key.

use std::collections::HashMap;
use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, bail};
use nix::fcntl::Flock;
use serde::{Deserialize, Serialize};

use super::disk;
use super::store::{Claim, Found, Lease, RETENTION, Status, Store, Target, corrupt_suffix};
use crate::state::job;

/// 9999-12-31T23:59:59Z, the last time RFC 3339 can write.
const LAST_SECOND: u64 = 253_402_300_799;

/// Most expired records removed by one run, so pruning never makes a run slow.
const PRUNE_MAX: usize = 200;

pub struct FileStore {
    dir: PathBuf,
    /// Locks held by this process, by lease id.
    held: HashMap<u64, Flock<File>>,
    next_id: u64,
}

/// A key's record, one JSON object per file.
#[derive(Debug, Serialize, Deserialize)]
struct Record {
    key: String,
    job: String,
    status: Status,
    /// The run id of the run that claimed the key last.
    owner: String,
    pid: u32,
    /// Seconds since the epoch.
    claimed: u64,
    updated: u64,
    keep_until: u64,
}

impl FileStore {
    /// Opens the store in `dir`, creating the directories it needs.
    pub fn open(dir: &Path) -> Result<FileStore> {
        for sub in ["locks", "keys", "fencing"] {
            disk::ensure_dir(&dir.join(sub)).with_context(|| {
                format!(
                    "cannot create the state directory {}",
                    dir.join(sub).display()
                )
            })?;
        }
        Ok(FileStore {
            dir: dir.to_owned(),
            held: HashMap::new(),
            next_id: 0,
        })
    }

    /// The store in `dir` as it is, for looking only: nothing is created.
    pub fn at(dir: &Path) -> FileStore {
        FileStore {
            dir: dir.to_owned(),
            held: HashMap::new(),
            next_id: 0,
        }
    }

    fn paths(&self, target: &Target) -> (PathBuf, Option<PathBuf>) {
        match target {
            Target::Lock { job } => (self.dir.join("locks").join(format!("{job}.lock")), None),
            Target::Key { key, .. } => {
                let name = job::sha256_hex(key.as_bytes());
                let keys = self.dir.join("keys");
                (
                    keys.join(format!("{name}.lock")),
                    Some(keys.join(format!("{name}.json"))),
                )
            }
        }
    }

    fn grant(&mut self, target: &Target, owner: &str, lock: Flock<File>) -> Result<Lease> {
        let fencing = self.next_fencing(target.job())?;
        self.next_id += 1;
        self.held.insert(self.next_id, lock);
        Ok(Lease {
            target: target.clone(),
            owner: owner.to_owned(),
            id: self.next_id,
            fencing,
        })
    }

    /// Takes the job's next fencing token: one more than the last, under a lock of its own
    /// (two keys of one job may be claimed at once), written whole before it is handed out.
    /// A counter that cannot be read is moved aside and the count goes on from the time in
    /// milliseconds, above any count a job reaches, so tokens still only grow.
    fn next_fencing(&self, job: &str) -> Result<u64> {
        let dir = self.dir.join("fencing");
        let _lock = disk::lock(&dir.join(format!("{job}.lock")))?;
        let path = dir.join(format!("{job}.count"));
        let last = match fs::read_to_string(&path) {
            Ok(text) => match text.trim().parse::<u64>() {
                Ok(last) => last,
                Err(_) => {
                    quarantine(&path)?;
                    unix_millis(SystemTime::now())
                }
            },
            Err(err) if err.kind() == io::ErrorKind::NotFound => 0,
            Err(err) => return Err(err).with_context(|| format!("cannot read {}", path.display())),
        };
        let next = last + 1;
        disk::write_atomic(&path, format!("{next}\n").as_bytes())?;
        Ok(next)
    }

    /// Removes records whose retention has passed, and lock files left without a record,
    /// skipping any that a live run holds.
    fn prune(&self, now: SystemTime) {
        let keys = self.dir.join("keys");
        let Ok(entries) = fs::read_dir(&keys) else {
            return;
        };
        // A file changed within the retention cannot have expired: skip it unread.
        let recent = now.checked_sub(RETENTION).unwrap_or(UNIX_EPOCH);
        let mut removed = 0;
        for entry in entries.flatten() {
            if removed >= PRUNE_MAX {
                break;
            }
            let path = entry.path();
            let Some(stem) = path.file_stem().and_then(|s| s.to_str()) else {
                continue;
            };
            let modified = entry.metadata().and_then(|m| m.modified());
            if disk::is_stale_temp(&path, modified.as_ref().ok(), now) {
                let _ = fs::remove_file(&path);
                continue;
            }
            let is_record = path.extension().is_some_and(|e| e == "json");
            let is_lock = path.extension().is_some_and(|e| e == "lock");
            let old = modified.is_ok_and(|t| t < recent);
            let record_path = keys.join(format!("{stem}.json"));
            let orphan_lock = is_lock && old && !record_path.exists();
            // Read before locking: locking a live key, even for a moment, could make a
            // claim racing with it skip.
            // An unreadable record is left for the next claim to move aside.
            let expired = |record: Result<OnDisk>| match record {
                Ok(OnDisk::Readable(record)) => record.expired(now),
                Ok(OnDisk::Absent) => true,
                Ok(OnDisk::Unreadable) | Err(_) => false,
            };
            if !(orphan_lock || is_record && old && expired(read_record(&record_path))) {
                continue;
            }
            let lock_path = keys.join(format!("{stem}.lock"));
            let Ok(Some(_lock)) = disk::try_lock(&lock_path) else {
                continue;
            };
            if expired(read_record(&record_path)) {
                let _ = fs::remove_file(&record_path);
                // Removed while locked: see `disk::try_lock` for why that is safe.
                let _ = fs::remove_file(&lock_path);
                removed += 1;
            }
        }
        if removed > 0 {
            tracing::debug!(removed, "pruned expired idempotency records");
            let _ = disk::sync_dir(&keys);
        }
    }
}

impl Store for FileStore {
    fn claim(&mut self, target: &Target, owner: &str) -> Result<Claim> {
        let (lock_path, record_path) = self.paths(target);
        let Some(lock) = try_lock_patiently(&lock_path)? else {
            return Ok(Claim::Held);
        };
        let (Some(record_path), Target::Key { key, job, .. }) = (record_path, target) else {
            return Ok(Claim::Granted(self.grant(target, owner, lock)?));
        };
        let record = match read_record(&record_path)? {
            OnDisk::Readable(record) => Some(record),
            OnDisk::Absent => None,
            OnDisk::Unreadable => {
                quarantine(&record_path)?;
                None
            }
        };
        match record {
            // Past its retention a record is as good as pruned.
            Some(r) if r.expired(SystemTime::now()) => {}
            Some(r) if r.key == *key && r.status == Status::Succeeded => {
                let at = (r.updated <= LAST_SECOND)
                    .then(|| UNIX_EPOCH + Duration::from_secs(r.updated))
                    .with_context(|| {
                        format!("{} holds an impossible time", record_path.display())
                    })?;
                return Ok(Claim::Done(at));
            }
            Some(r) if r.status == Status::Running => tracing::debug!(
                pid = r.pid,
                "taking over a key whose holder ended without finishing"
            ),
            _ => {}
        }
        let now = secs(SystemTime::now());
        let record = Record {
            key: key.clone(),
            job: job.clone(),
            status: Status::Running,
            owner: owner.to_owned(),
            pid: std::process::id(),
            claimed: now,
            updated: now,
            keep_until: now + RETENTION.as_secs(),
        };
        write_record(&record_path, &record)?;
        Ok(Claim::Granted(self.grant(target, owner, lock)?))
    }

    fn look(&mut self, target: &Target) -> Result<Found> {
        let (lock_path, record_path) = self.paths(target);
        // The kernel's lock table says whether a live run holds the lock; trying to take it,
        // even for a moment, could make a real claim racing with this look skip.
        if disk::is_locked(&lock_path)? {
            return Ok(Found::Held);
        }
        let (Some(record_path), Target::Key { key, .. }) = (record_path, target) else {
            return Ok(Found::Free);
        };
        // An unreadable record would be moved aside by a claim: as if there were none.
        Ok(match readable(&record_path)? {
            Some(r) if !r.expired(SystemTime::now()) && r.key == *key => match r.status {
                Status::Succeeded => Found::Done(UNIX_EPOCH + Duration::from_secs(r.updated)),
                _ => Found::Free,
            },
            _ => Found::Free,
        })
    }

    fn renew(&mut self, lease: &Lease) -> Result<()> {
        // A flock lasts as long as this process holds the file; nothing expires.
        match self.held.contains_key(&lease.id) {
            true => Ok(()),
            false => bail!("renewing a lease this store does not hold"),
        }
    }

    fn complete(&mut self, lease: Lease, succeeded: bool) -> Result<()> {
        let (_, record_path) = self.paths(&lease.target);
        let (Some(record_path), Target::Key { keep_until, .. }) = (record_path, &lease.target)
        else {
            return self.release(lease);
        };
        let lock = self
            .held
            .remove(&lease.id)
            .context("completing a lease this store does not hold")?;
        let mut record =
            readable(&record_path)?.context("the key's record disappeared or was damaged")?;
        if record.owner != lease.owner {
            bail!("the key's record was taken over by another run");
        }
        let now = SystemTime::now();
        record.status = if succeeded {
            Status::Succeeded
        } else {
            Status::Failed
        };
        record.updated = secs(now);
        record.keep_until = secs(*keep_until);
        write_record(&record_path, &record)?;
        drop(lock);
        self.prune(now);
        Ok(())
    }

    fn release(&mut self, lease: Lease) -> Result<()> {
        let Some(lock) = self.held.remove(&lease.id) else {
            bail!("releasing a lease this store does not hold");
        };
        let (_, record_path) = self.paths(&lease.target);
        if let Some(record_path) = record_path {
            // The record this run wrote when claiming goes, so the key is as it was before.
            if let Some(record) = readable(&record_path)?
                && record.owner == lease.owner
                && record.status == Status::Running
            {
                fs::remove_file(&record_path)
                    .with_context(|| format!("cannot remove {}", record_path.display()))?;
            }
        }
        drop(lock);
        Ok(())
    }
}

impl Record {
    fn expired(&self, now: SystemTime) -> bool {
        self.keep_until < secs(now)
    }
}

/// [`disk::try_lock`], retried for a moment: a pruning run may hold a key's lock briefly,
/// and that must not read as a live holder. A live holder holds it for the whole job.
fn try_lock_patiently(path: &Path) -> Result<Option<Flock<File>>> {
    for _ in 0..5 {
        if let Some(lock) = disk::try_lock(path)? {
            return Ok(Some(lock));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    disk::try_lock(path)
}

fn unix_millis(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis().try_into().unwrap_or(u64::MAX))
}

fn secs(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// A key's record file, as found.
enum OnDisk {
    Absent,
    Readable(Record),
    /// Empty, cut short, not JSON, or missing fields: crontap-run writes records whole
    /// (temporary file and rename), so this was damaged or written by something else.
    Unreadable,
}

/// Reads a record. Only a failure to read the file is an error; what it holds is judged by
/// the caller.
fn read_record(path: &Path) -> Result<OnDisk> {
    match fs::read(path) {
        Ok(bytes) => Ok(match serde_json::from_slice::<Record>(&bytes) {
            Ok(record) if record.status != Status::Unknown => OnDisk::Readable(record),
            // A newer crontap-run's status: as if there were no record (see `Status`).
            Ok(_) => OnDisk::Absent,
            Err(_) => OnDisk::Unreadable,
        }),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(OnDisk::Absent),
        Err(err) => Err(err).with_context(|| format!("cannot read {}", path.display())),
    }
}

/// A record that is there and readable; `None` for an absent or unreadable one.
fn readable(path: &Path) -> Result<Option<Record>> {
    Ok(match read_record(path)? {
        OnDisk::Readable(record) => Some(record),
        OnDisk::Absent | OnDisk::Unreadable => None,
    })
}

/// Moves an unreadable record (or counter) aside (`<file>.corrupt-<time>`) so that it never blocks the
/// job again, and says so once. The caller holds the key's lock.
fn quarantine(path: &Path) -> Result<()> {
    let mut aside = path.as_os_str().to_owned();
    aside.push(corrupt_suffix());
    let aside = PathBuf::from(aside);
    fs::rename(path, &aside)
        .with_context(|| format!("cannot move the unreadable record {} aside", path.display()))?;
    let _ = disk::sync_dir(path.parent().unwrap_or(Path::new(".")));
    tracing::warn!(
        "the record {} could not be read; moved it to {} and went on as if there was none",
        path.display(),
        aside.display()
    );
    Ok(())
}

fn write_record(path: &Path, record: &Record) -> Result<()> {
    let mut json = serde_json::to_vec(record)?;
    json.push(b'\n');
    disk::write_atomic(path, &json)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(key: &str) -> Target {
        Target::Key {
            key: key.into(),
            job: "job".into(),
            keep_until: SystemTime::now() + RETENTION,
        }
    }

    fn granted(claim: Claim) -> Lease {
        match claim {
            Claim::Granted(lease) => lease,
            other => panic!("expected a grant, got {other:?}"),
        }
    }

    #[test]
    fn a_key_is_held_then_done_or_free_again() {
        let tmp = tempfile::tempdir().unwrap();
        let mut a = FileStore::open(tmp.path()).unwrap();
        let mut b = FileStore::open(tmp.path()).unwrap();
        let lease = granted(a.claim(&key("k"), "run-a").unwrap());
        assert!(matches!(b.claim(&key("k"), "run-b").unwrap(), Claim::Held));
        a.complete(lease, false).unwrap();
        // Failed: the next run may try again.
        let lease = granted(b.claim(&key("k"), "run-b").unwrap());
        b.complete(lease, true).unwrap();
        assert!(matches!(
            a.claim(&key("k"), "run-c").unwrap(),
            Claim::Done(_)
        ));
        // Other keys are independent.
        granted(a.claim(&key("k2"), "run-c").unwrap());
    }

    #[test]
    fn a_dead_holder_is_taken_over_and_cannot_complete() {
        let tmp = tempfile::tempdir().unwrap();
        let mut dead = FileStore::open(tmp.path()).unwrap();
        let stale = granted(dead.claim(&key("k"), "run-dead").unwrap());
        // The kernel drops a dead process's locks; dropping the file does the same here.
        let stale_lock = dead.held.remove(&stale.id).unwrap();
        drop(stale_lock);
        let mut next = FileStore::open(tmp.path()).unwrap();
        let lease = granted(next.claim(&key("k"), "run-next").unwrap());
        // The stale holder, were it to come back, cannot write over the new record.
        dead.held.insert(
            stale.id,
            disk::try_lock(&tmp.path().join("x")).unwrap().unwrap(),
        );
        assert!(dead.complete(stale, true).is_err());
        next.complete(lease, false).unwrap();
        let lease = granted(next.claim(&key("k"), "run-3").unwrap());
        next.release(lease).unwrap();
    }

    #[test]
    fn release_forgets_the_claim() {
        let tmp = tempfile::tempdir().unwrap();
        let mut store = FileStore::open(tmp.path()).unwrap();
        let lease = granted(store.claim(&key("k"), "run-a").unwrap());
        store.release(lease).unwrap();
        let keys: Vec<_> = fs::read_dir(tmp.path().join("keys"))
            .unwrap()
            .flatten()
            .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
            .collect();
        assert!(keys.is_empty(), "{keys:?}");
        granted(store.claim(&key("k"), "run-b").unwrap());
    }

    #[test]
    fn locks_exclude_until_released() {
        let tmp = tempfile::tempdir().unwrap();
        let mut a = FileStore::open(tmp.path()).unwrap();
        let mut b = FileStore::open(tmp.path()).unwrap();
        let lock = Target::Lock { job: "job".into() };
        let lease = granted(a.claim(&lock, "run-a").unwrap());
        assert!(matches!(b.claim(&lock, "run-b").unwrap(), Claim::Held));
        a.complete(lease, true).unwrap();
        granted(b.claim(&lock, "run-b").unwrap());
    }

    #[test]
    fn expired_records_are_pruned() {
        let tmp = tempfile::tempdir().unwrap();
        let mut store = FileStore::open(tmp.path()).unwrap();
        let past = Target::Key {
            key: "old".into(),
            job: "job".into(),
            keep_until: UNIX_EPOCH + Duration::from_secs(1),
        };
        let lease = granted(store.claim(&past, "run-a").unwrap());
        store.complete(lease, true).unwrap();
        // Past its retention a success no longer counts, pruned or not.
        let lease = granted(store.claim(&past, "run-b").unwrap());
        store.complete(lease, true).unwrap();
        // Its file is too recent to be looked at by a prune now...
        store.prune(SystemTime::now());
        assert_eq!(fs::read_dir(tmp.path().join("keys")).unwrap().count(), 2);
        // ...but seen from beyond the retention it goes, lock file and all, as does a
        // temporary file a killed writer left.
        fs::write(tmp.path().join("keys/.x.json.1.2.tmp"), "").unwrap();
        store.prune(SystemTime::now() + RETENTION + Duration::from_secs(60));
        assert_eq!(fs::read_dir(tmp.path().join("keys")).unwrap().count(), 0);
    }
}
