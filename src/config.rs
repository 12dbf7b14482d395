//! Turns the parsed command line and environment into one validated [`Config`].
//!
//! Every check that can fail on bad input happens here, before the command starts, and
//! fails with one line naming the option (exit 125). A `CRONTAP_*` variable set to the
//! empty string counts as unset, for every variable: see [`command_line`]. A state server
//! this build has no support for (PostgreSQL or Redis without their cargo features) is
//! refused when a run would use it, so nobody relies on an option that does nothing.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::CommandFactory;

use crate::cli::{
    ApiArgs, CheckArgs, Cli, CreateArgs, HeartbeatAction, HeartbeatArgs, HistoryArgs, OnLeaseLost,
    OutputMode, PingsArgs, PlanArgs, ProtocolArgs, RunArgs, Service, StateUrlArgs, VerifyArgs,
};
use crate::heartbeat::api::{self, Api};
use crate::heartbeat::keys::{self, Keys, Secret};
use crate::heartbeat::{self as hb, plan_create::PlanCreate};
use crate::log;
use crate::metrics;
use crate::plan::{self, PlanConfig};
use crate::report::check;
use crate::report::headers::Headers;
use crate::report::heartbeat::{self, Heartbeat};
use crate::report::kind::Kind;
use crate::report::ping;
use crate::report::proxy::ProxyVars;
use crate::report::secrets::Secrets;
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
    pub child_env: job_env::Inherited,
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
    pub secrets: Secrets,
    /// The test fault point `CRONTAP_FAULT` names; always `None` in a release build.
    pub fault: Option<String>,
}

/// crontap-run's own environment, read once at start-up; configuration looks variables up
/// here and nowhere else.
/// Shared, so that the secrets it holds can be looked for later ([`Environment::secrets_later`]).
pub struct Environment(Arc<[(OsString, OsString)]>);

impl Environment {
    /// The environment crontap-run was started with.
    pub fn current() -> Environment {
        Environment(std::env::vars_os().collect::<Vec<_>>().into())
    }

    /// The values of its secret-looking variables, found when the returned function is
    /// called (only a failure needs them).
    fn secrets_later(&self) -> impl FnOnce() -> Vec<String> + Send + 'static {
        let env = Arc::clone(&self.0);
        move || env_secrets(env.iter().cloned()).collect()
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
        "heartbeat" => <HeartbeatArgs as clap::Args>::augment_args(sub),
        _ => return sub,
    };
    let empty = EMPTY_VARIABLES.take();
    let sub = without_empty_variables(sub, &empty)
        .mut_subcommands(|action| without_empty_variables(action, &empty));
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
        warn_if_passwords_in_ps(&args, state_url.as_ref());
        let env_remove = removed_vars(&args);
        let Some((program, args_of_program)) = command.split_first() else {
            bail!("no command given: put it after `--`");
        };

        Ok(Config {
            program: program.clone(),
            args: args_of_program.to_vec(),
            heartbeat,
            protocol,
            body_max: args.report.body_max.unwrap_or(DEFAULT_BODY_MAX) as usize,
            child_env: job_env::Inherited::new(Arc::clone(&env.0), env_remove),
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
            secrets: Secrets::new(
                state_url
                    .map(|given| url_secrets(&given.url))
                    .unwrap_or_default()
                    .into_iter()
                    .chain(headers.secrets.iter().cloned())
                    .chain(push.iter().flat_map(|p| p.secrets.iter().cloned()))
                    .collect(),
                env.secrets_later(),
            ),
            push,
            headers,
            fault: env.fault(),
        })
    }
}

/// One warning for each password given on the command line, where every user of this host
/// can read it in `ps`.
fn warn_if_passwords_in_ps(args: &RunArgs, state_url: Option<&GivenUrl>) {
    if let Some(url) = state_url {
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
}

/// The variables taken out of the job's environment: the settings and secrets crontap-run
/// read, the per-run variables (set anew for each run), and the one `--url-env` names.
fn removed_vars(args: &RunArgs) -> Vec<String> {
    let mut removed: Vec<String> = REMOVED_VARS
        .iter()
        .chain(&job_env::PER_RUN)
        .chain(&keys::VARIABLES)
        .map(|v| (*v).to_owned())
        .collect();
    if !removed.contains(&args.url_env) {
        removed.push(args.url_env.clone());
    }
    removed
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
    if !args.create && (args.api.service.is_some() || args.api.api_url.is_some()) {
        bail!("--service and --api-url need --create");
    }
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
            bin: plan_bin(args.bin)?,
        },
        (None, None) => bail!("plan needs --schedule or --crontab"),
    };
    Ok(PlanConfig {
        input,
        state_dir,
        json: args.json,
    })
}

