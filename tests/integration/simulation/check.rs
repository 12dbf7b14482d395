//! The promises a simulated run must keep, checked together: the exit status the contract
//! gives, the attempts, exactly one end report of the right kind (a Healthchecks start
//! never after its end), no secret in anything crontap-run prints or sends, the job's output
//! whole (or, held and successful, not at all), nothing left in `$TMPDIR`, the lock free.

use std::path::Path;

use super::case::{Case, Endpoint, Expected, PING_TIMEOUT, Protocol, Stop};
use super::run::{Endpoints, Ran};
use crate::harness::{Crontap, SECRET};
use crate::healthchecks::path;
use crate::healthchecks::server::Healthchecks;

pub fn all(
    case: &Case,
    ran: &Ran,
    endpoints: &Endpoints,
    (out, err): (&[u8], &[u8]),
    job: &Path,
) -> Vec<String> {
    let expected = case.expected();
    let mut v = Vec::new();
    let Some(status) = ran.status else {
        return v;
    };
    if status.code() != Some(expected.status) {
        let own: Vec<String> = String::from_utf8_lossy(&ran.stderr)
            .lines()
            .filter(|l| l.starts_with("crontap-run: "))
            .map(|l| l.replace(SECRET, "<token>"))
            .collect();
        v.push(format!(
            "exit status {status}, the contract gives {}; crontap-run said {own:?}",
            expected.status
        ));
    }
    let attempts = (1..=case.retries + 1)
        .filter(|k| job.join(format!("pid.{k}")).exists())
        .count() as u32;
    if attempts != expected.attempts {
        v.push(format!(
            "{attempts} attempts ran, the contract gives {}",
            expected.attempts
        ));
    }
    let shown = if case.on_failure && expected.success {
        0
    } else {
        attempts as usize
    };
    if ran.stdout != out.repeat(shown) {
        v.push(format!(
            "stdout is {} bytes, not the job's {} bytes {shown} times",
            ran.stdout.len(),
            out.len()
        ));
    }
    v.extend(stderr(&ran.stderr, err, shown));
    v.extend(match endpoints {
        Endpoints::Crontap(receiver) => crontap(case, &expected, &receiver.received()),
        Endpoints::Healthchecks(hc) => healthchecks(case, &expected, hc, &ran.stderr),
    });
    v
}

/// crontap-run's stderr is the job's stderr, `shown` times, with lines of crontap-run's own
/// (`crontap-run: …`) between them; none of its own lines holds the secret.
fn stderr(mut rest: &[u8], chunk: &[u8], shown: usize) -> Vec<String> {
    let mut v = Vec::new();
    let mut chunks = 0;
    while !rest.is_empty() {
        if !chunk.is_empty() && rest.starts_with(chunk) {
            rest = &rest[chunk.len()..];
            chunks += 1;
            continue;
        }
        let end = rest
            .iter()
            .position(|&b| b == b'\n')
            .map_or(rest.len(), |i| i + 1);
        let line = String::from_utf8_lossy(&rest[..end]);
        if !line.starts_with("crontap-run: ") {
            v.push(format!(
                "stderr has a line that is neither the job's nor crontap-run's: {line:?}"
            ));
        } else if line.contains(SECRET) {
            v.push("the secret is in a line crontap-run printed".to_owned());
        }
        rest = &rest[end..];
    }
    if !chunk.is_empty() && chunks != shown {
        v.push(format!(
            "the job's stderr came {chunks} times whole, not {shown}"
        ));
    }
    v
}

/// How many times the end report must reach the server: once, and once more per error
/// answered (a reset connection never reaches it). A crontap report held past the ping
/// timeout is sent again and may then arrive twice (the held one too); a Healthchecks end
/// goes out only after its start, the one held.
fn deliveries(case: &Case) -> std::ops::RangeInclusive<usize> {
    match case.endpoint {
        Endpoint::Errors(_, n) => n + 1..=n + 1,
        Endpoint::Slow(ms) if ms > PING_TIMEOUT.as_millis() as u64 => match case.protocol {
            Protocol::Crontap => 1..=2,
            Protocol::Healthchecks => 1..=1,
        },
        _ => 1..=1,
    }
}

