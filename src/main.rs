//! The `crontap-run` binary: it installs the allocator and the three `.init_array` hooks
//! (signal state, not dumpable, room under the address-space limit); everything else happens
//! in [`crontap_run::app`]; this reports the error chain once and maps it to exit status 125.

use std::process::ExitCode;

/// Records the signal state crontap-run inherited before the Rust runtime sets SIGPIPE to
/// ignored, so that the job can be given the state crontap-run was started with.
#[used]
#[unsafe(link_section = ".init_array")]
static RECORD_INHERITED_SIGNALS: extern "C" fn() = crontap_run::run::signals::record_inherited;

/// Non-dumpable before anything else runs, so that the job (or any process of the same user)
/// cannot read crontap-run's environment or memory; see `harden` for why so early.
#[used]
#[unsafe(link_section = ".init_array")]
static KEEP_SECRETS: extern "C" fn() = crontap_run::harden::keep_secrets_from_the_job;

/// Under an address-space limit too low for a run, one line and exit 125 before the Rust
/// runtime maps anything (see `run::memory`).
#[used]
#[unsafe(link_section = ".init_array")]
static REFUSE_WITHOUT_ROOM: extern "C" fn() = crontap_run::run::memory::refuse_if_no_room;

/// The C library's allocator, ending the run in order where it has no memory left.
#[global_allocator]
static ALLOCATOR: crontap_run::run::memory::Allocator = crontap_run::run::memory::Allocator;

fn main() -> ExitCode {
    match crontap_run::app::main(std::env::args_os()) {
        Ok(code) => code,
        Err(err) => {
            crontap_run::log::report_error(&err);
            ExitCode::from(crontap_run::run::outcome::OWN_ERROR)
        }
    }
}
