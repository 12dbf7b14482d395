//! Run history: one JSON line per run of a stateful job, kept per job in the state directory,
//! and the `crontap-run history` command that prints it.
//!
//! `<state dir>/history/<job>.jsonl` is appended to under a short lock on the `history`
//! directory, and synced. It is bounded: once it passes [`TRIM_AT`] bytes it is rewritten,
//! crash-safely, to its most recent lines (see [`last_lines`]). Entries hold what happened, never the heartbeat
//! URL; the failure summary in them is the scrubbed one that was sent.

use std::fs;
use std::io::{self, Write};
use std::path::Path;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::report::PingResult;
use crate::run::outcome::HumanDuration;
use crate::scrub::sanitize;
use crate::state::disk;

/// Most runs kept per job after a trim.
pub const KEEP: usize = 1000;
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

/// Appends `entry` to its job's history in `state_dir`.
pub fn append(state_dir: &Path, entry: &Entry) -> Result<()> {
    let dir = state_dir.join("history");
    disk::ensure_dir(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let _lock = disk::lock_dir(&dir, LOCK_WAIT)?;
    let path = dir.join(format!("{}.jsonl", entry.job));
    let mut line = serde_json::to_vec(entry)?;
    line.push(b'\n');
    let mut file = disk::open_append(&path)
        .and_then(|mut f| {
            f.write_all(&line)?;
            f.sync_data()?;
            Ok(f)
        })
        .with_context(|| format!("cannot append to {}", path.display()))?;
    if file.metadata()?.len() > TRIM_AT {
        file.flush()?;
        // Lossy: a line torn by a crash must not stop the trim for ever.
        let text = String::from_utf8_lossy(&fs::read(&path)?).into_owned();
        disk::write_atomic(&path, last_lines(&text).as_bytes())?;
    }
    Ok(())
}

/// The most recent lines of a history file that a trim keeps: at most [`KEEP`] lines and
/// half of [`TRIM_AT`] bytes, so trims are rare and the file stays bounded.
fn last_lines(text: &str) -> String {
    let mut size = 0;
    let mut kept: Vec<&str> = text
        .lines()
        .rev()
        .take(KEEP)
        .take_while(|line| {
            size += line.len() + 1;
            size as u64 <= TRIM_AT / 2
        })
        .collect();
    kept.reverse();
    kept.iter().map(|line| format!("{line}\n")).collect()
}

/// Reads the history of `job`, or of every job, oldest first, keeping the last `limit`.
/// A line that cannot be read is left out.
pub fn read(state_dir: &Path, job: Option<&str>, limit: usize) -> Result<Vec<Entry>> {
    let dir = state_dir.join("history");
    let files = match job {
        Some(job) => vec![dir.join(format!("{job}.jsonl"))],
        None => match fs::read_dir(&dir) {
            Ok(entries) => entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
                .collect(),
            Err(err) if err.kind() == io::ErrorKind::NotFound => Vec::new(),
            Err(err) => return Err(err).with_context(|| format!("cannot read {}", dir.display())),
        },
    };
    let mut entries = Vec::new();
    for file in files {
        let text = match fs::read(&file) {
            Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(err) if err.kind() == io::ErrorKind::NotFound => continue,
            Err(err) => {
                return Err(err).with_context(|| format!("cannot read {}", file.display()));
            }
        };
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
        let size = fs::metadata(tmp.path().join("history/big.jsonl"))
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
