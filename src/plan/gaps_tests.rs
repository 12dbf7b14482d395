//! Gaps checked against calendars worked out by hand (and with cal(1) and date(1)), never
//! against this module's own walk: the weekdays and clock changes named in each case are
//! facts about the calendar and Europe/Berlin's rules (clocks forward on the last Sunday
//! of March at 02:00, back on the last Sunday of October at 03:00).

use super::*;
use jiff::civil::date;

fn zone(name: &str) -> TimeZone {
    TimeZone::get(name).unwrap()
}

/// The gaps of `schedule` in `zone_name` from 2026-12-01 (a Tuesday).
fn gaps(schedule: &str, zone_name: &str) -> Gaps {
    let schedule = Schedule::parse(schedule).unwrap();
    compute(&schedule, &zone(zone_name), date(2026, 12, 1)).unwrap()
}

fn at(rfc3339: &str) -> Timestamp {
    rfc3339.parse().unwrap()
}

const HOUR: i64 = 3600;
const DAY: i64 = 24 * HOUR;

#[test]
fn weekdays_gap_over_the_weekend() {
    let g = gaps("0 9 * * 1-5", "UTC");
    // Friday 2026-12-04 to Monday 2026-12-07, the first weekend.
    assert_eq!(g.longest.from, at("2026-12-04T09:00:00Z"));
    assert_eq!(g.longest.to, at("2026-12-07T09:00:00Z"));
    assert_eq!(g.longest.seconds(), 3 * DAY);
    assert_eq!(g.shortest_seconds, DAY);
}

#[test]
fn weekdays_in_berlin_gain_an_hour_the_weekend_clocks_go_back() {
    let g = gaps("0 9 * * mon-fri", "Europe/Berlin");
    // Sunday 2027-10-31 the clocks go back: Friday 09:00 CEST to Monday 09:00 CET is 73 h.
    assert_eq!(g.longest.from, at("2027-10-29T09:00:00+02:00"));
    assert_eq!(g.longest.to, at("2027-11-01T09:00:00+01:00"));
    assert_eq!(g.longest.seconds(), 3 * DAY + HOUR);
    assert_eq!(g.shortest_seconds, DAY);
}

#[test]
fn daily_in_berlin_is_25_hours_once_a_year() {
    let g = gaps("0 0 * * *", "Europe/Berlin");
    assert_eq!(g.longest.from, at("2027-10-31T00:00:00+02:00"));
    assert_eq!(g.longest.to, at("2027-11-01T00:00:00+01:00"));
    assert_eq!(g.longest.seconds(), 25 * HOUR);
    // The day the clocks go forward.
    assert_eq!(g.shortest_seconds, 23 * HOUR);
}

#[test]
fn a_time_the_clock_skips_is_no_start() {
    let g = gaps("30 2 * * *", "Europe/Berlin");
    // 02:30 does not exist on Sunday 2027-03-28: Saturday 02:30 CET to Monday 02:30 CEST.
    assert_eq!(g.longest.from, at("2027-03-27T02:30:00+01:00"));
    assert_eq!(g.longest.to, at("2027-03-29T02:30:00+02:00"));
    assert_eq!(g.longest.seconds(), 47 * HOUR);
    assert_eq!(g.longest.skipped, Some(date(2027, 3, 28).at(2, 30, 0, 0)));
    assert_eq!(g.shortest_seconds, 24 * HOUR);
}

#[test]
fn a_repeated_time_counts_at_its_first_pass() {
    let g = gaps("*/15 * * * *", "Europe/Berlin");
    // 2027-10-31: 02:45 CEST, then the clock goes back to 02:00; 02:00 to 02:45 were
    // passed already, so the next start is 03:00 CET, 75 minutes later.
    assert_eq!(g.longest.from, at("2027-10-31T02:45:00+02:00"));
    assert_eq!(g.longest.to, at("2027-10-31T03:00:00+01:00"));
    assert_eq!(g.longest.seconds(), 75 * 60);
    assert_eq!(g.shortest_seconds, 15 * 60);
}

