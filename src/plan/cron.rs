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
mod tests {
    use super::*;
    use jiff::civil::date;

    fn parse(text: &str) -> Schedule {
        Schedule::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    fn err(text: &str) -> String {
        Schedule::parse(text).unwrap_err().0
    }

    #[test]
    fn lists_ranges_steps() {
        let s = parse("0,30 */6 1-10/3 * *");
        assert_eq!(s.minutes, 1 | 1 << 30);
        assert_eq!(s.hours, 1 | 1 << 6 | 1 << 12 | 1 << 18);
        assert_eq!(s.days, 1 << 1 | 1 << 4 | 1 << 7 | 1 << 10);
        assert_eq!(s.months, 0x1ffe);
        assert_eq!(s.weekdays, 0x7f);
        let s = parse("5-10,58 0 * * *");
        assert_eq!(
            s.times(),
            vec![(0, 5), (0, 6), (0, 7), (0, 8), (0, 9), (0, 10), (0, 58)]
        );
    }

    #[test]
    fn names_in_any_case_and_in_ranges() {
        let s = parse("0 9 * JAN-mar,Dec Mon-Fri");
        assert_eq!(s.months, 1 << 1 | 1 << 2 | 1 << 3 | 1 << 12);
        assert_eq!(s.weekdays, 0b0111110);
        // 7 is Sunday, alone or ending a range.
        assert_eq!(parse("0 0 * * 7").weekdays, 1);
        assert_eq!(parse("0 0 * * 5-7").weekdays, 1 | 1 << 5 | 1 << 6);
        assert_eq!(parse("0 0 * * sat,sun").weekdays, 1 | 1 << 6);
    }

    #[test]
    fn leading_zeros_as_cronie_reads_them() {
        assert_eq!(parse("00 09 007 01 0005"), parse("0 9 7 1 5"));
        assert_eq!(parse("0 0 1-00031/0002 * *"), parse("0 0 1-31/2 * *"));
        assert!(err("0 0 00032 * *").contains("day of month 00032 is out of range"));
    }

    #[test]
    fn wildcard_jobs() {
        // cronie's MIN_STAR or HR_STAR: the first character of either field is `*`.
        for wildcard in [
            "* 3 * * *",
            "*/15 * * * *",
            "0 * * * *",
            "0 */2 * * *",
            "@hourly",
        ] {
            assert!(parse(wildcard).wildcard, "{wildcard}");
        }
        for fixed in [
            "0 3 * * *",
            "0-59 0-23 * * *",
            "5,*/2 3 * * *",
            "@daily",
            "@weekly",
        ] {
            assert!(!parse(fixed).wildcard, "{fixed}");
        }
    }

    #[test]
    fn macros() {
        assert_eq!(parse("@daily"), parse("0 0 * * *"));
        assert_eq!(parse("@midnight"), parse("0 0 * * *"));
        assert_eq!(parse("@hourly"), parse("0 * * * *"));
        assert_eq!(parse("@weekly"), parse("0 0 * * 0"));
        assert_eq!(parse("@monthly"), parse("0 0 1 * *"));
        assert_eq!(parse("@yearly"), parse("0 0 1 1 *"));
        assert_eq!(parse("@annually"), parse("0 0 1 1 *"));
        assert!(err("@reboot").contains("boot"));
        assert!(err("@fortnightly").contains("unknown macro"));
    }

    #[test]
    fn day_of_month_or_day_of_week() {
        // 2026-12-01 is a Tuesday, 2026-12-07 a Monday, 2026-12-08 a Tuesday.
        let (first, monday, tuesday) = (date(2026, 12, 1), date(2026, 12, 7), date(2026, 12, 8));
        // Both restricted: either matches.
        let or = parse("0 0 1 * 1");
        assert!(or.fires_on(first) && or.fires_on(monday) && !or.fires_on(tuesday));
        // One starts with `*` (a step too): both must match.
        let and = parse("0 0 */2 * 1");
        assert!(!and.fires_on(first) && monday.day() % 2 == 1 && and.fires_on(monday));
        assert!(!and.fires_on(tuesday));
        let and = parse("0 0 1 * */1");
        assert!(and.fires_on(first) && !and.fires_on(monday));
        // Month always has to match.
        assert!(!parse("0 0 1 jan 1").fires_on(monday));
    }

    #[test]
    fn cronie_random_values() {
        let s = parse("0~30 ~ * * *");
        assert!(s.has_random() && s.warnings.is_empty());
        assert_eq!(s.pick_count(), 31 * 24);
        let picks = s.picks();
        assert_eq!(picks.len(), 31 * 24);
        // Each pick is one minute and one hour, every one of the ranges once.
        let minutes: u64 = picks.iter().fold(0, |all, p| all | p.minutes);
        assert_eq!(minutes, (1 << 31) - 1);
        assert!(
            picks
                .iter()
                .all(|p| p.minutes.count_ones() == 1 && p.hours.count_ones() == 1)
        );
        assert!(picks.iter().all(|p| !p.has_random()));
        assert_eq!(picks[0], parse("0 0 * * *"));
        // Bounds left out are the field's; names too; with other values of the field.
        assert_eq!(parse("~ 0 * * *").pick_count(), 60);
        assert_eq!(parse("0 0 * * ~fri").pick_count(), 6);
        assert_eq!(parse("0 0 * * tue~").pick_count(), 6);
        let listed = parse("5,50~52 0 * * *").picks();
        assert_eq!(listed.len(), 3);
        assert_eq!(listed[2], parse("5,52 0 * * *"));
        // A weekday pick of 7 is Sunday.
        assert_eq!(parse("0 0 * * 7~7").picks()[0], parse("0 0 * * 0"));
        assert!(!parse("0 0 * * *").has_random());
    }

    #[test]
    fn a_weekday_range_may_end_on_sunday_as_0() {
        assert_eq!(parse("0 0 * * fri-sun"), parse("0 0 * * 5-7"));
        assert_eq!(parse("0 0 * * 5-0"), parse("0 0 * * 5,6,0"));
        assert_eq!(parse("0 0 * * sat-0/1"), parse("0 0 * * 6,7"));
        assert!(parse("0 0 * * fri-sun").warnings.is_empty());
    }

    #[test]
    fn a_reversed_range_selects_nothing_with_a_warning() {
        let s = parse("10-5 * * * *");
        assert_eq!(s.warnings.len(), 1);
        assert!(s.warnings[0].contains("minute range 10-5 ends before it starts"));
        assert!(s.selects_no_time());
        let s = parse("10-5,30 * * * *");
        assert_eq!(s.times().len(), 24);
        assert!(!s.selects_no_time() && s.warnings.len() == 1);
        assert!(parse("0 0 20-10 * *").selects_no_time());
        // Either day field may match when both are restricted.
        assert!(!parse("0 0 20-10 * mon").selects_no_time());
        assert!(parse("0 23-1 * * *").selects_no_time());
        assert!(parse("0 0 * dec-jan *").selects_no_time());
    }

    #[test]
    fn bad_schedules() {
        assert!(err("0 9 * *").contains("five fields"));
        assert!(err("0 9 * * * *").contains("five fields"));
        assert!(err("60 * * * *").contains("minute 60 is out of range"));
        assert!(err("* 24 * * *").contains("hour 24"));
        assert!(err("* * 0 * *").contains("day of month 0"));
        assert!(err("* * 32 * *").contains("day of month 32"));
        assert!(err("* * * 13 *").contains("month 13"));
        assert!(err("* * * * 8").contains("day of week 8"));
        assert!(err("* * * * monday").contains("not a number or name"));
        assert!(err("*/0 * * * *").contains("step"));
        assert!(err("5/10 * * * *").contains("step needs a range"));
        assert!(err("~/5 * * * *").contains("takes no step"));
        assert!(err("30~10 * * * *").contains("random range 30~10 ends before"));
        assert!(err("~60 * * * *").contains("minute 60 is out of range"));
        assert!(err("1,,2 * * * *").contains("not a number"));
        assert!(err("* * * jan-feb-mar *").contains("not a number"));
        assert!(err("").contains("five fields"));
    }
}
