//! The start request of a protocol that has one (Healthchecks), sent beside the command.
//!
//! It goes out on a thread of its own once the command has been spawned, never before: the
//! command never waits for the network. The end report waits for it, so that the service
//! never sees a run's end before its start, but only within the end's own ping budget. A
//! start that failed (no answer, 404) does not keep the end from being sent.
//!
//! A bug (panic) on the start's thread abandons the start only: the panic guard is told
//! that this thread's work can be done without ([`guard::side_task`]), so it marks the start
//! failed and stops that thread, and the run goes on.

use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use crate::lifecycle::guard;
use crate::report::PingResult;

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

/// A run's start request: at most one, whatever the number of attempts.
pub struct Start {
    state: Mutex<State>,
    settled: Condvar,
}

impl Default for Start {
    fn default() -> Start {
        Start {
            state: Mutex::new(State::Unsent),
            settled: Condvar::new(),
        }
    }
}

impl Start {
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

    /// Sends the claimed start on a thread of its own: `send` does the request.
    pub fn send_beside(self: &Arc<Start>, send: impl FnOnce() -> PingResult + Send + 'static) {
        let start = Arc::clone(self);
        let abandoned = Arc::clone(self);
        let spawned = std::thread::Builder::new()
            .name("start-ping".into())
            .spawn(move || {
                guard::side_task("the start ping", move || {
                    abandoned.settle(PingResult::Failed)
                });
                guard::fault_point("start-ping");
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
    pub fn wait_until(&self, deadline: Instant) -> bool {
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
}
