//! `--output on-failure`: the command's output held until the run's end, then printed if
//! the run did not succeed, or dropped if it did, so that cron mails only failures.
//!
//! One [`Hold`] serves a whole run: every attempt's stdout and stderr go into one
//! [`Spool`] per stream (a small buffer that spills to an unnamed file, see [`spill`]),
//! and each attempt marks where its output starts. At the end, the run's one verdict
//! decides (`lifecycle::end`): [`Hold::release`] replays stdout to stdout and stderr to
//! stderr, byte for byte, attempt by attempt, each attempt introduced by the line the
//! caller gave for it (`crontap-run: attempt 2 of 3`); [`Hold::drop_all`] prints nothing.
//! The two streams stay apart, each in its own order: only their relative order is lost,
//! as with chronic.
//!
//! Nothing is ever lost for want of disk: when a spill cannot be written (a full
//! `$TMPDIR`), the hold gives up at once, with one warning: everything held so far is
//! replayed and from then on the output passes straight through, as with `--output pass`.
//! Output that comes after the end (a background process of the job's still writing) goes
//! the way the end decided: through after a release, nowhere after a drop.
//!
//! The tails of the failure summary are kept by [`tee`](super::tee) before a byte gets
//! here, so the summary and the ping are the same whatever `--output` says.

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use crate::run::spill::{Full, Spool};
use crate::run::write;

/// How often the end looks at a replay's progress.
const RECHECK: Duration = Duration::from_millis(100);

/// One of the command's two output streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Which {
    Stdout = 0,
    Stderr = 1,
}

/// What becomes of output as it comes (an [`AtomicU8`] in [`Hold`]).
const HOLDING: u8 = 0;
/// Passed straight through: after a release, or a spill that failed.
const PASSING: u8 = 1;
/// Dropped: the run succeeded.
const DROPPING: u8 = 2;

/// The held output of one run, shared by the copies of every attempt and the run's end.
pub struct Hold {
    /// [`HOLDING`], [`PASSING`] or [`DROPPING`]. It leaves `HOLDING` only with `held`
    /// locked and everything held already replayed, so a write that sees `PASSING`
    /// may go straight through without the lock.
    state: AtomicU8,
    held: Mutex<Held>,
    sinks: Sinks,
    /// Where spills go, for the warning.
    dir: PathBuf,
}

/// crontap-run's own stdout and stderr; a stream whose reader went away is not written
/// again.
struct Sinks {
    fds: [Option<OwnedFd>; 2],
    gone: [AtomicBool; 2],
    /// Bytes written so far, which the end watches to tell a slow reader from a stuck one.
    written: AtomicU64,
}

struct Held {
    spools: [Spool; 2],
    attempts: Vec<Segment>,
}

/// Where an attempt's output starts in each spool, and the line that introduces it.
struct Segment {
    intro: Option<String>,
    start: [u64; 2],
}

/// What a copy of one stream writes to instead of crontap-run's own stream.
pub struct Writer {
    hold: Arc<Hold>,
    which: Which,
}

impl Writer {
    /// The stream this writer holds.
    pub fn which(&self) -> Which {
        self.which
    }
}

impl Hold {
    /// A hold that spills into `dir` and prints to crontap-run's stdout and stderr (a
    /// stream that is not open counts as gone).
    pub fn new(dir: &Path) -> Arc<Hold> {
        let dup = |fd: std::os::fd::BorrowedFd<'_>| fd.try_clone_to_owned().ok();
        Arc::new(Hold {
            state: AtomicU8::new(HOLDING),
            held: Mutex::new(Held {
                spools: [Spool::new(dir), Spool::new(dir)],
                attempts: Vec::new(),
            }),
            sinks: Sinks {
                fds: [dup(io::stdout().as_fd()), dup(io::stderr().as_fd())],
                gone: [AtomicBool::new(false), AtomicBool::new(false)],
                written: AtomicU64::new(0),
            },
            dir: dir.to_owned(),
        })
    }

    /// What the copy of `which` writes to.
    pub fn writer(self: &Arc<Hold>, which: Which) -> Writer {
        Writer {
            hold: Arc::clone(self),
            which,
        }
    }

    /// An attempt begins: its output is replayed after `intro` (a line of its own on
    /// stderr), if any. Once output passes straight through, `intro` is printed now.
    pub fn begin_attempt(&self, intro: Option<String>) {
        let mut held = self.lock();
        match self.state.load(Ordering::SeqCst) {
            HOLDING => {
                let start = [held.spools[0].len(), held.spools[1].len()];
                held.attempts.push(Segment { intro, start });
            }
            PASSING => {
                if let Some(line) = intro {
                    let _ = self
                        .sinks
                        .write(Which::Stderr, format!("{line}\n").as_bytes());
                }
            }
            _ => {}
        }
    }

    /// The run succeeded: nothing held is printed, and the spills are freed. Output that
    /// passes through already (a spill failed) goes on doing so.
    pub fn drop_all(&self) {
        let mut held = self.lock();
        if self.state.load(Ordering::SeqCst) == HOLDING {
            self.state.store(DROPPING, Ordering::SeqCst);
            held.clear();
        }
    }

