//! `crontap-run plan`: the heartbeat a cron schedule needs (period and grace), and a
//! crontab with every job wrapped in crontap-run.
//!
//! The period is the longest real gap between two starts ([`gaps`], over a schedule
//! [`cron`] reads); the grace the longest run recorded in the job's history plus its
//! jitter. `--crontab` ([`crontab`]) does that for every line and wraps its command
//! ([`shell`]). Nothing here sends, installs or writes anything, and nothing of it runs on
//! a job's run: `app` reaches it only for the `plan` subcommand.

pub mod cron;
pub mod crontab;
pub mod gaps;
pub mod names;
pub mod report;
pub mod shell;
pub mod words;

use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result, anyhow};
use jiff::tz::TimeZone;

use crate::sanitize;
use crate::state::history::{self, RunResult};
use cron::Schedule;
use gaps::{Gaps, Sparse};

/// `--url-dir` when not given.
pub const DEFAULT_URL_DIR: &str = "/etc/crontap";

/// What `crontap-run plan` was asked, validated by `config`.
pub struct PlanConfig {
    pub input: Input,
    /// Where runs are recorded; `None` when there is no default (no HOME) and none given.
    pub state_dir: Option<PathBuf>,
    pub json: bool,
}

pub enum Input {
    Schedule {
        text: String,
        schedule: Schedule,
        zone: Zone,
        job: Option<String>,
        jitter: Duration,
    },
    Crontab {
        /// `None`: standard input.
        path: Option<PathBuf>,
        system: bool,
        /// `--tz`: the zone of the lines before any `CRON_TZ` (else the system's).
        zone: Option<Zone>,
        url_dir: PathBuf,
        /// The crontap-run the wrapped lines run (`--bin`, else this binary).
        bin: PathBuf,
    },
}

/// A time zone and the name it is shown by.
#[derive(Debug, Clone)]
pub struct Zone {
    pub tz: TimeZone,
    pub name: String,
}

/// Where the system's zone is set, as cron (through the C library) reads it.
const LOCALTIME: &str = "/etc/localtime";

impl Zone {
    /// An IANA zone from the system's tzdata.
    pub fn named(name: &str) -> Result<Zone> {
        let tz = TimeZone::get(name).map_err(|_| {
            anyhow!(
                "no time zone {:?} in the system's time zone database (an IANA name such as \
                 Europe/Berlin; install tzdata if it is missing)",
                sanitize::one_line(name)
            )
        })?;
        // jiff finds a zone whatever the case of its name; the C library, and so cron, only
        // by its exact name (it reads `europe/berlin` as UTC).
        if let Some(exact) = tz.iana_name()
            && exact != name
        {
            return Err(anyhow!(
                "no time zone {:?}: zone names are exact, as cron reads them (did you mean {exact}?)",
                sanitize::one_line(name)
            ));
        }
        Ok(Zone {
            tz,
            name: name.to_owned(),
        })
    }

    /// The zone cron runs in: /etc/localtime (cron does not see a user's `TZ`), by its IANA
    /// name when it links into the tzdata, else read as the file it is; UTC without one, as
    /// the C library does.
    pub fn system() -> Zone {
        let linked = std::fs::read_link(LOCALTIME).ok().and_then(|target| {
            let target = target.to_str()?.to_owned();
            let (_, name) = target.rsplit_once("zoneinfo/")?;
            Zone::named(name).ok()
        });
        if let Some(zone) = linked {
            return zone;
        }
        let read = std::fs::read(LOCALTIME).ok();
        match read.and_then(|data| TimeZone::tzif(LOCALTIME, &data).ok()) {
            Some(tz) => Zone {
                tz,
                name: LOCALTIME.to_owned(),
            },
            None => Zone {
                tz: TimeZone::UTC,
                name: "UTC".to_owned(),
            },
        }
    }
}

/// Runs `crontap-run plan`.
pub fn run(config: PlanConfig) -> Result<ExitCode> {
    let mut out = io::stdout().lock();
    let written = match &config.input {
        Input::Schedule {
            text,
            schedule,
            zone,
            job,
            jitter,
        } => {
            for warning in &schedule.warnings {
                // A closed stderr is no reason to fail.
                let _ = writeln!(io::stderr(), "crontap-run: warning: --schedule: {warning}");
            }
            let state_dir = config.state_dir.as_deref();
            let planned = plan_one(schedule, text, zone, job.as_deref(), *jitter, state_dir)
                .map_err(|e| match e.is::<NoPeriod>() {
                    true => anyhow!("--schedule {:?}: {e}", sanitize::one_line(text)),
                    false => e,
                })?;
            match config.json {
                true => report::write_json(&mut out, &planned),
                false => report::write_human(&mut out, &planned),
            }
        }
        Input::Crontab { .. } => {
            let rewritten = rewrite_crontab(&config)?;
            warn_missing_url_files(&rewritten.planned);
            write_rewritten(&mut out, &rewritten, config.json)
        }
    };
    match written.and_then(|()| out.flush()) {
        Err(err) if err.kind() != io::ErrorKind::BrokenPipe => {
            Err(err).context("cannot print the plan")
        }
        _ => Ok(ExitCode::SUCCESS),
    }
}

