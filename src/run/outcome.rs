//! How a run of the command ended, built once from the raw wait status or the spawn error.
//!
//! This is the one place that maps an ending to crontap-run's exit status (N, 128+S, 124,
//! 125, 126, 127) and to the first words of the failure summary, and that names signals.
//! Wait statuses are decoded from the kernel's raw value, never through an enum of known
//! signals: a job killed by a real-time signal (34 to 64) must end the run like any other.

use std::ffi::OsStr;
use std::fmt;
use std::io;
use std::time::Duration;

use nix::errno::Errno;
use nix::sys::signal::Signal;

/// crontap-run's exit status for its own errors (a bad option, an unusable state store, a
/// lost lease, a bug), as `env` and `timeout` use it.
pub const OWN_ERROR: u8 = 125;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The command exited with this status (0..=255).
    Exited(u8),
    /// The command was killed by this signal number.
    Signaled(i32),
    /// `--timeout` expired: the group got SIGTERM, and SIGKILL `kill_after` later if it was
    /// still there.
    TimedOut {
        limit: Duration,
        kill_after: Option<Duration>,
    },
    /// `--on-lease-lost stop`: the run's lease on the state store could not be renewed, so
    /// the command was stopped (SIGTERM, and SIGKILL when `killed`) before the lease could
    /// run out and let another host start the job.
    LeaseLost { killed: bool },
    /// The command could not be started; `not_found` selects 127 over 126.
    NotStarted {
        program: String,
        errno: i32,
        not_found: bool,
    },
}

impl Outcome {
    /// The outcome a raw wait status (from `waitpid(2)`) reports, if it reports an ending
    /// rather than a stop or a continue.
    pub fn from_wait(status: libc::c_int) -> Option<Outcome> {
        if libc::WIFEXITED(status) {
            // A wait status carries only the low 8 bits of the exit code.
            Some(Outcome::Exited((libc::WEXITSTATUS(status) & 0xff) as u8))
        } else if libc::WIFSIGNALED(status) {
            Some(Outcome::Signaled(libc::WTERMSIG(status)))
        } else {
            None
        }
    }

    /// Classifies an error from spawning `program` the way `env`, `timeout` and `nice` do:
    /// "not found" (ENOENT) is 127, any other failure to execute it is 126 (ENOTDIR too:
    /// `/etc/passwd/x`, or a `PATH` whose only element is a file).
    pub fn from_spawn_error(program: &OsStr, err: &io::Error) -> Outcome {
        let errno = err.raw_os_error().unwrap_or(0);
        let not_found = Errno::from_raw(errno) == Errno::ENOENT;
        Outcome::NotStarted {
            program: program.to_string_lossy().into_owned(),
            errno,
            not_found,
        }
    }

    /// For a command that could not be started, the one line crontap-run prints about it
    /// on stderr (cron mails it, with no URL or a ping that failed too), as coreutils
    /// `timeout` words it: `failed to run command './import.sh': No such file or
    /// directory`. The name is put on one line, stripped of escapes and control characters.
    pub fn not_started_line(&self) -> Option<String> {
        let Outcome::NotStarted { program, errno, .. } = self else {
            return None;
        };
        Some(format!(
            "failed to run command '{}': {}",
            crate::sanitize::one_line(program),
            Errno::from_raw(*errno).desc()
        ))
    }

    /// Whether the command exited with 0 or a status `--success-exit` lists. Signals,
    /// timeouts and failures to start never count, whatever their number.
    pub fn is_success_with(&self, success: &SuccessCodes) -> bool {
        match self {
            Outcome::Exited(code) => success.contains(*code),
            _ => false,
        }
    }

    /// crontap-run's own exit status for this outcome.
    pub fn exit_code(&self) -> u8 {
        match self {
            Outcome::Exited(code) => *code,
            Outcome::Signaled(sig) => signal_status(*sig),
            // As coreutils `timeout`: 124, or 128+SIGKILL when the kill was needed.
            Outcome::TimedOut {
                kill_after: None, ..
            } => 124,
            Outcome::TimedOut {
                kill_after: Some(_),
                ..
            } => 128 + Signal::SIGKILL as u8,
            // crontap-run's own decision, as for its other errors.
            Outcome::LeaseLost { .. } => OWN_ERROR,
            Outcome::NotStarted {
                not_found: true, ..
            } => 127,
            Outcome::NotStarted {
                not_found: false, ..
            } => 126,
        }
    }

