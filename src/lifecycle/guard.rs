//! What happens when crontap-run itself fails with a bug (a panic): the run still ends
//! once, the command's status stands, and the heartbeat hears about it exactly once.
//!
//! A panic anywhere in crontap-run runs the hook installed here, whatever the build's panic
//! strategy (the release build aborts). The hook never returns: it prints one line naming
//! where crontap-run failed (not the panic's message, which may quote the job's output),
//! finishes the run's end ([`end::finish_from`]) from where it stopped, and exits with
//! - 125 before the command started (`not run: crontap-run failed …`), and while it runs
//!   (crontap-run can no longer supervise it; a job holding state is killed by its lifeline);
//! - the verdict's status once the run's end has begun: the command's own once it ran, so a
//!   bug in the summary, the scrubber, the report, history or metrics cannot replace it.
//!
//! The end tells the guard each step as it starts and when the report is on its way, so
//! the hook goes on from the step after the one that failed: a report being built is sent
//! plain (without the command's output), one already on its way is never sent again, and a
//! history line or metrics file that failed is not tried twice.
//!
//! In debug builds (the tests), `CRONTAP_FAULT=<point>` (read by `config`) makes crontap-run
//! panic at a named point, so the tests can prove all this; release builds have no such
//! switch.

use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use crate::lifecycle::end::{self, Detail, Effects, RunEnd, Step, Verdict};
use crate::report::Delivered;
use crate::run::outcome::OWN_ERROR;

/// How far the run has come, and what the hook does from there.
enum Phase {
    BeforeStart,
    Running,
    /// The run's end is under way, at `step`.
    Concluding {
        verdict: Verdict,
        step: Step,
        /// The report has been handed to the network (or printed): never again.
        sending: bool,
        delivered: Option<Delivered>,
    },
    /// Every step of the end is done.
    Done {
        exit: u8,
    },
}

struct Guard {
    phase: Phase,
    effects: Arc<Effects>,
}

static GUARD: Mutex<Option<Guard>> = Mutex::new(None);
/// The fault point the tests asked for (debug builds only).
static FAULT: OnceLock<String> = OnceLock::new();
/// The status the hook exits with once it has taken over: a second panic while it finishes
/// the end exits with it too. `NONE` until then.
static EXIT: AtomicU16 = AtomicU16::new(NONE);
const NONE: u16 = u16::MAX;

/// Installs the hook for a run whose end goes to `effects`; `fault` is the test fault
/// point, if any (always `None` in a release build).
pub fn install(effects: Arc<Effects>, fault: Option<String>) {
    if let Some(point) = fault {
        let _ = FAULT.set(point);
    }
    set(Some(Guard {
        phase: Phase::BeforeStart,
        effects,
    }));
    std::panic::set_hook(Box::new(on_panic));
}

/// The command is starting (or starting again, for a retry).
pub fn command_running() {
    with(|phase| *phase = Phase::Running);
}

/// The run's end has begun, with this verdict.
pub fn concluding(verdict: &Verdict) {
    with(|phase| {
        *phase = Phase::Concluding {
            verdict: verdict.clone(),
            step: Step::State,
            sending: false,
            delivered: None,
        }
    });
}

/// The end's step `now` begins.
pub fn at(now: Step) {
    with(|phase| {
        if let Phase::Concluding { step, .. } = phase {
            *step = now;
        }
    });
}

/// The report is being handed over: from here on it is never sent again.
pub fn sending() {
    with(|phase| {
        if let Phase::Concluding { sending, .. } = phase {
            *sending = true;
        }
    });
}

/// The report step is done.
pub fn reported(done: &Delivered) {
    with(|phase| {
        if let Phase::Concluding { delivered, .. } = phase {
            *delivered = Some(done.clone());
        }
    });
}

/// Every step of the end is done.
pub fn done() {
    with(|phase| {
        if let Phase::Concluding { verdict, .. } = phase {
            *phase = Phase::Done { exit: verdict.exit };
        }
    });
}

fn set(guard: Option<Guard>) {
    *GUARD.lock().unwrap_or_else(|p| p.into_inner()) = guard;
}

fn with(change: impl FnOnce(&mut Phase)) {
    if let Some(guard) = GUARD.lock().unwrap_or_else(|p| p.into_inner()).as_mut() {
        change(&mut guard.phase);
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
        let fresh = |command_started| {
            let verdict = Verdict::of(&RunEnd::Panicked { command_started });
            Resume {
                verdict,
                from: Some(Step::State),
                delivered: Delivered::NONE,
            }
        };
        match phase {
            Phase::BeforeStart => fresh(false),
            Phase::Running => fresh(true),
            Phase::Concluding {
                verdict,
                step,
                sending,
                delivered,
            } => {
                let from = match step {
                    Step::State => Some(Step::Report),
                    // A report not yet on its way is sent plain.
                    Step::Report if !sending => Some(Step::Report),
                    Step::Report => Some(Step::History),
                    Step::History => Some(Step::Metrics),
                    Step::Metrics => None,
                };
                let delivered = delivered.unwrap_or(Delivered::NONE);
                Resume {
                    verdict,
                    from,
                    delivered,
                }
            }
            Phase::Done { exit } => Resume {
                verdict: Verdict {
                    exit,
                    ..Verdict::of(&RunEnd::Panicked {
                        command_started: true,
                    })
                },
                from: None,
                delivered: Delivered::NONE,
            },
        }
    }
}

fn on_panic(info: &std::panic::PanicHookInfo<'_>) {
    let place = info
        .location()
        .map(|l| format!(" at {}:{}", l.file(), l.line()))
        .unwrap_or_default();
    // try_lock: the panic may have happened while the guard was held. Taking the guard
    // also keeps the end's steps below from telling it anything.
    let Some(Guard { phase, effects }) = GUARD.try_lock().ok().and_then(|mut g| g.take()) else {
        // A second panic, while the first one's hook finishes the end, or one before the
        // run began.
        let exit = match EXIT.load(Ordering::SeqCst) {
            NONE => OWN_ERROR,
            taken => taken as u8,
        };
        eprintln!("crontap-run: internal error{place}; exit {exit}");
        std::process::exit(i32::from(exit));
    };
    let Resume {
        verdict,
        from,
        delivered,
    } = Resume::after(phase);
    let outcome = match verdict.command_status {
        true => "the command's exit status stands".to_owned(),
        false => format!("exit {}", verdict.exit),
    };
    eprintln!("crontap-run: internal error{place}; {outcome}");
    let exit = verdict.exit;
    EXIT.store(u16::from(exit), Ordering::SeqCst);
    if let Some(from) = from {
        // On a thread of its own: the panic may have come from inside a runtime.
        let finishing = std::thread::spawn(move || {
            let plain = Detail {
                tails: None,
                held: None,
            };
            end::finish_from(&effects, &verdict, from, plain, delivered)
        });
        let _ = finishing.join();
    }
    std::process::exit(i32::from(exit))
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
