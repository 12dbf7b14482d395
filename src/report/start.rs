//! The start request of a protocol that has one (Healthchecks), sent beside the command.
//!
//! It goes out on a thread of its own once the command has been spawned, never before: the
//! command never waits for the network. The end report waits for it, so that the service
//! never sees a run's end before its start, but only within the end's own ping budget: once
//! the end is due the start makes no new attempt (one waiting to retry, or still
//! connecting, was never written and is dropped), and one under way, which may have been
//! written, is waited for up to half the budget: only then is it dropped, with one log
//! line, so that a start endpoint that hangs costs the end half its budget, never the end
//! itself. A start attempt, once connected, is never cut short by the ping timeout (it could
//! still arrive after the end); only its connection is. A start that failed (no answer,
//! 404) does not keep the end from being sent.
//!
//! A bug (panic) on the start's thread abandons the start only: the panic guard is told
//! that this thread's work can be done without (through [`SideTask`], which whoever builds
//! the run's reporter gives: the guard lives in `lifecycle`, above `report`), so it marks
//! the start failed and stops that thread, and the run goes on.

use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use tokio::sync::watch;

use crate::report::PingResult;
use crate::report::ping::Wanted;

/// Where a run's start request is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Not sent, and may still be.
    Unsent,
    /// On its way, on its own thread.
    InFlight,
    /// Over: how it went (`NotSent` when the protocol or run has none).
    Done(PingResult),
}

/// How the start's thread tells the panic guard that its work can be done without.
#[derive(Clone, Copy)]
pub struct SideTask {
    /// Marks the calling thread as doing `what`: a panic on it runs `abandon` and stops
    /// that thread only.
    pub mark: fn(&'static str, Box<dyn FnOnce()>),
    /// The tests' fault point on the start's thread (debug builds only; `CRONTAP_FAULT`).
    pub fault_point: fn(&str),
}

impl SideTask {
    /// No guard to tell (the unit tests).
    pub const NONE: SideTask = SideTask {
        mark: |_, _| {},
        fault_point: |_| {},
    };
}

/// A run's start request: at most one, whatever the number of attempts.
pub struct Start {
    state: Mutex<State>,
    settled: Condvar,
    /// Whether the start is still wanted: once the end report is due it makes no new
    /// attempt, and then it is dropped.
    wanted: watch::Sender<Wanted>,
    side_task: SideTask,
}

impl Default for Start {
    fn default() -> Start {
        Start::new(SideTask::NONE)
    }
}

impl Start {
    /// A start not sent yet, whose thread tells the panic guard through `side_task`.
    pub fn new(side_task: SideTask) -> Start {
        Start {
            state: Mutex::new(State::Unsent),
            settled: Condvar::new(),
            wanted: watch::Sender::new(Wanted::Yes),
            side_task,
        }
    }

    /// Claims the start for sending: `true` the first time only. A start claimed is in
    /// flight from this moment, before its thread exists, so that an end that comes at once
    /// waits for it.
    pub fn claim(&self) -> bool {
        let mut state = self.lock();
        let first = *state == State::Unsent;
        if first {
            *state = State::InFlight;
        }
        first
    }

    /// What the start's delivery watches to know whether it is still wanted.
    pub fn wanted(&self) -> watch::Receiver<Wanted> {
        self.wanted.subscribe()
    }

    /// The end report is due: waits for the start, if one is in flight, until `patience`
    /// (no new attempt is made meanwhile), then drops it, and waits for it to settle until
    /// `deadline`. `false` if it still has not.
    pub fn finish_before(&self, patience: Instant, deadline: Instant) -> bool {
        self.wanted.send_replace(Wanted::NoRetries);
        if self.wait_until(patience.min(deadline)) {
            return true;
        }
        tracing::warn!(
            "the start ping is still under way after half the ping budget; sending the end \
             without waiting longer (the service may see the start after it)"
        );
        self.wanted.send_replace(Wanted::No);
        self.wait_until(deadline)
    }

    /// Sends the claimed start on a thread of its own: `send` does the request.
    pub fn send_beside(self: &Arc<Start>, send: impl FnOnce() -> PingResult + Send + 'static) {
        let start = Arc::clone(self);
        let abandoned = Arc::clone(self);
        let side_task = self.side_task;
        let spawned = std::thread::Builder::new()
            .name("start-ping".into())
            .spawn(move || {
                (side_task.mark)(
                    "the start ping",
                    Box::new(move || abandoned.settle(PingResult::Failed)),
                );
                (side_task.fault_point)("start-ping");
                let result = send();
                start.settle(result);
            });
        if let Err(err) = spawned {
            tracing::error!("cannot send the start ping: no thread for it ({err})");
            self.settle(PingResult::Failed);
        }
    }

    /// The start is over, with `result`.
    pub fn settle(&self, result: PingResult) {
        *self.lock() = State::Done(result);
        self.settled.notify_all();
    }

    /// Waits until no start is in flight, or `deadline`: `false` if one still is.
    fn wait_until(&self, deadline: Instant) -> bool {
        let mut state = self.lock();
        while *state == State::InFlight {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            state = self
                .settled
                .wait_timeout(state, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        true
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn claimed_once_and_waited_for() {
        let start = Arc::new(Start::default());
        assert!(start.wait_until(Instant::now()), "nothing in flight");
        assert!(start.claim());
        assert!(!start.claim());
        assert!(!start.wait_until(Instant::now() + Duration::from_millis(20)));
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        start.send_beside(move || {
            let _ = rx.recv();
            PingResult::Sent
        });
        assert!(!start.wait_until(Instant::now() + Duration::from_millis(20)));
        tx.send(()).unwrap();
        assert!(start.wait_until(Instant::now() + Duration::from_secs(10)));
        assert_eq!(*start.lock(), State::Done(PingResult::Sent));
    }

    #[test]
    fn a_start_that_outlasts_the_patience_is_dropped() {
        let start = Arc::new(Start::default());
        assert!(start.claim());
        let mut wanted = start.wanted();
        let theirs = Arc::clone(&start);
        let thread = std::thread::spawn(move || {
            // What the delivery does: wait until not wanted at all, then give up.
            let runtime = tokio::runtime::Builder::new_current_thread()
                .build()
                .unwrap();
            runtime
                .block_on(wanted.wait_for(|w| *w == Wanted::No))
                .unwrap();
            theirs.settle(PingResult::Failed);
        });
        let now = Instant::now();
        let patience = now + Duration::from_millis(50);
        assert!(start.finish_before(patience, now + Duration::from_secs(10)));
        assert!(now.elapsed() >= Duration::from_millis(50));
        assert_eq!(*start.lock(), State::Done(PingResult::Failed));
        thread.join().unwrap();
    }
}
