//! The marker every scrubbing layer leaves where it removed something.
//!
//! It lives in a module of its own so that the layers and the [`Scrubber`](super::Scrubber)
//! that runs them all look down to it, and no layer imports its caller.

use std::borrow::Cow;

/// What a removed secret or piece of personal data becomes.
pub const REDACTED: &str = "[REDACTED]";

/// `text` with each of `spans` (byte ranges, sorted and disjoint) replaced by [`REDACTED`];
/// borrowed when there are none.
pub(crate) fn splice<'t>(text: &'t str, spans: &[(usize, usize)]) -> Cow<'t, str> {
    if spans.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    for &(start, end) in spans {
        out.push_str(&text[copied..start]);
        out.push_str(REDACTED);
        copied = end;
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}
