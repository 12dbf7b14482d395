//! The file store: locks and idempotency records in the state directory of one host.
//!
//! Its files are in `locks/`, `keys/` and `fencing/` ([`crate::files::layout`] lists
//! them), opened through [`crate::files`] only.
//!
//! A key's lock says whether its holder is alive: the kernel releases it when the holder
//! ends, however it ends. So a record that says "running" while its lock is free was left
//! by a holder that died, and the next claim takes it over; no timeout is guessed. Keys are
//! named by their SHA-256 because a key may hold any character; the record keeps the key.

use std::collections::HashMap;
use std::fs::File;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, bail};
use nix::fcntl::Flock;
use nix::sys::stat::FileStat;
use serde::{Deserialize, Serialize};

use super::store::{Claim, Found, Lease, RETENTION, Status, Store, Target};
use crate::files::{self, Check, Dir, NotPlain, PRIVATE, layout};

/// 9999-12-31T23:59:59Z, the last time RFC 3339 can write.
const LAST_SECOND: u64 = 253_402_300_799;

/// Most files removed by one prune, so pruning never makes a run slow.
const PRUNE_MAX: usize = 200;

/// A job not seen for this long has its lock file removed (never its fencing counter).
pub const UNSEEN: Duration = Duration::from_secs(30 * 86_400);

/// How old a temporary file must be before it counts as left by a killed writer (no
/// write takes an hour).
const TEMP_STALE: Duration = Duration::from_secs(3600);

pub struct FileStore {
    /// `None` for a look at a store that does not exist yet.
    dirs: Option<Dirs>,
    /// Locks held by this process, by lease id.
    held: HashMap<u64, Flock<File>>,
    next_id: u64,
    /// The lock files this run took, and when each was changed before (for pruning).
    seen: Vec<Seen>,
}

/// A lock file this run took: in `locks/` (the job's) or `keys/` (a key's).
struct Seen {
    in_locks: bool,
    name: String,
    /// When the file was last changed before this run touched it (`None`: it is new).
    before: Option<SystemTime>,
}

/// The store's directories, each opened once and checked.
struct Dirs {
    locks: Dir,
    keys: Dir,
    fencing: Dir,
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
    /// Opens the store in `dir`, creating the directories it needs; refuses a directory
    /// that another account could change ([`files::trust`]).
    pub fn open(dir: &Path) -> Result<FileStore> {
        let root = Dir::open(dir, Check::Private, true)?.expect("created");
        let sub =
            |name| -> Result<Dir> { Ok(root.sub(name, Check::Private, true)?.expect("created")) };
        let dirs = Dirs {
            locks: sub(layout::LOCKS)?,
            keys: sub(layout::KEYS)?,
            fencing: sub(layout::FENCING)?,
        };
        // The history is written after the command; one another account could change is
        // refused before it, with the rest of the store.
        sub(layout::HISTORY)?;
        Ok(FileStore {
            dirs: Some(dirs),
            held: HashMap::new(),
            next_id: 0,
            seen: Vec::new(),
        })
    }

    /// The store in `dir` as it is, for looking only: nothing is created, and a store that
    /// is not there yet holds nothing.
    pub fn at(dir: &Path) -> Result<FileStore> {
        let dirs = match Dir::open(dir, Check::Private, false)? {
            None => None,
            Some(root) => {
                let sub = |name| root.sub(name, Check::Private, false);
                match (
                    sub(layout::LOCKS)?,
                    sub(layout::KEYS)?,
                    sub(layout::FENCING)?,
                ) {
                    (Some(locks), Some(keys), Some(fencing)) => Some(Dirs {
                        locks,
                        keys,
                        fencing,
                    }),
                    _ => None,
                }
            }
        };
        Ok(FileStore {
            dirs,
            held: HashMap::new(),
            next_id: 0,
            seen: Vec::new(),
        })
    }

    fn dirs(&self) -> Result<&Dirs> {
        self.dirs
            .as_ref()
            .context("the state directory was opened for looking only")
    }

