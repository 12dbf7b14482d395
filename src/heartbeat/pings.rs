//! `heartbeat pings`: what the service recorded of the heartbeat's pings, oldest first:
//! time, kind (start, success, fail, log …), exit status, duration and the sender's
//! address, as a table or (`--json`) a list of objects. Healthchecks lists them
//! (`GET /api/v3/checks/<uuid>/pings/`); Crontap's REST API, as far as its guide goes,
//! has no way to read them.

use std::io::{self, Write};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};

use crate::cli::Service;
use crate::heartbeat::healthchecks::{self, Ping};
use crate::heartbeat::{PingsConfig, json_string};
use crate::sanitize;

/// Runs `heartbeat pings`.
pub fn run(config: &PingsConfig) -> Result<ExitCode> {
    let (Service::Healthchecks, Some(url)) = (config.api.service, &config.url) else {
        bail!(
            "Crontap's REST API documents no way to read a heartbeat's pings; see them on \
             Crontap's dashboard (`heartbeat pings` works with --service healthchecks)"
        );
    };
    let api = &config.api;
    let uuid = healthchecks::uuid_of(url)?;
    let mut pings = healthchecks::pings(api, &uuid, url)?;
    pings.reverse();
    if let Some(day) = &config.day {
        pings.retain(|p| {
            p.date
                .as_deref()
                .is_some_and(|d| d.starts_with(day.as_str()))
        });
    }
    let mut out = io::stdout().lock();
    let written = match config.json {
        true => write_json(&mut out, &pings),
        false => write_table(&mut out, &pings),
    };
    match written.and_then(|()| out.flush()) {
        Err(err) if err.kind() != io::ErrorKind::BrokenPipe => {
            Err(err).context("cannot print the pings")
        }
        _ => Ok(ExitCode::SUCCESS),
    }
}

fn text(value: &Option<String>) -> String {
    sanitize::one_line(value.as_deref().unwrap_or("-"))
}

fn write_table(out: &mut impl Write, pings: &[Ping]) -> io::Result<()> {
    writeln!(
        out,
        "{:<32}  {:<8}  {:>4}  {:>10}  SENDER",
        "TIME", "KIND", "EXIT", "DURATION"
    )?;
    for ping in pings {
        let exit = ping.exitstatus.map_or("-".to_owned(), |e| e.to_string());
        let duration = ping.duration.map_or("-".to_owned(), |d| format!("{d:.3}s"));
        writeln!(
            out,
            "{:<32}  {:<8}  {exit:>4}  {duration:>10}  {}",
            text(&ping.date),
            text(&ping.kind),
            text(&ping.remote_addr)
        )?;
    }
    if pings.is_empty() {
        writeln!(out, "(no pings recorded)")?;
    }
    Ok(())
}

/// The pings as a JSON list of objects: `n`, `time`, `kind`, `exitStatus`, `durationMs`
/// and `sender`, each `null` when the service gave none.
fn write_json(out: &mut impl Write, pings: &[Ping]) -> io::Result<()> {
    let text = |v: &Option<String>| v.as_deref().map_or("null".to_owned(), json_string);
    let number = |v: Option<i64>| v.map_or("null".to_owned(), |n| n.to_string());
    let items: Vec<String> = pings
        .iter()
        .map(|p| {
            format!(
                "{{\"n\":{},\"time\":{},\"kind\":{},\"exitStatus\":{},\"durationMs\":{},\"sender\":{}}}",
                number(p.n.map(|n| n as i64)),
                text(&p.date),
                text(&p.kind),
                number(p.exitstatus),
                number(p.duration.map(|d| (d * 1000.0).round() as i64)),
                text(&p.remote_addr)
            )
        })
        .collect();
    writeln!(out, "[{}]", items.join(","))
}
