//! The command line as the user types it: the clap definitions, the parse `config` calls
//! (`Cli::parse_with`) and the variables the options read (`env_names`).
//!
//! Doc comments here are the `--help` text. Nothing in this file judges whether values make
//! sense together; `config` turns a parsed [`Cli`] into a validated `Config`, and nothing
//! else in the program reads raw arguments.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use clap::parser::ValueSource;
use clap::{ArgMatches, Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};

/// Run a scheduled command and report its outcome to a heartbeat URL (Crontap or
/// Healthchecks).
///
/// The command runs directly (no shell; as with execvp(3), a file without a `#!` line runs
/// with /bin/sh), its output passes through unchanged, and crontap-run exits with the
/// command's own status. On success it sends one GET to the heartbeat URL; on failure one
/// GET to `<url>/fail?msg=<summary>`, the summary scrubbed of secrets (see --protocol for
/// Healthchecks).
#[derive(Debug, Parser)]
#[command(
    name = "crontap-run",
    version,
    subcommand_negates_reqs = true,
    subcommand_value_name = "SUBCOMMAND",
    subcommand_help_heading = "Subcommands",
    disable_help_subcommand = true,
    args_conflicts_with_subcommands = true,
    after_help = "Exit status: the command's own; 128+N if it was killed by signal N; \
                  126 if it could not be executed, 127 if it was not found; \
                  125 for crontap-run's own errors."
)]
pub struct Cli {
    #[command(flatten)]
    pub run: RunArgs,

    #[command(subcommand)]
    pub subcommand: Option<Command>,

    /// The command to run and its arguments, after `--`.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<OsString>,
}

/// The subcommands. Their options are defined only when one is used (clap's `defer`): a run
/// uses none, and defining them all took about a seventh of a run's instructions. Each
/// subcommand's own struct repeats its description, because the options, defined last,
/// would otherwise leave it with that of a struct they flatten (the test
/// `subcommands_keep_their_descriptions` compares the two).
#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum Command {
    /// Print recent runs of stateful jobs, oldest first.
    History(HistoryArgs),
    /// Send one test ping from this host and say what works: proxy, DNS, connect, TLS,
    /// HTTP status and latency. Exit 0 only for a 2xx answer.
    Check(CheckArgs),
    /// Say what a heartbeat needs for a cron schedule (period and grace), or print a
    /// crontab again with every job wrapped in crontap-run. Sends and writes nothing unless
    /// --create.
    Plan(PlanArgs),
    /// Create a heartbeat on Crontap or Healthchecks and keep its ping URL in a file, verify
    /// it from this host, or list the pings the service recorded.
    Heartbeat(HeartbeatArgs),
}

/// Create a heartbeat on Crontap or Healthchecks and keep its ping URL in a file, verify
/// it from this host, or list the pings the service recorded.
#[derive(Debug, Args)]
pub struct HeartbeatArgs {
    #[command(subcommand)]
    pub action: HeartbeatAction,

    #[command(flatten)]
    pub api: ApiArgs,
}

/// What `heartbeat` does.
#[derive(Debug, Subcommand)]
pub enum HeartbeatAction {
    /// Create the heartbeat and write its ping URL to --url-file.
    ///
    /// The period and grace are as `plan` computes them; the file is mode 0600, and the URL
    /// is never printed. With a URL already in the file, nothing is created. Keys:
    /// CRONTAP_CLIENT_ID and CRONTAP_API_KEY, or HEALTHCHECKS_API_KEY (each also from a
    /// file named by the same variable with _FILE).
    Create(CreateArgs),
    /// Ping the heartbeat and read back that the service recorded it.
    ///
    /// One success ping to the URL in --url-file, as `check` sends it; on Healthchecks, the
    /// check is read back. Exit 0 only when the ping was answered 2xx and recorded.
    Verify(VerifyArgs),
    /// List the pings the service recorded, oldest first (Healthchecks).
    ///
    /// For the heartbeat in --url-file: time, kind, exit status, duration and sender.
    Pings(PingsArgs),
}

