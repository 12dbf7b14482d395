//! Signals: which ones crontap-run forwards to the job and why, and the signal state the job
//! inherits.
//!
//! crontap-run stands between the job and whoever started it (a shell, cron, systemd,
//! Kubernetes). Signals meant for the job arrive at crontap-run, so it passes them on to the
//! job's whole process group. The job must also start with the signal state crontap-run was
//! given, not the one crontap-run runs with: the Rust runtime ignores SIGPIPE, and handlers
//! installed here would otherwise replace dispositions the caller chose to ignore (`nohup`
//! ignores SIGHUP; a shell ignores SIGINT for background jobs).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use nix::sys::signal::Signal;

/// Signals passed on to the job's process group, with the reason each one matters.
pub const FORWARDED: &[(Signal, &str)] = &[
    // systemd, Kubernetes and `kill` ask the job to stop with SIGTERM.
    (
        Signal::SIGTERM,
        "stop request from a service manager or orchestrator",
    ),
    // Ctrl-C when crontap-run is not in the terminal's foreground, or `kill -INT`.
    (Signal::SIGINT, "interrupt"),
    // The terminal went away, or a daemon-style "reload" request.
    (Signal::SIGHUP, "hangup or reload"),
    // Ctrl-\ and `kill -QUIT`: stop with a core dump or a thread dump (Java, Go).
    (Signal::SIGQUIT, "quit, often a dump request"),
    // Application-defined: log rotation, status dumps, reloads.
    (Signal::SIGUSR1, "application-defined"),
    (Signal::SIGUSR2, "application-defined"),
    // The terminal was resized; full-screen programs redraw.
    (Signal::SIGWINCH, "terminal resized"),
];

/// Whether a forwarded signal can end the job: it is followed by SIGCONT, so that stopped
/// members of the group can act on it.
pub fn is_termination(signal: Signal) -> bool {
    TERMINATION.contains(&signal)
}

/// Signals that tell crontap-run itself to stop: the report then gets only the shutdown
/// budget. SIGHUP and SIGQUIT are not among them (they often mean "reload" or "dump").
const STOP_SIGNALS: [Signal; 2] = [Signal::SIGTERM, Signal::SIGINT];

/// Whether `signal` is a request to crontap-run itself to stop.
pub fn is_stop_request(signal: Signal) -> bool {
    STOP_SIGNALS.contains(&signal)
}

/// Time allowed for the report after crontap-run was told to stop: short enough for the
/// 30 s grace of Kubernetes and the default 90 s of systemd, even after `--kill-after`.
pub const SHUTDOWN_BUDGET: Duration = Duration::from_secs(5);

/// Signals that end a job, so none that ended or interrupted an attempt is followed by
/// another: whoever sent it wanted the job gone, not repeated.
pub const TERMINATION: [Signal; 4] = [
    Signal::SIGTERM,
    Signal::SIGINT,
    Signal::SIGHUP,
    Signal::SIGQUIT,
];

/// Stop requests to crontap-run itself (SIGTERM, SIGINT): the one record of whether it was
/// told to stop.
///
/// A signal handler sets it, so a request is kept whichever part of crontap-run is busy when
/// it arrives: the supervisor between two attempts, the output still draining, the ping.
/// The run makes one at start-up and hands it to the [`Supervisor`](super::supervise::Supervisor),
/// which reports what it saw in each finished attempt and each pause, and to the report,
/// which shortens its budget if a request arrives while it is sending.
#[derive(Clone)]
pub struct StopRequests(Arc<AtomicUsize>);

impl StopRequests {
    /// Starts recording stop requests. Signals that crontap-run was started with ignored stay
    /// ignored: whoever started it chose that nothing should react to them.
    pub fn watch() -> StopRequests {
        let received = Arc::new(AtomicUsize::new(0));
        for sig in STOP_SIGNALS.into_iter().filter(|s| !inherited_ignored(*s)) {
            let flag = Arc::clone(&received);
            if let Err(err) = signal_hook::flag::register_usize(sig as i32, flag, sig as usize) {
                tracing::debug!(%err, signal = sig.as_str(), "cannot record stop requests");
            }
        }
        StopRequests(received)
    }

    /// A record no signal sets, for tests of the parts that read one.
    #[cfg(test)]
    pub fn unwatched() -> StopRequests {
        StopRequests(Arc::new(AtomicUsize::new(0)))
    }

    /// The stop signal received so far, if any.
    pub fn received(&self) -> Option<Signal> {
        match self.0.load(Ordering::SeqCst) {
            0 => None,
            n => Signal::try_from(n as i32).ok(),
        }
    }

