//! Signals: which ones crontap-run forwards to the job and why, and the signal state the job
//! inherits.
//!
//! crontap-run stands between the job and whoever started it (a shell, cron, systemd,
//! Kubernetes). Signals meant for the job arrive at crontap-run, so it passes them on to the
//! job's whole process group. The job must also start with the signal state crontap-run was
//! given, not the one crontap-run runs with: the Rust runtime ignores SIGPIPE, and handlers
//! installed here would otherwise replace dispositions the caller chose to ignore (`nohup`
//! ignores SIGHUP; a shell ignores SIGINT for background jobs).

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use std::os::fd::OwnedFd;

use nix::fcntl::OFlag;
use nix::sys::signal::{SigSet, SigmaskHow, Signal, pthread_sigmask};
use tokio::net::unix::pipe;

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

/// Signals that tell crontap-run itself to stop: a run that got one while its command ran is
/// reported as stopped, never as a success, and the report gets only the shutdown budget.
/// SIGQUIT counts (Ctrl-\, `kill -QUIT`: quit, with a dump); SIGHUP does not (it often means
/// "reload").
const STOP_SIGNALS: [Signal; 3] = [Signal::SIGTERM, Signal::SIGINT, Signal::SIGQUIT];

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

/// Signal numbers a [`Mark`] has room for (Linux's are 1 to 64).
const SLOTS: usize = 65;

/// The one record of the signals crontap-run received during this run.
///
/// Handlers for every forwarded signal ([`FORWARDED`]) are in place from the first moment of
/// the run, so no signal takes its default action (killing crontap-run, or a core dump for
/// SIGQUIT) and none is lost, whichever part of crontap-run is busy when it arrives: state
/// admission, `--jitter`, an attempt, the wait between attempts, the ping. Each arrival is
/// counted; whoever acts on signals keeps a [`Mark`] of what it has seen and takes the
/// arrivals after it ([`SignalLog::take_since`]), so each signal is acted on exactly once.
/// The first stop request (SIGTERM, SIGINT, SIGQUIT) is kept too: the run's report then gets
/// only the shutdown budget.
///
/// Each signal has this one handler, registered once: from the supervisor's start the log
/// counts SIGCHLD too, and every arrival then wakes the supervisor's event loop ([`Wake`]),
/// so nothing registers a second handler (tokio's signal streams) for a wake-up.
///
/// The run makes one at start-up. Whether an attempt was stopped is decided once, by the
/// supervisor, as it passes a stop request on
/// ([`Finished::stopped`](super::finished::Finished)); a pause reports what ended it.
#[derive(Clone)]
pub struct SignalLog(Arc<Counts>);

struct Counts {
    arrivals: [AtomicU32; SLOTS],
    first_stop: AtomicUsize,
    /// The write end of the supervisor's wake-up ([`SignalLog::watch_children`]): each
    /// handler writes a byte to it after counting its arrival. Unset until a supervisor
    /// exists.
    wake: OnceLock<OwnedFd>,
}

impl Counts {
    fn new() -> Arc<Counts> {
        Arc::new(Counts {
            arrivals: std::array::from_fn(|_| AtomicU32::new(0)),
            first_stop: AtomicUsize::new(0),
            wake: OnceLock::new(),
        })
    }
}

/// How many of each signal someone has seen.
#[derive(Clone, Copy)]
pub struct Mark([u32; SLOTS]);

impl Mark {
    /// Nothing seen yet.
    pub const START: Mark = Mark([0; SLOTS]);
}

/// Installs the one handler of `sig`: it counts the arrival, keeps the first stop request,
/// then wakes the supervisor, in that order (see [`Wake`]). Every signal crontap-run
/// watches is installed here, once: the log is also the event loop's source of wake-ups,
/// so no second handler (tokio's) is registered for any of them.
fn count_arrivals(counts: &Arc<Counts>, sig: Signal) -> std::io::Result<()> {
    let counts = Arc::clone(counts);
    // SAFETY: the action makes only atomic operations and, through the `OnceLock` already
    // set or not (an atomic load), one `write` to a non-blocking pipe, all
    // async-signal-safe (signal-hook keeps `errno` as it was around the action).
    let registered = unsafe {
        signal_hook::low_level::register(sig as i32, move || {
            counts.arrivals[sig as usize].fetch_add(1, Ordering::SeqCst);
            if is_stop_request(sig) {
                let _ = counts.first_stop.compare_exchange(
                    0,
                    sig as usize,
                    Ordering::SeqCst,
                    Ordering::SeqCst,
                );
            }
            if let Some(wake) = counts.wake.get() {
                // Fails only when the pipe is full, so already readable, or once the
                // supervisor is gone with the read end (EPIPE: crontap-run ignores SIGPIPE).
                let _ = nix::unistd::write(wake, &[1]);
            }
        })
    };
    registered.map(drop)
}

