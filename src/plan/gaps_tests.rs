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
fn a_repeated_time_counts_at_its_first_pass_for_a_job_at_fixed_times() {
    let g = gaps("30 2 * * *", "Europe/Berlin");
    // 2027-10-31 shows 02:30 twice; the job runs at the first (CEST), so Sunday to Monday
    // is 25 hours, and no gap is the hour between the two passes.
    assert_eq!(g.shortest_seconds, 24 * HOUR);
    // New York repeats 01:00 to 02:00 on Sunday 2027-11-07 (and skips 02:00 to 03:00 on
    // Sunday 2027-03-14, which 01:30 is not in). Sunday 2027-10-31 01:30 EDT to Sunday
    // 2027-11-07 01:30 EDT (first pass) is 7 days; then to 2027-11-14 01:30 EST, 7 days and
    // an hour; 2027-03-14 01:30 EST to 2027-03-21 01:30 EDT is 7 days less an hour.
    let g = gaps("30 1 * * 0", "America/New_York");
    assert_eq!(g.longest.from, at("2027-11-07T01:30:00-04:00"));
    assert_eq!(g.longest.to, at("2027-11-14T01:30:00-05:00"));
    assert_eq!(g.longest.seconds(), 7 * DAY + HOUR);
    assert_eq!(g.shortest_seconds, 7 * DAY - HOUR);
}

#[test]
fn a_wildcard_job_runs_at_both_passes_of_a_repeated_time() {
    // cronie runs a job whose minute or hour field starts with `*` again in the hour the
    // clocks repeat: 02:45 CEST, then 02:00 CET a quarter of an hour later.
    let g = gaps("*/15 * * * *", "Europe/Berlin");
    assert_eq!(g.longest.seconds(), 15 * 60);
    assert_eq!(g.shortest_seconds, 15 * 60);
    // Hourly: 02:00 CEST, 02:00 CET, 03:00 CET, an hour apart each; going forward, 01:00
    // CET to 03:00 CEST is an hour too.
    for hourly in ["0 * * * *", "@hourly"] {
        let g = gaps(hourly, "Europe/Berlin");
        assert_eq!((g.longest.seconds(), g.shortest_seconds), (HOUR, HOUR));
    }
    // Only in the hour: 02:00, 02:20, 02:40 CEST, then the same in CET, 20 minutes apart.
    let g = gaps("*/20 2 * * *", "Europe/Berlin");
    assert_eq!(g.shortest_seconds, 20 * 60);
    // The longest: Saturday 2027-03-27 02:40 CET to Monday 2027-03-29 02:00 CEST, Sunday's
    // 02:00 to 02:40 skipped: 47 hours less 40 minutes.
    assert_eq!(g.longest.from, at("2027-03-27T02:40:00+01:00"));
    assert_eq!(g.longest.to, at("2027-03-29T02:00:00+02:00"));
    assert_eq!(g.longest.seconds(), 47 * HOUR - 40 * 60);
}

#[test]
fn southern_hemisphere_and_half_hour_changes() {
    // Sydney: back an hour on the first Sunday of April (2027-04-04), forward on the first
    // Sunday of October (2027-10-03).
    let g = gaps("0 0 * * *", "Australia/Sydney");
    assert_eq!(g.longest.from, at("2027-04-04T00:00:00+11:00"));
    assert_eq!(g.longest.to, at("2027-04-05T00:00:00+10:00"));
    assert_eq!(
        (g.longest.seconds(), g.shortest_seconds),
        (25 * HOUR, 23 * HOUR)
    );
    // Lord Howe Island: half an hour, on the same Sundays.
    let g = gaps("0 0 * * *", "Australia/Lord_Howe");
    assert_eq!(g.longest.from, at("2027-04-04T00:00:00+11:00"));
    assert_eq!(g.longest.to, at("2027-04-05T00:00:00+10:30"));
    assert_eq!(g.longest.seconds(), 24 * HOUR + 30 * 60);
    assert_eq!(g.shortest_seconds, 23 * HOUR + 30 * 60);
    // New York: back on the first Sunday of November (2027-11-07).
    let g = gaps("0 0 * * *", "America/New_York");
    assert_eq!(g.longest.from, at("2027-11-07T00:00:00-04:00"));
    assert_eq!(g.longest.to, at("2027-11-08T00:00:00-05:00"));
    // São Paulo has kept its clocks since 2019.
    let g = gaps("0 0 * * *", "America/Sao_Paulo");
    assert_eq!((g.longest.seconds(), g.shortest_seconds), (DAY, DAY));
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
fn no_leap_day_in_2100() {
    // Planned in 2090: 2092 and 2096 are leap years, 2100 is not (divisible by 100, not
    // by 400), so 29 February 2096 to 29 February 2104 is 8 years with one leap day.
    let schedule = Schedule::parse("0 0 29 2 *").unwrap();
    let g = compute(&schedule, &zone("UTC"), date(2090, 1, 1)).unwrap();
    assert_eq!(g.longest.from, at("2096-02-29T00:00:00Z"));
    assert_eq!(g.longest.to, at("2104-02-29T00:00:00Z"));
    assert_eq!(g.longest.seconds(), (8 * 365 + 1) * DAY);
    assert_eq!(g.shortest_seconds, 1461 * DAY);
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
