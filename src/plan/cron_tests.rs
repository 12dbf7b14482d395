//! Schedules read as cronie and Debian's cron read them (crontab(5), and what `crontab -n`
//! of Debian's cron 3.0pl1-162 accepts), each case worked out by hand.

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