impl SignalLog {
    /// Starts recording. Signals that crontap-run was started with ignored stay ignored:
    /// whoever started it chose that nothing should react to them. Forwarded signals and
    /// SIGCHLD the caller had blocked are unblocked for crontap-run (the job gets the
    /// caller's mask).
    pub fn install() -> SignalLog {
        let counts = Counts::new();
        let mut unblock = SigSet::empty();
        for &(sig, _why) in FORWARDED.iter().filter(|(s, _)| !inherited_ignored(*s)) {
            match count_arrivals(&counts, sig) {
                Ok(()) => unblock.add(sig),
                Err(err) => tracing::debug!(%err, signal = sig.as_str(), "cannot watch signal"),
            }
        }
        // crontap-run learns that its command ended from SIGCHLD: a caller that blocked it
        // would leave crontap-run waiting for ever (the job still gets the caller's mask).
        unblock.add(Signal::SIGCHLD);
        let _ = pthread_sigmask(SigmaskHow::SIG_UNBLOCK, Some(&unblock), None);
        SignalLog(counts)
    }

    /// Counts SIGCHLD too, and makes the wake-up that every handler of this log writes to
    /// after counting: returns its read end, for [`Wake::new`]. For the supervisor, which
    /// calls it once, before it spawns anything, so that no child's exit can go unseen: an
    /// exit before this call has no child to come from, and one after it is counted and
    /// wakes the event loop, whenever that loop starts to wait. A pipe (two descriptors),
    /// kept to the end of the run.
    pub fn watch_children(&self) -> std::io::Result<OwnedFd> {
        let (read, write) = nix::unistd::pipe2(OFlag::O_CLOEXEC | OFlag::O_NONBLOCK)?;
        // Set before SIGCHLD is counted, so that its first arrival already wakes.
        if self.0.wake.set(write).is_err() {
            return Err(std::io::Error::other(
                "the signal log has a supervisor already",
            ));
        }
        count_arrivals(&self.0, Signal::SIGCHLD)?;
        Ok(read)
    }

    /// Whether SIGCHLD arrived since `mark` (once [`SignalLog::watch_children`] counts it),
    /// with `mark` moved past it.
    pub fn children_since(&self, mark: &mut Mark) -> bool {
        let slot = Signal::SIGCHLD as usize;
        let now = self.0.arrivals[slot].load(Ordering::SeqCst);
        let changed = now != mark.0[slot];
        mark.0[slot] = now;
        changed
    }

    /// A record no signal reaches, for tests of the parts that read one.
    #[cfg(test)]
    pub fn unwatched() -> SignalLog {
        SignalLog(Counts::new())
    }

    /// The first stop request crontap-run received, if any.
    pub fn stop_requested(&self) -> Option<Signal> {
        match self.0.first_stop.load(Ordering::SeqCst) {
            0 => None,
            n => Signal::try_from(n as i32).ok(),
        }
    }

    /// The signals that arrived since `mark`, each as often as it arrived, and `mark` moved
    /// past them.
    pub fn take_since(&self, mark: &mut Mark) -> Vec<Signal> {
        let mut new = Vec::new();
        for &(sig, _) in FORWARDED {
            let slot = sig as usize;
            let now = self.0.arrivals[slot].load(Ordering::SeqCst);
            for _ in mark.0[slot]..now {
                new.push(sig);
            }
            mark.0[slot] = now;
        }
        new
    }

