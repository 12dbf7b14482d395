//! `crontap-run history --stats`: per job, how its recorded runs went and how long the
//! successful ones took, with the grace period the heartbeat needs.
//!
//! A heartbeat expects the next success ping within its period plus its grace. A run pings
//! when it ends, so a run that takes longer than usual pings late: period + grace must cover
//! the worst normal run time. The statistics show the longest successful run on record and
//! suggest a grace that covers it with room to spare.

use std::io::{self, Write};
use std::time::Duration;

use serde::Serialize;

use crate::run::outcome::HumanDuration;
use crate::sanitize;
use crate::state::history::{Entry, RunResult};

/// The ping budget a run has by default (`--ping-budget`): a late ping can take this long too.
const PING_BUDGET: Duration = Duration::from_secs(30);

/// One job's statistics.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct JobStats {
    pub job: String,
    /// Every recorded run, skipped ones included.
    pub runs: u64,
    pub succeeded: u64,
    pub failed: u64,
    pub stopped: u64,
    pub skipped: u64,
    /// Durations of the successful runs, in milliseconds.
    pub p50_ms: Option<u64>,
    pub p95_ms: Option<u64>,
    pub max_ms: Option<u64>,
    /// When the last successful run ended (RFC 3339, UTC).
    pub last_success: Option<String>,
    /// The least grace the heartbeat should have, in seconds.
    pub suggested_grace_s: Option<u64>,
}

/// Statistics per job, in job-name order, from `entries` (any order).
pub fn compute(entries: &[Entry]) -> Vec<JobStats> {
    let mut jobs: Vec<&str> = entries.iter().map(|e| e.job.as_str()).collect();
    jobs.sort_unstable();
    jobs.dedup();
    jobs.into_iter()
        .map(|job| {
            let runs: Vec<&Entry> = entries.iter().filter(|e| e.job == job).collect();
            of_job(job, &runs)
        })
        .collect()
}

fn of_job(job: &str, runs: &[&Entry]) -> JobStats {
    let count = |result: RunResult| runs.iter().filter(|e| e.result == result).count() as u64;
    let successes: Vec<&&Entry> = runs
        .iter()
        .filter(|e| e.result == RunResult::Succeeded)
        .collect();
    let mut durations: Vec<u64> = successes.iter().map(|e| e.duration_ms).collect();
    durations.sort_unstable();
    let max_ms = durations.last().copied();
    JobStats {
        job: job.to_owned(),
        runs: runs.len() as u64,
        succeeded: count(RunResult::Succeeded),
        failed: count(RunResult::Failed),
        stopped: count(RunResult::Stopped),
        skipped: count(RunResult::Skipped),
        p50_ms: percentile(&durations, 50),
        p95_ms: percentile(&durations, 95),
        max_ms,
        // RFC 3339 UTC times with a fixed precision sort as text.
        last_success: successes.iter().map(|e| e.ended.clone()).max(),
        suggested_grace_s: max_ms.map(|ms| grace(Duration::from_millis(ms)).as_secs()),
    }
}

/// The nearest-rank percentile `p` of sorted `values`.
fn percentile(sorted: &[u64], p: usize) -> Option<u64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = (sorted.len() * p).div_ceil(100).max(1);
    sorted.get(rank - 1).copied()
}

/// The grace suggested for a job whose longest successful run took `longest`: that run, half
/// of it again, and the ping budget, rounded up to the minute.
pub fn grace(longest: Duration) -> Duration {
    // Saturating: a history line may hold any duration.
    let total = longest
        .saturating_add(longest / 2)
        .saturating_add(PING_BUDGET);
    let secs = total.as_secs_f64().ceil() as u64;
    Duration::from_secs(secs.div_ceil(60).max(1).saturating_mul(60))
}

/// Writes one JSON object per job.
pub fn write_json(out: &mut impl Write, stats: &[JobStats]) -> io::Result<()> {
    for job in stats {
        serde_json::to_writer(&mut *out, job)?;
        writeln!(out)?;
    }
    Ok(())
}

