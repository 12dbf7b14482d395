//! Turns the parsed command line and environment into one validated [`Config`].
//!
//! Every check that can fail on bad input happens here, before the command starts, and
//! fails with one line naming the option (exit 125). A `CRONTAP_*` variable set to the
//! empty string counts as unset, for every variable: see [`command_line`]. A state server
//! this build has no support for (PostgreSQL or Redis without their cargo features) is
//! refused when a run would use it, so nobody relies on an option that does nothing.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::CommandFactory;

use crate::cli::{
    CheckArgs, Cli, HistoryArgs, OnLeaseLost, OutputMode, PlanArgs, ProtocolArgs, RunArgs,
    StateUrlArgs,
};
use crate::log;
use crate::metrics;
use crate::plan::{self, PlanConfig};
use crate::report::check;
use crate::report::headers::Headers;
use crate::report::heartbeat::{self, Heartbeat};
use crate::report::kind::Kind;
use crate::report::ping;
use crate::report::proxy::ProxyVars;
use crate::run::outcome::SuccessCodes;
use crate::run::{job_env, retry, supervise};
use crate::sanitize;
use crate::state::location::{self, Engine, Remote, StateUrl};
use crate::state::{self, disk, job};
use crontap_scrub::env_secrets;

/// `--kill-after` when not given.
const DEFAULT_KILL_AFTER: Duration = Duration::from_secs(10);

/// Variables never passed to the job as crontap-run found them: those that hold or point at
/// the heartbeat URL or the state store's URL (which may hold a password), whatever
/// `--url-env` says, and the job's identity (a nested crontap-run must not take the outer
/// run's lock). The per-run variables ([`job_env::PER_RUN`]) are removed too: the job gets
/// them only with this run's values.
const REMOVED_VARS: [&str; 6] = [
    "CRONTAP_HEARTBEAT_URL",
    // The Pushgateway's URL may carry a password.
    "CRONTAP_METRICS_PUSH_URL",
    heartbeat::URL_FILE_VAR,
    "CRONTAP_STATE_URL",
    location::URL_FILE_VAR,
    "CRONTAP_JOB",
];

/// The variable that names a test fault point (debug builds only; see `guard`).
const FAULT_VAR: &str = "CRONTAP_FAULT";

const MAX_PING_TIMEOUT: Duration = Duration::from_secs(5 * 60);
const MAX_PING_BUDGET: Duration = Duration::from_secs(15 * 60);
/// `--state-lease` bounds: renewals come every third of it, so below 3 s a busy host could
/// miss one; above an hour a dead host blocks its jobs for too long.
const MIN_LEASE: Duration = Duration::from_secs(3);
const MAX_LEASE: Duration = Duration::from_secs(3600);
/// `--state-timeout` bounds: a second is the least a remote store can answer in reliably;
/// past ten minutes a job's start is no longer bounded in any useful sense.
const MIN_STATE_TIMEOUT: Duration = Duration::from_secs(1);
const MAX_STATE_TIMEOUT: Duration = Duration::from_secs(600);
/// Longest `--jitter`: a start spread further than this is a schedule, not jitter.
const MAX_JITTER: Duration = Duration::from_secs(3600);
const MAX_PERIOD: Duration = Duration::from_secs(366 * 24 * 3600);