#[test]
fn monthly_is_31_days_at_most_and_28_at_least() {
    let g = gaps("0 0 1 * *", "UTC");
    assert_eq!(g.longest.from, at("2026-12-01T00:00:00Z"));
    assert_eq!(g.longest.to, at("2027-01-01T00:00:00Z"));
    assert_eq!(g.longest.seconds(), 31 * DAY);
    // February 2027 has 28 days.
    assert_eq!(g.shortest_seconds, 28 * DAY);
}

#[test]
fn twice_a_month() {
    let g = gaps("0 0 1,15 * *", "UTC");
    // The 15th to the 1st of the next month: 17 days after a 31-day month.
    assert_eq!(g.longest.from, at("2026-12-15T00:00:00Z"));
    assert_eq!(g.longest.seconds(), 17 * DAY);
    // The 1st to the 15th: 14 days; February 15 to March 1: 14 days in a common year.
    assert_eq!(g.shortest_seconds, 14 * DAY);
}

#[test]
fn leap_day_every_four_years() {
    let g = gaps("0 0 29 2 *", "UTC");
    // 2028 and 2032 are leap years; 1461 days between their 29 Februaries.
    assert_eq!(g.longest.from, at("2028-02-29T00:00:00Z"));
    assert_eq!(g.longest.to, at("2032-02-29T00:00:00Z"));
    assert_eq!(g.longest.seconds(), 1461 * DAY);
}

#[test]
fn day_of_month_or_day_of_week_fires_at_least_weekly() {
    let g = gaps("0 0 1 * 1", "UTC");
    // Mondays, and the 1st: never more than a week, first from Monday 2026-12-07 to
    // Monday 2026-12-14 (Tuesday 2026-12-01 to Monday 2026-12-07 is 6 days).
    assert_eq!(g.longest.from, at("2026-12-07T00:00:00Z"));
    assert_eq!(g.longest.seconds(), 7 * DAY);
    // Monday 2027-05-31, then Tuesday 2027-06-01.
    assert_eq!(g.shortest_seconds, DAY);
}

#[test]
fn within_a_day() {
    let g = gaps("0 8-18/2 * * *", "UTC");
    // 18:00 to 08:00 the next day.
    assert_eq!(g.longest.from, at("2026-12-01T18:00:00Z"));
    assert_eq!(g.longest.seconds(), 14 * HOUR);
    assert_eq!(g.shortest_seconds, 2 * HOUR);
    let g = gaps("0,50 0 * * *", "UTC");
    assert_eq!(g.longest.seconds(), DAY - 50 * 60);
    assert_eq!(g.shortest_seconds, 50 * 60);
}

#[test]
fn schedules_that_never_fire() {
    for never in ["0 0 31 2 *", "0 0 30 2 *", "0 0 31 4,6,9,11 *"] {
        let schedule = Schedule::parse(never).unwrap();
        let found = compute(&schedule, &zone("UTC"), date(2026, 12, 1));
        assert_eq!(found, Err(Sparse::Never), "{never}");
    }
}

#[test]
fn a_change_day_by_offsets_agrees_with_the_zone() {
    let berlin = zone("Europe/Berlin");
    let changes = change_days(&berlin, date(2027, 1, 1));
    for day in [date(2027, 3, 28), date(2027, 10, 31)] {
        let (_, change) = changes.iter().find(|(d, _)| *d == day).unwrap();
        let change = change.expect("one change that day");
        let midnight = day.at(0, 0, 0, 0).to_zoned(TimeZone::UTC).unwrap();
        for minute in 0..1440 {
            let time = ((minute / 60) as i8, (minute % 60) as i8);
            let local = midnight.timestamp().as_second() + i64::from(minute) * 60;
            let by_offsets = change.first_instant(local);
            let by_zone = instant(&berlin, day, time).map(|t| t.as_second());
            assert_eq!(by_offsets, by_zone, "{day} {time:?}");
        }
    }
}