/// The heartbeat service's API.
#[derive(Debug, Args)]
pub struct ApiArgs {
    /// The service: `crontap` (Crontap's REST API) or `healthchecks` (the Management API v3
    /// of healthchecks.io or a self-hosted Healthchecks) [default: crontap].
    #[arg(long, global = true, value_name = "crontap|healthchecks", value_enum)]
    pub service: Option<Service>,

    /// The API's base URL [default: https://api.crontap.com, or https://healthchecks.io].
    #[arg(long, global = true, value_name = "URL")]
    pub api_url: Option<String>,
}

/// `--service`: where heartbeats are created.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Service {
    Crontap,
    Healthchecks,
}

/// Create the heartbeat and write its ping URL to --url-file.
#[derive(Debug, Args)]
#[command(group = clap::ArgGroup::new("timing").required(true).args(["schedule", "period"]))]
pub struct CreateArgs {
    /// The heartbeat's name on the service (unique there).
    #[arg(long, value_name = "NAME")]
    pub name: String,

    /// The job's cron schedule: the period is the longest gap between its starts
    /// (Healthchecks gets the schedule and zone themselves).
    #[arg(long, value_name = "EXPR", allow_hyphen_values = true)]
    pub schedule: Option<String>,

    /// IANA time zone of --schedule [default: the system's zone, as cron uses it].
    #[arg(long, value_name = "ZONE", requires = "schedule")]
    pub tz: Option<String>,

    /// A fixed period instead of --schedule (e.g. 1h, 1d).
    #[arg(long, value_name = "DUR", value_parser = duration, conflicts_with = "schedule")]
    pub period: Option<Duration>,

    /// The grace [default: the longest recorded run of --job plus --jitter, at least 1m].
    #[arg(long, value_name = "DUR", value_parser = duration)]
    pub grace: Option<Duration>,

    /// The job whose recorded runs set the grace [default: --name].
    #[arg(long, value_name = "NAME")]
    pub job: Option<String>,

    /// The state directory the runs were recorded in [default: as for running a job].
    #[arg(long, value_name = "DIR", env = "CRONTAP_STATE_DIR")]
    pub state_dir: Option<PathBuf>,

    /// The `--jitter` the job runs with: added to the grace.
    #[arg(long, value_name = "DUR", value_parser = duration)]
    pub jitter: Option<Duration>,

    /// Where the ping URL is written (its directory is made 0700 if missing).
    #[arg(long, value_name = "PATH")]
    pub url_file: PathBuf,
}

/// Ping the heartbeat and read back that the service recorded it.
#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// The file that holds the heartbeat's ping URL.
    #[arg(long, value_name = "PATH")]
    pub url_file: PathBuf,

    /// Deadline of each step: DNS, connect, TLS, and each request.
    #[arg(long, value_name = "DUR", default_value = "10s", value_parser = duration)]
    pub ping_timeout: Duration,
}

/// List the pings the service recorded, oldest first.
#[derive(Debug, Args)]
pub struct PingsArgs {
    /// The file that holds the heartbeat's ping URL.
    #[arg(long, value_name = "PATH")]
    pub url_file: PathBuf,

    /// Only the pings of this day (UTC), YYYY-MM-DD.
    #[arg(long, value_name = "YYYY-MM-DD")]
    pub day: Option<String>,

    /// Print a JSON list instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Say what a heartbeat needs for a cron schedule (period and grace), or print a
/// crontab again with every job wrapped in crontap-run. Sends and writes nothing unless
/// --create.
#[derive(Debug, Args)]
#[command(group = clap::ArgGroup::new("input").required(true).args(["schedule", "crontab"]))]
pub struct PlanArgs {
    /// A cron schedule as cron reads it: five fields (`0 9 * * 1-5`) or a macro (`@daily`).
    #[arg(long, value_name = "EXPR", allow_hyphen_values = true)]
    pub schedule: Option<String>,

    /// A crontab to print again with every job wrapped in crontap-run, each with a comment
    /// giving its heartbeat's period and grace; `-` reads standard input.
    #[arg(long, value_name = "FILE|-", conflicts_with = "schedule")]
    pub crontab: Option<PathBuf>,

    /// The crontab is in the /etc/crontab format: a user field before the command.
    #[arg(long, conflicts_with = "schedule")]
    pub system: bool,

