//! Files' times: when a job was last seen (a lock file's modification time, set when a
//! run takes it), and whether a directory's times may be trusted to say what is old.

use std::os::fd::AsFd;
use std::time::{Duration, SystemTime};

use nix::sys::stat::FileStat;

/// Sets the modification time of an open file to now: a lock file's time says when its
/// job last ran, for pruning.
pub fn touch(file: &impl AsFd) {
    let now = nix::sys::time::TimeSpec::UTIME_NOW;
    let _ = nix::sys::stat::futimens(file, &now, &now);
}

/// When `stat`'s file was last changed, by the wall clock.
pub fn modified(stat: &FileStat) -> SystemTime {
    let secs = u64::try_from(stat.st_mtime).unwrap_or(0);
    SystemTime::UNIX_EPOCH + Duration::from_secs(secs)
}

/// Whether the files of a directory, listed in `entries`, may be judged old by `now`:
/// only when something other than this run was seen in the directory within `window` of
/// it (another file changed, or this run's own file `own` before this run changed it,
/// `own_before`). A run after a clock stepped forward (a VM resumed, a wrong clock at boot)
/// sees every other file as long gone; this keeps it from removing them. The next run
/// judges again.
pub fn may_judge(
    entries: &[(String, FileStat)],
    own: &str,
    own_before: Option<SystemTime>,
    now: SystemTime,
    window: Duration,
) -> bool {
    let since = now.checked_sub(window).unwrap_or(SystemTime::UNIX_EPOCH);
    entries
        .iter()
        .filter(|(name, _)| name != own)
        .map(|(_, stat)| modified(stat))
        .chain(own_before)
        .any(|seen| seen >= since)
}
