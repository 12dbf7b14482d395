//! The file that keeps a heartbeat's ping URL, through `files` like every file crontap-run
//! writes: its directory opened by handle with every parent checked (made 0700 when
//! missing), no symbolic link followed, the URL written to a new exclusive file of an
//! unguessable name and renamed into place, mode 0600. Its errors name the file, never
//! what it holds.
//!
//! A `create` holds the directory ([`UrlFile::hold`]) from before it reads the file until
//! it has written it: the directory made (so that one that cannot be made or trusted is
//! refused before the service is asked for anything) and locked (`flock(2)` on the
//! directory itself, so that two `create`s at once, two `plan --create` runs on one
//! crontab, go one after the other and the second finds the first's URL rather than make
//! the heartbeat twice). A directory made for a `create` that then failed is removed again.

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Result, anyhow};
use nix::fcntl::Flock;

use crate::files::{self, Check, Dir};
use crate::report::heartbeat::{self as url, HeartbeatUrl};
use crate::sanitize;

/// How long a `create` waits for another one creating in the same directory: as long as
/// that one's call to the API may take, its diagnosis included, and some.
const LOCK_PATIENCE: Duration = Duration::from_secs(60);

/// A URL file: its directory and its name there.
pub struct UrlFile {
    dir: PathBuf,
    name: String,
}

/// The URL file's directory, open and locked; made now if `made` names it (the highest
/// directory that was missing).
pub struct Held {
    dir: Dir,
    made: Option<PathBuf>,
    _lock: Flock<OwnedFd>,
}

impl UrlFile {
    /// The file at `path`, which must name a file (not end in `/`, `.` or `..`).
    pub fn new(path: &Path) -> Result<UrlFile> {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .filter(|_| !path.as_os_str().to_string_lossy().ends_with('/'))
            .ok_or_else(|| anyhow!("--url-file {} must name a file", sanitize::path(path)))?;
        let dir = match path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir.to_owned(),
            _ => PathBuf::from("."),
        };
        Ok(UrlFile {
            dir,
            name: name.to_owned(),
        })
    }

    /// The path, for messages.
    pub fn shown(&self) -> String {
        sanitize::path(&self.dir.join(&self.name))
    }

    /// Opens the file's directory, made 0700 with its missing parents when missing, and
    /// takes its lock.
    pub fn hold(&self) -> Result<Held> {
        let missing = self
            .dir
            .ancestors()
            .take_while(|d| !d.as_os_str().is_empty() && std::fs::symlink_metadata(d).is_err());
        let made = missing.last().map(Path::to_owned);
        let dir = Dir::open(&self.dir, Check::Private, true)?
            .ok_or_else(|| anyhow!("cannot create {}", sanitize::path(&self.dir)))?;
        let lock = match dir.lock(Duration::ZERO) {
            Ok(lock) => lock,
            Err(_) => {
                tracing::info!(
                    "waiting for another crontap-run creating a heartbeat in {}",
                    dir.shown()
                );
                dir.lock(LOCK_PATIENCE)?
            }
        };
        Ok(Held {
            dir,
            made,
            _lock: lock,
        })
    }

    /// The URL the file holds, read as a run reads its `--url-file` (at most 8 KiB of
    /// UTF-8 text, one line); `None` when there is no file. A link, or anything but a
    /// plain file, is refused.
    pub fn read(&self, held: &Held) -> Result<Option<HeartbeatUrl>> {
        let Some(bytes) = held.dir.read_at_most(&self.name, url::MAX_URL_FILE)? else {
            return Ok(None);
        };
        let source = format!("the URL file {}", self.shown());
        let text = url::url_of(bytes, &source)
            .map_err(|err| anyhow!("{err}; remove it to create the heartbeat"))?;
        HeartbeatUrl::parse(&text, &source).map(Some)
    }

    /// Writes `url` to the file, replacing what it held.
    pub fn write(&self, held: &Held, url: &HeartbeatUrl) -> Result<()> {
        held.dir.replace(
            &self.name,
            format!("{}\n", url.success().as_str()).as_bytes(),
            files::PRIVATE,
            true,
        )
    }

    /// After a `create` that wrote nothing: the directories made for it removed again,
    /// those still empty (`rmdir` removes nothing else).
    pub fn give_up(&self, held: Held) {
        let Held { dir, made, _lock } = held;
        drop(dir);
        let Some(top) = made else {
            return;
        };
        for made in self.dir.ancestors() {
            if std::fs::remove_dir(made).is_err() || made == top {
                break;
            }
        }
    }
}
