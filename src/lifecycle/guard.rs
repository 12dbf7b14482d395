//! What happens when crontap-run itself fails with a bug (a panic): the run still ends
//! once, the command's status stands, and the heartbeat hears about it exactly once.
//!
//! The release build aborts on a panic (unwinding would cost the static binary 438 KB,
//! past its bound), so the hook installed here never returns. It prints one line naming
//! where crontap-run failed (never the panic's message, which may quote the job's output),
//! does the steps of the end no one has claimed, and exits with 125 until an attempt has
//! ended (a job holding state is then killed by its lifeline), then with the verdict's.
//!
//! Each step of the end is claimed once ([`begin`]), by the run's thread or the hook, so a
//! step that panicked is never tried again. The report is claimed as it is handed over
//! ([`handing_over`]): one being built is sent plain, one handed over never again. What the
//! run holds in the state store is left as a killed crontap-run leaves it.
//!
//! The first panic takes the end over; a later one stops its thread. A panic on another
//! thread (an output copy, the admission thread) first waits for the step the run's thread
//! is doing, which then stops for good. A panic on a thread whose work the run can do
//! without (the start ping, [`side_task`]) abandons that work only.

use std::cell::{Cell, RefCell};
use std::io::Write;
use std::panic::PanicHookInfo;
use std::process::exit;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering::SeqCst};
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError, TryLockError};
use std::thread::ThreadId;
use std::time::{Duration, Instant};

use crate::lifecycle::verdict::{RunEnd, Step, Verdict};
use crate::report::Delivered;
use crate::run::outcome::OWN_ERROR;

/// Does the steps of the end no one has claimed, with what the report step delivered.
pub type Finish = Box<dyn Fn(&Verdict, Delivered) + Send + Sync>;

/// How far the run has come: an attempt of the command may be running, or an attempt (or
/// the run) has ended with a verdict.
#[derive(Clone)]
enum Progress {
    NotStarted,
    Running,
    Settled(Verdict),
}

/// The run's end, its own thread, and how long a report may take.
struct Run(Finish, ThreadId, Duration);

static RUN: OnceLock<Run> = OnceLock::new();
static PROGRESS: Mutex<(Progress, Delivered)> = Mutex::new((Progress::NotStarted, Delivered::NONE));
/// Held by the run's own thread while it does a step of the end.
static STEP: Mutex<()> = Mutex::new(());
/// The steps of the end claimed, one bit each.
static CLAIMED: AtomicU8 = AtomicU8::new(0);
static TAKEN_OVER: AtomicBool = AtomicBool::new(false);
thread_local! {
    /// On the hook's thread finishing the end: the status it exits with.
    static FINISHING: Cell<Option<u8>> = const { Cell::new(None) };
    static SIDE_TASK: RefCell<Option<SideTask>> = const { RefCell::new(None) };
}
type SideTask = (&'static str, Box<dyn FnOnce()>);

/// Installs the hook for a run whose end is done on this thread; `finish` does what is left
/// of it, and a report may take `budget`.
pub fn install(finish: Finish, budget: Duration) {
    let _ = RUN.set(Run(finish, std::thread::current().id(), budget));
    std::panic::set_hook(Box::new(on_panic));
}

/// An attempt of the command has been spawned.
pub fn command_running() {
    tell(Progress::Running);
}

/// An attempt, or the whole run, has ended with `verdict`.
pub fn settled(verdict: &Verdict) {
    crate::run::memory::settled(verdict.exit);
    tell(Progress::Settled(verdict.clone()));
}

fn tell(progress: Progress) {
    still_ours();
    lock(&PROGRESS).0 = progress;
}

/// Claims `step` of the end: `None` if it was already. The run's own thread holds what is
/// returned while it does the step, and stops here for good once the end is taken over.
pub fn begin(step: Step) -> Option<Option<MutexGuard<'static, ()>>> {
    let finishing = FINISHING.get().is_some();
    let held = (!finishing).then(|| lock(&STEP));
    if !finishing && TAKEN_OVER.load(SeqCst) {
        drop(held);
        park_for_good();
    }
    let bit = 1 << step as u8;
    let ours = match step {
        // Claimed as it is handed over; the hook skips one that was.
        Step::Report => !finishing || CLAIMED.load(SeqCst) & bit == 0,
        _ => CLAIMED.fetch_or(bit, SeqCst) & bit == 0,
    };
    ours.then_some(held)
}

