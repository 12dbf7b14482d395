//! The real time between consecutive starts of a schedule, over the coming years: the
//! longest gap is the heartbeat's period.
//!
//! Starts are found day by day in the zone's civil time, never minute by minute: a day
//! either has no start, or starts at every time the schedule lists. On a day without a
//! clock change the gaps inside it are the same as on the clock face, so only its first and
//! last start are turned into instants (and the longest gap inside it, when that could be
//! the longest of all). Only the days a clock change touches have every start turned into
//! an instant (by the offsets before and after the change, so without a time zone look-up
//! each): a time the clock skips is no start (cron's catch-up of such a job is not
//! counted on, so the gap it leaves is the longer one). A time the clock repeats is one
//! start, at its first pass, for a job at fixed times (cronie and Debian's cron run it
//! once; taking the first pass keeps the gap after it the longer one, so the period never
//! comes out too short); for a "wildcard" job, whose minute or hour field starts with `*`,
//! it is a start at both passes, since those crons run such a job again in the repeated
//! hour (an hourly job stays an hour apart the night the clocks go back).
//!
//! The horizon is [`HORIZON_DAYS`] (28 years) from the first day, and on to the first start
//! after it: from 1901 to 2099 the Gregorian calendar repeats every 28 years (weekdays and
//! leap years together), and the rules of a zone's future clock changes are yearly and
//! follow weekdays, so every pattern of month lengths, weekdays, leap days and clock changes
//! occurs, and the gap that wraps round the cycle is counted too.

use jiff::SignedDuration;
use jiff::Timestamp;
use jiff::civil::{Date, DateTime};
use jiff::tz::{AmbiguousOffset, Offset, TimeZone};

use crate::plan::cron::Schedule;

/// 28 years of days (seven of them leap years): the calendar's cycle from 1901 to 2099.
pub const HORIZON_DAYS: i64 = 28 * 365 + 7;

/// One gap between two consecutive starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gap {
    pub from: Timestamp,
    pub to: Timestamp,
    /// The first scheduled local time between them that the clock skipped, if any.
    pub skipped: Option<DateTime>,
}

impl Gap {
    pub fn seconds(&self) -> i64 {
        self.to.as_second() - self.from.as_second()
    }
}

/// What the gaps of a schedule are over the horizon.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gaps {
    /// The longest gap; the first of them if several are as long.
    pub longest: Gap,
    pub shortest_seconds: i64,
}

/// Why a schedule has no gaps to measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sparse {
    /// No start within twice the horizon (`0 0 31 2 *`).
    Never,
    /// One start only.
    Once,
}

/// The gaps of `schedule` in `zone`, from the start of `first_day` on.
pub fn compute(schedule: &Schedule, zone: &TimeZone, first_day: Date) -> Result<Gaps, Sparse> {
    let times = schedule.times();
    let inside = Inside::of(&times);
    let changes = change_days(zone, first_day);
    let mut walk = Walk::default();
    let mut day = first_day;
    let mut changes = changes.iter().peekable();
    for n in 0..2 * HORIZON_DAYS {
        if n >= HORIZON_DAYS && walk.started_since_horizon {
            break;
        }
        while changes.next_if(|(d, _)| *d < day).is_some() {}
        if schedule.fires_on(day) {
            walk.horizon_passed = n >= HORIZON_DAYS;
            match changes.peek() {
                Some((d, Some(change)))
                    if *d == day && schedule.wildcard && change.after < change.before =>
                {
                    walk.both_passes(day, &times, *change)
                }
                Some((d, change)) if *d == day => walk.every_start(zone, day, &times, *change),
                _ => walk.plain_day(zone, day, &times, &inside),
            }
        }
        match day.tomorrow() {
            Ok(next) => day = next,
            Err(_) => break,
        }
    }
    match (walk.longest, walk.prev) {
        (Some(longest), _) => Ok(Gaps {
            longest,
            shortest_seconds: walk.shortest,
        }),
        (None, Some(_)) => Err(Sparse::Once),
        (None, None) => Err(Sparse::Never),
    }
}