    /// The first signal that ends a job ([`TERMINATION`]) among those since `mark`, with
    /// `mark` moved past all of them. The others (SIGUSR1, SIGUSR2, SIGWINCH) are meant for
    /// a running job; with none running they are dropped.
    pub fn ending_since(&self, mark: &mut Mark) -> Option<Signal> {
        let mut ending = None;
        for sig in self.take_since(mark) {
            if is_termination(sig) {
                ending = ending.or(Some(sig));
            } else {
                tracing::debug!(
                    signal = sig.as_str(),
                    "no command is running; signal dropped"
                );
            }
        }
        ending
    }

    /// Waits up to `limit` for a signal that ends a job to arrive after `mark`; returns it.
    /// For the waits before the command starts, which have no event loop: checks every few
    /// milliseconds.
    pub fn wait_ending(&self, mark: &mut Mark, limit: Duration) -> Option<Signal> {
        let deadline = std::time::Instant::now() + limit;
        loop {
            if let Some(sig) = self.ending_since(mark) {
                return Some(sig);
            }
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                return None;
            }
            std::thread::sleep(left.min(POLL));
        }
    }

    /// Resolves when crontap-run has been told to stop, including before the call. For the
    /// pings, on runtimes of their own while the supervisor may be waiting on the log's
    /// wake-up: it looks every [`POLL`] rather than take that wake-up from the supervisor
    /// (a ping mostly ends before the first look; the shutdown budget is 5 s).
    pub async fn requested(&self) -> Signal {
        loop {
            if let Some(sig) = self.stop_requested() {
                return sig;
            }
            tokio::time::sleep(POLL).await;
        }
    }
}

/// How often [`SignalLog::wait_ending`] and [`SignalLog::requested`] look.
const POLL: Duration = Duration::from_millis(10);

/// The supervisor's wake-up: readable once any signal the log counts has arrived since
/// the last [`Wake::recv`], forwarded signals and SIGCHLD alike. It is a pipe the log's
/// handlers write a byte to after counting, and `recv` empties it before its caller reads
/// the counts; so an arrival is either counted before the pipe was emptied, and read by
/// the caller, or its byte comes after and wakes the next `recv`: none is missed. The
/// bytes of arrivals already read make at most one more, empty, round.
pub struct Wake(pipe::Receiver);

impl Wake {
    /// Watches `read`, the end [`SignalLog::watch_children`] returned, on the current
    /// tokio runtime.
    pub fn new(read: OwnedFd) -> std::io::Result<Wake> {
        // Unchecked: it is the read end of a pipe made non-blocking.
        pipe::Receiver::from_owned_fd_unchecked(read).map(Wake)
    }

    /// Waits until a counted signal arrived since the last call (or before the first), and
    /// empties the pipe; the caller then reads the log. An error means it cannot be waited
    /// on.
    pub async fn recv(&self) -> std::io::Result<()> {
        let mut bytes = [0u8; 64];
        loop {
            self.0.readable().await?;
            let mut woke = false;
            loop {
                match self.0.try_read(&mut bytes) {
                    Ok(0) => return Err(std::io::ErrorKind::UnexpectedEof.into()),
                    Ok(_) => woke = true,
                    // Empty: readiness is cleared, and the next byte sets it again.
                    Err(err) if err.kind() == std::io::ErrorKind::WouldBlock => break,
                    Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(err) => return Err(err),
                }
            }
            if woke {
                return Ok(());
            }
        }
    }
}

/// Signals ignored when crontap-run started (bit n-1 for signal n, as the kernel's sets).
static INHERITED_IGNORED: AtomicU64 = AtomicU64::new(0);
/// Signals blocked when crontap-run started (bit n-1 for signal n, as the kernel's sets).
static INHERITED_BLOCKED: AtomicU64 = AtomicU64::new(0);
static RECORDED: AtomicBool = AtomicBool::new(false);

/// The bit of signal `sig` in a kernel signal set (signal 1 is bit 0); `None` past the
/// set's 64 bits (Linux has 64 signals on every architecture crontap-run is built for).
fn bit(sig: i32) -> Option<u64> {
    1u64.checked_shl(u32::try_from(sig).ok()?.checked_sub(1)?)
}

/// Every signal number, 1 to the system's SIGRTMAX.
fn every_signal() -> std::ops::RangeInclusive<i32> {
    1..=libc::SIGRTMAX()
}

