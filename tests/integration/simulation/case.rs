//! One simulated run, drawn from its seed: the job, the options, the outside stop and the
//! endpoint's behaviour; the shell script that is the job; and what the contract
//! (DESIGN "Exit status"; docs/signals.md, "Retries" and "Signals, timeouts and PID 1") says
//! must come of it.
//!
//! The expectations are written from the contract's words, never from crontap-run's code:
//! a status, a kind of report, how many attempts run.

use std::path::Path;
use std::time::Duration;

use crate::harness::SECRET;

/// Exit statuses a job may end with: the ordinary, and those that mean something to cron
/// wrappers (124 timeout, 125 own error, 126/127 not started, 128+N signals).
const EXITS: &[u8] = &[0, 1, 2, 3, 24, 42, 124, 125, 126, 127, 128, 137, 143, 255];
/// Statuses `--success-exit` may list (it refuses 126 and 127).
const SUCCESS_EXITS: &[u8] = &[1, 2, 3, 24, 42];
/// Signals whose default action is not to end a process: SIGCHLD, SIGCONT, the stop
/// signals, SIGURG, SIGWINCH. (crontap-run is started with every signal at its default,
/// [`super::run`], so every other signal kills the job.)
const NOT_DEADLY: &[i32] = &[17, 18, 19, 20, 21, 22, 23, 28];

/// The stop and timeout durations (short, so that a case takes seconds).
pub const KILL_AFTER: Duration = Duration::from_secs(1);
pub const TIMEOUT: Duration = Duration::from_secs(1);
/// The ping settings every case runs with.
pub const PING_TIMEOUT: Duration = Duration::from_secs(3);
pub const PING_BUDGET: Duration = Duration::from_secs(12);

/// How an attempt of the job ends, unless the stop lands in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    Exit(u8),
    /// The shell kills itself with this signal.
    Signal(i32),
    /// Runs until something stops it (only drawn with `--timeout`).
    Wait,
}

/// SIGTERM to crontap-run from outside, a number of milliseconds after the moment named.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    None,
    /// While attempt `k` runs (that attempt waits for it; the earlier ones fail).
    During {
        attempt: u32,
        after_ms: u64,
    },
    /// Once attempt `k` has ended and another is due, during the wait before it.
    Between {
        attempt: u32,
        after_ms: u64,
    },
}

/// What the heartbeat endpoint does, connection by connection, then answers at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Endpoint {
    Fine,
    /// The first connection's request is held this many milliseconds on the way.
    Slow(u64),
    /// The first end reports are answered with this status (503 with `Retry-After: 0`).
    Errors(u16, usize),
    /// The first connections are reset once the request is written.
    Resets(usize),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    Crontap,
    Healthchecks,
}

/// A process the job leaves running behind it, in its process group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Orphan {
    /// With its output sent to /dev/null.
    Quiet,
    /// With the job's stdout and stderr still open.
    HoldsPipes,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    Out,
    Err,
}

#[derive(Clone, Debug)]
pub struct Case {
    pub seed: u64,
    pub end: End,
    pub out_lines: usize,
    pub err_lines: usize,
    /// The stream whose last line holds the URL's token.
    pub token: Option<Stream>,
    pub ignores_term: bool,
    pub orphan: Option<Orphan>,
    pub timeout: Option<Duration>,
    pub retries: u32,
    pub retry_delay: Duration,
    pub no_overlap: bool,
    pub once_per: bool,
    pub on_failure: bool,
    pub protocol: Protocol,
    pub success_exit: Option<u8>,
    pub stop: Stop,
    pub endpoint: Endpoint,
}

/// The number of combinations of protocol, output mode and kind of stop: a seed's
/// remainder by it picks them, so that any [`COMBINATIONS`] consecutive remainders cover all.
pub const COMBINATIONS: u64 = 12;

