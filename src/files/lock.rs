//! Locks in crontap-run's directories: `flock(2)` on a lock file, or on a directory itself,
//! which the kernel drops when their holder dies however it dies; and a look at the
//! kernel's lock table that takes no lock.

use std::fs::File;
use std::io;
use std::os::fd::OwnedFd;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg, OFlag};

use super::{Dir, PRIVATE};

impl Dir {
    /// Takes the `flock(2)` lock of the file `name` (created 0600 if missing), waiting for
    /// it when `wait`: `None` when another process holds it and `wait` is false. Lock
    /// files may be removed by the process holding their lock (pruning), and a lock on a
    /// removed file protects nothing: after locking, `name` must still be the locked file,
    /// or the lock is taken again on the new one. The file is close-on-exec, so the job
    /// never inherits the lock.
    pub fn lock_file(&self, name: &str, wait: bool) -> Result<Option<Flock<File>>> {
        let context = || format!("cannot lock {}", self.shown_of(name));
        let how = match wait {
            true => FlockArg::LockExclusive,
            false => FlockArg::LockExclusiveNonblock,
        };
        loop {
            let file = self
                .open_plain(name, OFlag::O_RDWR, PRIVATE)
                .with_context(context)?;
            let locked = match Flock::lock(file, how) {
                Ok(locked) => locked,
                Err((_, Errno::EWOULDBLOCK)) => return Ok(None),
                Err((_, Errno::EINTR)) => continue,
                Err((_, errno)) => return Err(io::Error::from(errno)).with_context(context),
            };
            let held = nix::sys::stat::fstat(&*locked).map_err(io::Error::from)?;
            match self.stat(name).with_context(context)? {
                Some(now) if now.st_dev == held.st_dev && now.st_ino == held.st_ino => {
                    return Ok(Some(locked));
                }
                _ => continue,
            }
        }
    }

    /// Takes the lock of this directory itself, waiting up to `patience`: for changes that
    /// take moments, so that no lock file is needed.
    pub fn lock(&self, patience: Duration) -> Result<Flock<OwnedFd>> {
        let deadline = Instant::now() + patience;
        let context = || format!("cannot lock {}", self.shown());
        let mut fd = self.fd.try_clone().with_context(context)?;
        loop {
            match Flock::lock(fd, FlockArg::LockExclusiveNonblock) {
                Ok(locked) => return Ok(locked),
                Err((back, Errno::EWOULDBLOCK | Errno::EINTR)) if Instant::now() < deadline => {
                    fd = back;
                    std::thread::sleep(Duration::from_millis(10));
                }
                Err((_, Errno::EWOULDBLOCK)) => bail!(
                    "{} stayed locked by another run for {}",
                    self.shown(),
                    humantime::format_duration(patience)
                ),
                Err((_, errno)) => return Err(io::Error::from(errno)).with_context(context),
            }
        }
    }

    /// Whether a process holds the `flock(2)` lock of `name` (an absent file is not
    /// locked), read from the kernel's lock table (`/proc/locks`) without taking the lock:
    /// for `--dry-run`, which must not make a real run that claims at the same moment skip.
    pub fn is_locked(&self, name: &str) -> Result<bool> {
        let Some(stat) = self
            .stat(name)
            .with_context(|| format!("cannot read {}", self.shown_of(name)))?
        else {
            return Ok(false);
        };
        let table = std::fs::read_to_string("/proc/locks").context("cannot read /proc/locks")?;
        // Lines read `1: FLOCK  ADVISORY  WRITE <pid> <major>:<minor>:<inode> 0 EOF`, the
        // device numbers in hex; waiters' lines have `->` after the number.
        let file = format!(
            "{:02x}:{:02x}:{}",
            nix::sys::stat::major(stat.st_dev),
            nix::sys::stat::minor(stat.st_dev),
            stat.st_ino
        );
        Ok(table.lines().any(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            fields.get(1) == Some(&"FLOCK") && fields.get(5) == Some(&file.as_str())
        }))
    }

    /// [`Dir::lock_file`], waiting up to `patience` for a lock that is held for moments
    /// only, then giving up with an error.
    pub fn lock_file_within(&self, name: &str, patience: Duration) -> Result<Flock<File>> {
        let deadline = Instant::now() + patience;
        loop {
            if let Some(locked) = self.lock_file(name, false)? {
                return Ok(locked);
            }
            if Instant::now() >= deadline {
                bail!(
                    "{} stayed locked by another run for {}",
                    self.shown_of(name),
                    humantime::format_duration(patience)
                );
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}
