//! What every server store must do the same way, written once and run against each store
//! (tests/integration/store_postgres.rs and store_redis.rs hand in two connections, "hosts",
//! to the same server).

#![cfg(any(feature = "postgres", feature = "redis"))]

use std::time::{Duration, SystemTime};

use crontap_run::state::{Claim, Found, Lease, Store, Target};

fn key(name: &str) -> Target {
    Target::Key {
        key: name.into(),
        job: "job".into(),
        keep_until: SystemTime::now() + Duration::from_secs(3600),
    }
}

fn granted(claim: Claim) -> Lease {
    match claim {
        Claim::Granted(lease) => lease,
        other => panic!("expected a grant, got {other:?}"),
    }
}

/// `--dry-run` looks without claiming: a look finds what a claim would, and changes
/// nothing (another host's claim right after it is granted).
pub fn a_look_finds_what_a_claim_would_and_takes_nothing(a: &mut dyn Store, b: &mut dyn Store) {
    let lock = Target::Lock { job: "job".into() };
    assert_eq!(b.look(&key("k")).unwrap(), Found::Free);
    assert_eq!(b.look(&lock).unwrap(), Found::Free);
    let held = granted(a.claim(&key("k"), "run-a").unwrap());
    let lock_held = granted(a.claim(&lock, "run-a").unwrap());
    assert_eq!(b.look(&key("k")).unwrap(), Found::Held);
    assert_eq!(b.look(&lock).unwrap(), Found::Held);
    a.complete(lock_held, true).unwrap();
    assert_eq!(b.look(&lock).unwrap(), Found::Free);
    a.complete(held, true).unwrap();
    assert!(matches!(b.look(&key("k")).unwrap(), Found::Done(_)));
    // Looking took nothing: a fresh key is still granted at once.
    assert_eq!(b.look(&key("k2")).unwrap(), Found::Free);
    granted(a.claim(&key("k2"), "run-c").unwrap());
}

/// Every grant of a job's lock or key carries a fencing token larger than every earlier
/// one of that job, whichever host claimed.
pub fn fencing_tokens_grow_with_every_claim_of_a_job(a: &mut dyn Store, b: &mut dyn Store) {
    let lock = Target::Lock { job: "job".into() };
    let mut tokens = Vec::new();
    for (host, owner) in [(0, "run-a"), (1, "run-b"), (0, "run-c")] {
        let store: &mut dyn Store = if host == 0 { &mut *a } else { &mut *b };
        let lease = granted(store.claim(&lock, owner).unwrap());
        tokens.push(lease.fencing);
        store.complete(lease, true).unwrap();
    }
    let lease = granted(b.claim(&key("k"), "run-d").unwrap());
    tokens.push(lease.fencing);
    assert!(tokens.windows(2).all(|w| w[0] < w[1]), "{tokens:?}");
    assert!(tokens[0] > 0, "{tokens:?}");
}
