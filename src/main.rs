//! The `crontap-run` binary: it installs the allocator and the two `.init_array` hooks
//! (signal state, not dumpable); everything else happens in [`crontap_run::app`]; this
//! reports the error chain once and maps it to exit status 125.

use std::process::ExitCode;

/// Records the signal state crontap-run inherited before the Rust runtime sets SIGPIPE to
/// ignored, so that the job can be given the state crontap-run was started with.
#[used]
#[unsafe(link_section = ".init_array")]
static RECORD_INHERITED_SIGNALS: extern "C" fn() = crontap_run::run::signals::record_inherited;

/// Non-dumpable before anything else runs, so that the job (or any process of the same user)
/// cannot read crontap-run's environment or memory; see `run::harden` for why so early.
#[used]
#[unsafe(link_section = ".init_array")]
static KEEP_SECRETS: extern "C" fn() = crontap_run::run::harden::keep_secrets_from_the_job;

/// Small blocks from reused size classes instead of musl's maps and unmaps (see `run::alloc`).
#[global_allocator]
static ALLOCATOR: crontap_run::run::alloc::Pool = crontap_run::run::alloc::Pool::new();

fn main() -> ExitCode {
    match crontap_run::app::main(std::env::args_os()) {
        Ok(code) => code,
        Err(err) => {
            crontap_run::log::report_error(&err);
            ExitCode::from(crontap_run::run::outcome::OWN_ERROR)
        }
    }
}
