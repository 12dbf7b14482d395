//! The Redis store: the `--no-overlap` lock and idempotency keys on a Redis server named by
//! `--state-url redis://…` (or `rediss://…` for TLS), shared by every host that names it.
//!
//! Layout: one string per hold, whose value is a small JSON object.
//!
//! ```text
//! crontap-run:lock:<job>   --no-overlap: status "running" while held, deleted when released
//! crontap-run:key:<key>    a key: "running" while held, then "succeeded" or "failed"
//!
//! {"status":"running","owner":"<run id>","job":"nightly","key":"nightly:2026-11-29T00:00:00Z",
//!  "host":"worker-3","updated":1795910401}
//! ```
//!
//! A value that says "running" always expires after the lease (`--state-lease`), by the
//! server's clock: its holder renews it every third of the lease while the job runs, so a
//! holder that died, hung or lost the network stops blocking others within one lease. A
//! finished key keeps its record until its `keep_until` (the period's end plus
//! [`super::RETENTION`]), then Redis drops it.
//!
//! A claim is `SET name value NX PX <lease>`. When the name exists, a Lua script decides
//! atomically: succeeded means done, running means held (its holder is alive, or its TTL
//! would have removed it), failed is taken over. Renew, complete and release are Lua
//! compare-and-set scripts: they act only while the value still names this run as its
//! owner, and say `taken` otherwise, which is an error here, so a holder whose lease ran out
//! and was taken over can never overwrite or delete the next holder's record. A lease that
//! ran out with nobody taking it over (the server or the holder paused, the network cut
//! for longer than a lease) is the holder's again: renew sets its running value again, with
//! `NX`, and complete writes its result, so the run is neither left unprotected nor run
//! again for want of its record.
//!
//! A connection found closed (an idle timeout on the server, a NAT, a restart) is opened
//! again and the command sent once more; every command can be sent twice: a claim grants
//! what its owner already holds, and the scripts find their own work done (a result
//! already recorded, a name already deleted).
//!
//! The URL may hold a password: it is never put in an error. Connecting and every reply are
//! bounded by timeouts (replies by a third of the lease at most), so a server that hangs
//! cannot hang crontap-run.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use ::redis::{Client, Cmd, Connection, FromRedisValue, RedisError, cmd};
use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

use super::store::{Claim, Found, Lease, Status, Store, Target};
use crate::files::layout::corrupt_suffix;
use crontap_scrub::url_secrets;

