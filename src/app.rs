//! One invocation: parse the arguments, read the environment once, and do what was asked:
//! a run ([`lifecycle::run`]), `history`, `check`, `plan` or `heartbeat`.

use std::ffi::OsString;
use std::io::{self, Write};
use std::process::ExitCode;

use anyhow::{Context, Result};

use crate::cli::Command;
use crate::config::{self, Config, Environment, HistoryConfig};
use crate::heartbeat;
use crate::lifecycle;
use crate::plan;
use crate::report::check;
use crate::state::history;
use crate::state::stats;

/// Runs crontap-run with these arguments; an error is crontap-run's own (exit 125).
pub fn main(args: impl IntoIterator<Item = OsString>) -> Result<ExitCode> {
    let env = Environment::current();
    let Some(cli) = config::command_line(args, &env)? else {
        return Ok(ExitCode::SUCCESS);
    };
    config::log_settings(&cli, &env)?.init();
    match cli.subcommand {
        Some(Command::History(args)) => print_history(&HistoryConfig::new(args, &env)?),
        Some(Command::Check(args)) => check::run(&config::check_config(args, &env)?),
        Some(Command::Plan(args)) if args.create => {
            heartbeat::plan_create::run(&config::plan_create_config(args, &env)?)
        }
        Some(Command::Plan(args)) => plan::run(config::plan_config(args, &env)?),
        Some(Command::Heartbeat(args)) => heartbeat::run(config::heartbeat_config(args, &env)?),
        None => Ok(ExitCode::from(lifecycle::run(Config::new(
            cli.run,
            cli.command,
            &env,
        )?))),
    }
}

fn print_history(config: &HistoryConfig) -> Result<ExitCode> {
    let limit = match config.stats {
        true => usize::MAX,
        false => config.limit,
    };
    let entries = history::read(&config.dir, config.job.as_deref(), limit)?;
    let mut out = io::stdout().lock();
    let written = match (config.stats, config.json) {
        (true, json) => {
            let stats = stats::compute(&entries);
            match json {
                true => stats::write_json(&mut out, &stats),
                false => stats::write_table(&mut out, &stats),
            }
        }
        (false, true) => history::write_json(&mut out, &entries),
        (false, false) => history::write_table(&mut out, &entries),
    };
    match written.and_then(|()| out.flush()) {
        // `| head` closing the pipe is not an error.
        Err(err) if err.kind() != io::ErrorKind::BrokenPipe => {
            Err(err).context("cannot print the history")
        }
        _ => Ok(ExitCode::SUCCESS),
    }
}
