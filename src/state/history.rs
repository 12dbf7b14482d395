//! Run history: one JSON line per run of a stateful job, kept per job in the state directory,
//! and the `crontap-run history` command that prints it.
//!
//! `<state dir>/history/<job>.jsonl` is appended to under a short lock on the `history`
//! directory, and synced. It is bounded: once it holds more than [`KEEP`] runs or
//! [`TRIM_AT`] bytes it is rewritten, crash-safely, to its most recent lines (see
//! [`last_lines`]); and the history of a job not seen for 30 days is removed by the next
//! append of any job. Entries hold what happened, never the heartbeat URL; the failure
//! summary in them is the scrubbed one that was sent.

use std::io::{self, Write};
use std::path::Path;
use std::time::SystemTime;

use anyhow::{Context, Result};
use nix::sys::stat::SFlag;
use serde::{Deserialize, Serialize};

use crate::files::{self, Check, Dir, NotPlain, PRIVATE, layout};

use crate::report::PingResult;
use crate::run::outcome::HumanDuration;
use crate::sanitize;
use crate::state::file;

/// Most runs a job's history holds.
pub const KEEP: usize = 1000;
/// Runs kept by a trim: fewer than [`KEEP`], so that trims are rare.
const TRIM_TO: usize = KEEP * 3 / 4;
/// Fewer bytes than any entry takes (its run id and times alone take more).
const MIN_ENTRY: u64 = 100;
/// Most files of other jobs removed by one append.
const PRUNE_MAX: usize = 50;
/// Longest wait for another run's append: appends take moments, so a holder that takes
/// longer is stuck, and this run's history line is given up rather than the run hung.
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(5);
/// Size past which a job's history is trimmed.
const TRIM_AT: u64 = 512 * 1024;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Entry {
    pub run_id: String,
    pub job: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// RFC 3339, UTC, milliseconds.
    pub started: String,
    pub ended: String,
    pub duration_ms: u64,
    pub result: RunResult,
    /// crontap-run's exit status; none for a skipped run.
    pub exit: Option<u8>,
    pub attempts: u32,
    pub ping: PingResult,
    /// The failure summary, or why the run was skipped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub msg: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunResult {
    Succeeded,
    Failed,
    /// crontap-run was told to stop while the command ran (never a success).
    Stopped,
    Skipped,
}

impl RunResult {
    fn as_str(self) -> &'static str {
        match self {
            RunResult::Succeeded => "succeeded",
            RunResult::Failed => "failed",
            RunResult::Stopped => "stopped",
            RunResult::Skipped => "skipped",
        }
    }
}

/// Appends `entry` to its job's history in `state_dir`, trims that history when it holds
/// more than [`KEEP`] runs or [`TRIM_AT`] bytes, and removes the histories of jobs not
/// seen for 30 days.
pub fn append(state_dir: &Path, entry: &Entry) -> Result<()> {
    let root = Dir::open(state_dir, Check::Private, true)?.expect("created");
    let dir = root
        .sub(layout::HISTORY, Check::Private, true)?
        .expect("created");
    let _lock = dir.lock(LOCK_WAIT)?;
    let name = layout::history(&entry.job);
    let before = dir.stat(&name).ok().flatten().map(|s| files::modified(&s));
    let mut line = serde_json::to_vec(entry)?;
    line.push(b'\n');
    let mut file = dir.append(&name, PRIVATE)?;
    file.write_all(&line)
        .and_then(|()| file.sync_data())
        .with_context(|| format!("cannot append to {}", dir.shown_of(&name)))?;
    let size = file.metadata()?.len();
    // Smaller files cannot hold more than KEEP lines: they are not read.
    if size > KEEP as u64 * MIN_ENTRY {
        let bytes = dir.read(&name)?.unwrap_or_default();
        let lines = bytes.iter().filter(|&&b| b == b'\n').count();
        if lines > KEEP || size > TRIM_AT {
            // Lossy: a line torn by a crash must not stop the trim for ever.
            let text = String::from_utf8_lossy(&bytes);
            dir.replace(&name, last_lines(&text).as_bytes(), PRIVATE, true)?;
        }
    }
    prune(&dir, &name, before, SystemTime::now());
    Ok(())
}