    /// The head of the failure summary: `exit 3 after 2m14s`, `killed by SIGKILL after 41s`,
    /// `could not start ./import.sh: No such file or directory`.
    pub fn describe(&self, elapsed: Duration) -> String {
        let after = HumanDuration(elapsed);
        match self {
            Outcome::Exited(code) => format!("exit {code} after {after}"),
            Outcome::Signaled(sig) => format!("killed by {} after {after}", signal_name(*sig)),
            Outcome::TimedOut {
                limit,
                kill_after: None,
            } => {
                format!("timed out after {} (sent SIGTERM)", HumanDuration(*limit))
            }
            Outcome::TimedOut {
                limit,
                kill_after: Some(grace),
            } => format!(
                "timed out after {} (sent SIGTERM, then SIGKILL after {})",
                HumanDuration(*limit),
                HumanDuration(*grace)
            ),
            Outcome::LeaseLost { killed: false } => {
                format!("lease lost after {after} (sent SIGTERM)")
            }
            Outcome::LeaseLost { killed: true } => {
                format!("lease lost after {after} (sent SIGTERM, then SIGKILL)")
            }
            Outcome::NotStarted { program, errno, .. } => {
                format!(
                    "could not start {program}: {}",
                    Errno::from_raw(*errno).desc()
                )
            }
        }
    }
}

/// The exit statuses that count as success: 0, and those `--success-exit` lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SuccessCodes([u64; 4]);

impl SuccessCodes {
    /// 0 and each of `codes`.
    pub fn new(codes: &[u8]) -> SuccessCodes {
        let mut bits = [0u64; 4];
        for code in codes.iter().copied().chain([0]) {
            bits[usize::from(code / 64)] |= 1 << (code % 64);
        }
        SuccessCodes(bits)
    }

    pub fn contains(&self, code: u8) -> bool {
        self.0[usize::from(code / 64)] & (1 << (code % 64)) != 0
    }
}

impl Default for SuccessCodes {
    /// Only 0.
    fn default() -> SuccessCodes {
        SuccessCodes::new(&[])
    }
}

/// The status that reports signal `sig`: 128+S, as shells and coreutils report it.
pub fn signal_status(sig: i32) -> u8 {
    // Signal numbers on Linux are 1..=64, so 128+S always fits.
    128u8.saturating_add((sig & 0x7f) as u8)
}

/// The first real-time signal as glibc numbers them, and so as Debian's `kill -l`, bash and
/// dash's `kill -s RTMIN+3` do; the kernel's 32 and 33 are reserved by glibc and have no
/// name. The names are the same whatever C library crontap-run was built with (musl's
/// SIGRTMIN is 35), so the static and the glibc build name a signal alike.
const RTMIN: i32 = 34;
/// The last signal number on Linux.
const RTMAX: i32 = 64;

/// `SIGTERM`, `SIGRTMIN+3` for 37, `SIGRTMAX` for 64, or `signal 32` for a number with no
/// name.
pub fn signal_name(sig: i32) -> String {
    match sig {
        RTMIN => "SIGRTMIN".to_owned(),
        RTMAX => "SIGRTMAX".to_owned(),
        n if n > RTMIN && n < RTMAX => format!("SIGRTMIN+{}", n - RTMIN),
        n => match Signal::try_from(n) {
            Ok(signal) => signal.as_str().to_owned(),
            Err(_) => format!("signal {n}"),
        },
    }
}

/// A duration as the summary shows it: humantime units without spaces, rounded to the
/// millisecond below one second and to the second above (`35ms`, `3s`, `2m14s`, `1h`).
pub struct HumanDuration(pub Duration);