    /// Directory of the wrapped jobs' URL files (`DIR/<job>.url`), an absolute path
    /// [default: /etc/crontap].
    #[arg(long, value_name = "DIR", conflicts_with = "schedule")]
    pub url_dir: Option<PathBuf>,

    /// The crontap-run that wrapped lines run, an absolute path on the cron host [default:
    /// this binary's own path, symlinks resolved; the bare name where a PATH line of the
    /// crontab holds its directory].
    #[arg(long, value_name = "PATH", conflicts_with = "schedule")]
    pub bin: Option<PathBuf>,

    /// IANA time zone the schedule's times are in (system tzdata); with --crontab, that of
    /// the lines before any CRON_TZ line (the cron host's zone) [default: the system's
    /// zone, /etc/localtime, as cron uses it].
    #[arg(long, value_name = "ZONE")]
    pub tz: Option<String>,

    /// The job whose recorded runs set the grace (as `--job` of its runs).
    #[arg(long, value_name = "NAME", conflicts_with = "crontab")]
    pub job: Option<String>,

    /// The `--jitter` the job runs with: added to the grace.
    #[arg(long, value_name = "DUR", value_parser = duration, conflicts_with = "crontab")]
    pub jitter: Option<Duration>,

    /// The state directory the runs were recorded in [default: as for running a job].
    #[arg(long, value_name = "DIR", env = "CRONTAP_STATE_DIR")]
    pub state_dir: Option<PathBuf>,

    /// Print JSON: the heartbeat (`name`, `periodMinutes`, `graceMinutes`, …), or with
    /// --crontab a list of them.
    #[arg(long)]
    pub json: bool,

    /// With --crontab: create every job's heartbeat (see `heartbeat create`) and write its
    /// URL file before printing the crontab; what was created is said on stderr. Jobs whose
    /// URL file holds a URL already are left as they are.
    #[arg(long, requires = "crontab")]
    pub create: bool,

    #[command(flatten)]
    pub api: ApiArgs,
}

/// Send one test ping from this host and say what works: proxy, DNS, connect, TLS,
/// HTTP status and latency. Exit 0 only for a 2xx answer.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Send the fail ping (`crontap-run check from <host>`) instead of the success ping.
    #[arg(long)]
    pub fail: bool,

    /// Environment variable that holds the heartbeat URL.
    #[arg(long, value_name = "NAME", default_value = "CRONTAP_HEARTBEAT_URL")]
    pub url_env: String,

    /// File that holds the heartbeat URL (a mounted secret); wins over --url-env.
    #[arg(long, value_name = "PATH", env = "CRONTAP_HEARTBEAT_URL_FILE")]
    pub url_file: Option<PathBuf>,

    /// Deadline of each step: DNS, connect, TLS, and the request.
    #[arg(long, value_name = "DUR", default_value = "10s", value_parser = duration)]
    pub ping_timeout: Duration,

    #[command(flatten)]
    pub report: ProtocolArgs,
}

/// How runs are reported: the protocol and what goes with every request.
#[derive(Debug, Args)]
pub struct ProtocolArgs {
    /// How the run is reported: `crontap` (a GET, or `<url>/fail?msg=…`), `healthchecks`
    /// (a start ping beside the command, then `<url>/<exit status>` with the scrubbed
    /// output tail as the body), or `auto`: healthchecks for hc-ping.com, else crontap.
    #[arg(
        long,
        value_name = "auto|crontap|healthchecks",
        env = "CRONTAP_PROTOCOL",
        value_enum,
        default_value_t = ProtocolChoice::Auto
    )]
    pub protocol: ProtocolChoice,

    /// Extra request header on every ping, `Name: value` (repeatable), e.g. a Cloudflare
    /// Access service token. `@PATH` reads headers from a file, one per line, so that the
    /// value is not on the command line. Values are secrets: never printed.
    #[arg(long, value_name = "'NAME: VALUE'|@PATH")]
    pub header: Vec<String>,

    /// Longest request body (healthchecks: the summary, then the scrubbed output tail), in
    /// bytes; 0 sends none. [default: 10000]
    #[arg(long, value_name = "BYTES",
          value_parser = clap::value_parser!(u32).range(0..=1_048_576))]
    pub body_max: Option<u32>,
}

