//! What `plan` prints: the heartbeat's period and grace with the reasons for them, as text
//! or as JSON whose first fields are Crontap's `create_heartbeat` arguments.

use std::io::{self, Write};

use jiff::Timestamp;
use jiff::civil::DateTime;
use jiff::tz::Offset;
use serde::Serialize;

use crate::plan::Planned;
use crate::plan::gaps::Gap;

/// The JSON form of one heartbeat (DESIGN's field names).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Heartbeat<'a> {
    name: &'a str,
    period_minutes: u64,
    grace_minutes: u64,
    schedule: &'a str,
    tz: &'a str,
    longest_gap: LongestGap,
    shortest_gap_minutes: u64,
    runs_recorded: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    command: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    url_file: Option<&'a str>,
}

#[derive(Serialize)]
struct LongestGap {
    from: String,
    to: String,
    minutes: u64,
}

/// Whole minutes, rounded up.
fn minutes(seconds: i64) -> u64 {
    (seconds.max(0) as u64).div_ceil(60)
}

impl Planned {
    pub fn period_minutes(&self) -> u64 {
        minutes(self.gaps.longest.seconds())
    }

    /// `at` on the zone's clock.
    fn local(&self, at: Timestamp) -> Local {
        let info = self.zone.tz.to_offset_info(at);
        Local {
            civil: info.offset().to_datetime(at),
            offset: info.offset(),
            abbreviation: info.abbreviation().to_owned(),
        }
    }

    fn json(&self) -> Heartbeat<'_> {
        let rfc3339 = |at| {
            let z = self.local(at).civil;
            let offset = self.local(at).offset.seconds();
            let sign = if offset < 0 { '-' } else { '+' };
            let offset = offset.unsigned_abs() / 60;
            format!(
                "{}T{:02}:{:02}:{:02}{sign}{:02}:{:02}",
                ymd(z.date()),
                z.hour(),
                z.minute(),
                z.second(),
                offset / 60,
                offset % 60
            )
        };
        let longest = &self.gaps.longest;
        Heartbeat {
            name: &self.name,
            period_minutes: self.period_minutes(),
            grace_minutes: self.grace.minutes,
            schedule: &self.schedule,
            tz: &self.zone.name,
            longest_gap: LongestGap {
                from: rfc3339(longest.from),
                to: rfc3339(longest.to),
                minutes: self.period_minutes(),
            },
            shortest_gap_minutes: minutes(self.gaps.shortest_seconds),
            runs_recorded: self.grace.runs,
            command: self.command.as_deref(),
            url_file: self.url_file.as_deref(),
        }
    }
}

/// One JSON object and a line feed.
pub fn write_json(out: &mut impl Write, planned: &Planned) -> io::Result<()> {
    serde_json::to_writer(&mut *out, &planned.json())?;
    writeln!(out)
}

/// A JSON list of heartbeats, one a line.
pub fn write_json_list(out: &mut impl Write, planned: &[Planned]) -> io::Result<()> {
    write!(out, "[")?;
    for (i, one) in planned.iter().enumerate() {
        writeln!(out, "{}", if i == 0 { "" } else { "," })?;
        serde_json::to_writer(&mut *out, &one.json())?;
    }
    writeln!(out, "\n]")
}

/// The heartbeat, its period and grace with their reasons, for a person.
pub fn write_human(out: &mut impl Write, planned: &Planned) -> io::Result<()> {
    let period = planned.period_minutes();
    writeln!(
        out,
        "Heartbeat {:?}: period {period} minutes ({}), grace {}.",
        planned.name,
        span(period),
        span(planned.grace.minutes)
    )?;
    writeln!(
        out,
        "Schedule: {} in {}.",
        planned.schedule, planned.zone.name
    )?;
    let gap = &planned.gaps.longest;
    writeln!(
        out,
        "Period: the longest gap between two starts is {}, from {} to {}: {}.",
        span(period),
        shown(&planned.local(gap.from)),
        shown(&planned.local(gap.to)),
        why(planned, gap)
    )?;
    let shortest = minutes(planned.gaps.shortest_seconds);
    if shortest != period {
        writeln!(
            out,
            "  Gaps range from {} to {}: a shorter period would alert in the longest ones.",
            span(shortest),
            span(period)
        )?;
    }
    writeln!(out, "Grace: {}.", grace_reason(planned))
}

/// The comment above a job line left as it is because its schedule never fires.
pub const NEVER_FIRES: &str = "# crontap-run plan: not wrapped: this schedule never fires (no day of any year has such a date)";

/// The comment above a wrapped crontab line.
pub fn comment(planned: &Planned) -> String {
    let period = planned.period_minutes();
    let grace = &planned.grace;
    let runs = match grace.runs {
        0 => "no runs recorded yet".to_owned(),
        1 => "1 run recorded".to_owned(),
        n => format!("{n} runs recorded"),
    };
    format!(
        "# crontap-run plan: heartbeat {}: period {period} min ({}), grace {} min ({runs})",
        planned.name,
        span(period),
        grace.minutes
    )
}

