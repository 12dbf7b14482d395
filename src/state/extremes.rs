//! Property tests: no record in the state directory, whatever its content, times or sizes,
//! makes a reader panic: the file store's `look` (a dry run), `claim` and `complete` (a
//! run), `history` and `history --stats`. A state directory is only as trustworthy as
//! whoever can write it, and a crash there would stop jobs.

use std::fs;
use std::path::Path;
use std::time::{Duration, SystemTime};

use proptest::prelude::*;

use super::file::FileStore;
use super::history::{self, Entry};
use super::stats;
use super::store::{Claim, Store, Target};
use crate::files::layout;

/// Numbers at the edges: 0, the last second RFC 3339 can write and the one after it, the
/// largest signed and unsigned values, and now.
fn extreme_u64() -> impl Strategy<Value = u64> {
    let now = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    prop_oneof![
        Just(0u64),
        Just(1u64),
        Just(253_402_300_799u64),
        Just(253_402_300_800u64),
        Just(i64::MAX as u64),
        Just(i64::MAX as u64 + 1),
        Just(u64::MAX),
        Just(u64::MAX - 1),
        Just(now),
        any::<u64>(),
    ]
}

/// A key record's JSON: every field of the right type with extreme values, a status known
/// or not, the right key or another; or bytes that are no record at all.
fn record() -> impl Strategy<Value = Vec<u8>> {
    let fields = (
        prop_oneof![Just("k".to_owned()), ".{0,8}"],
        prop_oneof![
            Just("running"),
            Just("succeeded"),
            Just("failed"),
            Just("later")
        ],
        any::<u32>(),
        extreme_u64(),
        extreme_u64(),
        extreme_u64(),
    )
        .prop_map(|(key, status, pid, claimed, updated, keep_until)| {
            serde_json::json!({
                "key": key, "job": "job", "status": status, "owner": "o", "pid": pid,
                "claimed": claimed, "updated": updated, "keep_until": keep_until,
            })
            .to_string()
            .into_bytes()
        });
    prop_oneof![
        4 => fields,
        1 => proptest::collection::vec(any::<u8>(), 0..64),
        1 => Just(b"{\"key\":\"k\",\"updated\":1e400}".to_vec()),
    ]
}

/// A history line: extreme durations, exit statuses, attempt counts, and times that are
/// any text.
fn entry() -> impl Strategy<Value = String> {
    (
        prop_oneof![Just("2026-11-29T18:45:02.123Z".to_owned()), ".{0,30}"],
        extreme_u64(),
        prop_oneof![
            Just("succeeded"),
            Just("failed"),
            Just("stopped"),
            Just("skipped")
        ],
        proptest::option::of(any::<u8>()),
        any::<u32>(),
        ".{0,40}",
    )
        .prop_map(|(started, duration_ms, result, exit, attempts, msg)| {
            serde_json::json!({
                "run_id": "r", "job": "job", "started": started, "ended": started,
                "duration_ms": duration_ms, "result": result, "exit": exit,
                "attempts": attempts, "ping": "sent", "msg": msg,
            })
            .to_string()
        })
}

fn key() -> Target {
    Target::Key {
        key: "k".into(),
        job: "job".into(),
        keep_until: SystemTime::now() + Duration::from_secs(86_400),
    }
}

fn plant_record(state: &Path, bytes: &[u8]) {
    FileStore::open(state).unwrap();
    fs::write(
        state.join(layout::KEYS).join(layout::key_record("k")),
        bytes,
    )
    .unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn no_key_record_makes_the_store_panic(bytes in record()) {
        let tmp = tempfile::tempdir().unwrap();
        plant_record(tmp.path(), &bytes);
        let found = FileStore::at(tmp.path()).unwrap().look(&key());
        // What a dry run says of it.
        if let Ok(found) = found {
            let _ = super::not_due("k", found);
        }
        let mut store = FileStore::open(tmp.path()).unwrap();
        match store.claim(&key(), "run") {
            Ok(Claim::Granted(lease)) => store.complete(lease, true).unwrap(),
            Ok(Claim::Done(at)) => {
                let _ = super::not_due("k", super::store::Found::Done(at));
            }
            Ok(Claim::Held) | Err(_) => {}
        }
    }

    #[test]
    fn no_history_line_makes_history_or_stats_panic(
        lines in proptest::collection::vec(entry(), 0..12),
    ) {
        let tmp = tempfile::tempdir().unwrap();
        FileStore::open(tmp.path()).unwrap();
        let file = tmp.path().join(layout::HISTORY).join(layout::history("job"));
        fs::write(file, lines.join("\n")).unwrap();
        let entries: Vec<Entry> = history::read(tmp.path(), None, 1000).unwrap();
        history::write_table(&mut Vec::new(), &entries).unwrap();
        history::write_json(&mut Vec::new(), &entries).unwrap();
        let computed = stats::compute(&entries);
        stats::write_table(&mut Vec::new(), &computed).unwrap();
        stats::write_json(&mut Vec::new(), &computed).unwrap();
    }
}