/// Print recent runs of stateful jobs, oldest first.
#[derive(Debug, Args)]
pub struct HistoryArgs {
    /// Only runs of this job.
    #[arg(long, value_name = "NAME", env = "CRONTAP_JOB")]
    pub job: Option<String>,

    /// How many runs to show: the most recent N.
    #[arg(long, value_name = "N", default_value_t = 20,
          value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub limit: u32,

    /// Print JSON lines instead of a table.
    #[arg(long)]
    pub json: bool,

    /// Per job: runs by result, p50/p95/max duration of successful runs, the last success,
    /// and the grace the heartbeat needs (all recorded runs, not --limit).
    #[arg(long, conflicts_with = "limit")]
    pub stats: bool,

    /// The state directory the runs were recorded in [default: as for running a job].
    #[arg(long, value_name = "DIR", env = "CRONTAP_STATE_DIR")]
    pub state_dir: Option<PathBuf>,

    #[command(flatten)]
    pub state: StateUrlArgs,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Environment variable that holds the heartbeat URL.
    #[arg(long, value_name = "NAME", default_value = "CRONTAP_HEARTBEAT_URL")]
    pub url_env: String,

    /// File that holds the heartbeat URL (a mounted secret); wins over --url-env.
    #[arg(long, value_name = "PATH", env = "CRONTAP_HEARTBEAT_URL_FILE")]
    pub url_file: Option<PathBuf>,

    /// Stop the command after this long (e.g. 90s, 15m, 1h 30m): SIGTERM to its group, exit 124.
    #[arg(long, value_name = "DUR", env = "CRONTAP_TIMEOUT", value_parser = duration)]
    pub timeout: Option<Duration>,

    /// Send SIGKILL this long after the stop signal, exit 137 [default: 10s].
    #[arg(long, value_name = "DUR", value_parser = duration)]
    pub kill_after: Option<Duration>,

    /// Wait a random time below DUR before starting (at most 1h), to spread a fleet's
    /// starts on the hour over the state store and the heartbeat service.
    #[arg(long, value_name = "DUR", value_parser = duration)]
    pub jitter: Option<Duration>,

    /// Deadline of one ping attempt: DNS, connect, TLS and response.
    #[arg(long, value_name = "DUR", default_value = "10s", value_parser = duration)]
    pub ping_timeout: Duration,