pub struct Config {
    /// The program to run, and its arguments.
    pub program: OsString,
    pub args: Vec<OsString>,
    pub heartbeat: Heartbeat,
    /// `--protocol`, decided (`auto` by the URL's host).
    pub protocol: Kind,
    /// `--header`: extra headers on every request.
    pub headers: Headers,
    /// `--body-max`.
    pub body_max: usize,
    /// The environment the job inherits: crontap-run's own, in its order, less the
    /// variables it must not see ([`REMOVED_VARS`], `--url-env`'s, the per-run ones).
    pub child_env: Vec<(OsString, OsString)>,
    pub limits: supervise::Limits,
    pub ping: ping::Policy,
    pub retry: retry::Policy,
    /// The lock and key asked for; `None` when no state feature is in use.
    pub state: Option<state::Plan>,
    pub msg_max: usize,
    pub dry_run: bool,
    /// `--jitter`: the random wait before admission is below this.
    pub jitter: Option<Duration>,
    /// `--on-lease-lost stop`: the command is stopped before a lease it cannot renew runs out.
    pub stop_on_lease_lost: bool,
    /// `--metrics-dir`: where the job's metrics file is written after the run.
    pub metrics: Option<metrics::Target>,
    /// `--metrics-push`: the gateway the run's gauges are put to after the run.
    pub push: Option<metrics::push::Push>,
    /// `--output on-failure`: the output is held for the run's end, spilling into this
    /// directory (`$TMPDIR`, else `/tmp`). `None`: passed through (`--output pass`).
    pub hold_output: Option<PathBuf>,
    /// Credentials crontap-run holds besides the heartbeat URL (the state store URL's user
    /// and password, the values of secret-looking variables in its environment), scrubbed
    /// from anything sent like the URL's own parts.
    pub secrets: Vec<String>,
    /// The test fault point `CRONTAP_FAULT` names; always `None` in a release build.
    pub fault: Option<String>,
}

/// crontap-run's own environment, read once at start-up; configuration looks variables up
/// here and nowhere else.
pub struct Environment(Vec<(OsString, OsString)>);

impl Environment {
    /// The environment crontap-run was started with.
    pub fn current() -> Environment {
        Environment(std::env::vars_os().collect())
    }

    /// The value of `name`, if set (empty or not).
    pub fn get(&self, name: &str) -> Option<OsString> {
        self.0
            .iter()
            .find(|(n, _)| n.as_os_str() == name)
            .map(|(_, v)| v.clone())
    }

    /// The value of crontap-run's own setting `name`, if set to something: set to the empty
    /// string, it counts as unset.
    fn setting(&self, name: &str) -> Option<OsString> {
        self.get(name).filter(|value| !value.is_empty())
    }

    /// The names of the variables set to the empty string.
    fn empty_names(&self) -> Vec<OsString> {
        let empty = self.0.iter().filter(|(_, value)| value.is_empty());
        empty.map(|(name, _)| name.clone()).collect()
    }

    /// Every variable but those `removed` names, in their order.
    fn without(&self, removed: &[String]) -> Vec<(OsString, OsString)> {
        let keep = |name: &OsString| !removed.iter().any(|r| name.as_os_str() == r.as_str());
        self.0.iter().filter(|(n, _)| keep(n)).cloned().collect()
    }

    /// The test fault point, in a debug build.
    fn fault(&self) -> Option<String> {
        let point = self.setting(FAULT_VAR).filter(|_| cfg!(debug_assertions))?;
        Some(point.to_string_lossy().into_owned())
    }
}

/// What `crontap-run history` prints.
pub struct HistoryConfig {
    pub dir: PathBuf,
    pub job: Option<String>,
    pub limit: usize,
    pub json: bool,
    /// `--stats`: statistics per job instead of the runs.
    pub stats: bool,
}

/// Parses the command line. Options read their environment variables through clap, and a
/// variable set to the empty string (Helm's `value: ""`, systemd's `Environment=NAME=`)
/// counts as unset: every option of the run and of every subcommand that has a variable is
/// given none for this parse when `env` has it empty, so an option given a variable later
/// is covered too. Such a variable is still kept from the job if it would be when set
/// (`child_env` is made from `env` itself). `Ok(None)`: help or version was printed.
pub fn command_line(
    args: impl IntoIterator<Item = OsString>,
    env: &Environment,
) -> Result<Option<Cli>> {
    let empty = env.empty_names();
    let command = without_empty_variables(Cli::command(), &empty)
        .mut_subcommands(|sub| sub.defer(define_subcommand));
    EMPTY_VARIABLES.set(empty);
    let parsed = Cli::parse_with(command, args);
    EMPTY_VARIABLES.take();
    parsed
}

