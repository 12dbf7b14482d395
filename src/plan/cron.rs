//! Cron schedules as Vixie cron and cronie read them: five fields (minute, hour, day of
//! month, month, day of week) with lists, ranges, steps and month and weekday names, and
//! the `@` macros; cronie's `~` (one value picked at random when the crontab is loaded:
//! [`Schedule::picks`] gives a schedule for each value it could pick), and a range that
//! ends on Sunday as 0 (`fri-sun`, `5-0`: Friday to Sunday). A range that ends before it
//! starts (`10-5`), which Debian's cron accepts and never fires on, selects nothing and
//! leaves a warning ([`Schedule::warnings`]).
//!
//! Written here rather than taken from a crate: most crates that parse cron expressions
//! work on chrono rather than jiff; jiff-cron, the one on jiff, reads the format of the
//! `cron` crate it was ported from (seconds first, an optional year: six or seven fields),
//! not a crontab's five; and several read day-of-month and day-of-week as both having to
//! match. Cronie's rule (crontab(5), and its `entry.c`) is that when both fields are
//! restricted, that is neither starts with `*`, a day matches if *either* does; when one
//! starts with `*` (`*/2` included), both must match. What cron does when the clocks change
//! is in `gaps`.

use std::fmt;

use jiff::civil::Date;

/// A parsed schedule: which minutes, hours, days, months and weekdays it fires on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedule {
    /// Bit `m` for minute `m` (0 to 59).
    minutes: u64,
    /// Bit `h` for hour `h` (0 to 23).
    hours: u32,
    /// Bit `d` for day of month `d` (1 to 31).
    days: u32,
    /// Bit `m` for month `m` (1 to 12).
    months: u16,
    /// Bit `w` for weekday `w`, Sunday 0 to Saturday 6.
    weekdays: u8,
    /// The day-of-month field starts with `*`.
    dom_star: bool,
    /// The day-of-week field starts with `*`.
    dow_star: bool,
    /// The minute or the hour field starts with `*` (`@hourly` too): cronie's and Debian
    /// cron's "wildcard" job, which runs again in an hour the clocks repeat; a job at fixed
    /// times runs once.
    pub wildcard: bool,
    /// The `~` values of the schedule, each to be picked once.
    random: Vec<Random>,
    /// What the schedule holds that cron reads otherwise than it looks (`10-5`).
    pub warnings: Vec<String>,
}

/// One `~` value: a field (0 minute … 4 weekday) and the bounds it is picked in.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Random {
    field: usize,
    low: u32,
    high: u32,
}

/// What one field sets.
#[derive(Default)]
struct Parsed {
    bits: u64,
    random: Vec<Random>,
    warnings: Vec<String>,
}

/// Why a schedule cannot be read; the caller names the option or line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError(pub String);

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn error<T>(text: impl Into<String>) -> Result<T, ParseError> {
    Err(ParseError(text.into()))
}

const MONTHS: [&str; 12] = [
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];
const WEEKDAYS: [&str; 7] = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];

/// One field's bounds and names, as crontab(5) gives them.
struct Field {
    name: &'static str,
    low: u32,
    high: u32,
    /// Names for `low`, `low + 1`, ….
    names: &'static [&'static str],
}

const FIELDS: [Field; 5] = [
    Field {
        name: "minute",
        low: 0,
        high: 59,
        names: &[],
    },
    Field {
        name: "hour",
        low: 0,
        high: 23,
        names: &[],
    },
    Field {
        name: "day of month",
        low: 1,
        high: 31,
        names: &[],
    },
    Field {
        name: "month",
        low: 1,
        high: 12,
        names: &MONTHS,
    },
    // 7 is Sunday too.
    Field {
        name: "day of week",
        low: 0,
        high: 7,
        names: &WEEKDAYS,
    },
];

/// What the `@` macros stand for (cronie's entry.c); `@reboot` is not a schedule.
fn macro_fields(name: &str) -> Option<&'static str> {
    Some(match name {
        "@yearly" | "@annually" => "0 0 1 1 *",
        "@monthly" => "0 0 1 * *",
        "@weekly" => "0 0 * * 0",
        "@daily" | "@midnight" => "0 0 * * *",
        "@hourly" => "0 * * * *",
        _ => return None,
    })
}

