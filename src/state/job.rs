//! Which logical run this is: the job's name and the idempotency key of the run.
//!
//! The job name keys locks and history; without `--job` it is derived from the command line
//! so that the same crontab line always gets the same name. The key of a `--once-per` run is
//! `<job>:<period start>`, periods being aligned to the UTC epoch (1d starts at 00:00 UTC,
//! 15m at :00, :15, :30 and :45, 7d on Thursdays, as 1970-01-01 was one).

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Result, bail};

/// Longest job name; it is a file name in the state directory.
const MAX_JOB: usize = 128;
/// Longest program name kept in a derived job name.
const MAX_DERIVED_STEM: usize = 64;

/// Checks a job name given with `--job`: it names files, so only a safe alphabet.
pub fn validate_name(name: &str, option: &str) -> Result<()> {
    let ok = (1..=MAX_JOB).contains(&name.len())
        && !name.starts_with('.')
        && name.bytes().all(is_name_byte);
    if !ok {
        bail!(
            "{option} must be 1 to {MAX_JOB} characters of letters, digits, '.', '_' and '-', \
             not starting with '.'"
        );
    }
    Ok(())
}

fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"._-".contains(&b)
}

/// The job name derived from the command line: `<program's file name>-<8 hex digits>`, the
/// digits from a SHA-256 of every argument, so `backup.sh --full` and `backup.sh --quick`
/// are different jobs. Stable across releases: changing it would orphan locks and keys.
pub fn derived_name(command: &[OsString]) -> String {
    let program = command.first().map(|p| p.as_bytes()).unwrap_or_default();
    let file_name = Path::new(std::ffi::OsStr::from_bytes(program))
        .file_name()
        .map(|n| n.as_bytes())
        .unwrap_or(b"job");
    let mut stem: String = file_name
        .iter()
        .take(MAX_DERIVED_STEM)
        .map(|&b| if is_name_byte(b) { b as char } else { '_' })
        .collect();
    if stem.is_empty() || stem.starts_with('.') {
        stem.insert(0, 'j');
    }
    let mut hash = ring::digest::Context::new(&ring::digest::SHA256);
    for arg in command {
        // Length-prefixed, so `a b` and `ab` differ.
        hash.update(&(arg.len() as u64).to_be_bytes());
        hash.update(arg.as_bytes());
    }
    let hex = hex(hash.finish().as_ref());
    format!("{stem}-{}", &hex[..8])
}

/// The SHA-256 of `data`, in lower-case hex: file names for keys, which may hold any
/// character.
pub fn sha256_hex(data: &[u8]) -> String {
    hex(ring::digest::digest(&ring::digest::SHA256, data).as_ref())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Checks a key given with `--idempotency-key`.
pub fn validate_key(key: &str) -> Result<()> {
    if !(1..=256).contains(&key.len()) || key.chars().any(|c| c.is_control() || c.is_whitespace()) {
        bail!("--idempotency-key must be 1 to 256 bytes without spaces or control characters");
    }
    Ok(())
}

/// The period of length `period` that contains `now`: its start and its end.
pub fn period_containing(now: SystemTime, period: Duration) -> (SystemTime, SystemTime) {
    let secs = now
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let len = period.as_secs().max(1);
    let start = UNIX_EPOCH + Duration::from_secs(secs - secs % len);
    (start, start + Duration::from_secs(len))
}

/// The key of a `--once-per` run: `nightly-import:2026-11-29T00:00:00Z`.
pub fn once_per_key(job: &str, period_start: SystemTime) -> String {
    format!("{job}:{}", humantime::format_rfc3339_seconds(period_start))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(rfc3339: &str) -> SystemTime {
        humantime::parse_rfc3339(rfc3339).unwrap()
    }

    fn start_of(now: &str, period: &str) -> String {
        let period = humantime::parse_duration(period).unwrap();
        let (start, end) = period_containing(at(now), period);
        assert_eq!(end.duration_since(start).unwrap(), period);
        humantime::format_rfc3339_seconds(start).to_string()
    }

    #[test]
    fn periods_align_to_the_utc_epoch() {
        assert_eq!(
            start_of("2026-11-29T18:46:08Z", "1d"),
            "2026-11-29T00:00:00Z"
        );
        assert_eq!(
            start_of("2026-11-29T00:00:00Z", "1d"),
            "2026-11-29T00:00:00Z"
        );
        assert_eq!(
            start_of("2026-11-29T23:59:59Z", "1d"),
            "2026-11-29T00:00:00Z"
        );
        assert_eq!(
            start_of("2026-11-29T18:46:08Z", "15m"),
            "2026-11-29T18:45:00Z"
        );
        assert_eq!(
            start_of("2026-11-29T18:44:59Z", "15m"),
            "2026-11-29T18:30:00Z"
        );
        assert_eq!(
            start_of("2026-11-29T18:46:08Z", "1h"),
            "2026-11-29T18:00:00Z"
        );
        assert_eq!(
            start_of("2026-11-29T18:46:08Z", "6h"),
            "2026-11-29T18:00:00Z"
        );
        assert_eq!(
            start_of("2026-11-29T17:59:59Z", "6h"),
            "2026-11-29T12:00:00Z"
        );
        // Weeks start on Thursdays: 1970-01-01 was one. 2026-11-26 is a Thursday.
        assert_eq!(
            start_of("2026-11-29T18:46:08Z", "7d"),
            "2026-11-26T00:00:00Z"
        );
    }

    #[test]
    fn once_per_keys() {
        let (start, _) = period_containing(at("2026-11-29T03:00:00Z"), Duration::from_secs(86400));
        assert_eq!(
            once_per_key("nightly-import", start),
            "nightly-import:2026-11-29T00:00:00Z"
        );
    }

    #[test]
    fn derived_names_are_stable_and_distinct() {
        let cmd = |args: &[&str]| args.iter().map(OsString::from).collect::<Vec<_>>();
        let full = derived_name(&cmd(&["/opt/backup.sh", "--full"]));
        assert_eq!(full, derived_name(&cmd(&["/opt/backup.sh", "--full"])));
        assert!(full.starts_with("backup.sh-"), "{full}");
        assert_eq!(full.len(), "backup.sh-".len() + 8);
        assert_ne!(full, derived_name(&cmd(&["/opt/backup.sh", "--quick"])));
        assert_ne!(
            derived_name(&cmd(&["sh", "a b"])),
            derived_name(&cmd(&["sh", "a", "b"]))
        );
        // Whatever the program is called, the name is a valid job name.
        for program in ["./.hidden", "/", "dir/wéird name", ""] {
            let name = derived_name(&cmd(&[program]));
            validate_name(&name, "--job").unwrap_or_else(|e| panic!("{program:?}: {name}: {e}"));
        }
        // Fixed expectation: a change here would orphan every user's locks and keys.
        assert_eq!(derived_name(&cmd(&["true"])), "true-770ea79e");
    }

    #[test]
    fn job_names() {
        for good in ["nightly-import", "a", "db.backup_2"] {
            validate_name(good, "--job").unwrap();
        }
        for bad in ["", "../etc", ".hidden", "a/b", "a b", &"x".repeat(129)] {
            assert!(validate_name(bad, "--job").is_err(), "{bad:?}");
        }
    }
}