/// Removes the histories of jobs not seen for [`file::UNSEEN`] (none was appended to
/// since), and files left by killed writers, but never `current` (changed last at
/// `before`, until this run). Only when something else was seen within 30 days
/// ([`files::may_judge`]): a run after a clock stepped forward removes nothing. The caller
/// holds the directory's lock, which every append takes.
fn prune(dir: &Dir, current: &str, before: Option<SystemTime>, now: SystemTime) {
    let Ok(entries) = dir.entries() else { return };
    if !files::may_judge(&entries, current, before, now, file::UNSEEN) {
        return;
    }
    let unseen = now
        .checked_sub(file::UNSEEN)
        .unwrap_or(SystemTime::UNIX_EPOCH);
    let mut budget = PRUNE_MAX;
    for (name, stat) in entries {
        if budget == 0 {
            break;
        }
        let gone = file::prune_leftover(dir, &name, &stat, now)
            || (name != current
                && name.ends_with(".jsonl")
                && files::is(&stat, SFlag::S_IFREG)
                && files::modified(&stat) < unseen
                && dir.remove(&name).is_ok());
        if gone {
            budget -= 1;
            tracing::debug!(name, "removed a history file not written to for 30 days");
        }
    }
}

/// The most recent lines of a history file that a trim keeps: at most [`TRIM_TO`] lines
/// and half of [`TRIM_AT`] bytes, so trims are rare and the file stays bounded.
fn last_lines(text: &str) -> String {
    let mut size = 0;
    let mut kept: Vec<&str> = text
        .lines()
        .rev()
        .take(TRIM_TO)
        .take_while(|line| {
            size += line.len() + 1;
            size as u64 <= TRIM_AT / 2
        })
        .collect();
    kept.reverse();
    kept.iter().map(|line| format!("{line}\n")).collect()
}

/// Reads the history of `job`, or of every job, oldest first, keeping the last `limit`.
/// A line that cannot be read is left out; a state directory that is not there holds none.
pub fn read(state_dir: &Path, job: Option<&str>, limit: usize) -> Result<Vec<Entry>> {
    let dir = match Dir::open(state_dir, Check::Private, false)? {
        Some(root) => root.sub(layout::HISTORY, Check::Private, false)?,
        None => None,
    };
    let Some(dir) = dir else {
        return Ok(Vec::new());
    };
    let names = match job {
        Some(job) => vec![layout::history(job)],
        None => dir
            .entries()?
            .into_iter()
            .filter(|(name, stat)| name.ends_with(".jsonl") && files::is(stat, SFlag::S_IFREG))
            .map(|(name, _)| name)
            .collect(),
    };
    let mut entries = Vec::new();
    for name in names {
        let bytes = match dir.read(&name) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => continue,
            // A link or a FIFO where a history should be is not one; the next append moves
            // it aside.
            Err(err) if NotPlain::in_chain(&err) => {
                tracing::warn!("{err:#}; left out");
                continue;
            }
            Err(err) => return Err(err),
        };
        let text = String::from_utf8_lossy(&bytes);
        entries.extend(
            text.lines()
                .filter_map(|line| serde_json::from_str::<Entry>(line).ok()),
        );
    }
    // RFC 3339 UTC times with a fixed precision sort as text.
    entries.sort_by(|a, b| a.started.cmp(&b.started));
    let skip = entries.len().saturating_sub(limit);
    Ok(entries.split_off(skip))
}

/// Writes `entries` as JSON lines.
pub fn write_json(out: &mut impl Write, entries: &[Entry]) -> io::Result<()> {
    for entry in entries {
        serde_json::to_writer(&mut *out, entry)?;
        writeln!(out)?;
    }
    Ok(())
}

/// Writes `entries` as a table, one run a line; nothing when there are none.
pub fn write_table(out: &mut impl Write, entries: &[Entry]) -> io::Result<()> {
    if entries.is_empty() {
        return Ok(());
    }
    let header = [
        "STARTED (UTC)",
        "JOB",
        "RESULT",
        "EXIT",
        "ATTEMPTS",
        "DURATION",
        "PING",
        "MESSAGE",
    ];
    let rows: Vec<[String; 8]> = entries.iter().map(row).collect();
    let mut widths = header.map(str::len);
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let line = |cells: [&str; 8]| {
        let mut text = String::new();
        for (i, cell) in cells.iter().enumerate() {
            if i + 1 == cells.len() {
                text.push_str(cell);
            } else {
                text.push_str(&format!("{cell:<width$}  ", width = widths[i]));
            }
        }
        text.trim_end().to_owned()
    };
    writeln!(out, "{}", line(header))?;
    for row in &rows {
        writeln!(out, "{}", line(row.each_ref().map(String::as_str)))?;
    }
    Ok(())
}