impl Schedule {
    /// Parses a schedule: five fields separated by blanks, or an `@` macro.
    pub fn parse(text: &str) -> Result<Schedule, ParseError> {
        // Cron separates fields with blanks and tabs only; a line feed, carriage return or
        // form feed is no separator to it.
        if text.chars().any(|c| c.is_control() && c != '\t') {
            return error("a schedule holds only printable characters, blanks and tabs");
        }
        let fields: Vec<&str> = text.split([' ', '\t']).filter(|f| !f.is_empty()).collect();
        if let [single] = fields[..]
            && single.starts_with('@')
        {
            if single == "@reboot" {
                return error(
                    "@reboot runs once at boot, not on a schedule a heartbeat can follow",
                );
            }
            let Some(expanded) = macro_fields(single) else {
                return error(format!(
                    "unknown macro {single:?} (@hourly, @daily, @midnight, @weekly, @monthly, \
                     @yearly, @annually)"
                ));
            };
            return Schedule::parse(expanded);
        }
        let [minute, hour, dom, month, dow] = fields[..] else {
            return error(format!(
                "a schedule has five fields (minute hour day-of-month month day-of-week), \
                 not {}",
                fields.len()
            ));
        };
        let mut random = Vec::new();
        let mut warnings = Vec::new();
        let mut bits = |i: usize, text: &str| {
            let parsed = parse_field(i, text)?;
            random.extend(parsed.random);
            warnings.extend(parsed.warnings);
            Ok::<_, ParseError>(parsed.bits)
        };
        Ok(Schedule {
            minutes: bits(0, minute)?,
            hours: bits(1, hour)? as u32,
            days: bits(2, dom)? as u32,
            months: bits(3, month)? as u16,
            weekdays: sunday_is_0(bits(4, dow)?),
            dom_star: dom.starts_with('*'),
            dow_star: dow.starts_with('*'),
            wildcard: minute.starts_with('*') || hour.starts_with('*'),
            random,
            warnings,
        })
    }

    /// Whether the schedule holds a `~` value.
    pub fn has_random(&self) -> bool {
        !self.random.is_empty()
    }

    /// How many schedules [`Schedule::picks`] gives.
    pub fn pick_count(&self) -> u64 {
        self.random
            .iter()
            .map(|r| u64::from(r.high - r.low + 1))
            .product()
    }

    /// The schedule for every value its `~` fields could pick, one schedule per set of
    /// picks (itself when it has none).
    pub fn picks(&self) -> Vec<Schedule> {
        let mut all = vec![Schedule {
            random: Vec::new(),
            ..self.clone()
        }];
        for random in &self.random {
            all = all
                .iter()
                .flat_map(|s| (random.low..=random.high).map(move |v| s.with(random.field, v)))
                .collect();
        }
        all
    }

    /// This schedule with value `v` of field `field` set too.
    fn with(&self, field: usize, v: u32) -> Schedule {
        let mut s = self.clone();
        match field {
            0 => s.minutes |= 1 << v,
            1 => s.hours |= 1 << v,
            2 => s.days |= 1 << v,
            3 => s.months |= 1 << v,
            _ => s.weekdays |= sunday_is_0(1 << v),
        }
        s
    }

    /// Whether some field selects nothing, so that it never fires: a field of ranges that
    /// end before they start.
    pub fn selects_no_time(&self) -> bool {
        let no_day = match self.dom_star || self.dow_star {
            true => self.days == 0 || self.weekdays == 0,
            false => self.days == 0 && self.weekdays == 0,
        };
        self.random.is_empty()
            && (self.minutes == 0 || self.hours == 0 || self.months == 0 || no_day)
    }

    /// Whether the schedule fires on `date` (at the times [`Schedule::times`] lists).
    pub fn fires_on(&self, date: Date) -> bool {
        if self.months & (1 << date.month()) == 0 {
            return false;
        }
        let dom = self.days & (1 << date.day()) != 0;
        let dow = self.weekdays & (1 << date.weekday().to_sunday_zero_offset()) != 0;
        match self.dom_star || self.dow_star {
            true => dom && dow,
            false => dom || dow,
        }
    }

