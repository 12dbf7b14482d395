//! What happens when crontap-run itself fails with a bug (a panic): the run still ends
//! once, the command's status stands, and the heartbeat hears about it exactly once.
//!
//! A panic anywhere in crontap-run, on any thread, runs the hook installed here, whatever
//! the build's panic strategy (the release build aborts). The hook never returns: it prints
//! one line naming where crontap-run failed (not the panic's message, which may quote the
//! job's output), takes the run's end over, finishes it ([`end::finish_from`]) from where it
//! had come, and exits with
//! - 125 before the command started (`not run: crontap-run failed …`), and from its spawn
//!   until it has ended (crontap-run can no longer supervise it; a job holding state is
//!   killed by its lifeline);
//! - the command's own status once an attempt has ended (from before its output is
//!   drained), through the waits and set-up of any next attempt and the whole end: a bug in
//!   the summary, the scrubber, the report, history or metrics cannot replace it.
//!
//! The run's own thread tells the guard where it is: each attempt's start and end, and each
//! step of the end as it begins and when the report is handed over. So the hook goes on from
//! the step after the one that failed: held output (`--output on-failure`) is printed or
//! dropped as the verdict says, unless that step is the one that failed (never printed
//! twice), a report being built is sent plain (without the command's output), one already
//! handed over is never sent again, and a history line or metrics file that failed is not
//! tried twice. A panic is the process's death for the state store: what the run holds is
//! left as a killed crontap-run leaves it (the lock goes with the process, a lease runs
//! out).
//!
//! A panic on a thread whose work the run can do without (the start ping, see
//! [`side_task`]) abandons that work only: the thread stops and the run goes on.
//!
//! A panic on another thread (an output copy, the admission or reaper thread) must not race
//! the run's own thread to the end. The first panic marks the end as taken over; a later one
//! on any other thread only stops that thread. The run's thread does each step of the end
//! holding [`STEP`]; the hook waits for the step under way (for at most the ping budget and a
//! few seconds, since its holder may be waiting for the thread that panicked), and only then
//! reads where the run had come. From then on the run's thread stops for good when it next
//! begins a step or an attempt, and the report is claimed once ([`handing_over`]), so even a
//! step that outlasted the wait cannot send a second one.
//!
//! In debug builds (the tests), `CRONTAP_FAULT=<point>` (read by `config`) makes crontap-run
//! panic at a named point, so the tests can prove all this; release builds have no such
//! switch.

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicBool, AtomicU16, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::thread::ThreadId;
use std::time::{Duration, Instant};

use crate::lifecycle::end::{self, Detail, Driver, Effects, RunEnd, Step, Verdict};
use crate::report::Delivered;
use crate::run::outcome::OWN_ERROR;

/// How far the run has come, and what the hook does from there.
enum Phase {
    BeforeStart,
    /// An attempt of the command is running.
    Running,
    /// An attempt has ended with this verdict; the next one is not running yet.
    Ended(Verdict),
    /// The run's end is under way, at `step`.
    Concluding {
        verdict: Verdict,
        step: Step,
        /// The report has been handed over (to the network, or printed): never again.
        handed_over: bool,
        delivered: Option<Delivered>,
    },
    /// Every step of the end is done.
    Done(Verdict),
}

struct Guard {
    phase: Phase,
    effects: Arc<Effects>,
    /// The run's own thread.
    owner: ThreadId,
}

