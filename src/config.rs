//! Turns the parsed command line and environment into one validated [`Config`].
//!
//! Every check that can fail on bad input happens here, before the command starts, and
//! fails with one line naming the option (exit 125). Options whose behaviour a later
//! release completes are parsed and validated too, then refused as not yet supported, so
//! nobody relies on an option that does nothing.

use std::ffi::OsString;
use std::time::Duration;

use anyhow::{Result, bail};

use crate::cli::{Cli, RunArgs};
use crate::heartbeat::{self, Heartbeat};
use crate::log;
use crate::ping;
use crate::supervise;

/// `--kill-after` when not given.
const DEFAULT_KILL_AFTER: Duration = Duration::from_secs(10);

/// Variables that hold or point at the heartbeat URL; always removed from the child's
/// environment, whatever `--url-env` says.
const URL_VARS: [&str; 2] = ["CRONTAP_HEARTBEAT_URL", heartbeat::URL_FILE_VAR];

const MAX_PING_TIMEOUT: Duration = Duration::from_secs(5 * 60);
const MAX_PING_BUDGET: Duration = Duration::from_secs(15 * 60);
const MAX_PERIOD: Duration = Duration::from_secs(366 * 24 * 3600);

pub struct Config {
    /// Program and arguments; never empty.
    pub command: Vec<OsString>,
    pub heartbeat: Heartbeat,
    /// Variables removed from the child's environment.
    pub env_remove: Vec<String>,
    pub limits: supervise::Limits,
    pub ping: ping::Policy,
    pub msg_max: usize,
    pub dry_run: bool,
}

/// The log settings alone, read first so that errors found later are logged in the chosen
/// format.
pub fn log_settings(cli: &Cli, env: impl Fn(&str) -> Option<OsString>) -> Result<log::Settings> {
    let directive = env("CRONTAP_LOG").map(|v| v.to_string_lossy().into_owned());
    let run = &cli.run;
    log::Settings::new(run.quiet, run.verbose, directive.as_deref(), run.log_format)
}

impl Config {
    /// Validates `cli`; `env` looks up environment variables.
    pub fn new(cli: Cli, env: impl Fn(&str) -> Option<OsString>) -> Result<Config> {
        if cli.subcommand.is_some() {
            bail!("the history command is not yet supported by this version of crontap-run");
        }
        let args = cli.run;
        validate_later_options(&args)?;
        refuse_later_options(&args)?;

        if args.url_env.is_empty() || args.url_env.contains(['=', '\0']) {
            bail!("--url-env must name an environment variable");
        }
        if args.ping_timeout > MAX_PING_TIMEOUT {
            bail!("--ping-timeout must be at most 5m");
        }
        if args.ping_budget > MAX_PING_BUDGET {
            bail!("--ping-budget must be at most 15m");
        }

        let heartbeat = Heartbeat::load(args.url_file.as_deref(), &args.url_env, &env)?;

        let mut env_remove: Vec<String> = URL_VARS.iter().map(|v| (*v).to_owned()).collect();
        if !env_remove.contains(&args.url_env) {
            env_remove.push(args.url_env.clone());
        }

        Ok(Config {
            command: cli.command,
            heartbeat,
            env_remove,
            limits: supervise::Limits {
                timeout: args.timeout,
                kill_after: args.kill_after.unwrap_or(DEFAULT_KILL_AFTER),
            },
            ping: ping::Policy {
                timeout: args.ping_timeout,
                retries: args.ping_retries,
                budget: args.ping_budget,
            },
            msg_max: usize::from(args.msg_max),
            dry_run: args.dry_run,
        })
    }
}

/// Checks on options that a later release implements, beyond what clap checks, so that bad
/// values are reported as such rather than as "not yet supported".
fn validate_later_options(args: &RunArgs) -> Result<()> {
    if let Some(job) = &args.job {
        let ok = (1..=128).contains(&job.len())
            && job
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
        if !ok {
            bail!("--job must be 1 to 128 characters of letters, digits, '.', '_' and '-'");
        }
    }
    let bad_key = |key: &String| {
        !(1..=256).contains(&key.len()) || key.chars().any(|c| c.is_control() || c.is_whitespace())
    };
    if args.idempotency_key.as_ref().is_some_and(bad_key) {
        bail!("--idempotency-key must be 1 to 256 bytes without spaces or control characters");
    }
    if args
        .once_per
        .is_some_and(|p| p.subsec_nanos() != 0 || p > MAX_PERIOD)
    {
        bail!("--once-per must be a whole number of seconds, at most 366d");
    }
    if let Some(url) = &args.state_url {
        // The URL may hold a password: name the option, never the value.
        let scheme = url.split_once("://").map(|(s, _)| s.to_ascii_lowercase());
        if !matches!(
            scheme.as_deref(),
            Some("file" | "postgres" | "postgresql" | "redis" | "rediss")
        ) {
            bail!(
                "--state-url must be a file://, postgres://, postgresql://, redis:// or rediss:// URL"
            );
        }
    }
    if args
        .state_dir
        .as_ref()
        .is_some_and(|d| d.as_os_str().is_empty())
    {
        bail!("--state-dir must not be empty");
    }
    Ok(())
}

/// Refuses options whose behaviour is not built yet.
fn refuse_later_options(args: &RunArgs) -> Result<()> {
    let given = [
        ("--retries", args.retries.is_some()),
        ("--retry-delay", args.retry_delay.is_some()),
        ("--retry-on-exit", !args.retry_on_exit.is_empty()),
        ("--job (CRONTAP_JOB)", args.job.is_some()),
        ("--no-overlap", args.no_overlap),
        ("--once-per", args.once_per.is_some()),
        ("--idempotency-key", args.idempotency_key.is_some()),
        ("--state-dir (CRONTAP_STATE_DIR)", args.state_dir.is_some()),
        ("--state-url (CRONTAP_STATE_URL)", args.state_url.is_some()),
    ];
    match given.iter().find(|(_, set)| *set) {
        Some((name, _)) => bail!("{name} is not yet supported by this version of crontap-run"),
        None => Ok(()),
    }
}
