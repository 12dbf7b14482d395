//! The state directory on disk: where it is, creating it privately, crash-safe writes and
//! kernel locks.
//!
//! Directories are created 0700 and files 0600: records name jobs and hold failure
//! summaries. A write goes to a temporary file in the same directory, is synced, renamed
//! over the old file and the directory synced, so a crash leaves the old record or the new
//! one, never a torn one. Locks are `flock(2)` locks, which the kernel drops when their
//! holder dies however it dies.

use std::ffi::OsString;
use std::fs::{self, DirBuilder, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use anyhow::{Context, Result, bail};
use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg};

/// Why [`default_dir`] found none, for the error of whatever needed one.
pub const NO_DEFAULT_DIR: &str =
    "HOME is not set, so there is no default state directory; use --state-dir";

/// Where state lives when neither `--state-dir` nor `--state-url` says: the system's state
/// directory for root, else the user's (XDG base directories); `None` without a home.
pub fn default_dir(env: impl Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    default_dir_for(nix::unistd::geteuid().is_root(), env)
}

fn default_dir_for(root: bool, env: impl Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    if root {
        return Some(PathBuf::from("/var/lib/crontap-run"));
    }
    let absolute = |name: &str| env(name).map(PathBuf::from).filter(|p| p.is_absolute());
    if let Some(xdg) = absolute("XDG_STATE_HOME") {
        return Some(xdg.join("crontap-run"));
    }
    absolute("HOME").map(|home| home.join(".local/state/crontap-run"))
}

/// Creates `dir` and any missing parents with mode 0700 (as `mkdir -p -m 0700`).
pub fn ensure_dir(dir: &Path) -> io::Result<()> {
    DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
    if !fs::metadata(dir)?.is_dir() {
        return Err(io::Error::from(io::ErrorKind::NotADirectory));
    }
    Ok(())
}

/// Opens `path` for appending, creating it 0600.
pub fn open_append(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o600)
        .open(path)
}

/// Replaces `path` with `contents`, crash-safely.
pub fn write_atomic(path: &Path, contents: &[u8]) -> Result<()> {
    let dir = path.parent().context("a state file has no directory")?;
    let name = path.file_name().context("a state file has no name")?;
    let mut temp_name = OsString::from(".");
    temp_name.push(name);
    temp_name.push(format!(
        ".{}.{:08x}.tmp",
        std::process::id(),
        fastrand::u32(..)
    ));
    let temp = dir.join(temp_name);
    let written = (|| -> io::Result<()> {
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&temp)?;
        file.write_all(contents)?;
        file.sync_all()?;
        fs::rename(&temp, path)?;
        sync_dir(dir)
    })();
    if written.is_err() {
        let _ = fs::remove_file(&temp);
    }
    written.with_context(|| format!("cannot write {}", path.display()))
}

/// How old a temporary file must be before it counts as left by a killed writer.
const TEMP_STALE: Duration = Duration::from_secs(3600);

/// Whether `path` is a temporary file of [`write_atomic`] left behind by a writer that was
/// killed (older than an hour: no write takes that long).
pub fn is_stale_temp(path: &Path, modified: Option<&SystemTime>, now: SystemTime) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    name.starts_with('.')
        && name.ends_with(".tmp")
        && modified.is_some_and(|m| now.duration_since(*m).is_ok_and(|age| age > TEMP_STALE))
}

/// Makes a rename or removal in `dir` durable.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Takes an exclusive lock on the file at `path`, creating it 0600, without waiting: `None`
/// when another process holds it. The file is opened close-on-exec, so the
/// job never inherits the lock.
///
/// Whether a process holds the lock on `path` (an absent file is not locked), read from the
/// kernel's lock table (`/proc/locks`) without taking the lock: for `--dry-run`, which must
/// not make a real run that claims at the same moment skip.
pub fn is_locked(path: &Path) -> Result<bool> {
    let meta = match fs::metadata(path) {
        Ok(meta) => meta,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(err) => return Err(err).with_context(|| format!("cannot read {}", path.display())),
    };
    let table = fs::read_to_string("/proc/locks").context("cannot read /proc/locks")?;
    // Lines read `1: FLOCK  ADVISORY  WRITE <pid> <major>:<minor>:<inode> 0 EOF`, the device
    // numbers in hex; waiters' lines have `->` after the number.
    let dev = meta.dev();
    let file = format!(
        "{:02x}:{:02x}:{}",
        nix::sys::stat::major(dev),
        nix::sys::stat::minor(dev),
        meta.ino()
    );
    Ok(table.lines().any(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        fields.get(1) == Some(&"FLOCK") && fields.get(5) == Some(&file.as_str())
    }))
}

