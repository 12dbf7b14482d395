//! Faults the tests inject. In debug builds, `CRONTAP_FAULT=<point>` (read by `config`)
//! makes crontap-run fail at a named point, so that the tests can prove what a bug or an
//! error there does; release builds have no such switch.

use std::sync::OnceLock;

static FAULT: OnceLock<String> = OnceLock::new();

/// Arms the fault point the tests asked for (always `None` in a release build).
pub fn arm(point: Option<String>) {
    if let Some(point) = point {
        let _ = FAULT.set(point);
    }
}

/// Panics here when the tests ask for it.
pub fn point(name: &str) {
    if at(name) {
        panic!("fault injected at {name} for a test");
    }
}

/// Whether the tests asked for a fault at `name`; never in a release build.
pub fn at(name: &str) -> bool {
    cfg!(debug_assertions) && FAULT.get().is_some_and(|p| p == name)
}