fn row(entry: &Entry) -> [String; 8] {
    let skipped = entry.result == RunResult::Skipped;
    let dash = || "-".to_owned();
    // `2026-11-29T18:45:02.123Z` → `2026-11-29 18:45:02`
    let started = entry
        .started
        .get(..19)
        .unwrap_or(&entry.started)
        .replace('T', " ");
    [
        sanitize::one_line(&started),
        sanitize::one_line(&entry.job),
        entry.result.as_str().to_owned(),
        entry.exit.map_or_else(dash, |e| e.to_string()),
        if skipped {
            dash()
        } else {
            entry.attempts.to_string()
        },
        if skipped {
            dash()
        } else {
            HumanDuration(std::time::Duration::from_millis(entry.duration_ms)).to_string()
        },
        entry.ping.as_str().to_owned(),
        // A history file is only as trustworthy as the directory it is in.
        sanitize::one_line(entry.msg.as_deref().unwrap_or_default()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(job: &str, started: &str, result: RunResult) -> Entry {
        Entry {
            run_id: "id".into(),
            job: job.into(),
            key: None,
            started: started.into(),
            ended: started.into(),
            duration_ms: 1500,
            result,
            exit: (result != RunResult::Skipped).then_some(0),
            attempts: 1,
            ping: PingResult::Sent,
            msg: None,
        }
    }

    #[test]
    fn entries_merge_across_jobs_oldest_first() {
        let tmp = tempfile::tempdir().unwrap();
        append(
            tmp.path(),
            &entry("b", "2026-11-29T10:00:00.000Z", RunResult::Succeeded),
        )
        .unwrap();
        append(
            tmp.path(),
            &entry("a", "2026-11-29T09:00:00.000Z", RunResult::Failed),
        )
        .unwrap();
        append(
            tmp.path(),
            &entry("a", "2026-11-29T11:00:00.000Z", RunResult::Skipped),
        )
        .unwrap();
        let all = read(tmp.path(), None, 20).unwrap();
        let order: Vec<&str> = all.iter().map(|e| e.started.as_str()).collect();
        assert_eq!(
            order,
            [
                "2026-11-29T09:00:00.000Z",
                "2026-11-29T10:00:00.000Z",
                "2026-11-29T11:00:00.000Z"
            ]
        );
        assert_eq!(read(tmp.path(), Some("a"), 20).unwrap().len(), 2);
        let last = read(tmp.path(), None, 1).unwrap();
        assert_eq!(last[0].result, RunResult::Skipped);
        assert!(read(tmp.path(), Some("none"), 20).unwrap().is_empty());
        assert!(
            read(&tmp.path().join("absent"), None, 20)
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn history_is_bounded() {
        let tmp = tempfile::tempdir().unwrap();
        let mut e = entry("big", "2026-11-29T10:00:00.000Z", RunResult::Failed);
        e.msg = Some("x".repeat(600));
        for _ in 0..(TRIM_AT as usize / 600 + 10) {
            append(tmp.path(), &e).unwrap();
        }
        let size = std::fs::metadata(tmp.path().join("history/big.jsonl"))
            .unwrap()
            .len();
        assert!(size <= TRIM_AT, "{size}");
        assert!(read(tmp.path(), Some("big"), usize::MAX).unwrap().len() <= KEEP);
    }

    #[test]
    fn table_and_json() {
        let mut failed = entry("nightly", "2026-11-29T18:45:02.123Z", RunResult::Failed);
        failed.exit = Some(3);
        failed.msg = Some("exit 3 after 1s: boom\x1b[31m".into());
        let skipped = entry("nightly", "2026-11-29T18:50:00.000Z", RunResult::Skipped);
        let mut out = Vec::new();
        write_table(&mut out, &[failed.clone(), skipped]).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert!(
            lines[0].starts_with("STARTED (UTC)        JOB      RESULT"),
            "{text}"
        );
        assert!(
            lines[1].starts_with("2026-11-29 18:45:02  nightly  failed"),
            "{text}"
        );
        assert!(lines[1].ends_with("exit 3 after 1s: boom"), "{text}");
        assert!(lines[2].contains("skipped  -     -         -"), "{text}");
        let mut out = Vec::new();
        write_json(&mut out, &[failed]).unwrap();
        let value: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(value["exit"], 3);
        assert_eq!(value["result"], "failed");
        assert_eq!(value["ping"], "sent");
        assert!(value.get("key").is_none());
        let mut out = Vec::new();
        write_table(&mut out, &[]).unwrap();
        assert!(out.is_empty());
    }
}