    /// The directory of `target`'s files, its lock's name and its record's name.
    fn names(&self, target: &Target) -> Result<(&Dir, String, Option<String>)> {
        let dirs = self.dirs()?;
        Ok(match target {
            Target::Lock { job } => (&dirs.locks, layout::job_lock(job), None),
            Target::Key { key, .. } => (
                &dirs.keys,
                layout::key_lock(key),
                Some(layout::key_record(key)),
            ),
        })
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
    /// milliseconds, above any count a job reaches, so tokens still only grow. So is one at
    /// the largest value it holds, after which no token is left: counting one a claim from
    /// 0 or from the time never reaches it, so it was damaged or written by something else
    /// (as a record's time past the year 9999 is), and it must not stop the job for good.
    fn next_fencing(&self, job: &str) -> Result<u64> {
        let dir = &self.dirs()?.fencing;
        let _lock = dir.lock_file(&layout::fencing_lock(job), true)?;
        let name = layout::fencing_count(job);
        let read = match dir.read(&name) {
            // A link, a FIFO or a directory is as unreadable as a damaged counter.
            Err(err) if NotPlain::in_chain(&err) => Some(Vec::new()),
            read => read?,
        };
        let last = match read {
            Some(text) => match String::from_utf8_lossy(&text).trim().parse::<u64>() {
                Ok(last) if last < u64::MAX => last,
                parsed => {
                    let why = match parsed {
                        Ok(_) => "is at its limit, which no count of claims reaches",
                        Err(_) => "could not be read",
                    };
                    let then = "counted on from the time in milliseconds";
                    quarantine(dir, &name, ("the fencing counter", why, then))?;
                    unix_millis(SystemTime::now())
                }
            },
            None => 0,
        };
        let next = last.checked_add(1).with_context(|| {
            format!(
                "the fencing counter {} is at its limit",
                dir.shown_of(&name)
            )
        })?;
        dir.replace(&name, format!("{next}\n").as_bytes(), PRIVATE, true)?;
        Ok(next)
    }

    /// Removes records whose retention has passed and lock files left without a record,
    /// skipping any that a live run holds; the lock files of jobs not seen for
    /// [`UNSEEN`]; and, everywhere, temporary files a killed writer left and files moved
    /// aside longer ago than [`UNSEEN`]. Fencing counters are never removed: a job's
    /// tokens must only grow.
    ///
    /// The 30-day rules apply only when the directory shows that something else ran within
    /// 30 days ([`files::may_judge`]): a run after a clock stepped forward removes nothing.
    fn prune(&self, now: SystemTime) {
        let Ok(dirs) = self.dirs() else { return };
        let mut budget = PRUNE_MAX;
        let listed = |dir: &Dir, in_locks: bool| {
            let own = self.seen.iter().find(|s| s.in_locks == in_locks);
            let entries = dir.entries().unwrap_or_default();
            let (name, before) = own.map_or(("", None), |s| (s.name.as_str(), s.before));
            let recent = files::may_judge(&entries, name, before, now, UNSEEN);
            (entries, recent)
        };
        let (keys, keys_recent) = listed(&dirs.keys, false);
        let (locks, locks_recent) = listed(&dirs.locks, true);
        // What ran recently anywhere in the store shows the clock agrees with the files.
        let judged = keys_recent || locks_recent;
        prune_keys(&dirs.keys, keys, now, judged, &mut budget);
        if judged {
            prune_locks(&dirs.locks, locks, now, &mut budget);
            // Beside the counters, which never go: their lock files, which may.
            if let Ok(entries) = dirs.fencing.entries() {
                prune_locks(&dirs.fencing, entries, now, &mut budget);
            }
        }
    }
}

/// Expired records and their lock files, and orphaned lock files, in `keys/`.
/// Only when `judged` (see [`FileStore::prune`]).
fn prune_keys(
    keys: &Dir,
    entries: Vec<(String, FileStat)>,
    now: SystemTime,
    judged: bool,
    budget: &mut usize,
) {
    // Not even expired records: a run whose clock is far ahead would remove today's.
    if !judged {
        return;
    }
    // A file changed within the retention cannot have expired: skip it unread.
    let recent = now.checked_sub(RETENTION).unwrap_or(UNIX_EPOCH);
    let mut removed = 0;
    for (name, stat) in entries {
        if *budget == 0 {
            break;
        }
        if prune_leftover(keys, &name, &stat, now) {
            *budget -= 1;
            continue;
        }
        let (stem, is_record) = match (name.strip_suffix(".json"), name.strip_suffix(".lock")) {
            (Some(stem), _) => (stem, true),
            (None, Some(stem)) => (stem, false),
            (None, None) => continue,
        };
        let old = files::modified(&stat) < recent;
        let record_name = format!("{stem}.json");
        let orphan_lock = !is_record && old && matches!(keys.stat(&record_name), Ok(None));
        // Read before locking: locking a live key, even for a moment, could make a claim
        // racing with it skip. An unreadable record is left for the next claim to move
        // aside.
        let expired = |record: Result<OnDisk>| match record {
            Ok(OnDisk::Readable(record)) => record.expired(now),
            Ok(OnDisk::Absent) => true,
            Ok(OnDisk::Unreadable) | Err(_) => false,
        };
        if !(orphan_lock || is_record && old && expired(read_record(keys, &record_name))) {
            continue;
        }
        let lock_name = format!("{stem}.lock");
        let Ok(Some(_lock)) = keys.lock_file(&lock_name, false) else {
            continue;
        };
        if expired(read_record(keys, &record_name)) {
            let _ = keys.remove(&record_name);
            // Removed while locked: see `Dir::lock_file` for why that is safe.
            let _ = keys.remove(&lock_name);
            removed += 1;
            *budget = budget.saturating_sub(1);
        }
    }
    if removed > 0 {
        tracing::debug!(removed, "pruned expired idempotency records");
        let _ = keys.sync();
    }
}

/// The lock files of jobs not seen for [`UNSEEN`] in `locks/` (a run touches its job's
/// lock file when it takes it, so the file's time is when the job last ran) or in
/// `fencing/` (where a lock file untouched for 30 days guards nothing now). A lock held
/// now (a job running for a month) is kept, and so is every `.count`.
fn prune_locks(locks: &Dir, entries: Vec<(String, FileStat)>, now: SystemTime, budget: &mut usize) {
    let unseen = now.checked_sub(UNSEEN).unwrap_or(UNIX_EPOCH);
    for (name, stat) in entries {
        if *budget == 0 {
            break;
        }
        if prune_leftover(locks, &name, &stat, now) {
            *budget -= 1;
            continue;
        }
        if !name.ends_with(".lock") || files::modified(&stat) >= unseen {
            continue;
        }
        let Ok(Some(_lock)) = locks.lock_file(&name, false) else {
            continue;
        };
        // Taken by a run between the listing and the lock: it touched the file.
        if matches!(locks.stat(&name), Ok(Some(now_stat)) if files::modified(&now_stat) < unseen) {
            let _ = locks.remove(&name);
            *budget -= 1;
            tracing::debug!(name, "removed the lock file of a job not seen for 30 days");
        }
    }
}

/// Removes `name` if it is a temporary file a killed writer left (older than an hour) or
/// a file moved aside longer ago than [`UNSEEN`], both as of `now`; whether it did.
pub(crate) fn prune_leftover(dir: &Dir, name: &str, stat: &FileStat, now: SystemTime) -> bool {
    let age = now
        .duration_since(files::modified(stat))
        .unwrap_or(Duration::ZERO);
    let stale =
        (layout::is_temp(name) && age > TEMP_STALE) || (layout::is_corrupt(name) && age > UNSEEN);
    // A counter is never removed, whatever its name looks like.
    let stale = stale && !name.ends_with(".count");
    stale && files::is(stat, nix::sys::stat::SFlag::S_IFREG) && dir.remove(name).is_ok()
}

impl Store for FileStore {
    fn claim(&mut self, target: &Target, owner: &str) -> Result<Claim> {
        let (dir, lock_name, record_name) = self.names(target)?;
        let before = dir
            .stat(&lock_name)
            .ok()
            .flatten()
            .map(|s| files::modified(&s));
        let Some(lock) = try_lock_patiently(dir, &lock_name)? else {
            return Ok(Claim::Held);
        };
        // The lock file's time says when the job was last seen (see `prune_locks`).
        files::touch(&*lock);
        let seen = Seen {
            in_locks: matches!(target, Target::Lock { .. }),
            name: lock_name,
            before,
        };
        let (Some(record_name), Target::Key { key, job, .. }) = (record_name, target) else {
            self.seen.push(seen);
            return Ok(Claim::Granted(self.grant(target, owner, lock)?));
        };
        let record = match read_record(dir, &record_name)? {
            OnDisk::Readable(record) => Some(record),
            OnDisk::Absent => None,
            OnDisk::Unreadable => {
                let then = "went on as if there was none";
                quarantine(dir, &record_name, ("the record", "could not be read", then))?;
                None
            }
        };
        match record {
            // Past its retention a record is as good as pruned.
            Some(r) if r.expired(SystemTime::now()) => {}
            Some(r) if r.key == *key && r.status == Status::Succeeded => {
                return Ok(Claim::Done(r.updated_at()));
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
        write_record(dir, &record_name, &record)?;
        self.seen.push(seen);
        Ok(Claim::Granted(self.grant(target, owner, lock)?))
    }

    fn look(&mut self, target: &Target) -> Result<Found> {
        if self.dirs.is_none() {
            return Ok(Found::Free);
        }
        let (dir, lock_name, record_name) = self.names(target)?;
        // The kernel's lock table says whether a live run holds the lock; trying to take it,
        // even for a moment, could make a real claim racing with this look skip.
        if dir.is_locked(&lock_name)? {
            return Ok(Found::Held);
        }
        let (Some(record_name), Target::Key { key, .. }) = (record_name, target) else {
            return Ok(Found::Free);
        };
        // An unreadable record would be moved aside by a claim: as if there were none.
        Ok(match read_record(dir, &record_name)? {
            OnDisk::Readable(r) if !r.expired(SystemTime::now()) && r.key == *key => {
                match r.status {
                    Status::Succeeded => Found::Done(r.updated_at()),
                    _ => Found::Free,
                }
            }
            OnDisk::Unreadable => {
                tracing::warn!(
                    "the record {} could not be read; a run would move it aside and go on as \
                     if there was none",
                    dir.shown_of(&record_name)
                );
                Found::Free
            }
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
        let Target::Key { keep_until, .. } = &lease.target else {
            return self.release(lease);
        };
        let lock = self
            .held
            .remove(&lease.id)
            .context("completing a lease this store does not hold")?;
        let (dir, _, record_name) = self.names(&lease.target)?;
        let record_name = record_name.context("a key has a record")?;
        let mut record =
            readable(dir, &record_name)?.context("the key's record disappeared or was damaged")?;
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
        write_record(dir, &record_name, &record)?;
        drop(lock);
        self.prune(now);
        Ok(())
    }

    fn release(&mut self, lease: Lease) -> Result<()> {
        let Some(lock) = self.held.remove(&lease.id) else {
            bail!("releasing a lease this store does not hold");
        };
        let (dir, _, record_name) = self.names(&lease.target)?;
        if let Some(record_name) = record_name {
            // The record this run wrote when claiming goes, so the key is as it was before.
            if let Some(record) = readable(dir, &record_name)?
                && record.owner == lease.owner
                && record.status == Status::Running
            {
                dir.remove(&record_name)?;
            }
        }
        drop(lock);
        if matches!(lease.target, Target::Lock { .. }) {
            self.prune(SystemTime::now());
        }
        Ok(())
    }
}

impl Record {
    fn expired(&self, now: SystemTime) -> bool {
        self.keep_until < secs(now)
    }

    /// Whether its times are ones crontap-run can have written: none past the last second
    /// RFC 3339 can write (a record is read by every command, and none may panic on it).
    fn possible(&self) -> bool {
        self.claimed <= LAST_SECOND && self.updated <= LAST_SECOND
    }

    /// When it was last updated; only for a [`possible`](Record::possible) record, which
    /// every record read is ([`read_record`]).
    fn updated_at(&self) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(self.updated.min(LAST_SECOND))
    }
}

/// [`Dir::lock_file`] without waiting, retried for a moment: a pruning run may hold a
/// lock briefly, and that must not read as a live holder. A live holder holds it for the
/// whole job.
fn try_lock_patiently(dir: &Dir, name: &str) -> Result<Option<Flock<File>>> {
    for _ in 0..5 {
        if let Some(lock) = dir.lock_file(name, false)? {
            return Ok(Some(lock));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    dir.lock_file(name, false)
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
    /// Empty, cut short, not JSON, missing fields, or holding a time past year 9999:
    /// crontap-run writes records whole (temporary file and rename), so this was damaged or
    /// written by something else.
    Unreadable,
}

/// Reads a record. Only a failure to read the file is an error; what it holds is judged by
/// the caller.
fn read_record(dir: &Dir, name: &str) -> Result<OnDisk> {
    let read = match dir.read(name) {
        // A link, a FIFO or a directory is no record either.
        Err(err) if NotPlain::in_chain(&err) => return Ok(OnDisk::Unreadable),
        read => read?,
    };
    Ok(match read {
        Some(bytes) => match serde_json::from_slice::<Record>(&bytes) {
            // Times no crontap-run wrote: as damaged as a record cut short.
            Ok(record) if !record.possible() => OnDisk::Unreadable,
            Ok(record) if record.status != Status::Unknown => OnDisk::Readable(record),
            // A newer crontap-run's status: as if there were no record (see `Status`).
            Ok(_) => OnDisk::Absent,
            Err(_) => OnDisk::Unreadable,
        },
        None => OnDisk::Absent,
    })
}

/// A record that is there and readable; `None` for an absent or unreadable one.
fn readable(dir: &Dir, name: &str) -> Result<Option<Record>> {
    Ok(match read_record(dir, name)? {
        OnDisk::Readable(record) => Some(record),
        OnDisk::Absent | OnDisk::Unreadable => None,
    })
}

/// Moves a damaged record or counter aside so that it never blocks the job again, and says
/// so once, in the words `(what, why, then)`: what the file is, why it was moved, and what
/// the run did instead. The caller holds the file's lock.
fn quarantine(dir: &Dir, name: &str, (what, why, then): (&str, &str, &str)) -> Result<()> {
    let aside = dir
        .move_aside(name)
        .with_context(|| format!("cannot move {what} {} aside", dir.shown_of(name)))?;
    tracing::warn!(
        "{what} {} {why}; moved it to {} and {then}",
        dir.shown_of(name),
        dir.shown_of(&aside)
    );
    Ok(())
}

fn write_record(dir: &Dir, name: &str, record: &Record) -> Result<()> {
    let mut json = serde_json::to_vec(record)?;
    json.push(b'\n');
    dir.replace(name, &json, PRIVATE, true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

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
        let root = Dir::open(tmp.path(), Check::Private, false)
            .unwrap()
            .unwrap();
        dead.held
            .insert(stale.id, root.lock_file("x", false).unwrap().unwrap());
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
        let temp = layout::temp_name("x.json", &"0".repeat(32));
        fs::write(tmp.path().join("keys").join(temp), "").unwrap();
        store.prune(SystemTime::now() + RETENTION + Duration::from_secs(60));
        assert_eq!(fs::read_dir(tmp.path().join("keys")).unwrap().count(), 0);
    }
}
