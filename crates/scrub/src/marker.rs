//! The marker every scrubbing layer leaves where it removed something.
//!
//! It lives in a module of its own so that the layers and the [`Scrubber`](super::Scrubber)
//! that runs them all look down to it, and no layer imports its caller.

/// What a removed secret or piece of personal data becomes.
pub const REDACTED: &str = "[REDACTED]";
