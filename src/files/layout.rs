//! The name of every path crontap-run writes, and the list of them all ([`every_path`]),
//! which the tests go through: a path added here is covered without anyone remembering.
//!
//! ```text
//! <state dir>/locks/<job>.lock        --no-overlap: flock held while the job runs
//! <state dir>/keys/<sha256>.lock      a key's lock: flock held by the run that claimed it
//! <state dir>/keys/<sha256>.json      a key's record: running, succeeded or failed
//! <state dir>/fencing/<job>.count     the job's last fencing token
//! <state dir>/fencing/<job>.lock      flock held while the token is taken
//! <state dir>/history/<job>.jsonl     one line per run
//! <metrics dir>/crontap-run-<job>.prom
//! <metrics dir>/.crontap-run-<job>.prom.lock   flock held while the file is rewritten
//! ```
//!
//! Beside each file that is replaced whole: `.<name>.<32 random hex digits>.tmp` while it
//! is written; and `<name>.corrupt-<UTC time>[-N]` for one that could not be read.

use std::time::SystemTime;

pub const LOCKS: &str = "locks";
pub const KEYS: &str = "keys";
pub const FENCING: &str = "fencing";
pub const HISTORY: &str = "history";

pub fn job_lock(job: &str) -> String {
    format!("{job}.lock")
}

/// A key may hold any character, so its files are named by its SHA-256.
pub fn key_lock(key: &str) -> String {
    format!("{}.lock", sha256_hex(key.as_bytes()))
}

pub fn key_record(key: &str) -> String {
    format!("{}.json", sha256_hex(key.as_bytes()))
}

pub fn fencing_count(job: &str) -> String {
    format!("{job}.count")
}

pub fn fencing_lock(job: &str) -> String {
    format!("{job}.lock")
}

pub fn history(job: &str) -> String {
    format!("{job}.jsonl")
}

/// Not `*.prom` while it is written, so the textfile collector never reads half of it.
pub fn metrics(job: &str) -> String {
    format!("crontap-run-{job}.prom")
}

/// The lock runs of `job` take turns on to rewrite its metrics file.
pub fn metrics_lock(job: &str) -> String {
    format!(".crontap-run-{job}.prom.lock")
}

/// The temporary file a new `name` is written to.
pub fn temp_name(name: &str, random: &str) -> String {
    format!(".{name}.{random}.tmp")
}

/// Whether `name` is a temporary file of [`temp_name`]'s: `.<name>.<32 hex digits>.tmp`.
pub fn is_temp(name: &str) -> bool {
    let Some(rest) = name.strip_prefix('.').and_then(|n| n.strip_suffix(".tmp")) else {
        return false;
    };
    rest.rsplit_once('.').is_some_and(|(file, random)| {
        !file.is_empty() && random.len() == 32 && random.bytes().all(|b| b.is_ascii_hexdigit())
    })
}

/// Where an unreadable `name` is moved to (a number is added when it is taken).
pub fn corrupt_name(name: &str) -> String {
    format!("{name}{}", corrupt_suffix())
}

/// The suffix a store gives a record it cannot read when it moves it aside:
/// `.corrupt-<UTC time>`, like `.corrupt-20261201T141500Z` (a file here, a Redis key too).
pub(crate) fn corrupt_suffix() -> String {
    let stamp = humantime::format_rfc3339_seconds(SystemTime::now()).to_string();
    format!(".corrupt-{}", stamp.replace([':', '-'], ""))
}

/// The SHA-256 of `data`, in lower-case hex: file names for keys, which may hold any
/// character.
fn sha256_hex(data: &[u8]) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, data);
    crate::hex::encode(digest.as_ref())
}

/// Whether `name` is a file moved aside by [`corrupt_name`]: it ends in
/// `.corrupt-<8 digits>T<6 digits>Z`, or that and `-<number>`. A job's own files never
/// do (they end in `.lock`, `.json`, `.count` or `.jsonl`), whatever the job is called.
pub fn is_corrupt(name: &str) -> bool {
    let Some((_, stamp)) = name.rsplit_once(".corrupt-") else {
        return false;
    };
    let stamp = match stamp.split_once('-') {
        Some((stamp, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => stamp,
        Some(_) => return false,
        None => stamp,
    };
    let b = stamp.as_bytes();
    let digits = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_digit);
    b.len() == 16 && digits(0..8) && b[8] == b'T' && digits(9..15) && b[15] == b'Z'
}

/// Which directory a path is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Area {
    State,
    Metrics,
}

/// One path crontap-run writes: in `area`, the names from that directory down.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    pub area: Area,
    pub path: Vec<String>,
}

/// Every path a run of `job` with the idempotency key `key` writes, directories first:
/// the files named above, and the directories that hold them.
pub fn every_path(job: &str, key: &str) -> Vec<Written> {
    let state = |path: &[&str]| Written {
        area: Area::State,
        path: path.iter().map(|s| s.to_string()).collect(),
    };
    vec![
        state(&[LOCKS]),
        state(&[LOCKS, &job_lock(job)]),
        state(&[KEYS]),
        state(&[KEYS, &key_lock(key)]),
        state(&[KEYS, &key_record(key)]),
        state(&[FENCING]),
        state(&[FENCING, &fencing_count(job)]),
        state(&[FENCING, &fencing_lock(job)]),
        state(&[HISTORY]),
        state(&[HISTORY, &history(job)]),
        Written {
            area: Area::Metrics,
            path: vec![metrics(job)],
        },
        Written {
            area: Area::Metrics,
            path: vec![metrics_lock(job)],
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leftovers_are_told_from_a_jobs_own_files() {
        let aside = corrupt_name("x.json");
        assert!(is_corrupt(&aside), "{aside}");
        assert!(is_corrupt(&format!("{aside}-12")));
        assert!(is_corrupt("x.count.corrupt-20261201T141500Z"));
        // Job names may hold `.corrupt-`: their files are theirs.
        for own in [
            "disk.corrupt-scan.count",
            "w.corrupt-x.lock",
            "a.corrupt-20261201T141500Z.lock",
            "x.corrupt-20261201T141500Z-",
            "x.corrupt-20261201T141500Z-a",
        ] {
            assert!(!is_corrupt(own), "{own}");
        }
        let temp = temp_name("crontap-run-j.prom", &"ab".repeat(16));
        assert!(is_temp(&temp), "{temp}");
        for own in [
            ".tmp",
            "..tmp",
            ".x.tmp",
            ".x.123.tmp",
            "x.0123456789abcdef0123456789abcdef.tmp",
        ] {
            assert!(!is_temp(own), "{own}");
        }
    }
}