thread_local! {
    /// The variables set to the empty string, during [`command_line`]'s parse: clap defines
    /// a subcommand's options only when it is used, in the parse ([`define_subcommand`]).
    static EMPTY_VARIABLES: std::cell::Cell<Vec<OsString>> = const {
        std::cell::Cell::new(Vec::new())
    };
}

/// Defines the options of subcommand `sub`, as clap's `defer` does, without the variables
/// [`EMPTY_VARIABLES`] names. A subcommand not named here keeps every variable: the test
/// `every_subcommand_is_defined_here` names them all.
fn define_subcommand(sub: clap::Command) -> clap::Command {
    let sub = match sub.get_name() {
        "history" => <HistoryArgs as clap::Args>::augment_args(sub),
        "check" => <CheckArgs as clap::Args>::augment_args(sub),
        "plan" => <PlanArgs as clap::Args>::augment_args(sub),
        _ => return sub,
    };
    let empty = EMPTY_VARIABLES.take();
    let sub = without_empty_variables(sub, &empty);
    EMPTY_VARIABLES.set(empty);
    sub
}

/// `command` with the variable of each option dropped where `empty` names it.
fn without_empty_variables(command: clap::Command, empty: &[OsString]) -> clap::Command {
    if empty.is_empty() {
        return command;
    }
    command.mut_args(|arg| {
        let unset = arg
            .get_env()
            .is_some_and(|name| empty.iter().any(|e| e == name));
        match unset {
            true => arg.env(None),
            false => arg,
        }
    })
}

/// The log settings alone, read first so that errors found later are logged in the chosen
/// format.
pub fn log_settings(cli: &Cli, env: &Environment) -> Result<log::Settings> {
    let directive = env
        .setting("CRONTAP_LOG")
        .map(|v| v.to_string_lossy().into_owned());
    let run = &cli.run;
    log::Settings::new(run.quiet, run.verbose, directive.as_deref(), run.log_format)
}

impl Config {
    /// Validates the options of a run, with `env` for the variables that set or hold any.
    pub fn new(args: RunArgs, command: Vec<OsString>, env: &Environment) -> Result<Config> {
        check_bounds(&args)?;
        let retry = retry_policy(&args)?;
        let success = success_codes(&args)?;
        let state_url = state_url(&args.state)?;
        let state = state_plan(&args, state_url.as_ref(), &command, env)?;
        let metrics = metrics_target(&args, &command)?;
        let push = metrics_push(&args, &command, metrics.as_ref())?;

        let headers = !args.report.header.is_empty();
        let heartbeat = Heartbeat::load(args.url_file.as_deref(), &args.url_env, headers, |n| {
            env.get(n)
        })?;
        let (protocol, headers) = protocol(&args.report, &heartbeat)?;
        if let Some(url) = &state_url {
            url.warn_if_password_in_ps();
        }
        if args.push_on_command_line
            && args
                .metrics_push
                .as_deref()
                .is_some_and(location::has_password)
        {
            tracing::warn!(
                "--metrics-push holds a password, which every user of this host can read in \
                 `ps`: give the URL in CRONTAP_METRICS_PUSH_URL"
            );
        }

        let mut env_remove: Vec<String> = REMOVED_VARS
            .iter()
            .chain(&job_env::PER_RUN)
            .map(|v| (*v).to_owned())
            .collect();
        if !env_remove.contains(&args.url_env) {
            env_remove.push(args.url_env.clone());
        }
        let Some((program, args_of_program)) = command.split_first() else {
            bail!("no command given: put it after `--`");
        };

        Ok(Config {
            program: program.clone(),
            args: args_of_program.to_vec(),
            heartbeat,
            protocol,
            body_max: args.report.body_max.unwrap_or(DEFAULT_BODY_MAX) as usize,
            child_env: env.without(&env_remove),
            limits: supervise::Limits {
                timeout: args.timeout,
                kill_after: args.kill_after.unwrap_or(DEFAULT_KILL_AFTER),
                success,
            },
            ping: ping::Policy {
                timeout: args.ping_timeout,
                retries: args.ping_retries,
                budget: args.ping_budget,
                roots_named: ["SSL_CERT_FILE", "SSL_CERT_DIR"]
                    .iter()
                    .any(|name| env.get(name).is_some()),
                proxies: proxies(env),
            },
            retry,
            // A dry run only looks at the state (see `state::look`).
            state,
            msg_max: usize::from(args.msg_max),
            dry_run: args.dry_run,
            jitter: args.jitter.filter(|j| !j.is_zero()),
            stop_on_lease_lost: args.on_lease_lost == OnLeaseLost::Stop,
            metrics,
            hold_output: (args.output == OutputMode::OnFailure).then(|| spill_dir(env)),
            secrets: state_url
                .map(|given| url_secrets(&given.url))
                .unwrap_or_default()
                .into_iter()
                .chain(env_secrets(env.0.iter().cloned()))
                .chain(headers.secrets.iter().cloned())
                .chain(push.iter().flat_map(|p| p.secrets.iter().cloned()))
                .collect(),
            push,
            headers,
            fault: env.fault(),
        })
    }
}

