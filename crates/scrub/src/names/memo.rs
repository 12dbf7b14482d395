//! Quick answers for the name judges of `names`: word lists sorted once and searched by
//! halves, and the verdicts on names judged lately, so a line that names the same key
//! again and again costs one judgement of it.

use std::cell::RefCell;
use std::collections::HashMap;

/// `words` sorted, without repeats, for [`listed`].
pub(super) fn sorted(words: &[&'static str]) -> Vec<&'static str> {
    let mut words = words.to_vec();
    words.sort_unstable();
    words.dedup();
    words
}

/// Whether `word` is in `sorted`, a list that [`sorted`] made.
pub(super) fn listed(sorted: &[&str], word: &str) -> bool {
    sorted.binary_search(&word).is_ok()
}

/// Most names a cache of [`remembered`] holds before it starts afresh.
const REMEMBERED: usize = 512;

/// `judge(name)`, from `cache` when `name` was judged lately (the judges are pure).
pub(super) fn remembered(
    cache: &'static std::thread::LocalKey<RefCell<HashMap<Box<str>, bool>>>,
    name: &str,
    judge: fn(&str) -> bool,
) -> bool {
    if name.len() > 64 {
        return judge(name);
    }
    if let Some(verdict) = cache.with_borrow(|names| names.get(name).copied()) {
        return verdict;
    }
    let verdict = judge(name);
    cache.with_borrow_mut(|names| {
        if names.len() >= REMEMBERED {
            names.clear();
        }
        names.insert(name.into(), verdict);
    });
    verdict
}