    /// The times of day it fires at, as (hour, minute), in order.
    pub fn times(&self) -> Vec<(i8, i8)> {
        let mut times = Vec::new();
        for hour in (0..24).filter(|h| self.hours & (1 << h) != 0) {
            for minute in (0..60).filter(|m| self.minutes & (1 << m) != 0) {
                times.push((hour as i8, minute as i8));
            }
        }
        times
    }
}

/// Weekday bits with day 7 made Sunday's bit 0.
fn sunday_is_0(bits: u64) -> u8 {
    ((bits | (bits >> 7)) & 0x7f) as u8
}

/// What field `index` sets: bit `n` for value `n`, and its `~` values.
fn parse_field(index: usize, text: &str) -> Result<Parsed, ParseError> {
    let field = &FIELDS[index];
    let mut parsed = Parsed::default();
    for element in text.split(',') {
        let (range, step) = match element.split_once('/') {
            Some((range, step)) => (range, Some(step)),
            None => (element, None),
        };
        if let Some((a, b)) = range.split_once('~') {
            if step.is_some() {
                return error(format!(
                    "{} field {text:?}: a random value (`~`) takes no step",
                    field.name
                ));
            }
            let bound = |t: &str, default| match t {
                "" => Ok(default),
                t => value(field, t),
            };
            let (low, high) = (bound(a, field.low)?, bound(b, field.high)?);
            if low > high {
                return error(format!(
                    "{} field {text:?}: the random range {range} ends before it starts",
                    field.name
                ));
            }
            parsed.random.push(Random {
                field: index,
                low,
                high,
            });
            continue;
        }
        let (low, mut high) = match range {
            "*" => (field.low, field.high),
            _ => match range.split_once('-') {
                Some((a, b)) => (value(field, a)?, value(field, b)?),
                // A single value takes no step in cronie.
                None if step.is_some() => {
                    return error(format!(
                        "{} field {text:?}: a step needs a range or `*` (`{range}-{}/…`)",
                        field.name, field.high
                    ));
                }
                None => {
                    let v = value(field, range)?;
                    (v, v)
                }
            },
        };
        // A weekday range that ends on Sunday as 0 ends on Sunday as 7 (`fri-sun`).
        if index == 4 && high == 0 && low > 0 {
            high = 7;
        }
        if low > high {
            parsed.warnings.push(format!(
                "the {} range {range} ends before it starts: Debian's cron accepts it and \
                 never fires on it (cronie refuses it)",
                field.name
            ));
        }
        let step = match step {
            None => 1,
            Some(s) => match number(s) {
                Some(n) if n >= 1 => n,
                _ => {
                    return error(format!(
                        "{} field {text:?}: the step {s:?} is not a number of at least 1",
                        field.name
                    ));
                }
            },
        };
        for v in (low..=high).step_by(step as usize) {
            parsed.bits |= 1 << v;
        }
    }
    Ok(parsed)
}

/// One value of a field: a number within its bounds, or a name.
fn value(field: &Field, text: &str) -> Result<u32, ParseError> {
    let lower = text.to_ascii_lowercase();
    if let Some(i) = field.names.iter().position(|n| *n == lower) {
        return Ok(field.low + i as u32);
    }
    match number(text) {
        Some(n) if (field.low..=field.high).contains(&n) => Ok(n),
        Some(_) => error(format!(
            "{} {text} is out of range ({} to {})",
            field.name, field.low, field.high
        )),
        None => error(format!("{} {text:?} is not a number or name", field.name)),
    }
}

/// Digits only; leading zeros are allowed, as cronie's `atoi` reads them (`007` is 7).
fn number(text: &str) -> Option<u32> {
    let digits = text.trim_start_matches('0');
    let all_digits = !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
    match all_digits && digits.len() <= 4 {
        true => Some(digits.parse().unwrap_or(0)),
        false => None,
    }
}

#[cfg(test)]
#[path = "cron_tests.rs"]
mod tests;