/// The run's options that are bounded on their own, each named when it is out of bounds.
fn check_bounds(args: &RunArgs) -> Result<()> {
    if args.url_env.is_empty() || args.url_env.contains(['=', '\0']) {
        bail!("--url-env must name an environment variable");
    }
    if args.ping_timeout > MAX_PING_TIMEOUT {
        bail!("--ping-timeout must be at most 5m");
    }
    if args.ping_budget > MAX_PING_BUDGET {
        bail!("--ping-budget must be at most 15m");
    }
    if args.jitter.is_some_and(|j| j > MAX_JITTER) {
        bail!("--jitter must be at most 1h");
    }
    Ok(())
}

impl HistoryConfig {
    pub fn new(args: HistoryArgs, env: &Environment) -> Result<HistoryConfig> {
        if let Some(name) = &args.job {
            job::validate_name(name, "--job")?;
        }
        // History stays on this host, also for runs whose store is a server.
        let state_url = state_url(&args.state)?;
        let dir = match state_location(args.state_dir, state_url.as_ref())?.0 {
            Some(dir) => dir,
            None => disk::default_dir(|n| env.get(n)).context(disk::NO_DEFAULT_DIR)?,
        };
        if let Some(url) = &state_url {
            url.warn_if_password_in_ps();
        }
        Ok(HistoryConfig {
            dir,
            job: args.job,
            limit: args.limit as usize,
            json: args.json,
            stats: args.stats,
        })
    }
}

/// `crontap-run check`: the URL read exactly as a run reads it, and the variables that
/// decide how a ping travels (proxies, CA bundles), for the report.
pub fn check_config(args: CheckArgs, env: &Environment) -> Result<check::CheckConfig> {
    if args.url_env.is_empty() || args.url_env.contains(['=', '\0']) {
        bail!("--url-env must name an environment variable");
    }
    if args.ping_timeout > MAX_PING_TIMEOUT {
        bail!("--ping-timeout must be at most 5m");
    }
    let headers = !args.report.header.is_empty();
    let heartbeat = Heartbeat::load(args.url_file.as_deref(), &args.url_env, headers, |n| {
        env.get(n)
    })?;
    let (protocol, headers) = protocol(&args.report, &heartbeat)?;
    let proxy = ProxyVars::read(|name| env.get(name));
    proxy.warn_unusable();
    let text = |name: &str| env.get(name).map(|v| v.to_string_lossy().into_owned());
    Ok(check::CheckConfig {
        heartbeat,
        protocol,
        headers,
        fail: args.fail,
        timeout: args.ping_timeout,
        proxy,
        ssl_cert_file: text("SSL_CERT_FILE"),
        ssl_cert_dir: text("SSL_CERT_DIR"),
    })
}