static GUARD: Mutex<Option<Guard>> = Mutex::new(None);
/// Held by the run's own thread while it does a step of the end.
static STEP: Mutex<()> = Mutex::new(());
/// The hook has taken the end over: the run's own thread does nothing more.
static TAKEN_OVER: AtomicBool = AtomicBool::new(false);
/// The report has been claimed for handing over, by the run's thread or the hook: whoever
/// comes second never sends it.
static REPORT_CLAIMED: AtomicBool = AtomicBool::new(false);
thread_local! {
    /// This thread is the hook's, finishing the end.
    static FINISHING: Cell<bool> = const { Cell::new(false) };
    /// This thread does work the run can do without: what it is, and what abandons it.
    static SIDE_TASK: RefCell<Option<SideTask>> = const { RefCell::new(None) };
}
/// Work the run can do without, as [`side_task`] names it: what it is, and what abandons it.
type SideTask = (&'static str, Box<dyn FnOnce()>);
/// The fault point the tests asked for (debug builds only).
static FAULT: OnceLock<String> = OnceLock::new();
/// The status the hook exits with once it has taken over: a second panic while it finishes
/// the end exits with it too. `NONE` until then.
static EXIT: AtomicU16 = AtomicU16::new(NONE);
const NONE: u16 = u16::MAX;

/// How long the hook waits for the guard's lock, and, beyond the ping budget, for a step of
/// the end under way on the run's thread.
const STEP_WAIT: Duration = Duration::from_secs(5);

/// Installs the hook for a run whose end goes to `effects`, done on this thread; `fault` is
/// the test fault point, if any (always `None` in a release build).
pub fn install(effects: Arc<Effects>, fault: Option<String>) {
    if let Some(point) = fault {
        let _ = FAULT.set(point);
    }
    *lock(&GUARD) = Some(Guard {
        phase: Phase::BeforeStart,
        effects,
        owner: std::thread::current().id(),
    });
    std::panic::set_hook(Box::new(on_panic));
}

/// An attempt of the command has been spawned.
pub fn command_running() {
    tell(|phase| *phase = Phase::Running);
    fault_point("command-running");
}

/// An attempt has ended with `verdict`.
pub fn command_ended(verdict: &Verdict) {
    tell(|phase| *phase = Phase::Ended(verdict.clone()));
}

/// The run's end has begun, with this verdict.
pub fn concluding(verdict: &Verdict) {
    tell(|phase| {
        *phase = Phase::Concluding {
            verdict: verdict.clone(),
            step: Step::State,
            handed_over: false,
            delivered: None,
        }
    });
}

/// The run's own thread begins step `now` of the end, and holds what is returned while it
/// does it.
pub fn begin(now: Step) -> MutexGuard<'static, ()> {
    let step = lock(&STEP);
    if TAKEN_OVER.load(Ordering::SeqCst) {
        // Let the hook have the step, and stop.
        drop(step);
        park_for_good();
    }
    record(|phase| {
        if let Phase::Concluding { step, .. } = phase {
            *step = now;
        }
    });
    step
}

/// The report is about to be handed over (to the network, or printed): whether this side
/// may. Exactly one side ever does, the run's own thread or the hook that took the end
/// over; the run's thread, coming second, stops for good.
pub fn handing_over() -> bool {
    if REPORT_CLAIMED.swap(true, Ordering::SeqCst) {
        if !FINISHING.get() {
            park_for_good();
        }
        return false;
    }
    record(|phase| {
        if let Phase::Concluding { handed_over, .. } = phase {
            *handed_over = true;
        }
    });
    true
}

/// The report step is done.
pub fn reported(done: &Delivered) {
    record(|phase| {
        if let Phase::Concluding { delivered, .. } = phase {
            *delivered = Some(done.clone());
        }
    });
}

/// Every step of the end is done.
pub fn done() {
    record(|phase| {
        if let Phase::Concluding { verdict, .. } = phase {
            *phase = Phase::Done(verdict.clone());
        }
    });
}

/// Stops the run's own thread for good if the hook has taken the end over.
pub fn still_ours() {
    if TAKEN_OVER.load(Ordering::SeqCst) {
        // The hook exits the process once it has finished the end.
        park_for_good();
    }
}

/// The run's own thread tells the guard where it is, between steps: it stops here if the
/// end was taken over.
fn tell(change: impl FnOnce(&mut Phase)) {
    still_ours();
    record(change);
}

