//! `heartbeat create` and each job of `plan --create`: the heartbeat made on the service,
//! its ping URL written to its file. A file that already holds a URL means the heartbeat
//! exists: on Crontap nothing is sent; on Healthchecks the check is found by its name
//! (`unique`), and the file is left as it is when it holds that check's URL. Nothing is
//! written unless the service answered 2xx with a usable URL.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result};

use crate::cli::Service;
use crate::heartbeat::api::Api;
use crate::heartbeat::url_file::{Held, UrlFile};
use crate::heartbeat::{CreateConfig, Wanted, crontap, healthchecks, say};
use crate::sanitize;

/// What became of one heartbeat.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Made now, its URL written.
    Created,
    /// It existed, and the file holds its URL: nothing changed.
    Existed,
    /// The file held another URL than the service's check of that name: replaced.
    Replaced,
    /// The service had a check of that name, and the file none: its URL written.
    Found,
}

/// Runs `heartbeat create`.
pub fn run(config: &CreateConfig) -> Result<ExitCode> {
    let wanted = Wanted::of(config)?;
    create(&config.api, &wanted, &config.url_file)?;
    Ok(ExitCode::SUCCESS)
}

/// Creates `wanted` unless it exists, with its URL in the file at `path`; says what it did
/// on stderr (never the URL).
pub fn create(api: &Api, wanted: &Wanted, path: &Path) -> Result<Outcome> {
    let file = UrlFile::new(path)?;
    let held = file.hold()?;
    let outcome = match made(api, wanted, &file, &held) {
        Ok(outcome) => outcome,
        Err(err) => {
            file.give_up(held);
            return Err(err);
        }
    };
    drop(held);
    tell(api, wanted, &file, outcome);
    Ok(outcome)
}

/// The heartbeat made, or found, and its URL in `file`, whose directory is `held`.
fn made(api: &Api, wanted: &Wanted, file: &UrlFile, held: &Held) -> Result<Outcome> {
    let existing = file.read(held)?;
    Ok(match (api.service, existing) {
        (Service::Crontap, Some(_)) => Outcome::Existed,
        (Service::Crontap, None) => {
            let url = crontap::create(api, wanted)?;
            file.write(held, &url)
                .context("the heartbeat was created, but its URL not kept")?;
            Outcome::Created
        }
        (Service::Healthchecks, existing) => {
            let made = healthchecks::create(api, wanted)?;
            let same = existing
                .as_ref()
                .is_some_and(|old| old.success() == made.url.success());
            if same {
                Outcome::Existed
            } else {
                file.write(held, &made.url)
                    .context("the check was created, but its URL not kept")?;
                match existing {
                    Some(_) => Outcome::Replaced,
                    None if made.created => Outcome::Created,
                    None => Outcome::Found,
                }
            }
        }
    })
}

/// Says on stderr what became of the heartbeat (never its URL).
fn tell(api: &Api, wanted: &Wanted, file: &UrlFile, outcome: Outcome) {
    let shown = file.shown();
    let name = sanitize::one_line(&wanted.name);
    let service = api.name();
    let grace = format!("grace {} min", wanted.grace_minutes);
    let timing = match &wanted.schedule {
        Some((schedule, tz)) if api.service == Service::Healthchecks => {
            format!("schedule {schedule} ({tz}), {grace}")
        }
        _ => format!("period {} min, {grace}", wanted.period_minutes),
    };
    say(&match outcome {
        Outcome::Created => {
            format!("created heartbeat {name} on {service} ({timing}); its URL is in {shown}")
        }
        Outcome::Existed => format!(
            "heartbeat {name} exists on {service} and {shown} holds its URL; nothing changed"
        ),
        Outcome::Found => {
            format!("heartbeat {name} existed on {service} ({timing}); its URL is now in {shown}")
        }
        Outcome::Replaced => format!(
            "heartbeat {name} on {service} has another URL than {shown} held; the file now \
             holds the check's URL"
        ),
    });
}
