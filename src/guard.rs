//! What happens when crontap-run itself fails with a bug (a panic): the command's status
//! stands and the heartbeat still hears about it.
//!
//! A panic anywhere in crontap-run runs the hook installed here, whatever the build's panic
//! strategy (the release build aborts). The hook never returns: it prints one line naming
//! where crontap-run failed (not the panic's message, which may quote the job's output), sends
//! a plain fail ping, and exits with
//! - the command's own status once the command has ended: a bug in the summary, the
//!   scrubber or the report cannot replace it;
//! - 125 before the command started (`not run: crontap-run failed …`), and while it runs
//!   (crontap-run can no longer supervise it; a job holding state is killed by its lifeline).
//!
//! In debug builds (the tests), `CRONTAP_FAULT=<point>` makes crontap-run panic at a named
//! point, so the tests can prove all this; release builds have no such switch.

use std::sync::Mutex;

use crate::report::heartbeat::HeartbeatUrl;
use crate::report::ping;
use crate::run::signals::SignalLog;

/// How far the run has come, and what the hook needs to report from there.
enum Phase {
    BeforeStart,
    Running,
    /// The command ended with this status; the plain summary to send if the full one fails
    /// (`None`: it succeeded, and the success ping is sent).
    Ended {
        status: u8,
        plain: Option<String>,
    },
}

struct Guard {
    phase: Phase,
    url: Option<HeartbeatUrl>,
    policy: ping::Policy,
    signals: SignalLog,
}

static GUARD: Mutex<Option<Guard>> = Mutex::new(None);

/// Installs the hook for a run that reports to `url`.
pub fn install(url: Option<HeartbeatUrl>, policy: ping::Policy, signals: SignalLog) {
    set(Some(Guard {
        phase: Phase::BeforeStart,
        url,
        policy,
        signals,
    }));
    std::panic::set_hook(Box::new(on_panic));
}

/// The command is starting (or starting again, for a retry).
pub fn command_running() {
    with(|g| g.phase = Phase::Running);
}

/// The command has ended with `status`; `plain` is the summary without the command's output
/// (`exit 3 after 2s`), or `None` for a success.
pub fn command_ended(status: u8, plain: Option<String>) {
    with(|g| g.phase = Phase::Ended { status, plain });
}

fn set(guard: Option<Guard>) {
    *GUARD.lock().unwrap_or_else(|p| p.into_inner()) = guard;
}

fn with(change: impl FnOnce(&mut Guard)) {
    if let Some(guard) = GUARD.lock().unwrap_or_else(|p| p.into_inner()).as_mut() {
        change(guard);
    }
}

fn on_panic(info: &std::panic::PanicHookInfo<'_>) {
    let place = info
        .location()
        .map(|l| format!(" at {}:{}", l.file(), l.line()))
        .unwrap_or_default();
    // try_lock: the panic may have happened while the guard was held.
    let guard = GUARD.try_lock().ok().and_then(|mut g| g.take());
    let (status, message, stands) = match guard.as_ref().map(|g| &g.phase) {
        Some(Phase::Ended { status, plain }) => (*status, plain.clone(), true),
        Some(Phase::Running) => (
            125,
            Some("crontap-run failed while the command ran (internal error)".to_owned()),
            false,
        ),
        Some(Phase::BeforeStart) | None => (
            125,
            Some("not run: crontap-run failed (internal error)".to_owned()),
            false,
        ),
    };
    let outcome = match stands {
        true => "the command's exit status stands",
        false => "exit 125",
    };
    eprintln!("crontap-run: internal error{place}; {outcome}");
    if let Some(Guard {
        url: Some(url),
        policy,
        signals,
        ..
    }) = guard
    {
        let host = url.host();
        // On a thread of its own: the panic may have come from inside a runtime.
        let target = match message {
            Some(message) => url.failure(&message),
            None => url.success(),
        };
        let sent = std::thread::spawn(move || ping::send(target, policy, &signals));
        if !matches!(sent.join(), Ok(Ok(_))) {
            eprintln!("crontap-run: ping to {host} failed");
        }
    }
    std::process::exit(i32::from(status))
}

/// Panics here when the tests ask for it with `CRONTAP_FAULT=<point>`.
pub fn fault_point(point: &str) {
    if fault(point) {
        panic!("fault injected at {point} for a test");
    }
}

/// Whether the tests asked for a fault at `point` with `CRONTAP_FAULT=<point>`; never in a
/// release build.
pub fn fault(point: &str) -> bool {
    cfg!(debug_assertions) && std::env::var_os("CRONTAP_FAULT").is_some_and(|v| v == point)
}
