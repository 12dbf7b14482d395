//! The command's output: the pipes it writes to, the copies that pass each stream on (or
//! into the run's [`Hold`], with `--output on-failure`) and keep its tail ([`tee`]), and
//! what an attempt has left once they are drained.

use std::io::{self, PipeWriter};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::run::finished::{Finished, Hooks};
use crate::run::hold::{Hold, Which};
use crate::run::outcome::SuccessCodes;
use crate::run::process;
use crate::run::signals::SignalLog;
use crate::run::tail::{Kept, Tail};
use crate::run::tee::{self, Sink, Stream, Tee};
use crate::run::watch::Ending;

/// How long to keep reading output after the command exited: a background process it left
/// behind may hold the pipes open indefinitely.
const OUTPUT_GRACE: Duration = Duration::from_secs(1);

/// The pipes the child writes to and the copy that reads them.
pub struct Output {
    pub stdout_w: PipeWriter,
    pub stderr_w: PipeWriter,
    pub copies: Copies,
}

/// One copy per stream: blocking reads, no `poll`; and the tail they share, if kept.
pub struct Copies {
    stdout: Tee,
    stderr: Tee,
    both: Option<Arc<Mutex<Tail>>>,
}

impl Output {
    /// The pipes of an attempt, and their copies to crontap-run's stdout and stderr, or
    /// into `hold` when there is one; with a shared tail of both streams' last `both_tail`
    /// bytes, in the order they arrive, unless that is 0.
    pub fn start(hold: Option<&Arc<Hold>>, both_tail: usize) -> io::Result<Output> {
        let both = (both_tail > 0).then(|| Arc::new(Mutex::new(Tail::new(both_tail))));
        let (stdout_r, stdout_w) = io::pipe()?;
        let (stderr_r, stderr_w) = io::pipe()?;
        let sink = |which: Which| -> io::Result<Sink> {
            if let Some(hold) = hold {
                return Ok(Sink::Hold(hold.writer(which)));
            }
            Ok(Sink::Pass(match which {
                Which::Stdout => process::stdout(),
                Which::Stderr => process::stderr(),
            }))
        };
        let stdout = Tee::start(Stream {
            source: stdout_r.into(),
            sink: sink(Which::Stdout)?,
            both: both.clone(),
        })?;
        let stderr = Tee::start(Stream {
            source: stderr_r.into(),
            sink: sink(Which::Stderr)?,
            both: both.clone(),
        })?;
        Ok(Output {
            stdout_w,
            stderr_w,
            copies: Copies {
                stdout,
                stderr,
                both,
            },
        })
    }
}

impl Copies {
    /// Reports the attempt that ended as `ending`: first to `hooks` without the output (as
    /// soon as it is known), then, once the output has been passed on (less long if
    /// crontap-run is told to stop meanwhile), whole.
    pub fn finish(
        self,
        ending: Ending,
        (started, exited): (Instant, Instant),
        success: SuccessCodes,
        hooks: &Hooks<'_>,
        signals: &SignalLog,
    ) -> Finished {
        let elapsed = exited - started;
        tracing::debug!(
            outcome = ?ending.outcome,
            elapsed_ms = elapsed.as_millis() as u64,
            "command finished"
        );
        let mut finished = Finished {
            outcome: ending.outcome,
            elapsed,
            stdout_tail: Vec::new(),
            stderr_tail: Vec::new(),
            output_tail: Kept::default(),
            stopped: ending.stopped,
            killed_after: ending.killed_after,
            termination_forwarded: ending.termination_forwarded,
            success,
        };
        (hooks.ended)(&finished);
        let tails = tee::finish_all(vec![self.stdout, self.stderr], OUTPUT_GRACE, signals);
        let mut tails = tails.into_iter();
        finished.stdout_tail = tails.next().unwrap_or_default();
        finished.stderr_tail = tails.next().unwrap_or_default();
        if let Some(both) = &self.both {
            finished.output_tail = both.lock().unwrap_or_else(PoisonError::into_inner).kept();
        }
        finished
    }
}