/// The proxy variables of a run, read once and kept for the rest of the process (every
/// ping's client is made with them); a variable that cannot be parsed is one warning.
fn proxies(env: &Environment) -> &'static ProxyVars {
    let vars = ProxyVars::read(|name| env.get(name));
    vars.warn_unusable();
    Box::leak(Box::new(vars))
}

/// `crontap-run plan`: the schedule or crontab, the zone, and where the job's runs were
/// recorded. A schedule that cannot be read is refused here, naming `--schedule`.
pub fn plan_config(args: PlanArgs, env: &Environment) -> Result<PlanConfig> {
    if let Some(name) = &args.job {
        job::validate_name(name, "--job")?;
    }
    if args.jitter.is_some_and(|j| j > MAX_JITTER) {
        bail!("--jitter must be at most 1h");
    }
    let state_dir = match args.state_dir {
        Some(dir) => Some(non_empty_dir(dir)?),
        None => disk::default_dir(|n| env.get(n)),
    };
    let zone = match &args.tz {
        Some(name) => Some(plan::Zone::named(name).map_err(|e| anyhow::anyhow!("--tz: {e}"))?),
        None => None,
    };
    let input = match (args.schedule, args.crontab) {
        (Some(text), _) => {
            let schedule = plan::cron::Schedule::parse(&text)
                .map_err(|e| anyhow::anyhow!("--schedule {:?}: {e}", sanitize::one_line(&text)))?;
            let zone = zone.unwrap_or_else(plan::Zone::system);
            plan::Input::Schedule {
                text,
                schedule,
                zone,
                job: args.job,
                jitter: args.jitter.unwrap_or_default(),
            }
        }
        (None, Some(path)) if path.as_os_str().is_empty() => {
            bail!("--crontab must name a file, or - for standard input")
        }
        (None, Some(path)) => plan::Input::Crontab {
            path: (path.as_os_str() != "-").then_some(path),
            system: args.system,
            zone,
            url_dir: match args.url_dir {
                Some(dir) => plan_url_dir(dir)?,
                None => PathBuf::from(plan::DEFAULT_URL_DIR),
            },
        },
        (None, None) => bail!("plan needs --schedule or --crontab"),
    };
    Ok(PlanConfig {
        input,
        state_dir,
        json: args.json,
    })
}

/// `--url-dir`: a path written into every wrapped crontab line, so absolute (cron runs a
/// job in its user's home directory) and UTF-8 text without control characters (a line
/// feed would end the line and start another).
fn plan_url_dir(dir: PathBuf) -> Result<PathBuf> {
    match dir.to_str() {
        Some(text) if text.chars().any(char::is_control) => {
            bail!("--url-dir must not hold control characters")
        }
        Some(_) if dir.is_absolute() => Ok(dir),
        Some(_) => {
            bail!("--url-dir must be an absolute path (cron runs jobs in their home directory)")
        }
        None => bail!("--url-dir must be UTF-8 text"),
    }
}

/// `--body-max` when not given: the most a self-hosted Healthchecks keeps by default.
const DEFAULT_BODY_MAX: u32 = 10_000;

/// `--protocol`, decided for the URL, and the `--header` headers.
fn protocol(args: &ProtocolArgs, heartbeat: &Heartbeat) -> Result<(Kind, Headers)> {
    let url = match heartbeat {
        Heartbeat::Configured(url) => Some(url),
        Heartbeat::Missing(_) => None,
    };
    let kind = Kind::choose(args.protocol, url);
    // Without a URL nothing is sent, and the missing URL is the one warning.
    if kind == Kind::Crontap && url.is_some() && args.body_max.is_some() {
        tracing::warn!("--body-max has no effect: the crontap protocol sends no request body");
    }
    Ok((kind, Headers::parse(&args.header)?))
}

