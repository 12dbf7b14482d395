//! The `crontap-run` binary: it installs the allocator and what runs before `main` from
//! `.init_array` (not dumpable, signal state, room under the address-space limit); everything else happens
//! in [`crontap_run::app`]; this reports the error chain once and maps it to exit status 125.

use std::process::ExitCode;

/// What runs before the Rust runtime starts, as the one `.init_array` entry, so that the
/// order is the code's and not the linker's: see [`before_main`].
// SAFETY: `.init_array` is an array of pointers to functions that the loader calls, in
// order, before `main`, with (argc, argv, envp), which a C function may leave unread. The
// one pointer put there is `before_main`'s, with the C calling convention; the attribute is
// `unsafe` only because what a section holds must be what the loader expects.
#[used]
#[unsafe(link_section = ".init_array")]
static BEFORE_MAIN: extern "C" fn() = before_main;

/// Before the Rust runtime starts: non-dumpable first, before any other instruction of
/// ours, so that the job (or any process of the same user) cannot read crontap-run's
/// environment or memory (see `harden`); then the signal state crontap-run inherited is
/// recorded, before the runtime sets SIGPIPE to ignored, so that the job can be given the
/// state crontap-run was started with; then, under an address-space limit too low for a
/// run, one line and exit 125 before the runtime maps anything (see `run::memory`).
extern "C" fn before_main() {
    crontap_run::harden::keep_secrets_from_the_job();
    crontap_run::run::signals::record_inherited();
    crontap_run::run::memory::refuse_if_no_room();
}

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
