//! The contract through the [`Store`] trait, for server stores: what each answer is, that a
//! lease is renewed, won back when nobody took it, and taken over when its holder is gone,
//! and that a holder whose lease was taken over gets an error from every operation and
//! changes nothing.

use std::time::{Duration, SystemTime};

use crontap_run::state::{Claim, Found, Lease, Target};

use super::{LEASE, LeaseBackend};

fn key(name: &str) -> Target {
    Target::Key {
        key: name.into(),
        job: "job".into(),
        keep_until: SystemTime::now() + Duration::from_secs(3600),
    }
}

fn lock() -> Target {
    Target::Lock { job: "job".into() }
}

fn granted(claim: Claim) -> Lease {
    match claim {
        Claim::Granted(lease) => lease,
        other => panic!("expected a grant, got {other:?}"),
    }
}

fn held(claim: Claim) {
    assert!(matches!(claim, Claim::Held), "expected held, got {claim:?}");
}

pub(crate) fn a_key_is_held_then_done_or_free_again<B: LeaseBackend>(b: &B) {
    let (mut a, mut other) = (b.open(), b.open());
    assert_eq!(a.renew_every(), Some(LEASE / 3));
    let lease = granted(a.claim(&key("k"), "run-a").unwrap());
    held(other.claim(&key("k"), "run-b").unwrap());
    assert_eq!(b.key_row("k"), "running|run-a");
    a.renew(&lease).unwrap();
    // Failed: kept, and the next run may try again.
    a.complete(lease, false).unwrap();
    assert_eq!(b.key_row("k"), "failed|run-a");
    let lease = granted(other.claim(&key("k"), "run-b").unwrap());
    let before = SystemTime::now();
    other.complete(lease, true).unwrap();
    assert_eq!(b.key_row("k"), "succeeded|run-b");
    match a.claim(&key("k"), "run-c").unwrap() {
        Claim::Done(at) => assert!(
            at + Duration::from_secs(1) >= before && at <= SystemTime::now(),
            "{at:?}"
        ),
        other => panic!("expected done, got {other:?}"),
    }
    // Released: as if never claimed.
    let lease = granted(a.claim(&key("k2"), "run-c").unwrap());
    a.release(lease).unwrap();
    assert_eq!(b.key_row("k2"), "");
    granted(other.claim(&key("k2"), "run-d").unwrap());
    // A success past its retention no longer counts.
    let past = Target::Key {
        key: "old".into(),
        job: "job".into(),
        keep_until: SystemTime::UNIX_EPOCH + Duration::from_secs(1),
    };
    let lease = granted(a.claim(&past, "run-e").unwrap());
    a.complete(lease, true).unwrap();
    granted(other.claim(&past, "run-f").unwrap());
    // Locks: held until completed, then free, and nothing is kept of them.
    let lease = granted(a.claim(&lock(), "run-g").unwrap());
    held(other.claim(&lock(), "run-h").unwrap());
    a.complete(lease, true).unwrap();
    assert_eq!(b.record(&lock()), None);
    granted(other.claim(&lock(), "run-h").unwrap());
}

/// `--dry-run` looks without claiming: a look finds what a claim would, and changes
/// nothing (another host's claim right after it is granted).
pub(crate) fn a_look_finds_what_a_claim_would_and_takes_nothing<B: LeaseBackend>(b: &B) {
    let (mut a, mut other) = (b.open(), b.open());
    assert_eq!(other.look(&key("k")).unwrap(), Found::Free);
    assert_eq!(other.look(&lock()).unwrap(), Found::Free);
    let lease = granted(a.claim(&key("k"), "run-a").unwrap());
    let lock_lease = granted(a.claim(&lock(), "run-a").unwrap());
    assert_eq!(other.look(&key("k")).unwrap(), Found::Held);
    assert_eq!(other.look(&lock()).unwrap(), Found::Held);
    a.complete(lock_lease, true).unwrap();
    assert_eq!(other.look(&lock()).unwrap(), Found::Free);
    a.complete(lease, true).unwrap();
    assert!(matches!(other.look(&key("k")).unwrap(), Found::Done(_)));
    // Looking took nothing: a fresh key is still granted at once.
    assert_eq!(other.look(&key("k2")).unwrap(), Found::Free);
    assert_eq!(b.record(&key("k2")), None);
    granted(a.claim(&key("k2"), "run-c").unwrap());
}

/// Every grant of a job's lock or key carries a fencing token larger than every earlier
/// one of that job, whichever host claimed.
pub(crate) fn fencing_tokens_grow_with_every_claim_of_a_job<B: LeaseBackend>(b: &B) {
    let mut hosts = [b.open(), b.open()];
    let mut tokens = Vec::new();
    for (host, owner) in [(0, "run-a"), (1, "run-b"), (0, "run-c")] {
        let lease = granted(hosts[host].claim(&lock(), owner).unwrap());
        tokens.push(lease.fencing);
        hosts[host].complete(lease, true).unwrap();
    }
    let lease = granted(hosts[1].claim(&key("k"), "run-d").unwrap());
    tokens.push(lease.fencing);
    assert!(tokens.windows(2).all(|w| w[0] < w[1]), "{tokens:?}");
    assert!(tokens[0] > 0, "{tokens:?}");
}