fn retry_policy(args: &RunArgs) -> Result<retry::Policy> {
    if args.retries.is_none() && (args.retry_delay.is_some() || !args.retry_on_exit.is_empty()) {
        bail!("--retry-delay and --retry-on-exit need --retries");
    }
    if args.retry_on_exit.iter().any(|c| matches!(c, 126 | 127)) {
        bail!(
            "--retry-on-exit cannot list 126 or 127: a command that cannot be run is never retried"
        );
    }
    let delay = args.retry_delay.unwrap_or(retry::DEFAULT_DELAY);
    if delay > retry::MAX_WAIT {
        bail!("--retry-delay must be at most 1h");
    }
    Ok(retry::Policy {
        retries: u32::from(args.retries.unwrap_or(0)),
        delay,
        on_exit: args.retry_on_exit.clone(),
    })
}

/// `--success-exit`: 0 and the statuses listed.
fn success_codes(args: &RunArgs) -> Result<SuccessCodes> {
    let listed = &args.success_exit;
    if listed.iter().any(|c| matches!(c, 126 | 127)) {
        bail!("--success-exit cannot list 126 or 127: they mean the command could not be run");
    }
    if let Some(both) = listed.iter().find(|c| args.retry_on_exit.contains(c)) {
        bail!("--success-exit and --retry-on-exit both list {both}: a success is never retried");
    }
    Ok(SuccessCodes::new(listed))
}

/// `--metrics-dir`, and the job the metrics are for: `--job`, or the name derived from the
/// command, as for state.
fn metrics_target(args: &RunArgs, command: &[OsString]) -> Result<Option<metrics::Target>> {
    let Some(dir) = &args.metrics_dir else {
        return Ok(None);
    };
    if dir.as_os_str().is_empty() {
        bail!("--metrics-dir (CRONTAP_METRICS_DIR) must not be empty");
    }
    Ok(Some(metrics::Target {
        dir: dir.clone(),
        job: metrics_job(args, command)?,
        expect: expect(args),
    }))
}

/// `--metrics-push`: the gateway's URL, checked, and its credentials as secrets.
fn metrics_push(
    args: &RunArgs,
    command: &[OsString],
    textfile: Option<&metrics::Target>,
) -> Result<Option<metrics::push::Push>> {
    let Some(raw) = &args.metrics_push else {
        return Ok(None);
    };
    Ok(Some(metrics::push::Push {
        url: metrics::push::parse_url(raw)?,
        job: metrics_job(args, command)?,
        expect: expect(args),
        textfile: textfile.cloned(),
        secrets: url_secrets(raw),
    }))
}

/// The job the metrics are for: `--job`, or the name derived from the command, as for
/// state.
fn metrics_job(args: &RunArgs, command: &[OsString]) -> Result<String> {
    if let Some(name) = &args.job {
        job::validate_name(name, "--job (CRONTAP_JOB)")?;
    }
    Ok(args
        .job
        .clone()
        .unwrap_or_else(|| job::derived_name(command)))
}

/// `--expect-every` and `--expect-grace` (none: 0).
fn expect(args: &RunArgs) -> Option<metrics::Expect> {
    args.expect_every.map(|period| metrics::Expect {
        period,
        grace: args.expect_grace.unwrap_or_default(),
    })
}

/// The `--once-per` period of `len`, following `--period-tz`. UTC reads no time zone data;
/// another zone is looked up in the system's tzdata only when a period is asked for, so
/// lines without `--once-per` run whatever CRONTAP_PERIOD_TZ says.
fn period(len: Duration, zone: &str) -> Result<job::Period> {
    if zone == "UTC" {
        return Ok(job::Period::utc(len));
    }
    if !job::Period::fits_a_zone(len) {
        bail!(
            "--once-per with --period-tz (CRONTAP_PERIOD_TZ) must divide a day (15m, 1h, 6h …) \
             or be a whole number of days"
        );
    }
    let zone = jiff::tz::TimeZone::get(zone).map_err(|_| {
        anyhow::anyhow!(
            "--period-tz (CRONTAP_PERIOD_TZ): no time zone {:?} in the system's time zone \
             database (an IANA name such as Europe/Berlin; install tzdata if it is missing)",
            sanitize::one_line(zone)
        )
    })?;
    Ok(job::Period {
        len,
        zone: Some(zone),
    })
}