/// The report is about to be handed over (to the network, or printed): whether this side
/// may. Exactly one side ever does; the run's own thread, coming second, stops for good.
pub fn handing_over() -> bool {
    let bit = 1 << Step::Report as u8;
    let first = CLAIMED.fetch_or(bit, SeqCst) & bit == 0;
    if !first && FINISHING.get().is_none() {
        park_for_good();
    }
    first
}

/// The report step is done: what it delivered goes into history and metrics.
pub fn reported(done: &Delivered) {
    lock(&PROGRESS).1 = done.clone();
}

/// Stops the run's own thread for good if the hook has taken the end over.
pub fn still_ours() {
    if TAKEN_OVER.load(SeqCst) {
        park_for_good();
    }
}

/// This thread does `what`, work the run can do without (the start ping): a panic on it
/// runs `abandon` and stops this thread only, and the run goes on as if the work had failed.
pub fn side_task(what: &'static str, abandon: Box<dyn FnOnce()>) {
    SIDE_TASK.set(Some((what, abandon)));
}

fn on_panic(info: &PanicHookInfo<'_>) {
    if let Some((what, abandon)) = SIDE_TASK.take() {
        say(info, format_args!("; {what} is abandoned, the run goes on"));
        abandon();
        park_for_good();
    }
    if let Some(status) = FINISHING.get() {
        // The hook's own end failed: exit as the end would have.
        say(info, format_args!("; exit {status}"));
        exit(i32::from(status));
    }
    if TAKEN_OVER.swap(true, SeqCst) {
        // Another panic's hook has the end and exits once it is done.
        say(info, format_args!(""));
        park_for_good();
    }
    let Some(Run(finish, owner, budget)) = RUN.get() else {
        say(info, format_args!("; exit {OWN_ERROR}"));
        exit(i32::from(OWN_ERROR));
    };
    // Wait for the step the run's own thread is doing, if that is not this thread (at most
    // the ping budget and a little more: it may be waiting for this one).
    let deadline = Instant::now() + *budget + Duration::from_secs(5);
    while std::thread::current().id() != *owner
        && matches!(STEP.try_lock(), Err(TryLockError::WouldBlock))
        && Instant::now() < deadline
    {
        std::thread::sleep(Duration::from_millis(5));
    }
    let (progress, delivered) = lock(&PROGRESS).clone();
    let verdict = match progress {
        Progress::Settled(verdict) => verdict,
        before => Verdict::of(&RunEnd::Panicked {
            command_started: matches!(before, Progress::Running),
        }),
    };
    let status = verdict.exit;
    match verdict.command_status {
        true => say(info, format_args!("; the command's exit status stands")),
        false => say(info, format_args!("; exit {status}")),
    }
    // On a thread of its own, as the panic may have come from inside a runtime; where no
    // thread can be had, here.
    let finishing = || {
        FINISHING.set(Some(status));
        finish(&verdict, delivered.clone());
    };
    let finisher = std::thread::Builder::new().name("panic-guard".into());
    if std::thread::scope(|s| finisher.spawn_scoped(s, finishing).map(|t| t.join())).is_err() {
        finishing();
    }
    exit(i32::from(status))
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One line on stderr, naming where (one that cannot be written is no reason to panic).
fn say(info: &PanicHookInfo<'_>, then: std::fmt::Arguments<'_>) {
    let at = info
        .location()
        .map(|l| format!(" at {}:{}", l.file(), l.line()));
    let at = at.unwrap_or_default();
    let _ = writeln!(std::io::stderr(), "crontap-run: internal error{at}{then}");
}

fn park_for_good() -> ! {
    loop {
        std::thread::park();
    }
}
