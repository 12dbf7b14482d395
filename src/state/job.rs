//! Which logical run this is: the job's name and the idempotency key of the run.
//!
//! The job name keys locks and history; without `--job` it is derived from the command line
//! so that the same crontab line always gets the same name. The key of a `--once-per` run is
//! `<job>:<period start>`, periods being aligned to the UTC epoch (1d starts at 00:00 UTC,
//! 15m at :00, :15, :30 and :45, 7d on Thursdays, as 1970-01-01 was one), or with
//! `--period-tz` to midnight in an IANA zone from the system's tzdata, following its clock
//! through daylight-saving changes ([`Period`]). The key names the period start in UTC either
//! way.

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
    name_after(program, command)
}

/// A name as [`derived_name`] makes it, its stem from `program` (a path or a file name)
/// rather than from the command's first word: `plan --crontab` names a line that runs
/// `sh -c 'cd /app && ./sync.sh'` after `sync.sh`, the digits still from every argument.
pub fn name_after(program: &[u8], command: &[OsString]) -> String {
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
    let hex = crate::hex::encode(hash.finish().as_ref());
    format!("{stem}-{}", &hex[..8])
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

/// A `--once-per` period: its length and the zone whose clock it follows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Period {
    pub len: Duration,
    /// `None` for UTC: periods aligned to the UTC epoch, no time zone data read.
    pub zone: Option<jiff::tz::TimeZone>,
}

/// Seconds in a day.
const DAY: i64 = 86_400;

impl Period {
    /// A period of `len` aligned to the UTC epoch.
    pub fn utc(len: Duration) -> Period {
        Period { len, zone: None }
    }

    /// Whether a period of `len` can follow a zone's clock: it divides a day (periods start
    /// at midnight and every `len` after), or is a whole number of days.
    pub fn fits_a_zone(len: Duration) -> bool {
        let secs = len.as_secs() as i64;
        secs > 0 && (DAY % secs == 0 || secs % DAY == 0)
    }

    /// The period that contains `now`: its start and its end.
    pub fn containing(&self, now: SystemTime) -> (SystemTime, SystemTime) {
        match &self.zone {
            None => period_containing(now, self.len),
            Some(zone) => zoned_period_containing(now, self.len, zone),
        }
    }
}

/// The period of length `len` containing `now` on `zone`'s clock. Its boundaries are the
/// instants at which that clock shows midnight plus a multiple of `len` (for a length of
/// whole days, midnight of a day whose number since 1970-01-01 is a multiple of them), so
/// on a daylight-saving day `1d` lasts 23 or 25 hours, and in an hour the clock repeats,
/// each pass of a boundary starts a period of its own. A boundary the clock skips counts
/// at the moment of the jump.
pub fn zoned_period_containing(
    now: SystemTime,
    len: Duration,
    zone: &jiff::tz::TimeZone,
) -> (SystemTime, SystemTime) {
    let len = (len.as_secs() as i64).max(1);
    let now_secs = match now.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_secs() as i64,
        Err(e) => -(e.duration().as_secs() as i64),
    };
    let offset = jiff::Timestamp::from_second(now_secs)
        .map(|t| i64::from(zone.to_offset(t).seconds()))
        .unwrap_or(0);
    // Seconds since 1970-01-01T00:00 on the zone's clock.
    let local = now_secs + offset;
    let start_local = local - local.rem_euclid(len);
    let starts = instants(zone, start_local);
    let ends = instants(zone, start_local + len);
    let start = starts
        .iter()
        .copied()
        .filter(|&s| s <= now_secs)
        .max()
        .unwrap_or(now_secs);
    let end = starts
        .iter()
        .chain(&ends)
        .copied()
        .filter(|&e| e > now_secs)
        .min()
        .unwrap_or(start + len);
    (at_second(start), at_second(end))
}

/// The instants (UTC seconds) at which `zone`'s clock shows `local` (seconds since
/// 1970-01-01T00:00 on that clock): two in a repeated hour, one otherwise; for a time the
/// clock skips, the moment of the jump.
fn instants(zone: &jiff::tz::TimeZone, local: i64) -> Vec<i64> {
    use jiff::tz::{AmbiguousOffset, Offset};
    let Ok(civil) = jiff::Timestamp::from_second(local).map(|t| Offset::UTC.to_datetime(t)) else {
        return Vec::new();
    };
    let at = |offset: Offset| local - i64::from(offset.seconds());
    match zone.to_ambiguous_timestamp(civil).offset() {
        AmbiguousOffset::Unambiguous { offset } => vec![at(offset)],
        AmbiguousOffset::Fold { before, after } => vec![at(before), at(after)],
        // The clock jumps past a skipped time at the transition, which lies after the
        // time read with the later offset and no later than with the earlier one.
        AmbiguousOffset::Gap { before, after } => {
            let jump = jiff::Timestamp::from_second(at(after))
                .ok()
                .and_then(|t| zone.following(t).next())
                .map(|t| t.timestamp().as_second());
            vec![jump.unwrap_or(at(before))]
        }
    }
}