/// Longest wait for a connection (TCP, TLS handshake, `AUTH` and `SELECT`).
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Longest wait for the reply to one command; shorter for short leases (see
/// [`reply_timeout`]).
pub const RESPONSE_TIMEOUT: Duration = Duration::from_secs(5);

/// 9999-12-31T23:59:59Z, the last time RFC 3339 can write.
const LAST_SECOND: u64 = 253_402_300_799;

/// What every name this store uses begins with.
pub const PREFIX: &str = "crontap-run:";

/// A claim, atomic on the server: `{"granted", token}` (with the name an unreadable value
/// was moved to, if one was), `{"held"}` or `{"done", value}`. KEYS[1]: the name; KEYS[2]:
/// the job's fencing counter, incremented with every grant; ARGV[1]: our running value;
/// ARGV[2]: the lease in milliseconds; ARGV[3]: the owner; ARGV[4]: the suffix for a value
/// moved aside (a number is added when that name is taken; it is kept for 30 days). A running value of this owner is granted: it is this very claim, sent again
/// after its first reply was lost with the connection.
const CLAIM: &str = r#"
local v = redis.call('GET', KEYS[1])
local aside = nil
if v then
  local ok, r = pcall(cjson.decode, v)
  if not ok or type(r) ~= 'table' or type(r.status) ~= 'string' or type(r.owner) ~= 'string' then
    -- Unreadable: moved aside, so that it never blocks the job, to a free name (two in
    -- one second get -2, -3 ...), for 30 days.
    aside = KEYS[1] .. ARGV[4]
    local n = 1
    while redis.call('RENAMENX', KEYS[1], aside) == 0 do
      n = n + 1
      aside = KEYS[1] .. ARGV[4] .. '-' .. n
    end
    redis.call('EXPIRE', aside, 2592000)
  elseif r.status == 'succeeded' then
    return {'done', v}
  -- A running value always has a TTL; one without could never expire, so it is taken over.
  elseif r.status == 'running' and r.owner ~= ARGV[3] and redis.call('PTTL', KEYS[1]) >= 0 then
    return {'held'}
  end
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
local token = tostring(redis.call('INCR', KEYS[2]))
if aside then
  return {'granted', token, aside}
end
return {'granted', token}
"#;

/// Shared head of the compare-and-set scripts: sets `state` to `ours` (this owner's running
/// value), `finished` (this owner's result, recorded already), `absent` (the lease ran out
/// and nobody took it over, or this very command was sent before and deleted it) or
/// `taken` (anything else: another run holds or finished it). KEYS[1]: the name; ARGV[1]:
/// the owner.
const OWNED: &str = r#"
local v = redis.call('GET', KEYS[1])
local state = 'absent'
if v then
  local ok, r = pcall(cjson.decode, v)
  if not ok or type(r) ~= 'table' or r.owner ~= ARGV[1] then
    state = 'taken'
  elseif r.status == 'running' then
    state = 'ours'
  else
    state = 'finished'
  end
end
"#;

/// Extends the lease, or takes it again if it ran out untaken. ARGV[2]: the lease in
/// milliseconds; ARGV[3]: our running value.
const RENEW: &str = r#"
if state == 'ours' then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 'ok'
end
if state == 'absent' then
  redis.call('SET', KEYS[1], ARGV[3], 'NX', 'PX', ARGV[2])
  return 'won back'
end
return state
"#;

/// Records the result, also when the lease ran out untaken. ARGV[2]: the finished value;
/// ARGV[3]: how long to keep it, in milliseconds (0: its retention has already passed, so
/// it goes).
const COMPLETE: &str = r#"
if state == 'finished' then
  return 'ok'
end
if ARGV[3] == '0' then
  if state == 'ours' then
    redis.call('DEL', KEYS[1])
  end
  return state == 'taken' and 'taken' or 'ok'
end
if state == 'ours' then
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
  return 'ok'
end
if state == 'absent' then
  redis.call('SET', KEYS[1], ARGV[2], 'NX', 'PX', ARGV[3])
  return 'recorded late'
end
return state
"#;

/// Lets go: the name is as if never claimed. A name already gone is let go of.
const RELEASE: &str = r#"
if state == 'ours' then
  redis.call('DEL', KEYS[1])
end
if state == 'taken' then
  return 'taken'
end
return 'ok'
"#;

/// The value stored under a name.
#[derive(Debug, Serialize, Deserialize)]
struct Record {
    status: Status,
    /// The run id of the holder, checked by every renew, complete and release.
    owner: String,
    job: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    key: Option<String>,
    /// The holder's host name, for people looking at the store.
    #[serde(default)]
    host: String,
    /// Seconds since the epoch, by the writer's clock: when the value was written.
    updated: u64,
}

pub struct RedisStore {
    client: Client,
    /// Dropped after any error, so a reply that timed out is never read as the answer to
    /// the next command; the next command connects again.
    con: Option<Connection>,
    lease: Duration,
    /// Longest wait for one reply: [`reply_timeout`] of the lease.
    reply_timeout: Duration,
    /// Longest wait for a connection: [`CONNECT_TIMEOUT`], at most a reply's wait and the
    /// state timeout.
    connect_timeout: Duration,
    host: String,
    /// Parts of the URL that must never appear in an error (the password, the user, the
    /// URL itself), as given and percent-decoded.
    secrets: Vec<String>,
    next_id: u64,
}

impl RedisStore {
    /// Connects to the server at `url`; holds last `lease` unless renewed.
    pub fn open(url: &str, lease: Duration) -> Result<RedisStore> {
        RedisStore::open_within(url, lease, CONNECT_TIMEOUT)
    }

    /// [`RedisStore::open`], connecting within `within` at most (`--state-timeout`).
    pub fn open_within(url: &str, lease: Duration, within: Duration) -> Result<RedisStore> {
        let secrets = secrets_of(url);
        let client = Client::open(url)
            .map_err(|err| anyhow::anyhow!("{}", scrub(&err, &secrets)))
            .context("the URL is not one the Redis client accepts")?;
        let mut store = RedisStore {
            client,
            con: None,
            lease,
            reply_timeout: reply_timeout(lease),
            // No longer than a reply may take: a reconnect during a renewal must not let a
            // short lease run out.
            connect_timeout: reply_timeout(lease).min(within),
            host: super::host_name(),
            secrets,
            next_id: 0,
        };
        store.connection()?;
        Ok(store)
    }

    fn connection(&mut self) -> Result<&mut Connection> {
        if self.con.is_none() {
            let con = self.connect().context("cannot connect")?;
            self.con = Some(con);
        }
        Ok(self.con.as_mut().expect("connected just now"))
    }

    /// Connects within its connect timeout in all. The client applies its timeout to each
    /// step (the TCP connection, then each reply to the commands it sends when connecting:
    /// `AUTH`, `SELECT`, `CLIENT SETINFO`), so a server that accepts connections and never
    /// answers would hold it several times as long; the connection is made on a thread of
    /// its own, and given up on at the deadline.
    fn connect(&self) -> Result<Connection> {
        let client = self.client.clone();
        let reply_timeout = self.reply_timeout;
        let connect_timeout = self.connect_timeout;
        let (sender, receiver) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .name("redis-connect".into())
            .spawn(move || {
                let con = client
                    .get_connection_with_timeout(connect_timeout)
                    .and_then(|con| {
                        con.set_read_timeout(Some(reply_timeout))?;
                        con.set_write_timeout(Some(reply_timeout))?;
                        Ok(con)
                    });
                // The receiver is gone if the deadline passed: the connection is dropped.
                let _ = sender.send(con);
            })
            .context("cannot start a thread")?;
        match receiver.recv_timeout(connect_timeout) {
            Ok(con) => con.map_err(|err| self.error(&err, connect_timeout)),
            Err(_) => bail!("no answer within {}", seconds(connect_timeout)),
        }
    }

    /// Runs one command, connecting first if need be.
    fn call<T: FromRedisValue>(&mut self, command: &Cmd) -> Result<T> {
        self.send(command).map(|(reply, _)| reply)
    }

    /// Runs one command; also says whether it was sent twice. A connection found closed
    /// (the server's `timeout` for idle clients, a NAT or firewall forgetting it, a
    /// restart) is opened again and the command sent once more: every command here can be,
    /// since a claim grants what this owner already holds and the compare-and-set scripts
    /// find their own work done. A reply that timed out is not waited for twice: the
    /// server is slow or gone, and the bounds on waiting hold.
    fn send<T: FromRedisValue>(&mut self, command: &Cmd) -> Result<(T, bool)> {
        let mut resent = false;
        loop {
            let reply = command.query(self.connection()?);
            let err = match reply {
                Ok(reply) => return Ok((reply, resent)),
                Err(err) => err,
            };
            self.con = None;
            let error = self.error(&err, self.reply_timeout);
            if resent || !err.is_io_error() || err.is_timeout() {
                return Err(error);
            }
            tracing::debug!("the connection to the state store was lost ({error}); sending again");
            resent = true;
        }
    }

    /// Runs a compare-and-set script: the owner check, then `body`.
    fn owned(&mut self, body: &str, lease: &Lease, args: &[String]) -> Result<()> {
        let script = format!("{OWNED}{body}");
        let mut command = cmd("EVAL");
        command
            .arg(script)
            .arg(1)
            .arg(name(&lease.target))
            .arg(&lease.owner);
        for arg in args {
            command.arg(arg);
        }
        let (answer, resent): (String, bool) = self.send(&command)?;
        let name = name(&lease.target);
        match answer.as_str() {
            "ok" => Ok(()),
            "won back" => {
                tracing::warn!(
                    "the lease on {name} ran out, and no other run took it over: held again"
                );
                Ok(())
            }
            "recorded late" => {
                tracing::warn!(
                    "the lease on {name} ran out, and no other run took it over: the result \
                     is recorded"
                );
                Ok(())
            }
            // Sent twice, a release may find its own first sending done and the name since
            // claimed by another run.
            "taken" if resent && body == RELEASE => Ok(()),
            "taken" => bail!("the lease on {name} expired and another run took it over"),
            "finished" => bail!("the hold on {name} has ended already"),
            other => bail!("the state store answered {other:?}"),
        }
    }

    /// The client's error, scrubbed; a timeout is told as waiting for `timeout`.
    fn error(&self, err: &RedisError, timeout: Duration) -> anyhow::Error {
        if err.is_timeout() {
            return anyhow::anyhow!("no answer within {}", seconds(timeout));
        }
        anyhow::anyhow!("{}", scrub(err, &self.secrets))
    }

    fn value(&self, target: &Target, status: Status, owner: &str) -> Result<String> {
        let (job, key) = match target {
            Target::Lock { job } => (job, None),
            Target::Key { key, job, .. } => (job, Some(key.clone())),
        };
        let record = Record {
            status,
            owner: owner.to_owned(),
            job: job.clone(),
            key,
            host: self.host.clone(),
            updated: secs(SystemTime::now()),
        };
        Ok(serde_json::to_string(&record)?)
    }

    fn lease_ms(&self) -> String {
        millis(self.lease).to_string()
    }
}

impl Store for RedisStore {
    fn claim(&mut self, target: &Target, owner: &str) -> Result<Claim> {
        let name = name(target);
        let value = self.value(target, Status::Running, owner)?;
        let answer: Vec<String> = self
            .call(
                cmd("EVAL")
                    .arg(CLAIM)
                    .arg(2)
                    .arg(&name)
                    .arg(fence_name(target.job()))
                    .arg(&value)
                    .arg(self.lease_ms())
                    .arg(owner)
                    .arg(corrupt_suffix()),
            )
            .with_context(|| format!("cannot claim {name}"))?;
        let fencing = match answer.iter().map(String::as_str).collect::<Vec<_>>()[..] {
            ["granted", token] => token,
            ["granted", token, aside] => {
                tracing::warn!(
                    "the value of {name} could not be read; moved it to {aside} and went on as \
                     if there was none"
                );
                token
            }
            ["held"] => return Ok(Claim::Held),
            ["done", record] => return done(&name, record).map(Claim::Done),
            _ => bail!("the state store answered {answer:?} to a claim of {name}"),
        };
        let fencing = fencing
            .parse()
            .with_context(|| format!("the fencing token of {name} is not a number"))?;
        self.next_id += 1;
        Ok(Claim::Granted(Lease {
            target: target.clone(),
            owner: owner.to_owned(),
            id: self.next_id,
            fencing,
        }))
    }

    fn look(&mut self, target: &Target) -> Result<Found> {
        let name = name(target);
        let value: Option<String> = self
            .call(cmd("GET").arg(&name))
            .with_context(|| format!("cannot read {name}"))?;
        let Some(value) = value else {
            return Ok(Found::Free);
        };
        // An unreadable value would be moved aside by a claim: as if there were none.
        let Ok(record) = serde_json::from_str::<Record>(&value) else {
            return Ok(Found::Free);
        };
        Ok(match record.status {
            Status::Succeeded => Found::Done(done(&name, &value)?),
            // A running value's TTL is its lease: while the value is there, it is held.
            Status::Running => Found::Held,
            Status::Failed | Status::Unknown => Found::Free,
        })
    }

    fn renew(&mut self, lease: &Lease) -> Result<()> {
        let ms = self.lease_ms();
        let value = self.value(&lease.target, Status::Running, &lease.owner)?;
        self.owned(RENEW, lease, &[ms, value])
    }

    fn complete(&mut self, lease: Lease, succeeded: bool) -> Result<()> {
        let Target::Key { keep_until, .. } = &lease.target else {
            return self.release(lease);
        };
        let status = match succeeded {
            true => Status::Succeeded,
            false => Status::Failed,
        };
        let value = self.value(&lease.target, status, &lease.owner)?;
        let keep = keep_until
            .duration_since(SystemTime::now())
            .map_or(0, |d| millis(d).max(1));
        self.owned(COMPLETE, &lease, &[value, keep.to_string()])
    }

    fn release(&mut self, lease: Lease) -> Result<()> {
        self.owned(RELEASE, &lease, &[])
    }

    fn renew_every(&self) -> Option<Duration> {
        Some(self.lease / 3)
    }
}

/// The name a target is kept under.
/// The counter of a job's fencing tokens; it is never deleted, so tokens only grow.
fn fence_name(job: &str) -> String {
    format!("{PREFIX}fence:{job}")
}

fn name(target: &Target) -> String {
    match target {
        Target::Lock { job } => format!("{PREFIX}lock:{job}"),
        Target::Key { key, .. } => format!("{PREFIX}key:{key}"),
    }
}

/// When a succeeded record says it finished.
fn done(name: &str, value: &str) -> Result<SystemTime> {
    let record: Record = serde_json::from_str(value)
        .with_context(|| format!("the value of {name} is not a crontap-run record"))?;
    (record.updated <= LAST_SECOND)
        .then(|| UNIX_EPOCH + Duration::from_secs(record.updated))
        .with_context(|| format!("{name} holds an impossible time"))
}

fn secs(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

fn millis(d: Duration) -> u64 {
    d.as_millis().try_into().unwrap_or(u64::MAX)
}

/// How long to wait for one reply with holds lasting `lease`: [`RESPONSE_TIMEOUT`], but no
/// more than the time between renewals (a third of the lease), so that one slow reply
/// cannot let a short lease run out before the next renewal is tried. Whole milliseconds.
fn reply_timeout(lease: Duration) -> Duration {
    Duration::from_millis(millis(RESPONSE_TIMEOUT.min(lease / 3)).max(1))
}

/// `5s`, `1.333s`.
fn seconds(d: Duration) -> String {
    let text = format!("{:.3}", d.as_secs_f64());
    format!("{}s", text.trim_end_matches('0').trim_end_matches('.'))
}

/// What of `url` must never be printed: the URL itself and its user and password, both as
/// written and percent-decoded.
fn secrets_of(url: &str) -> Vec<String> {
    let mut secrets = vec![url.to_owned()];
    if let Ok(parsed) = reqwest::Url::parse(url) {
        secrets.extend(url_secrets(&parsed));
    }
    secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
    secrets.dedup();
    secrets
}

/// Secrets shorter than this are not looked for in errors (as in the scrubber): a
/// password `a` or a user `ops` would be replaced inside ordinary words, garbling the
/// message, and the places of the replacements would show the secret anyway.
const MIN_SECRET_LEN: usize = 6;

/// The client's error as one line, with anything from the URL taken out. The client does
/// not put the URL or password in its errors, but an error is the one place a password
/// could travel to the log and the heartbeat message, so this makes sure.
fn scrub(err: &RedisError, secrets: &[String]) -> String {
    let mut text = err.to_string();
    for secret in secrets
        .iter()
        .filter(|s| s.chars().count() >= MIN_SECRET_LEN)
    {
        text = text.replace(secret.as_str(), "[REDACTED]");
    }
    text.split(char::is_control)
        .filter(|part| !part.trim().is_empty())
        .map(str::trim)
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_values_and_times() {
        let key = Target::Key {
            key: "nightly:2026-11-29T00:00:00Z".into(),
            job: "nightly".into(),
            keep_until: SystemTime::now(),
        };
        assert_eq!(name(&key), "crontap-run:key:nightly:2026-11-29T00:00:00Z");
        let lock = Target::Lock {
            job: "nightly".into(),
        };
        assert_eq!(name(&lock), "crontap-run:lock:nightly");

        let record = r#"{"status":"succeeded","owner":"r","job":"j","updated":1764374401}"#;
        let at = done("n", record).unwrap();
        assert_eq!(
            humantime::format_rfc3339_seconds(at).to_string(),
            "2025-11-29T00:00:01Z"
        );
        assert!(done("n", "{}").is_err());
        let far = r#"{"status":"succeeded","owner":"r","job":"j","updated":99999999999999}"#;
        assert!(
            done("n", far)
                .unwrap_err()
                .to_string()
                .contains("impossible")
        );
    }

    #[test]
    fn secrets_are_taken_out_of_errors() {
        let url = "rediss://ops:p%40ss-w0rd-77@cache.example:6380/2";
        let secrets = secrets_of(url);
        for secret in ["ops", "p%40ss-w0rd-77", "p@ss-w0rd-77", url] {
            assert!(secrets.iter().any(|s| s == secret), "{secret}: {secrets:?}");
        }
        let err = RedisError::from((
            ::redis::ErrorKind::AuthenticationFailed,
            "bad",
            "user ops with p@ss-w0rd-77 at rediss://ops:p%40ss-w0rd-77@cache.example:6380/2\nnext"
                .to_owned(),
        ));
        let text = scrub(&err, &secrets);
        assert!(!text.contains("w0rd") && !text.contains('\n'), "{text}");
        assert!(text.contains("[REDACTED]"), "{text}");
    }

    #[test]
    fn replies_are_awaited_for_a_third_of_short_leases() {
        let timeout = |secs| reply_timeout(Duration::from_secs(secs));
        assert_eq!(timeout(3), Duration::from_secs(1));
        assert_eq!(timeout(4), Duration::from_millis(1333));
        assert_eq!(timeout(15), Duration::from_secs(5));
        assert_eq!(timeout(3600), RESPONSE_TIMEOUT);
        assert_eq!(seconds(timeout(3)), "1s");
        assert_eq!(seconds(timeout(4)), "1.333s");
        assert_eq!(seconds(Duration::from_millis(1500)), "1.5s");
        assert_eq!(seconds(CONNECT_TIMEOUT), "5s");
    }

    #[test]
    fn short_secrets_are_not_looked_for() {
        // Replacing "a" everywhere would garble the message and, by where the
        // replacements are, show the password.
        let secrets = secrets_of("redis://u:a@cache.example:6379/0");
        let err = RedisError::from((
            ::redis::ErrorKind::AuthenticationFailed,
            "Password authentication failed",
        ));
        let text = scrub(&err, &secrets);
        assert!(!text.contains("[REDACTED]"), "{text}");
        assert!(text.contains("Password authentication failed"), "{text}");
    }
}