/// `plan --crontab FILE --create`: the plan, and the API with its keys.
pub fn plan_create_config(mut args: PlanArgs, env: &Environment) -> Result<PlanCreate> {
    let api_args = std::mem::replace(
        &mut args.api,
        ApiArgs {
            service: None,
            api_url: None,
        },
    );
    let api = api_config(api_args, true, api::TIMEOUT, env)?;
    args.create = false;
    let json = args.json;
    let mut plan = plan_config(args, env)?;
    plan.json = json;
    Ok(PlanCreate { plan, api })
}

/// `crontap-run heartbeat …`: the API, its keys where the action needs them, and the
/// action's own options.
pub fn heartbeat_config(args: HeartbeatArgs, env: &Environment) -> Result<hb::Action> {
    let healthchecks = args.api.service == Some(Service::Healthchecks);
    Ok(match args.action {
        HeartbeatAction::Create(create) => {
            let api = api_config(args.api, true, api::TIMEOUT, env)?;
            hb::Action::Create(Box::new(create_config(create, api, env)?))
        }
        HeartbeatAction::Verify(VerifyArgs {
            url_file,
            ping_timeout,
        }) => {
            if ping_timeout > MAX_PING_TIMEOUT {
                bail!("--ping-timeout must be at most 5m");
            }
            let api = api_config(args.api, healthchecks, ping_timeout, env)?;
            let heartbeat = Heartbeat::load(Some(&url_file), "", false, |_| None)?;
            let protocol = match healthchecks {
                true => Kind::Healthchecks,
                false => Kind::Crontap,
            };
            hb::Action::Verify(Box::new(hb::VerifyConfig {
                ping: net_config(heartbeat, protocol, ping_timeout, env),
                api,
            }))
        }
        HeartbeatAction::Pings(PingsArgs {
            url_file,
            day,
            json,
        }) => {
            if day.as_deref().is_some_and(|day| !is_day(day)) {
                bail!("--day must be a date, YYYY-MM-DD");
            }
            let api = api_config(args.api, healthchecks, api::TIMEOUT, env)?;
            let url = match Heartbeat::load(Some(&url_file), "", false, |_| None)? {
                Heartbeat::Configured(url) if healthchecks => Some(url),
                _ => None,
            };
            hb::Action::Pings(Box::new(hb::PingsConfig {
                api,
                url,
                day,
                json,
            }))
        }
    })
}

/// `YYYY-MM-DD` with a month and a day of month that can be (read by hand: jiff's date
/// parser would be new code in the binary for one option).
fn is_day(text: &str) -> bool {
    let b = text.as_bytes();
    let digits = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_digit);
    let number = |r: std::ops::Range<usize>| text[r].parse::<u8>().unwrap_or(0);
    b.len() == 10
        && digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && (1..=12).contains(&number(5..7))
        && (1..=31).contains(&number(8..10))
}

/// `heartbeat create`'s options.
fn create_config(args: CreateArgs, api: Api, env: &Environment) -> Result<hb::CreateConfig> {
    let name = args.name.trim();
    if name.is_empty() || name.len() > 100 || name.chars().any(char::is_control) {
        bail!("--name must be 1 to 100 characters without control characters");
    }
    let job = match args.job {
        Some(job) => {
            job::validate_name(&job, "--job")?;
            Some(job)
        }
        // The name is the job's when it could be one (as `plan --create` names them).
        None => job::validate_name(name, "--name")
            .ok()
            .map(|_| name.to_owned()),
    };
    if args.jitter.is_some_and(|j| j > MAX_JITTER) {
        bail!("--jitter must be at most 1h");
    }
    if args
        .period
        .is_some_and(|p| p < Duration::from_secs(60) || p > MAX_PERIOD)
    {
        bail!("--period must be between 1m and 366d");
    }
    if args.grace.is_some_and(|g| g > MAX_PERIOD) {
        bail!("--grace must be at most 366d");
    }
    let timing = match (args.schedule, args.period) {
        (Some(text), _) => {
            let schedule = plan::cron::Schedule::parse(&text)
                .map_err(|e| anyhow::anyhow!("--schedule {:?}: {e}", sanitize::one_line(&text)))?;
            let zone = match &args.tz {
                Some(name) => plan::Zone::named(name).map_err(|e| anyhow::anyhow!("--tz: {e}"))?,
                None => plan::Zone::system(),
            };
            hb::Timing::Schedule {
                text,
                schedule,
                zone,
            }
        }
        (None, Some(period)) => hb::Timing::Period(period),
        (None, None) => bail!("heartbeat create needs --schedule or --period"),
    };
    let state_dir = match args.state_dir {
        Some(dir) => Some(non_empty_dir(dir)?),
        None => disk::default_dir(|n| env.get(n)),
    };
    if args.url_file.as_os_str().is_empty() {
        bail!("--url-file must not be empty");
    }
    Ok(hb::CreateConfig {
        api,
        name: name.to_owned(),
        timing,
        grace: args.grace,
        job,
        jitter: args.jitter.unwrap_or_default(),
        state_dir,
        url_file: args.url_file,
    })
}