/// A holder that died (its store gone, its lease run out) never blocks: its key, left
/// running, and its lock are granted to the next run, with a larger fencing token.
pub(crate) fn a_dead_holder_never_blocks<B: LeaseBackend>(b: &B) {
    let mut dead = b.open();
    let dead_key = granted(dead.claim(&key("k"), "run-dead").unwrap());
    granted(dead.claim(&lock(), "run-dead").unwrap());
    drop(dead);
    let mut next = b.open();
    held(next.claim(&key("k"), "run-next").unwrap());
    b.lapse();
    let next_key = granted(next.claim(&key("k"), "run-next").unwrap());
    let next_lock = granted(next.claim(&lock(), "run-next").unwrap());
    assert!(next_key.fencing > dead_key.fencing);
    next.complete(next_key, true).unwrap();
    next.complete(next_lock, true).unwrap();
    assert_eq!(b.key_row("k"), "succeeded|run-next");
}

pub(crate) fn a_holder_whose_lease_was_taken_over_changes_nothing<B: LeaseBackend>(b: &B) {
    let (mut stale, mut next) = (b.open(), b.open());
    for target in [key("k"), lock()] {
        let lost = granted(stale.claim(&target, "run-stale").unwrap());
        held(next.claim(&target, "run-next").unwrap());
        // The lease runs out (its holder stopped renewing)...
        b.lapse();
        // ...and the next run holds it before the stale holder comes back.
        let lease = granted(next.claim(&target, "run-next").unwrap());
        let record = b.record(&target);
        assert!(record.is_some());
        for (what, result) in [
            ("renew", stale.renew(&lost)),
            ("complete", stale.complete(lost.clone(), false)),
            ("release", stale.release(lost.clone())),
        ] {
            let err = format!("{:#}", result.unwrap_err());
            assert!(err.contains(B::TAKEN_OVER), "{target:?} {what}: {err}");
        }
        assert_eq!(b.record(&target), record, "{target:?}");
        held(stale.claim(&target, "run-3").unwrap());
        next.renew(&lease).unwrap();
        next.complete(lease, false).unwrap();
    }
    assert_eq!(b.key_row("k"), "failed|run-next");
    assert_eq!(b.record(&lock()), None);
}

/// A lease that ran out while nobody took it over (the holder or the server paused, the
/// network cut for longer than a lease) is won back by the next renewal, and a result is
/// recorded even then: the run that held it is the only one that ran.
pub(crate) fn a_lease_that_expired_untaken_is_won_back<B: LeaseBackend>(b: &B) {
    let (mut holder, mut other) = (b.open(), b.open());
    for target in [key("k"), lock()] {
        let lease = granted(holder.claim(&target, "run-a").unwrap());
        b.lapse();
        holder.renew(&lease).unwrap();
        // Held again: others are kept out, for a lease.
        held(other.claim(&target, "run-b").unwrap());
        if let Target::Key { key, .. } = &target {
            assert_eq!(b.key_row(key), "running|run-a");
        }
        let left = b.expires_in(&target);
        assert!(
            left > LEASE - Duration::from_secs(10) && left <= LEASE,
            "{left:?}"
        );
        // Run out again when the job ends: the result is still written.
        b.lapse();
        holder.complete(lease, true).unwrap();
    }
    assert_eq!(b.key_row("k"), "succeeded|run-a");
    // Kept for the key's retention (an hour here), not for a lease.
    let kept = b.expires_in(&key("k"));
    assert!(kept > Duration::from_secs(3590), "{kept:?}");
    assert!(matches!(
        other.claim(&key("k"), "run-b").unwrap(),
        Claim::Done(_)
    ));
    assert_eq!(b.record(&lock()), None);
    granted(other.claim(&lock(), "run-b").unwrap());

    // A lease released after it ran out is released.
    let lease = granted(holder.claim(&key("k2"), "run-c").unwrap());
    b.lapse();
    holder.release(lease).unwrap();
    assert_eq!(b.key_row("k2"), "");
    granted(other.claim(&key("k2"), "run-d").unwrap());
}

/// A record whose status this version does not know (a newer crontap-run wrote it) blocks
/// nothing: it is as if there were no record.
pub(crate) fn a_status_from_a_newer_version_blocks_nothing<B: LeaseBackend>(b: &B) {
    let mut a = b.open();
    let lease = granted(a.claim(&key("k"), "run-a").unwrap());
    a.complete(lease, true).unwrap();
    assert!(matches!(a.look(&key("k")).unwrap(), Found::Done(_)));
    b.set_status("k", "paused");
    assert_eq!(a.look(&key("k")).unwrap(), Found::Free);
    granted(a.claim(&key("k"), "run-b").unwrap());
}

/// A store whose connection was closed connects again and sends the command again.
pub(crate) fn a_dropped_connection_is_made_again<B: LeaseBackend>(b: &B) {
    let mut a = b.open();
    let lease = granted(a.claim(&key("k"), "run-a").unwrap());
    assert_eq!(b.cut_connections(), 1);
    a.renew(&lease).unwrap();
    assert_eq!(b.cut_connections(), 1);
    a.complete(lease, true).unwrap();
    assert_eq!(b.key_row("k"), "succeeded|run-a");
}
