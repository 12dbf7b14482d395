//! crontap-run: runs a scheduled command and reports its outcome to a Crontap heartbeat URL.
//!
//! The binary's `main` calls [`app::main`]. ARCHITECTURE.md walks through one run and says
//! what each folder owns.
//!
//! Everything is private to the crate except what something outside it needs:
//! - [`app`] and [`log`]: the binary's `main` runs [`app::main`] and prints errors with
//!   [`log::report_error`]; [`run::signals::record_inherited`],
//!   [`harden::keep_secrets_from_the_job`] and [`run::memory::refuse_if_no_room`] run before
//!   `main`, and `main` installs [`run::memory::Allocator`] as the allocator.
//! - [`cli`]: the `xtask` crate generates man pages and completions from [`cli::Cli`], and the tests set
//!   every variable [`cli::env_names`] lists.
//! - [`report::summary`], [`report::body`], [`report::heartbeat`], [`run::outcome`]: the corpus and property
//!   tests build failure summaries (with the scrubber, the crate `crontap-scrub` under
//!   `crates/scrub`, which has its own benchmark and fuzz target).
//! - [`state`]'s store interface and server stores: the integration tests drive PostgreSQL
//!   and Redis stores directly to test fencing and leases.
//! - [`files::layout`]: the tests plant links at every path crontap-run writes.

pub mod app;
pub mod cli;
pub(crate) mod config;
pub(crate) mod fault;
pub mod files;
pub mod harden;
pub(crate) mod heartbeat;
pub(crate) mod hex;
pub(crate) mod host;
pub(crate) mod lifecycle;
pub mod log;
pub(crate) mod metrics;
pub(crate) mod plan;
pub(crate) mod random;
pub mod report;
pub mod run;
pub(crate) mod sanitize;
pub mod state;

// Process groups, signals, terminals and PID 1 duties are Unix concepts; so is cron.
#[cfg(not(unix))]
compile_error!("crontap-run runs on Unix-like systems only");