/// The state features asked for, if any. The state directory is resolved here; when there
/// is no default (no HOME), that is reported as an unusable store once a run needs it.
fn state_plan(
    args: &RunArgs,
    url: Option<&GivenUrl>,
    command: &[OsString],
    env: &Environment,
) -> Result<Option<state::Plan>> {
    if let Some(name) = &args.job {
        job::validate_name(name, "--job (CRONTAP_JOB)")?;
    }
    if let Some(key) = &args.idempotency_key {
        job::validate_key(key)?;
    }
    if args
        .once_per
        .is_some_and(|p| p.subsec_nanos() != 0 || p > MAX_PERIOD)
    {
        bail!("--once-per must be a whole number of seconds, at most 366d");
    }
    if !(MIN_LEASE..=MAX_LEASE).contains(&args.state_lease) {
        bail!("--state-lease (CRONTAP_STATE_LEASE) must be between 3s and 1h");
    }
    if !(MIN_STATE_TIMEOUT..=MAX_STATE_TIMEOUT).contains(&args.state_timeout) {
        bail!("--state-timeout (CRONTAP_STATE_TIMEOUT) must be between 1s and 10m");
    }
    let (dir, remote) = state_location(args.state_dir.clone(), url)?;

    let key = match (&args.once_per, &args.idempotency_key) {
        (Some(len), _) => Some(state::KeySpec::OncePer(period(*len, &args.period_tz)?)),
        (None, Some(key)) => Some(state::KeySpec::Explicit(key.clone())),
        (None, None) => None,
    };
    if !args.no_overlap && key.is_none() {
        return Ok(None);
    }
    // Checked only now: a crontab may set CRONTAP_STATE_URL for all its lines, and the
    // lines that use no state must run whatever this build supports.
    if let (Some(remote), Some(url)) = (&remote, url) {
        check_remote(remote, &url.source)?;
    }
    let dir = dir.or_else(|| disk::default_dir(|n| env.get(n)));
    Ok(Some(state::Plan {
        dir,
        remote,
        lease: args.state_lease,
        timeout: args.state_timeout,
        job: args
            .job
            .clone()
            .unwrap_or_else(|| job::derived_name(command)),
        no_overlap: args.no_overlap,
        key,
    }))
}

/// A state store URL as given, and how errors name where it came from.
struct GivenUrl {
    url: String,
    source: String,
    /// Given as `--state-url` on the command line, with a password in it.
    password_in_ps: bool,
}

impl GivenUrl {
    /// Warns about a password on the command line, which every user of the host, the job
    /// included, can read in `ps` whatever else crontap-run keeps from them. Called once all
    /// options were found valid, so that an error stays one line.
    fn warn_if_password_in_ps(&self) {
        if self.password_in_ps {
            tracing::warn!(
                "--state-url holds a password, which every user of this host can read in `ps`: \
                 give the URL in a file named by --state-url-file (or {}), or in \
                 CRONTAP_STATE_URL",
                location::URL_FILE_VAR
            );
        }
    }
}

/// The state store URL from `--state-url` or the file `--state-url-file` names. An option
/// given on the command line wins over the environment, and the two options together are
/// refused; of the two variables, the file wins (as the heartbeat URL's file does).
fn state_url(args: &StateUrlArgs) -> Result<Option<GivenUrl>> {
    if args.url_on_command_line && args.file_on_command_line {
        bail!("--state-url and --state-url-file both give the state store URL; give one");
    }
    let file = args
        .state_url_file
        .as_deref()
        .filter(|_| !args.url_on_command_line);
    if let Some(path) = file {
        let from_env = !args.file_on_command_line;
        let source =
            heartbeat::file_source("--state-url-file", location::URL_FILE_VAR, path, from_env);
        let url = heartbeat::read_url_file(path, &source)?;
        return Ok(Some(GivenUrl {
            url,
            source,
            password_in_ps: false,
        }));
    }
    Ok(args.state_url.as_ref().map(|url| GivenUrl {
        url: url.clone(),
        source: location::URL_SOURCE.to_owned(),
        password_in_ps: args.url_on_command_line && location::has_password(url),
    }))
}

