//! The documentation cannot drift from the binary: README.md, CONTRIBUTING.md,
//! bench/README.md, crates/scrub/README.md and docs/ are checked here.
//!
//! - `examples`: every ```` ```console ```` example runs, and prints what the document shows;
//! - `links`: every relative link and `#anchor` resolves;
//!
//! CONTRIBUTING.md ("Documentation") says how to write an example these tests run.

mod examples;
mod links;
mod markdown;