fn crontap(case: &Case, expected: &Expected, received: &[crate::harness::Received]) -> Vec<String> {
    let mut v = Vec::new();
    if !deliveries(case).contains(&received.len())
        || received.iter().any(|r| r.target != received[0].target)
    {
        let targets: Vec<String> = received
            .iter()
            .map(|r| r.target.replace(SECRET, "<token>"))
            .collect();
        v.push(format!(
            "not one end report, {:?} times: {targets:?}",
            deliveries(case)
        ));
    }
    let Some(report) = received.last() else {
        return v;
    };
    let success = format!("/ping/{SECRET}");
    if expected.success && report.target != success {
        v.push("a success was reported as something else".to_owned());
    }
    if !expected.success {
        match report.msg() {
            None => v.push("a failure was reported without /fail?msg=".to_owned()),
            Some(msg) if msg.contains(SECRET) => v.push("the secret is in the summary".to_owned()),
            Some(msg) if !expected.heads.iter().any(|h| msg.starts_with(h)) => v.push(format!(
                "summary {msg:?} does not start with any of {:?}",
                expected.heads
            )),
            Some(_) => {}
        }
        if !report.target.starts_with(&format!("{success}/fail?")) {
            v.push("a failure was not sent to /fail".to_owned());
        }
    }
    v
}

fn healthchecks(case: &Case, expected: &Expected, hc: &Healthchecks, stderr: &[u8]) -> Vec<String> {
    let mut v = Vec::new();
    let (pings, starts, ends) = (hc.pings(), hc.starts(), hc.ends());
    if starts.len() + ends.len() != pings.len() {
        v.push(format!(
            "{} requests were neither a start nor an end",
            pings.len() - starts.len() - ends.len()
        ));
    }
    let endpoint = if expected.success {
        "0".to_owned()
    } else {
        expected.status.to_string()
    };
    if !deliveries(case).contains(&ends.len())
        || ends
            .iter()
            .any(|e| e.path != ends[0].path || e.rid != ends[0].rid)
    {
        let paths: Vec<String> = ends
            .iter()
            .map(|e| e.path.replace(SECRET, "<token>"))
            .collect();
        v.push(format!(
            "not one end report, {:?} times: {paths:?}",
            deliveries(case)
        ));
    }
    let Some(end) = ends.last() else {
        return v;
    };
    if end.path != path(&endpoint) {
        v.push(format!(
            "the end went to {}, the contract gives /{endpoint}",
            end.path.replace(SECRET, "<token>")
        ));
    }
    let body = String::from_utf8_lossy(&end.body);
    if body.contains(SECRET) || end.query.contains(SECRET) {
        v.push("the secret is in the end report".to_owned());
    }
    let summary = end.summary();
    if !expected.success && !expected.heads.iter().any(|h| summary.starts_with(h)) {
        v.push(format!(
            "summary {summary:?} does not start with any of {:?}",
            expected.heads
        ));
    }
    // Told to stop, the report has the 5-second shutdown budget: a start still held after
    // half of it is given up, with one line, and may then arrive after the end (DESIGN).
    // (Held requests have all arrived by now: the relay was waited for.)
    let given_up = case.stop != Stop::None
        && String::from_utf8_lossy(stderr).contains("the start ping is still under way");
    // A reset start may be dropped once the end is due; otherwise there is one.
    let resets = matches!(case.endpoint, Endpoint::Resets(_));
    if starts.len() > 1 || (starts.is_empty() && !resets) {
        v.push(format!("{} start pings", starts.len()));
    }
    for start in &starts {
        if start.at > ends[0].at && !given_up {
            v.push("the end reached the server before its start".to_owned());
        }
        if start.rid != end.rid {
            v.push("the start and the end carry different run ids".to_owned());
        }
    }
    v
}

/// Nothing left in `$TMPDIR`; the lock free: a second `--no-overlap` run of the job is
/// admitted.
pub fn leftovers(case: &Case, tmp: &Path, state: &Path) -> Vec<String> {
    let mut v = Vec::new();
    let left: Vec<_> = std::fs::read_dir(tmp)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    if !left.is_empty() {
        v.push(format!("left in $TMPDIR: {left:?}"));
    }
    if case.no_overlap || case.once_per {
        let next = Crontap::new()
            .args(["--no-overlap", "--job", "sim", "--state-dir"])
            .arg(state)
            .args(["--", "sh", "-c", "echo admitted"])
            .run();
        if next.code != 0 || next.stdout != "admitted\n" {
            v.push(format!(
                "the next --no-overlap run was not admitted: exit {}, {:?}",
                next.code, next.stderr
            ));
        }
    }
    v
}