/// The service's API: `--api-url` (or the service's own), the keys when `keys` (a missing
/// one names its variable), and the network settings of every call.
fn api_config(args: ApiArgs, keys: bool, timeout: Duration, env: &Environment) -> Result<Api> {
    let service = args.service.unwrap_or(Service::Crontap);
    let text = args.api_url.unwrap_or_else(|| {
        match service {
            Service::Crontap => "https://api.crontap.com",
            Service::Healthchecks => "https://healthchecks.io",
        }
        .to_owned()
    });
    let url = api::base_url(&text)?;
    let keys = match (keys, service) {
        (false, _) => Keys::None,
        (true, Service::Crontap) => Keys::Crontap {
            client_id: api_key(env, keys::CRONTAP_CLIENT_ID)?,
            api_key: api_key(env, keys::CRONTAP_API_KEY)?,
        },
        (true, Service::Healthchecks) => Keys::Healthchecks {
            api_key: api_key(env, keys::HEALTHCHECKS_API_KEY)?,
        },
    };
    let net = net_config(
        Heartbeat::Configured(url.clone()),
        Kind::Crontap,
        timeout,
        env,
    );
    net.proxy.warn_unusable();
    Ok(Api {
        service,
        url,
        keys,
        net,
    })
}

/// How requests travel (proxies, TLS roots, deadline), as `check` takes them.
fn net_config(
    heartbeat: Heartbeat,
    protocol: Kind,
    timeout: Duration,
    env: &Environment,
) -> check::CheckConfig {
    let text = |name: &str| env.get(name).map(|v| v.to_string_lossy().into_owned());
    check::CheckConfig {
        heartbeat,
        protocol,
        headers: Headers::default(),
        fail: false,
        timeout,
        proxy: ProxyVars::read(|name| env.get(name)),
        ssl_cert_file: text("SSL_CERT_FILE"),
        ssl_cert_dir: text("SSL_CERT_DIR"),
    }
}

/// An API key: from the file `<var>_FILE` names (read as `--url-file` is), else from
/// `var`; either empty counts as unset. The error names the variables, never a value.
fn api_key(env: &Environment, var: &str) -> Result<Secret> {
    let file_var = format!("{var}_FILE");
    let value = match env.setting(&file_var) {
        Some(path) => {
            let path = PathBuf::from(path);
            let source = format!("{file_var} ({})", sanitize::path(&path));
            heartbeat::read_url_file(&path, &source)?
        }
        None => match env.setting(var) {
            Some(value) => value
                .into_string()
                .map_err(|_| anyhow::anyhow!("{var} is not valid UTF-8"))?
                .trim()
                .to_owned(),
            None => bail!("{var} is not set (nor {file_var}, a file holding it): the API needs it"),
        },
    };
    if value.is_empty() {
        bail!("{var} is empty: the API needs it");
    }
    if !value.bytes().all(|b| b.is_ascii_graphic()) {
        bail!("{var} must be printable ASCII without spaces, as an HTTP header value");
    }
    Ok(Secret::new(value))
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

/// `--bin`, or this binary's own path with its symlinks resolved: written into every
/// wrapped line, as the path cron runs (cron's PATH holds neither /usr/local/bin nor
/// ~/.local/bin), so absolute and UTF-8 text without control characters.
fn plan_bin(bin: Option<PathBuf>) -> Result<PathBuf> {
    let Some(bin) = bin else {
        let own = std::env::current_exe().and_then(std::fs::canonicalize);
        let own = own.map_err(|e| {
            anyhow::anyhow!(
                "cannot find the path of this crontap-run binary ({e}); name it with --bin"
            )
        })?;
        return match own.to_str() {
            Some(text) if !text.chars().any(char::is_control) => Ok(own),
            _ => bail!(
                "this crontap-run binary's path is not plain UTF-8 text that a crontab line can \
                 hold; name another with --bin"
            ),
        };
    };
    match bin.to_str() {
        Some(text) if text.chars().any(char::is_control) => {
            bail!("--bin must not hold control characters")
        }
        Some(text) if bin.is_absolute() && !text.ends_with('/') => Ok(bin),
        Some(_) => bail!(
            "--bin must be the absolute path of a crontap-run binary (cron's PATH is \
             /usr/bin:/bin)"
        ),
        None => bail!("--bin must be UTF-8 text"),
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