/// The kernel's view of signal dispositions and the mask, through the system calls rather
/// than the C library: glibc and musl refuse to read or set the signals they reserve for
/// themselves (32 and 33, or 32 to 34), and hide them from masks, but the job must get
/// those as they were too. Only async-signal-safe calls: [`Inherited::restore_in_child`]
/// runs between fork and exec.
mod kernel {
    /// `struct sigaction` as the kernel's `rt_sigaction` reads it on x86_64 and arm64:
    /// handler, flags, restorer, mask.
    #[repr(C)]
    pub struct Action {
        pub handler: libc::sighandler_t,
        pub flags: libc::c_ulong,
        pub restorer: usize,
        pub mask: u64,
    }

    /// Size of the kernel's signal set.
    const SET: usize = std::mem::size_of::<u64>();

    /// Whether `sig` is ignored.
    pub fn ignored(sig: i32) -> bool {
        let mut old = Action {
            handler: 0,
            flags: 0,
            restorer: 0,
            mask: 0,
        };
        // SAFETY: a null new action only reads the disposition into `old`.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_rt_sigaction,
                sig,
                std::ptr::null::<Action>(),
                &mut old,
                SET,
            )
        };
        rc == 0 && old.handler == libc::SIG_IGN
    }

    /// Sets `sig`'s disposition to `handler` (`SIG_IGN` or `SIG_DFL`, no code).
    pub fn set(sig: i32, handler: libc::sighandler_t) {
        let new = Action {
            handler,
            flags: 0,
            restorer: 0,
            mask: 0,
        };
        // SAFETY: SIG_IGN and SIG_DFL run no code, so no restorer is needed.
        unsafe {
            libc::syscall(
                libc::SYS_rt_sigaction,
                sig,
                &new,
                std::ptr::null_mut::<Action>(),
                SET,
            );
        }
    }

    /// The calling thread's mask.
    pub fn mask() -> Option<u64> {
        let mut old = 0u64;
        // SAFETY: a null new set only reads the mask into `old`.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_rt_sigprocmask,
                libc::SIG_BLOCK,
                std::ptr::null::<u64>(),
                &mut old,
                SET,
            )
        };
        (rc == 0).then_some(old)
    }

    /// Sets the calling thread's mask.
    pub fn set_mask(mask: u64) -> std::io::Result<()> {
        // SAFETY: the kernel copies the set; nothing is kept.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_rt_sigprocmask,
                libc::SIG_SETMASK,
                &mask,
                std::ptr::null_mut::<u64>(),
                SET,
            )
        };
        match rc {
            0 => Ok(()),
            _ => Err(std::io::Error::last_os_error()),
        }
    }
}

/// Records the signal dispositions and mask crontap-run inherited, for every signal 1 to
/// SIGRTMAX. The binary runs this from `.init_array`, before the Rust runtime sets SIGPIPE
/// to ignored; it is also safe to call later (it then records only the first call's view).
pub extern "C" fn record_inherited() {
    if RECORDED.swap(true, Ordering::SeqCst) {
        return;
    }
    let mut ignored = 0u64;
    for sig in every_signal() {
        if let Some(bit) = bit(sig)
            && kernel::ignored(sig)
        {
            ignored |= bit;
        }
    }
    INHERITED_IGNORED.store(ignored, Ordering::SeqCst);
    INHERITED_BLOCKED.store(kernel::mask().unwrap_or(0), Ordering::SeqCst);
}

/// Whether `signal` was ignored when crontap-run started; such signals are not forwarded
/// (whoever started crontap-run chose that nothing should react to them).
pub fn inherited_ignored(signal: Signal) -> bool {
    bit(signal as i32).is_some_and(|bit| INHERITED_IGNORED.load(Ordering::SeqCst) & bit != 0)
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
        for sig in every_signal() {
            let Some(bit) = bit(sig) else { break };
            if self.ignored & bit != 0 {
                kernel::set(sig, libc::SIG_IGN);
            } else if sig == libc::SIGPIPE {
                kernel::set(sig, libc::SIG_DFL);
            }
        }
        kernel::set_mask(self.blocked)
    }
}