/// The crontab `--crontab` names, read and wrapped, every job planned (`plan --create`
/// creates their heartbeats from it before printing it); an error for `--schedule`.
pub fn rewrite_crontab(config: &PlanConfig) -> Result<crontab::Rewritten> {
    let Input::Crontab {
        path,
        system,
        zone,
        url_dir,
        bin,
    } = &config.input
    else {
        return Err(anyhow!("no --crontab to rewrite"));
    };
    let text = read_crontab(path.as_deref())?;
    let lines = crontab::Options {
        system: *system,
        zone: zone.clone(),
        url_dir,
        bin,
    };
    let state_dir = config.state_dir.as_deref();
    let rewritten = crontab::rewrite(&text, &lines, &|schedule, text, zone, job| {
        plan_one(schedule, text, zone, Some(job), Duration::ZERO, state_dir)
    })?;
    for warning in &rewritten.warnings {
        // A closed stderr is no reason to fail.
        let _ = writeln!(io::stderr(), "crontap-run: warning: {warning}");
    }
    Ok(rewritten)
}

/// The wrapped crontab, or with `--json` the list of its heartbeats.
pub fn write_rewritten(
    out: &mut impl Write,
    rewritten: &crontab::Rewritten,
    json: bool,
) -> io::Result<()> {
    match json {
        true => report::write_json_list(out, &rewritten.planned),
        false => out.write_all(rewritten.text.as_bytes()),
    }
}

/// One line on stderr when URL files the wrapped lines name are not there yet: a run whose
/// `--url-file` is missing stops with exit 125 before its command, so each must be written
/// before the crontab is loaded. (Only looked at; `plan` writes nothing.)
fn warn_missing_url_files(planned: &[Planned]) {
    let named: Vec<&str> = planned
        .iter()
        .filter_map(|p| p.url_file.as_deref())
        .collect();
    let missing: Vec<&str> = named
        .iter()
        .copied()
        .filter(|file| std::fs::symlink_metadata(file).is_err())
        .collect();
    if let Some(first) = missing.first() {
        // A closed stderr is no reason to fail.
        let _ = writeln!(
            io::stderr(),
            "crontap-run: {} of the {} URL files the wrapped lines name do not exist yet \
             (first: {}); write each job's heartbeat URL to its file before loading this \
             crontab, or its runs stop with exit 125",
            missing.len(),
            named.len(),
            sanitize::one_line(first)
        );
    }
}

/// The most a crontab given to `--crontab` may hold.
const MAX_CRONTAB: u64 = 1024 * 1024;

/// The crontab's text, from a file or standard input.
fn read_crontab(path: Option<&Path>) -> Result<String> {
    let (source, shown): (Box<dyn io::Read>, String) = match path {
        Some(path) => {
            let file = std::fs::File::open(path)
                .with_context(|| format!("--crontab: cannot read {}", sanitize::path(path)))?;
            (Box::new(file), sanitize::path(path))
        }
        None => (Box::new(io::stdin()), "standard input".to_owned()),
    };
    // A crontab is a few kilobytes; one byte past the bound is enough to know it is no
    // crontab (`/dev/zero`, a log file given by mistake), without reading it all.
    let mut bytes = Vec::new();
    io::Read::take(source, MAX_CRONTAB + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("--crontab: cannot read {shown}"))?;
    if bytes.len() as u64 > MAX_CRONTAB {
        return Err(anyhow!(
            "--crontab: {shown} is larger than 1 MiB, which no crontab is"
        ));
    }
    String::from_utf8(bytes).map_err(|_| anyhow!("--crontab: {shown} is not UTF-8 text"))
}

/// Why a schedule has no period: it fires never, or once.
#[derive(Debug)]
pub struct NoPeriod(Sparse);

impl std::fmt::Display for NoPeriod {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self.0 {
            Sparse::Never => "never fires: no day of any year has such a date",
            Sparse::Once => "fires only once in 56 years: no heartbeat period fits",
        })
    }
}

impl std::error::Error for NoPeriod {}

impl NoPeriod {
    /// The schedule never fires at all.
    pub fn never(&self) -> bool {
        matches!(self.0, Sparse::Never)
    }
}

/// One heartbeat, planned.
pub struct Planned {
    pub name: String,
    pub schedule: String,
    pub zone: Zone,
    pub gaps: Gaps,
    pub grace: Grace,
    /// With `--crontab`: the wrapped command and the URL file.
    pub command: Option<String>,
    pub url_file: Option<String>,
}