/// The case a seed gives; the same seed, the same case.
pub fn draw(seed: u64) -> Case {
    let mut rng = fastrand::Rng::with_seed(seed);
    let combination = seed % COMBINATIONS;
    let protocol = match combination & 1 == 1 {
        true => Protocol::Healthchecks,
        false => Protocol::Crontap,
    };
    let on_failure = combination & 2 == 2;
    let stop_kind = combination / 4;
    let mut retries = rng.u32(0..=2);
    if stop_kind == 2 && retries == 0 {
        retries = 1;
    }
    let stop = match stop_kind {
        1 => Stop::During {
            attempt: rng.u32(1..=retries + 1),
            after_ms: rng.u64(0..300),
        },
        2 => Stop::Between {
            attempt: rng.u32(1..=retries),
            after_ms: rng.u64(0..300),
        },
        _ => Stop::None,
    };
    let ignores_term = rng.u8(0..4) == 0;
    let success_exit = rng
        .bool()
        .then(|| SUCCESS_EXITS[rng.usize(..SUCCESS_EXITS.len())]);
    let timeout = rng.bool().then_some(TIMEOUT);
    let end = draw_end(
        &mut rng,
        ignores_term,
        timeout.is_some(),
        stop,
        success_exit,
    );
    let lines = |rng: &mut fastrand::Rng| [0, 3, 1500][rng.usize(0..3)];
    Case {
        seed,
        end,
        out_lines: lines(&mut rng),
        err_lines: lines(&mut rng),
        token: [None, Some(Stream::Out), Some(Stream::Err)][rng.usize(0..3)],
        ignores_term,
        orphan: [None, Some(Orphan::Quiet), Some(Orphan::HoldsPipes)][rng.usize(0..3)],
        // A stop during an attempt must come before its timeout could.
        timeout: match stop {
            Stop::During { .. } => timeout.map(|_| Duration::from_secs(30)),
            _ => timeout,
        },
        retries,
        // The stop between attempts lands in this wait.
        retry_delay: match stop {
            Stop::Between { .. } => Duration::from_secs(3),
            _ => Duration::from_millis(rng.u64(1..300)),
        },
        no_overlap: rng.bool(),
        once_per: rng.bool(),
        on_failure,
        protocol,
        success_exit,
        stop,
        endpoint: match rng.usize(0..5) {
            // Under the ping timeout, or well past it (a request written and held on the
            // way, which the old code gave up on while it could still arrive).
            // (Each at least a second from the ping timeout, 3 s, and from the half budget,
            // 6 s, that a start is waited for, so that a loaded machine does not blur them.)
            0 => Endpoint::Slow(match rng.bool() {
                true => rng.u64(200..2000),
                false => rng.u64(4000..5000),
            }),
            1 => Endpoint::Errors(503, rng.usize(1..=2)),
            2 => Endpoint::Errors(500, 1),
            3 => Endpoint::Resets(rng.usize(1..=2)),
            _ => Endpoint::Fine,
        },
    }
}

/// How attempts end. Before a stop, every attempt must be a failure that is retried, so
/// that the attempt the stop is meant for comes.
fn draw_end(
    rng: &mut fastrand::Rng,
    ignores_term: bool,
    timeout: bool,
    stop: Stop,
    success_exit: Option<u8>,
) -> End {
    loop {
        let end = match rng.usize(0..5) {
            0 | 1 => End::Exit(EXITS[rng.usize(..EXITS.len())]),
            2 | 3 => End::Signal(rng.i32(1..=libc::SIGRTMAX())),
            _ => End::Wait,
        };
        let fits = match end {
            // A stop during an attempt gets a long timeout (below): the attempts before it
            // must end at once.
            End::Wait => timeout && !matches!(stop, Stop::During { .. }),
            End::Signal(s) => !NOT_DEADLY.contains(&s) && (s != libc::SIGTERM || !ignores_term),
            End::Exit(_) => true,
        };
        let must_retry = stop != Stop::None;
        if fits && (!must_retry || retried(end, success_exit)) {
            return end;
        }
    }
}

/// Whether an attempt that ended so is run again (docs/signals.md "Retries": not a success, not
/// 126 or 127, not killed by an interrupt, quit or hangup).
fn retried(end: End, success_exit: Option<u8>) -> bool {
    match end {
        End::Exit(n) => n != 0 && Some(n) != success_exit && !matches!(n, 126 | 127),
        End::Signal(s) => ![libc::SIGINT, libc::SIGQUIT, libc::SIGHUP].contains(&s),
        End::Wait => true,
    }
}

/// What the contract says must come of a case.
#[derive(Debug)]
pub struct Expected {
    pub status: i32,
    pub success: bool,
    pub attempts: u32,
    /// The summary starts with one of these.
    pub heads: Vec<String>,
}

