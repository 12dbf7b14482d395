//! `crontap-run heartbeat create|verify|pings` and `plan --create`: the steps of Crontap's
//! heartbeat workflow a host can do itself. Create the heartbeat with the period and grace
//! `plan` computes and keep its ping URL in a 0600 file ([`create`], [`url_file`]); ping it
//! and read back that the service recorded the ping ([`verify`]); list what the service saw
//! ([`pings`]); and all of that for every job of a crontab ([`plan_create`]).
//!
//! The services' APIs: [`crontap`] (the REST call of Crontap's heartbeat guide) and
//! [`healthchecks`] (the Management API v3), their answers read into one [`reply`] type,
//! over [`api`], which sends on the run's network
//! client and says why a call failed in one line. The keys ([`keys`]) and the ping URL are
//! secrets: no message, log line or `Debug` output holds them. `config` reads the options
//! and the keys; nothing here reads the environment.

pub mod api;
pub mod create;
pub mod crontap;
pub mod healthchecks;
pub mod keys;
pub mod pings;
pub mod plan_create;
pub mod reply;
pub mod url_file;
pub mod verify;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Result;

use crate::plan::cron::Schedule;
use crate::plan::{self, Planned, Zone};
use crate::report::check::CheckConfig;
use crate::report::heartbeat::HeartbeatUrl;
use api::Api;

/// What `crontap-run heartbeat` was asked, validated by `config`.
pub enum Action {
    Create(Box<CreateConfig>),
    Verify(Box<VerifyConfig>),
    Pings(Box<PingsConfig>),
}

/// `heartbeat create`.
pub struct CreateConfig {
    pub api: Api,
    pub name: String,
    pub timing: Timing,
    /// `--grace`, else from the history of `job`.
    pub grace: Option<Duration>,
    /// The job whose recorded runs set the grace, if any.
    pub job: Option<String>,
    pub jitter: Duration,
    pub state_dir: Option<PathBuf>,
    pub url_file: PathBuf,
}

/// How the period is set.
pub enum Timing {
    /// `--schedule` (as written) in `--tz`.
    Schedule {
        text: String,
        schedule: Schedule,
        zone: Zone,
    },
    /// `--period`.
    Period(Duration),
}

/// `heartbeat verify`.
pub struct VerifyConfig {
    pub api: Api,
    /// The ping, as `check` sends it (its URL from `--url-file`).
    pub ping: CheckConfig,
}

/// `heartbeat pings`.
pub struct PingsConfig {
    pub api: Api,
    /// The ping URL from `--url-file` (`None` on Crontap, which has nothing to list).
    pub url: Option<HeartbeatUrl>,
    /// `--day`, `YYYY-MM-DD`.
    pub day: Option<String>,
    pub json: bool,
}

/// The heartbeat to create: the numbers the service gets.
pub struct Wanted {
    pub name: String,
    pub period_minutes: u64,
    pub grace_minutes: u64,
    /// The schedule and zone name (Healthchecks reads cron schedules itself); `None` with
    /// `--period`, or for a schedule Healthchecks cannot read.
    pub schedule: Option<(String, String)>,
}

impl Wanted {
    /// The heartbeat `plan` planned (`plan --create`).
    pub fn planned(planned: &Planned) -> Wanted {
        Wanted {
            name: planned.name.clone(),
            period_minutes: planned.period_minutes(),
            grace_minutes: planned.grace.minutes,
            schedule: readable(&planned.schedule, &planned.zone.name),
        }
    }

    /// The heartbeat `heartbeat create` asks for: the period from the schedule's longest
    /// gap (or `--period`), the grace from the job's history and jitter (or `--grace`).
    fn of(config: &CreateConfig) -> Result<Wanted> {
        let job = config.job.as_deref();
        let state_dir = config.state_dir.as_deref();
        let (period_minutes, history_grace, schedule) = match &config.timing {
            Timing::Schedule {
                text,
                schedule,
                zone,
            } => {
                let planned = plan::plan_one(schedule, text, zone, job, config.jitter, state_dir)
                    .map_err(|e| anyhow::anyhow!("--schedule {:?}: {e}", text))?;
                let numbers = (planned.period_minutes(), planned.grace.minutes);
                (numbers.0, numbers.1, readable(text, &zone.name))
            }
            Timing::Period(period) => {
                let grace = plan::grace(job, config.jitter, state_dir)?;
                (minutes(*period), grace.minutes, None)
            }
        };
        Ok(Wanted {
            name: config.name.clone(),
            period_minutes,
            grace_minutes: config.grace.map_or(history_grace, minutes),
            schedule,
        })
    }
}

/// The schedule and zone as Healthchecks gets them, if it can read the schedule: its cron
/// parser follows Debian's cron, which has no cronie `~` (a value picked at random when the
/// crontab is loaded), so such a schedule is refused there. A heartbeat for it gets the
/// period `plan` measured (the longest gap of any value cron could pick) instead.
fn readable(schedule: &str, zone: &str) -> Option<(String, String)> {
    (!schedule.contains('~')).then(|| (schedule.to_owned(), zone.to_owned()))
}

/// Whole minutes, rounded up, at least one.
fn minutes(duration: Duration) -> u64 {
    (duration.as_secs() + u64::from(duration.subsec_nanos() > 0))
        .div_ceil(60)
        .max(1)
}

/// Runs `crontap-run heartbeat`.
pub fn run(action: Action) -> Result<ExitCode> {
    match action {
        Action::Create(config) => create::run(&config),
        Action::Verify(config) => verify::run(&config),
        Action::Pings(config) => pings::run(&config),
    }
}

/// `text` as a JSON string, quotes included. Written here rather than derived: serde's
/// serialisers for the few small bodies sent were code of their own in the static binary.
pub fn json_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            // Every control character, C1 and DEL too: a service's text must not reach a
            // terminal as an escape sequence, even through `--json`.
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A closed standard stream is no reason to fail.
fn say(text: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "crontap-run: {text}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_strings_read_back() {
        for text in [
            "plain",
            "a \"quoted\" \\ name",
            "tab\there\u{1}",
            "é ü",
            "\u{9b}31m\u{7f}",
        ] {
            let json = json_string(text);
            assert!(!json.chars().any(char::is_control), "{json:?}");
            let read: String = serde_json::from_str(&json).unwrap();
            assert_eq!(read, text);
        }
    }

    #[test]
    fn minutes_round_up() {
        assert_eq!(minutes(Duration::from_secs(1)), 1);
        assert_eq!(minutes(Duration::from_secs(60)), 1);
        assert_eq!(minutes(Duration::from_secs(61)), 2);
        assert_eq!(minutes(Duration::from_millis(60_001)), 2);
        assert_eq!(minutes(Duration::from_secs(3 * 86_400)), 4320);
    }
}