    /// Resolves when crontap-run has been told to stop, including before the call; never,
    /// if no stop signal can be watched.
    pub async fn requested(&self) -> Signal {
        self.first_of(&STOP_SIGNALS).await
    }

    /// Resolves when crontap-run receives one of `signals` (those it was not started with
    /// ignored), or at once if it was already told to stop; never, if none can be watched.
    pub async fn first_of(&self, signals: &[Signal]) -> Signal {
        use tokio::signal::unix::{SignalKind, signal};
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        for &sig in signals.iter().filter(|s| !inherited_ignored(**s)) {
            if let Ok(mut stream) = signal(SignalKind::from_raw(sig as i32)) {
                let tx = tx.clone();
                tokio::spawn(async move {
                    if stream.recv().await.is_some() {
                        let _ = tx.send(sig);
                    }
                });
            }
        }
        drop(tx);
        // Checked after the streams exist, so a signal cannot slip between the two.
        if let Some(sig) = self.received() {
            return sig;
        }
        match rx.recv().await {
            Some(sig) => sig,
            None => std::future::pending().await,
        }
    }
}

/// Signals ignored when crontap-run started (bit n for signal n).
static INHERITED_IGNORED: AtomicU64 = AtomicU64::new(0);
/// Signals blocked when crontap-run started (bit n for signal n).
static INHERITED_BLOCKED: AtomicU64 = AtomicU64::new(0);
static RECORDED: AtomicBool = AtomicBool::new(false);

/// Records the signal dispositions and mask crontap-run inherited. The binary runs this from
/// `.init_array`, before the Rust runtime sets SIGPIPE to ignored; it is also safe to call
/// later (it then records only the first call's view).
pub extern "C" fn record_inherited() {
    if RECORDED.swap(true, Ordering::SeqCst) {
        return;
    }
    let mut ignored = 0u64;
    let mut blocked = 0u64;
    // SAFETY: querying dispositions and the mask with null "new" arguments changes nothing.
    unsafe {
        let mut mask: libc::sigset_t = std::mem::zeroed();
        let have_mask = libc::pthread_sigmask(libc::SIG_BLOCK, std::ptr::null(), &mut mask) == 0;
        for sig in 1..=libc::SIGRTMAX().min(63) {
            let mut action: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(sig, std::ptr::null(), &mut action) == 0
                && action.sa_sigaction == libc::SIG_IGN
            {
                ignored |= 1 << sig;
            }
            if have_mask && libc::sigismember(&mask, sig) == 1 {
                blocked |= 1 << sig;
            }
        }
    }
    INHERITED_IGNORED.store(ignored, Ordering::SeqCst);
    INHERITED_BLOCKED.store(blocked, Ordering::SeqCst);
}

/// Whether `signal` was ignored when crontap-run started; such signals are not forwarded
/// (whoever started crontap-run chose that nothing should react to them).
pub fn inherited_ignored(signal: Signal) -> bool {
    INHERITED_IGNORED.load(Ordering::SeqCst) & (1 << signal as i32) != 0
}

/// The inherited state, copied out so that the child can restore it between fork and exec.
#[derive(Clone, Copy)]
pub struct Inherited {
    ignored: u64,
    blocked: u64,
}

impl Inherited {
    pub fn get() -> Inherited {
        record_inherited();
        Inherited {
            ignored: INHERITED_IGNORED.load(Ordering::SeqCst),
            blocked: INHERITED_BLOCKED.load(Ordering::SeqCst),
        }
    }

    /// Restores the inherited dispositions and mask. Runs in the child between fork and
    /// exec, so it only makes async-signal-safe calls. Handlers crontap-run installed are
    /// reset by exec itself; what is left is to ignore again what was ignored, to give
    /// SIGPIPE back its default unless it was ignored, and to set the mask.
    pub fn restore_in_child(&self) -> std::io::Result<()> {
        // SAFETY: signal, sigemptyset, sigaddset and sigprocmask are async-signal-safe.
        unsafe {
            for sig in 1..=libc::SIGRTMAX().min(63) {
                if self.ignored & (1 << sig) != 0 {
                    libc::signal(sig, libc::SIG_IGN);
                } else if sig == libc::SIGPIPE {
                    libc::signal(sig, libc::SIG_DFL);
                }
            }
            let mut mask: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut mask);
            for sig in 1..=libc::SIGRTMAX().min(63) {
                if self.blocked & (1 << sig) != 0 {
                    libc::sigaddset(&mut mask, sig);
                }
            }
            if libc::sigprocmask(libc::SIG_SETMASK, &mask, std::ptr::null_mut()) != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        Ok(())
    }
}