fn grace_reason(planned: &Planned) -> String {
    let grace = &planned.grace;
    let jitter = crate::run::outcome::HumanDuration(grace.jitter);
    // What the grace is made of when no run is recorded.
    let bare = match grace.jitter.is_zero() {
        true => "the floor of 1 minute".to_owned(),
        false => format!("--jitter {jitter}, rounded up to whole minutes (at least 1)"),
    };
    match (&grace.job, grace.longest) {
        (None, _) => format!(
            "{}: no --job given, so no recorded runs: {bare}; give --job to count the job's \
             longest run",
            span(grace.minutes)
        ),
        (Some(job), None) => format!(
            "{}: no runs of {job} are recorded: {bare}; after a few runs, \
             `crontap-run history --stats` is worth a look",
            span(grace.minutes)
        ),
        (Some(job), Some(longest)) => format!(
            "{}: the longest of {} of {job} took {}{}, rounded up to whole minutes",
            span(grace.minutes),
            match grace.runs {
                1 => "1 recorded run".to_owned(),
                n => format!("{n} recorded runs"),
            },
            crate::run::outcome::HumanDuration(longest),
            match grace.jitter.is_zero() {
                true => String::new(),
                false => format!(", plus --jitter {jitter}"),
            }
        ),
    }
}

/// An instant on a zone's clock.
struct Local {
    civil: DateTime,
    offset: Offset,
    abbreviation: String,
}

/// `Fri 2026-12-04 09:00 CET`.
fn shown(at: &Local) -> String {
    format!("{} {}", civil(at.civil), at.abbreviation)
}

/// `Fri 2026-12-04 09:00`.
fn civil(at: jiff::civil::DateTime) -> String {
    format!(
        "{} {} {:02}:{:02}",
        weekday(at.date()),
        ymd(at.date()),
        at.hour(),
        at.minute()
    )
}

/// `2026-12-04`.
fn ymd(date: jiff::civil::Date) -> String {
    format!("{:04}-{:02}-{:02}", date.year(), date.month(), date.day())
}

fn weekday(date: jiff::civil::Date) -> &'static str {
    const NAMES: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
    NAMES[date.weekday().to_sunday_zero_offset() as usize]
}

/// A number of minutes in days, hours and minutes: `3 days 1 hour`.
fn span(minutes: u64) -> String {
    let parts = [
        (minutes / 1440, "day"),
        (minutes % 1440 / 60, "hour"),
        (minutes % 60, "minute"),
    ];
    let words: Vec<String> = parts
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, unit)| match n {
            1 => format!("1 {unit}"),
            n => format!("{n} {unit}s"),
        })
        .collect();
    match words.is_empty() {
        true => "0 minutes".to_owned(),
        false => words.join(" "),
    }
}

/// Why the longest gap is as long as it is: the days without a start in it, a clock change,
/// a start the clock skipped.
fn why(planned: &Planned, gap: &Gap) -> String {
    let (from, to) = (planned.local(gap.from), planned.local(gap.to));
    let mut reasons = Vec::new();
    let mut between = Vec::new();
    let mut day = from.civil.date();
    // A day whose start the clock skipped is explained by that.
    let skipped = gap.skipped.map(|s| s.date());
    while let Ok(next) = day.tomorrow() {
        if next >= to.civil.date() {
            break;
        }
        if Some(next) != skipped {
            between.push(next);
        }
        day = next;
    }
    match between.len() {
        0 => {}
        1..=6 => {
            let names: Vec<String> = between.iter().map(|d| weekday(*d).to_owned()).collect();
            let days = match between.len() {
                1 => "the day".to_owned(),
                n => format!("the {n} days"),
            };
            reasons.push(format!(
                "the schedule has no start on {days} in between ({})",
                names.join(", ")
            ));
        }
        n => reasons.push(format!(
            "the schedule has no start on the {n} days in between"
        )),
    }
    let change = to.offset.seconds() - from.offset.seconds();
    if change != 0 {
        let (way, effect) = match change < 0 {
            true => ("back", "longer"),
            false => ("forward", "shorter"),
        };
        let by = span(change.unsigned_abs().div_ceil(60) as u64);
        reasons.push(format!(
            "the clocks go {way} {by} in between, which makes it {by} {effect} than on the clock face"
        ));
    }
    if let Some(skipped) = gap.skipped {
        reasons.push(format!(
            "the start at {} does not happen: the clocks skip that time",
            civil(skipped)
        ));
    }
    if reasons.is_empty() {
        reasons.push("no start is scheduled between them".to_owned());
    }
    reasons.join("; ")
}
