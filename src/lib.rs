//! crontap-run: runs a scheduled command and reports its outcome to a Crontap heartbeat URL.
//!
//! The binary's `main` calls [`app::main`]; the modules are public so that benchmarks and
//! fuzz targets can reach the pieces they exercise.

pub mod app;
pub mod cli;
pub mod config;
pub mod log;
pub mod report;
pub mod run;
pub mod scrub;
pub mod state;

// Process groups, signals, terminals and PID 1 duties are Unix concepts; so is cron.
#[cfg(not(unix))]
compile_error!("crontap-run runs on Unix-like systems only");