    /// Extra ping attempts after a network error, timeout, 408, 429 or 5xx.
    #[arg(long, value_name = "N", default_value_t = 3,
          value_parser = clap::value_parser!(u32).range(0..=10))]
    pub ping_retries: u32,

    /// Hard cap on all ping attempts and the waits between them; an attempt never runs past it.
    #[arg(long, value_name = "DUR", default_value = "30s", value_parser = duration)]
    pub ping_budget: Duration,

    /// Longest failure summary, in bytes before URL encoding (32 to 2048).
    #[arg(long, value_name = "BYTES", default_value_t = 256,
          value_parser = clap::value_parser!(u16).range(32..=2048))]
    pub msg_max: u16,

    #[command(flatten)]
    pub report: ProtocolArgs,

    /// Run the command again after a failure, up to N more times (0 to 5).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u8).range(0..=5))]
    pub retries: Option<u8>,

    /// First wait between attempts, doubling each time up to 1h [default: 30s].
    #[arg(long, value_name = "DUR", value_parser = duration)]
    pub retry_delay: Option<Duration>,

    /// Only retry these exit statuses, e.g. `1,75` [default: any failure but 126 and 127].
    #[arg(long, value_name = "CODES", value_delimiter = ',',
          value_parser = clap::value_parser!(u8).range(1..=255))]
    pub retry_on_exit: Vec<u8>,

    /// Exit statuses that count as success besides 0, e.g. `24` for rsync: for the ping,
    /// the state and the metrics (crontap-run still exits with the command's status).
    #[arg(long, value_name = "CODES", value_delimiter = ',',
          value_parser = clap::value_parser!(u8).range(0..=255))]
    pub success_exit: Vec<u8>,

    /// Stable name of the job for locks, keys and history [default: derived from the command].
    #[arg(long, value_name = "NAME", env = "CRONTAP_JOB")]
    pub job: Option<String>,

    /// Skip this run (exit 0, no ping) if the same job is still running.
    #[arg(long)]
    pub no_overlap: bool,

    /// Run at most once successfully per period, aligned to UTC (1d starts at 00:00 UTC) or
    /// to midnight in --period-tz.
    #[arg(long, value_name = "DUR", value_parser = duration, conflicts_with = "idempotency_key")]
    pub once_per: Option<Duration>,

    /// Run at most once successfully for this key (instead of --once-per).
    #[arg(long, value_name = "KEY")]
    pub idempotency_key: Option<String>,

    /// --once-per periods start at midnight in this IANA time zone (system tzdata), and
    /// follow its clock through daylight-saving changes.
    #[arg(
        long,
        value_name = "ZONE",
        env = "CRONTAP_PERIOD_TZ",
        default_value = "UTC"
    )]
    pub period_tz: String,

    /// Where locks, keys and history live [default: /var/lib/crontap-run for root, else
    /// $XDG_STATE_HOME/crontap-run or ~/.local/state/crontap-run].
    #[arg(long, value_name = "DIR", env = "CRONTAP_STATE_DIR")]
    pub state_dir: Option<PathBuf>,

    #[command(flatten)]
    pub state: StateUrlArgs,

    /// How long a key or lock on a state server outlives a holder that stopped renewing it
    /// (a host that died); held keys are renewed every third of it.
    #[arg(long, value_name = "DUR", env = "CRONTAP_STATE_LEASE", default_value = "60s",
          value_parser = duration)]
    pub state_lease: Duration,

    /// Bound on all state store work before the command starts: connecting (to every host
    /// of a URL together), claiming, retries.
    #[arg(long, value_name = "DUR", env = "CRONTAP_STATE_TIMEOUT", default_value = "10s",
          value_parser = duration)]
    pub state_timeout: Duration,

    /// What a run does when it cannot renew its lease on a state server: `stop` its command
    /// before the lease can run out (exit 125), or `continue` and let the fencing token
    /// guard what the command writes.
    #[arg(long, value_name = "stop|continue", default_value = "stop")]
    pub on_lease_lost: OnLeaseLost,

    /// What becomes of the command's output: `pass` it on as it comes, or hold it and print
    /// it only if the run fails, times out or is stopped (`on-failure`, as chronic does), so
    /// that cron mails only failures. Held output past 64 KiB a stream goes to an unnamed
    /// file in $TMPDIR.
    #[arg(
        long,
        value_name = "pass|on-failure",
        env = "CRONTAP_OUTPUT",
        value_enum,
        default_value_t = OutputMode::Pass
    )]
    pub output: OutputMode,

    /// Run the command and print what would be sent (URL redacted); send nothing.
    #[arg(long)]
    pub dry_run: bool,

    /// Write Prometheus metrics for the job to DIR/crontap-run-<job>.prom after every run
    /// (for node_exporter's textfile collector).
    #[arg(long, value_name = "DIR", env = "CRONTAP_METRICS_DIR")]
    pub metrics_dir: Option<PathBuf>,

    /// After every run, put the run's gauges to the Prometheus Pushgateway at URL
    /// (PUT URL/metrics/job/<job>, replacing the job's group), beside the end report and
    /// within the same ping budget; a failed push is one line and never changes the exit
    /// status. For a pod or container with no textfile collector. The URL may carry a user
    /// and password (https://user:pw@gateway: basic auth): a secret, never printed.
    #[arg(long, value_name = "URL", env = "CRONTAP_METRICS_PUSH_URL")]
    pub metrics_push: Option<String>,

    /// Whether `metrics_push` was given on the command line (where `ps` shows it).
    #[arg(skip)]
    pub push_on_command_line: bool,

    /// How often the job is expected to succeed (its heartbeat's period), exported with the
    /// metrics (crontap_run_expected_period_seconds) for alert rules: a job whose last
    /// success is older than this and --expect-grace is late.
    #[arg(long, value_name = "DUR", value_parser = duration)]
    pub expect_every: Option<Duration>,

    /// Grace after --expect-every before a job counts as late (its heartbeat's grace: the
    /// longest run plus any jitter, as `plan` computes it); exported as
    /// crontap_run_expected_grace_seconds. Default: none.
    #[arg(long, value_name = "DUR", value_parser = duration, requires = "expect_every")]
    pub expect_grace: Option<Duration>,

    /// Silence crontap-run's own warnings (errors still print).
    #[arg(short, long, conflicts_with = "verbose")]
    pub quiet: bool,

    /// Print crontap-run's debug lines on stderr; twice for trace lines.
    #[arg(short, long, action = clap::ArgAction::Count)]
    pub verbose: u8,

    /// Format of crontap-run's own log lines.
    #[arg(long, value_name = "FORMAT", value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
}