impl Case {
    pub fn expected(&self) -> Expected {
        let code = match self.end {
            End::Exit(n) => i32::from(n),
            End::Signal(s) => 128 + s,
            End::Wait if self.ignores_term => 137,
            End::Wait => 124,
        };
        let head = match self.end {
            End::Exit(n) => format!("exit {n} after "),
            // Named as `kill -l` names it; 32 and 33, which it does not name, by number.
            End::Signal(_) => "killed by ".to_owned(),
            End::Wait => "timed out after ".to_owned(),
        };
        // docs/signals.md, "Signals, timeouts and PID 1": a job that dies of the SIGTERM
        // passed on is "killed by" it; one that needed crontap-run's SIGKILL was "stopped by" it.
        let stopped = match self.ignores_term {
            true => "stopped by SIGTERM after ",
            false => "killed by SIGTERM after ",
        }
        .to_owned();
        match self.stop {
            Stop::None => {
                let success =
                    matches!(self.end, End::Exit(n) if n == 0 || Some(n) == self.success_exit);
                let again = !success && retried(self.end, self.success_exit);
                Expected {
                    status: code,
                    success,
                    attempts: if again { self.retries + 1 } else { 1 },
                    heads: vec![head],
                }
            }
            Stop::During { attempt, .. } => Expected {
                status: if self.ignores_term { 137 } else { 143 },
                success: false,
                attempts: attempt,
                heads: vec![stopped],
            },
            // The stop came after the attempt ended: its status and report stand, and
            // no attempt follows.
            Stop::Between { attempt, .. } => Expected {
                status: code,
                success: false,
                attempts: attempt,
                heads: vec![head, stopped],
            },
        }
    }

    /// The job's stdout and stderr in one attempt.
    pub fn output(&self) -> (Vec<u8>, Vec<u8>) {
        let text = |name: &str, lines: usize, token: bool| {
            let mut s = String::new();
            for i in 0..lines {
                s.push_str(&format!(
                    "{name} line {i} of case {:016x}: 0123456789 abcdefghij\n",
                    self.seed
                ));
            }
            if token {
                s.push_str(&format!(
                    "{name}: request to https://example.test/ping/{SECRET} failed\n"
                ));
            }
            s.into_bytes()
        };
        (
            text("out", self.out_lines, self.token == Some(Stream::Out)),
            text("err", self.err_lines, self.token == Some(Stream::Err)),
        )
    }

    /// The job: a shell script that marks each attempt in `dir` (its pid, then `ready.<k>`
    /// once its output is written) before it ends as the case says.
    pub fn script(&self, dir: &Path) -> String {
        let d = dir.display();
        let mut s = format!("ulimit -c 0\nd='{d}'\na=$CRONTAP_ATTEMPT\necho $$ > \"$d/pid.$a\"\n");
        if self.ignores_term {
            s.push_str("trap '' TERM\n");
        }
        match self.orphan {
            Some(Orphan::Quiet) => {
                s.push_str("sleep 30 </dev/null >/dev/null 2>&1 &\necho $! > \"$d/orphan.$a\"\n")
            }
            Some(Orphan::HoldsPipes) => s.push_str("sleep 30 &\necho $! > \"$d/orphan.$a\"\n"),
            None => {}
        }
        s.push_str("cat \"$d/out\"\ncat \"$d/err\" >&2\n: > \"$d/ready.$a\"\n");
        let wait = "while :; do sleep 1; done\n";
        if let Stop::During { attempt, .. } = self.stop {
            s.push_str(&format!("if [ \"$a\" = {attempt} ]; then {wait}fi\n"));
        }
        match self.end {
            End::Exit(n) => s.push_str(&format!("exit {n}\n")),
            End::Signal(sig) => s.push_str(&format!(
                "kill -s {sig} $$\necho 'signal {sig} did not end the job' >&2\nexit 99\n"
            )),
            End::Wait => s.push_str(wait),
        }
        s
    }

    /// Longest time the whole run may take: its attempts, the waits between them, the
    /// stop's kill, the ping budget, and a margin for a loaded machine.
    pub fn bound(&self) -> Duration {
        let attempts = self.expected().attempts;
        let kill = if self.ignores_term {
            KILL_AFTER
        } else {
            Duration::ZERO
        };
        let per_attempt = match self.end {
            End::Wait => self.timeout.unwrap_or_default() + kill,
            _ => Duration::ZERO,
        } + Duration::from_secs(1); // an orphan holding the pipes: a second of waiting
        let waits: Duration = (1..attempts)
            .map(|k| self.retry_delay * (1 << (k - 1)))
            .sum();
        let stop = Duration::from_millis(300) + kill + Duration::from_secs(5);
        per_attempt * attempts + waits + stop + PING_BUDGET + Duration::from_secs(10)
    }
}