impl fmt::Display for HumanDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = self.0;
        let rounded = if d < Duration::from_secs(1) {
            Duration::from_millis(d.as_millis() as u64)
        } else {
            Duration::from_secs(
                d.as_secs()
                    .saturating_add(u64::from(d.subsec_millis() >= 500)),
            )
        };
        let text = humantime::format_duration(rounded)
            .to_string()
            .replace(' ', "");
        f.write_str(&text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Raw wait statuses as Linux encodes them (wait(2)): the exit code in bits 8-15, a
    /// terminating signal in bits 0-6 (bit 7 for a core dump), 0x7f for a stop.
    fn exited(code: i32) -> i32 {
        code << 8
    }
    fn killed(sig: i32, core: bool) -> i32 {
        sig | if core { 0x80 } else { 0 }
    }
    fn stopped(sig: i32) -> i32 {
        (sig << 8) | 0x7f
    }

    #[test]
    fn exit_codes() {
        assert_eq!(Outcome::from_wait(exited(3)), Some(Outcome::Exited(3)));
        let sigkill = Outcome::from_wait(killed(9, false));
        assert_eq!(sigkill.map(|o| o.exit_code()), Some(137));
        let termed = Outcome::from_wait(killed(15, true));
        assert_eq!(termed.map(|o| o.exit_code()), Some(143));
        assert_eq!(Outcome::from_wait(stopped(libc::SIGTSTP)), None);
        assert_eq!(Outcome::from_wait(0xffff), None, "continued");
        // Real-time signals, which no enum of named signals holds.
        for sig in 32..=64 {
            let outcome = Outcome::from_wait(killed(sig, false));
            assert_eq!(outcome, Some(Outcome::Signaled(sig)));
            assert_eq!(outcome.unwrap().exit_code(), 128 + sig as u8);
        }
        let limit = Duration::from_secs(3600);
        assert_eq!(
            Outcome::TimedOut {
                limit,
                kill_after: None
            }
            .exit_code(),
            124
        );
        let grace = Some(Duration::from_secs(10));
        assert_eq!(
            Outcome::TimedOut {
                limit,
                kill_after: grace
            }
            .exit_code(),
            137
        );
        assert_eq!(
            Outcome::TimedOut {
                limit,
                kill_after: grace
            }
            .describe(Duration::ZERO),
            "timed out after 1h (sent SIGTERM, then SIGKILL after 10s)"
        );
        let missing = io::Error::from_raw_os_error(Errno::ENOENT as i32);
        assert_eq!(
            Outcome::from_spawn_error("x".as_ref(), &missing).exit_code(),
            127
        );
        let denied = io::Error::from_raw_os_error(Errno::EACCES as i32);
        assert_eq!(
            Outcome::from_spawn_error("x".as_ref(), &denied).exit_code(),
            126
        );
        let not_a_dir = io::Error::from_raw_os_error(Errno::ENOTDIR as i32);
        assert_eq!(
            Outcome::from_spawn_error("x".as_ref(), &not_a_dir).exit_code(),
            126
        );
    }

    #[test]
    fn success_codes() {
        let rsync = SuccessCodes::new(&[24, 200]);
        assert!(Outcome::Exited(0).is_success_with(&rsync));
        assert!(Outcome::Exited(24).is_success_with(&rsync));
        assert!(Outcome::Exited(200).is_success_with(&rsync));
        assert!(!Outcome::Exited(23).is_success_with(&rsync));
        assert!(!Outcome::Exited(24).is_success_with(&SuccessCodes::default()));
        assert!(Outcome::Exited(0).is_success_with(&SuccessCodes::default()));
        // 128+15 listed is a command exiting 143, not one killed by SIGTERM.
        let listed = SuccessCodes::new(&[143]);
        assert!(!Outcome::Signaled(15).is_success_with(&listed));
        assert!(Outcome::Exited(143).is_success_with(&listed));
    }

    #[test]
    fn signal_names_follow_kill_l() {
        assert_eq!(signal_name(1), "SIGHUP");
        assert_eq!(signal_name(31), "SIGSYS");
        assert_eq!(signal_name(32), "signal 32");
        assert_eq!(signal_name(33), "signal 33");
        assert_eq!(signal_name(34), "SIGRTMIN");
        assert_eq!(signal_name(37), "SIGRTMIN+3");
        assert_eq!(signal_name(63), "SIGRTMIN+29");
        assert_eq!(signal_name(64), "SIGRTMAX");
    }

    #[test]
    fn descriptions() {
        let d = Duration::from_millis(134_400);
        assert_eq!(Outcome::Exited(3).describe(d), "exit 3 after 2m14s");
        assert_eq!(
            Outcome::Signaled(9).describe(Duration::from_secs(41)),
            "killed by SIGKILL after 41s"
        );
        assert_eq!(
            Outcome::Signaled(40).describe(Duration::from_secs(3600)),
            "killed by SIGRTMIN+6 after 1h"
        );
        assert_eq!(
            Outcome::Exited(1).describe(Duration::from_micros(35_400)),
            "exit 1 after 35ms"
        );
        let missing = io::Error::from_raw_os_error(Errno::ENOENT as i32);
        assert_eq!(
            Outcome::from_spawn_error("./import.sh".as_ref(), &missing).describe(Duration::ZERO),
            "could not start ./import.sh: No such file or directory"
        );
    }
}
