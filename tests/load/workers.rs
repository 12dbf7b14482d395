//! Running many cases at once on a few threads, collecting every failure.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Calls `work` for each of `items` on `workers` threads at once; returns the message of
/// every call that panicked, in the order of `items`.
pub fn on_workers<T: Sync>(
    workers: usize,
    items: &[T],
    work: impl Fn(usize, &T) + Sync,
) -> Vec<String> {
    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(i) else { return };
                    if let Err(panic) = catch_unwind(AssertUnwindSafe(|| work(i, item))) {
                        let text = panic
                            .downcast_ref::<String>()
                            .cloned()
                            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                            .unwrap_or_else(|| "a panic".to_owned());
                        failures.lock().unwrap().push((i, text));
                    }
                }
            });
        }
    });
    let mut failures = failures.into_inner().unwrap();
    failures.sort();
    failures.into_iter().map(|(_, text)| text).collect()
}