    /// The run did not succeed: replays everything held, then lets output through. Waits
    /// for a slow reader, but not for one that takes nothing at all for
    /// [`write::STUCK_READER`]: the run's end must come.
    pub fn release(self: &Arc<Hold>) {
        let (done_tx, done) = mpsc::channel();
        let hold = Arc::clone(self);
        let spawned = thread::Builder::new()
            .name("replay".to_owned())
            .spawn(move || {
                hold.pass_from_now();
                let _ = done_tx.send(());
            });
        if spawned.is_err() {
            // No thread to be had: replay here, unbounded, rather than lose the output.
            self.pass_from_now();
            return;
        }
        self.wait_for_replay(&done);
    }

    /// Waits for the replay thread while the reader takes something now and then.
    fn wait_for_replay(&self, done: &mpsc::Receiver<()>) {
        let mut seen = self.sinks.written.load(Ordering::SeqCst);
        let mut moved = Instant::now();
        loop {
            match done.recv_timeout(RECHECK) {
                Ok(()) | Err(RecvTimeoutError::Disconnected) => return,
                Err(RecvTimeoutError::Timeout) => {}
            }
            let now = self.sinks.written.load(Ordering::SeqCst);
            if now != seen {
                (seen, moved) = (now, Instant::now());
            } else if moved.elapsed() >= write::STUCK_READER {
                tracing::warn!(
                    "the reader of crontap-run's output took nothing for a minute; the rest \
                     of the command's held output is not printed"
                );
                return;
            }
        }
    }

    /// Replays what is held, if anything still is, and lets output through from now on.
    fn pass_from_now(&self) {
        let mut held = self.lock();
        if self.state.load(Ordering::SeqCst) == HOLDING {
            held.replay(&self.sinks);
            held.clear();
            self.state.store(PASSING, Ordering::SeqCst);
        }
    }

    /// A spill failed with `error`: one warning, then everything held goes out and output
    /// passes straight through (called with the lock held, while holding).
    fn give_up_holding(&self, held: &mut Held, error: &io::Error) {
        tracing::warn!(
            "cannot hold the command's output in {} ({error}); passing it on as it comes, \
             after what was held so far",
            crate::sanitize::path(&self.dir)
        );
        held.replay(&self.sinks);
        held.clear();
        self.state.store(PASSING, Ordering::SeqCst);
    }

    fn lock(&self) -> MutexGuard<'_, Held> {
        self.held.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Writer {
    /// Takes a chunk of the command's output. An error means the stream is passed through
    /// and its reader went away: the copy stops writing, and drains.
    pub fn write(&self, chunk: &[u8]) -> io::Result<()> {
        let hold = &self.hold;
        if hold.state.load(Ordering::SeqCst) == HOLDING {
            let mut held = hold.lock();
            // Looked at again under the lock: a release or a failed spill may have come.
            if hold.state.load(Ordering::SeqCst) == HOLDING {
                let spool = &mut held.spools[self.which as usize];
                let Err(Full { kept, error }) = spool.push(chunk) else {
                    return Ok(());
                };
                hold.give_up_holding(&mut held, &error);
                return hold.sinks.write(self.which, &chunk[kept..]);
            }
        }
        match hold.state.load(Ordering::SeqCst) {
            PASSING => hold.sinks.write(self.which, chunk),
            _ => Ok(()),
        }
    }
}

impl Held {
    /// Writes every attempt's output, in order, each after its intro line (and first
    /// anything held before the first attempt was marked, which nothing writes today).
    fn replay(&self, sinks: &Sinks) {
        let ends = [self.spools[0].len(), self.spools[1].len()];
        let first = self.attempts.first().map_or(ends, |s| s.start);
        self.replay_range(sinks, [0, 0], first);
        for (i, segment) in self.attempts.iter().enumerate() {
            let end = self.attempts.get(i + 1).map_or(ends, |next| next.start);
            if let Some(line) = &segment.intro {
                let _ = sinks.write(Which::Stderr, format!("{line}\n").as_bytes());
            }
            self.replay_range(sinks, segment.start, end);
        }
    }

    /// Writes the bytes of each stream from `start` to `end` to crontap-run's own.
    fn replay_range(&self, sinks: &Sinks, start: [u64; 2], end: [u64; 2]) {
        for which in [Which::Stdout, Which::Stderr] {
            let n = which as usize;
            let mut out = |bytes: &[u8]| sinks.write(which, bytes);
            if let Err(err) = self.spools[n].read_range(start[n], end[n], &mut out) {
                tracing::debug!(%err, ?which, "held output not replayed whole");
            }
        }
    }

    /// Frees the spools (and their files) and forgets the attempts.
    fn clear(&mut self) {
        for spool in &mut self.spools {
            spool.clear();
        }
        self.attempts.clear();
    }
}

impl Sinks {
    /// Writes `bytes` to crontap-run's `which`, unless its reader is gone (then, and once
    /// that is found, an error).
    fn write(&self, which: Which, bytes: &[u8]) -> io::Result<()> {
        let n = which as usize;
        let (Some(fd), false) = (&self.fds[n], self.gone[n].load(Ordering::SeqCst)) else {
            return Err(io::ErrorKind::BrokenPipe.into());
        };
        match write::write_all(fd.as_fd(), bytes) {
            Ok(()) => {
                self.written.fetch_add(bytes.len() as u64, Ordering::SeqCst);
                Ok(())
            }
            Err(errno) => {
                self.gone[n].store(true, Ordering::SeqCst);
                Err(errno.into())
            }
        }
    }
}