/// Writes a table, one job a line, then the advice for each job.
pub fn write_table(out: &mut impl Write, stats: &[JobStats]) -> io::Result<()> {
    if stats.is_empty() {
        return Ok(());
    }
    let header = [
        "JOB",
        "RUNS",
        "SUCCEEDED",
        "FAILED",
        "STOPPED",
        "SKIPPED",
        "P50",
        "P95",
        "MAX",
        "LAST SUCCESS (UTC)",
    ];
    let ms = |v: Option<u64>| {
        v.map_or_else(
            || "-".to_owned(),
            |ms| HumanDuration(Duration::from_millis(ms)).to_string(),
        )
    };
    let rows: Vec<[String; 10]> = stats
        .iter()
        .map(|s| {
            [
                sanitize::one_line(&s.job),
                s.runs.to_string(),
                s.succeeded.to_string(),
                s.failed.to_string(),
                s.stopped.to_string(),
                s.skipped.to_string(),
                ms(s.p50_ms),
                ms(s.p95_ms),
                ms(s.max_ms),
                s.last_success.as_deref().map_or_else(
                    || "-".to_owned(),
                    // `2026-11-29T18:45:02.123Z` → `2026-11-29 18:45:02`
                    |t| sanitize::one_line(&t.get(..19).unwrap_or(t).replace('T', " ")),
                ),
            ]
        })
        .collect();
    let mut widths = header.map(str::len);
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let line = |cells: [&str; 10]| {
        let text: Vec<String> = cells
            .iter()
            .zip(widths)
            .map(|(cell, width)| format!("{cell:<width$}"))
            .collect();
        text.join("  ").trim_end().to_owned()
    };
    writeln!(out, "{}", line(header))?;
    for row in &rows {
        writeln!(out, "{}", line(row.each_ref().map(String::as_str)))?;
    }
    writeln!(out)?;
    for s in stats {
        writeln!(out, "{}", advice(s))?;
    }
    Ok(())
}

/// What the heartbeat's grace should be for the job.
fn advice(s: &JobStats) -> String {
    let job = sanitize::one_line(&s.job);
    match (s.max_ms, s.suggested_grace_s) {
        (Some(max), Some(grace)) => format!(
            "{job}: the longest successful run took {}; the heartbeat's period + grace must \
             cover it, so set the grace to at least {} (the longest run, half of it again, and \
             the 30s ping budget)",
            HumanDuration(Duration::from_millis(max)),
            HumanDuration(Duration::from_secs(grace)),
        ),
        _ => format!("{job}: no successful run recorded yet, so no grace to suggest"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::PingResult;

    fn entry(job: &str, ended: &str, result: RunResult, ms: u64) -> Entry {
        Entry {
            run_id: "id".into(),
            job: job.into(),
            key: None,
            started: ended.into(),
            ended: ended.into(),
            duration_ms: ms,
            result,
            exit: Some(0),
            attempts: 1,
            ping: PingResult::Sent,
            msg: None,
        }
    }

    #[test]
    fn per_job_counts_percentiles_and_last_success() {
        let mut entries: Vec<Entry> = (1..=20)
            .map(|i| {
                let ended = format!("2026-11-{:02}T00:01:00.000Z", i);
                entry("nightly", &ended, RunResult::Succeeded, i * 1000)
            })
            .collect();
        entries.push(entry(
            "nightly",
            "2026-11-30T00:00:09.000Z",
            RunResult::Failed,
            999_000,
        ));
        entries.push(entry(
            "nightly",
            "2026-11-30T00:15:00.000Z",
            RunResult::Skipped,
            0,
        ));
        entries.push(entry(
            "nightly",
            "2026-11-30T00:20:00.000Z",
            RunResult::Stopped,
            5,
        ));
        entries.push(entry(
            "adhoc",
            "2026-11-30T00:00:00.000Z",
            RunResult::Failed,
            7,
        ));
        let stats = compute(&entries);
        assert_eq!(stats.len(), 2);
        assert_eq!(stats[0].job, "adhoc");
        assert_eq!(stats[0].max_ms, None);
        let n = &stats[1];
        assert_eq!(
            (n.runs, n.succeeded, n.failed, n.stopped, n.skipped),
            (23, 20, 1, 1, 1)
        );
        // Only successful runs count towards the durations: the failed 999s does not.
        assert_eq!(
            (n.p50_ms, n.p95_ms, n.max_ms),
            (Some(10_000), Some(19_000), Some(20_000))
        );
        assert_eq!(n.last_success.as_deref(), Some("2026-11-20T00:01:00.000Z"));
        // 20s + 10s + 30s = 1m.
        assert_eq!(n.suggested_grace_s, Some(60));

        let mut out = Vec::new();
        write_table(&mut out, &stats).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with("JOB      RUNS  SUCCEEDED"), "{text}");
        assert!(
            text.contains("nightly  23    20         1       1        1        10s  19s  20s  2026-11-20 00:01:00"),
            "{text}"
        );
        assert!(
            text.contains("adhoc: no successful run recorded yet"),
            "{text}"
        );
        assert!(
            text.contains("nightly: the longest successful run took 20s;"),
            "{text}"
        );
        assert!(text.contains("set the grace to at least 1m "), "{text}");
    }

    #[test]
    fn grace_covers_the_longest_run_with_room() {
        assert_eq!(grace(Duration::from_secs(1)), Duration::from_secs(60));
        assert_eq!(grace(Duration::from_secs(41)), Duration::from_secs(120));
        assert_eq!(
            grace(Duration::from_secs(40 * 60)),
            Duration::from_secs(61 * 60)
        );
        assert_eq!(percentile(&[5], 95), Some(5));
        assert_eq!(percentile(&[], 50), None);
    }
}