/// The run's own thread records how the end goes, while doing a step (the hook waits for
/// the step) or once all are done: this never stops.
fn record(change: impl FnOnce(&mut Phase)) {
    if let Some(guard) = lock(&GUARD).as_mut() {
        change(&mut guard.phase);
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// `mutex`, waited for up to `limit`: the hook must not wait for ever on a lock whose
/// holder may be waiting for the thread that panicked.
fn lock_within<T>(mutex: &Mutex<T>, limit: Duration) -> Option<MutexGuard<'_, T>> {
    let deadline = Instant::now() + limit;
    loop {
        match mutex.try_lock() {
            Ok(held) => return Some(held),
            Err(std::sync::TryLockError::Poisoned(p)) => return Some(p.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) if Instant::now() >= deadline => {
                return None;
            }
            Err(std::sync::TryLockError::WouldBlock) => {
                std::thread::sleep(Duration::from_millis(5));
            }
        }
    }
}

/// Where the hook goes on from.
struct Resume {
    verdict: Verdict,
    /// The next step to do; `None`: nothing is left.
    from: Option<Step>,
    delivered: Delivered,
}

impl Resume {
    fn after(phase: Phase) -> Resume {
        let (verdict, from, delivered) = match phase {
            Phase::BeforeStart => (panicked(false), Some(Step::State), None),
            Phase::Running => (panicked(true), Some(Step::State), None),
            // What the attempt held in the state store is left as a process's death leaves
            // it (the guard has nothing to record it with); its held output goes as the
            // verdict says.
            Phase::Ended(verdict) => (verdict, Some(Step::Output), None),
            Phase::Concluding {
                verdict,
                step,
                handed_over,
                delivered,
            } => {
                let from = match step {
                    Step::State => Some(Step::Output),
                    // Held output is not replayed twice.
                    Step::Output => Some(Step::Report),
                    // A report not yet handed over is sent plain.
                    Step::Report if !handed_over && delivered.is_none() => Some(Step::Report),
                    Step::Report => Some(Step::History),
                    Step::History => Some(Step::Metrics),
                    Step::Metrics => None,
                };
                (verdict, from, delivered)
            }
            Phase::Done(verdict) => (verdict, None, None),
        };
        let delivered = delivered.unwrap_or(Delivered::NONE);
        Resume {
            verdict,
            from,
            delivered,
        }
    }
}

fn panicked(command_started: bool) -> Verdict {
    Verdict::of(&RunEnd::Panicked { command_started })
}

/// Takes the end over, once [`TAKEN_OVER`] is set: waits, on a thread other than the run's
/// own, for the step the run's thread is doing (within the ping budget and a few seconds,
/// after which it goes on without), then takes the guard.
fn take_over() -> Option<Guard> {
    let (owner, budget) = {
        let guard = lock_within(&GUARD, STEP_WAIT)?;
        let guard = guard.as_ref()?;
        let budget = guard.effects.reporter.policy.budget;
        (guard.owner, budget)
    };
    let _step = match std::thread::current().id() == owner {
        // The run's own thread panicked, in the middle of what it was doing (and may hold
        // the step): nothing else is under way.
        true => None,
        false => lock_within(&STEP, budget + STEP_WAIT),
    };
    lock_within(&GUARD, STEP_WAIT)?.take()
}

/// This thread does `what`, work the run can do without (the start ping): a panic on it
/// runs `abandon` and stops this thread only, and the run goes on as if the work had failed.
pub fn side_task(what: &'static str, abandon: Box<dyn FnOnce()>) {
    SIDE_TASK.set(Some((what, abandon)));
}

fn on_panic(info: &std::panic::PanicHookInfo<'_>) {
    let place = info
        .location()
        .map(|l| format!(" at {}:{}", l.file(), l.line()))
        .unwrap_or_default();
    if let Some((what, abandon)) = SIDE_TASK.take() {
        say(&format!(
            "internal error{place}; {what} is abandoned, the run goes on"
        ));
        abandon();
        park_for_good();
    }
    if FINISHING.get() {
        // The hook's own end failed: exit as the end would have.
        let exit = match EXIT.load(Ordering::SeqCst) {
            NONE => OWN_ERROR,
            taken => taken as u8,
        };
        say(&format!("internal error{place}; exit {exit}"));
        std::process::exit(i32::from(exit));
    }
    if TAKEN_OVER.swap(true, Ordering::SeqCst) {
        // Another panic's hook has the end and exits once it is done; this thread stops.
        say(&format!("internal error{place}"));
        park_for_good();
    }
    let Some(Guard { phase, effects, .. }) = take_over() else {
        say(&format!("internal error{place}; exit {OWN_ERROR}"));
        std::process::exit(i32::from(OWN_ERROR));
    };
    let Resume {
        verdict,
        from,
        delivered,
    } = Resume::after(phase);
    let exit = verdict.exit;
    EXIT.store(u16::from(exit), Ordering::SeqCst);
    match verdict.command_status {
        true => say(&format!(
            "internal error{place}; the command's exit status stands"
        )),
        false => say(&format!("internal error{place}; exit {exit}")),
    }
    if let Some(from) = from {
        let finish = move || {
            FINISHING.set(true);
            let plain = Detail {
                tails: None,
                held: None,
            };
            end::finish_from(&effects, &verdict, from, plain, delivered, Driver::Guard);
        };
        // On a thread of its own: the panic may have come from inside a runtime. Where no
        // thread can be had, here.
        let work = Arc::new(Mutex::new(Some(finish)));
        let theirs = Arc::clone(&work);
        let spawned = std::thread::Builder::new()
            .name("panic-guard".into())
            .spawn(move || lock(&theirs).take().map(|finish| finish()));
        match spawned {
            Ok(thread) => drop(thread.join()),
            Err(_) => drop(lock(&work).take().map(|finish| finish())),
        }
    }
    std::process::exit(i32::from(exit))
}

/// One line of crontap-run's own on stderr; a stderr that cannot be written is no reason
/// for another panic.
fn say(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "crontap-run: {line}");
}

fn park_for_good() -> ! {
    loop {
        std::thread::park();
    }
}

/// Panics here when the tests ask for it with `CRONTAP_FAULT=<point>`.
pub fn fault_point(point: &str) {
    if fault(point) {
        panic!("fault injected at {point} for a test");
    }
}

/// Whether the tests asked for a fault at `point`; never in a release build.
pub fn fault(point: &str) -> bool {
    cfg!(debug_assertions) && FAULT.get().is_some_and(|p| p == point)
}