/// The state directory named by `--state-dir` or a `file://` state URL, if either is
/// given, and the state server a `postgres://` or `redis://` one names.
fn state_location(
    dir: Option<PathBuf>,
    url: Option<&GivenUrl>,
) -> Result<(Option<PathBuf>, Option<Remote>)> {
    let dir = dir.map(non_empty_dir).transpose()?;
    let Some(url) = url else {
        return Ok((dir, None));
    };
    match location::parse(&url.url, &url.source)? {
        StateUrl::Dir(url_dir) => match dir {
            Some(dir) if dir != url_dir => {
                bail!(
                    "--state-dir and {} name different directories; give one",
                    url.source
                )
            }
            _ => Ok((Some(url_dir), None)),
        },
        StateUrl::Remote(remote) => Ok((dir, Some(remote))),
    }
}

/// The parts of a state URL that must never be sent: its user and its password, as written
/// and percent-decoded (everything before the last '@', so a password with an unencoded '/'
/// counts whole). The rest of the URL is what messages show of the store.
///
/// This reads the text rather than using [`crontap_scrub::url_secrets`], as the
/// stores do: the URL parser reads such a password as a host and port and refuses the
/// several-host form of PostgreSQL URLs (`postgres://u:p@h1,h2/db`), and what is found
/// here is what keeps the password out of every message, whatever the store makes of it.
fn url_secrets(url: &str) -> Vec<String> {
    let mut raw = Vec::new();
    if let Some((_, rest)) = url.split_once("://")
        && let Some((userinfo, _)) = rest.rsplit_once('@')
    {
        raw.push(userinfo.to_owned());
        raw.extend(userinfo.split(':').map(str::to_owned));
    }
    raw.iter()
        .flat_map(|s| {
            let decoded = percent_encoding::percent_decode_str(s).decode_utf8_lossy();
            [s.clone(), decoded.into_owned()]
        })
        .collect()
}

/// Where held output spills: `$TMPDIR`, as every Unix program reads it (empty counts as
/// unset), else `/tmp`.
fn spill_dir(env: &Environment) -> PathBuf {
    env.get("TMPDIR")
        .filter(|dir| !dir.is_empty())
        .map_or_else(|| PathBuf::from("/tmp"), PathBuf::from)
}

fn non_empty_dir(dir: PathBuf) -> Result<PathBuf> {
    if dir.as_os_str().is_empty() {
        bail!("--state-dir (CRONTAP_STATE_DIR) must not be empty");
    }
    Ok(dir)
}

/// Refuses a state server this build cannot use; `source` names where its URL came from.
fn check_remote(remote: &Remote, source: &str) -> Result<()> {
    if remote.engine.supported() {
        return Ok(());
    }
    let (name, engine) = match remote.engine {
        Engine::Postgres => ("postgres://", "PostgreSQL"),
        Engine::Redis => ("redis://", "Redis"),
    };
    bail!(
        "{source} with {name} needs a build with {engine} support: the crontap-run-full release \
         (cargo feature {})",
        remote.engine.feature()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every subcommand gets from [`define_subcommand`] the options clap's own `defer`
    /// gives it.
    #[test]
    fn every_subcommand_is_defined_here() {
        let ids = |command: &clap::Command| -> Vec<String> {
            let mut ids: Vec<String> = command
                .get_arguments()
                .map(|arg| arg.get_id().to_string())
                .collect();
            ids.sort();
            ids
        };
        let mut built = Cli::command();
        built.build();
        let unbuilt = Cli::command();
        for sub in unbuilt.get_subcommands() {
            let name = sub.get_name();
            let own = built.find_subcommand(name).unwrap();
            let mut defined = sub.clone().defer(define_subcommand);
            defined.build();
            assert!(!ids(own).is_empty(), "{name}");
            assert_eq!(ids(&defined), ids(own), "{name}");
        }
    }
}