/// The grace and what it is based on.
pub struct Grace {
    pub minutes: u64,
    /// The longest run recorded, and how many runs there are.
    pub longest: Option<Duration>,
    pub runs: u64,
    pub jitter: Duration,
    /// The job whose history was read, if any.
    pub job: Option<String>,
}

/// Plans the heartbeat for `schedule` (written `text`) in `zone`; `job` names the history
/// to read. An error says why the schedule has no period (the caller names where it is).
pub fn plan_one(
    schedule: &Schedule,
    text: &str,
    zone: &Zone,
    job: Option<&str>,
    jitter: Duration,
    state_dir: Option<&Path>,
) -> Result<Planned> {
    let now = jiff::Timestamp::now();
    let today = zone.tz.to_offset(now).to_datetime(now).date();
    let gaps = measured(schedule, text, zone, today)?;
    let grace = grace(job, jitter, state_dir)?;
    Ok(Planned {
        name: job.unwrap_or(text).to_owned(),
        schedule: text.to_owned(),
        zone: zone.clone(),
        gaps,
        grace,
        command: None,
        url_file: None,
    })
}

thread_local! {
    /// The gaps of the schedules measured so far, by the schedule as written, its zone and
    /// the day: a crontab's lines often share a schedule, and one with `~` fields takes a
    /// second or more to measure (every value cron could pick is walked), which made a
    /// crontab of many such lines take minutes.
    static MEASURED: std::cell::RefCell<std::collections::HashMap<(String, String, jiff::civil::Date), Gaps>> =
        Default::default();
}

/// [`worst_gaps`], measured once per schedule text, zone and day.
fn measured(
    schedule: &Schedule,
    text: &str,
    zone: &Zone,
    today: jiff::civil::Date,
) -> Result<Gaps> {
    let key = (text.to_owned(), zone.name.clone(), today);
    if let Some(gaps) = MEASURED.with_borrow(|m| m.get(&key).cloned()) {
        return Ok(gaps);
    }
    let gaps = worst_gaps(schedule, &zone.tz, today)?;
    MEASURED.with_borrow_mut(|m| m.insert(key, gaps.clone()));
    Ok(gaps)
}

/// The most schedules a `~` schedule may stand for: each is walked over the horizon.
const MAX_PICKS: u64 = 1440;

/// The gaps of `schedule`; for one with `~` values, the worst over every value cron could
/// pick: the longest of the longest gaps and the shortest of the shortest.
fn worst_gaps(schedule: &Schedule, zone: &TimeZone, today: jiff::civil::Date) -> Result<Gaps> {
    if schedule.selects_no_time() {
        return Err(NoPeriod(Sparse::Never).into());
    }
    if !schedule.has_random() {
        return Ok(gaps::compute(schedule, zone, today).map_err(NoPeriod)?);
    }
    if schedule.pick_count() > MAX_PICKS {
        return Err(anyhow!(
            "its `~` fields could pick {} different schedules; at most {MAX_PICKS} are \
             measured (put `~` in fewer fields)",
            schedule.pick_count()
        ));
    }
    let mut worst: Option<Gaps> = None;
    for pick in schedule.picks() {
        let gaps = match gaps::compute(&pick, zone, today) {
            Ok(gaps) => gaps,
            // A pick that never fires (`~` in a February of 30 days): no heartbeat can
            // follow a line that may never run.
            Err(sparse) => return Err(NoPeriod(sparse).into()),
        };
        worst = Some(match worst {
            None => gaps,
            Some(w) => Gaps {
                shortest_seconds: w.shortest_seconds.min(gaps.shortest_seconds),
                longest: match gaps.longest.seconds() > w.longest.seconds() {
                    true => gaps.longest,
                    false => w.longest,
                },
            },
        });
    }
    worst.ok_or_else(|| NoPeriod(Sparse::Never).into())
}

/// The grace: the longest recorded run of `job` (any result but skipped: a failure pings at
/// its end too) plus the jitter, rounded up to whole minutes, at least one.
pub fn grace(job: Option<&str>, jitter: Duration, state_dir: Option<&Path>) -> Result<Grace> {
    let entries = match (job, state_dir) {
        (Some(job), Some(dir)) => history::read(dir, Some(job), usize::MAX)
            .with_context(|| format!("cannot read the recorded runs of {job}"))?,
        _ => Vec::new(),
    };
    let ran: Vec<u64> = entries
        .iter()
        .filter(|e| e.result != RunResult::Skipped)
        .map(|e| e.duration_ms)
        .collect();
    let longest = ran.iter().max().map(|&ms| Duration::from_millis(ms));
    let total = longest.unwrap_or_default() + jitter;
    let minutes = total.as_millis().div_ceil(60_000).max(1) as u64;
    Ok(Grace {
        minutes,
        longest,
        runs: ran.len() as u64,
        jitter,
        job: job.map(str::to_owned),
    })
}