/// The gaps between the starts of one day, on the clock face.
struct Inside {
    /// The longest: its index in the times (from `i` to `i + 1`) and its seconds.
    longest: Option<(usize, i64)>,
    shortest: Option<i64>,
}

impl Inside {
    fn of(times: &[(i8, i8)]) -> Inside {
        let secs = |(h, m): (i8, i8)| i64::from(h) * 3600 + i64::from(m) * 60;
        let gaps = times.windows(2).map(|w| secs(w[1]) - secs(w[0]));
        let mut longest: Option<(usize, i64)> = None;
        for (i, gap) in gaps.clone().enumerate() {
            if longest.is_none_or(|(_, l)| gap > l) {
                longest = Some((i, gap));
            }
        }
        Inside {
            longest,
            shortest: gaps.min(),
        }
    }
}

/// One change of a zone's clock: when, and its UTC offset before and after, in seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Change {
    at: i64,
    before: i64,
    after: i64,
}

impl Change {
    /// The first instant at which the clock shows `local` (seconds since 1970-01-01T00:00
    /// on the clock face) on a day with this change and no other; `None` if it skips it.
    fn first_instant(&self, local: i64) -> Option<i64> {
        self.instants(local).min()
    }

    /// Every instant at which the clock shows `local` on such a day: none if the change
    /// skips it, two if it repeats it (the first before the change).
    fn instants(&self, local: i64) -> impl Iterator<Item = i64> {
        let before = Some(local - self.before).filter(|&t| t < self.at);
        let after = Some(local - self.after).filter(|&t| t >= self.at);
        before.into_iter().chain(after)
    }
}

/// The days (in the zone) on which its clock changes, over twice the horizon and a day, in
/// order, each with its change, or `None` if it has more than one.
fn change_days(zone: &TimeZone, first_day: Date) -> Vec<(Date, Option<Change>)> {
    // Two days early in UTC: early enough for any zone's midnight.
    let early = Offset::UTC
        .to_timestamp(first_day.at(0, 0, 0, 0))
        .and_then(|t| t.checked_sub(SignedDuration::from_hours(48)));
    let Ok(start) = early else {
        return Vec::new();
    };
    let end = start.as_second() + (2 * HORIZON_DAYS + 3) * 86_400;
    let mut days: Vec<(Date, Option<Change>)> = Vec::new();
    for transition in zone.following(start) {
        let at = transition.timestamp();
        if at.as_second() > end {
            break;
        }
        let just_before = at.checked_sub(SignedDuration::from_secs(1)).unwrap_or(at);
        let change = Change {
            at: at.as_second(),
            before: i64::from(zone.to_offset(just_before).seconds()),
            after: i64::from(transition.offset().seconds()),
        };
        // The day the clock showed just before the change, and the day it shows after.
        for date in [
            local_date(just_before, change.before),
            local_date(at, change.after),
        ] {
            match days.last_mut() {
                Some((last, seen)) if *last == date => {
                    if *seen != Some(change) {
                        *seen = None;
                    }
                }
                _ => days.push((date, Some(change))),
            }
        }
    }
    days
}

/// The day a clock `offset` seconds ahead of UTC shows at `at`.
fn local_date(at: Timestamp, offset: i64) -> Date {
    let shifted = at
        .checked_add(SignedDuration::from_secs(offset))
        .unwrap_or(at);
    Offset::UTC.to_datetime(shifted).date()
}

/// The instant at which `zone`'s clock first shows `time` on `day`; `None` if it skips it.
pub fn instant(zone: &TimeZone, day: Date, (hour, minute): (i8, i8)) -> Option<Timestamp> {
    let civil = day.at(hour, minute, 0, 0);
    let ambiguous = zone.to_ambiguous_timestamp(civil);
    match ambiguous.offset() {
        AmbiguousOffset::Gap { .. } => None,
        _ => ambiguous.earlier().ok(),
    }
}