/// Where the state store is, for a run and for `history`. The command line wins over the
/// environment; `config` applies that, and warns about a password on the command line.
#[derive(Debug, Args)]
pub struct StateUrlArgs {
    /// State store URL: file:///DIR (same as --state-dir), or postgres://… or redis://… to
    /// share locks and keys between hosts (crontap-run-full builds). Every user of the host
    /// can read it in `ps`: give a URL that holds a password with --state-url-file or in the
    /// environment.
    #[arg(
        long,
        value_name = "URL",
        env = "CRONTAP_STATE_URL",
        hide_env_values = true
    )]
    pub state_url: Option<String>,

    /// File that holds the state store URL (a mounted secret). An option given on the command
    /// line wins over the environment; in the environment, this wins over CRONTAP_STATE_URL.
    #[arg(long, value_name = "PATH", env = "CRONTAP_STATE_URL_FILE")]
    pub state_url_file: Option<PathBuf>,

    /// Whether `state_url` was given on the command line (not in the environment).
    #[arg(skip)]
    pub url_on_command_line: bool,

    /// Whether `state_url_file` was given on the command line (not in the environment).
    #[arg(skip)]
    pub file_on_command_line: bool,
}

impl StateUrlArgs {
    /// Whether the URL and the URL file were given on the command line: clap's derive
    /// keeps only the values.
    fn sources(matches: &ArgMatches) -> (bool, bool) {
        let typed = |id: &str| matches.value_source(id) == Some(ValueSource::CommandLine);
        (typed("state_url"), typed("state_url_file"))
    }

    /// Notes which values came from the command line ([`StateUrlArgs::sources`]).
    fn set_sources(&mut self, (url, file): (bool, bool)) {
        self.url_on_command_line = url;
        self.file_on_command_line = file;
    }
}

/// `--protocol`: how runs are reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ProtocolChoice {
    /// healthchecks for a URL on hc-ping.com, crontap for any other.
    Auto,
    Crontap,
    Healthchecks,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OnLeaseLost {
    Stop,
    Continue,
}

/// `--output`: where the command's output goes while it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputMode {
    /// Passed through as the command writes it.
    Pass,
    /// Held, and printed at the end only if the run did not succeed.
    OnFailure,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

impl Cli {
    /// Parses the arguments with `command`: [`Cli::command`] as `config` adjusts it to the
    /// environment. `Ok(None)` means help or version was asked for and printed. A usage
    /// error comes back as one line naming the option, without clap's usage block.
    pub(crate) fn parse_with(
        command: clap::Command,
        args: impl IntoIterator<Item = OsString>,
    ) -> anyhow::Result<Option<Cli>> {
        let parsed = command
            .try_get_matches_from(args)
            .and_then(Cli::from_matches);
        match parsed {
            Ok(cli) => Ok(Some(cli)),
            Err(err) if !err.use_stderr() => {
                // Help or version on a closed pipe (`| head`) is not worth an error.
                let _ = err.print();
                Ok(None)
            }
            Err(err) => Err(anyhow::anyhow!("{}", one_line_error(&err))),
        }
    }