/// Takes the lock on `path` (created if missing), waiting for it: for locks that are held
/// only for a moment.
pub fn lock(path: &Path) -> Result<Flock<File>> {
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    Flock::lock(file, FlockArg::LockExclusive)
        .map_err(|(_, errno)| io::Error::from(errno))
        .with_context(|| format!("cannot lock {}", path.display()))
}

/// Lock files may be removed by a process that holds their lock (pruning). A lock taken on a
/// file that was removed meanwhile protects nothing, so after locking, the path must still
/// name the locked file; if not, the lock is taken again on the new file.
pub fn try_lock(path: &Path) -> Result<Option<Flock<File>>> {
    loop {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(path)
            .with_context(|| format!("cannot open {}", path.display()))?;
        let locked = match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
            Ok(locked) => locked,
            Err((_, Errno::EWOULDBLOCK)) => return Ok(None),
            Err((_, Errno::EINTR)) => continue,
            Err((_, errno)) => {
                return Err(io::Error::from(errno))
                    .with_context(|| format!("cannot lock {}", path.display()));
            }
        };
        let held = locked.metadata()?;
        match fs::metadata(path) {
            Ok(now) if now.dev() == held.dev() && now.ino() == held.ino() => {
                return Ok(Some(locked));
            }
            Ok(_) => continue,
            Err(err) if err.kind() == io::ErrorKind::NotFound => continue,
            Err(err) => {
                return Err(err).with_context(|| format!("cannot read {}", path.display()));
            }
        }
    }
}

/// Takes an exclusive lock on the directory `dir` itself, waiting up to `patience` for it:
/// for writes that take moments, so that no lock file is needed.
pub fn lock_dir(dir: &Path, patience: Duration) -> Result<Flock<File>> {
    let deadline = std::time::Instant::now() + patience;
    let mut file = File::open(dir).with_context(|| format!("cannot open {}", dir.display()))?;
    loop {
        match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
            Ok(locked) => return Ok(locked),
            Err((back, Errno::EWOULDBLOCK | Errno::EINTR))
                if std::time::Instant::now() < deadline =>
            {
                file = back;
                std::thread::sleep(Duration::from_millis(10));
            }
            Err((_, Errno::EWOULDBLOCK)) => bail!(
                "{} stayed locked by another run for {}",
                dir.display(),
                humantime::format_duration(patience)
            ),
            Err((_, errno)) => {
                return Err(io::Error::from(errno))
                    .with_context(|| format!("cannot lock {}", dir.display()));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode(path: &Path) -> u32 {
        fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn directories_and_files_are_private() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("a/b");
        ensure_dir(&dir).unwrap();
        assert_eq!(mode(&dir), 0o700);
        let file = dir.join("record.json");
        write_atomic(&file, b"one").unwrap();
        write_atomic(&file, b"two").unwrap();
        assert_eq!(fs::read(&file).unwrap(), b"two");
        assert_eq!(mode(&file), 0o600);
        // No temporary file is left behind.
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 1);
        assert!(ensure_dir(&file).is_err(), "a file is not a directory");
    }

    #[test]
    fn a_lock_excludes_others_until_dropped() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("job.lock");
        let held = try_lock(&path).unwrap().expect("free");
        assert!(try_lock(&path).unwrap().is_none());
        drop(held);
        assert!(try_lock(&path).unwrap().is_some());
    }

    #[test]
    fn a_removed_lock_file_is_not_trusted() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("key.lock");
        let held = try_lock(&path).unwrap().unwrap();
        // The holder prunes the file; a new claimant must lock the new file, not the old.
        fs::remove_file(&path).unwrap();
        let other = try_lock(&path).unwrap().expect("the new file is free");
        assert!(try_lock(&path).unwrap().is_none());
        drop((held, other));
    }

    #[test]
    fn default_directories() {
        assert_eq!(
            default_dir_for(true, |_| None).unwrap(),
            PathBuf::from("/var/lib/crontap-run")
        );
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| OsString::from(v))
            }
        };
        assert_eq!(
            default_dir_for(
                false,
                env(&[("HOME", "/home/op"), ("XDG_STATE_HOME", "/x/state")])
            )
            .unwrap(),
            PathBuf::from("/x/state/crontap-run")
        );
        assert_eq!(
            default_dir_for(
                false,
                env(&[("HOME", "/home/op"), ("XDG_STATE_HOME", "rel")])
            )
            .unwrap(),
            PathBuf::from("/home/op/.local/state/crontap-run")
        );
        assert!(default_dir_for(false, env(&[])).is_none());
    }
}
