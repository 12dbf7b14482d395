//! The `crontap-run` binary: everything happens in [`crontap_run::app`]; this reports the
//! error chain once and maps it to exit status 125.

use std::process::ExitCode;

/// Exit status for crontap-run's own errors (bad options, bad URL), as `env` and `timeout`.
const OWN_ERROR: u8 = 125;

fn main() -> ExitCode {
    match crontap_run::app::main(std::env::args_os()) {
        Ok(code) => code,
        Err(err) => {
            crontap_run::log::report_error(&err);
            ExitCode::from(OWN_ERROR)
        }
    }
}