    /// The parsed values, with where the state store options came from (read first: the
    /// values are moved out of `matches`, which `from_arg_matches` would copy whole).
    fn from_matches(mut matches: ArgMatches) -> Result<Cli, clap::Error> {
        let run_sources = StateUrlArgs::sources(&matches);
        let push_typed = matches.value_source("metrics_push") == Some(ValueSource::CommandLine);
        let sub_sources = match matches.subcommand() {
            Some(("history", sub)) => Some(StateUrlArgs::sources(sub)),
            _ => None,
        };
        let mut cli = Cli::from_arg_matches_mut(&mut matches)?;
        cli.run.state.set_sources(run_sources);
        cli.run.push_on_command_line = push_typed;
        if let (Some(Command::History(args)), Some(sources)) = (&mut cli.subcommand, sub_sources) {
            args.state.set_sources(sources);
        }
        Ok(cli)
    }
}

/// Every environment variable an option reads, of the run and of every subcommand, each
/// once and sorted: `config` treats each of them set to the empty string as unset, and the
/// tests set each of them so, so that a variable given to an option later is covered too.
pub fn env_names() -> Vec<String> {
    fn walk(command: &clap::Command, names: &mut Vec<String>) {
        let own = command.get_arguments().filter_map(clap::Arg::get_env);
        names.extend(own.map(|name| name.to_string_lossy().into_owned()));
        for sub in command.get_subcommands() {
            walk(sub, names);
        }
    }
    let mut command = Cli::command();
    // Defines the subcommands' options too.
    command.build();
    let mut names = Vec::new();
    walk(&command, &mut names);
    names.sort();
    names.dedup();
    names
}

/// clap's error text is several lines; keep the first, with any list it introduces.
fn one_line_error(err: &clap::Error) -> String {
    let text = err.to_string();
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.next().unwrap_or("invalid arguments");
    let mut out = first.strip_prefix("error: ").unwrap_or(first).to_owned();
    if out.ends_with(':') {
        let items: Vec<&str> = lines.take_while(|l| !l.starts_with("Usage:")).collect();
        out = format!("{} {}", out, items.join(", "));
    }
    format!("{out} (see crontap-run --help)")
}

/// Longest duration any option takes: more is surely a mistake, and stays far from the
/// limits of the clock's arithmetic.
const MAX_DURATION: Duration = Duration::from_secs(10 * 366 * 24 * 3600);

/// Parses a humantime duration (`90s`, `15m`, `1h 30m`); zero is refused because no
/// option here means anything with it.
fn duration(s: &str) -> Result<Duration, String> {
    match humantime::parse_duration(s) {
        Ok(d) if d.is_zero() => Err("must be greater than zero".into()),
        Ok(d) if d > MAX_DURATION => Err("must be at most 10 years".into()),
        Ok(d) => Ok(d),
        Err(e) => Err(format!("{e} (expected a duration like 90s, 15m or 1h 30m)")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn subcommands_keep_their_descriptions() {
        let described = |command: &clap::Command| -> Vec<(String, String, String)> {
            command
                .get_subcommands()
                .map(|sub| {
                    let text = |t: Option<&clap::builder::StyledStr>| {
                        t.map(ToString::to_string).unwrap_or_default()
                    };
                    (
                        sub.get_name().to_owned(),
                        text(sub.get_about()),
                        text(sub.get_long_about()),
                    )
                })
                .collect()
        };
        let mut command = Cli::command();
        let before = described(&command);
        command.build();
        assert_eq!(described(&command), before);
        assert!(before.iter().all(|(_, about, _)| !about.is_empty()));
    }

    #[test]
    fn errors_are_one_line() {
        let parse = |args: &[&str]| {
            Cli::parse_with(Cli::command(), args.iter().copied().map(OsString::from))
        };
        let err = parse(&["crontap-run", "--msg-max", "9999", "--", "true"]).unwrap_err();
        let text = err.to_string();
        assert!(!text.contains('\n') && text.contains("--msg-max"), "{text}");
        let err = parse(&["crontap-run"]).unwrap_err().to_string();
        assert!(!err.contains('\n') && err.contains("<COMMAND>"), "{err}");
    }

    #[test]
    fn durations() {
        assert_eq!(duration("1h 30m"), Ok(Duration::from_secs(5400)));
        assert!(duration("0s").is_err());
        assert!(duration("soon").is_err());
        assert!(duration("500000000000years").is_err());
    }
}