fn at_second(secs: i64) -> SystemTime {
    match u64::try_from(secs) {
        Ok(s) => UNIX_EPOCH + Duration::from_secs(s),
        Err(_) => UNIX_EPOCH - Duration::from_secs(secs.unsigned_abs()),
    }
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

    /// `(start, end)` of the `len` period containing `now` in `zone`, in UTC, and its hours.
    fn zoned(zone: &str, len: &str, now: &str) -> (String, String, u64) {
        let zone = jiff::tz::TimeZone::get(zone).expect("the system has tzdata");
        let period = Period {
            len: humantime::parse_duration(len).unwrap(),
            zone: Some(zone),
        };
        let (start, end) = period.containing(at(now));
        assert!(start <= at(now) && at(now) < end, "{now} not in its period");
        let hours = end.duration_since(start).unwrap().as_secs();
        let fmt = |t| humantime::format_rfc3339_seconds(t).to_string();
        (fmt(start), fmt(end), hours / 3600)
    }

    fn day(start: &str, end: &str, hours: u64) -> (String, String, u64) {
        (start.to_owned(), end.to_owned(), hours)
    }

    #[test]
    fn a_day_in_berlin_is_the_calendar_day_across_both_changes() {
        // CET (+01) all winter.
        assert_eq!(
            zoned("Europe/Berlin", "1d", "2026-01-15T23:30:00Z"),
            day("2026-01-15T23:00:00Z", "2026-01-16T23:00:00Z", 24)
        );
        // 2026-03-29: 02:00 CET becomes 03:00 CEST, a 23-hour day.
        for now in [
            "2026-03-28T23:00:00Z",
            "2026-03-29T00:59:59Z",
            "2026-03-29T01:00:00Z",
            "2026-03-29T21:59:59Z",
        ] {
            assert_eq!(
                zoned("Europe/Berlin", "1d", now),
                day("2026-03-28T23:00:00Z", "2026-03-29T22:00:00Z", 23),
                "{now}"
            );
        }
        assert_eq!(
            zoned("Europe/Berlin", "1d", "2026-03-28T22:59:59Z").1,
            "2026-03-28T23:00:00Z"
        );
        assert_eq!(
            zoned("Europe/Berlin", "1d", "2026-03-29T22:00:00Z").0,
            "2026-03-29T22:00:00Z"
        );
        // 2026-10-25: 03:00 CEST becomes 02:00 CET, a 25-hour day.
        for now in [
            "2026-10-24T22:00:00Z",
            "2026-10-25T00:30:00Z",
            "2026-10-25T01:30:00Z",
            "2026-10-25T22:59:59Z",
        ] {
            assert_eq!(
                zoned("Europe/Berlin", "1d", now),
                day("2026-10-24T22:00:00Z", "2026-10-25T23:00:00Z", 25),
                "{now}"
            );
        }
    }

    #[test]
    fn a_day_in_new_york_is_the_calendar_day_across_both_changes() {
        // 2026-03-08: 02:00 EST becomes 03:00 EDT.
        assert_eq!(
            zoned("America/New_York", "1d", "2026-03-08T12:00:00Z"),
            day("2026-03-08T05:00:00Z", "2026-03-09T04:00:00Z", 23)
        );
        assert_eq!(
            zoned("America/New_York", "1d", "2026-03-08T04:59:59Z"),
            day("2026-03-07T05:00:00Z", "2026-03-08T05:00:00Z", 24)
        );
        // 2026-11-01: 02:00 EDT becomes 01:00 EST.
        assert_eq!(
            zoned("America/New_York", "1d", "2026-11-01T12:00:00Z"),
            day("2026-11-01T04:00:00Z", "2026-11-02T05:00:00Z", 25)
        );
        assert_eq!(
            zoned("America/New_York", "1d", "2026-11-02T05:00:00Z"),
            day("2026-11-02T05:00:00Z", "2026-11-03T05:00:00Z", 24)
        );
    }

    #[test]
    fn shorter_periods_follow_the_local_clock() {
        // 01:30 EDT, then 01:30 EST an hour later: each pass of 01:00 starts a period.
        assert_eq!(
            zoned("America/New_York", "1h", "2026-11-01T05:30:00Z"),
            day("2026-11-01T05:00:00Z", "2026-11-01T06:00:00Z", 1)
        );
        assert_eq!(
            zoned("America/New_York", "1h", "2026-11-01T06:30:00Z"),
            day("2026-11-01T06:00:00Z", "2026-11-01T07:00:00Z", 1)
        );
        // 6h periods start at local 00:00, 06:00, 12:00, 18:00; the first is an hour
        // shorter on the spring day (02:00 is skipped), an hour longer in autumn.
        assert_eq!(
            zoned("Europe/Berlin", "6h", "2026-03-29T02:00:00Z"),
            day("2026-03-28T23:00:00Z", "2026-03-29T04:00:00Z", 5)
        );
        assert_eq!(
            zoned("Europe/Berlin", "6h", "2026-10-25T03:00:00Z"),
            day("2026-10-24T22:00:00Z", "2026-10-25T05:00:00Z", 7)
        );
        assert_eq!(
            zoned("Europe/Berlin", "6h", "2026-10-25T05:00:00Z").0,
            "2026-10-25T05:00:00Z"
        );
        // 2h periods: 02:00-04:00 starts when the clock jumps from 02:00 to 03:00.
        assert_eq!(
            zoned("Europe/Berlin", "2h", "2026-03-29T01:30:00Z"),
            day("2026-03-29T01:00:00Z", "2026-03-29T02:00:00Z", 1)
        );
        // 7d periods start on Thursdays, local midnight, as UTC ones do.
        assert_eq!(
            zoned("Europe/Berlin", "7d", "2026-11-29T18:46:08Z").0,
            "2026-11-25T23:00:00Z"
        );
    }

    #[test]
    fn utc_periods_read_no_zone() {
        let period = Period::utc(Duration::from_secs(86_400));
        assert_eq!(
            period.containing(at("2026-11-29T18:46:08Z")),
            period_containing(at("2026-11-29T18:46:08Z"), period.len)
        );
        assert!(Period::fits_a_zone(Duration::from_secs(900)));
        assert!(Period::fits_a_zone(Duration::from_secs(7 * 86_400)));
        assert!(!Period::fits_a_zone(Duration::from_secs(7 * 3600)));
        assert!(!Period::fits_a_zone(Duration::from_secs(36 * 3600)));
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
