//! crontap-run: runs a scheduled command and reports its outcome to a Crontap heartbeat URL.
//!
//! The binary's `main` calls [`app::main`]; the modules are public so that benchmarks and
//! fuzz targets can reach the pieces they exercise.

pub mod app;
pub mod cli;
pub mod config;
pub mod heartbeat;
pub mod history;
pub mod job;
pub mod lifeline;
pub mod log;
pub mod outcome;
pub mod personal;
pub mod ping;
pub mod report;
pub mod retry;
pub mod sanitize;
pub mod scrub;
pub mod signals;
pub mod state;
pub mod structure;
pub mod summary;
pub mod supervise;
pub mod tee;
pub mod terminal;
pub mod tls;
pub mod tokens;
pub mod traces;

// Process groups, signals, terminals and PID 1 duties are Unix concepts; so is cron.
#[cfg(not(unix))]
compile_error!("crontap-run runs on Unix-like systems only");