/// The starts seen so far, and the gaps between them.
#[derive(Default)]
struct Walk {
    prev: Option<Timestamp>,
    /// A scheduled time skipped since the previous start.
    skipped: Option<DateTime>,
    longest: Option<Gap>,
    shortest: i64,
    /// The day being walked lies past the horizon.
    horizon_passed: bool,
    /// A start was seen past the horizon: the walk can end.
    started_since_horizon: bool,
}

impl Walk {
    /// A start at `at`.
    fn start(&mut self, at: Timestamp) {
        if let Some(prev) = self.prev {
            let gap = Gap {
                from: prev,
                to: at,
                skipped: self.skipped.take(),
            };
            self.gap(gap);
        }
        self.prev = Some(at);
        self.skipped = None;
        self.started_since_horizon |= self.horizon_passed;
    }

    fn gap(&mut self, gap: Gap) {
        let secs = gap.seconds();
        if self.longest.is_none() || secs < self.shortest {
            self.shortest = secs;
        }
        if self.longest.as_ref().is_none_or(|l| secs > l.seconds()) {
            self.longest = Some(gap);
        }
    }

    /// A day on which the clock changes: every start, by the offsets around its `change`
    /// (through the zone if it has several).
    fn every_start(
        &mut self,
        zone: &TimeZone,
        day: Date,
        times: &[(i8, i8)],
        change: Option<Change>,
    ) {
        let midnight = jiff::tz::Offset::UTC
            .to_timestamp(day.at(0, 0, 0, 0))
            .map(|t| t.as_second())
            .ok();
        for &time in times {
            let found = match (change, midnight) {
                (Some(change), Some(midnight)) => {
                    let local = midnight + i64::from(time.0) * 3600 + i64::from(time.1) * 60;
                    change
                        .first_instant(local)
                        .and_then(|t| Timestamp::from_second(t).ok())
                }
                _ => instant(zone, day, time),
            };
            match found {
                Some(at) => self.start(at),
                None => {
                    let civil = day.at(time.0, time.1, 0, 0);
                    self.skipped.get_or_insert(civil);
                }
            }
        }
    }

    /// A day on which the clocks go back, for a wildcard job: every start at each pass of
    /// its time, in the order they happen (nothing is skipped going back).
    fn both_passes(&mut self, day: Date, times: &[(i8, i8)], change: Change) {
        let Ok(midnight) = Offset::UTC.to_timestamp(day.at(0, 0, 0, 0)) else {
            return;
        };
        let mut starts: Vec<i64> = times
            .iter()
            .flat_map(|&(hour, minute)| {
                let local = midnight.as_second() + i64::from(hour) * 3600 + i64::from(minute) * 60;
                change.instants(local)
            })
            .collect();
        starts.sort_unstable();
        for at in starts {
            if let Ok(at) = Timestamp::from_second(at) {
                self.start(at);
            }
        }
    }

    /// A day without a clock change: its gaps are those on the clock face.
    fn plain_day(&mut self, zone: &TimeZone, day: Date, times: &[(i8, i8)], inside: &Inside) {
        let (Some(&first), Some(&last)) = (times.first(), times.last()) else {
            return;
        };
        let Some(at) = instant(zone, day, first) else {
            return self.every_start(zone, day, times, None);
        };
        self.start(at);
        if let Some((i, secs)) = inside.longest {
            let longer = self.longest.as_ref().is_none_or(|l| secs > l.seconds());
            let found = (
                instant(zone, day, times[i]),
                instant(zone, day, times[i + 1]),
            );
            if let (true, (Some(from), Some(to))) = (longer, found) {
                self.gap(Gap {
                    from,
                    to,
                    skipped: None,
                });
            }
        }
        if let Some(shortest) = inside.shortest {
            self.shortest = self.shortest.min(shortest);
        }
        if let Some(at) = instant(zone, day, last) {
            self.prev = Some(at);
        }
    }
}

#[cfg(test)]
#[path = "gaps_tests.rs"]
mod tests;
